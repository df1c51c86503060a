#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/outdated: a secondary never goes back to an older serial (RFC 1982) by
# a transfer it did not force, whatever the form of the answer. Shoal serves
# saved copies at serial 100; scripted primaries (tests/xfr/bad_primary.pl)
# are at serial 2, 101, or 2^31 + 100 (neither older nor newer: RFC 1982 3.2
# leaves it undefined). An IXFR answered by the whole zone, an IXFR answered
# by the SOA alone, an IXFR refused and its AXFR fallback: each older answer
# is logged "remote is outdated" (as Knot says it), the zone keeps serial 100
# and the next primary is asked, so one primary that lags does not hold the
# zone back. An AXFR fallback at the serial served changes nothing. Only
# `shoalctl retransfer` takes an older serial. These primaries answer the
# SOA query over UDP that starts a refresh with TC, so the transfer tells;
# one that answers it with its older serial is passed over without a
# transfer.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

PORT=$(free_port) || exit 99
BAD_UDP_SOA=tc start_bad_primary OLD 2
BAD_UDP_SOA=tc start_bad_primary NEW 101
BAD_UDP_SOA=tc start_bad_primary JUMP $((2147483648 + 100))
start_bad_primary OLDUDP 2

# zone NAME SERIAL PRIMARY...: a secondary zone saved at SERIAL (refresh an hour, retry ten minutes)
zone() {
	local name=$1 serial=$2 list="" p
	shift 2
	printf '$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1 hostmaster %s 3600 600 86400 60\n' "$name" "$serial" \
		>"$T_DIR/$name.zone"
	printf '@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.100\n' >>"$T_DIR/$name.zone"
	for p in "$@"; do list="$list${list:+, }\"127.0.0.1@$p NOKEY\""; done
	printf '  - name: %s\n    file: %s\n    primaries: [%s]\n' "$name" "$T_DIR/$name.zone" "$list"
}
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nxfr-message-timeout: 5\nzones:\n' \
		"$PORT" "$T_DIR"
	zone whole.test 100 "$OLD"            # IXFR answered with the whole zone at 2
	zone soa.test 100 "$OLD"              # IXFR answered with the SOA alone at 2
	zone refused.test 100 "$OLD"          # IXFR refused, AXFR at 2
	zone refused.jump.test 100 "$JUMP"    # IXFR refused, AXFR 2^31 ahead
	zone refused.same.test 2 "$OLD"       # IXFR refused, AXFR at the serial served
	zone lag.test 100 "$OLD" "$NEW"       # the first primary lags, the second is ahead
	zone soa.lag.test 100 "$OLD" "$NEW"
	zone udp.test 100 "$OLDUDP"           # the SOA over UDP at 2: no transfer
} >"$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
log() { cat "$T_DIR/shoald.log"; }
logged() { grep -qE "$1" "$T_DIR/shoald.log"; }

# outdated ZONE WHAT: ZONE's answer at serial 2 (WHAT) was not taken, and said so
outdated() {
	local line="zone $1\.: transfer from 127.0.0.1@$OLD failed: .*remote serial 2, remote is outdated"
	if wait_until 20 logged "$line"; then pass "$1: $2: remote is outdated"
	else fail "$1: $2: no line like: $line"; fi
	check_eq "$1: serial 100 still served" 100 "$(peer_serial "$PORT" "$1")"
}
outdated whole.test "the whole zone older"
outdated soa.test "the SOA alone older"
outdated refused.test "the AXFR fallback older"
check_match "... after an IXFR refused" "zone refused\.test\.: IXFR from 127.0.0.1@$OLD failed .*REFUSED.*: trying AXFR" "$(log)"

jump="zone refused\.jump\.test\.: transfer from 127.0.0.1@$JUMP failed: .*remote serial 2147483748 is 2\^31 from the zone's 100"
if wait_until 20 logged "$jump"; then pass "2^31 ahead: not taken, said so"; else fail "no line like: $jump"; fi
check_eq "refused.jump.test: serial 100 still served" 100 "$(peer_serial "$PORT" refused.jump.test)"

same() { logged "zone refused\.same\.test\.: serial 2 is current at 127.0.0.1@$OLD"; }
if wait_until 20 same; then pass "an AXFR fallback at the serial served: current"; else fail "refused.same.test: not found current"; fi
check_match "... and not published again" "^$" "$(grep "zone refused\.same\.test\.: serial 2 from" "$T_DIR/shoald.log")"

# several primaries: the one that lags is passed over, the next one gives the newer version
for z in lag.test soa.lag.test; do
	if wait_until 20 serial_is "$PORT" "$z" 101; then pass "$z: serial 101 from the second primary"
	else fail "$z: not at 101 (served: $(peer_serial "$PORT" "$z"))"; fi
	check_match "$z: the first primary is outdated" "zone $z\.: transfer from 127.0.0.1@$OLD failed: .*remote is outdated" "$(log)"
	check_match "$z: by the second" "zone $z\.: serial 101 from 127.0.0.1@$NEW by AXFR" "$(log)"
done

# the SOA over UDP at 2: passed over as outdated, without a transfer (issue 30)
udp="zone udp.test\\.: transfer from 127.0.0.1@$OLDUDP failed: .*remote serial 2, remote is outdated"
if wait_until 20 logged "$udp"; then pass "udp.test: the SOA over UDP older: remote is outdated"
else fail "udp.test: no line like: $udp"; fi
check_eq "udp.test: ... asked over UDP alone" "query udp soa" "$(grep "^[a-z]* udp " "$T_DIR/OLDUDP.out")"
check_eq "udp.test: serial 100 still served" 100 "$(peer_serial "$PORT" udp.test)"

status=$("$SHOALCTL" -s "$T_DIR/ctl" zone-status)
check_match "zone-status says why" "^whole.test. serial 100 .* last-error primary 127.0.0.1@$OLD: remote serial 2, remote is outdated" "$status"
check_match "stats: counted as failed" "\"failed\": [1-9]" \
	"$("$SHOALCTL" -s "$T_DIR/ctl" stats json | sed -n '/"xfr_in"/,$p')"

# shoalctl retransfer forces the whole zone, whatever its serial (as Knot's zone-retransfer)
check_match "shoalctl retransfer" "transfer of whole.test started" \
	"$("$SHOALCTL" -s "$T_DIR/ctl" retransfer whole.test 2>&1)"
if wait_until 20 serial_is "$PORT" whole.test 2; then pass "retransfer: the older serial taken"
else fail "retransfer: serial $(peer_serial "$PORT" whole.test)"; fi
check_match "... and said so" "zone whole\.test\.: serial 2 from 127.0.0.1@$OLD by AXFR, .*\(retransfer: not newer than serial 100\)" "$(log)"
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
