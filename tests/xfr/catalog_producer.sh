#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/catalog_producer: a catalog zone made by Shoal (RFC 9432, catalog-role producer) read
# by Knot DNS (catalog-role: interpret, a template) and BIND (catalog-zones): the members
# appear at both consumers and answer there; a member added by zone-add --catalog appears; a
# member removed by zone-remove disappears; the consumers follow the catalog by IXFR
# (Shoal's counter of IXFR answers, Knot's log). Each consumer is skipped when not installed.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

[ -n "$KNOTD" ] || [ -n "$NAMED" ] || { echo "SKIP: neither knotd nor named is installed"; exit 77; }
PORT=$(free_port) || exit 99
KPORT=$(free_port) || exit 99
BPORT=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
counter() { json_value "$(ctl stats json)" "$1" | tr -d ' '; }
# serves PORT ZONE: the server on PORT answers for ZONE with authority
serves() { "$DIG" @127.0.0.1 -p "$1" +norec +time=1 +tries=1 "$2" SOA 2>/dev/null | grep -q 'flags: qr aa'; }
gone_from() { ! serves "$1" "$2"; }
CONSUMERS=""
[ -n "$KNOTD" ] && CONSUMERS="$CONSUMERS $KPORT"
[ -n "$NAMED" ] && CONSUMERS="$CONSUMERS $BPORT"
name_of() { [ "$1" = "$KPORT" ] && echo Knot || echo BIND; }

mkdir -p "$T_DIR/state" "$T_DIR/knot/zones" "$T_DIR/bind"
chmod 700 "$T_DIR/state"
for z in a b c; do
	printf '$ORIGIN %s.test.\n@ 300 IN SOA ns hostmaster 1 3600 600 86400 300\n@ 300 IN NS ns\nns 300 IN A 192.0.2.1\nwww 300 IN A 192.0.2.7\n' \
		"$z" >"$T_DIR/$z.zone"
done
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nstate-dir: %s/state\nzones:\n' \
		"$PORT" "$T_DIR" "$T_DIR"
	printf '  - name: cat.test\n    catalog-role: producer\n    provide-xfr: 127.0.0.1 NOKEY\n'
	printf '    notify: [ 127.0.0.1@%s NOKEY, 127.0.0.1@%s NOKEY ]\n' "$KPORT" "$BPORT"
	for z in a b; do
		printf '  - name: %s.test\n    file: %s.zone\n    catalog-member-of: cat.test\n' "$z" "$z"
		printf '    provide-xfr: 127.0.0.1 NOKEY\n'
	done
} >"$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

if [ -n "$KNOTD" ]; then
	{
		knot_server_conf "$T_DIR/knot" "$KPORT" info
		echo "remote:"
		knot_remote shoal "$PORT"
		echo "acl:"
		knot_acl notify notify
		knot_template "$T_DIR/knot/zones" "%s.zone" | sed '$d'
		# the members: secondaries of Shoal, as the catalog's template says (Knot's
		# catalog-template)
		printf '  - id: member\n    storage: "%s/knot/zones"\n    file: "%%s.zone"\n' "$T_DIR"
		printf '    master: shoal\n    acl: notify\n    zonefile-sync: -1\n'
		printf 'zone:\n  - domain: cat.test\n    master: shoal\n    acl: notify\n'
		printf '    catalog-role: interpret\n    catalog-template: member\n'
	} >"$T_DIR/knot/knot.conf"
	knot_start "$T_DIR/knot" "$T_DIR/knot/log"
	KNOT_PID=$PEER_PID
fi
if [ -n "$NAMED" ]; then
	{
		# catalog zones need allow-new-zones (BIND 9.18); members transfer from Shoal
		named_server_conf "$T_DIR/bind" "$BPORT" | sed "s|^    allow-query { any; };|&\\
    allow-new-zones yes;\\
    catalog-zones { zone \"cat.test\" default-primaries { 127.0.0.1 port $PORT; } min-update-interval 1; };|"
		cat <<-CONF
		zone "cat.test" {
		    type secondary;
		    file "cat.test.db";
		    primaries port $PORT { 127.0.0.1; };
		    allow-notify { 127.0.0.1; };
		};
		CONF
	} >"$T_DIR/bind/named.conf"
	named_start "$T_DIR/bind" "$T_DIR/bind/log"
	BIND_PID=$PEER_PID
fi

for p in $CONSUMERS; do
	if wait_until 60 serves "$p" a.test && wait_until 30 serves "$p" b.test; then
		pass "$(name_of "$p") serves the members a.test and b.test"
	else
		fail "$(name_of "$p") serves the members"
	fi
	check_eq "$(name_of "$p"): a member answers" "192.0.2.7" \
		"$("$DIG" @127.0.0.1 -p "$p" +norec +short www.a.test A)"
done

ixfr=$(counter ixfr)
out=$(ctl zone-add c.test "$T_DIR/c.zone" --catalog cat.test)
check_eq "zone-add c.test --catalog cat.test" 0 $?
for p in $CONSUMERS; do
	if wait_until 60 serves "$p" c.test; then
		pass "$(name_of "$p") serves c.test, added to the catalog"
	else
		fail "$(name_of "$p") serves c.test"
	fi
done
out=$(ctl zone-remove b.test)
check_eq "zone-remove b.test" 0 $?
for p in $CONSUMERS; do
	if wait_until 60 gone_from "$p" b.test; then
		pass "$(name_of "$p") no longer serves b.test, removed from the catalog"
	else
		fail "$(name_of "$p") dropped b.test"
	fi
	check_eq "$(name_of "$p") still serves a.test" yes "$(serves "$p" a.test && echo yes)"
done
# each consumer took each of the two changes by IXFR
set -- $CONSUMERS
check_eq "the consumers followed the catalog by IXFR (two changes, $# consumers)" \
	"$((ixfr + 2 * $#))" "$(counter ixfr)"
if [ -n "$KNOTD" ]; then
	check_match "Knot's log says IXFR for the catalog" "\[cat\.test\.\] IXFR, incoming" \
		"$(cat "$T_DIR/knot/log")"
fi
[ -n "$KNOTD" ] && peer_stop "$KNOT_PID"
[ -n "$NAMED" ] && peer_stop "$BIND_PID"
stop_within "$SHOALD_PID"
done_testing
