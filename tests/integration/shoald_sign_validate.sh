#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_sign_validate: a validating resolver trusts what shoald signs. shoald runs as nobody
# (bound as root) and signs val.test (NSEC) and val3.test (NSEC3) on its first load: the keys
# it makes belong to nobody, and a reload with a change signs again. unbound (on a loopback
# high port, a stub-zone to shoald for each zone, the KSK's DS read from the transfer as
# trust anchor) answers with the AD bit a positive answer, an NXDOMAIN and a NODATA of
# each zone, before and after the reload, and after a dynamic update (an added name, a deleted
# one NXDOMAIN). A control: with another zone's DS as anchor the
# answer is SERVFAIL. Needs root, nobody and unbound (skipped, 77, without).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

for tool in unbound ldns-key2ds; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done
need_nobody "to sign as the service user"

chmod 755 "$T_DIR"
mkdir -p "$T_DIR/state" && chown nobody "$T_DIR/state" || exit 99
# write_zone ZONE SERIAL [EXTRA-LINE]: the zone's file (readable by nobody), replaced whole.
write_zone() {
	printf '%s\n' "\$ORIGIN $1." "\$TTL 300" "@ SOA ns1 hostmaster $2 7200 3600 1209600 300" \
		"@ NS ns1" "ns1 A 192.0.2.53" "www A 192.0.2.80" "mail MX 10 www" \
		"deleg NS ns.deleg" "ns.deleg A 192.0.2.54" "${3:-}" >"$T_DIR/state/$1.zone.new"
	chmod 644 "$T_DIR/state/$1.zone.new" && mv "$T_DIR/state/$1.zone.new" "$T_DIR/state/$1.zone"
}
write_zone val.test 1
write_zone val3.test 1

PORT=$(free_port) || exit 99
cat >"$T_DIR/shoald.conf" <<CONF
listen: [127.0.0.1@$PORT]
threads: 1
user: nobody
control: $T_DIR/ctl
keys-dir: $T_DIR/state/keys
dnssec-policies:
  - id: nsec
  - id: nsec3
    nsec3: on
zones:
  - name: val.test
    file: $T_DIR/state/val.test.zone
    dnssec-policy: nsec
    provide-xfr: 127.0.0.1 NOKEY
  - name: val3.test
    file: $T_DIR/state/val3.test.zone
    dnssec-policy: nsec3
    provide-xfr: 127.0.0.1 NOKEY
CONF
sed -i 's/^    provide-xfr: 127.0.0.1 NOKEY$/&\n    allow-update: [ { address: 127.0.0.1 } ]/' "$T_DIR/shoald.conf"
chmod 644 "$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "keys-dir: a list, a state and two keys a zone" 8 "$(ls "$T_DIR/state/keys" | wc -l)"
check_eq "every key file belongs to nobody" "" \
	"$(stat -c '%U %n' "$T_DIR"/state/keys/* | awk '$1 != "nobody"')"
check_eq "mode 0600" "" "$(stat -c '%a %n' "$T_DIR"/state/keys/* | awk '$1 != "600"')"

# anchors FILE: unbound trust-anchor lines, the DS of each zone's KSK from its transfer.
anchors() {
	local z
	: >"$1"
	for z in val.test val3.test; do
		"$DIG" @127.0.0.1 -p "$PORT" +noall +answer "$z" AXFR |
			awk '$4 == "DNSKEY" && $5 == 257' >"$T_DIR/$z.ksk"
		(cd "$T_DIR" && ldns-key2ds -n -2 "$z.ksk") |
			awk '{ printf "trust-anchor: \"%s\"\n", $0 }' >>"$1"
	done
}

