#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_reconfig: shoalctl reconfig under a steady shoal-flood load adds a zone (it answers
# AA at once) and removes one (then REFUSED) with 0 queries lost; a changed file path and a
# zone option take effect while threads/listen changes are named as needing a restart; a
# broken configuration is refused with FILE:LINE and the old zones keep serving; zone-add and
# zone-remove with their errors. The control run: the same load across a stop and start of
# shoald, what an operator without reconfig does, loses queries.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if [ ! -x "$SHOAL_FLOOD" ]; then
	echo "SKIP: $SHOAL_FLOOD not built yet"
	exit 77
fi
# zone NAME ADDR: a zone file for NAME whose www has ADDR
zone() {
	cat >"$T_DIR/$1.zone.new" <<ZONEFILE
\$ORIGIN $1.
\$TTL 300
@    IN SOA ns1 hostmaster 1 3600 600 86400 300
@    IN NS  ns1
ns1  IN A   192.0.2.1
www  IN A   $2
ZONEFILE
	mv "$T_DIR/$1.zone.new" "$T_DIR/${3:-$1}.zone"
}
PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
CONF=$T_DIR/shoald.conf
# conf [EXTRA-YAML]: the configuration with a.test (from $A_FILE), THREADS threads,
# RELOAD_TIMEOUT, and
# EXTRA-YAML after a.test's keys
conf() {
	cat >"$CONF.new" <<CONF
listen: 127.0.0.1@$PORT
threads: ${THREADS:-2}
reload-timeout: ${RELOAD_TIMEOUT:-300}
control: $CTL
zones:
  - name: a.test
    file: ${A_FILE:-a.test.zone}
${1:-}
CONF
	mv "$CONF.new" "$CONF"
}
zone a.test 192.0.2.10
zone b.test 192.0.2.20
zone c.test 192.0.2.30
conf
start_shoald "$PORT" -c "$CONF" || exit 99
check_eq "a.test served" 192.0.2.10 "$(q "$PORT" +short www.a.test A)"
check_match "b.test not served yet" "status: REFUSED" "$(q "$PORT" www.b.test A)"

# flood SECONDS: a steady load on www.a.test in the background, its JSON in $T_DIR/flood.json
flood() {
	"$SHOAL_FLOOD" -s 127.0.0.1 -p "$PORT" -q www.a.test -t A -l "$1" -Q 1000 -c 8 -w 2 \
		--json >"$T_DIR/flood.json" 2>"$T_DIR/flood.err" &
	FLOOD=$!
	T_PIDS="$T_PIDS $FLOOD"
}
ctl() { "$SHOALCTL" -s "$CTL" "$@" 2>&1; }
# flood_end WHAT: wait for the load, set sent, lost, answered from its report and print them
flood_end() {
	wait "$FLOOD"
	local json
	json=$(cat "$T_DIR/flood.json")
	sent=$(json_value "$json" sent)
	lost=$(json_value "$json" lost)
	answered=$(json_value "$json" answered)
	echo "# $1: sent $sent, lost $lost"
}

# --- add and remove a zone under load: nothing lost ---
flood 6
sleep 1.5
conf "  - name: b.test
    file: b.test.zone"
out=$(ctl reconfig)
check_eq "reconfig adding b.test exits 0" 0 $?
check_match "the reply names the zone added" "added: b\.test\.;" "$out"
check_match "b.test answers AA right after" "flags: qr aa" "$(q "$PORT" +norec www.b.test A)"
check_eq "with its data" 192.0.2.20 "$(q "$PORT" +short www.b.test A)"
check_match "b.test has its counters" '"b.test."' "$(ctl stats json)"
sleep 1.5
conf
out=$(ctl reconfig)
check_eq "reconfig removing b.test exits 0" 0 $?
check_match "the reply names the zone removed" "removed: b\.test\.;" "$out"
check_match "b.test is REFUSED after" "status: REFUSED" "$(q "$PORT" www.b.test A)"
check_eq "a.test still answers" 192.0.2.10 "$(q "$PORT" +short www.a.test A)"
if ctl stats json | grep -q '"b.test."'; then
	fail "b.test's counters are gone"
