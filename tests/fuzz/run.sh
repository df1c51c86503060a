#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Run the fuzz targets with libFuzzer (clang, ASan+UBSan), each for a bounded
# time, and report what they found. Not part of make check; see tests/fuzz/README.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
# SECONDS defaults to 60 per target; TARGET is query, answer, name, zone,
# zone_answer, zone_diff, conf, xfr_in or cookie (default: all). The build lives in
# $SHOAL_FUZZ_BUILD (default build/fuzz-lf; configured with CC=clang --enable-fuzzing when it has no
# config.status). Each target runs on its own work corpus,
# <build>/fuzz-work/<target>/corpus, which starts as a copy of
# tests/fuzz/corpus/<target> and keeps what earlier runs found (remove it to
# start afresh); crashes, leaks and timeouts are written to
# <build>/fuzz-work/<target>/artifacts/. Exit status 1 when anything was found.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(query answer name zone zone_answer zone_diff conf xfr_in cookie)
build=${SHOAL_FUZZ_BUILD:-$top/build/fuzz-lf}

case $secs in
'' | *[!0-9]*) echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2 ;;
esac
for t in "${targets[@]}"; do
	if [ ! -d "$top/tests/fuzz/corpus/$t" ]; then
		echo "$0: no target $t (no tests/fuzz/corpus/$t)" >&2
		exit 2
	fi
done

if [ ! -x "$build/config.status" ]; then
	[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi) || exit 1
	mkdir -p "$build" &&
		(cd "$build" && "$top/configure" -q CC=clang --enable-fuzzing) || exit 1
fi
programs=()
for t in "${targets[@]}"; do programs+=("tests/fuzz/fuzz_$t"); done
make -C "$build" -s -j"$(nproc)" "${programs[@]}" || exit 1

# the answer target finds its zones here; the zone, zone_answer, zone_diff and conf targets write to $TMPDIR
export SHOAL_SRCDIR=$top
found=0
for t in "${targets[@]}"; do
	work=$build/fuzz-work/$t
	mkdir -p "$work/corpus" "$work/artifacts"
	cp -n "$top/tests/fuzz/corpus/$t"/* "$work/corpus/" 2>/dev/null
	touch "$work/started" # artifacts of earlier runs are not reported again
	start=$(date +%s)
	"$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" \
		>"$work/log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	# the last status line ("#N ... cov: C ft: F corp: K/...") and the final stats
	last=$(grep -E '^#[0-9]+' "$work/log" | tail -1)
	cov=$(echo "$last" | sed -nE 's/.* cov: ([0-9]+).*/\1/p')
	ft=$(echo "$last" | sed -nE 's/.* ft: ([0-9]+).*/\1/p')
	corp=$(echo "$last" | sed -nE 's/.* corp: ([0-9]+).*/\1/p')
	execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$work/log")
	rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$work/log")
	artifacts=$(find "$work/artifacts" -type f -newer "$work/started" -printf '%f\n')
	echo "fuzz_$t: ${took}s, ${execs:-?} execs, ${rate:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
	if [ $rc -ne 0 ] || [ -n "$artifacts" ]; then
		found=1
		echo "fuzz_$t: FOUND (exit $rc), see $work/log:"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$work/log" | head -5 | sed 's/^/  /'
		for a in $artifacts; do echo "  $work/artifacts/$a"; done
	fi
done
exit $found
