#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/ixfr_read_wait: a TCP stream that waits on another thread is woken, not polled, and the
# worker serves its other connections meanwhile (issue 31). An IXFR out whose changes lie in the
# journal file is read by the journal reader, not on the worker's loop: with the read held
# (SHOAL_TEST_JOURNAL_READ_HOLD, as a slow disk would), TCP queries to the same worker (threads:
# 1) are answered, an UPDATE with queries pipelined behind it on one connection gets every
# answer in order, and the worker's thread sleeps (a poll every 2 ms woke it 500 times a
# second); released, the IXFR sends the changes as before. Past 64 reads queued, SERVFAIL.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

TCPCLIENT=$SHOAL_BUILDDIR/tests/integration/tcpclient
PORT=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# version SERIAL: p.test at SERIAL, with one host per version up to it
version() { hosts_version p.test "$1"; }
ixfr() { "$DIG" @127.0.0.1 -p "$PORT" +time=30 +tries=1 +noall +answer p.test "IXFR=$1" 2>&1; }
shape() { ixfr_shape "$1"; }
# switches: the voluntary context switches of the worker's loop thread (shoald-tcp-0)
switches() {
	local t
	for t in /proc/"$SHOALD_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = shoald-tcp-0 ] &&
			awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status"
	done
}
version 1
mkdir -p "$T_DIR/state"
chmod 700 "$T_DIR/state"
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
transfers-out: 100
tcp-max-per-address: 100
control: $T_DIR/ctl
state-dir: $T_DIR/state
zones:
  - name: p.test
    file: p.test.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
    allow-update:
      - address: 127.0.0.1
CONF
HOLD=$T_DIR/hold
SHOAL_TEST_JOURNAL_READ_HOLD=$HOLD start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
for s in 2 3 4; do
	version "$s"
	ctl reload p.test >/dev/null
done
check_eq "the primary serves serial 4" 4 "$(peer_serial "$PORT" p.test)"
check_eq "the journal file is there" yes "$([ -s "$T_DIR/state/journal/p.test.journal" ] && echo yes)"
free=$(ixfr 1)
check_eq "IXFR from 1, the read not held: the changes to 4" 4/4 "$(shape "$free")"

touch "$HOLD"
ixfr 1 >"$T_DIR/held.out" &
XFR=$!
wait_until 20 test -e "$HOLD.held" || fail "the IXFR's read was not held"
check_eq "while the read waits, a TCP query to the same worker is answered" 4 \
	"$(q "$PORT" +tcp +short p.test SOA | awk '{ print $3 }')"
check_match "an UPDATE and 3 queries pipelined behind it on one connection: all answered" \
	"answers 4 in_order 4 noerror 4 lost 0" \
	"$("$TCPCLIENT" -w 10 -u p.test -n 3 127.0.0.1 "$PORT" pipe.p.test TXT)"
check_eq "... the update is served" '"pipelined"' "$(q "$PORT" +short pipe.p.test TXT)"
# the worker is idle now but for the stream waiting on the reader: it sleeps
before=$(switches)
sleep 1
after=$(switches)
check_eq "the worker's thread is not woken while the IXFR waits (wake-ups in 1 s < 50)" yes \
	"$([ -n "$before" ] && [ $((after - before)) -lt 50 ] && echo yes || echo "no: $before..$after")"
check_eq "the IXFR is still waiting" yes "$(kill -0 $XFR 2>/dev/null && echo yes)"
rm -f "$HOLD"
wait $XFR
check_eq "released: the IXFR sends the changes, as when not held" "$free" "$(cat "$T_DIR/held.out")"
check_match "... logged as done" "IXFR p.test. to 127.0.0.1@[0-9]+: serial 4, " \
	"$(cat "$T_DIR/shoald.log")"

# the reader's queue is bounded (TRANSFER_JREAD_MAX, 64): one read held, 64 queued, the next
# is answered SERVFAIL, logged; released, the others get their changes
rm -f "$HOLD.held"
touch "$HOLD"
ixfr 1 >"$T_DIR/q0.out" &
XFRS=$!
wait_until 20 test -e "$HOLD.held" || fail "the first IXFR's read was not held"
for i in $(seq 1 65); do
	ixfr 1 >"$T_DIR/q$i.out" &
	XFRS="$XFRS $!"
done
wait_until 30 grep -q "journal reads queued: SERVFAIL" "$T_DIR/shoald.log" ||
	fail "no IXFR refused past the queue's bound"
rm -f "$HOLD"
# shellcheck disable=SC2086
wait $XFRS
whole=0
for i in $(seq 0 65); do
	[ "$(shape "$(cat "$T_DIR/q$i.out")")" = 4/5 ] && whole=$((whole + 1))
done
check_eq "65 IXFRs got their changes (to serial 5, the update's), one past the bound did not" 65 "$whole"
check_eq "... it failed (SERVFAIL)" 1 "$(cat "$T_DIR"/q*.out | grep -c 'Transfer failed')"
check_eq "... logged once" 1 "$(grep -c "IXFR p.test. from 127.0.0.1@[0-9]*: 64 journal reads queued: SERVFAIL" "$T_DIR/shoald.log")"

stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
