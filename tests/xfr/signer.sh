#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/signer: the bump-in-the-wire signer (issue 34). Knot DNS is the hidden primary of
# bw.test (signed with NSEC) and bw3.test (NSEC3, a salt), unsigned, at serials 1, 2, 3;
# Shoal their secondary with a dnssec-policy, whose last signed serial (keys-dir's
# NAME.signed) is far above the primary's, so the two are kept apart; a second Knot is
# Shoal's own secondary. After the first AXFR the zones Shoal serves pass ldns-verify-zone
# and dnssec-verify; a change on the primary (reload and NOTIFY, a serial newer than the
# primary's last though not than the signed one) reaches Shoal by IXFR asked from the
# primary's serial, is signed alone (an RRset left keeps its RRSIG), verifies, and goes on
# to the downstream Knot by IXFR, which serves the same; after a restart Shoal still asks
# IXFR from the primary's serial. A primary whose zone holds DNSSEC records is refused, and
# the signed version keeps serving; a change not to be signed alone comes by AXFR instead;
# past the signatures' refresh point the next refresh signs the zone anew, though the
# primary's serial did not move.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

if [ -z "$KNOTD" ] || [ -z "$KNOTC" ]; then
	echo "SKIP: knotd is not installed (Debian package knot)"
	exit 77
fi
for tool in ldns-verify-zone dnssec-verify; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done

# write_zone ZONE SERIAL [EXTRA-LINE]: the primary's unsigned ZONE, replaced whole.
write_zone() {
	cat >"$T_DIR/knot/$1.zone.new" <<-ZONE
		\$ORIGIN $1.
		\$TTL 3600
		@		SOA	ns1 hostmaster $2 3600 600 1209600 300
		@		NS	ns1
		ns1		A	192.0.2.53
		www		A	192.0.2.80
		mail		MX	10 ns1
		*.wild		TXT	"wild"
		sub		NS	ns.sub
		ns.sub		A	192.0.2.54
		${3:-}
	ZONE
	mv "$T_DIR/knot/$1.zone.new" "$T_DIR/knot/$1.zone"
}
ZONES="bw.test bw3.test"
mkdir -p "$T_DIR/knot" "$T_DIR/down" "$T_DIR/shoal" "$T_DIR/keys"
chmod 755 "$T_DIR" "$T_DIR/shoal"
KPORT=$(free_port) || exit 99
PORT=$(free_port) || exit 99
DPORT=$(free_port) || exit 99
PRI_ZONES="bw.test:NOKEY bw3.test:NOKEY"
CTL=$T_DIR/ctl
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $CTL
keys-dir: $T_DIR/keys
min-refresh-time: 1
xfr-message-timeout: 5
dnssec-policies:
  - id: bw
  - id: bw3
    nsec3: on
    nsec3-iterations: 1
    nsec3-salt-length: 4
zones:
CONF
for z in $ZONES; do
	write_zone "$z" 1
	# the last signing of the zone left serial 2026120600 (a signer that served it before)
	printf '2026120600 - 0\n' >"$T_DIR/keys/$z.signed"
	chmod 600 "$T_DIR/keys/$z.signed"
	cat >>"$T_DIR/shoald.conf" <<-CONF
	  - name: $z
	    file: $T_DIR/shoal/$z.zone
	    primaries: ["127.0.0.1@$KPORT NOKEY"]
	    allow-notify: ["127.0.0.1 NOKEY"]
	    provide-xfr: ["127.0.0.1 NOKEY"]
	    notify: ["127.0.0.1@$DPORT NOKEY"]
	    dnssec-policy: ${z%%.test}
	CONF
done
knot_primary "$T_DIR/knot" "$KPORT" "$PORT"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

# verify ZONE WHEN: the zone Shoal transfers out passes both verifiers (lib.sh).
verify() {
	verify_signed "$PORT" "$@"
}
# rrsig NAME TYPE: the RRSIG served over an RRset
rrsig() {
	q "$PORT" +short +dnssec "$1" "$2" | awk -v t="$2" '$1 == t'
}
# log_has WHAT REGEX: Shoal's log has a line that matches
log_has() {
	check_match "$1" "$2" "$(cat "$T_DIR/shoald.log")"
}

