#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_resign: a signing zone's signatures are refreshed by the scheduler's re-sign event,
# without any reload, in batches. With the shortest lifetime the configuration takes
# (rrsig-lifetime 60, rrsig-refresh 30, rrsig-jitter 20: the first signing's refresh points
# spread over 10 to 30 s after it), the serial moves more than once on its own; the first
# batch leaves most of the first signing's RRSIGs as they were (no whole re-signing); the zone
# transferred out passes ldns-verify-zone after each serial seen; queries are answered
# throughout; within a bounded wait every RRSIG of the first signing has been replaced. The
# keys-dir state follows the batches: a reload of the same file afterwards keeps most
# signatures (it does not sign the zone whole because its last whole signing is old). A
# zone-remove ends its batches.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

command -v ldns-verify-zone >/dev/null || { echo "SKIP: ldns-verify-zone missing"; exit 77; }

{
	printf '$ORIGIN resign.test.\n$TTL 300\n'
	printf '@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\n@ A 192.0.2.1\n'
	printf 'ns1 A 192.0.2.53\nwww A 192.0.2.80\n'
	for i in $(seq 1 30); do printf 'h%d A 192.0.2.%d\nh%d TXT "host %d"\n' $i $i $i $i; done
} >"$T_DIR/resign.test.zone"

PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
cat >"$T_DIR/shoald.conf" <<CONF
listen: [127.0.0.1@$PORT]
threads: 1
control: $CTL
keys-dir: keys
dnssec-policies:
  - id: fast
    rrsig-lifetime: 60
    rrsig-refresh: 30
    rrsig-jitter: 20
zones:
  - name: resign.test
    file: $T_DIR/resign.test.zone
    dnssec-policy: fast
    provide-xfr: 127.0.0.1 NOKEY
CONF

serial() {
	q "$PORT" +short resign.test SOA | awk '{ print $3 }'
}

# axfr FILE: the zone transferred out into FILE
axfr() {
	"$DIG" @127.0.0.1 -p "$PORT" +nocmd +nostats +noall +answer resign.test AXFR >"$1"
}

# sigs FILE: each RRSIG's owner, type covered and inception, one a line
sigs() {
	awk '$4 == "RRSIG" { print $1, $5, $10 }' "$1" | sort
}

start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
FIRST=$(serial)
check_eq "served signed with the file's serial" 1 "$FIRST"
axfr "$T_DIR/first.axfr"
sigs "$T_DIR/first.axfr" >"$T_DIR/first.sigs"
TOTAL=$(wc -l <"$T_DIR/first.sigs")

# watch for at most 60 s: each new serial transferred and verified, an answer each round
seen=0 verified=0 unanswered=0 partial=0 last=$FIRST left=$TOTAL
deadline=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt "$deadline" ] && { [ "$left" -gt 0 ] || [ "$seen" -lt 2 ]; }; do
	sleep 0.5
	[ "$(q "$PORT" +short www.resign.test A)" = 192.0.2.80 ] || unanswered=$((unanswered + 1))
	now=$(serial)
	[ -n "$now" ] && [ "$now" != "$last" ] || continue
	last=$now
	seen=$((seen + 1))
	f=$T_DIR/serial-$now.axfr
	axfr "$f"
	ldns-verify-zone "$f" >"$f.ldns" 2>&1 && verified=$((verified + 1)) || cat "$f.ldns"
	left=$(sigs "$f" | comm -12 - "$T_DIR/first.sigs" | wc -l)
	# the first batch: most of the first signing's RRSIGs are still there
	[ "$seen" -eq 1 ] && [ "$left" -gt $((TOTAL / 2)) ] && partial=1
done
check_eq "no reload was asked: the log has none" "" "$(grep -i 'reload' "$T_DIR/shoald.log")"
check_eq "the serial moved more than once on its own" 1 "$([ "$seen" -ge 2 ] && echo 1)"
check_eq "every version seen passes ldns-verify-zone" "$seen" "$verified"
check_eq "the first batch left most signatures as they were" 1 "$partial"
check_eq "every RRSIG of the first signing was refreshed" 0 "$left"
check_eq "queries were answered throughout" 0 "$unanswered"
check_match "the log names each batch" "signatures refreshed, serial $FIRST -> " \
	"$(cat "$T_DIR/shoald.log")"

# the same file read again: the batches kept keys-dir's state current, so it is not signed
# whole (a batch may come meanwhile and change a few)
axfr "$T_DIR/before.axfr"
"$SHOALCTL" -s "$CTL" reload resign.test >/dev/null 2>&1
axfr "$T_DIR/after.axfr"
kept=$(sigs "$T_DIR/after.axfr" | comm -12 - <(sigs "$T_DIR/before.axfr") | wc -l)
check_eq "a reload after the batches keeps most signatures" 1 \
	"$([ "$kept" -gt $(($(sigs "$T_DIR/after.axfr" | wc -l) / 2)) ] && echo 1)"
check_eq "the zone still verifies" 0 "$(ldns-verify-zone "$T_DIR/after.axfr" >/dev/null 2>&1; echo $?)"

# a zone-remove takes its re-sign event away (the scheduler looks at that zone alone)
"$SHOALCTL" -s "$CTL" zone-remove resign.test >/dev/null 2>&1
check_eq "zone-remove exits 0" 0 $?
n=$(grep -c "signatures refreshed" "$T_DIR/shoald.log")
sleep 3
check_eq "no batch after the zone is removed" "$n" "$(grep -c "signatures refreshed" "$T_DIR/shoald.log")"
check_eq "and no error about it" "" "$(grep -E "re-sign|not refreshed" "$T_DIR/shoald.log")"

stop_pid "$SHOALD_PID"
done_testing
