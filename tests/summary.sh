#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Sum the counts of a `make check` run from its logs: CUnit's run summary
# ("asserts N N N F") in the unit test logs and the "N passed, N failed" line
# each integration script ends with. A program that passed as a whole while
# its line counts failed cases (the differential test passes at 99%) has
# those cases reported as tolerated, on their own line; a program that failed
# as a whole while its counts show no failure (a sanitizer report after the
# counts, a crash on exit) counts as one failure and is named. A failed
# program's failed checks and sanitizer summaries are printed just before the
# closing line, where the end of a long CI output still shows them. Usage:
#   tests/summary.sh BUILDDIR [LABEL]
dir=${1:-.}
label=${2:-tests}
passed=0
failed=0
tolerated=0
files=0
failures=
while IFS= read -r -d '' log; do
	case $log in */test-suite.log) continue ;; esac
	files=$((files + 1))
	before=$failed
	if line=$(grep -E '^ +tests +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+' "$log" | tail -1) && [ -n "$line" ]; then
		set -- $line
		# tests Total Ran Passed Failed Inactive
		passed=$((passed + $4))
		failed=$((failed + $5))
	elif line=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1) && [ -n "$line" ]; then
		p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
		f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
		passed=$((passed + p))
		if [ "$f" -gt 0 ] && grep -q ':test-result: PASS' "${log%.log}.trs" 2>/dev/null; then
			tolerated=$((tolerated + f))
			echo "$log: $f cases differ, within the test's pass mark"
		else
			failed=$((failed + f))
		fi
	elif grep -q '^SKIP' "${log%.log}.trs" 2>/dev/null || grep -q ':test-result: SKIP' "${log%.log}.trs" 2>/dev/null; then
		:
	elif grep -q ':test-result: PASS' "${log%.log}.trs" 2>/dev/null; then
		passed=$((passed + 1)) # a check that prints no counts (tests/layers.sh): one case
	else
		# a test binary that died before printing counts
		failed=$((failed + 1))
	fi
	if [ "$failed" -eq "$before" ] && grep -qE ':test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null; then
		failed=$((failed + 1))
		echo "$log: the program failed after its counts (see its log)"
	fi
	if grep -qE ':test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null; then
		failures="$failures--- $log
$(grep -E '^(FAIL|not ok)|SUMMARY: [A-Za-z]+Sanitizer|runtime error: ' "$log" | head -8)
"
	fi
done < <(find "$dir" -name '*.log' -path '*tests*' -print0)
[ -n "$failures" ] && printf '%s' "$failures"
[ "$tolerated" -gt 0 ] && echo "$label: $tolerated cases tolerated (see above)"
echo "$label ($files test programs): $passed passed, $failed failed"
