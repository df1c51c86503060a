#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Descriptor exhaustion: shoald under a small RLIMIT_NOFILE, flooded with idle
# TCP connections, keeps answering UDP, its control socket and SIGTERM; the
# TCP connection limit is derived from the descriptors there are; a listener
# whose accept fails for want of descriptors pauses instead of spinning, and
# serves the waiting clients once descriptors are back; a configuration that
# cannot fit its descriptors is refused at start.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

TCPCLIENT=$SHOAL_BUILDDIR/tests/integration/tcpclient
ZONE="example.com=$EXAMPLES/example.com.zone"
NOFILE=144 # 128 until a socket was set aside for each of transfers-in's 10 refreshes
CONNS=600   # idle connections per round, several times what NOFILE allows
ROUNDS=6    # the lock-up was a race (about 1 round in 3): each round is another chance

# The client holds CONNS descriptors of its own.
if [ "$(ulimit -n)" -lt $((CONNS + 64)) ]; then
	ulimit -n $((CONNS + 64)) 2>/dev/null || {
		echo "SKIP: cannot raise this shell's descriptor limit to $((CONNS + 64))"
		exit 77
	}
fi

# udp_answers PORT: the A records of www.example.com over UDP (empty when none).
udp_answers() {
	"$DIG" @127.0.0.1 -p "$1" +norec +notcp +time=2 +tries=2 +short www.example.com A |
		grep -E '^[0-9.]+$' | sort | tr '\n' ' '
}

# tcp_total SOCKET NAME: one TCP counter of shoalctl stats, summed over threads.
tcp_total() {
	timeout 20 "$SHOALCTL" -s "$1" stats json |
		sed -n "s/.*\"total\": {.*\"tcp\": {[^}]*\"$2\": \([0-9]*\).*/\1/p"
}

# 1. A tight limit: 2 threads under RLIMIT_NOFILE 144, 600 idle TCP
# connections held, then closed. Before, the workers spun in accept4 with
# EMFILE: no UDP answer, no control socket, SIGTERM ignored.
# Every connection comes from 127.0.0.1: no limit per address here.
port=$(free_port)
prlimit --nofile=$NOFILE "$SHOALD" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--tcp-max-per-address 0 --control "$T_DIR/ctl" >>"$T_DIR/shoald.log" 2>&1 &
pid=$!
T_PIDS="$T_PIDS $pid"
wait_answering 127.0.0.1 "$port" || { cat "$T_DIR/shoald.log"; exit 1; }

chosen=$(sed -n 's/.*TCP connections per worker: \([0-9]*\).*/\1/p' "$T_DIR/shoald.log")
echo "# $(grep -m1 'descriptors:' "$T_DIR/shoald.log")"
if [ -n "$chosen" ] && [ "$chosen" -ge 1 ] && [ $((chosen * 2)) -lt $NOFILE ]; then
	pass "connection limit derived from $NOFILE descriptors: $chosen per worker"
else
	fail "connection limit derived from $NOFILE descriptors: [$chosen]"
fi

locked=""
for round in $(seq 1 $ROUNDS); do
	rm -f "$T_DIR/held"
	"$TCPCLIENT" -n 0 -c $CONNS -l 1 -r "$T_DIR/held" 127.0.0.1 "$port" x >/dev/null 2>&1 &
	client=$!
	wait_ready "$T_DIR/held" $client
	during=$(udp_answers "$port")
	wait $client
	after=$(udp_answers "$port")
	check_eq "round $round: UDP answered while $CONNS connections were held" \
		"192.0.2.80 192.0.2.81 " "$during"
	check_eq "round $round: UDP answered after they closed" "192.0.2.80 192.0.2.81 " "$after"
	if [ "$after" != "192.0.2.80 192.0.2.81 " ]; then
		locked=$round
		break
	fi
done
if [ -z "$locked" ]; then
	check_match "control socket answers after the rounds" '^version ' \
		"$(timeout 20 "$SHOALCTL" -s "$T_DIR/ctl" status 2>&1 | head -1)"
	check_match "connections past the limit were closed for it" '^[1-9][0-9]*$' \
		"$(tcp_total "$T_DIR/ctl" closed_limit)"
fi
stop_within $pid 30
check_eq "SIGTERM stops shoald (exit 0) after the rounds (124: not in 30 s)" 0 $?

# 2. Descriptors run out under the running daemon (its soft limit lowered
# to a few above what it holds): accept fails with EMFILE, the listener
# pauses (counted), UDP goes on, and the waiting clients are served once
# descriptors free up. The client reads its connections in order, so the
# few accepted ones must not wait long for it: a short idle timeout closes
# them once answered (the answer stays readable).
port=$(free_port)
prlimit --nofile=$NOFILE "$SHOALD" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--tcp-idle-timeout 200 --tcp-max-per-address 0 --control "$T_DIR/ctl2" \
	>>"$T_DIR/shoald2.log" 2>&1 &
pid=$!
T_PIDS="$T_PIDS $pid"
wait_answering 127.0.0.1 "$port" || { cat "$T_DIR/shoald2.log"; exit 1; }
open=$(ls /proc/$pid/fd | wc -l)
prlimit --pid $pid --nofile=$((open + 4)):$NOFILE
rm -f "$T_DIR/held"
"$TCPCLIENT" -n 1 -c 40 -l 1 -w 20 -r "$T_DIR/held" 127.0.0.1 "$port" www.example.com A \
	>"$T_DIR/client2" 2>&1 &
client=$!
wait_ready "$T_DIR/held" $client
check_eq "UDP answered while accept fails with EMFILE" "192.0.2.80 192.0.2.81 " \
	"$(udp_answers "$port")"
wait $client
check_match "all 40 clients answered once descriptors freed up" \
	'answers 40 in_order 40 noerror 40 lost 0' "$(cat "$T_DIR/client2")"
prlimit --pid $pid --nofile=$NOFILE:$NOFILE
check_match "listener pauses counted (accept_paused)" '^[1-9][0-9]*$' \
	"$(tcp_total "$T_DIR/ctl2" accept_paused)"
stop_within $pid 30
check_eq "SIGTERM stops shoald (exit 0) after the exhaustion (124: not in 30 s)" 0 $?

# 3. A configuration whose descriptors cannot fit is refused at start, and
# says why.
port=$(free_port)
out=$(timeout 20 prlimit --nofile=40 "$SHOALD" --listen "127.0.0.1@$port" --threads 8 \
	--zone "$ZONE" 2>&1)
status=$?
check_eq "8 threads under RLIMIT_NOFILE 40: refused" 1 "$status"
check_match "the refusal names the descriptor limit" 'RLIMIT_NOFILE' "$out"

done_testing
