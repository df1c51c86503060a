#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# DNS over TCP against the real daemon: TCP answers equal UDP ones, truncated
# UDP answers come whole over TCP, pipelining, octet-at-a-time writes, the idle
# timeout, one listener per worker, connections spread over every worker, and
# new clients served past the per-worker connection limit.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

TCPCLIENT=$SHOAL_BUILDDIR/tests/integration/tcpclient
ZONES=$SHOAL_SRCDIR/tests/integration/zones
THREADS=2

# The big zone plus one RRset of about 60 KB, near the 65535-octet limit.
cp "$ZONES/tcp-big.zone" "$T_DIR/tcp-big.zone"
for i in $(seq 1 250); do
	printf 'huge IN TXT "huge %03d %0220d"\n' "$i" "$i"
done >>"$T_DIR/tcp-big.zone"

port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads $THREADS --nsid tcptest \
	--zone "example.com=$EXAMPLES/example.com.zone" --zone "tcp.test=$T_DIR/tcp-big.zone" \
	--tcp-idle-timeout 1000 --control "$T_DIR/ctl" || exit 1

# tcp_counter SOCKET NAME: "THREAD VALUE" per worker for one TCP counter of shoalctl stats.
tcp_counter() {
	"$SHOALCTL" -s "$1" stats json |
		sed -n "s/.*\"thread\": \([0-9]*\),.*\"tcp\": {[^}]*\"$2\": \([0-9]*\).*/\1 \2/p"
}

# dig output without what differs from run to run (ID, timing, server line,
# and the COOKIE: dig makes a client cookie per run, the server cookie follows).
stable() {
	q "$port" +noall +comments +answer +authority +additional "$@" |
		sed -e 's/, id: [0-9]*//' | grep -v -e '^; COOKIE' -e '^;; Query time' \
		-e '^;; SERVER' -e '^;; WHEN' -e '^;; MSG SIZE' -e '^$'
}

# 1. TCP answers equal UDP answers (RFC 7766 5: same answers on both).
while read -r name type; do
	udp=$(stable +notcp "$name" "$type")
	tcp=$(stable +tcp "$name" "$type")
	if [ -n "$udp" ] && [ "$udp" = "$tcp" ]; then
		pass "TCP = UDP for $name $type"
	else
		fail "TCP differs from UDP for $name $type"
		diff <(echo "$udp") <(echo "$tcp") | head -20
	fi
done <<'EOF'
example.com SOA
example.com NS
example.com MX
www.example.com A
alias.example.com A
nothere.example.com A
b.c.example.com A
x.wild.example.com TXT
a.old.example.com A
private.example.com TYPE65280
sshfp.example.com SSHFP
small.tcp.test TXT
EOF

# 2. A truncated UDP answer: TC over UDP, dig retries over TCP and gets it all.
tc=$(q "$port" +notcp +ignore big.tcp.test TXT | grep -E '^;; flags:')
check_match "UDP answer for big.tcp.test is truncated" ' tc[ ;]' "$tc"
out=$(q "$port" big.tcp.test TXT)
check_match "dig retried big.tcp.test over TCP" 'Truncated, retrying in TCP mode' "$out"
check_eq "big.tcp.test: all 30 TXT records over TCP" 30 \
	"$(printf '%s\n' "$out" | grep -c '^big\.tcp\.test\..*TXT')"

# 3. An answer of about 60 KB arrives whole.
out=$(q "$port" +tcp +stats huge.tcp.test TXT)
check_eq "huge.tcp.test: all 250 TXT records" 250 \
	"$(printf '%s\n' "$out" | grep -c '^huge\.tcp\.test\..*TXT')"
size=$(printf '%s\n' "$out" | sed -n 's/^;; MSG SIZE *rcvd: \([0-9]*\)/\1/p')
if [ "${size:-0}" -gt 60000 ] && [ "${size:-0}" -le 65535 ]; then
	pass "huge answer is $size octets, one message"
else
	fail "huge answer size [$size]"
fi

# 4. 100 pipelined queries in one write; a query written one octet at a time.
out=$("$TCPCLIENT" -n 100 127.0.0.1 "$port" www.example.com A)
check_match "100 pipelined queries, 100 answers in order" \
	'answers 100 in_order 100 noerror 100 lost 0' "$out"
out=$("$TCPCLIENT" -n 3 -b 127.0.0.1 "$port" www.example.com A)
check_match "queries written one octet at a time are answered" \
	'answers 3 in_order 3 noerror 3 lost 0' "$out"

# 5. An idle connection is closed after the idle timeout (1000 ms here).
out=$("$TCPCLIENT" -i 20 127.0.0.1 "$port" x)
check_match "idle connection closed by the server" '^closed_after_ms [0-9]+' "$out"

# 6. One TCP listener per worker on the port, all of them shoald's.
listeners=$(ss -Hltnp "sport = :$port" | grep -c "pid=$SHOALD_PID,")
check_eq "one TCP listener per worker" $THREADS "$listeners"

# 7. Connections from many source ports reach every worker (NSID names it).
out=$("$TCPCLIENT" -N -c 64 -k 16 127.0.0.1 "$port" www.example.com A)
check_match "64 connections answered" 'answers 64 in_order 64' "$out"
for t in $(seq 0 $((THREADS - 1))); do
	check_match "worker $t answered some of 64 connections (NSID)" "^nsid tcptest/$t [0-9]+" "$out"
done
accepted=$(tcp_counter "$T_DIR/ctl" accepted)
echo "# per-thread TCP accepted: $(echo "$accepted" | tr '\n' ' ')"
check_eq "shoalctl stats has a TCP counter per worker" $THREADS "$(echo "$accepted" | grep -c .)"
check_eq "every worker's TCP accepted counter moved" "" "$(echo "$accepted" | awk '$2 == 0')"

# 8. Past the per-worker connection limit a new client is still served.
port2=$(free_port)
start_shoald "$port2" --listen "127.0.0.1@$port2" --threads 1 --tcp-max-connections 8 \
	--zone "example.com=$EXAMPLES/example.com.zone" --control "$T_DIR/ctl2" || exit 1
"$TCPCLIENT" -n 0 -c 40 -l 3 -r "$T_DIR/held" 127.0.0.1 "$port2" x >/dev/null &
holder=$!
wait_ready "$T_DIR/held" "$holder"
out=$(q "$port2" +tcp +short www.example.com A | sort | tr '\n' ' ')
check_eq "new client served while 40 connections are held (limit 8)" \
	"192.0.2.80 192.0.2.81 " "$out"
wait "$holder"
check_match "connections closed for the limit are counted" '^0 [1-9][0-9]*$' \
	"$(tcp_counter "$T_DIR/ctl2" closed_limit)"

done_testing
