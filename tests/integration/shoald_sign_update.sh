#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_sign_update: dynamic updates (RFC 2136, TSIG) to zones with a dnssec-policy are
# signed. upd.test (NSEC) and upd3.test (NSEC3, a salt and an iteration) take an add, a
# replace and a name deleted whole, each signed alone: after each the zone transferred out
# passes ldns-verify-zone and dnssec-verify, the records the update made have RRSIGs, and the
# RRSIG over the apex's MX (an RRset no update touched) is the very one served before. A
# delegation made above a name served is not local: the zone is signed whole, and passes.
# An update of the signer's records (RRSIG, NSEC, DNSKEY, NSEC3PARAM) is refused although the
# rule allows the type, logged. keys-dir's NAME.signed follows each
# serial. The zone file written back holds the unsigned data only, and a reload of it gives
# the same serial, refused for nothing.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

for tool in ldns-verify-zone dnssec-verify nsupdate; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done

# write_zone ZONE: the zone's unsigned file.
write_zone() {
	printf '%s\n' "\$ORIGIN $1." "\$TTL 300" "@ SOA ns1 hostmaster 10 7200 3600 1209600 300" \
		"@ NS ns1" "@ MX 10 mail" "ns1 A 192.0.2.53" "www A 192.0.2.80" \
		"mail A 192.0.2.25" "mail TXT \"mail\"" "a.b.ent A 192.0.2.30" >"$T_DIR/$1.zone"
}
write_zone upd.test
write_zone upd3.test

PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
SECRET=$(printf 'signed update test secret, 32 oc' | base64)
KEY="hmac-sha256:upd:$SECRET"
WIDE="hmac-sha256:wide:$SECRET"
cat >"$T_DIR/shoald.conf" <<CONF
listen: [127.0.0.1@$PORT]
threads: 1
control: $CTL
keys-dir: keys
zonefile-sync: 0
keys:
  - { name: upd, algorithm: hmac-sha256, secret: "$SECRET" }
  - { name: wide, algorithm: hmac-sha256, secret: "$SECRET" }
dnssec-policies:
  - id: nsec
  - id: nsec3
    nsec3: on
    nsec3-iterations: 1
    nsec3-salt-length: 4
zones:
CONF
for z in upd.test:nsec upd3.test:nsec3; do
	cat >>"$T_DIR/shoald.conf" <<-CONF
		  - name: ${z%:*}
		    file: $T_DIR/${z%:*}.zone
		    dnssec-policy: ${z#*:}
		    provide-xfr: 127.0.0.1 NOKEY
		    allow-update:
		      - key: upd
		      - key: wide
		        types: [A, RRSIG, NSEC, DNSKEY, NSEC3PARAM]
	CONF
done

# nu ZONE [KEY] < COMMANDS: one update of ZONE with nsupdate (key upd); NOERROR or the rcode
nu() {
	local out key=${2:-$KEY}
	out=$({
		printf 'server 127.0.0.1 %s\nzone %s\n' "$PORT" "$1"
		cat
		printf 'send\n'
	} | timeout 20 nsupdate -y "$key" 2>&1)
	case $out in
	*"update failed: "*) sed -n 's/.*update failed: \([A-Z]*\).*/\1/p' <<<"$out" | head -1 ;;
	"") echo NOERROR ;;
	*) echo "OTHER: $out" ;;
	esac
}
serial() { q "$PORT" +short "$1" SOA | awk '{ print $3 }'; }
# rrsig NAME TYPE: the RRSIG RDATA served over an RRset
rrsig() { q "$PORT" +short +dnssec "$1" "$2" | awk -v t="$2" '$1 == t'; }
rcode() { "$DIG" @127.0.0.1 -p "$PORT" +norec "$1" "$2" | sed -n 's/.*status: \([A-Z]*\).*/\1/p'; }

# verify ZONE WHEN: the zone transferred out passes both verifiers.
verify() {
	verify_signed "$PORT" "$@"
}

# signed_step ZONE WHAT SERIAL MXSIG: after an update signed alone: the serial, the
# verifiers, the untouched MX RRset's very RRSIG, keys-dir's state.
signed_step() {
	check_eq "$1 $2: the serial moved by one" "$3" "$(serial "$1")"
	verify "$1" "$2"
	check_eq "$1 $2: the apex MX keeps its RRSIG (the change signed alone)" "$4" \
		"$(rrsig "$1" MX)"
	check_eq "$1 $2: keys-dir's $1.signed has the serial" "$3" \
		"$(awk '{ print $1 }' "$T_DIR/keys/$1.signed")"
}

