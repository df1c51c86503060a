#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/faults: Shoal as a secondary of a primary that breaks the protocol
# (tests/xfr/bad_primary.pl): a stream cut before its final SOA, a final
# SOA with another serial, a record outside the zone, a stream over
# max-zone-size, a primary that stops after the first message
# (xfr-message-timeout without an octet), one that sends an octet a second
# (it keeps going until xfr-timeout: issue 30), one whose messages all carry
# another ID (ignored as not answers, RFC 5452 9.1, so the wait runs out and
# says why). Each zone has a saved version (serial
# 1): each failure leaves it served, logs one clear line and shows in
# zone-status, and shoald answers throughout. A message of another ID
# before the answer is passed over: that zone is transferred.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

start_bad_primary BAD
PORT=$(free_port) || exit 99

ZONES="truncated wrongsoa outside big stall trickle wrongid"
{
	cat <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
max-zone-size: 2000
xfr-message-timeout: 2
xfr-timeout: 6
zones:
  - name: good.test
    file: $T_DIR/good.test.zone
CONF
	for z in $ZONES; do
		printf '$ORIGIN %s.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.1\n' \
			"$z" >"$T_DIR/$z.test.zone"
		printf '  - name: %s.test\n    file: %s\n    primaries: ["127.0.0.1@%s NOKEY"]\n' \
			"$z" "$T_DIR/$z.test.zone" "$BAD"
	done
	printf '  - name: stray.test\n    primaries: ["127.0.0.1@%s NOKEY"]\n' "$BAD"
} >"$T_DIR/shoald.conf"
sed 's/truncated/good/g' "$T_DIR/truncated.test.zone" >"$T_DIR/good.test.zone"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

# expect ZONE PATTERN: the failure of ZONE is logged as PATTERN
expect() {
	local z=$1 pattern=$2
	logged() { grep -qE "zone $z\.test\.: transfer from 127.0.0.1@$BAD failed: .*$pattern" "$T_DIR/shoald.log"; }
	if wait_until 40 logged; then pass "$z: logged ($pattern)"; else fail "$z: no line like: $pattern"; fi
	check_eq "$z: serial 1 still served" 1 "$(peer_serial "$PORT" "$z.test")"
	check_eq "shoald answers (after $z)" 192.0.2.1 "$(q "$PORT" +short www.good.test A)"
}
expect truncated "the transfer stopped before its end|ended before the final SOA"
expect wrongsoa "the final SOA \(serial 3\) differs from the first \(serial 2\)"
expect outside "www.other.test. A: outside the zone"
expect big "more than 2000 octets \(max-zone-size\)"
expect stall "no octet within 2 s \(xfr-message-timeout\)"
expect trickle "the transfer took over 6 s \(xfr-timeout\)"
expect wrongid "the transfer stopped before its end \(1 messages ignored: another ID or question\)"
stray() { [ "$(peer_serial "$PORT" stray.test)" = 2 ]; }
if wait_until 20 stray; then pass "stray: a message of another ID passed over, the zone transferred"
else fail "stray: not transferred: $(grep stray.test "$T_DIR/shoald.log")"; fi
check_match "IXFR failed: AXFR tried next" "zone truncated\.test\.: IXFR from 127.0.0.1@$BAD failed .*: trying AXFR" \
	"$(cat "$T_DIR/shoald.log")"
status=$("$SHOALCTL" -s "$T_DIR/ctl" zone-status)
for z in $ZONES; do
	check_match "zone-status: $z's last error" "^$z.test. serial 1 .* last-error primary 127.0.0.1@$BAD" "$status"
done
check_match "stats: xfr_in failed counted" "\"failed\": [1-9]" \
	"$("$SHOALCTL" -s "$T_DIR/ctl" stats json | sed -n '/"xfr_in"/,$p')"
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