for z in $ZONES; do
	if wait_until 20 serial_is "$PORT" "$z" 2026120601; then
		pass "$z: the first AXFR served signed, one past the last signed serial"
	else
		fail "$z not served at 2026120601: $(peer_serial "$PORT" "$z")"
		tail -20 "$T_DIR/shoald.log"
	fi
	log_has "$z: by AXFR, the primary's serial said" \
		"zone $z\.: serial 2026120601 from 127.0.0.1@$KPORT by AXFR, .*signed \(the primary's serial 1\)"
	verify "$z" "after the first AXFR"
	check_eq "$z: the primary's serial kept beside the signed one" "2026120601 1" \
		"$(awk '{ print $1, $4 }' "$T_DIR/keys/$z.signed")"
done
check_match "bw3.test denies with NSEC3" "^1 0 1 " "$(q "$PORT" +short bw3.test NSEC3PARAM)"
WWWSIG=$(rrsig www.bw.test A)
WWWSIG3=$(rrsig www.bw3.test A)

# Shoal's own secondary takes the signed zones
SEC_ZONES="bw.test:NOKEY bw3.test:NOKEY"
knot_secondary "$T_DIR/down" "$DPORT" "$PORT"
for z in $ZONES; do
	if wait_until 30 serial_is "$DPORT" "$z" 2026120601; then pass "the downstream Knot took $z"
	else fail "the downstream Knot has $z at $(peer_serial "$DPORT" "$z")"; tail -5 "$T_DIR/down/log"; fi
done

# change SERIAL SIGNED [EXTRA-LINE]: the primary at SERIAL, reloaded (it notifies Shoal, the
# SOA refresh an hour away); Shoal serves SIGNED, taken by IXFR
change() {
	for z in $ZONES; do
		write_zone "$z" "$1" "${3:-}"
	done
	"$KNOTC" -c "$T_DIR/knot/knot.conf" zone-reload >/dev/null 2>&1
	for z in $ZONES; do
		if wait_until 20 serial_is "$PORT" "$z" "$2"; then pass "$z: serial $1 served signed as $2"
		else fail "$z at $(peer_serial "$PORT" "$z"), not $2"; tail -20 "$T_DIR/shoald.log"; fi
		log_has "$z: by IXFR, the primary's serial said" \
			"zone $z\.: serial $2 from 127.0.0.1@$KPORT by IXFR, .*primary's serial $1\)"
	done
}

# a change on the primary: serial 2, newer than its last but not than the signed serial
change 2 2026120602 "new A 192.0.2.99"
for z in $ZONES; do
	check_match "$z: the new record with its RRSIG" "^A 1[35] 3 3600 " "$(rrsig "new.$z" A)"
	verify "$z" "after an IXFR in"
	if wait_until 30 serial_is "$DPORT" "$z" 2026120602; then pass "the downstream Knot follows $z"
	else fail "the downstream Knot has $z at $(peer_serial "$DPORT" "$z")"; tail -5 "$T_DIR/down/log"; fi
	check_match "... by IXFR" "\[$z\.\] IXFR, incoming.*(finished|serial 2026120601 -> 2026120602)" \
		"$(cat "$T_DIR/down/log")"
	check_eq "the downstream serves what Shoal serves" \
		"$(answers "$PORT" "new.$z" A "www.$z" A)" "$(answers "$DPORT" "new.$z" A "www.$z" A)"
done
check_eq "signed alone: an RRset it left keeps its RRSIG" "$WWWSIG" "$(rrsig www.bw.test A)"
check_eq "NSEC3 too" "$WWWSIG3" "$(rrsig www.bw3.test A)"
ixfr=$("$DIG" @127.0.0.1 -p "$PORT" +noall +answer bw.test IXFR=2026120601)
check_eq "IXFR out from the last signed serial: the signed change" "4/2026120602" \
	"$(ixfr_shape "$ixfr")"
