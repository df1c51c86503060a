#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/selftest.sh: checks the differential test's own parts without
# any server: normalise.awk on a recorded dig batch (selftest/nsd.out, NSD
# 4.6.1 answering selftest/cases.txt over tests/diff/dnssec) and the
# counting rules of compare.awk on edited copies of it.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SHOAL_SRCDIR=${SHOAL_SRCDIR:-$(cd "$HERE/../.." && pwd)}
DIFF=$SHOAL_SRCDIR/tests/diff
# shellcheck source=../integration/lib.sh
. "$SHOAL_SRCDIR/tests/integration/lib.sh"

norm() { awk -f "$DIFF/normalise.awk" "$@"; }
# case_line N: line N of the normalised recording.
case_line() { sed -n "${1}p" "$T_DIR/nsd.norm"; }

norm "$DIFF/selftest/nsd.out" >"$T_DIR/nsd.norm"
check_eq "one line per case" 10 "$(wc -l <"$T_DIR/nsd.norm")"
check_match "question case kept (0x20)" '\| q WwW\.secure\.test\. IN A \|' "$(case_line 1)"
check_match "owner names lowercased" '\| an www\.secure\.test\. 3600 IN A 192\.0\.2\.80 ;' "$(case_line 1)"
check_match "base64 in RRSIG keeps its case" 'kdlVIceAdogD8uXhs5Wa5t3C4v9czRU4lb6BFPliNogS2hZjFFcCoL7c' "$(case_line 1)"
check_match "DO echoed" '\| edns v0 flags do \|' "$(case_line 1)"
check_match "authority sorted" 'au secure\.test\. 3600 IN NS ns1\.secure\.test\. ; secure\.test\. 3600 IN NS ns2\.example\.net\.' "$(case_line 1)"
check_match "truncated: TC, empty sections" 'flags qr aa tc \| qd 1 .* \| an - \| au -' "$(case_line 2)"
check_match "NXDOMAIN" 'rcode NXDOMAIN' "$(case_line 3)"
check_match "referral: glue in the additional column" $'NS ns\\.insecure\\.secure\\.test\\.\tad ns\\.insecure\\.secure\\.test\\. 3600 IN A 192\\.0\\.2\\.201\t' "$(case_line 4)"
check_match "no EDNS in the query, none in the answer" '\| edns none \|' "$(case_line 6)"
check_match "BADVERS" 'rcode BADVERS' "$(case_line 8)"
check_match "NOTIMP without a question" 'opcode STATUS \| rcode NOTIMP \| flags qr \| qd 0 \| edns none \| q -' "$(case_line 9)"
check_match "refused transfer" $'^10\tTRANSFER FAILED\t' "$(case_line 10)"
check_match "the query travels with the case" $'\twww\\.secure\\.test A \\+noedns \\+zflag$' "$(case_line 6)"

# The Z bit and unknown EDNS flags (edited into the recording) are compared.
sed -e 's/^;; flags: qr aa; QUERY: 1, ANSWER: 1,/;; flags: qr aa; MBZ: 0x4; QUERY: 1, ANSWER: 1,/' \
	-e 's/^; EDNS: version: 0, flags:; udp:/; EDNS: version: 0, flags:; MBZ: 0x0040, udp:/' \
	"$DIFF/selftest/nsd.out" | norm >"$T_DIR/mbz.norm"
check_match "Z bit" 'flags qr aa mbz 0x4 \|' "$(sed -n 7p "$T_DIR/mbz.norm")"
check_match "EDNS MBZ" 'edns v0 flags - mbz 0x0040' "$(sed -n 7p "$T_DIR/mbz.norm")"

# A transfer that cannot connect prints no header: it still counts as a case.
printf '%s\n' ';; communications error to 127.0.0.1#1: connection refused' '' \
	'; <<>> DiG 9.18 <<>> a.test A +tcp' ';; no servers could be reached' \
	';; Connection to 127.0.0.1#1(127.0.0.1) for a.test failed: connection refused.' \
	'; <<>> DiG 9.18 <<>> a.test A' ';; no servers could be reached' | norm >"$T_DIR/dead.norm"
check_eq "dead server: three cases, no answers" "NOANSWER NOANSWER NOANSWER" "$(cut -f2 "$T_DIR/dead.norm" | xargs)"
check_eq "dead server: the transfer's query is unknown" "a.test A +tcp|?|a.test A" "$(cut -f4 "$T_DIR/dead.norm" | paste -sd'|')"

# compare.awk: Knot differs from NSD in case 4 (authority), Shoal in turn
# equal to NSD, equal to Knot, different, short.
grep -v '^#' "$DIFF/selftest/cases.txt" >"$T_DIR/cases.txt"
awk -F'\t' -v OFS='\t' 'NR == 4 { sub(/\| au [^\t]*/, "| au -", $2) } { print }' \
	"$T_DIR/nsd.norm" >"$T_DIR/knot.norm"
compare() {
	awk -v cases="$T_DIR/cases.txt" -v nsd="$T_DIR/nsd.norm" -v knot="$T_DIR/knot.norm" \
		-v shoal="$1" -v verbose=0 -v min_pct="${2:-99}" -f "$DIFF/compare.awk"
}
# (copies: awk reads each file name through one stream)
cp "$T_DIR/nsd.norm" "$T_DIR/as-nsd.norm"
cp "$T_DIR/knot.norm" "$T_DIR/as-knot.norm"
out=$(compare "$T_DIR/as-nsd.norm")
check_eq "Shoal as NSD: pass" 0 $?
check_match "Shoal as NSD: all agree, one where NSD and Knot differ" 'agree 10 of 10 \(100\.0%\), of which 1 where' "$out"
check_match "NSD/Knot figure" 'NSD and Knot agree on 9 of 10' "$out"
out=$(compare "$T_DIR/as-knot.norm")
check_eq "Shoal as Knot: pass" 0 $?
check_match "Shoal as Knot: closing line" '^diff: 10 passed, 0 failed$' "$out"

awk -F'\t' -v OFS='\t' 'NR == 5 { sub(/rcode REFUSED/, "rcode NOERROR", $2) } { print }' \
	"$T_DIR/nsd.norm" >"$T_DIR/bad.norm"
out=$(compare "$T_DIR/bad.norm")
check_eq "one case of ten wrong: fail below 99%" 1 $?
check_match "the wrong case is shown" 'DISAGREE case 5: version\.bind TXT -c CH \[rcode\]' "$out"
check_match "closing line counts it" '^diff: 9 passed, 1 failed$' "$out"
compare "$T_DIR/bad.norm" 90 >/dev/null
check_eq "the pass mark is a parameter" 0 $?

awk -F'\t' -v OFS='\t' 'NR == 6 { $3 = "ad -" } { print }' "$T_DIR/nsd.norm" >"$T_DIR/add.norm"
out=$(compare "$T_DIR/add.norm")
check_eq "additional section alone does not fail" 0 $?
check_match "but it is listed" 'ADDITIONAL differs, case 6' "$out"

head -n 5 "$T_DIR/nsd.norm" >"$T_DIR/short.norm"
out=$(compare "$T_DIR/short.norm")
check_eq "a short output is an error, not a figure" 2 $?
sed '3d' "$T_DIR/nsd.norm" | awk -F'\t' -v OFS='\t' '{ $1 = NR; print }' >"$T_DIR/shifted.norm"
echo "$(tail -n 1 "$T_DIR/shifted.norm")" >>"$T_DIR/shifted.norm"
out=$(compare "$T_DIR/shifted.norm")
check_eq "output out of step with the corpus is an error" 2 $?

done_testing
