#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The bounds of DNS over TLS, one worker: connections per address (as TCP's,
# counted apart); a client that stalls mid-handshake is closed at
# tls-handshake-timeout; garbage instead of a ClientHello is closed at once; a
# flood of clients that never finish their handshake (from 20 addresses) holds
# at most tls-max-handshakes, the one begun first giving way, while a real TLS
# client, UDP and TCP get their answers meanwhile; an idle TLS connection costs
# a bounded amount of memory.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

TLSCLIENT=$SHOAL_BUILDDIR/tests/integration/tlsclient
HANDSHAKE_MS=3000
MAX_HANDSHAKES=4
FLOOD=20
IDLE_CONNS=200
PER_CONN_MAX_KB=48 # an idle TLS connection: its session (about 19 KB), 4 KiB of input, slack
port=$(free_port)
tport=$(free_port)
mkdir -m 700 "$T_DIR/state"
start_shoald "$port" --listen "127.0.0.1@$port" --listen-tls "127.0.0.1@$tport" --threads 1 \
	--tls-handshake-timeout $HANDSHAKE_MS --tls-max-handshakes $MAX_HANDSHAKES \
	--tcp-max-per-address 2 --control "$T_DIR/ctl" \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 1
check_match "TLS answers" '^192\.0\.2\.' "$(q "$tport" +tls +short www.example.com A)"

# tls_total NAME: the total of TLS counter NAME (the tls list's own names, or the
# connection counters inside "tls": {...})
tls_total() {
	"$SHOALCTL" -s "$T_DIR/ctl" stats json | grep '"total"' | grep -o '"tls": {.*' |
		grep -o "\"$1\": [0-9]*" | head -1 | cut -d' ' -f2
}
# bg_client OUT ARGS...: tlsclient in the background, its output to OUT; its pid in T_PIDS.
bg_client() {
	local out=$1
	shift
	"$TLSCLIENT" "$@" >"$out" 2>&1 &
	T_PIDS="$T_PIDS $!"
	CLIENT_PIDS="$CLIENT_PIDS $!"
}
wait_clients() {
	local p
	for p in $CLIENT_PIDS; do
		wait_within "$p" 30
	done
	CLIENT_PIDS=""
}

# per address: two handshakes held open from 127.0.0.1; a third is closed at once
CLIENT_PIDS=""
bg_client "$T_DIR/s1" -m silent -w 20 127.0.0.1 "$tport" x
bg_client "$T_DIR/s2" -m silent -w 20 127.0.0.1 "$tport" x
sleep 0.5
out=$("$TLSCLIENT" -m silent -w 20 127.0.0.1 "$tport" x)
echo "# a third from 127.0.0.1: $out"
check_match "a third connection from the address is closed" '^closed_after_ms [0-9]+$' "$out"
check_eq "tls refused_per_address counts it" 1 "$(tls_total refused_per_address)"
wait_clients
s1=$(cat "$T_DIR/s1")
echo "# silent clients: $s1, $(cat "$T_DIR/s2")"
check_match "a client that sends nothing is closed at tls-handshake-timeout" '^closed_after_ms [0-9]+$' "$s1"
check_eq "tls handshake_timeouts counts them" 2 "$(tls_total handshake_timeouts)"

# half a ClientHello, then nothing: the same
out=$("$TLSCLIENT" -m stall -w 20 127.0.0.1 "$tport" x)
echo "# stalled mid-handshake: $out"
check_match "a client that stalls mid-handshake is closed" '^closed_after_ms [0-9]+$' "$out"
check_eq "and counted" 3 "$(tls_total handshake_timeouts)"

# garbage: closed as soon as it is read
out=$("$TLSCLIENT" -m garbage -w 20 127.0.0.1 "$tport" x)
echo "# garbage: $out"
check_match "garbage instead of a ClientHello is closed" '^closed_after_ms [0-9]+$' "$out"
check_eq "tls handshake_failed counts it" 1 "$(tls_total handshake_failed)"
check_match "and it is logged" 'TLS from 127\.0\.0\.1@[0-9]+: handshake: ' "$(cat "$T_DIR/shoald.log")"

