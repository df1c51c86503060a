#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_sign: a primary zone with a dnssec-policy is served signed. sign.test (NSEC) and
# sign3.test (NSEC3, a salt and an iteration) are read from unsigned files: their keys are
# made in keys-dir (each file mode 0600) and the zones transferred out (AXFR) pass
# ldns-verify-zone and BIND's dnssec-verify, after the first signature and after a reload
# with changes (the serial forward, the new record signed alone, the other signatures kept,
# the change sent by IXFR); sign3.test publishes CDS and CDNSKEY, the DS shoalctl ds prints. The
# same file read again changes nothing (the same serial) until the signatures reach their
# refresh point; a restart keeps the keys (the same DNSKEY RRset) and moves the serial
# forward although the file's did not. A file that holds DNSSEC records is refused with its
# name; a private key file gone fails the reload with the file named, and the last signed
# version keeps serving. A reconfig to another policy (NSEC3) signs the zone anew with it; a
# change of keys-dir is not applied (it needs a restart): the keys stay where they were.
# Without cds-cdnskey-publish a file's own CDS is served, signed by the KSK.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

for tool in ldns-verify-zone dnssec-verify; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done

# write_zone ZONE SERIAL [EXTRA-LINE]: the zone's file, replaced whole.
write_zone() {
	cat >"$T_DIR/$1.zone.new" <<-ZONE
		\$ORIGIN $1.
		\$TTL 3600
		@		SOA	ns1 hostmaster $2 7200 3600 1209600 300
		@		NS	ns1
		@		A	192.0.2.1
		@		MX	10 mail
		ns1		A	192.0.2.53
		mail		A	192.0.2.25
		www		A	192.0.2.80
		www		AAAA	2001:db8::80
		alias		CNAME	www
		*.wild		A	192.0.2.100
		a.b.ent		A	192.0.2.30
		insecure	NS	ns.insecure
		ns.insecure	A	192.0.2.201
		${3:-}
	ZONE
	mv "$T_DIR/$1.zone.new" "$T_DIR/$1.zone"
}
write_zone sign.test 2026120501
write_zone sign3.test 7

PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
cat >"$T_DIR/shoald.conf" <<CONF
listen: [127.0.0.1@$PORT]
threads: 1
control: $CTL
keys-dir: keys
dnssec-policies:
  - id: nsec
    rrsig-lifetime: 86400
    rrsig-refresh: 21600
    rrsig-jitter: 3600
  - id: nsec3
    algorithm: ed25519
    nsec3: on
    nsec3-iterations: 1
    nsec3-salt-length: 4
    signing-threads: 2
    cds-cdnskey-publish: yes
zones:
  - name: sign.test
    file: $T_DIR/sign.test.zone
    dnssec-policy: nsec
    provide-xfr: 127.0.0.1 NOKEY
  - name: sign3.test
    file: $T_DIR/sign3.test.zone
    dnssec-policy: nsec3
    provide-xfr: 127.0.0.1 NOKEY
CONF

# serial ZONE: the SOA serial served.
serial() {
	q "$PORT" +short "$1" SOA | awk '{ print $3 }'
}

# verify ZONE WHEN: the zone transferred out passes both verifiers.
verify() {
	verify_signed "$PORT" "$@"
}

start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "sign.test is served with the file's serial" 2026120501 "$(serial sign.test)"
verify sign.test "first signed"
verify sign3.test "first signed"
check_match "sign3.test denies with NSEC3" "NSEC3PARAM" \
	"$("$DIG" @127.0.0.1 -p "$PORT" +short +dnssec sign3.test NSEC3PARAM)"
