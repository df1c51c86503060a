#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_keys: shoalctl keys and ds (issue 34) on a running shoald. keys lists a zone's keys
# from its list in keys-dir (tag, role, algorithm, state and times, the tags those of the
# list); ds prints its KSK's DS with the policy's dnskey-ttl, as ldns-key2ds and BIND's
# dnssec-dsfromkey compute it from the same DNSKEY; neither shows anything of a private key;
# a zone not configured, one without a policy, one whose keys are not made, a damaged list and
# (for ds) a list without a KSK are errors that say so. The keys are made by makekeys, as the
# signer makes them.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

command -v ldns-key2ds >/dev/null || { echo "SKIP: ldns-key2ds (ldnsutils) is needed"; exit 77; }
MAKEKEYS=$SHOAL_BUILDDIR/tests/integration/makekeys
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# iso T: UNIX seconds T as shoalctl writes times (RFC 3339, UTC)
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# field LIST ROLE N: field N of the line of ROLE's key in the list file LIST
field() { awk -v r="$2" -v n="$3" '$2 == r { print $n }' "$1"; }

PORT=$(free_port) || exit 99
KEYS=$T_DIR/keys
now=$(date +%s)
later=$((now + 86400))
"$MAKEKEYS" "$KEYS" example.com. 13 || fail "makekeys example.com."
# b.test's keys are made for tomorrow; its ZSK is published an hour ago
"$MAKEKEYS" "$KEYS" b.test. 15 "$later" || fail "makekeys b.test."
awk -v p=$((now - 3600)) '$2 == "zsk" { $6 = p } 1' "$KEYS/b.test.keys" >"$T_DIR/b.keys" &&
	cp "$T_DIR/b.keys" "$KEYS/b.test.keys"
"$MAKEKEYS" "$KEYS" bad.test. 13 || fail "makekeys bad.test."
echo "0123 ksk 13" >>"$KEYS/bad.test.keys"
# zskonly.test's list: example.com's ZSK line alone (the key's owner name is not in the line)
grep ' zsk ' "$KEYS/example.com.keys" >"$KEYS/zskonly.test.keys"
# zone NAME [POLICY]: a small zone's file, and its entry of the configuration's zones
zone() {
	printf '$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hm 1 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.1\n' \
		"$1" >"$T_DIR/$1.zone"
	printf '  - name: %s\n    file: %s\n' "$1" "$T_DIR/$1.zone"
	[ -z "${2:-}" ] || printf '    dnssec-policy: %s\n' "$2"
}
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
keys-dir: $KEYS
dnssec-policies:
  - id: p
    dnskey-ttl: 7200
zones:
  - name: example.com
    file: $T_DIR/example.com.zone
    dnssec-policy: p
$(for z in b.test bad.test nokeys.test zskonly.test; do zone $z p; done; zone plain.test)
CONF
cp "$EXAMPLES/example.com.zone" "$T_DIR/"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
# what the commands read is the list: a shoald that makes keys at load made nokeys.test's
rm -f "$KEYS/nokeys.test.keys"

# --- keys ---
LIST=$KEYS/example.com.keys
out=$(ctl keys example.com)
check_eq "keys exits 0" 0 $?
check_eq "one line per key of the list" 2 "$(grep -c . <<<"$out")"
for role in ksk zsk; do
	tag=$(field "$LIST" $role 4)
	c=$(iso "$(field "$LIST" $role 5)") p=$(iso "$(field "$LIST" $role 6)")
	a=$(iso "$(field "$LIST" $role 7)")
	check_eq "the $role: its tag from the list, algorithm, state and times" \
		"$tag $role ecdsap256sha256 13 active created $c published $p active $a" \
		"$(grep " $role " <<<"$out")"
done
out=$(ctl keys Example.COM.)
check_eq "the zone's name in any case, with the final dot" 2 "$(grep -c ' active ' <<<"$out")"
out=$(ctl keys b.test)
check_match "a KSK whose times are to come: created, ed25519 (15)" \
	"^[0-9]+ ksk ed25519 15 created created $(iso $later) published $(iso $later) active $(iso $later)$" \
	"$out"
