#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Two shoald on one port (SO_REUSEPORT): stopping one loses no connection the
# kernel had already accepted for it, with net.ipv4.tcp_migrate_req=1 (Linux
# 5.14+: a closing listener's queued connections move to the other listeners
# of the group instead of being reset). The sysctl is set and restored here;
# without the right to set it the test is skipped (exit 77).
#
# To have connections sit in a daemon's accept queue when its listeners close,
# the daemon is frozen with SIGSTOP while 200 clients connect and write one
# query each; about half of them hash to its listeners. Then:
#   a. SIGTERM + SIGCONT: a graceful stop; every query is answered, by the
#      stopping daemon (accepted before it closed) or by the other (migrated);
#   b. SIGKILL: the daemon never accepts; every query is answered by the other;
#   c. control: as b with tcp_migrate_req=0; connections are lost, which shows
#      the test can see a loss.
#
# The sysctl is one for the whole network namespace, and make check in every
# build folder on the machine runs this test: two runs at once switch it under
# each other (seen: a control run that lost nothing because another run had
# just set it to 1). Runs take turns on a lock file; flock -o keeps the lock
# in flock itself, so no daemon started here holds it past the run.
LOCK=/tmp/shoal-tcp_migrate_req.lock
if [ -z "${SHOAL_MIGRATE_LOCKED:-}" ]; then
	export SHOAL_MIGRATE_LOCKED=1
	flock -o -w 600 -E 75 "$LOCK" "$BASH" "$0" "$@"
	rc=$?
	[ "$rc" -eq 75 ] && { echo "tcp_migrate: another run held $LOCK for 600 s"; rc=99; }
	exit "$rc"
fi
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

TCPCLIENT=$SHOAL_BUILDDIR/tests/integration/tcpclient
SYSCTL=net.ipv4.tcp_migrate_req
CLIENTS=200

old=$(sysctl -n "$SYSCTL" 2>/dev/null)
if [ -z "$old" ] || ! sysctl -qw "$SYSCTL=1" 2>/dev/null; then
	echo "SKIP: cannot set $SYSCTL (needs Linux 5.14+ and CAP_NET_ADMIN in this network namespace)"
	exit 77
fi
migrate_cleanup() {
	for p in $T_PIDS; do
		kill -CONT "$p" 2>/dev/null # a frozen daemon would not see SIGTERM
	done
	sysctl -qw "$SYSCTL=$old"
	t_cleanup
}
trap migrate_cleanup EXIT

port=$(free_port)
zone="example.com=$EXAMPLES/example.com.zone"
# every client connection comes from 127.0.0.1: no limit per address here
start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --nsid B --zone "$zone" \
	--tcp-max-per-address 0 || exit 1
B=$SHOALD_PID

# a_answers: daemon A (NSID A) answers on the shared port.
a_answers() {
	"$DIG" @127.0.0.1 -p "$port" +nsid +time=1 +tries=1 www.example.com A 2>/dev/null |
		grep -q 'NSID:.*("A/'
}

# run_case SIGNAL SYSCTL_VALUE: start daemon A beside B, freeze it, connect the
# clients, send SIGNAL to A (and SIGCONT); sets OUT to the client's report.
run_case() {
	# A joins B's port on purpose (shoald refuses a busy port otherwise)
	start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --nsid A --zone "$zone" \
		--share-port --tcp-max-per-address 0 || exit 1
	local a=$SHOALD_PID
	# B answered start_shoald's probe; wait until A answers too (NSID says who).
	# Each case rests on these; one not met is said, not left to show as a loss.
	wait_until 10 a_answers || fail "$1: daemon A answers beside B"
	if [ "$(ss -Hltnp "sport = :$port" | grep -c "pid=$a,")" -ne 2 ]; then
		fail "$1: daemon A has its two listeners on the shared port"
	fi
	kill -STOP "$a"
	rm -f "$T_DIR/ready"
	"$TCPCLIENT" -N -w 10 -c $CLIENTS -r "$T_DIR/ready" 127.0.0.1 "$port" www.example.com A \
		>"$T_DIR/client.out" &
	local client=$!
	wait_ready "$T_DIR/ready" "$client" || fail "$1: every connection open before the signal"
	queued=$(ss -Hltn "sport = :$port" | awk '{ s += $2 } END { print s + 0 }')
	echo "# connections waiting in accept queues before the stop: $queued"
	kill "-$1" "$a"
	kill -CONT "$a" 2>/dev/null
	wait "$client"
	OUT=$(cat "$T_DIR/client.out")
	echo "# $1: $OUT" | tr '\n' ' '
	echo
	wait "$a" 2>/dev/null
	A_STATUS=$?
	# the sysctl is the whole namespace's: a process that does not take the
	# lock could switch it under the case, and the result would mean nothing
	[ "$(sysctl -n "$SYSCTL")" = "$2" ] ||
		fail "$1: $SYSCTL was $2 through the case (another process changed it)"
}

run_case TERM 1
check_match "graceful stop: all $CLIENTS connections answered" \
	"answers $CLIENTS in_order $CLIENTS noerror $CLIENTS lost 0" "$OUT"
check_eq "daemon A exits 0 after SIGTERM" 0 "$A_STATUS"

run_case KILL 1
check_match "A killed: all $CLIENTS connections answered" \
	"answers $CLIENTS in_order $CLIENTS noerror $CLIENTS lost 0" "$OUT"
check_match "A killed: B answered every one, queued ones migrated" "^nsid B/[01] " "$OUT"
check_eq "A killed: no answer came from A" "" "$(printf '%s\n' "$OUT" | grep '^nsid A/')"

sysctl -qw "$SYSCTL=0"
run_case KILL 0
lost=$(printf '%s\n' "$OUT" | sed -n 's/.* lost \([0-9]*\)$/\1/p')
if [ "${lost:-0}" -gt 0 ]; then
	pass "control, $SYSCTL=0: $lost of $CLIENTS connections lost (the test sees losses)"
else
	fail "control, $SYSCTL=0: expected lost connections, got [$OUT]"
fi

kill -0 "$B" 2>/dev/null && pass "daemon B still running" || fail "daemon B died"
# a failure keeps what the daemons said: the next one to look has more than a count
[ "$T_FAILED" -eq 0 ] || tail -n 60 "$T_DIR/shoald.log"
done_testing