else
	pass "b.test's counters are gone"
fi
flood_end "reconfig run"
if [ -n "$sent" ] && [ "$sent" -ge 5000 ]; then
	pass "the load ran ($sent queries)"
else
	fail "the load ran: sent [$sent]"
fi
check_eq "no query lost across two reconfigs" 0 "$lost"
check_eq "every query answered" "$sent" "$answered"

# --- a changed file path and a zone option apply; threads and listen need a restart ---
zone a.test 192.0.2.11 a2.test
check_match "a.test refuses AXFR before" "Transfer failed|REFUSED" \
	"$(q "$PORT" +tcp a.test AXFR)"
PORT2=$(free_port) || exit 99
A_FILE=a2.test.zone THREADS=3 conf "    provide-xfr: [ 127.0.0.1 NOKEY ]"
sed -i "s/^listen: .*/listen: [ 127.0.0.1@$PORT, 127.0.0.1@$PORT2 ]/" "$CONF"
out=$(ctl reconfig)
check_eq "reconfig with restart-needing changes exits 0" 0 $?
check_match "threads and listen are named as needing a restart" \
	"needs a restart \(not applied\): listen, threads$" "$out"
check_match "the log names them too" "need a restart, not applied: listen, threads" \
	"$(cat "$T_DIR/shoald.log")"
check_match "a.test reloaded from its new file" "file: a\.test\." "$out"
check_eq "the new file's data is served" 192.0.2.11 "$(q "$PORT" +short www.a.test A)"
check_match "provide-xfr took effect: AXFR allowed" "www.a.test.*192.0.2.11" \
	"$(q "$PORT" +tcp a.test AXFR)"
check_match "still 2 threads" "threads 2" "$(ctl status)"
if q "$PORT2" +short www.a.test A >/dev/null 2>&1 && [ -n "$(q "$PORT2" +short www.a.test A)" ]; then
	fail "the new listen address is not bound"
else
	pass "the new listen address is not bound"
fi

# --- a broken configuration: refused with its line, nothing changes ---
printf 'zones:\n  - name: c.test\n    file: c.test.zone\n    bogus-key: 1\n' >"$CONF"
out=$(ctl reconfig)
check_eq "a broken configuration exits 1" 1 $?
check_match "and is refused with FILE:LINE" "$CONF:4: " "$out"
check_match "the log says so too" "reconfig refused: $CONF:4: " "$(cat "$T_DIR/shoald.log")"
check_eq "a.test keeps its data" 192.0.2.11 "$(q "$PORT" +short www.a.test A)"
check_match "c.test is not served" "status: REFUSED" "$(q "$PORT" www.c.test A)"
# a zone added whose file is broken refuses the whole reconfig
A_FILE=a2.test.zone conf "  - name: c.test
    file: bad.zone"
printf '$ORIGIN c.test.\n@ 300 IN SOA ns1 h 1 2 3 4 5\n@ 300 IN NS ns1\nns1 300 IN A 192.0.2.999\n' \
	>"$T_DIR/bad.zone"
out=$(ctl reconfig)
check_eq "a zone added with a broken file: exits 1" 1 $?
check_match "the reply names FILE:LINE" "bad.zone:4: " "$out"
check_match "and says nothing changed" "nothing changed" "$out"

