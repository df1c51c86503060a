#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dnssec_policy_conf: dnssec-policies and a zone's dnssec-policy as shoald reads them: a zone
# naming an unknown policy stops start-up with the line; a primary zone that both names a
# policy and takes updates passes --check (shoald_sign_update.sh); a primary zone with a policy
# passes --check with nothing written, starts and is served signed with keys made in keys-dir
# (a later --check reads them); a secondary zone with a policy starts without a warning
# (its transfers are signed: tests/xfr/signer.sh), nothing made before its first transfer.
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
[ ! -e "$T_DIR/keys" ]
check_eq "--check makes no keys" 0 $?
start_shoald "$PORT" -c "$T_DIR/good.conf"
check_eq "a primary zone's policy is no cause for a warning" "" \
	"$(grep 'dnssec-policy' "$T_DIR/shoald.log")"
out=$(q "$PORT" example.com SOA +short)
check_match "the zone is served" "^[^ ]+ [^ ]+ [0-9]+ " "$out"
check_match "signed: its DNSKEY RRset made, of the policy's algorithm" "^257 3 15 " \
	"$(q "$PORT" example.com DNSKEY +short)"
check_eq "its keys made in keys-dir" 2 "$(ls "$T_DIR"/keys/*.pem | wc -l)"
stop_pid "$SHOALD_PID"
mkdir "$T_DIR/away" && mv "$T_DIR"/keys/*.pem "$T_DIR/away/"
"$SHOALD" --check -c "$T_DIR/good.conf" >"$T_DIR/check.out" 2>&1
check_eq "--check reads the keys: a key file gone fails it" 1 $?
check_match "naming the file" "keys/[0-9a-f]+\.pem" "$(cat "$T_DIR/check.out")"

cat >"$T_DIR/update.conf" <<CONF
dnssec-policies:
  - id: default
zones:
  - name: example.com
    file: $ZONEFILE
    dnssec-policy: default
    allow-update:
      - address: 127.0.0.1
CONF
out=$("$SHOALD" --check -c "$T_DIR/update.conf" 2>&1)
check_eq "a signing zone that takes updates passes --check (updates are signed)" 0 $?

PORT2=$(free_port)
cat >"$T_DIR/secondary.conf" <<CONF
listen: [127.0.0.1@$PORT]
threads: 1
keys-dir: keys2
dnssec-policies:
  - id: default
zones:
  - name: example.com
    primaries: 127.0.0.1@$PORT2 NOKEY
    dnssec-policy: default
CONF
start_shoald "$PORT" -c "$T_DIR/secondary.conf"
check_eq "no warning: a secondary's transfers are signed" "" \
	"$(grep -i 'dnssec-policy' "$T_DIR/shoald.log")"
[ ! -e "$T_DIR/keys2" ]
check_eq "nothing written to its keys-dir before its first transfer" 0 $?
stop_pid "$SHOALD_PID"
done_testing
