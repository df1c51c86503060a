#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_reload: under a steady load (dnsperf at a fixed rate for 10 s), three reloads of a
# changed zone lose no query and the changed data is served after each; a broken zone file
# keeps the old data served and shoalctl reload reports FILE:LINE.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if ! command -v dnsperf >/dev/null; then
	echo "SKIP: dnsperf is not installed (Debian package dnsperf)"
	exit 77
fi
ZONE=$T_DIR/reload.test.zone
# write_zone SERIAL LAST-OCTET: the zone with www's address ending in LAST-OCTET
write_zone() {
	cat >"$ZONE.new" <<ZONEFILE
\$ORIGIN reload.test.
\$TTL 300
@    IN SOA ns1 hostmaster $1 3600 600 86400 300
@    IN NS  ns1
ns1  IN A   192.0.2.1
www  IN A   192.0.2.$2
ZONEFILE
	mv "$ZONE.new" "$ZONE" # a reload never sees half a file
}
write_zone 1 10
PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--zone "reload.test=$ZONE" || exit 99
check_eq "first version served" 192.0.2.10 "$(q "$PORT" +short www.reload.test A)"

echo "www.reload.test A" >"$T_DIR/queries"
# 800 queries a second for 10 s from 8 client sockets; the daemon must answer all.
dnsperf -s 127.0.0.1 -p "$PORT" -d "$T_DIR/queries" -l 10 -Q 800 -c 8 -t 3 \
	>"$T_DIR/dnsperf.out" 2>&1 &
PERF=$!
T_PIDS="$T_PIDS $PERF"

for i in 1 2 3; do
	sleep 2
	write_zone $((1 + i)) $((10 + i))
	out=$("$SHOALCTL" -s "$CTL" reload reload.test 2>&1)
	check_eq "reload $i exits 0" 0 $?
	check_eq "reload $i: new address served" "192.0.2.$((10 + i))" \
		"$(q "$PORT" +short www.reload.test A)"
	check_match "reload $i: new serial served" " $((1 + i)) 3600 600 86400 300$" \
		"$(q "$PORT" +short reload.test SOA)"
done

sleep 1
printf 'www  IN A   192.0.2.999\n' >>"$ZONE"
out=$("$SHOALCTL" -s "$CTL" reload 2>&1)
check_eq "reload of a broken zone exits 1" 1 $?
check_match "and reports FILE:LINE" "$ZONE:7: " "$out"
check_eq "the old data is still served" 192.0.2.13 "$(q "$PORT" +short www.reload.test A)"
check_match "zone-status shows the error" "error .*$ZONE:7" "$("$SHOALCTL" -s "$CTL" zone-status)"
kill -HUP "$SHOALD_PID"
sleep 0.5
check_eq "SIGHUP with the broken file keeps the old data" 192.0.2.13 \
	"$(q "$PORT" +short www.reload.test A)"
check_match "and logs FILE:LINE" "error: $ZONE:7: " "$(cat "$T_DIR/shoald.log")"

wait "$PERF"
check_eq "dnsperf exits 0" 0 $?
cat "$T_DIR/dnsperf.out" | grep -E 'Queries (sent|completed|lost)'
sent=$(sed -n 's/^ *Queries sent: *\([0-9]*\).*/\1/p' "$T_DIR/dnsperf.out")
lost=$(sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p' "$T_DIR/dnsperf.out")
if [ -n "$sent" ] && [ "$sent" -ge 6000 ]; then
	pass "dnsperf sent $sent queries in 10 s"
else
	fail "dnsperf sent too few queries: [$sent]"
fi
check_eq "no query lost across the reloads" 0 "$lost"
stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0" 0 $?
done_testing
