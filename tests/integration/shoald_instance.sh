#!/bin/bash
# shoald_instance: a second shoald on a port the first one serves fails to
# start, naming the first (even with another control path), and the first
# keeps all the traffic, as the NSID of every answer shows. The control run:
# a socket of the same user that joins the port's SO_REUSEPORT group takes
# part of the queries, which is what a second shoald did before the check.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

BINDTEST=$SHOAL_BUILDDIR/tests/integration/bindtest
ZONE="example.com=$EXAMPLES/example.com.zone"
QUERIES=24

# nsids PORT: the NSID of each of $QUERIES answers, one a line ("none" when
# no answer came); each dig has a source port of its own, so the kernel's
# hash spreads them over every socket in the port's group.
nsids() {
	local i out
	for i in $(seq 1 $QUERIES); do
		out=$(q "$1" +nsid +time=1 www.example.com A 2>&1)
		printf '%s\n' "$out" | grep -oE '\("[^"]*"\)' | head -1 | grep . || echo none
	done
}

PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --nsid first \
	--control "$T_DIR/first.ctl" --zone "$ZONE" || exit 99
FIRST=$SHOALD_PID

# the same address and port, another control path and NSID
out=$(timeout 20 "$SHOALD" --listen "127.0.0.1@$PORT" --threads 2 --nsid second \
	--control "$T_DIR/second.ctl" --zone "$ZONE" 2>&1)
check_eq "a second shoald on the port exits 1" 1 $?
check_match "and names the first one" "127.0.0.1@$PORT: another shoald, pid $FIRST \(shoald\)" "$out"
check_eq "it made no control socket" no "$([ -e "$T_DIR/second.ctl" ] && echo yes || echo no)"
# the wildcard address overlaps the first one's: another lock, the same port
out=$(timeout 20 "$SHOALD" --listen "0.0.0.0@$PORT" --threads 1 --zone "$ZONE" 2>&1)
check_eq "a second shoald on 0.0.0.0 of the port exits 1" 1 $?
check_match "naming the first one's socket" \
	"0.0.0.0@$PORT: the UDP port is taken by a socket on 127.0.0.1 of pid $FIRST \(shoald\)" "$out"

seen=$(nsids "$PORT")
check_eq "all $QUERIES answers come from the first shoald" \
	"$QUERIES" "$(grep -c '"first/[01]"' <<<"$seen")"
check_eq "the first one is still serving on both threads" 2 \
	"$(grep -oE 'first/[01]' <<<"$seen" | sort -u | wc -l)"

# The control run: what the check prevents. A socket of the same user
# that sets SO_REUSEPORT joins the group (bindtest, holding it while the
# queries run, then told to stop) and the kernel hands it part of the datagrams, unanswered.
"$BINDTEST" 127.0.0.1 "$PORT" reuseport 120 >"$T_DIR/joined.out" 2>&1 &
JOINED=$!
T_PIDS="$T_PIDS $JOINED"
wait_line() { # wait_line FILE TEXT: up to 10 s
	local i
	for i in $(seq 1 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
wait_line "$T_DIR/joined.out" OK || fail "bindtest did not join the port"
seen=$(nsids "$PORT")
kill -TERM "$JOINED"
wait "$JOINED"
taken=$(sed -n 's/^received //p' "$T_DIR/joined.out")
lost=$(grep -c '^none$' <<<"$seen")
echo "control run: $lost of $QUERIES queries unanswered, $taken taken by the joined socket"
if [ "${taken:-0}" -gt 0 ] && [ "$lost" -gt 0 ]; then
	pass "control: a socket that joins the port takes queries away ($taken of $QUERIES)"
else
	fail "control: the joined socket took $taken, $lost unanswered"
fi

# the first one gone, its lock goes with it: the port may be served again
stop_pid "$FIRST"
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 --nsid second --zone "$ZONE" ||
	fail "a shoald after the first one stopped does not start"
check_match "and it answers" '"second/0"' "$(q "$PORT" +nsid www.example.com A)"
stop_pid "$SHOALD_PID"
done_testing
