#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Many small zones: Shoal, Knot and NSD side by side on the start, the memory, the CPU per
# answer over all zones against one, and the cost of changing one zone of the set.
# Usage: tests/bench/zones.sh [-s "4000 100000 1000000"] [-r ROUNDS] [-S "shoal knot nsd"]
#                             [-l SECONDS] [-t THREADS] [BUILDDIR]
# Every zone is the same small file (SOA, 2 NS, 3 A, a wildcard: names relative to the
# apex, so one file serves every zone), zones z0.bench. .. zN-1.bench. Each round starts
# each server in turn and measures: start to the last zone answering (dig on its SOA),
# peak resident set (VmHWM, summed over the server's processes) at that moment, then
# shoal-flood for -l seconds with queries spread over every zone and with queries to one
# zone (CPU per answer from /proc schedstat), and for shoald: zone reload, zone-add and
# zone-remove of one zone as shoalctl sees them (command to reply). Medians over rounds.
# Output: tests/bench/results/zones-DATE.md.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
sizes="4000 100000 1000000" rounds=3 servers="shoal knot nsd" secs=3 threads=1
while getopts "s:r:S:l:t:" o; do
	case $o in
	s) sizes=$OPTARG ;;
	r) rounds=$OPTARG ;;
	S) servers=$OPTARG ;;
	l) secs=$OPTARG ;;
	t) threads=$OPTARG ;;
	*) sed -n '4,5p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
T_NAME=bench-zones
# shellcheck source=servers.sh
. "$SRC/tests/bench/servers.sh"
SHOAL_BUILDDIR=$(bench_build "${1:-}")
export SHOAL_BUILDDIR
# shellcheck source=../integration/lib.sh
. "$SRC/tests/integration/lib.sh"
FLOOD=$SHOAL_BUILDDIR/tools/shoal-flood
chmod 755 "$T_DIR"

# gen N DIR: the zone file, the query lists (all zones, one zone) and each server's zone list.
gen() {
	local n=$1 dir=$2
	mkdir -p "$dir"
	cp "$SRC/tests/integration/zones/small.zone" "$dir/zone.db"
	awk -v n="$n" -v d="$dir" 'BEGIN {
		x = 12345
		for (q = 0; q < 100000; q++) {
			x = (x * 1103515245 + 12345) % 2147483648
			i = int(x / 7) % n
			printf "%s.z%d.bench. A\n", (x % 2 ? "www" : "host" q % 50), i > d "/all.q"
			printf "%s.z0.bench. A\n", (x % 2 ? "www" : "host" q % 50) > d "/one.q"
		}
		print "zones:" > d "/shoal-zones.conf"
		for (i = 0; i < n; i++) {
			printf "  - {name: z%d.bench, file: zone.db}\n", i > d "/shoal-zones.conf"
			printf "  - domain: z%d.bench\n", i > d "/knot-zones.conf"
			printf "zone:\n  name: z%d.bench\n  zonefile: zone.db\n", i > d "/nsd-zones.conf"
		}
	}'
	cp "$dir/zone.db" "$dir/extra.db"
}

# start_many SERVER DIR PORT N: one server with the N zones of DIR; sets SERVER_PID.
start_many() {
	local server=$1 dir=$2 port=$3 run=$2/$1
	rm -rf "$run"
	mkdir -p "$run"
	case $server in
	shoal)
		{
			printf 'listen: [127.0.0.1@%s]\nthreads: %s\ncontrol: %s/ctl\n' "$port" "$threads" "$run"
			printf 'zones-dir: %s\n' "$dir"
			cat "$dir/shoal-zones.conf"
		} >"$run/shoald.conf"
		${SERVER_WRAP:-} "$SHOALD" -c "$run/shoald.conf" >"$run/stderr.log" 2>&1 &
		SERVER_PID=$!
		T_PIDS="$T_PIDS $SERVER_PID"
		;;
	knot)
		{
			knot_server_conf "$run" "$port" warning "udp-workers: $threads"
			knot_template "$dir" "zone.db" "journal-content: none" "zonefile-load: whole"
			cat "$dir/knot-zones.conf"
		} >"$run/knot.conf"
		knot_start "$run" "$run/stderr.log"
		SERVER_PID=$PEER_PID
		;;
	nsd)
		{
			nsd_server_conf "$run" "$port" "server-count: $threads" "reuseport: yes" \
				"rrl-ratelimit: 0" "verbosity: 0" "zonesdir: \"$dir\""
			cat "$dir/nsd-zones.conf"
		} >"$run/nsd.conf"
		nsd_start "$run" "$run/stderr.log"
		SERVER_PID=$PEER_PID
		;;
	esac
}

