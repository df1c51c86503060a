#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald --takeover and shoalctl restart under load lose nothing; stop + start
# does. shoal-flood sends UDP at a fixed rate over 200 sockets, and a second
# shoal-flood pipelined TCP queries, while shoald is taken over five times:
# the same thread count, then 4, 1, 2 threads, then by shoalctl restart.
#   - every query sent is answered (flood's lost count 0) and the servers'
#     own counts (each process logs what it answered when it stops) sum to
#     the flood's answers;
#   - control: the same load with stop + start instead loses queries (the
#     test sees what the takeover protects against);
#   - a takeover with a configuration for another port, a broken zone or no
#     server at the path fails with a reason, and the old process serves on.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if [ ! -x "$SHOALD" ] || [ ! -x "$SHOAL_FLOOD" ]; then
	echo "SKIP: shoald or shoal-flood not built yet"
	exit 77
fi
# Under a sanitizer every process is several times slower: a lower rate and
# more time, so that the load stays one the server keeps up with.
if [ -n "${SHOAL_SANITIZER:-}" ]; then
	RATE=2000 SECONDS_UDP=30 TCP_RATE=100
else
	RATE=20000 SECONDS_UDP=12 TCP_RATE=1000
fi
port=$(free_port) || exit 1
ctl=$T_DIR/control.sock
zone="example.com=$EXAMPLES/example.com.zone"
mport=$(free_port) || exit 1
args=(--listen "127.0.0.1@$port" --zone "$zone" --control "$ctl" --metrics "$mport"
	--pid-file "$T_DIR/shoald.pid")

# server_answers: UDP answers of the server now on the control socket.
server_answers() {
	"$SHOALCTL" -s "$ctl" stats json 2>/dev/null | tr -d '\n' | sed 's/.*"total": *{//' |
		grep -o '"answers": *{[^}]*}' | head -1 | grep -o ': *[0-9][0-9]*' | tr -d ': ' |
		awk '{ n += $1 } END { print n + 0 }'
}

# logged_answers KIND: the sum over every process's log of what it answered
# (its "answered N of M UDP queries and N of M TCP queries" line at the end).
logged_answers() {
	cat "$T_DIR"/shoald-*.log | sed -n 's/.*answered \([0-9]*\) of [0-9]* UDP queries and \([0-9]*\) of.*/\1 \2/p' |
		awk -v k="$1" '{ n += (k == "udp" ? $1 : $2) } END { print n + 0 }'
}

# start_first N: a shoald with N threads, answering; sets PID.
LOGN=0
start_first() {
	LOGN=$((LOGN + 1))
	"$SHOALD" "${args[@]}" --threads "$1" >"$T_DIR/shoald-$LOGN.log" 2>&1 &
	PID=$!
	T_PIDS="$T_PIDS $PID"
	wait_answering 127.0.0.1 "$port" || { cat "$T_DIR/shoald-$LOGN.log"; exit 1; }
}

# take_over N [ARGS...]: a shoald with N threads (and ARGS) takes over from PID; waits until it
# has and the old process has exited (no query asks meanwhile: the counts
# stay the flood's); sets PID to the new one.
take_over() {
	take_over_run "$1 threads" "${args[@]}" --threads "$@" --takeover "$ctl"
}

# udp_flood SECONDS, tcp_flood: the loads; their reports in udp.json, tcp.json.
udp_flood() {
	"$SHOAL_FLOOD" -p "$port" -q www.example.com -c 200 -i 1000 -Q "$RATE" -l "$1" \
		-w 3 --json >"$T_DIR/udp.json" 2>&1
}
tcp_flood() {
	"$SHOAL_FLOOD" -p "$port" -q www.example.com --tcp-pipeline 8 -c 4 -Q "$TCP_RATE" \
		-l "$SECONDS_UDP" -w 3 --json >"$T_DIR/tcp.json" 2>&1
}

# 1. Five takeovers under load.
start_first 2
base=$(server_answers)
udp_flood "$SECONDS_UDP" &
udp=$!
tcp_flood &
tcp=$!
sleep 1
for n in 2 4 1 2; do
	take_over "$n"
done
# the fifth by shoalctl restart: the server starts its own binary anew
old=$PID
reply=$("$SHOALCTL" -s "$ctl" restart 2>&1)
PID=$(printf '%s\n' "$reply" | sed -n 's/^restarted: pid \([0-9]*\) serves now.*/\1/p')
if [ -n "$PID" ] && wait_until 60 gone "$old"; then
	T_PIDS="$T_PIDS $PID"
	pass "shoalctl restart: pid $PID took over from $old, which exited"
else
	fail "shoalctl restart: [$reply]"
	PID=$old
fi
if gone "$udp"; then
	fail "the five takeovers ended within the flood's $SECONDS_UDP s (raise it)"
