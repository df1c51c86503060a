#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_reconfig_secondary: the scheduler and its transfer threads live while there are
# secondary zones. A reconfig that removes the last one stops them (they no longer wake twice
# a second for nothing); one that adds a secondary zone again starts others, which transfer
# the zone, counting on from the first ones' counters (they only grow). NOTIFYs sent
# meanwhile are answered, never handed to a thread that is gone.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if ! command -v perl >/dev/null; then
	echo "SKIP: perl is needed for the primary"
	exit 77
fi
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# xfr_threads: how many scheduler and transfer threads shoald runs (named so by the threads)
xfr_threads() { cat /proc/"$SHOALD_PID"/task/*/comm 2>/dev/null | grep -cE '^shoald-(sched|xfr-[0-9]+)$'; }
xfr_threads_are() { [ "$(xfr_threads)" = "$1" ]; }
# answers NAME ADDR: www.NAME has address ADDR
answers() { [ "$(q "$PORT" +short "www.$1" A)" = "$2" ]; }
# axfr_in: the zones received whole, from the counters
axfr_in() { json_value "$(ctl stats json | grep -o '"xfr_in": {[^}]*}')" axfr | tr -d ' '; }

PORT=$(free_port) || exit 99
PORTB=$(free_port) || exit 99
# the primary: any zone whole (www A 192.0.2.2), each request printed
perl "$SHOAL_SRCDIR/tests/xfr/bad_primary.pl" "$PORTB" >"$T_DIR/primary.out" 2>&1 &
T_PIDS="$T_PIDS $!"
wait_until 10 grep -q ready "$T_DIR/primary.out" || {
	echo "bad_primary.pl did not start"
	exit 99
}
cat >"$T_DIR/p.zone" <<ZONEFILE
\$ORIGIN p.test.
\$TTL 300
@    IN SOA ns1 hostmaster 1 3600 600 86400 300
@    IN NS  ns1
ns1  IN A   192.0.2.1
www  IN A   192.0.2.9
ZONEFILE
# conf SECONDARY...: p.test (a primary zone) and the secondary zones named
conf() {
	{
		cat <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
zones:
  - name: p.test
    file: p.zone
CONF
		for z in "$@"; do
			printf '  - name: %s\n    primaries: [ 127.0.0.1@%s NOKEY ]\n' "$z" "$PORTB"
		done
	} >"$T_DIR/shoald.conf.new"
	mv "$T_DIR/shoald.conf.new" "$T_DIR/shoald.conf"
}
conf k.test
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
if wait_until 60 answers k.test 192.0.2.2; then
	pass "k.test transferred from its primary"
else
	fail "k.test transferred: [$(ctl zone-status)]"
fi
check_eq "the scheduler and one transfer thread run" 2 "$(xfr_threads)"

# --- every secondary zone removed: the thread stops ---
axfr_before=$(axfr_in)
check_eq "k.test counted as received whole" 1 "$axfr_before"
conf
out=$(ctl reconfig)
check_eq "reconfig removing k.test exits 0" 0 $?
check_match "it removes k.test" "removed: k\.test\." "$out"
if wait_until 30 xfr_threads_are 0; then
	pass "the transfer threads stopped with the last secondary zone"
else
	fail "the transfer threads stopped: $(xfr_threads) still run"
fi
check_match "the log says so" "no secondary or signing zone left: the zone-event threads stopped" \
	"$(cat "$T_DIR/shoald.log")"
# a NOTIFY for the zone gone: NOTAUTH, and nothing handed on
check_match "a NOTIFY for k.test is answered NOTAUTH" "status: NOTAUTH" \
	"$(q "$PORT" +opcode=notify k.test SOA)"
check_eq "p.test is still served" 192.0.2.9 "$(q "$PORT" +short www.p.test A)"

# --- a secondary zone added back: a thread starts and transfers it ---
conf k2.test
out=$(ctl reconfig)
check_eq "reconfig adding k2.test exits 0" 0 $?
if wait_until 60 answers k2.test 192.0.2.2; then
	pass "k2.test, added back, transferred"
else
	fail "k2.test, added back, transferred: [$(ctl zone-status)]"
fi
check_eq "the scheduler and one transfer thread run again" 2 "$(xfr_threads)"
check_eq "its transfer counted on from the first thread's" $((axfr_before + 1)) "$(axfr_in)"
check_match "the log says they started" "the transfer threads started for 1 secondary zone" \
	"$(cat "$T_DIR/shoald.log")"
# the new scheduler takes NOTIFY: k2.test's primary asked again (its SOA over UDP first)
before=$(grep -cE "^(request|query) k2 " "$T_DIR/primary.out")
q "$PORT" +opcode=notify k2.test SOA >/dev/null
more_requests() { [ "$(grep -cE "^(request|query) k2 " "$T_DIR/primary.out")" -gt "$before" ]; }
if wait_until 60 more_requests; then
	pass "a NOTIFY for k2.test reaches the new thread"
else
	fail "a NOTIFY for k2.test reaches the new thread: [$(cat "$T_DIR/primary.out")]"
fi

stop_within "$SHOALD_PID"
check_eq "shoald exits 0 (no sanitizer report)" 0 $?
done_testing