check_match "a ZSK published, not active yet" \
	"^[0-9]+ zsk ed25519 15 published created .* published $(iso $((now - 3600))) active $(iso $later)$" \
	"$out"

# --- ds ---
ksk_pub=$(field "$LIST" ksk 8)
printf 'example.com. 7200 IN DNSKEY 257 3 13 %s\n' "$ksk_pub" >"$T_DIR/ksk.key"
# words: a record's fields with single blanks, the digest in capitals
words() { awk '{ $8 = toupper($8); print $1, $2, $3, $4, $5, $6, $7, $8 }'; }
want=$(ldns-key2ds -n -2 "$T_DIR/ksk.key" | words)
check_match "ldns-key2ds makes a DS of the list's KSK" \
	"^example.com. 7200 IN DS $(field "$LIST" ksk 4) 13 2 [0-9A-F]{64}$" "$want"
out=$(ctl ds example.com)
check_eq "ds exits 0" 0 $?
check_eq "ds: the KSK's DS with SHA-256 and dnskey-ttl, as ldns-key2ds computes it" "$want" \
	"$(words <<<"$out")"
check_eq "... one master file line" 1 "$(grep -c . <<<"$out")"
if command -v dnssec-dsfromkey >/dev/null; then
	bind=$(dnssec-dsfromkey -2 -f "$T_DIR/ksk.key" example.com | awk '{ print $4, $5, $6, $7 }')
	check_eq "... and as BIND's dnssec-dsfromkey" "$bind" "$(words <<<"$out" | cut -d' ' -f5-)"
fi
check_eq "the DS of b.test's KSK alone, ed25519" 1 \
	"$(ctl ds b.test | words | grep -cE '^b\.test\. 7200 IN DS [0-9]+ 15 2 [0-9A-F]{64}$')"

# --- nothing of a private key ---
all="$(ctl keys example.com; ctl ds example.com; ctl keys b.test; ctl ds b.test)"
grep -hv -- '-----' "$KEYS"/*.pem >"$T_DIR/private.b64"
pem_lines=$(grep -c . "$T_DIR/private.b64")
check_eq "the search finds the private keys' PEM lines in their files" "$pem_lines" \
	"$(cat "$KEYS"/*.pem | grep -cFf "$T_DIR/private.b64")"
check_eq "no line of a private key's PEM in keys or ds" 0 "$(grep -cFf "$T_DIR/private.b64" <<<"$all")"
check_eq "no PEM armour either" 0 "$(grep -c PRIVATE <<<"$all")"

# --- errors ---
for cmd in keys ds; do
	out=$(ctl $cmd nosuch.test)
	check_eq "$cmd of a zone not configured exits 1" "1 shoalctl: no zone nosuch.test is configured" "$? $out"
	out=$(ctl $cmd plain.test)
	check_eq "$cmd of a zone without a policy exits 1" \
		"1 shoalctl: zone plain.test has no dnssec-policy: it is served as loaded, not signed" "$? $out"
	out=$(ctl $cmd nokeys.test)
	check_eq "$cmd of a zone whose keys are not made exits 1" \
		"1 shoalctl: zone nokeys.test has no keys yet in $KEYS (made when it is first signed)" "$? $out"
	out=$(ctl $cmd bad.test)
	check_eq "$cmd of a damaged list exits 1 and names its line" \
		"1 shoalctl: $KEYS/bad.test.keys:4: not a key line" "$? $out"
done
check_eq "keys of a list with a ZSK alone" 1 "$(ctl keys zskonly.test | grep -c ' zsk ')"
out=$(ctl ds zskonly.test)
check_eq "ds of a list without a KSK exits 1 and says so" \
	"1 shoalctl: zone zskonly.test has no KSK in its list" "$? $out"
stop_pid "$SHOALD_PID"
done_testing
