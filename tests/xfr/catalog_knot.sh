#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/catalog_knot: issue 32's interop, Knot DNS as the catalog producer (its catalog-role:
# generate) and Shoal as the consumer. The members Knot lists appear on Shoal and answer; a
# member's change at Knot reaches Shoal by NOTIFY and IXFR; a member Knot adds appears, one
# it drops answers REFUSED on Shoal. The fleet's second level: NSD (which has no catalog
# consumer before 4.9) is a secondary of two members from Shoal, which the template's
# provide-xfr and notify serve, and follows them. Skipped without knotd (NSD: its part).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

if [ -z "$KNOTD" ] || [ -z "$KNOTC" ]; then
	echo "SKIP: knotd is not installed (Debian package knot)"
	exit 77
fi
PORT=$(free_port) || exit 99
KPORT=$(free_port) || exit 99
NPORT=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
kctl() { "$KNOTC" -c "$T_DIR/knot/knot.conf" "$@" >>"$T_DIR/knotc.out" 2>&1; }
www() { q "$PORT" +short "www.$1" A; }
answers_www() { [ "$(www "$1")" = "$2" ]; }
refused() { q "$PORT" "www.$1" A | grep -q "status: REFUSED"; }

# member NAME SERIAL ADDR: Knot's file of member NAME
member() {
	printf '$ORIGIN %s.\n$TTL 300\n@ SOA ns hm %s 3600 600 86400 300\n@ NS ns\nns A 192.0.2.1\n' \
		"$1" "$2" >"$T_DIR/knot/zones/$1.zone.new"
	printf 'www A %s\n' "$3" >>"$T_DIR/knot/zones/$1.zone.new"
	mv "$T_DIR/knot/zones/$1.zone.new" "$T_DIR/knot/zones/$1.zone"
}
# knot_conf MEMBER...: Knot generating catz.test from MEMBERs, all sent to Shoal
knot_conf() {
	{
		knot_server_conf "$T_DIR/knot" "$KPORT" info
		printf 'remote:\n'
		knot_remote shoal "$PORT"
		printf 'acl:\n'
		knot_acl xfr transfer
		knot_template "$T_DIR/knot/zones" "%s.zone" "acl: xfr" "notify: shoal" \
			"zonefile-load: difference"
		printf '  - domain: catz.test\n    catalog-role: generate\n'
		for m in "$@"; do
			printf '  - domain: %s\n    catalog-role: member\n' "$m"
			printf '    catalog-zone: catz.test\n'
		done
	} >"$T_DIR/knot/knot.conf.new"
	mv "$T_DIR/knot/knot.conf.new" "$T_DIR/knot/knot.conf"
}
mkdir -p "$T_DIR/knot/zones"
mkdir -m 700 "$T_DIR/state"
member m1.test 1 192.0.2.11
member m2.test 1 192.0.2.12
member m3.test 1 192.0.2.13
knot_conf m1.test m2.test
knot_start "$T_DIR/knot" "$T_DIR/knot/log"
KNOT_PID=$PEER_PID
wait_until 30 serial_is "$KPORT" m2.test 1 || {
	echo "knotd did not start: $(tail -5 "$T_DIR/knot/log")"
	exit 99
}
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
state-dir: $T_DIR/state
templates:
  - id: from-knot
    primaries: 127.0.0.1@$KPORT NOKEY
    provide-xfr: 127.0.0.0/8 NOKEY
    notify: 127.0.0.1@$NPORT NOKEY
zones:
  - name: catz.test
    primaries: 127.0.0.1@$KPORT NOKEY
    catalog-role: consumer
    catalog-template: from-knot
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

if wait_until 60 answers_www m1.test 192.0.2.11 && wait_until 60 answers_www m2.test 192.0.2.12
then
	pass "Knot's members m1 and m2 appear on Shoal and answer"
else
	fail "members from Knot: m1 [$(www m1.test)] m2 [$(www m2.test)]: $(ctl zone-status)"
fi

