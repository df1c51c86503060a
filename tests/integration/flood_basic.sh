#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoal-flood against a real shoald on loopback: ~2 s at a fixed rate over
# IPv4, random arrivals, a short IPv6 and TCP run; no loss, answers == sent, the NSID names the
# server threads, and shoalctl stats (when it exists) counts the same answers.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if [ ! -x "$SHOALD" ]; then
	echo "SKIP: $SHOALD not built yet"
	exit 77
fi
port=$(free_port) || exit 1
ctl=$T_DIR/control.sock
start_shoald "$port" --listen "127.0.0.1@$port" --listen "::1@$port" --threads 2 \
	--zone "example.com=$EXAMPLES/example.com.zone" --nsid flood --control "$ctl" || exit 1

# server_answers: UDP answers shoald has sent (the sum over RCODEs of "total"
# in shoalctl stats); empty when shoalctl is not there.
server_answers() {
	[ -x "$SHOALCTL" ] || return 0
	"$SHOALCTL" -s "$ctl" stats json 2>/dev/null | tr -d '\n' | sed 's/.*"total": *{//' |
		grep -o '"answers": *{[^}]*}' | head -1 | grep -o ': *[0-9][0-9]*' | tr -d ': ' |
		awk '{ n += $1 } END { if (NR) print n + 0 }'
}
before=$(server_answers)

json=$("$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -q www.example.com -t A -l 2 -Q 2000 -c 16 \
	--nsid --json)
check_eq "shoal-flood exits 0" 0 $?
# get KEY: a scalar from shoal-flood's JSON (keys used here are unique in it).
get() { json_value "$json" "$1"; }
sent=$(get sent)
check_eq "nothing lost" 0 "$(get lost)"
check_eq "every query answered" "$sent" "$(get answered)"
check_eq "every answer NOERROR" "$sent" "$(get NOERROR)"
check_eq "no unexpected answers" 0 "$(get unexpected)"
# Paced at 2000 qps for 2 s: 4000 queries, give or take the last tick.
if [ "$sent" -ge 3900 ] && [ "$sent" -le 4100 ]; then
	pass "paced at the asked rate ($sent sent)"
else
	fail "paced at the asked rate: sent $sent, expected about 4000"
fi
check_eq "answers carry the NSID" "flood/" "$(get sample | sed 's|[0-9]*$||')"
threads=$(printf '%s\n' "$json" | grep -o '"threads":\[[^]]*\]' | grep -o '[0-9][0-9]*' | wc -l)
check_eq "both server threads answered" 2 "$threads"
check_eq "each client socket stays on one thread" 1 "$(get stickiness | awk '{ print $1 + 0 }')"

after=$(server_answers)
if [ -n "$before" ] && [ -n "$after" ]; then
	check_eq "shoalctl stats counts the same answers" "$sent" $((after - before))
else
	echo "# shoalctl stats not available: server-side count not compared"
fi

# Unpaced for a second: whatever the client counts as answered, the server
# sent; the server may have sent more only by what was in flight at the end
# (at most the in-flight limit) and what came back too late (unexpected).
before=$(server_answers)
json=$("$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -q www.example.com -l 1 -c 32 -i 256 -w 0.5 --json)
after=$(server_answers)
answered=$(get answered)
check_eq "unpaced: sent = answered + lost" "$(get sent)" $((answered + $(get lost)))
if [ -n "$before" ] && [ -n "$after" ]; then
	extra=$((after - before - answered))
	if [ "$extra" -ge 0 ] && [ "$extra" -le $((256 + $(get unexpected))) ]; then
		pass "unpaced: shoalctl stats agree within the in-flight limit ($extra apart)"
	else
		fail "unpaced: server sent $((after - before)), client answered $answered"
	fi
fi

# Random arrivals (exponential gaps): the same count gets through, and the
# report says how the queries were spaced.
json=$("$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -q www.example.com --arrivals random -Q 2000 \
	-n 400 --json)
check_eq "random arrivals: shoal-flood exits 0" 0 $?
check_eq "random arrivals: every query answered" 400 "$(get answered)"
check_eq "random arrivals: nothing lost" 0 "$(get lost)"
check_eq "random arrivals: the JSON says random" random "$(get arrivals)"
text=$("$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -q www.example.com -Q 2000 -n 100)
check_match "even arrivals: the text header says so" "even arrivals at 2000 q/s" "$text"

# The sender threads' timer slack (how late the kernel may wake them): 1 ns
# by default, so paced queries leave when due; --timer-slack sets another.
slack_of() { # slack_of WANT ARGS...: a paced run whose main thread's slack becomes WANT
	local want=$1 pid
	shift
	"$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -q www.example.com -Q 200 -n 600 "$@" \
		>/dev/null 2>&1 &
	pid=$!
	wait_until 5 grep -qx "$want" "/proc/$pid/timerslack_ns"
	local rc=$?
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return $rc
}
# another process's timerslack_ns reads only with CAP_SYS_NICE (proc(5)): a build as a
# user (dpkg-buildpackage on a buildd) cannot look; grep's parent is this shell
if grep -q . "/proc/$$/timerslack_ns" 2>/dev/null; then
	slack_of 1
	check_eq "paced: the senders' timer slack is 1 ns by default" 0 $?
	slack_of 2000 --timer-slack 2000
	check_eq "--timer-slack 2000: the senders' timer slack is 2000 ns" 0 $?
else
	echo "SKIP: no /proc/PID/timerslack_ns of another process to read here (CAP_SYS_NICE)"
fi

json=$("$SHOAL_FLOOD" -s ::1 -p "$port" -q nope.example.com -n 500 --json)
check_eq "unpaced: the JSON says unpaced" unpaced "$(get arrivals)"
check_eq "IPv6: every query answered" 500 "$(get answered)"
check_eq "IPv6: NXDOMAIN counted" 500 "$(get NXDOMAIN)"

json=$("$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -q www.example.com -n 200 -c 4 --tcp --json)
check_eq "TCP: every query answered" 200 "$(get answered)"
json=$("$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -q www.example.com -n 400 -c 4 \
	--tcp-pipeline 20 --json)
check_eq "TCP pipelined: every query answered" 400 "$(get answered)"
check_eq "TCP pipelined: nothing lost" 0 "$(get lost)"
done_testing
