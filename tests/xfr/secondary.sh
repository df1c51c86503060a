#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/secondary: Shoal as the secondary of Knot DNS. notify.test (signed
# with xfr-key, SOA refresh an hour) comes in whole (AXFR); a change on
# Knot and `knotc zone-reload` reaches Shoal by NOTIFY and IXFR; every name
# then answers as on Knot; the zone is saved to its file. The same with
# NSD as the primary of nsd.test (a SIGHUP rereads the file). After a restart
# with Knot stopped, Shoal answers at once from the saved files, and
# exp.test (expire 6 s) answers SERVFAIL once expired. A NOTIFY from an
# address that is no primary is refused. Skipped without knotd.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

if [ -z "$KNOTD" ] || [ -z "$KNOTC" ]; then
	echo "SKIP: knotd is not installed (Debian package knot)"
	exit 77
fi

# write_zone NAME SERIAL REFRESH RETRY EXPIRE: www and v$SERIAL move with the serial.
write_zone() {
	{
		printf '$ORIGIN %s.\n$TTL 300\n' "$1"
		printf '@ IN SOA ns1 hostmaster %s %s %s %s 60\n@ IN NS ns1\n' "$2" "$3" "$4" "$5"
		printf 'ns1 IN A 192.0.2.1\nwww IN A 192.0.2.%s\nv%s IN TXT "version %s"\n' "$2" "$2" "$2"
		printf 'mail IN MX 10 ns1\n*.wild IN TXT "wild"\nsub IN NS ns.sub\nns.sub IN A 192.0.2.53\n'
	} >"$T_DIR/${6:-knot}/$1.zone"
}
mkdir -p "$T_DIR/knot" "$T_DIR/shoal" "$T_DIR/nsd"
write_zone notify.test 1 3600 600 86400
write_zone exp.test 1 2 1 6
KPORT=$(free_port) || exit 99
PORT=$(free_port) || exit 99
DEAD=$(free_port) || exit 99 # a primary that is down: the next one is tried
PRI_ZONES="notify.test:$XFR_KEY exp.test:NOKEY"
knot_primary "$T_DIR/knot" "$KPORT" "$PORT"
KNOT_PID=$PEER_PID
T_PIDS="$T_PIDS $KNOT_PID"
CTL=$T_DIR/ctl
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 2
control: $CTL
min-refresh-time: 1
min-retry-time: 1
min-expire-time: 1
xfr-message-timeout: 5
keys:
  - name: $XFR_KEY
    algorithm: hmac-sha256
    secret: "$XFR_SECRET"
zones:
  - name: notify.test
    file: $T_DIR/shoal/notify.test.zone
    primaries: ["127.0.0.1@$KPORT $XFR_KEY"]
    allow-notify: ["127.0.0.1 $XFR_KEY"]
  - name: exp.test
    file: $T_DIR/shoal/exp.test.zone
    primaries: ["127.0.0.1@$DEAD NOKEY", "127.0.0.1@$KPORT NOKEY"]
CONF
if [ -n "$NSD" ]; then
	NPORT=$(free_port) || exit 99
	write_zone nsd.test 1 3600 600 86400 nsd
	nsd_primary "$T_DIR/nsd" "$NPORT" "$PORT" nsd.test
	NSD_PID=$PEER_PID
	T_PIDS="$T_PIDS $NSD_PID"
	printf '  - name: nsd.test\n    file: %s\n    primaries: ["127.0.0.1@%s NOKEY"]\n' \
		"$T_DIR/shoal/nsd.test.zone" "$NPORT" >>"$T_DIR/shoald.conf"
fi
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

# The first transfer: AXFR, signed.
if wait_until 20 serial_is "$PORT" notify.test 1; then pass "notify.test transferred (serial 1)"
else fail "notify.test not transferred"; tail -20 "$T_DIR/shoald.log"; fi
check_match "by AXFR" "zone notify\.test\.: serial 1 from 127.0.0.1@$KPORT by AXFR" "$(cat "$T_DIR/shoald.log")"
if wait_until 20 serial_is "$PORT" exp.test 1; then pass "exp.test transferred from its second primary"
else fail "exp.test not transferred"; fi
check_match "... after the first failed" "zone exp\.test\.: transfer from 127.0.0.1@$DEAD failed: .*cannot connect" \
	"$(cat "$T_DIR/shoald.log")"
check_match "zone-status: the source" "^notify.test. serial 1 .* source primary 127.0.0.1@$KPORT last-refresh 20" \
	"$("$SHOALCTL" -s "$CTL" zone-status)"
check_eq "saved to its file" 1 "$(grep -c 'IN[[:space:]]*SOA' "$T_DIR/shoal/notify.test.zone")"

# The change: Knot reloads, notifies; Shoal asks IXFR.
write_zone notify.test 2 3600 600 86400
"$KNOTC" -c "$T_DIR/knot/knot.conf" zone-reload notify.test >/dev/null 2>&1
start=$(date +%s.%N)
if wait_until 20 serial_is "$PORT" notify.test 2; then
	pass "notify.test at serial 2 after $(since "$start") s"