# --- zone-add and zone-remove ---
out=$(ctl zone-add c.test "$T_DIR/c.test.zone")
check_eq "zone-add exits 0" 0 $?
check_match "c.test answers AA after zone-add" "flags: qr aa" "$(q "$PORT" +norec www.c.test A)"
out=$(ctl zone-add c.test "$T_DIR/c.test.zone")
check_eq "zone-add of a zone served exits 1" 1 $?
check_match "and says so" "zone c.test is already served" "$out"
(cd "$T_DIR" && "$SHOALCTL" -s "$CTL" zone-add d.test bad.zone >"$T_DIR/out" 2>&1)
check_eq "zone-add of a broken file (relative path) exits 1" 1 $?
check_match "with FILE:LINE" "$T_DIR/bad.zone:4: " "$(cat "$T_DIR/out")"
check_match "d.test is not served" "status: REFUSED" "$(q "$PORT" www.d.test A)"
out=$(ctl zone-remove nothing.test)
check_eq "zone-remove of an unknown zone exits 1" 1 $?
check_match "and says so" "no zone nothing.test is served" "$out"
long=$(printf 'x%.0s' $(seq 1 8200))
out=$(ctl zone-add "$long" "$T_DIR/c.test.zone")
check_eq "zone-add with a name past the bound exits 2" 2 $?
out=$(ctl zone-remove c.test)
check_eq "zone-remove exits 0" 0 $?
check_match "c.test is REFUSED after zone-remove" "status: REFUSED" "$(q "$PORT" www.c.test A)"
ctl zone-add c.test "$T_DIR/c.test.zone" >/dev/null
A_FILE=a2.test.zone conf
out=$(ctl reconfig)
check_match "reconfig says the runtime changes are replaced" \
	"zone-add/zone-remove change\(s\) since the last reconfig replaced" "$out"
check_match "and removes c.test, which the file does not have" "removed: c\.test\.;" "$out"

# --- a secondary zone added at runtime transfers from its primary; removed, it is gone; a
# primary zone added is sent NOTIFY as after a load. The peer: a second shoald, primary of
# s.test and secondary of n.test. ---
PORT3=$(free_port) || exit 99
zone s.test 192.0.2.40
zone n.test 192.0.2.50
cat >"$T_DIR/primary.conf" <<CONF
listen: 127.0.0.1@$PORT3
threads: 1
zones:
  - name: s.test
    file: s.test.zone
    provide-xfr: [ 127.0.0.1 NOKEY ]
  - name: n.test
    primaries: [ 127.0.0.1@$PORT NOKEY ]
CONF
"$SHOALD" -c "$T_DIR/primary.conf" >>"$T_DIR/primary.log" 2>&1 &
PRIMARY=$!
T_PIDS="$T_PIDS $PRIMARY"
wait_until 60 answering 127.0.0.1 "$PORT3" || fail "the primary did not start"
A_FILE=a2.test.zone conf "  - name: s.test
    primaries: [ 127.0.0.1@$PORT3 NOKEY ]
  - name: n.test
    file: n.test.zone
    provide-xfr: [ 127.0.0.1 NOKEY ]
    notify: [ 127.0.0.1@$PORT3 NOKEY ]"
out=$(ctl reconfig)
check_eq "reconfig adding a secondary and a primary zone exits 0" 0 $?
notified() { grep -q "NOTIFY n.test. serial 1 from 127.0.0.1" "$T_DIR/primary.log"; }
if wait_until 30 notified; then
	pass "the primary zone added was sent NOTIFY"
else
	fail "the primary zone added was sent NOTIFY: [$(cat "$T_DIR/primary.log")]"
fi
s_answers() { [ "$(q "$PORT" +short www.s.test A)" = 192.0.2.40 ]; }
if wait_until 30 s_answers; then
	pass "the secondary zone added at runtime transferred from its primary"
else
	fail "the secondary zone added at runtime transferred: [$(ctl zone-status)]"
fi
check_match "zone-status shows where it came from" "^s.test. .* source primary 127.0.0.1" \
	"$(ctl zone-status)"
out=$(ctl zone-remove s.test)
check_eq "zone-remove of the secondary zone exits 0" 0 $?
check_match "s.test is REFUSED after" "status: REFUSED" "$(q "$PORT" www.s.test A)"
if ctl zone-status | grep -q '^s.test'; then
	fail "its transfer state is gone from zone-status"
else
	pass "its transfer state is gone from zone-status"
fi
stop_pid "$PRIMARY"
check_eq "the primary exits 0" 0 $?

