#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_stats: shoalctl stats shows per-thread counters that sum to the queries sent,
# as a table and as JSON, with query types and per-zone counters; shoalctl top
# shows answers per second per thread and ends by itself or on Ctrl-C;
# status, zone-status, unknown commands, stop.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99
# start_shoald's probes were queries too: read the counters before and after
before=$("$SHOALCTL" -s "$CTL" stats --json | sed -n 's/.*"total": {"queries": \([0-9]*\).*/\1/p')

SENT=120
for i in $(seq 1 $SENT); do echo "www.example.com A"; done >"$T_DIR/batch"
"$DIG" @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 -f "$T_DIR/batch" >"$T_DIR/dig.out" 2>&1
check_eq "$SENT answers" "$SENT" "$(grep -c 'status: NOERROR' "$T_DIR/dig.out")"

stats=$("$SHOALCTL" -s "$CTL" stats --json)
check_eq "shoalctl stats --json exits 0" 0 $?
per_thread=$(printf '%s\n' "$stats" | sed -n 's/^ *{"thread": [0-9]*, "queries": \([0-9]*\),.*/\1/p')
check_eq "two threads listed" 2 "$(printf '%s\n' "$per_thread" | wc -l)"
sum=0
for n in $per_thread; do sum=$((sum + n)); done
check_eq "per-thread queries sum to the queries sent" "$SENT" $((sum - before))
total=$(printf '%s\n' "$stats" | sed -n 's/.*"total": {"queries": \([0-9]*\).*/\1/p')
check_eq "total equals the per-thread sum" "$sum" "$total"
check_match "kernel drops reported" '"total":.*"rcvbuf_drops": 0,' "$stats"
check_match "answers by rcode" '"total": \{"queries": [0-9]+, "answers": \{"NOERROR": [0-9]+' "$stats"

check_match "query types and EDNS" '"total":.*"query": \{"type": \{"A": [0-9]+[,}].*"edns": [0-9]+' \
	"$stats"

"$DIG" @127.0.0.1 -p "$PORT" +tcp +norec +time=2 +tries=1 www.example.com A >/dev/null
check_match "TCP counted apart, by rcode" \
	'"total":.*"tcp": \{"accepted": 1, .*"queries": 1, "answers": 1, .*"rcode": \{"NOERROR": 1\}' \
	"$("$SHOALCTL" -s "$CTL" stats --json)"

# zone_counts: "ANSWERS NXDOMAIN" of example.com., summed over the threads
zone_counts() {
	"$SHOALCTL" -s "$CTL" stats json | sed -n 's/^ "zones":.*"example\.com\.": {"answers": \([0-9]*\), "nxdomain": \([0-9]*\),.*/\1 \2/p'
}
read -r za0 zn0 <<<"$(zone_counts)"
for i in $(seq 1 7); do echo "nx$i.example.com AAAA +dnssec"; done >"$T_DIR/nx"
"$DIG" @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 -f "$T_DIR/nx" >"$T_DIR/dig.out" 2>&1
"$DIG" @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 www.example.org A >>"$T_DIR/dig.out" 2>&1
read -r za1 zn1 <<<"$(zone_counts)"
check_eq "the zone counts its answers" 7 $((za1 - za0))
check_eq "and its NXDOMAIN answers" 7 $((zn1 - zn0))
stats=$("$SHOALCTL" -s "$CTL" stats json)
check_match "DO counted" '"total":.*"dnssec_ok": [1-9][0-9]*' "$stats"
check_match "AAAA counted" '"total":.*"type": \{"A": [0-9]+, [^}]*"AAAA": 7[,}]' "$stats"

# the table: a header with a column per thread, the totals of the JSON
table=$("$SHOALCTL" -s "$CTL" stats)
check_eq "shoalctl stats exits 0" 0 $?
check_match "the table's header" '^counter +total +thread 0 +thread 1$' "$(head -1 <<<"$table")"
total=$(sed -n 's/.*"total": {"queries": \([0-9]*\).*/\1/p' <<<"$stats")
check_match "the table's UDP queries" "^udp queries +$total +[0-9]+ +[0-9]+\$" "$table"
check_match "the table's zone rows, the total alone" '^zone example\.com\. nxdomain +[0-9]+$' "$table"
check_match "and its serial" '^zone example\.com\. serial +[0-9]+$' "$table"
"$SHOALCTL" -s "$CTL" stats yaml 2>"$T_DIR/err"
check_eq "an unknown format exits 1" 1 $?

# top: COUNT refreshes a second apart, under load, then it exits by itself
"$SHOAL_FLOOD" -s 127.0.0.1 -p "$PORT" -q www.example.com -l 5 -T 1 -c 4 -i 8 -Q 2000 \
	>"$T_DIR/flood.out" 2>&1 &
FLOOD=$!
T_PIDS="$T_PIDS $FLOOD"
wait_until 10 eval "[ \"\$(zone_counts | cut -d' ' -f1)\" -gt $((za1 + 100)) ]" ||
	fail "the load did not start"
top=$(timeout 30 "$SHOALCTL" -s "$CTL" top 2)
check_eq "top 2 exits 0" 0 $?
check_eq "top 2: two refreshes" 2 "$(grep -c '^thread ' <<<"$top")"
check_eq "a row per thread" 4 "$(grep -cE '^ +[01] ' <<<"$top")"
check_match "answers per second under load" '^ +total +[1-9][0-9]* +[0-9]+ +[1-9][0-9]*$' "$top"
wait "$FLOOD"
# Ctrl-C ends it long before its count
"$SHOALCTL" -s "$CTL" top 1000 >"$T_DIR/top.out" &
TOP=$!
T_PIDS="$T_PIDS $TOP"
wait_until 10 eval "grep -q '^ *total' '$T_DIR/top.out'" || fail "top printed nothing"
kill -INT "$TOP"
wait_until 10 eval "! kill -0 $TOP 2>/dev/null"
check_eq "Ctrl-C ends top" 0 "$(kill -0 "$TOP" 2>/dev/null && echo running || echo 0)"
"$SHOALCTL" -s "$CTL" top 0 2>/dev/null
check_eq "top 0 is a usage error" 2 $?

status=$("$SHOALCTL" -s "$CTL" status)
check_match "status shows threads" "^threads 2$" "$status"
check_match "status shows socket mode" "^socket-mode reuseport$" "$status"
check_match "zone-status lists the zone" "^example.com. serial [0-9]+ " \
	"$("$SHOALCTL" -s "$CTL" zone-status)"
check_eq "control socket mode 0600" 600 "$(stat -c %a "$CTL")"
"$SHOALCTL" -s "$CTL" frobnicate 2>"$T_DIR/err"
check_eq "unknown command exits 1" 1 $?
check_match "unknown command says so" "unknown command" "$(cat "$T_DIR/err")"
"$SHOALCTL" -s "$T_DIR/none" status 2>/dev/null
check_eq "no server: exit 2" 2 $?
"$SHOALCTL" -s "$CTL" reload no.such.zone 2>"$T_DIR/err"
check_eq "reload of an unknown zone exits 1" 1 $?
check_match "and names it" "no zone no.such.zone" "$(cat "$T_DIR/err")"

check_match "shoalctl stop" "stopping" "$("$SHOALCTL" -s "$CTL" stop)"
wait "$SHOALD_PID"
check_eq "exits 0 after stop" 0 $?
done_testing
