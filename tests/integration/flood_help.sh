#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoal-flood: every option in --help is in the man page and the other way round,
# the loopback guard and bad arguments are refused before any packet is sent,
# and a run with no server ends on time with everything lost.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

MAN=$SHOAL_SRCDIR/man/shoal-flood.1.in
help=$("$SHOAL_FLOOD" --help)
check_eq "--help exits 0" 0 $?
check_help_man "--help and shoal-flood.1 list the same options" "$help" "$MAN"

out=$("$SHOAL_FLOOD" -s 192.0.2.1 -q example.com -n 1 2>&1)
check_eq "a remote target is refused as a usage error" 2 $?
check_match "the refusal says why" "not a loopback address" "$out"
"$SHOAL_FLOOD" -q example.com -n 1 -T 0 >/dev/null 2>&1
check_eq "-T 0 is a usage error" 2 $?
out=$("$SHOAL_FLOOD" -q example.com -n 1 --arrivals random 2>&1)
check_eq "random arrivals without -Q is a usage error" 2 $?
check_match "the refusal names what is missing" "needs a rate \\(-Q\\)" "$out"
"$SHOAL_FLOOD" -q example.com -n 1 -Q 10 --arrivals sometimes >/dev/null 2>&1
check_eq "an unknown kind of arrivals is a usage error" 2 $?
"$SHOAL_FLOOD" -q example.com -n 1 --timer-slack -1 >/dev/null 2>&1
check_eq "a negative timer slack is a usage error" 2 $?
"$SHOAL_FLOOD" -n 1 >/dev/null 2>&1
check_eq "no query source is a usage error" 2 $?
"$SHOAL_FLOOD" --no-such-option >/dev/null 2>&1
check_eq "an unknown option is a usage error" 2 $?
out=$("$SHOAL_FLOOD" -q 'bad..name' -n 1 2>&1)
check_match "a bad name is refused with the reason" "bad name" "$out"
printf 'ok.example. A\nbroken.example. NOSUCHTYPE\n' >"$T_DIR/q.txt"
out=$("$SHOAL_FLOOD" -d "$T_DIR/q.txt" -n 1 2>&1)
check_match "a bad query file names its line" "q.txt line 2: unknown type" "$out"

# Nothing listens on the port: every query that left is lost after the
# timeout, the run still ends on time and reports it.
port=$(free_port) || exit 1
json=$("$SHOAL_FLOOD" -p "$port" -q example.com -n 50 -c 2 -w 0.2 --json)
check_eq "no server: the run ends with status 1 (no answer at all)" 1 $?
get() { json_value "$json" "$1"; }
check_eq "no server: nothing answered" 0 "$(get answered)"
check_eq "no server: every sent query is lost" "$(get sent)" "$(get lost)"
done_testing
