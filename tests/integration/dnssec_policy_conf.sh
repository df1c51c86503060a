#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dnssec_policy_conf: dnssec-policies and a zone's dnssec-policy as shoald reads them: a zone
# naming an unknown policy stops start-up with the line; a zone with a policy starts, is
# served, and start-up warns that this version does not sign it.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONEFILE=$EXAMPLES/example.com.zone
PORT=$(free_port)

cat >"$T_DIR/unknown.conf" <<CONF
dnssec-policies:
  - id: default
zones:
  - name: example.com
    file: $ZONEFILE
    dnssec-policy: nonesuch
CONF
out=$("$SHOALD" --check -c "$T_DIR/unknown.conf" 2>&1)
check_eq "an unknown policy id stops --check" 1 $?
check_match "its message names the line and the id" \
	"unknown.conf:6: zone example.com.: dnssec-policy \"nonesuch\" is not an id of dnssec-policies" "$out"
"$SHOALD" -c "$T_DIR/unknown.conf" --listen "127.0.0.1@$PORT" >"$T_DIR/unknown.log" 2>&1
check_eq "and start-up" 1 $?

cat >"$T_DIR/good.conf" <<CONF
listen: [127.0.0.1@$PORT]
threads: 1
keys-dir: keys
dnssec-policies:
  - id: fast
    algorithm: ed25519
    nsec3: on
    rrsig-lifetime: 3600
    rrsig-refresh: 1200
    rrsig-jitter: 60
zones:
  - name: example.com
    file: $ZONEFILE
    dnssec-policy: fast
CONF
out=$("$SHOALD" --check -c "$T_DIR/good.conf" 2>&1)
check_eq "a zone with a known policy passes --check" 0 $?
start_shoald "$PORT" -c "$T_DIR/good.conf"
check_match "start-up warns that nothing is signed" \
	"1 zones name a dnssec-policy, but this version does not sign" "$(cat "$T_DIR/shoald.log")"
out=$(q "$PORT" example.com SOA +short)
check_match "the zone is served" "^[^ ]+ [^ ]+ [0-9]+ " "$out"
check_eq "as loaded: no DNSKEY made" "" "$(q "$PORT" example.com DNSKEY +short)"
[ ! -e "$T_DIR/keys" ]
check_eq "nothing written to keys-dir" 0 $?
stop_pid "$SHOALD_PID"
done_testing