# --- a secondary zone removed while its transfer is in flight: the transfer is given up
# (tests/xfr/bad_primary.pl sends stall.test's first message, then nothing) ---
if command -v perl >/dev/null; then
	PORTB=$(free_port) || exit 99
	perl "$SHOAL_SRCDIR/tests/xfr/bad_primary.pl" "$PORTB" >"$T_DIR/bad.out" 2>&1 &
	BAD=$!
	T_PIDS="$T_PIDS $BAD"
	wait_until 10 grep -q ready "$T_DIR/bad.out" || fail "bad_primary.pl did not start"
	out=$(ctl zone-remove n.test) # keep the set small; n.test has done its part
	A_FILE=a2.test.zone conf "  - name: stall.test
    primaries: [ 127.0.0.1@$PORTB NOKEY ]"
	out=$(ctl reconfig)
	check_eq "reconfig adding stall.test exits 0" 0 $?
	in_flight() { ss -Htn state established "( dport = :$PORTB )" | grep -q .; }
	if wait_until 30 in_flight; then
		pass "stall.test's transfer is in flight"
	else
		fail "stall.test's transfer is in flight"
	fi
	out=$(ctl zone-remove stall.test)
	check_eq "zone-remove during its transfer exits 0" 0 $?
	gone_conn() { ! in_flight; }
	if wait_until 30 gone_conn; then
		pass "the transfer in flight was given up"
	else
		fail "the transfer in flight was given up"
	fi
	check_eq "a.test still answers" 192.0.2.11 "$(q "$PORT" +short www.a.test A)"
	kill "$BAD"
fi

# --- the control run: a stop and start under the same load loses queries ---
flood 4
sleep 1.5
stop_pid "$SHOALD_PID"
check_eq "the server that reconfigured exits 0 (no sanitizer report)" 0 $?
start_shoald "$PORT" -c "$CONF" || exit 99
flood_end "control run, stop and start instead of reconfig"
if [ -n "$lost" ] && [ "$lost" -gt 0 ]; then
	pass "a restart loses queries ($lost of $sent): the loss reconfig avoids"
else
	fail "a restart loses queries: lost [$lost] of [$sent]"
fi

# --- one at a time: a reconfig stuck reading a file (holdthread stops the reload thread in
# its first open) makes the next one "busy", and is abandoned at reload-timeout ---
A_FILE=a2.test.zone RELOAD_TIMEOUT=2 conf
out=$(ctl reconfig)
check_eq "reconfig setting reload-timeout exits 0" 0 $?
zone h.test 192.0.2.60
A_FILE=a2.test.zone RELOAD_TIMEOUT=2 conf "  - name: h.test
    file: h.test.zone"
"$SHOAL_BUILDDIR/tests/integration/holdthread" "$SHOALD_PID" >"$T_DIR/hold.out" 2>&1 &
HOLD_PID=$!
T_PIDS="$T_PIDS $HOLD_PID"
held=no
if wait_line "$T_DIR/hold.out" "^attached|cannot trace" && grep -q '^attached' "$T_DIR/hold.out"; then
	timeout 120 "$SHOALCTL" -s "$CTL" reconfig >"$T_DIR/held.out" 2>&1 &
	HELD_CTL=$!
	T_PIDS="$T_PIDS $HELD_CTL"
	wait_line "$T_DIR/hold.out" "^held " && held=yes
fi
if [ $held = yes ]; then
	out=$(ctl reconfig)
	check_eq "a reconfig while one runs exits 1" 1 $?
	check_match "and is answered busy" "busy: a reload or reconfig is running" "$out"
	wait "$HELD_CTL"
	check_eq "the stuck reconfig is answered with an error" 1 $?
	check_match "refused at reload-timeout, nothing changed" \
		"reconfig refused \(timed out\): nothing changed" "$(cat "$T_DIR/held.out")"
	check_eq "a.test still answers" 192.0.2.11 "$(q "$PORT" +short www.a.test A)"
	check_match "h.test is not served" "status: REFUSED" "$(q "$PORT" www.h.test A)"
else
	echo "# SKIP busy: holdthread cannot hold shoald's reload thread: $(cat "$T_DIR/hold.out")"
fi

stop_within "$SHOALD_PID"
check_eq "SIGTERM exits 0, a reconfig thread held or not" 0 $?
kill "$HOLD_PID" 2>/dev/null
done_testing