# cpu_per_answer PID PORT QUERYFILE: µs of server CPU per answer under shoal-flood for $secs s.
cpu_per_answer() {
	local pid=$1 port=$2 q=$3 before after n
	before=$(cpu_ns "$pid")
	n=$("$FLOOD" -s 127.0.0.1 -p "$port" -d "$q" -l "$secs" -c 20 --json 2>/dev/null |
		grep -o '"answered":[0-9]*' | cut -d: -f2)
	after=$(cpu_ns "$pid")
	awk -v a="$before" -v b="$after" -v n="${n:-0}" 'BEGIN {
		if (n > 0) printf "%.2f\n", (b - a) / 1000 / n; else print "-" }'
}

# ms_of COMMAND...: milliseconds the command takes.
ms_of() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# one_round SERVER N DIR: one line of figures for the results.
one_round() {
	local server=$1 n=$2 dir=$3 port start hwm all one reload add remove last
	port=$(free_port)
	last="z$((n - 1)).bench"
	start_many "$server" "$dir" "$port" "$n"
	local t0 t1
	t0=$(date +%s%N)
	if ! peer_serves "$port" "$SERVER_PID" 3600 "$last."; then
		echo "$server $n: never served $last" >&2
		peer_stop "$SERVER_PID"
		return 1
	fi
	t1=$(date +%s%N)
	start=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	hwm=$(hwm_kib "$SERVER_PID")
	all=$(cpu_per_answer "$SERVER_PID" "$port" "$dir/all.q")
	one=$(cpu_per_answer "$SERVER_PID" "$port" "$dir/one.q")
	reload=- add=- remove=-
	if [ "$server" = shoal ]; then
		local ctl=(-s "$dir/shoal/ctl")
		reload=$(ms_of "$SHOALCTL" "${ctl[@]}" reload z1.bench)
		add=$(ms_of "$SHOALCTL" "${ctl[@]}" zone-add extra.bench "$dir/extra.db")
		remove=$(ms_of "$SHOALCTL" "${ctl[@]}" zone-remove extra.bench)
	fi
	peer_stop "$SERVER_PID"
	printf '| %s | %s | %s | %.1f | %s | %s | %s | %s | %s |\n' "$server" "$n" "$start" \
		"$(awk -v k="$hwm" 'BEGIN { print k / 1024 }')" "$all" "$one" "$reload" "$add" "$remove"
}

mkdir -p "$SRC/tests/bench/results"
out=$SRC/tests/bench/results/zones-$(date +%Y%m%d-%H%M).md
raw=$T_DIR/raw
{
	echo "# Many zones: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $threads worker thread(s)"
	echo
	echo "Each zone: SOA, 2 NS, 3 A and a wildcard. Medians of $rounds round(s), servers interleaved."
	echo "CPU µs per answer under shoal-flood for $secs s: queries over all zones, and to one zone."
	echo
	echo "| server | zones | start to last zone (s) | peak memory (MiB) | CPU/answer all | CPU/answer one | reload one (ms) | zone-add (ms) | zone-remove (ms) |"
	echo "|---|---|---|---|---|---|---|---|---|"
} >"$out"
for n in $sizes; do
	gen "$n" "$T_DIR/z$n"
	for r in $(seq "$rounds"); do
		for s in $servers; do
			one_round "$s" "$n" "$T_DIR/z$n" | tee -a "$raw" || true
		done
	done
	for s in $servers; do
		awk -v s="$s" -v n="$n" -F' *\\| *' '$2 == s && $3 == n {
			for (c = 4; c <= 10; c++) v[c, k + 0] = $c
			k++
		} END {
			if (!k) exit
			line = "| " s " | " n
			for (c = 4; c <= 10; c++) {
				m = 0
				for (i = 0; i < k; i++) a[i] = v[c, i]
				for (i = 0; i < k; i++) for (j = i + 1; j < k; j++)
					if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
				line = line " | " a[int((k - 1) / 2)]
			}
			print line " |"
		}' "$raw" >>"$out"
	done
	rm -rf "$T_DIR/z$n"
done
echo >>"$out"
echo "Raw rounds:" >>"$out"
echo >>"$out"
sed 's/^/    /' "$raw" >>"$out"
cat "$out"
