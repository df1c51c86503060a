#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_reload_reply: reloads as operators of Knot and BIND expect them (issue 33). SIGHUP
# (systemctl reload) does what shoalctl reconfig does: a zone added to the configuration is
# served, a zone file changed on disk is read again, a broken configuration is refused with
# nothing changed. Every reply names the zones it changed and why (added, removed, options,
# file, with the serials), warns when a changed file kept its serial, and exits non-zero when
# a zone failed (which keeps serving its previous version).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

# zone NAME SERIAL ADDR: a zone file for NAME whose www has ADDR
zone() {
	printf '$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hm %s 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.1\nwww A %s\n' \
		"$1" "$2" "$3" >"$T_DIR/$1.zone.new"
	# a second later than the version served: the reload sees the file changed
	touch -d "@$(($(date +%s) + 2))" "$T_DIR/$1.zone.new"
	mv "$T_DIR/$1.zone.new" "$T_DIR/$1.zone"
}
PORT=$(free_port) || exit 99
NPORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
CONF=$T_DIR/shoald.conf
ctl() { "$SHOALCTL" -s "$CTL" "$@" 2>&1; }
www() { q "$PORT" +short "www.$1" A; }
# conf [EXTRA-YAML]: a.test and b.test, then EXTRA-YAML; a.test's notify list from $NOTIFY
conf() {
	cat >"$CONF.new" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $CTL
zones:
  - name: a.test
    file: a.test.zone
    notify: [ ${NOTIFY:-127.0.0.1@$NPORT NOKEY} ]
  - name: b.test
    file: b.test.zone
${1:-}
CONF
	mv "$CONF.new" "$CONF"
}
zone a.test 1 192.0.2.10
zone b.test 1 192.0.2.20
zone c.test 1 192.0.2.30
conf
start_shoald "$PORT" -c "$CONF" || exit 99
check_match "c.test not served yet" "status: REFUSED" "$(q "$PORT" www.c.test A)"

# --- SIGHUP: a zone added to the configuration, a zone file changed on disk ---
conf "  - name: c.test
    file: c.test.zone"
zone b.test 2 192.0.2.21
kill -HUP "$SHOALD_PID"
served_c() { [ "$(www c.test)" = 192.0.2.30 ]; }
if wait_until 20 served_c; then pass "SIGHUP serves the zone added to the configuration"
else fail "SIGHUP serves c.test: [$(grep -i hup "$T_DIR/shoald.log")]"; fi
check_eq "... and the zone file changed on disk" 192.0.2.21 "$(www b.test)"
wait_line "$T_DIR/shoald.log" "SIGHUP: reconfig done"
check_match "the log names what SIGHUP changed" \
	"SIGHUP: reconfig done: zones: 3; added: c.test\.; removed: -; options: -; file: b.test\. \(serial 1 -> 2\)" \
	"$(cat "$T_DIR/shoald.log")"

# --- reconfig: a zone's notify list is an option; a file changed on disk is read ---
NOTIFY="127.0.0.1@$NPORT NOKEY, 127.0.0.2@$NPORT NOKEY" conf "  - name: c.test
    file: c.test.zone"
zone c.test 5 192.0.2.31
out=$(ctl reconfig)
check_eq "reconfig exits 0" 0 $?
check_match "the reply names a.test's changed options and c.test's new serial" \
	"^zones: 3; added: -; removed: -; options: a\.test\.; file: c\.test\. \(serial 1 -> 5\)$" \
	"$out"
check_eq "c.test's new data is served" 192.0.2.31 "$(www c.test)"
out=$(ctl reconfig)
check_match "a reconfig that changes nothing says so" \
	"^zones: 3; added: -; removed: -; options: -; file: -$" "$out"

# --- a changed file that kept its serial: reloaded, with the warning in the reply ---
zone b.test 2 192.0.2.22
out=$(ctl reload)
check_eq "reload with a serial that did not move exits 0" 0 $?
check_match "the reply warns that the serial did not move" \
	"warning: .*b\.test\.zone: the serial went from 2 to 2, not forward" "$out"
zone b.test 2 192.0.2.23
out=$(ctl reconfig)
check_eq "reconfig with a serial that did not move exits 0" 0 $?
check_match "... and warns in its reply too" \
	"warning: .*b\.test\.zone: the serial went from 2 to 2, not forward" "$out"
zone a.test 3 192.0.2.11
out=$(ctl reload)
check_match "a reload's reply names the zone whose serial moved" "file: a\.test\. \(serial 1 -> 3\)" \
	"$out"

# --- a zone that fails: non-zero, its previous version served ---
printf 'www A 192.0.2.999\n' >>"$T_DIR/b.test.zone"
touch -d "@$(($(date +%s) + 2))" "$T_DIR/b.test.zone"
out=$(ctl reconfig)
check_eq "a reconfig where a zone fails exits 1" 1 $?
check_match "the reply names the file and line" "b\.test\.zone:7: " "$out"
check_eq "b.test keeps its version" 192.0.2.23 "$(www b.test)"

# --- SIGHUP with a broken configuration: refused, nothing changed ---
printf 'zones:\n  - name: d.test\n    bogus-key: 1\n' >"$CONF"
kill -HUP "$SHOALD_PID"
wait_line "$T_DIR/shoald.log" "SIGHUP: reconfig refused: $CONF:3: "
check_match "SIGHUP refuses a broken configuration" "SIGHUP: reconfig refused: $CONF:3: " \
	"$(cat "$T_DIR/shoald.log")"
check_eq "a.test still served" 192.0.2.11 "$(www a.test)"
stop_within "$SHOALD_PID"
check_eq "shoald exits 0" 0 $?
done_testing
