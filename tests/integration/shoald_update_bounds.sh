#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_update_bounds: updates in flight for one zone are bounded (update-max-inflight,
# 64 by default): with the zone set's writer held (a reload stuck in the kernel), 70 updates
# over TCP at once: 64 wait, 6 are answered SERVFAIL at once and logged; queries are answered
# all the while; none of the waiting ones is applied or answered NOERROR; shoald still stops.
# Then the bounds set smaller: per zone and in all (update-max-inflight-total), records per
# update (update-max-records), and updates a second per key or address (update-rate-per-key);
# a zone's own update-max-records and update-rate-per-key over the global ones, another zone
# keeping those.
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
check_match "the refusals are logged" "UPDATE example.com. from .*update-max-inflight or update-max-inflight-total reached: SERVFAIL" \
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

# ---- the bounds as options: update-max-inflight (per zone), update-max-inflight-total ----
# A second run with smaller bounds, two zones, the writer held again: 10 updates to
# example.com (8 wait, 2 SERVFAIL), then 6 to example.net (4 wait: 12 in all; 2 SERVFAIL).
sed 's/example\.com/example.net/g' "$EXAMPLES/example.com.zone" >"$T_DIR/example.net.zone"
cp "$EXAMPLES/example.com.zone" "$T_DIR/example.com.zone"
PORT=$(free_port) || exit 99
cat >"$T_DIR/shoald2.conf" <<EOF2
listen: [ 127.0.0.1@$PORT ]
threads: 2
control: $CTL
tcp-max-per-address: 200
update-max-inflight: 8
update-max-inflight-total: 12
zones:
  - name: example.com
    file: $T_DIR/example.com.zone
    allow-update:
      - address: 127.0.0.1
  - name: example.net
    file: $T_DIR/example.net.zone
    allow-update:
      - address: 127.0.0.1
EOF2
: >"$T_DIR/shoald.log"
rm -f "$T_DIR"/c*.out
start_shoald "$PORT" -c "$T_DIR/shoald2.conf" || exit 99
hold_reload "$CTL"
check_eq "the reload thread is held again" 0 $?
# zclient ZONE N: one update over TCP to ZONE; its output into T_DIR/ZONE-N.out
zclient() {
	printf 'server 127.0.0.1 %s\nzone %s\nupdate add b%s.%s 60 A 192.0.2.1\nsend\n' \
		"$PORT" "$1" "$2" "$1" | timeout 90 nsupdate -v >"$T_DIR/$1-$2.out" 2>&1
}
zrefused() { grep -l 'update failed: SERVFAIL' "$T_DIR/$1"-*.out 2>/dev/null | wc -l; }
two_refused() { [ "$(zrefused "$1")" -ge 2 ]; }
# zburst ZONE N: N updates to ZONE at once; waits until 2 of them are answered SERVFAIL
CLIENTS=""
zburst() {
	local i
	for i in $(seq 1 "$2"); do
		zclient "$1" "$i" &
		CLIENTS="$CLIENTS $!"
	done
	wait_until 60 two_refused "$1"
}
zburst example.com 10
check_eq "update-max-inflight 8: 2 of 10 updates to one zone answered SERVFAIL" 2 \
	"$(zrefused example.com)"
zburst example.net 6
check_eq "update-max-inflight-total 12: 2 of 6 to another zone answered SERVFAIL" 2 \
	"$(zrefused example.net)"
check_eq "the first zone's refusals stay 2" 2 "$(zrefused example.com)"
stop_within "$SHOALD_PID"
check_eq "shoald stops with updates waiting" 0 $?
for c in $CLIENTS; do wait_within "$c" 120; done
wait_within "$HOLD_PID"
wait_within "$RELOAD_PID" 130

# ---- update-max-records and update-rate-per-key, on a running updater ----
SECRET=$(printf 'dynamic update test secret, 32 o' | base64)
PORT=$(free_port) || exit 99
cp "$EXAMPLES/example.com.zone" "$T_DIR/example.com.zone"
sed 's/example\.com/example.net/g' "$EXAMPLES/example.com.zone" >"$T_DIR/example.net.zone"
sed 's/example\.com/example.org/g' "$EXAMPLES/example.com.zone" >"$T_DIR/example.org.zone"
# every key below and the address, in example.com's and example.net's allow-update
RULES=$(printf '      - key: %s\n' upd rec other big small zk sep
	printf '      - address: 127.0.0.1')
cat >"$T_DIR/shoald3.conf" <<EOF2
listen: [ 127.0.0.1@$PORT ]
threads: 2
update-max-records: 3
update-rate-per-key: 2
keys:
  - { name: upd, algorithm: hmac-sha256, secret: "$SECRET" }
  - { name: rec, algorithm: hmac-sha256, secret: "$SECRET" }
  - { name: other, algorithm: hmac-sha256, secret: "$SECRET" }
  - { name: big, algorithm: hmac-sha256, secret: "$SECRET" }
  - { name: small, algorithm: hmac-sha256, secret: "$SECRET" }
  - { name: zk, algorithm: hmac-sha256, secret: "$SECRET" }
  - { name: sep, algorithm: hmac-sha256, secret: "$SECRET" }
zones:
  - name: example.com
    file: $T_DIR/example.com.zone
    allow-update:
$RULES
  - name: example.net
    file: $T_DIR/example.net.zone
    update-max-records: 2
    update-rate-per-key: 0
    allow-update:
$RULES
  - name: example.org
    file: $T_DIR/example.org.zone
    update-rate-per-key: 1
    allow-update:
      - key: sep
EOF2
: >"$T_DIR/shoald.log"
start_shoald "$PORT" -c "$T_DIR/shoald3.conf" || exit 99
# nu KEY NAMES...: one update adding a TXT record at each NAME of NU_ZONE, signed with KEY
# ("-": none)
NU_ZONE=example.com
nu() {
	local key=$1 n
	shift
	{
		printf 'server 127.0.0.1 %s\nzone %s\n' "$PORT" "$NU_ZONE"
		for n in "$@"; do printf 'update add %s.%s 60 TXT "t"\n' "$n" "$NU_ZONE"; done
		printf 'send\n'
	} | if [ "$key" = - ]; then timeout 20 nsupdate; else
		timeout 20 nsupdate -y "hmac-sha256:$key:$SECRET"; fi 2>&1
}
check_match "update-max-records 3: an update of 4 records is REFUSED" "update failed: REFUSED" \
	"$(nu rec m1 m2 m3 m4)"
check_eq "none of its records is applied" "" "$(q "$PORT" +short m1.example.com TXT)"
check_match "the refusal is logged" "more records than update-max-records" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "an update of 3 records is applied" "" "$(nu rec m1 m2 m3)"
check_eq "its records are served" '"t"' "$(q "$PORT" +short m3.example.com TXT)"

# burst WHO: 30 updates at once from WHO (a key, or - unsigned), each adding rWHON; sets
# ACCEPTED, REJECTED and SPAN (seconds the burst took, rounded down)
burst() {
	local who=$1 pids="" i start
	start=$(date +%s)
	for i in $(seq 1 30); do
		nu "$who" "r$who$i" >"$T_DIR/r$who$i.out" &
		pids="$pids $!"
	done
	for i in $pids; do wait_within "$i" 60; done
	SPAN=$(($(date +%s) - start))
	REJECTED=$(grep -l 'update failed: REFUSED' "$T_DIR/r$who"[0-9]*.out | wc -l)
	ACCEPTED=$(for i in $(seq 1 30); do [ -s "$T_DIR/r$who$i.out" ] || echo x; done | wc -l)
}
# at 2 a second in windows of one second, a burst over SPAN (+1 for the rounding) seconds
# touches at most SPAN + 2 windows
for who in upd -; do
	burst "$who"
	MOST=$((2 * (SPAN + 2)))
	what="update-rate-per-key 2, 30 at once from $who over ${SPAN}s"
	[ "$ACCEPTED" -le "$MOST" ] && ok=yes || ok="no: $ACCEPTED applied"
	check_eq "$what: at most $MOST applied" yes "$ok"
	check_eq "$what: every other one REFUSED" 30 $((ACCEPTED + REJECTED))
	[ "$REJECTED" -ge 1 ] && ok=yes || ok=no
	check_eq "$what: some REFUSED" yes "$ok"
	served=0
	for i in $(seq 1 30); do
		[ -n "$(q "$PORT" +short "r$who$i.example.com" TXT)" ] && served=$((served + 1))
	done
	check_eq "$what: the records served are the updates applied" "$ACCEPTED" "$served"
done
# ---- a zone's own bounds: example.net's update-max-records 2 and update-rate-per-key 0 (no
# limit), example.org's update-rate-per-key 1 (counted apart), over the global 3 and 2 ----
NU_ZONE=example.net
check_match "example.net's own update-max-records 2: an update of 3 records is REFUSED" \
	"update failed: REFUSED" "$(nu big n1 n2 n3)"
check_eq "none of its records is applied" "" "$(q "$PORT" +short n1.example.net TXT)"
check_eq "an update of 2 records to example.net is applied" "" "$(nu small n1 n2)"
check_eq "its records are served" '"t"' "$(q "$PORT" +short n2.example.net TXT)"
burst zk
check_eq "example.net's own update-rate-per-key 0: all 30 at once from zk applied" 30 "$ACCEPTED"
served=0
for i in $(seq 1 30); do
	[ -n "$(q "$PORT" +short "rzk$i.example.net" TXT)" ] && served=$((served + 1))
done
check_eq "and served" 30 "$served"
NU_ZONE=example.com
check_eq "example.com keeps the global update-max-records 3" "" "$(nu zk c1 c2 c3)"
check_eq "its records are served" '"t"' "$(q "$PORT" +short c3.example.com TXT)"
# sep: two updates to example.com reach the global rate 2; one to example.org is counted apart
check_eq "sep's first update to example.com" "" "$(nu sep s1)"
check_eq "sep's second update to example.com" "" "$(nu sep s2)"
NU_ZONE=example.org
check_eq "example.org's own update-rate-per-key 1 counts sep's updates to it apart" "" \
	"$(nu sep s3)"
burst sep
MOST=$((SPAN + 2))
what="example.org's own update-rate-per-key 1, 30 at once from sep over ${SPAN}s"
[ "$ACCEPTED" -le "$MOST" ] && ok=yes || ok="no: $ACCEPTED applied"
check_eq "$what: at most $MOST applied" yes "$ok"
check_eq "$what: every other one REFUSED" 30 $((ACCEPTED + REJECTED))
NU_ZONE=example.com
check_match "over the rate is logged" "over update-rate-per-key: REFUSED" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "another key is not held back by one over its rate" "" "$(nu other o1)"
stop_within "$SHOALD_PID"
check_eq "shoald stops" 0 $?
done_testing