modes=$(stat -c '%a %n' "$T_DIR"/keys/*.pem "$T_DIR"/keys/*.keys "$T_DIR"/keys/*.signed)
check_eq "every file in keys-dir has mode 0600" "" "$(echo "$modes" | awk '$1 != "600"')"
check_eq "two private keys a zone" 4 "$(ls "$T_DIR"/keys/*.pem | wc -l)"
DNSKEY=$(q "$PORT" +short sign.test DNSKEY | sort)
# rrsig NAME TYPE: the RRSIG RDATA served over an RRset
rrsig() {
	q "$PORT" +short +dnssec "$1" "$2" | awk -v t="$2" '$1 == t'
}
WWWSIG=$(rrsig www.sign.test A)
WWWSIG3=$(rrsig www.sign3.test A)
# ds_of TEXT: "TAG ALG DIGEST-TYPE DIGEST" of DS or CDS lines, the digest whole, lowercase
ds_of() {
	awk '{ for (i = 1; i <= NF; i++) if ($i == "DS" || $i == "CDS") break
	       if (i > NF) i = 0
	       d = ""; for (j = i + 4; j <= NF; j++) d = d $j
	       print $(i + 1), $(i + 2), $(i + 3), tolower(d) }' | sort
}
cds=$(q "$PORT" +noall +answer sign3.test CDS | ds_of)
check_match "cds-cdnskey-publish: a CDS at the apex" "^[0-9]+ 15 2 [0-9a-f]{64}$" "$cds"
check_eq "the DS shoalctl ds prints" "$cds" "$("$SHOALCTL" -s "$CTL" ds sign3.test | ds_of)"
check_match "and a CDNSKEY of the KSK" "^257 3 15 " "$(q "$PORT" +short sign3.test CDNSKEY)"
check_eq "no CDS without it" "" "$(q "$PORT" +short sign.test CDS)"

# a reload with a change and the same serial: signed, the serial one past the last
write_zone sign.test 2026120501 "new A 192.0.2.99"
write_zone sign3.test 7 "new A 192.0.2.99"
"$SHOALCTL" -s "$CTL" reload >"$T_DIR/reload.out" 2>&1
check_eq "reload with changes" 0 $?
check_eq "the serial moves on from the last signed" 2026120502 "$(serial sign.test)"
check_eq "the new record is served" 192.0.2.99 "$(q "$PORT" +short new.sign.test A)"
check_match "with its RRSIG" "^A 13 3 3600 " \
	"$(q "$PORT" +short +dnssec new.sign.test A | grep -v '^192')"
verify sign.test "after a reload"
check_eq "a change signed alone: an RRset it left keeps its signature" "$WWWSIG" \
	"$(rrsig www.sign.test A)"
check_eq "NSEC3 too" "$WWWSIG3" "$(rrsig www.sign3.test A)"
ixfr=$("$DIG" @127.0.0.1 -p "$PORT" +noall +answer sign.test IXFR=2026120501)
check_eq "IXFR from the first signed serial: the change, old and new SOA twice each" 4 \
	"$(echo "$ixfr" | awk '$4 == "SOA"' | wc -l)"
check_match "with the new record's signature" "^new\.sign\.test\..*RRSIG[[:space:]]+A " "$ixfr"
verify sign3.test "after a reload"

# the same file read again: nothing changes
"$SHOALCTL" -s "$CTL" reload sign.test >/dev/null 2>&1
check_eq "the same file read again keeps the serial" 2026120502 "$(serial sign.test)"
# until the signatures reach their refresh point: the last signing a day back (as kept in
# keys-dir), the same file is signed anew
state=$T_DIR/keys/sign.test.signed
awk '{ $3 -= 86400; print }' "$state" >"$state.old" && mv "$state.old" "$state"
"$SHOALCTL" -s "$CTL" reload sign.test >/dev/null 2>&1
check_eq "past the refresh point the same file is signed anew" 2026120503 "$(serial sign.test)"
check_eq "whole: every signature made anew" 1 \
	"$([ "$(rrsig www.sign.test A)" != "$WWWSIG" ] && echo 1)"
check_eq "with signatures made now" "" "$("$DIG" @127.0.0.1 -p "$PORT" +short +dnssec sign.test SOA |
	awk -v old="$(date -u -d @$(($(date +%s) - 43200)) +%Y%m%d%H%M%S)" '$1 == "SOA" && $6 < old')"
# a newer serial in the file is taken as it is
write_zone sign.test 2026120600 "new A 192.0.2.99"
"$SHOALCTL" -s "$CTL" reload sign.test >/dev/null 2>&1
check_eq "a newer file serial is served" 2026120600 "$(serial sign.test)"

# a restart: the same keys, the serial forward though the file's is not
stop_pid "$SHOALD_PID"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "a restart keeps the keys" "$DNSKEY" "$(q "$PORT" +short sign.test DNSKEY | sort)"
check_eq "and moves the serial forward" 2026120601 "$(serial sign.test)"
check_eq "sign3.test's too" 9 "$(serial sign3.test)"
verify sign3.test "after a restart"

# a private key file gone: the reload fails naming it, the last version keeps serving
pem=$(awk '$2 == "zsk" { print $1 }' "$T_DIR/keys/sign.test.keys")
mv "$T_DIR/keys/$pem.pem" "$T_DIR/$pem.pem"
write_zone sign.test 2026120700 "gone A 192.0.2.98"
out=$("$SHOALCTL" -s "$CTL" reload sign.test 2>&1)
check_match "a reload without its key file names it" "keys/$pem.pem" "$out"
check_eq "the last signed version keeps serving" 2026120601 "$(serial sign.test)"
check_match "zone-status says why" "$pem.pem" "$("$SHOALCTL" -s "$CTL" zone-status sign.test)"
mv "$T_DIR/$pem.pem" "$T_DIR/keys/$pem.pem"

# a file that holds DNSSEC records: refused, named
awk '$4 == "DNSKEY"' "$T_DIR/sign.test.axfr" | head -1 >"$T_DIR/dnskey.line"
write_zone sign.test 2026120800 "$(cat "$T_DIR/dnskey.line")"
out=$("$SHOALCTL" -s "$CTL" reload sign.test 2>&1)
check_match "a file with a DNSKEY is refused" "sign.test. holds DNSSEC records" "$out"
check_eq "and the last version keeps serving" 2026120601 "$(serial sign.test)"

# a reconfig that gives sign.test the NSEC3 policy: signed anew with NSEC3
write_zone sign.test 2026120601 "new A 192.0.2.99"
sed -i 's/dnssec-policy: nsec$/dnssec-policy: nsec3/' "$T_DIR/shoald.conf"
"$SHOALCTL" -s "$CTL" reconfig >"$T_DIR/reconfig.out" 2>&1
check_eq "a reconfig to another policy" 0 $?
check_match "signs the zone with it: NSEC3" "^1 0 1 " \
	"$("$DIG" @127.0.0.1 -p "$PORT" +short sign.test NSEC3PARAM)"
check_eq "at a new serial" 2026120602 "$(serial sign.test)"
verify sign.test "after a reconfig to NSEC3"

# keys-dir needs a restart: a reconfig that changes it, and sign.test's policy back to NSEC,
# signs with the keys where they were
sed -i 's|^keys-dir: keys$|keys-dir: keys-elsewhere|; 0,/dnssec-policy: nsec3$/s//dnssec-policy: nsec/' \
	"$T_DIR/shoald.conf"
"$SHOALCTL" -s "$CTL" reconfig >"$T_DIR/reconfig.out" 2>&1
check_match "a reconfig of keys-dir says it needs a restart" "needs a restart.*keys-dir" \
	"$(cat "$T_DIR/reconfig.out")"
check_eq "sign.test signed anew, with NSEC" 2026120603 "$(serial sign.test)"
check_eq "with the keys of the running keys-dir" "$DNSKEY" \
	"$(q "$PORT" +short sign.test DNSKEY | sort)"
[ ! -e "$T_DIR/keys-elsewhere" ]
check_eq "making none in the new one" 0 $?

# without cds-cdnskey-publish the zone's own CDS is its data (RFC 8078 4: remove the DS),
# signed alone by the KSK (RFC 7344 4.1)
WWWSIG=$(rrsig www.sign.test A)
write_zone sign.test 2026120700 "@ CDS 0 0 0 00"
"$SHOALCTL" -s "$CTL" reload sign.test >/dev/null 2>&1
check_eq "a file's own CDS is served" "0 0 0 00" "$(q "$PORT" +short sign.test CDS)"
ksk=$("$SHOALCTL" -s "$CTL" keys sign.test | awk '$2 == "ksk" { print $1 }')
check_eq "signed by the KSK" "$ksk" "$(rrsig sign.test CDS | awk '{ print $7 }')"
check_eq "the change signed alone" "$WWWSIG" "$(rrsig www.sign.test A)"
verify sign.test "with its own CDS"
stop_pid "$SHOALD_PID"
done_testing
