# SPDX-License-Identifier: GPL-3.0-or-later
# Start the benchmark's servers on loopback, each in its own directory with its
# own configuration, and read their CPU time and memory from /proc.
# Sourced by the benchmark scripts after tests/integration/lib.sh (free_port,
# T_PIDS), with SRC the source tree.
# The peers' configuration and start are tests/peers.sh's.
# Each start_* function: start_X DIR PORT THREADS ZONEFILE ORIGIN, runs the
# server in the foreground of a background job, records SERVER_PID, and
# returns once the server is started (the caller measures zone load time).
# SERVER_WRAP, when set, is put before the server's command (the pinned
# benchmark sets "taskset -c CPUS", which every thread and child inherits).

# shellcheck source=../peers.sh
. "$SRC/tests/peers.sh"

# bench_build [DIR]: the build folder to measure: DIR, else $SHOAL_BUILDDIR,
# else the newest build/*/ of the tree with tools/shoal-flood. Needs SRC.
bench_build() {
	local build=${1:-${SHOAL_BUILDDIR:-}}
	if [ -z "$build" ]; then
		build=$(ls -td "$SRC"/build/*/ 2>/dev/null | while read -r d; do
			[ -x "$d/tools/shoal-flood" ] && { echo "${d%/}"; break; }; done)
	fi
	echo "$build"
}

# start_nsd: NSD with reuseport and rate limiting off (its default RRL would
# throttle a loopback benchmark), one server process per thread. A sixth
# and seventh argument turn RRL on: responses per second and slip.
start_nsd() {
	local dir=$1 port=$2 threads=$3 zone=$4 origin=$5 rate=${6:-0} slip=${7:-2}
	mkdir -p "$dir"
	{
		nsd_server_conf "$dir" "$port" "server-count: $threads" "reuseport: yes" \
			"rrl-ratelimit: $rate" "rrl-slip: $slip" "rrl-ipv4-prefix-length: 24" \
			"rrl-ipv6-prefix-length: 56" "verbosity: 0" 'nsid: "ascii_nsd"'
		nsd_zone "$origin" "$zone"
	} >"$dir/nsd.conf"
	nsd_start "$dir" "$dir/stderr.log"
	SERVER_PID=$PEER_PID
}

# start_knot: Knot DNS with udp-workers = threads, one background worker,
# no journal and no zone file flushing, semantic checks off (as NSD and Shoal
# do not run DNSSEC checks at load either). A sixth and seventh argument
# turn its RRL module on: responses per second and slip.
start_knot() {
	local dir=$1 port=$2 threads=$3 zone=$4 origin=$5 module=()
	mkdir -p "$dir"
	{
		knot_server_conf "$dir" "$port" warning "udp-workers: $threads" 'nsid: "knot"'
		if [ -n "${6:-}" ]; then
			printf 'mod-rrl:\n  - id: rrl\n    rate-limit: %s\n    slip: %s\n' "$6" "${7:-2}"
			module=("global-module: mod-rrl/rrl")
		fi
		knot_template "$dir" "$zone" "journal-content: none" "zonefile-load: whole" \
			"${module[@]}"
		printf '  - domain: "%s"\n' "$origin"
	} >"$dir/knot.conf"
	knot_start "$dir" "$dir/stderr.log"
	SERVER_PID=$PEER_PID
}

# start_shoal DIR PORT THREADS ZONE ORIGIN [EXTRA ARGS...]: shoald with NSID
# "shoal/<thread>", so shoal-flood --nsid can count answers per thread.
start_shoal() {
	local dir=$1 port=$2 threads=$3 zone=$4 origin=$5
	shift 5
	mkdir -p "$dir"
	${SERVER_WRAP:-} "$SHOALD" --listen "127.0.0.1@$port" --threads "$threads" --zone "${origin%.}=$zone" \
		--nsid shoal --control "$dir/control.sock" "$@" >"$dir/stderr.log" 2>&1 &
	SERVER_PID=$!
	T_PIDS="$T_PIDS $SERVER_PID"
}

# start_ceiling: tests/bench/shoald-ceiling (shoald with an echo for a
# responder) answers every query by echoing it with QR set, from the same
# worker loop: what this kernel allows, no DNS work.
start_ceiling() {
	SHOALD=$SHOALD_CEILING start_shoal "$@"
}

# start_echo: tests/bench/bench-echo, a bare blocking recvmmsg/sendmmsg echo
# (no event loop, no DNS): the least a UDP server can cost on this kernel.
start_echo() {
	local dir=$1 port=$2 threads=$3
	mkdir -p "$dir"
	${SERVER_WRAP:-} "$SHOAL_BUILDDIR/tests/bench/bench-echo" 127.0.0.1 "$port" "$threads" \
		>"$dir/stderr.log" 2>&1 &
	SERVER_PID=$!
	T_PIDS="$T_PIDS $SERVER_PID"
}

# start_affinity: shoald with --cpu-affinity yes (workers pinned, UDP steered
# to the worker of the CPU that received it), to set against the plain hash.
start_affinity() {
	start_shoal "$@" --cpu-affinity yes
}

# start_base: the shoald of another build (bench.sh -B), started as shoal is,
# to compare a change with what came before it on the same load.
start_base() {
	SHOALD=$SHOALD_BASE start_shoal "$@"
}

# wait_zone PORT NAME TIMEOUT_S [PID]: until the server answers NAME
# authoritatively; prints the seconds it took. Non-zero when it never does, or
# as soon as PID (when given) has exited.
wait_zone() {
	local port=$1 name=$2 limit=$3 pid=${4:-} t0 now
	t0=$(date +%s.%N)
	while :; do
		if "$DIG" @127.0.0.1 -p "$port" +norec +time=1 +tries=1 "$name" A 2>/dev/null |
			grep -q "status: NOERROR"; then
			now=$(date +%s.%N)
			awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.3f\n", b - a }'
			return 0
		fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		now=$(date +%s.%N)
		if awk -v a="$t0" -v b="$now" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
			return 1
		fi
		sleep 0.02
	done
}

# have_ipi_count: perf is there and the kernel has the ipi:ipi_send_cpu
# tracepoint, so the interprocessor interrupts a server sends can be counted
# (one each time an answer wakes the flood on its idle CPU). grep reads all
# of perf's list: with -q, perf would die of SIGPIPE and pipefail would say no.
have_ipi_count() {
	command -v perf >/dev/null && perf list 2>/dev/null | grep 'ipi:ipi_send_cpu ' >/dev/null
}

# tree PID: the process and all its descendants (NSD forks one process per server).
tree() {
	local p
	echo "$1"
	for p in $(pgrep -P "$1"); do
		tree "$p"
	done
}

# cpu_ticks PID: user+system clock ticks of the process tree, every thread.
cpu_ticks() {
	local p sum=0 t
	for p in $(tree "$1"); do
		# Fields after "(comm) ": utime is the 12th, stime the 13th.
		t=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 }')
		sum=$((sum + ${t:-0}))
	done
	echo "$sum"
}

# cpu_ns PID: nanoseconds on a CPU of every thread of the process tree (schedstat)
cpu_ns() {
	local p sum=0 t
	for p in $(tree "$1"); do
		t=$(cat /proc/"$p"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }')
		sum=$((sum + t))
	done
	echo "$sum"
}

# udp_drops PORT: datagrams the kernel dropped on the UDP sockets bound to
# PORT (the drops column of /proc/net/udp and udp6, summed over the sockets).
udp_drops() {
	local hex
	hex=$(printf '%04X' "$1")
	cat /proc/net/udp /proc/net/udp6 2>/dev/null |
		awk -v p=":$hex" 'NR > 1 && substr($2, length($2) - 4) == p { s += $NF } END { print s + 0 }'
}

# tree_kib PID FILE FIELD: FIELD (kB) of /proc/P/FILE summed over the tree.
tree_kib() {
	local p sum=0 k
	for p in $(tree "$1"); do
		k=$(awk -v f="$3:" '$1 == f { print $2 }' "/proc/$p/$2" 2>/dev/null)
		sum=$((sum + ${k:-0}))
	done
	echo "$sum"
}

# mem_kib PID: proportional set size of the process tree in KiB (PSS, so pages
# NSD's forked servers share are counted once, not once per process).
mem_kib() { tree_kib "$1" smaps_rollup Pss; }

# rss_kib PID: VmRSS of the process tree in KiB (shared pages count once per
# process: mem_kib is the fair figure, this is the familiar one).
rss_kib() { tree_kib "$1" status VmRSS; }

# hwm_kib PID: peak resident set (VmHWM) of the process tree in KiB, summed
# (a forked child's pages shared with its parent count in both).
hwm_kib() { tree_kib "$1" status VmHWM; }
