#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_zone_tools: what an operator of Knot or NSD reaches for (issue 33). zone-status takes
# several zones, pages at a million ("FROM COUNT") as before, and --json (shoalctl --json too)
# with a secondary's expiry and next refresh as numbers; zone-read ZONE prints the records
# served, one master file line each, which read back (ldns-read-zone) as the zone file's own
# and, for a secondary, as its primary's.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

if ! perl -MJSON::PP -e 1 2>/dev/null; then
	echo "SKIP: perl with JSON::PP is needed"
	exit 77
fi
command -v ldns-read-zone >/dev/null || { echo "SKIP: ldns-read-zone (ldnsutils) is needed"; exit 77; }
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# canonical FILE: the records of a master file, canonical and sorted, for diff
canonical() { ldns-read-zone -c "$1" 2>/dev/null | sort; }
# json_get EXPR: EXPR (perl, $j the decoded JSON on stdin) printed
json_get() { perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print eval($ARGV[0]) // "undef"' "$1"; }

PORT=$(free_port) || exit 99
start_bad_primary PORTB # the primary of s.test: serial 2
cp "$EXAMPLES/example.com.zone" "$T_DIR/"
printf '$ORIGIN b.test.\n$TTL 300\n@ SOA ns1 hm 5 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.5\n' \
	>"$T_DIR/b.test.zone"
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
zones:
  - name: example.com
    file: $T_DIR/example.com.zone
  - name: b.test
    file: $T_DIR/b.test.zone
  - name: s.test
    primaries: [ 127.0.0.1@$PORTB NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
wait_until 20 serial_is "$PORT" s.test 2 || fail "s.test transferred: [$(ctl zone-status)]"

# --- zone-status: several zones, paging, --json ---
out=$(ctl zone-status b.test example.com)
check_eq "zone-status of two zones exits 0" 0 $?
check_eq "one line each, in the order asked" "b.test. example.com." "$(awk '{print $1}' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
out=$(ctl zone-status b.test nosuch.test)
check_eq "a zone not configured: exits 1" 1 $?
check_match "... and is named" "no zone nosuch.test is configured" "$out"
out=$(ctl zone-status 0 1)
check_eq "a page of one zone, then where the next starts" "example.com. next 1" \
	"$(awk '{print $1, $2}' <<<"$out" | sed 's/ $//' | tr '\n' ' ' | sed 's/ $//;s/example.com. serial/example.com./')"
out=$(ctl zone-status --json)
check_eq "zone-status --json exits 0" 0 $?
json=$out
check_eq "it is JSON with every zone" 3 "$(json_get 'scalar @{$j->{zones}}' <<<"$json")"
check_eq "b.test's serial and records" "5 3" \
	"$(json_get 'my ($z) = grep { $_->{name} eq "b.test." } @{$j->{zones}}; "$z->{serial} $z->{records}"' <<<"$json")"
now=$(date +%s)
sec='(grep { $_->{name} eq "s.test." } @{$j->{zones}})[0]'
check_match "a secondary's source" "^primary 127.0.0.1" "$(json_get "($sec)->{source}" <<<"$json")"
check_eq "its next refresh, in seconds, after now" 1 \
	"$(json_get "(($sec)->{next_refresh} >= $now - 5) ? 1 : 0" <<<"$json")"
check_eq "its expiry, after that" 1 \
	"$(json_get "(($sec)->{expires} > ($sec)->{next_refresh}) ? 1 : 0" <<<"$json")"
check_eq "its last refresh, now or so" 1 \
	"$(json_get "(abs(($sec)->{last_refresh} - $now) < 60) ? 1 : 0" <<<"$json")"
check_eq "a primary zone has no source" undef "$(json_get '$j->{zones}[0]{source}' <<<"$json")"
out=$("$SHOALCTL" -s "$T_DIR/ctl" --json zone-status s.test example.com)
check_eq "shoalctl --json zone-status ZONE... is the same" "s.test. example.com." \
	"$(json_get 'join " ", map { $_->{name} } @{$j->{zones}}' <<<"$out")"
out=$(ctl zone-status 1 1 --json)
check_eq "a page in JSON says where the next starts" "b.test. 2" \
	"$(json_get '"$j->{zones}[0]{name} $j->{next}"' <<<"$out")"

# --- zone-read: the records served ---
out=$(ctl zone-read example.com)
check_eq "zone-read exits 0" 0 $?
printf '%s\n' "$out" >"$T_DIR/read.zone"
check_match "the SOA first" "^example.com.[[:space:]].*SOA" "$(head -1 "$T_DIR/read.zone")"
check_eq "its records are the zone file's" "" \
	"$(diff <(canonical "$T_DIR/example.com.zone") <(canonical "$T_DIR/read.zone"))"
check_match "... and there are some" "^[1-9][0-9]+ " "$(canonical "$T_DIR/read.zone" | wc -l) lines"
out=$(ctl zone-read s.test)
printf '%s\n' "$out" >"$T_DIR/s.read"
check_eq "a secondary's are its primary's" "" \
	"$(diff <(q "$PORTB" +noall +answer +nottlunits s.test AXFR | sed '$d' >"$T_DIR/s.axfr";
		canonical "$T_DIR/s.axfr") <(canonical "$T_DIR/s.read"))"
out=$(ctl zone-read nosuch.test)
check_eq "zone-read of a zone not configured exits 1" 1 $?
check_match "... and names it" "no zone nosuch.test is configured" "$out"
stop_within "$SHOALD_PID"
check_eq "shoald exits 0" 0 $?
done_testing
