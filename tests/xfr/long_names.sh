#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/long_names: the longest names a request carries never stop a
# secondary's refresh. An IXFR request holds the zone's SOA: with MNAME and
# RNAME of 250 octets each it did not fit the 512 octets it was built in, so
# it failed before connecting, no AXFR was tried, and the zone stayed at its
# first serial until it expired. First against a scripted primary
# (tests/xfr/bad_primary.pl, longsoa: the SOA of a zone at serial 2, then 3
# after an IXFR from 2); then against Knot DNS with the same SOA names and
# the request signed with a key whose name takes 255 octets, the longest
# (1024 octets were kept for a request and its TSIG RR): Knot's NOTIFY,
# signed with that key, comes in and the change follows by IXFR.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

start_bad_primary BAD
PORT=$(free_port) || exit 99

# label C N: N times the character C, one label
label() { printf "%${2}s" "" | tr ' ' "$1"; }
# The longest key name: 3 labels of 63 octets and one of 61, 255 octets in wire form.
LONG_KEY=$(label k 63).$(label k 63).$(label k 63).$(label k 61)
# SOA names of 250 octets each in wire form, as bad_primary.pl's longsoa
MNAME=$(label m 63).$(label m 63).$(label m 63).$(label m 57).
RNAME=$(label r 63).$(label r 63).$(label r 63).$(label r 57).
mkdir -p "$T_DIR/knot" "$T_DIR/shoal"
KPORT=""
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nxfr-message-timeout: 5\n' "$PORT" "$T_DIR"
	printf 'keys:\n  - name: %s\n    algorithm: hmac-sha256\n    secret: "%s"\n' "$LONG_KEY" "$XFR_SECRET"
	printf 'zones:\n  - name: longsoa.test\n    file: %s/shoal/longsoa.test.zone\n' "$T_DIR"
	printf '    primaries: ["127.0.0.1@%s NOKEY"]\n' "$BAD"
} >"$T_DIR/shoald.conf"
if [ -n "$KNOTD" ] && [ -n "$KNOTC" ]; then
	KPORT=$(free_port) || exit 99
	# write_zone SERIAL: long.test on Knot, www moving with the serial
	write_zone() {
		printf '$ORIGIN long.test.\n$TTL 300\n@ IN SOA %s %s %s 3600 600 86400 60\n' \
			"$MNAME" "$RNAME" "$1" >"$T_DIR/knot/long.test.zone"
		printf '@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.%s\n' "$1" >>"$T_DIR/knot/long.test.zone"
	}
	write_zone 1
	# as knot_primary (tests/xfr/peers.sh), with short ids: Knot's are shorter than key names
	{
		knot_server_conf "$T_DIR/knot" "$KPORT" info
		knot_keys "$LONG_KEY" "$XFR_SECRET"
		echo "remote:"
		knot_remote shoal "$PORT" "$LONG_KEY"
		echo "acl:"
		knot_acl xfr transfer "$LONG_KEY"
		knot_template "$T_DIR/knot" "%s.zone" "zonefile-load: difference" "journal-content: changes"
		printf '  - domain: long.test\n    notify: shoal\n    acl: xfr\n'
	} >"$T_DIR/knot/knot.conf"
	knot_start "$T_DIR/knot" "$T_DIR/knot/log"
	printf '  - name: long.test\n    file: %s/shoal/long.test.zone\n' "$T_DIR" >>"$T_DIR/shoald.conf"
	printf '    primaries: ["127.0.0.1@%s %s"]\n    allow-notify: ["127.0.0.1 %s"]\n' \
		"$KPORT" "$LONG_KEY" "$LONG_KEY" >>"$T_DIR/shoald.conf"
fi
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
log() { cat "$T_DIR/shoald.log"; }

if wait_until 20 serial_is "$PORT" longsoa.test 2; then pass "longsoa.test: the first version (AXFR)"
else fail "longsoa.test: not transferred"; log; fi
check_match "... with its long SOA names" "^$MNAME $RNAME 2 " \
	"$(q "$PORT" +short longsoa.test SOA)"
"$SHOALCTL" -s "$T_DIR/ctl" refresh longsoa.test >/dev/null
if wait_until 20 serial_is "$PORT" longsoa.test 3; then pass "longsoa.test: the refresh moves on to serial 3"
else fail "longsoa.test: still at $(peer_serial "$PORT" longsoa.test)"; fi
check_match "the IXFR request, with the SOA, reached the primary" "^request longsoa 251 2$" \
	"$(cat "$T_DIR/BAD.out")"
check_match "no local failure logged" "^$" "$(grep "zone longsoa\.test\.: transfer from .* failed" "$T_DIR/shoald.log")"

if [ -z "$KPORT" ]; then
	echo "knotd is not installed (Debian package knot): the signed case is not run"
else
	if wait_until 20 serial_is "$PORT" long.test 1; then pass "long.test from Knot, signed with the longest key name"
	else fail "long.test not transferred from Knot"; log; tail -5 "$T_DIR/knot/log"; fi
	write_zone 2
	"$KNOTC" -c "$T_DIR/knot/knot.conf" zone-reload long.test >/dev/null 2>&1
	# the SOA refresh is an hour: only Knot's NOTIFY brings the change this soon
	if wait_until 20 serial_is "$PORT" long.test 2; then pass "long.test: NOTIFY in, then serial 2"
	else fail "long.test: still at $(peer_serial "$PORT" long.test)"; log; tail -5 "$T_DIR/knot/log"; fi
	check_match "... by IXFR" "zone long\.test\.: serial 2 from 127.0.0.1@$KPORT by IXFR" "$(log)"
	check_eq "every name answers as on Knot" "$(answers "$KPORT" long.test SOA www.long.test A)" \
		"$(answers "$PORT" long.test SOA www.long.test A)"
fi
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