start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
for z in upd.test upd3.test; do
	S=$(serial "$z")
	check_eq "$z is served signed" 10 "$S"
	MXSIG=$(rrsig "$z" MX)
	check_match "$z: the MX is signed" "^MX " "$MXSIG"

	check_eq "$z: add: NOERROR" NOERROR "$(nu "$z" <<<"update add new.$z 300 A 192.0.2.99")"
	check_eq "$z: the new name is served" 192.0.2.99 "$(q "$PORT" +short "new.$z" A)"
	check_match "$z: the new A has an RRSIG" "^A " "$(rrsig "new.$z" A)"
	S=$((S + 1))
	signed_step "$z" "after an add" "$S" "$MXSIG"
	"$DIG" @127.0.0.1 -p "$PORT" +noall +answer "$z" IXFR=$((S - 1)) >"$T_DIR/$z.ixfr"
	check_eq "$z: IXFR from the serial before: the change, signed" \
		"SOA:$S SOA:$((S - 1)) SOA:$S SOA:$S" \
		"$(awk '$4 == "SOA" { printf "%sSOA:%s", n++ ? " " : "", $7 }' "$T_DIR/$z.ixfr")"
	check_match "$z: ... the new A's RRSIG in it" "new.$z.[[:space:]]+300[[:space:]]+IN[[:space:]]+RRSIG[[:space:]]+A " \
		"$(cat "$T_DIR/$z.ixfr")"

	WWWSIG=$(rrsig "www.$z" A)
	check_eq "$z: replace: NOERROR" NOERROR "$(nu "$z" <<-EOF
		update delete www.$z A
		update add www.$z 300 A 192.0.2.81
	EOF
	)"
	check_eq "$z: the A replaced" 192.0.2.81 "$(q "$PORT" +short "www.$z" A)"
	check_match "$z: the replaced A has an RRSIG" "^A " "$(rrsig "www.$z" A)"
	check_eq "$z: ... a new one" 1 "$([ "$(rrsig "www.$z" A)" = "$WWWSIG" ]; echo $?)"
	S=$((S + 1))
	signed_step "$z" "after a replace" "$S" "$MXSIG"

	check_eq "$z: a name deleted whole: NOERROR" NOERROR \
		"$(nu "$z" <<<"update delete mail.$z")"
	check_eq "$z: the deleted name is NXDOMAIN" NXDOMAIN "$(rcode "mail.$z" A)"
	S=$((S + 1))
	signed_step "$z" "after a delete" "$S" "$MXSIG"

	for rr in "www.$z 300 RRSIG A 13 3 300 20300101000000 20200101000000 1 $z. AAAA" \
		"www.$z 300 NSEC new.$z. A RRSIG NSEC" \
		"$z 300 DNSKEY 256 3 13 AAAA" "$z 0 NSEC3PARAM 1 0 0 -"; do
		check_eq "$z: adding the signer's ${rr#* * } is refused" REFUSED \
			"$(nu "$z" "$WIDE" <<<"update add $rr")"
	done
	check_eq "$z: ... the serial where it was" "$S" "$(serial "$z")"
	check_eq "$z: ... though the rule allows it: an A is not" NOERROR \
		"$(nu "$z" "$WIDE" <<<"update add www.$z 300 A 192.0.2.82")"
	S=$((S + 1))
	check_match "$z: ... logged" "zone $z.: update from 127.0.0.1@[0-9]*: add of www.$z. type 46 refused: the signer's records" \
		"$(cat "$T_DIR/shoald.log")"

	check_eq "$z: a delegation above a name served: NOERROR" NOERROR \
		"$(nu "$z" <<<"update add b.ent.$z 300 NS ns1.$z")"
	S=$((S + 1))
	check_eq "$z: signed whole, the serial moved by one" "$S" "$(serial "$z")"
	check_eq "$z: ... the MX's RRSIG made anew" 1 "$([ "$(rrsig "$z" MX)" = "$MXSIG" ]
		echo $?)"
	verify "$z" "signed whole after an update"
	check_eq "$z: keys-dir's state follows" "$S" "$(awk '{ print $1 }' "$T_DIR/keys/$z.signed")"

	# zonefile-sync 0: written right after the update's answer
	wait_until 10 grep -q "zone $z: serial $S written" "$T_DIR/shoald.log"
	check_match "$z: the file is written back at $S" "SOA.* $S 7200" "$(cat "$T_DIR/$z.zone")"
	check_eq "$z: ... without the signer's records" "" \
		"$(awk '$4 ~ /^(RRSIG|NSEC|NSEC3|NSEC3PARAM|DNSKEY)$/' "$T_DIR/$z.zone")"
	check_match "$z: ... with the update's records" "192.0.2.99" "$(cat "$T_DIR/$z.zone")"
done

lines=$(wc -l <"$T_DIR/shoald.log")
MX1=$(rrsig upd.test MX)
check_match "a reload of the files written back" "reloaded" "$("$SHOALCTL" -s "$CTL" reload 2>&1)"
for z in upd.test upd3.test; do
	check_eq "$z: the same serial after the reload" "$S" "$(serial "$z")"
	verify "$z" "reloaded"
done
check_eq "upd.test: the reload signed nothing anew" "$MX1" "$(rrsig upd.test MX)"
check_eq "the reload refused nothing" "" \
	"$(tail -n +"$((lines + 1))" "$T_DIR/shoald.log" | grep -i "error\|DNSSEC records")"
stop_pid "$SHOALD_PID"
done_testing