# unbound_start ANCHORS: unbound on a free port validating the two zones from ANCHORS.
unbound_start() {
	UPORT=$(free_port) || exit 99
	cat >"$T_DIR/unbound.conf" <<-CONF
		server:
		  interface: 127.0.0.1
		  port: $UPORT
		  do-daemonize: no
		  username: ""
		  chroot: ""
		  directory: "$T_DIR"
		  pidfile: ""
		  use-syslog: no
		  logfile: "$T_DIR/unbound.log"
		  do-not-query-localhost: no
		  module-config: "validator iterator"
		  val-log-level: 2
		  local-zone: "test." nodefault
		  # an NSEC cached before the reload would deny the new name (RFC 8198)
		  aggressive-nsec: no
		  $(cat "$1")
		remote-control:
		  control-enable: no
		stub-zone:
		  name: val.test
		  stub-addr: 127.0.0.1@$PORT
		stub-zone:
		  name: val3.test
		  stub-addr: 127.0.0.1@$PORT
	CONF
	unbound -c "$T_DIR/unbound.conf" >>"$T_DIR/unbound.out" 2>&1 &
	UNBOUND_PID=$!
	T_PIDS="$T_PIDS $UNBOUND_PID"
	wait_until 20 unbound_up || { cat "$T_DIR/unbound.out"; exit 99; }
}

# unbound_up: unbound answers a name it holds itself (". SOA" would wait on the root servers).
unbound_up() {
	"$DIG" @127.0.0.1 -p "$UPORT" +time=1 +tries=1 localhost A >/dev/null 2>&1
}

# ask NAME TYPE: "RCODE FLAGS" of unbound's answer (flags as dig prints them).
ask() {
	"$DIG" @127.0.0.1 -p "$UPORT" +dnssec +time=5 +tries=1 "$1" "$2" |
		awk '/->>HEADER<<-/ { sub(",", "", $6); rc = $6 } /^;; flags:/ { sub(/^;; flags: /, ""); sub(/;.*/, ""); f = $0 } END { print rc, f }'
}

# secure WHEN: the three kinds of answer of each zone are validated (AD).
secure() {
	local z
	for z in val.test val3.test; do
		check_match "$z $1: positive answer, AD" "^NOERROR .*ad" "$(ask www.$z A)"
		check_match "$z $1: NXDOMAIN, AD" "^NXDOMAIN .*ad" "$(ask nonesuch.$z A)"
		check_match "$z $1: NODATA, AD" "^NOERROR .*ad" "$(ask www.$z TXT)"
		check_eq "$z $1: NODATA has no answer" "" \
			"$("$DIG" @127.0.0.1 -p "$UPORT" +short www.$z TXT)"
	done
}

anchors "$T_DIR/anchors"
unbound_start "$T_DIR/anchors"
secure "first signed"

write_zone val.test 1 "new A 192.0.2.99"
write_zone val3.test 1 "new A 192.0.2.99"
check_match "a reload with a change" "reloaded" "$("$SHOALCTL" -s "$T_DIR/ctl" reload 2>&1)"
check_eq "val.test's serial moved on" 2 "$("$DIG" @127.0.0.1 -p "$PORT" +short val.test SOA | awk '{ print $3 }')"
for z in val.test val3.test; do
	check_match "$z after a reload: the new name, AD" "^NOERROR .*ad" "$(ask new.$z A)"
done
secure "after a reload"

# a dynamic update (the zone's file written back by nobody, in its own folder) is signed
for z in val.test val3.test; do
	out=$(printf 'server 127.0.0.1 %s\nzone %s\nupdate add added.%s 300 A 192.0.2.77\nupdate delete mail.%s\nsend\n' \
		"$PORT" "$z" "$z" "$z" | timeout 20 nsupdate 2>&1)
	check_eq "$z: an update adding a name and deleting one: NOERROR" "" "$out"
	check_match "$z after an update: the added name, AD" "^NOERROR .*ad" "$(ask added.$z A)"
	check_match "$z after an update: the deleted name NXDOMAIN, AD" "^NXDOMAIN .*ad" \
		"$(ask mail.$z MX)"
done
secure "after an update"
stop_pid "$UNBOUND_PID"

# control: val3.test's DS as val.test's anchor: unbound must fail to validate
ds3=$(awk '/"val3\.test\./ { sub(/.*DS[[:space:]]+/, ""); sub(/"$/, ""); print }' "$T_DIR/anchors")
echo "trust-anchor: \"val.test. IN DS $ds3\"" >"$T_DIR/swapped"
unbound_start "$T_DIR/swapped"
check_match "control: a DS of another key as anchor fails validation" "^SERVFAIL" \
	"$(ask www.val.test A)"
stop_pid "$UNBOUND_PID"
stop_pid "$SHOALD_PID"
done_testing