else
	fail "notify.test not at serial 2"; tail -20 "$T_DIR/shoald.log"; tail -20 "$T_DIR/knot/log"
fi
check_match "by IXFR" "zone notify\.test\.: serial 2 from 127.0.0.1@$KPORT by IXFR" "$(cat "$T_DIR/shoald.log")"
stats=$("$SHOALCTL" -s "$CTL" stats json)
check_match "the NOTIFY was let in" "\"notify_in\": [1-9]" "$(echo "$stats" | sed -n '/"total"/,$p')"
check_match "stats: xfr_in ixfr" "\"ixfr\": [1-9]" "$(echo "$stats" | sed -n '/"xfr_in"/,$p')"
set --
for nt in notify.test:SOA notify.test:NS ns1:A www:A v1:TXT v2:TXT mail:MX x.wild:TXT sub:NS ns.sub:A; do
	n=${nt%%:*} t=${nt#*:}
	[ "$n" = notify.test ] || n=$n.notify.test
	set -- "$@" "$n" "$t"
done
check_eq "every name answers as on Knot" "$(answers "$KPORT" "$@")" "$(answers "$PORT" "$@")"
wait_until 10 grep -q "version 2" "$T_DIR/shoal/notify.test.zone"
check_match "the new version saved" "version 2" "$(cat "$T_DIR/shoal/notify.test.zone")"

# shoalctl refresh and retransfer: an IXFR that finds nothing new, a whole transfer.
check_match "shoalctl refresh" "refresh of notify.test started" \
	"$("$SHOALCTL" -s "$CTL" refresh notify.test 2>&1)"
current() { grep -q "zone notify.test.: serial 2 is current at 127.0.0.1@$KPORT" "$T_DIR/shoald.log"; }
if wait_until 20 current; then pass "... the serial is current"; else fail "refresh: nothing logged"; fi
check_match "shoalctl retransfer" "transfer of notify.test started" \
	"$("$SHOALCTL" -s "$CTL" retransfer notify.test 2>&1)"
whole() { grep -q "zone notify\.test\.: serial 2 from 127.0.0.1@$KPORT by AXFR" "$T_DIR/shoald.log"; }
if wait_until 20 whole; then pass "... by AXFR"; else fail "retransfer: no AXFR logged"; fi
check_match "refresh of a zone not configured" "no zone example.org is configured" \
	"$("$SHOALCTL" -s "$CTL" refresh example.org 2>&1)"

# NSD as the primary: AXFR, then SIGHUP after a change: NOTIFY and IXFR.
if [ -n "$NSD" ]; then
	if wait_until 20 serial_is "$PORT" nsd.test 1; then pass "nsd.test transferred from NSD"
	else fail "nsd.test not transferred"; tail -5 "$T_DIR/nsd/log"; fi
	write_zone nsd.test 2 3600 600 86400 nsd
	touch -d '+2 seconds' "$T_DIR/nsd/nsd.test.zone" # a new mtime, whatever the clock's grain
	kill -HUP "$NSD_PID"
	if wait_until 20 serial_is "$PORT" nsd.test 2; then pass "nsd.test at serial 2 (NOTIFY from NSD)"
	else fail "nsd.test not at serial 2"; tail -5 "$T_DIR/nsd/log"; fi
	check_match "... by IXFR" "zone nsd\.test\.: serial 2 from 127.0.0.1@$NPORT by IXFR" \
		"$(cat "$T_DIR/shoald.log")"
	kill "$NSD_PID"
	wait "$NSD_PID" 2>/dev/null
fi

# A NOTIFY from no primary (127.0.0.2) is refused and logged.
out=$("$DIG" @127.0.0.1 -p "$PORT" -b 127.0.0.2 +time=2 +tries=1 +opcode=notify notify.test SOA 2>&1)
check_match "NOTIFY from 127.0.0.2: REFUSED" "status: REFUSED" "$out"
check_match "... and logged" "NOTIFY notify.test. from 127.0.0.2@[0-9]+ without TSIG: not a primary" \
	"$(cat "$T_DIR/shoald.log")"

# Restart with Knot stopped: the saved files answer at once; exp.test expires.
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
kill "$KNOT_PID"; wait "$KNOT_PID" 2>/dev/null
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "after a restart, the saved version answers" 2 "$(peer_serial "$PORT" notify.test)"
check_eq "exp.test too, for now" 1 "$(peer_serial "$PORT" exp.test)"
servfail() { q "$PORT" www.exp.test A | grep -q "status: SERVFAIL"; }
if wait_until 30 servfail; then pass "exp.test expired: SERVFAIL"; else fail "exp.test did not expire"; fi
check_match "the expiry is logged" "zone exp\.test\.: expired: no refresh for 6 s; answering SERVFAIL" \
	"$(cat "$T_DIR/shoald.log")"
check_match "zone-status says why" "^exp.test. .*error expired" "$("$SHOALCTL" -s "$CTL" zone-status)"
check_eq "notify.test still answers" 2 "$(peer_serial "$PORT" notify.test)"
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
