#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every program: getopt_long's options, --help and --version exit 0, a usage
# error (an unknown option, a missing value) exits 2 and says to see --help;
# every man page carries the version --version prints.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

CHECKZONE=$SHOAL_BUILDDIR/tools/shoal-checkzone
VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$SHOAL_BUILDDIR/config.h")

for prog in "$SHOALD" "$SHOALCTL" "$SHOAL_FLOOD" "$CHECKZONE"; do
	name=$(basename "$prog")
	"$prog" --help >/dev/null 2>&1
	check_eq "$name --help exits 0" 0 $?
	out=$("$prog" --version 2>&1)
	check_eq "$name --version exits 0" 0 $?
	check_eq "$name --version prints the configured version" "$name $VERSION" "$out"
	out=$("$prog" --no-such-option 2>&1 </dev/null)
	check_eq "$name: an unknown option exits 2" 2 $?
	check_match "$name: an unknown option points to --help" "help" "$out"
	# --no-such=value goes through getopt_long's long-option path too
	"$prog" --version=yes >/dev/null 2>&1 </dev/null
	check_eq "$name: --version with a value exits 2" 2 $?
done

# a required value missing, each program's own way of taking one
"$SHOALD" --threads >/dev/null 2>&1
check_eq "shoald --threads without a value exits 2" 2 $?
"$SHOALCTL" -s >/dev/null 2>&1
check_eq "shoalctl -s without a value exits 2" 2 $?
"$SHOALCTL" >/dev/null 2>&1
check_eq "shoalctl without a command exits 2" 2 $?
"$SHOAL_FLOOD" -q example.com -p >/dev/null 2>&1
check_eq "shoal-flood -p without a value exits 2" 2 $?
"$CHECKZONE" -t >/dev/null 2>&1
check_eq "shoal-checkzone -t without a value exits 2" 2 $?
"$CHECKZONE" a.zone >/dev/null 2>&1
check_eq "shoal-checkzone with one argument exits 2" 2 $?

# the built man pages carry configure's version and paths, nothing left unfilled
for page in shoald.8 shoald.conf.5 shoalctl.8 shoal-flood.1 shoal-checkzone.1; do
	th=$(grep -m1 '^\.TH ' "$SHOAL_BUILDDIR/man/$page")
	check_match "$page carries version $VERSION" "\"Shoal $VERSION\"" "$th"
	check_eq "$page has no @name@ left" "" "$(grep -o '@[a-zA-Z_]*@' "$SHOAL_BUILDDIR/man/$page")"
done

# getopt_long: --name=value and abbreviations work as everywhere else
out=$("$SHOALD" --check --listen=127.0.0.1@5399 --thread=1 2>&1)
check_eq "shoald takes --name=value and an unambiguous abbreviation" 0 $?
done_testing
