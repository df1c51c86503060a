#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_update_bounds: updates in flight for one zone are bounded (UPDATE_ZONE_MAX, 64):
# with the zone set's writer held (a reload stuck in the kernel), 70 updates over TCP at
# once: 64 wait, 6 are answered SERVFAIL at once and logged; queries are answered all the
# while; none of the waiting ones is applied or answered NOERROR; shoald still stops.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

command -v nsupdate >/dev/null || { echo "SKIP: nsupdate (bind9-dnsutils) is needed"; exit 77; }
PORT=$(free_port) || exit 99
CTL="$T_DIR/shoald.ctl"
cp "$EXAMPLES/example.com.zone" "$T_DIR/example.com.zone"
cat >"$T_DIR/shoald.conf" <<EOF
listen: [ 127.0.0.1@$PORT ]
threads: 2
control: $CTL
tcp-max-per-address: 200
zones:
  - name: example.com
    file: $T_DIR/example.com.zone
    allow-update:
      - address: 127.0.0.1
EOF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
hold_reload "$CTL"
rc=$?
if [ $rc -eq 77 ]; then
	echo "SKIP: holdthread cannot trace shoald here: $(cat "$T_DIR/hold.out")"
	stop_within "$SHOALD_PID"
	exit 77
fi
check_eq "the reload thread is held (with the zone set's writer lock)" 0 $rc

# client N: one update over TCP; its nsupdate output into T_DIR/cN.out
client() {
	printf 'server 127.0.0.1 %s\nzone example.com\nupdate add b%s.example.com 60 A 192.0.2.1\nsend\n' \
		"$PORT" "$1" | timeout 90 nsupdate -v >"$T_DIR/c$1.out" 2>&1
}
CLIENTS=""
for i in $(seq 1 70); do
	client "$i" &
	CLIENTS="$CLIENTS $!"
done
refused() { grep -l 'update failed: SERVFAIL' "$T_DIR"/c*.out 2>/dev/null | wc -l; }
six() { [ "$(refused)" -ge 6 ]; }
wait_until 60 six
check_eq "70 at once: 6 past the 64 in flight answered SERVFAIL" 6 "$(refused)"
check_match "the refusals are logged" "UPDATE example.com. from .*the update queue is full: SERVFAIL" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "queries are answered meanwhile" 192.0.2.80 "$(q "$PORT" +short www.example.com A | head -1)"
check_eq "queries over TCP too" 192.0.2.80 "$(q "$PORT" +tcp +short www.example.com A | head -1)"
check_eq "none of the waiting updates is applied" "" "$(q "$PORT" +short b1.example.com A)"
stop_within "$SHOALD_PID"
check_eq "shoald stops with updates waiting on a held writer" 0 $?
for c in $CLIENTS; do wait_within "$c" 120; done
check_eq "no waiting update was answered NOERROR" "" \
	"$(for i in $(seq 1 70); do [ -s "$T_DIR/c$i.out" ] || echo "c$i answered NOERROR"; done)"
wait_within "$HOLD_PID"
wait_within "$RELOAD_PID" 130
done_testing
