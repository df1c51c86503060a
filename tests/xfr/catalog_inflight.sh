#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/catalog_inflight: a catalog member removed while its first transfer is in flight. The
# member's primary sends the zone one octet a second (tests/xfr/bad_primary.pl's trickle);
# the catalog drops the member meanwhile: the transfer is given up within a tick, the member
# answers REFUSED, and nothing of it is saved (no file, no journal), where a transfer left
# running would have published and saved a zone no catalog lists.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

start_bad_primary SLOW
PORT=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
in_flight() { ss -Htn state established "( dport = :$1 )" | grep -q .; }
logged() { grep -qE "$1" "$T_DIR/shoald.log"; }
refused() { q "$PORT" trickle.test SOA | grep -q "status: REFUSED"; }
# catalog SERIAL RECORDS...: the catalog's file
catalog() {
	local serial=$1
	shift
	{
		printf '$ORIGIN cat.test.\n$TTL 0\n@ SOA invalid. invalid. %s 3600 600 86400 0\n' \
			"$serial"
		printf '@ NS invalid.\nversion TXT "2"\n'
		printf '%s\n' "$@"
	} >"$T_DIR/cat.test.zone"
}
mkdir -m 700 "$T_DIR/state"
catalog 1
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
state-dir: $T_DIR/state
xfr-message-timeout: 30
templates:
  - id: slow
    primaries: 127.0.0.1@$SLOW NOKEY
zones:
  - name: cat.test
    file: cat.test.zone
    catalog-role: consumer
    catalog-template: slow
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

# ok.test, which the same primary sends at once, keeps a secondary zone (and the transfer
# threads) after trickle.test goes
catalog 2 "t.zones PTR trickle.test." "o.zones PTR ok.test."
ctl reload cat.test >/dev/null
if wait_until 60 in_flight "$SLOW"; then
	pass "the member's first transfer is in flight"
else
	fail "the transfer started: [$(cat "$T_DIR/SLOW.out")] $(ctl zone-status)"
fi

catalog 3 "o.zones PTR ok.test."
ctl reload cat.test >/dev/null
if wait_until 30 logged "zone trickle\.test\.: transfer from 127\.0\.0\.1@$SLOW given up: a reconfig changed or removed the zone"; then
	pass "the member removed: its transfer is given up"
else
	fail "transfer given up: $(grep -E 'trickle|catalog' "$T_DIR/shoald.log" | tail -4)"
fi
if wait_until 10 refused; then
	pass "the member answers REFUSED"
else
	fail "REFUSED: $(q "$PORT" trickle.test SOA | grep status)"
fi
if wait_until 10 bash -c "! ss -Htn state established '( dport = :$SLOW )' | grep -q ."; then
	pass "the transfer's connection is closed"
else
	fail "the transfer's connection is still open"
fi
check_eq "nothing of the member is saved" "" \
	"$(find "$T_DIR/state" -name '*trickle*' 2>/dev/null)"
check_eq "ok.test is served" 2 "$(peer_serial "$PORT" ok.test)"

stop_within "$SHOALD_PID"
check_eq "shoald exits 0 (no sanitizer report)" 0 $?
done_testing
