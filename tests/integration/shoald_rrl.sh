#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_rrl: response rate limiting against the real daemon. A flood of
# 1000 queries in about a second from one address for one name gets
# rate-limit full answers per clock second and about every slip-th of the
# rest truncated, while a second network asking the same name at 5 q/s gets
# every answer; the same flood with a valid server cookie, or from an exempt
# network, is not limited (the control runs: the same load, the protection
# not applying); TCP is never limited; a limited class is logged.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

FLOOD="perl $SHOAL_SRCDIR/tests/integration/rrl_flood.pl"
TCPCLIENT=$SHOAL_BUILDDIR/tests/integration/tcpclient
ZONE="example.com=$EXAMPLES/example.com.zone"
RATE=10
SLIP=2
COUNT=1000

# field NAME LINE: the number after NAME in a rrl_flood.pl report line
field() { printf '%s\n' "$2" | sed -n "s/.*\\b$1 \\([0-9]*\\).*/\\1/p"; }
# stat NAME: a counter of the totals in shoalctl stats
stat() {
	"$SHOALCTL" -s "$T_DIR/ctl" stats json | sed -n "s/^ \"total\": .*\"$1\": \\([0-9]*\\).*/\\1/p"
}

port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--rate-limit $RATE --rate-limit-slip $SLIP --rate-limit-exempt 127.0.2.0/24 \
	--control "$T_DIR/ctl" || exit 1

# 1. The flood from 127.0.0.1, paced over 0.9 s, and 5 q/s from 127.0.1.2
# (another /24, so another class) meanwhile.
#
# The arithmetic: a class may have RATE answers in each second of the
# server's clock. A flood of 0.9 s touches one or two such seconds (three
# when the machine is slow enough to stretch it past a second), so it gets
# RATE x (seconds touched) full answers, at least RATE; the seconds touched
# are at most those between the first query sent and the last answer read.
# Every answer past the rate counts towards the worker's slip count, and
# each SLIP-th is sent truncated: (COUNT - full) / SLIP of them, one more or
# less depending on where that count stood before. The others are dropped.
# The answers wait for the flood to finish reading, so a slow machine loses
# none on loopback; the counters must agree with what the client saw.
out=$($FLOOD "$port" www.example.com $COUNT 0.9 127.0.0.1 - 127.0.1.2)
echo "# flood: $out"
full=$(field full "$out")
tc=$(field tc "$out")
seconds=$(($(field last_second "$out") - $(field first_second "$out") + 1))
if [ "$full" -ge $RATE ] && [ "$full" -le $((RATE * seconds)) ]; then
	pass "$full full answers: $RATE per second over $seconds second(s) at most"
else
	fail "$full full answers, expected $RATE to $((RATE * seconds)) ($seconds second(s))"
fi
over=$((COUNT - full))
if [ "$tc" -ge $((over / SLIP - 1)) ] && [ "$tc" -le $((over / SLIP + 1)) ]; then
	pass "$tc truncated answers: every ${SLIP}nd of the $over over the limit"
else
	fail "$tc truncated answers, expected $((over / SLIP)) +-1 of $over over the limit"
fi
check_eq "nothing but full and truncated answers" 0 "$(field other "$out")"
check_eq "shoalctl stats: rrl_slipped counts the truncated answers" "$tc" "$(stat rrl_slipped)"
check_eq "shoalctl stats: rrl_dropped counts the rest" $((over - tc)) "$(stat rrl_dropped)"
check_eq "the rest were not answered" $((over - tc)) "$(field lost "$out")"
sent2=$(field second_sent "$out")
check_eq "another network at 5 q/s gets all its $sent2 answers" "$sent2" \
	"$(field second_full "$out")"
check_match "the second network sent about 5 queries" '^[4-7]$' "$sent2"
check_match "the limited class is logged" \
	'notice: rate limit: 127\.0\.0\.0/24 answers for www\.example\.com\. .*limited' \
	"$(cat "$T_DIR/shoald.log")"

# 2. The same flood with a valid server cookie (RFC 7873: the client has
# shown it receives at its address) is not limited. The cookie comes from
# a first query from the same address.
cookie=$(q "$port" -b 127.0.0.1 +cookie=0102030405060708 www.example.com A |
	sed -n 's/^; COOKIE: \([0-9a-f]*\).*/\1/p')
check_match "a server cookie to flood with" '^0102030405060708[0-9a-f]{32}$' "$cookie"
dropped=$(stat rrl_dropped)
out=$($FLOOD "$port" www.example.com $COUNT 0.9 127.0.0.1 "$cookie")
echo "# flood with a valid cookie: $out"
check_eq "with a valid server cookie all $COUNT answers are full" $COUNT "$(field full "$out")"
check_eq "and none was dropped" "$dropped" "$(stat rrl_dropped)"

# 3. A made-up cookie is no proof: that flood is limited again.
out=$($FLOOD "$port" www.example.com $COUNT 0.9 127.0.0.1 \
	"010203040506070801000000000000000000000000000000")
echo "# flood with a wrong cookie: $out"
full=$(field full "$out")
if [ "$full" -lt $((RATE * 4)) ]; then
	pass "a wrong server cookie is limited ($full full answers)"
else
	fail "a wrong server cookie is not limited: $full full answers"
fi

# 4. An exempt network is not limited.
out=$($FLOOD "$port" www.example.com $COUNT 0.9 127.0.2.9)
echo "# flood from an exempt network: $out"
check_eq "rate-limit-exempt: all $COUNT answers are full" $COUNT "$(field full "$out")"

# 5. TCP is never limited: 200 queries on one connection, all answered.
res=$("$TCPCLIENT" -n 200 127.0.0.1 "$port" www.example.com A 2>&1)
check_eq "TCP: 200 queries on one connection all answered ($res)" 0 $?

stop_pid "$SHOALD_PID"
check_eq "shoald stops with SIGTERM, exit 0" 0 $?
done_testing
