#!/bin/bash
# shoald_stats: shoalctl stats shows per-thread counters that sum to the queries sent;
# status, zone-status, unknown commands, stop.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99
# start_shoald's probes were queries too: read the counters before and after
before=$("$SHOALCTL" -s "$CTL" stats | sed -n 's/.*"total": {"queries": \([0-9]*\).*/\1/p')

SENT=120
for i in $(seq 1 $SENT); do echo "www.example.com A"; done >"$T_DIR/batch"
"$DIG" @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 -f "$T_DIR/batch" >"$T_DIR/dig.out" 2>&1
check_eq "$SENT answers" "$SENT" "$(grep -c 'status: NOERROR' "$T_DIR/dig.out")"

stats=$("$SHOALCTL" -s "$CTL" stats)
check_eq "shoalctl stats exits 0" 0 $?
per_thread=$(printf '%s\n' "$stats" | sed -n 's/^ *{"thread": [0-9]*, "queries": \([0-9]*\),.*/\1/p')
check_eq "two threads listed" 2 "$(printf '%s\n' "$per_thread" | wc -l)"
sum=0
for n in $per_thread; do sum=$((sum + n)); done
check_eq "per-thread queries sum to the queries sent" "$SENT" $((sum - before))
total=$(printf '%s\n' "$stats" | sed -n 's/.*"total": {"queries": \([0-9]*\).*/\1/p')
check_eq "total equals the per-thread sum" "$sum" "$total"
check_match "kernel drops reported" '"total":.*"rcvbuf_drops": 0,' "$stats"
check_match "answers by rcode" '"total": \{"queries": [0-9]+, "answers": \{"NOERROR": [0-9]+' "$stats"

"$DIG" @127.0.0.1 -p "$PORT" +tcp +norec +time=2 +tries=1 www.example.com A >/dev/null
check_match "TCP counted apart" '"total":.*"tcp": \{"accepted": 1, .*"queries": 1, "answers": 1' \
	"$("$SHOALCTL" -s "$CTL" stats)"

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
