#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The 4 KiB pages one wake-up of shoald's UDP receiver touches, code and
# data: shoald (one thread) runs under valgrind --tool=lackey, which traces
# every instruction fetch and data access, and shoal-flood sends single
# queries far enough apart that each is a wake-up of its own. A wake-up is
# what runs from recvmmsg's return to the next recvmmsg call.
#
# Why pages: where page-table isolation runs without PCID, each system call
# drops the process's TLB entries, so the first touch of every page after a
# wake-up is a page walk, and at a moderate load the page tables themselves
# are no longer in the caches. Counts are deterministic (no timing); under
# valgrind the heap is valgrind's and the zone's huge pages are 4 KiB ones,
# so data pages are an upper bound.
#
# Usage: tests/bench/pages.sh [-s NAMES] [-n QUERIES] [-B BUILDDIR] [BUILDDIR]
#   -s    names in the zone (default 1000)
#   -n    queries, one a wake-up (default 40)
#   -B    another build, measured beside it
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
names=1000 queries=40 base=""
while getopts "s:n:B:h" opt; do
	case $opt in
	s) names=$OPTARG ;;
	n) queries=$OPTARG ;;
	B) base=$OPTARG ;;
	*) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	esac
done
shift $((OPTIND - 1))
. "$SRC/tests/bench/servers.sh"
export SHOAL_BUILDDIR=$(bench_build "${1:-}") SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
for tool in valgrind objdump; do
	command -v $tool >/dev/null || { echo "pages: $tool missing" >&2; exit 1; }
done
origin=bench.test.
"$SRC/tests/bench/genzone.sh" "$origin" "$names" "$T_DIR/zone" "$T_DIR/queries" "$queries" 10

# The offsets in shoald of the call to recvmmsg in udp_receiver_main and of
# the instruction after it: a wake-up starts at the second and ends at the first.
segment() {
	objdump -d --no-show-raw-insn "$1" | awk '
		/<udp_receiver_main>:/ { inside = 1 }
		inside && /call.*recvmmsg/ { sub(":", "", $1); call = $1; getline; sub(":", "", $1)
			print $1, call; exit }'
}

# The lackey trace, read as it comes: distinct pages (the address without its
# last three hex digits) per wake-up, those touched by more than half of
# them, and what each belongs to (the process's maps, written by the caller
# once the server answers; read then, as the load address is known only then).
count_pages() {
	awk -v offs="$1" -v offe="$2" -v maps="$3" -v out="$4" '
		function hex(s,   i, v) {
			s = tolower(s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		function load_maps(   l, f, r) {
			nmaps = 0
			while ((getline l < maps) > 0) {
				split(l, f, " ")
				split(f[1], r, "-")
				nmaps++
				lo[nmaps] = hex(r[1]); hi[nmaps] = hex(r[2])
				name[nmaps] = f[6] == "" ? "anonymous" : f[6]
				sub(/.*\//, "", name[nmaps])
				if (f[6] ~ /\/shoald$/ && f[3] == "00000000" && base == "")
					base = hex(r[1])
			}
			close(maps)
		}
		function owner(pg,   a, i) {
			a = hex(pg) * 4096
			for (i = 1; i <= nmaps; i++)
				if (a >= lo[i] && a < hi[i])
					return name[i]
			return "unknown"
		}
		base == "" && NR % 10000 == 0 {
			load_maps()
			if (base != "") {
				s = sprintf("%08x", base + hex(offs)); e = sprintf("%08x", base + hex(offe))
			}
		}
		s == "" { next }
		$1 == "I" && index($2, s ",") == 1 { inside = 1; split("", ip); split("", dp); next }
		$1 == "I" && index($2, e ",") == 1 {
			if (inside) {
				wakes++
				for (k in ip) { ni++; icount[k]++ }
				for (k in dp) { nd++; dcount[k]++ }
			}
			inside = 0
			next
		}
		inside {
			split($2, a, ",")
			pg = substr(a[1], 1, length(a[1]) - 3)
			if ($1 == "I") ip[pg] = 1; else dp[pg] = 1
		}
		END {
			if (!wakes) { print "no wake-up seen" > out; exit 1 }
			load_maps()
			for (k in icount) if (icount[k] * 2 > wakes) ic[owner(k)]++
			for (k in dcount) if (dcount[k] * 2 > wakes) dc[owner(k)]++
			printf "%d %.1f %.1f\n", wakes, ni / wakes, nd / wakes > out
			line = "  code:"
			for (k in ic) line = line " " k " " ic[k]
			print line > out
			line = "  data:"
			for (k in dc) line = line " " k " " dc[k]
			print line > out
		}'
}

printf '%-40s %9s %11s %11s\n' build wake-ups "code pages" "data pages"
for b in $SHOAL_BUILDDIR $base; do
	prog=$b/server/shoald
	[ -x "$prog" ] || { echo "pages: $prog missing" >&2; exit 1; }
	read -r offs offe < <(segment "$prog")
	[ -n "${offe:-}" ] || { echo "pages: no recvmmsg call in udp_receiver_main of $prog" >&2; exit 1; }
	port=$(free_port) || exit 1
	rm -f "$T_DIR/maps" "$T_DIR/pages.out"
	valgrind --tool=lackey --trace-mem=yes --log-fd=3 "$prog" --listen "127.0.0.1@$port" \
		--threads 1 --zone "${origin%.}=$T_DIR/zone" --control "$T_DIR/control.sock" \
		3> >(count_pages "$offs" "$offe" "$T_DIR/maps" "$T_DIR/pages.out") \
		>"$T_DIR/shoald.log" 2>&1 &
	pid=$!
	T_PIDS="$T_PIDS $pid"
	wait_zone "$port" "h0.$origin" 600 "$pid" >/dev/null || { echo "pages: shoald did not start" >&2; exit 1; }
	cat "/proc/$pid/maps" >"$T_DIR/maps"
	# one query at a time, 20 a second: each its own wake-up
	"$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -d "$T_DIR/queries" -n "$queries" -Q 20 -c 1 -i 1 \
		-e 1232 >/dev/null 2>&1
	stop_pid "$pid" >/dev/null 2>&1
	for _ in $(seq 1 600); do
		[ -s "$T_DIR/pages.out" ] && break
		sleep 0.1
	done
	read -r wakes code data <"$T_DIR/pages.out"
	printf '%-40s %9s %11s %11s\n' "$b" "$wakes" "$code" "$data"
	tail -n 2 "$T_DIR/pages.out"
done