# a reset mid-handshake (a client that gave up: a pin it refused): a failure, at once
check_eq "tlsclient -m reset: the server's certificate seen, then an RST" reset \
	"$("$TLSCLIENT" -m reset 127.0.0.1 "$tport" x 2>/dev/null)"
failed_two() { [ "$(tls_total handshake_failed)" = 2 ]; }
wait_until 3 failed_two
check_eq "a reset mid-handshake is counted a failed handshake" 2 "$(tls_total handshake_failed)"
check_eq "and logged" 2 "$(grep -c 'TLS from 127\.0\.0\.1@[0-9]*: ' "$T_DIR/shoald.log")"

# the flood: FLOOD clients that never finish, each from its own address
for i in $(seq 1 $FLOOD); do
	bg_client "$T_DIR/flood$i" -m stall -w 20 -s "127.0.6.$i" 127.0.0.1 "$tport" x
done
evicted_all() { [ "$(tls_total handshakes_evicted)" -ge $((FLOOD - MAX_HANDSHAKES)) ]; }
wait_until 10 evicted_all
evicted=$(tls_total handshakes_evicted)
echo "# flood of $FLOOD: $evicted evicted"
check_eq "at most $MAX_HANDSHAKES handshakes held: the rest gave way" $((FLOOD - MAX_HANDSHAKES)) \
	"$evicted"
ok=0
for i in 1 2 3 4 5; do
	"$TLSCLIENT" -n 20 -w 5 127.0.0.1 "$tport" www.example.com >"$T_DIR/legit" 2>&1 && ok=$((ok + 1))
done
check_eq "meanwhile a TLS client gets its answers, 5 times of 5" 5 "$ok"
check_match "UDP answers meanwhile" '^192\.0\.2\.' "$(q "$port" +short www.example.com A)"
check_match "TCP answers meanwhile" '^192\.0\.2\.' "$(q "$port" +tcp +short www.example.com A)"
wait_clients
closed=$(cat "$T_DIR"/flood* | grep -c '^closed_after_ms')
check_eq "every flooding client was closed" $FLOOD "$closed"

# memory: idle TLS connections, their handshakes done
# (the kernel's count: not under a sanitizer, whose allocator keeps what is freed)
if [ -z "${SHOAL_SANITIZER:-}" ]; then
	rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SHOALD_PID/status"; }
	stop_within "$SHOALD_PID" 20
	start_shoald "$port" --listen "127.0.0.1@$port" --listen-tls "127.0.0.1@$tport" \
		--threads 1 --tcp-max-per-address 0 --tcp-max-connections 512 \
		--tls-max-handshakes 512 --zone "example.com=$EXAMPLES/example.com.zone" || exit 1
	"$TLSCLIENT" -n 1 127.0.0.1 "$tport" www.example.com >/dev/null # the library's first use
	before=$(rss)
	CLIENT_PIDS=""
	bg_client "$T_DIR/idle" -c $IDLE_CONNS -n 1 -r "$T_DIR/ready" -l 3 -w 20 127.0.0.1 "$tport" \
		www.example.com
	wait_ready "$T_DIR/ready" $CLIENT_PIDS
	during=$(rss)
	wait_clients
	per=$(((during - before) / IDLE_CONNS))
	echo "# VmRSS ${before} kB, with $IDLE_CONNS idle TLS connections ${during} kB: ${per} kB each"
	if [ "$per" -le $PER_CONN_MAX_KB ]; then
		pass "an idle TLS connection holds at most $PER_CONN_MAX_KB kB (${per} kB)"
	else
		fail "an idle TLS connection holds ${per} kB (at most $PER_CONN_MAX_KB)"
	fi
	check_match "they were all answered" 'opened 200 .*lost 0' "$(cat "$T_DIR/idle")"
fi
done_testing
