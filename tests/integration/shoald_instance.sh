#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_instance: a second shoald on a port the first one serves fails to
# start, naming the first (even with another control path), and the first
# keeps all the traffic, as the NSID of every answer shows. The control run:
# with the check off (--share-port) the second one joins the port's
# SO_REUSEPORT group and takes part of the queries.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

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

# The control run, with the check off (--share-port, as a takeover would
# join): the second shoald joins the first one's SO_REUSEPORT group and
# answers part of the queries, from its own data. This is what happened to
# every second start before the check.
"$SHOALD" --listen "127.0.0.1@$PORT" --threads 2 --nsid second --share-port \
	--zone "$ZONE" >>"$T_DIR/second.log" 2>&1 &
SECOND=$!
T_PIDS="$T_PIDS $SECOND"
for _ in $(seq 1 100); do # until the second one answers a query of its own
	q "$PORT" +nsid +time=1 www.example.com A 2>/dev/null | grep -q '"second/' && break
	sleep 0.05
done
seen=$(nsids "$PORT")
taken=$(grep -c '"second/[01]"' <<<"$seen")
echo "control run: $taken of $QUERIES answers from the second shoald"
if [ "$taken" -gt 0 ] && [ "$taken" -lt "$QUERIES" ]; then
	pass "control: with --share-port the second one takes part of the queries"
else
	fail "control: the second shoald answered $taken of $QUERIES"
fi
stop_pid "$SECOND"

# the first one gone, its lock goes with it: the port may be served again
stop_pid "$FIRST"
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 --nsid second --zone "$ZONE" ||
	fail "a shoald after the first one stopped does not start"
check_match "and it answers" '"second/0"' "$(q "$PORT" +nsid www.example.com A)"
stop_pid "$SHOALD_PID"
done_testing
