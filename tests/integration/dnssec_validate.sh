#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dnssec_validate: a validator accepts what shoald serves from signed
# zones. Keys are made and three zones signed here with ldns-keygen and
# ldns-signzone: valid.test with NSEC, valid3.test with NSEC3 (salt, 5
# iterations) and optout.test likewise with opt-out, each with a signed
# delegation (a DS) and an unsigned one. In optout.test a wildcard answer
# is "unsigned" to delv: the NSEC3 covering the next closer name has the
# opt-out flag, so an unsigned delegation could hide there (RFC 5155 9.2);
# NSD and Knot DNS get the same verdict for the same zone. shoald serves both; delv (bind9-dnsutils) asks it for positive,
# NXDOMAIN, NODATA, wildcard, wildcard NODATA, empty non-terminal, CNAME and
# DNAME answers and the DS of both delegations, validating from the zone's
# KSK as trust anchor, and must call each "fully validated". Two controls
# show delv does check: a wrong trust anchor and a record changed after
# signing must not validate. Skipped (77) without delv or ldnsutils.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

for tool in delv ldns-keygen ldns-signzone; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done

# keygen ZONE [-k]: a new ECDSA P-256 key in $T_DIR; prints its base path.
keygen() {
	local base
	base=$(cd "$T_DIR" && ldns-keygen -a ECDSAP256SHA256 -r /dev/urandom ${2:+"$2"} "$1") || return 1
	echo "$T_DIR/$base"
}

# anchor ZONE KEYBASE FILE: a delv trust-anchor file for the key.
anchor() {
	local key
	key=$(awk '$3 == "DNSKEY" { printf "%s %s %s \"%s\"", $4, $5, $6, $7 }' "$2.key")
	echo "trust-anchors { $1. static-key $key; };" >"$3"
}

# sign ZONE SIGNZONE-OPTIONS...: write $T_DIR/ZONE.signed and $T_DIR/ZONE.anchor.
sign() {
	local zone=$1 child_ksk zsk ksk
	shift
	child_ksk=$(keygen "signed.$zone" -k) || return 1
	cat >"$T_DIR/$zone.zone" <<-ZONE
		\$ORIGIN $zone.
		\$TTL 3600
		@		SOA	ns1 hostmaster 1 7200 3600 1209600 300
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
		dname		DNAME	target
		host.target	A	192.0.2.41
		insecure	NS	ns.insecure
		ns.insecure	A	192.0.2.201
		signed		NS	ns.signed
		ns.signed	A	192.0.2.202
	ZONE
	cat "$child_ksk.ds" >>"$T_DIR/$zone.zone"
	zsk=$(keygen "$zone") && ksk=$(keygen "$zone" -k) || return 1
	ldns-signzone "$@" -f "$T_DIR/$zone.signed" "$T_DIR/$zone.zone" "$zsk" "$ksk" || return 1
	anchor "$zone" "$ksk" "$T_DIR/$zone.anchor"
}

sign valid.test || { fail "signing valid.test"; done_testing; }
sign valid3.test -n -s 0a1b2c3d -t 5 || { fail "signing valid3.test"; done_testing; }
sign optout.test -n -s 0a1b2c3d -t 5 -p || { fail "signing optout.test"; done_testing; }

PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 \
	--zone "valid.test=$T_DIR/valid.test.signed" --zone "valid3.test=$T_DIR/valid3.test.signed" \
	--zone "optout.test=$T_DIR/optout.test.signed" || exit 99

# validate ZONE ANCHOR NAME TYPE: delv's output, validating from ZONE's key.
validate() {
	delv @127.0.0.1 -p "$PORT" -a "$2" +root="$1" "$3" "$4" 2>&1
}

POSITIVE='^; fully validated'
NEGATIVE='^; negative response, fully validated'
for zone in valid.test valid3.test optout.test; do
	a=$T_DIR/$zone.anchor
	while read -r name type want what; do
		fq=$name.$zone
		[ "$name" = @ ] && fq=$zone
		out=$(validate "$zone" "$a" "$fq" "$type")
		case $want in
		pos) check_match "$zone: $what ($name $type)" "$POSITIVE" "$out" ;;
		wild) if [ "$zone" = optout.test ]; then
				check_match "$zone: $what ($name $type), insecure under opt-out" \
					'^; unsigned answer' "$out"
			else
				check_match "$zone: $what ($name $type)" "$POSITIVE" "$out"
			fi ;;
		nx) check_match "$zone: $what ($name $type)" "$NEGATIVE" "$out"
			check_match "$zone: $what is NXDOMAIN" 'ncache nxdomain' "$out" ;;
		nodata) check_match "$zone: $what ($name $type)" "$NEGATIVE" "$out"
			check_match "$zone: $what is NODATA" 'ncache nxrrset' "$out" ;;
		esac
	done <<-CASES
		www A pos positive answer
		www AAAA pos positive answer
		@ MX pos apex MX
		@ DNSKEY pos apex DNSKEY
		nothere A nx NXDOMAIN
		a.b.c.nothere TXT nx NXDOMAIN below a missing name
		zzz A nx NXDOMAIN past the last name
		www MX nodata NODATA
		x.wild A wild wildcard answer
		a.b.wild A wild wildcard answer two labels deep
		x.wild MX nodata wildcard NODATA
		b.ent A nodata empty non-terminal
		alias A pos CNAME to a signed name
		host.dname A pos DNAME with synthesised CNAME
		signed DS pos DS of a signed delegation
		insecure DS nodata no DS at an unsigned delegation
	CASES
done

# The controls: delv must refuse what does not verify.
wrong=$(keygen valid.test -k)
anchor valid.test "$wrong" "$T_DIR/wrong.anchor"
out=$(validate valid.test "$T_DIR/wrong.anchor" www.valid.test A)
if printf '%s\n' "$out" | grep -q 'fully validated'; then
	fail "control: a wrong trust anchor must not validate: $out"
else
	pass "control: a wrong trust anchor does not validate"
fi
sed 's/^\(www\.valid\.test\.[[:space:]].*A[[:space:]]\)192\.0\.2\.80$/\1192.0.2.99/' \
	"$T_DIR/valid.test.signed" >"$T_DIR/tampered.signed"
if cmp -s "$T_DIR/valid.test.signed" "$T_DIR/tampered.signed"; then
	fail "control: the tampered zone differs from the signed one"
else
	PORT2=$(free_port) || exit 99
	start_shoald "$PORT2" --listen "127.0.0.1@$PORT2" --threads 1 \
		--zone "valid.test=$T_DIR/tampered.signed" || exit 99
	out=$(delv @127.0.0.1 -p "$PORT2" -a "$T_DIR/valid.test.anchor" +root=valid.test www.valid.test A 2>&1)
	if printf '%s\n' "$out" | grep -q 'fully validated'; then
		fail "control: a record changed after signing must not validate: $out"
	else
		pass "control: a record changed after signing does not validate"
	fi
	out=$(delv @127.0.0.1 -p "$PORT2" -a "$T_DIR/valid.test.anchor" +root=valid.test mail.valid.test A 2>&1)
	check_match "control: the rest of the tampered zone still validates" "$POSITIVE" "$out"
fi
done_testing