check_match "... with the new record's RRSIG" "^new\.bw\.test\..*RRSIG[[:space:]]+A " "$ixfr"

# a restart: the version saved is the signed one, the primary's serial kept; the next
# change comes by IXFR from serial 2
for z in $ZONES; do
	wait_until 10 grep -q '^new' "$T_DIR/shoal/$z.zone"
done
stop_pid "$SHOALD_PID"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "after a restart the signed version serves" 2026120602 "$(peer_serial "$PORT" bw.test)"
change 3 2026120603 "new A 192.0.2.99
new2 A 192.0.2.98"
check_match "Knot answered IXFRs from serial 2" "bw3?\.test\.\] IXFR, outgoing.*serial 2 -> 3" \
	"$(cat "$T_DIR/knot/log")"
for z in $ZONES; do
	verify "$z" "after a restart and an IXFR in"
done

# a primary that signs: refused, and the signed version stays
write_zone bw.test 4 "new A 192.0.2.99
new2 A 192.0.2.98
$(awk '$4 == "DNSKEY"' "$T_DIR/bw.test.axfr" | head -1)"
"$KNOTC" -c "$T_DIR/knot/knot.conf" zone-reload bw.test >/dev/null 2>&1
refused() { grep -q "zone bw\.test\.: transfer from 127.0.0.1@$KPORT failed: .*DNSSEC records" "$T_DIR/shoald.log"; }
if wait_until 20 refused; then pass "a primary's DNSSEC records refused, logged"
else fail "no refusal logged"; tail -10 "$T_DIR/shoald.log"; fi
check_eq "the signed version keeps serving" 2026120603 "$(peer_serial "$PORT" bw.test)"

# a change not to be signed alone (a cut made at a name with other data): the IXFR gives way
# to an AXFR, whose difference is signed whole
write_zone bw.test 5 "new A 192.0.2.99
new NS ns1
new2 A 192.0.2.98"
"$KNOTC" -c "$T_DIR/knot/knot.conf" zone-reload bw.test >/dev/null 2>&1
if wait_until 20 serial_is "$PORT" bw.test 2026120604; then pass "a change not local served"
else fail "bw.test at $(peer_serial "$PORT" bw.test)"; tail -10 "$T_DIR/shoald.log"; fi
log_has "... the IXFR not signed alone: an AXFR asked" \
	"zone bw\.test\.: IXFR from 127.0.0.1@$KPORT failed \(.*not to be signed alone\): trying AXFR"
log_has "... and signed" \
	"zone bw\.test\.: serial 2026120604 from 127.0.0.1@$KPORT by AXFR, .*primary's serial 5\)"
verify bw.test "after a change not local"

# signatures at their refresh point (the last whole signing long ago, as NAME.signed says):
# the next refresh, though the primary's serial did not move, takes the zone whole and signs
# it anew, a serial on (the scheduler's batches leave secondaries alone)
state=$T_DIR/keys/bw.test.signed
WWWSIG=$(rrsig www.bw.test A)
awk '{ $3 = 0; print }' "$state" >"$state.old" && mv "$state.old" "$state"
"$SHOALCTL" -s "$CTL" refresh bw.test >/dev/null 2>&1
if wait_until 20 serial_is "$PORT" bw.test 2026120605; then pass "a refresh past the refresh point"
else fail "bw.test at $(peer_serial "$PORT" bw.test)"; tail -10 "$T_DIR/shoald.log"; fi
log_has "... said" "zone bw\.test\.: signatures at their refresh point: transferred whole"
check_eq "... signs whole: every RRSIG made anew" 1 "$([ "$(rrsig www.bw.test A)" != "$WWWSIG" ] && echo 1)"
check_eq "... the primary's serial kept" "2026120605 5" "$(awk '{ print $1, $4 }' "$state")"
verify bw.test "after a refresh past the refresh point"
stop_pid "$SHOALD_PID"
done_testing