fi
wait "$udp"
wait "$tcp"
json=$(cat "$T_DIR/udp.json")
tjson=$(cat "$T_DIR/tcp.json")
echo "# udp: $json"
echo "# tcp: $tjson"
sent=$(json_value "$json" sent)
check_eq "UDP: nothing lost over five takeovers ($sent sent)" 0 "$(json_value "$json" lost)"
check_eq "UDP: every query answered" "$sent" "$(json_value "$json" answered)"
check_eq "TCP: nothing lost" 0 "$(json_value "$tjson" lost)"
check_eq "TCP: every query answered" "$(json_value "$tjson" sent)" \
	"$(json_value "$tjson" answered)"
# the metrics endpoint: bound again by each taker once its giver has exited
metrics_ok() {
	timeout 10 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3; cat <&3' _ "$mport" | head -1 |
		grep -q '^HTTP/1.1 200'
}
if wait_until 10 metrics_ok; then
	pass "the metrics endpoint answers after the takeovers"
else
	fail "the metrics endpoint answers after the takeovers"
fi
# the pid file: written by each taker once its giver removed its own
if wait_until 10 grep -qx "$PID" "$T_DIR/shoald.pid"; then
	pass "the pid file names the last taker"
else
	fail "the pid file names the last taker ($PID): [$(cat "$T_DIR/shoald.pid" 2>&1)]"
fi
# the last process's count comes when it stops
"$SHOALCTL" -s "$ctl" stop >/dev/null
wait_until 30 gone "$PID" || fail "the last process stops"
check_eq "the servers' UDP answers are the flood's" "$sent" $(($(logged_answers udp) - base))
check_eq "the servers' TCP answers are the flood's" "$(json_value "$tjson" answered)" \
	"$(logged_answers tcp)"
# the restart's process is not this shell's child: its log speaks for it
check_eq "no sanitizer report in any process's log" "" \
	"$(grep -l 'Sanitizer' "$T_DIR"/shoald-*.log)"

# 2. The socket check: another port is refused; the old process serves on.
start_first 2
other=$(free_port)
LOGN=$((LOGN + 1))
"$SHOALD" --listen "127.0.0.1@$other" --zone "$zone" --control "$T_DIR/other.sock" \
	--takeover "$ctl" >"$T_DIR/refused.log" 2>&1
check_eq "a takeover for another port exits 1" 1 $?
check_match "it says why" "takeover refused: .*127.0.0.1@$port.*; pid $PID serves on" \
	"$(cat "$T_DIR/refused.log")"
# a zone that does not load stops the new process before it asks
printf 'example.com. 3600 IN SOA broken\n' >"$T_DIR/broken.zone"
"$SHOALD" --listen "127.0.0.1@$port" --zone "example.com=$T_DIR/broken.zone" \
	--control "$ctl" --takeover "$ctl" >"$T_DIR/broken.log" 2>&1
check_eq "a takeover with a broken zone exits 1" 1 $?
check_match "it names the file and line" "broken.zone:1" "$(cat "$T_DIR/broken.log")"
# no server at the path
"$SHOALD" "${args[@]}" --takeover "$T_DIR/nobody.sock" >"$T_DIR/nobody.log" 2>&1
check_eq "a takeover with no server at the path exits 1" 1 $?
check_match "it says so" "cannot reach the running server at .*nobody.sock" \
	"$(cat "$T_DIR/nobody.log")"
# an upgrade to a binary that does not take over
reply=$("$SHOALCTL" -s "$ctl" upgrade /bin/false 2>&1)
check_eq "shoalctl upgrade to a binary that fails exits 1" 1 $?
check_match "it says why" "exited with status 1 before taking over.*pid $PID serves on" "$reply"
check_match "the old process still answers" "^192.0.2.80" \
	"$(q "$port" +short www.example.com A)"
check_match "and still takes commands" "^pid $PID" "$("$SHOALCTL" -s "$ctl" status)"

# an address the old process did not have is bound as at start
take_over 2 --listen "::1@$port"
check_match "the new address answers" "^192.0.2.80" \
	"$("$DIG" @::1 -p "$port" +short +time=2 +tries=1 www.example.com A)"
check_match "the taken one too" "^192.0.2.80" "$(q "$port" +short www.example.com A)"

# 3. Control: stop + start under the same load loses queries.
udp_flood 3 &
udp=$!
sleep 1
stop_within "$PID" 30
start_first 2
wait "$udp"
json=$(cat "$T_DIR/udp.json")
echo "# stop + start: $json"
lost=$(json_value "$json" lost)
if [ "${lost:-0}" -gt 0 ]; then
	pass "control: stop + start lost $lost of $(json_value "$json" sent) queries"
else
	fail "control: stop + start was expected to lose queries: $json"
fi
stop_within "$PID" 30
done_testing
