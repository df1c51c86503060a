#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_sockets: reuseport mode makes one UDP socket per worker per listen address, all on
# the same port; shared mode makes one per address.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONE="example.com=$EXAMPLES/example.com.zone"

# count_udp PID ADDR PORT: UDP sockets of PID bound to ADDR:PORT, per ss -lunp.
count_udp() {
	ss -Hlunp "sport = :$3" | grep -F "$2:$3" | grep -o "pid=$1,fd=[0-9]*" | wc -l
}

PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --listen "::1@$PORT" --threads 3 \
	--zone "$ZONE" || exit 99
check_eq "reuseport: 3 UDP sockets on 127.0.0.1:$PORT" 3 "$(count_udp "$SHOALD_PID" 127.0.0.1 "$PORT")"
check_eq "reuseport: 3 UDP sockets on [::1]:$PORT" 3 "$(count_udp "$SHOALD_PID" '[::1]' "$PORT")"
check_eq "reuseport: 3 TCP listeners on 127.0.0.1:$PORT" 3 \
	"$(ss -Hltnp "sport = :$PORT" | grep -F "127.0.0.1:$PORT" | grep -o "pid=$SHOALD_PID,fd=[0-9]*" | wc -l)"
check_match "answers over IPv6" "status: NOERROR" \
	"$("$DIG" @::1 -p "$PORT" +norec +time=2 +tries=1 www.example.com A)"
stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0" 0 $?

PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 3 --socket-mode shared \
	--zone "$ZONE" || exit 99
check_eq "shared: 1 UDP socket on 127.0.0.1:$PORT" 1 "$(count_udp "$SHOALD_PID" 127.0.0.1 "$PORT")"
check_match "shared: answers" "status: NOERROR" "$(q "$PORT" www.example.com A)"
stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0 (shared)" 0 $?

# shoald-ceiling: the query comes back with QR set and nothing else (benchmark responder)
PORT=$(free_port) || exit 99
SHOALD=$SHOALD_CEILING start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 || exit 99
out=$(q "$PORT" +noedns +noad www.example.com A)
check_match "ceiling: echoed with QR" "flags: qr;" "$out"
check_match "ceiling: no answer records" "ANSWER: 0," "$out"
check_match "ceiling: the question is the query's" "^;www.example.com.[[:space:]]+IN[[:space:]]+A$" "$out"
check_match "ceiling: the log warns" "benchmark only" "$(cat "$T_DIR/shoald.log")"
stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0 (ceiling)" 0 $?
# and the daemon itself has no echo: --ceiling is an unknown option, not in --help
check_match "shoald refuses --ceiling" "unknown option \"--ceiling\"" \
	"$("$SHOALD" --ceiling --check --listen "127.0.0.1@$PORT" 2>&1)"
check_eq "shoald --help does not name the ceiling" 0 "$("$SHOALD" --help | grep -ci ceiling)"

# udp-receive-buffer and udp-send-buffer: every UDP socket gets what was asked (the
# kernel shows it doubled, socket(7)); the default is 4 MiB each.
# udp_buffers PORT: the distinct "rbN tbN" of the UDP sockets on PORT, per ss -uam.
udp_buffers() {
	ss -Huamn "sport = :$1" | grep -o 'rb[0-9]*\|tb[0-9]*' | paste -d, - - | sort -u | tr '\n' ' '
}
PORT=$(free_port) || exit 99
cat >"$T_DIR/buffers.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 3
udp-receive-buffer: 1048576
udp-send-buffer: 524288
CONF
start_shoald "$PORT" -c "$T_DIR/buffers.conf" --zone "$ZONE" || exit 99
check_eq "udp-receive-buffer and udp-send-buffer on all 3 sockets" "rb2097152,tb1048576 " \
	"$(udp_buffers "$PORT")"
stop_pid "$SHOALD_PID"
PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --zone "$ZONE" || exit 99
check_eq "UDP buffers: 4 MiB each by default" "rb8388608,tb8388608 " "$(udp_buffers "$PORT")"
stop_pid "$SHOALD_PID"

# A UDP receiver blocks in recvmmsg: the socket's file is made blocking. Another
# process that shares the file may set O_NONBLOCK again (an older shoald taking
# over polls it with libuv, which does): the receiver must then wait for
# datagrams, not spin on EAGAIN. CPU ticks over 2 s: ~0 idle, a spin takes them all.
# udp_fd PID PORT: PID's descriptor number of its UDP socket on PORT.
udp_fd() {
	local inode f
	inode=$(awk -v p=":$(printf '%04X' "$2")" 'NR > 1 && substr($2, length($2) - 4) == p { print $10; exit }' /proc/net/udp)
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f")" = "socket:[$inode]" ] && { basename "$f"; return; }
	done
}
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 --zone "$ZONE" || exit 99
"$SHOAL_BUILDDIR/tests/integration/setnonblock" "$SHOALD_PID" "$(udp_fd "$SHOALD_PID" "$PORT")"
case $? in
0)
	check_match "a non-blocking socket still answers" "status: NOERROR" "$(q "$PORT" www.example.com A)"
	t0=$(awk '{ print $14 + $15 }' /proc/"$SHOALD_PID"/stat)
	sleep 2
	ticks=$(($(awk '{ print $14 + $15 }' /proc/"$SHOALD_PID"/stat) - t0))
	check_eq "then waits without spinning (CPU ticks over 2 s below 30: $ticks)" yes \
		"$([ "$ticks" -lt 30 ] && echo yes || echo no)"
	check_match "and answers again" "status: NOERROR" "$(q "$PORT" www.example.com A)"
	;;
77) echo "SKIP: cannot set another process's socket non-blocking here" ;;
*) fail "setnonblock failed" ;;
esac
stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0 (non-blocking socket)" 0 $?
printf 'listen: 127.0.0.1@%s\nudp-receive-buffer: 1000\n' "$PORT" >"$T_DIR/small.conf"
out=$("$SHOALD" -c "$T_DIR/small.conf" --check 2>&1)
check_eq "udp-receive-buffer below 65536 stops start-up" 1 $?
check_match "and says which line" "small.conf:2.*udp-receive-buffer" "$out"
done_testing
