#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoal-checkzone: --help and the man page list the same options; the
# arguments are ORIGIN FILE (as named-checkzone and nsd-checkzone take them),
# the old FILE ORIGIN still read with a warning; the man page's examples
# print what the program prints; good zones load (exit 0), bad ones do not
# (exit 1) and every message names FILE:LINE.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

CHECKZONE=$SHOAL_BUILDDIR/tools/shoal-checkzone
ZONES=$SHOAL_SRCDIR/tests/unit/zones
MAN=$SHOAL_SRCDIR/man/shoal-checkzone.1.in

help=$("$CHECKZONE" --help)
check_eq "--help exits 0" 0 $?
check_help_man "--help and shoal-checkzone.1 list the same options" "$help" "$MAN"

"$CHECKZONE" >/dev/null 2>&1
check_eq "no arguments: usage error" 2 $?
"$CHECKZONE" 'bad..name' "$ZONES/example.zone" >/dev/null 2>&1
check_eq "a bad origin: usage error" 2 $?
check_match "--help gives the order ORIGIN FILE" "^Usage: shoal-checkzone \[OPTIONS\] ORIGIN FILE$" \
	"$help"

out=$("$CHECKZONE" example.com "$SHOAL_SRCDIR/examples/example.com.zone" 2>&1)
check_eq "the bundled example zone loads" 0 $?
check_match "and says so with its serial" "^zone example.com.: loaded, serial 2026120301" "$out"
check_eq "ORIGIN FILE: no warning about the order" "" "$(grep -i order <<<"$out")"

# The old order, FILE ORIGIN: the first names a file (or holds a /), the
# second does neither; read as before, with a warning that says the new one.
new=$("$CHECKZONE" example.com "$ZONES/example.zone" 2>&1)
out=$("$CHECKZONE" "$ZONES/example.zone" example.com 2>&1)
check_eq "FILE ORIGIN: still loads" 0 $?
check_match "FILE ORIGIN: a warning gives the order to use" \
	"^shoal-checkzone: warning: FILE ORIGIN is the old order; give ORIGIN FILE: shoal-checkzone example.com $ZONES/example.zone$" \
	"$out"
check_eq "FILE ORIGIN: otherwise the same output" "$new" "$(grep -v 'old order' <<<"$out")"
out=$(cd "$ZONES" && "$CHECKZONE" example.zone example.com 2>&1)
check_match "FILE ORIGIN, the file in the current folder: warned" "old order" "$out"
check_match "and loaded" "^zone example.com.: loaded" "$out"
out=$("$CHECKZONE" -q "$ZONES/example.zone" example.com 2>&1)
check_eq "FILE ORIGIN with -q: quiet as asked" "" "$out"
out=$("$CHECKZONE" "$T_DIR/missing.zone" example.com 2>&1)
check_eq "FILE ORIGIN, the file missing but a path: exit 1" 1 $?
check_match "and the file is what cannot be opened" "missing.zone: cannot open" "$out"
out=$("$CHECKZONE" example.com "$T_DIR/missing.zone" 2>&1)
check_eq "ORIGIN FILE, the file missing: exit 1" 1 $?
check_match "and the file is what cannot be opened" "missing.zone: cannot open" "$out"
check_eq "and no warning about the order" "" "$(grep 'old order' <<<"$out")"
# a folder is never the file: the root zone's origin "." names one
printf '. 3600 SOA a. b. 1 2 3 4 5\n. 3600 NS a.root-servers.net.\n' >"$T_DIR/root.zone"
out=$(cd "$T_DIR" && "$CHECKZONE" . root.zone 2>&1)
check_match "ORIGIN . FILE: the root zone loads" "^zone \.: loaded, serial 1" "$out"
out=$(cd "$T_DIR" && "$CHECKZONE" root.zone . 2>&1)
check_match "FILE . (old order): the root zone loads, warned" "old order.*root.zone" "$out"

# The man page's EXAMPLES (up to .fi), run from the source folder: each
# "$ shoal-checkzone" line's output is the lines below it, word for word.
awk '/^\.SH EXAMPLES/ { on = 1; next } on && /^\.(SH|fi)/ { exit } on && !/^\./' "$MAN" |
	sed 's/\\-/-/g' >"$T_DIR/examples.txt"
check_match "the man page has examples" '^\$ shoal-checkzone ' "$(cat "$T_DIR/examples.txt")"
n=0
while IFS= read -r line; do
	case $line in
	'$ shoal-checkzone '*)
		n=$((n + 1))
		cmd=${line#'$ shoal-checkzone '}
		# shellcheck disable=SC2086
		(cd "$SHOAL_SRCDIR" && "$CHECKZONE" $cmd) >"$T_DIR/got.$n" 2>&1
		echo "$cmd" >"$T_DIR/cmd.$n"
		: >"$T_DIR/want.$n"
		;;
	*) [ $n -gt 0 ] && printf '%s\n' "$line" >>"$T_DIR/want.$n" ;;
	esac
done <"$T_DIR/examples.txt"
for i in $(seq 1 $n); do
	check_eq "man page example '$(cat "$T_DIR/cmd.$i")': the output it shows" \
		"$(cat "$T_DIR/want.$i")" "$(cat "$T_DIR/got.$i")"
done

# the two readers: the same zone, the same summary and messages
for zone in "$SHOAL_SRCDIR/examples/example.com.zone" "$ZONES/twosoa.zone"; do
	zs=$("$CHECKZONE" -R zscanner example.com "$zone" 2>&1)
	ld=$("$CHECKZONE" --reader ldns example.com "$zone" 2>&1)
	check_eq "$(basename "$zone"): zscanner and ldns say the same" "$ld" "$zs"
