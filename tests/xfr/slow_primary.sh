#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/slow_primary: one slow primary holds one transfer slot, never the others (issue 30). A
# primary that sends its answer one octet a second (tests/xfr/bad_primary.pl's trickle) keeps
# its transfer going while octets arrive, past xfr-message-timeout, until xfr-timeout ends it;
# meanwhile a zone listed after it, whose primary answers at once, is transferred. One that
# stops sending (stall) is cut off after xfr-message-timeout without an octet. Before issue
# 30 one thread took the zones in turn: the second zone waited for the first to give up.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

start_bad_primary SLOW
start_bad_primary FAST
start_bad_primary STALL
PORT=$(free_port) || exit 99
# the slow zone first: a single transfer thread takes it first
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
xfr-message-timeout: 3
xfr-timeout: 12
zones:
  - name: trickle.test
    primaries: [ 127.0.0.1@$SLOW NOKEY ]
  - name: stall.test
    primaries: [ 127.0.0.1@$STALL NOKEY ]
  - name: fast.test
    primaries: [ 127.0.0.1@$FAST NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
# in_flight PORT: a transfer connection to the primary on PORT is open
in_flight() { ss -Htn state established "( dport = :$1 )" | grep -q .; }
logged() { grep -qE "$1" "$T_DIR/shoald.log"; }

if wait_until 60 in_flight "$SLOW"; then pass "trickle.test's transfer started"
else fail "trickle.test's transfer started: [$(cat "$T_DIR/SLOW.out")]"; fi
fast() { [ "$(peer_serial "$PORT" fast.test)" = 2 ]; }
if wait_until 60 fast; then pass "fast.test transferred"
else fail "fast.test transferred: [$("$SHOALCTL" -s "$T_DIR/ctl" zone-status)]"; fi
if in_flight "$SLOW"; then pass "... while trickle.test's transfer still runs"
else fail "... while trickle.test's transfer still runs: it had ended first"; fi

# stall: its first message, then nothing: cut off once xfr-message-timeout passes without an octet
stall_line="zone stall.test\\.: transfer from 127.0.0.1@$STALL failed: .*no octet within 3 s \(xfr-message-timeout\)"
if wait_until 60 logged "$stall_line"; then pass "stall.test: cut off after 3 s without an octet"
else fail "stall.test: no line like: $stall_line"; fi
# trickle: an octet a second keeps it going, until xfr-timeout
if in_flight "$SLOW"; then pass "trickle.test's transfer goes on past xfr-message-timeout"
else fail "trickle.test's transfer goes on past xfr-message-timeout"; fi
trickle_line="zone trickle.test\\.: transfer from 127.0.0.1@$SLOW failed: .*took over 12 s \(xfr-timeout\)"
if wait_until 60 logged "$trickle_line"; then pass "trickle.test: cut off at xfr-timeout"
else fail "trickle.test: no line like: $trickle_line"; fi
check_match "no transfer failed for want of a message within xfr-message-timeout" "^$" \
	"$(grep "trickle.test.*xfr-message-timeout" "$T_DIR/shoald.log")"
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