# the second level: NSD takes m1 and m3 from Shoal (m3 is no member yet: NSD waits for it)
have_nsd=
if [ -n "$NSD" ]; then
	have_nsd=yes
	SEC_ZONES="m1.test:NOKEY m3.test:NOKEY" nsd_secondary "$T_DIR/nsd" "$NPORT" "$PORT"
	if wait_until 60 serial_is "$NPORT" m1.test 1; then
		pass "NSD, Shoal's secondary, serves m1"
	else
		fail "NSD serves m1: $(tail -3 "$T_DIR/nsd/log")"
	fi
fi
# nsd_www NAME ADDR: NSD (when there) has www.NAME at ADDR
nsd_www() { [ -z "$have_nsd" ] || [ "$(q "$NPORT" +short "www.$1" A)" = "$2" ]; }

# a member changed at Knot: its NOTIFY, then an IXFR, bring it to Shoal
ixfr_before=$(json_value "$(ctl stats json | grep -o '"xfr_in": {[^}]*}')" ixfr | tr -d ' ')
member m1.test 2 192.0.2.21
kctl zone-reload m1.test
if wait_until 30 answers_www m1.test 192.0.2.21; then
	pass "m1 changed at Knot follows on Shoal (NOTIFY, IXFR)"
else
	fail "m1 follows: [$(www m1.test)]; $(tail -3 "$T_DIR/knot/log")"
fi
ixfr_after=$(json_value "$(ctl stats json | grep -o '"xfr_in": {[^}]*}')" ixfr | tr -d ' ')
check_eq "... by IXFR" 1 $((ixfr_after > ixfr_before))
if wait_until 30 nsd_www m1.test 192.0.2.21; then
	pass "... and on to NSD by Shoal's NOTIFY (a member's template notifies)"
else
	fail "NSD follows m1: $(tail -3 "$T_DIR/nsd/log")"
fi

# a member added at Knot: the catalog's change brings it. (Knot 3.2 answers REFUSED over UDP
# for the catalog it generates once reloaded, TCP answering: Shoal's refresh then asks the
# transfer over TCP instead of failing at the SOA query.)
knot_conf m1.test m2.test m3.test
kctl reload
if wait_until 60 answers_www m3.test 192.0.2.13; then
	pass "m3, added at Knot, appears on Shoal"
else
	fail "m3 added: [$(www m3.test)]; $(grep catalog "$T_DIR/shoald.log" | tail -3)"
fi
if wait_until 60 nsd_www m3.test 192.0.2.13; then
	pass "... and on NSD, told by Shoal's NOTIFY of the new zone"
else
	fail "NSD has m3: $(tail -3 "$T_DIR/nsd/log")"
fi

# a member removed at Knot: Shoal stops answering for it
knot_conf m1.test m3.test
kctl reload
if wait_until 60 refused m2.test; then
	pass "m2, removed at Knot, answers REFUSED on Shoal"
else
	fail "m2 removed: $(q "$PORT" www.m2.test A | grep status); $(grep catalog "$T_DIR/shoald.log" | tail -3)"
fi
check_eq "m1 still answers" 192.0.2.21 "$(www m1.test)"
check_eq "m3 still answers" 192.0.2.13 "$(www m3.test)"
check_match "the catalog's changes came by IXFR" "catz\.test\.: serial [0-9]+ from .* by IXFR" \
	"$(cat "$T_DIR/shoald.log")"

# a restart with Knot down: the catalog (a secondary without a file of its own) was saved in
# state-dir, so its members are known and answer from their files
stop_within "$SHOALD_PID"
check_eq "shoald exits 0 (no sanitizer report)" 0 $?
kill "$KNOT_PID"
wait "$KNOT_PID" 2>/dev/null
check_eq "the catalog's transfers were saved in state-dir/catalog/" yes \
	"$([ -s "$T_DIR/state/catalog/catz.test..zone" ] && echo yes)"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
if wait_until 30 answers_www m3.test 192.0.2.13; then
	pass "after a restart with Knot down, m3 answers"
else
	fail "m3 after a restart: [$(www m3.test)]"
fi
check_eq "m2 stays removed" "" "$(www m2.test)"
stop_within "$SHOALD_PID"
check_eq "shoald exits 0 after the restart" 0 $?
done_testing