done
"$CHECKZONE" -R bind example.com "$ZONES/example.zone" >/dev/null 2>&1
check_eq "an unknown reader: usage error" 2 $?

out=$("$CHECKZONE" -s example.com. "$ZONES/example.zone" 2>&1)
check_eq "the test zone loads" 0 $?
check_match "--stats prints the store size" "store [0-9]+ octets" "$out"

# ORIGIN FILE exit message: each bad zone says what and where.
while IFS="|" read -r file origin want msg; do
	out=$("$CHECKZONE" "$origin" "$ZONES/$file" 2>&1)
	check_eq "$file: exit status" "$want" $?
	check_match "$file: message" "$msg" "$out"
done <<'CASES'
nosoa.zone|example.com|1|^error: .*/nosoa.zone: no SOA record at the zone apex example.com.
twosoa.zone|example.com|1|^error: .*/twosoa.zone:6: example.com.: more than one SOA record
cname.zone|example.com|1|^error: .*/cname.zone:9: www.example.com.: CNAME and other data
syntax.zone|example.com|1|^error: .*/syntax.zone:7: 
unclosed.zone|example.com|1|^error: .*/unclosed.zone:7: a quoted string opened here is not closed
soaplace.zone|example.com|1|^error: .*/soaplace.zone:6: host.sub.example.com.: SOA record not at the zone apex
badinc.zone|example.com|1|missing.zone: cannot open
outside.zone|example.com|0|^warning: .*/outside.zone:6: www.example.org. is outside the zone
noglue.zone|example.com|0|^warning: .*/noglue.zone:6: sub.example.com.: no glue address
nons.zone|example.com|0|^warning: .*/nons.zone: no NS records at the zone apex
CASES

# Signed zones: the denial each one serves.
DNSSEC=$SHOAL_SRCDIR/tests/diff/dnssec
out=$("$CHECKZONE" secure.test "$DNSSEC/secure.test.zone" 2>&1)
check_match "NSEC-signed zone" "^signed: NSEC$" "$out"
out=$("$CHECKZONE" secure3.test "$DNSSEC/secure3.test.zone" 2>&1)
check_match "NSEC3-signed zone" "^signed: NSEC3, 5 iterations, salt 0a1b2c3d, [0-9]+ hashes" "$out"
out=$("$CHECKZONE" example.com "$ZONES/outside.zone" 2>&1)
check_eq "an unsigned zone has no signed: line" "" "$(grep '^signed' <<<"$out")"
sed 's/NSEC3PARAM\t1 0 5 0a1b2c3d/NSEC3PARAM\t1 0 5 ffff/I' "$DNSSEC/secure3.test.zone" >"$T_DIR/badparam.zone"
out=$("$CHECKZONE" secure3.test "$T_DIR/badparam.zone" 2>&1)
check_eq "NSEC3PARAM without its chain: still loads" 0 $?
check_match "NSEC3PARAM without its chain: warned" "^warning: .*badparam.zone: .*not used for denial" "$out"

# The limits, as shoald.conf(5) has them: a name with more types, an RRset with more records.
out=$("$CHECKZONE" -q --max-types-per-name 2 example.com "$ZONES/example.zone" 2>&1)
check_eq "--max-types-per-name 2: the test zone is refused" 1 $?
check_match "and the message says why, with FILE:LINE" \
	"^error: .*/example.zone:[0-9]+: example.com.: more than 2 types at one name" "$out"
out=$("$CHECKZONE" -q -r 1 example.com "$ZONES/example.zone" 2>&1)
check_eq "-r 1: the test zone is refused" 1 $?
check_match "and the message says why" "more than 1 [A-Z]+ records at one name" "$out"
"$CHECKZONE" -q -t 100 -r 1000 example.com "$ZONES/example.zone"
check_eq "-t 100 -r 1000 (the defaults): it loads" 0 $?
"$CHECKZONE" -t 0 example.com "$ZONES/example.zone" >/dev/null 2>&1
check_eq "-t 0: usage error" 2 $?
"$CHECKZONE" -r 65536 example.com "$ZONES/example.zone" >/dev/null 2>&1
check_eq "-r 65536: usage error" 2 $?

out=$("$CHECKZONE" -q example.com "$ZONES/outside.zone" 2>&1)
check_eq "-q: a zone with warnings prints nothing" "" "$out"

# Warnings are bounded as errors are: 100,000 records outside the zone gave
# 100,000 lines; now the first 50 and one line that counts the rest.
{
	printf '$ORIGIN gen.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.1\n'
	seq 1 100000 | sed 's/.*/w&.example.org. A 192.0.2.1/'
} >"$T_DIR/noisy.zone"
for reader in zscanner ldns; do
	"$CHECKZONE" -R $reader gen.test "$T_DIR/noisy.zone" >"$T_DIR/noisy.out" 2>&1
	check_eq "$reader: 100,000 warnings: the zone loads" 0 $?
	check_eq "$reader: and 52 lines are printed (50, the rest counted, the summary)" 52 \
		"$(wc -l <"$T_DIR/noisy.out")"
	check_match "$reader: one line counts those not shown" \
		"^warning: .*noisy.zone: 99950 more warnings not shown$" "$(cat "$T_DIR/noisy.out")"
	check_match "$reader: and the summary counts them all" \
		"^zone gen.test.: loaded, serial 1, 3 records, 100000 warnings$" "$(cat "$T_DIR/noisy.out")"
done
done_testing
