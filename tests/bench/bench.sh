#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Shoal's benchmark: Shoal, NSD and Knot DNS (and shoald-ceiling, the kernel
# ceiling) with the same generated zone and thread count, the same query mix
# from shoal-flood, interleaved round by round; then the spreading experiment
# (shoald socket-mode reuseport vs shared). Loopback only, free high ports,
# every run bounded in time. Writes a Markdown table and PNG charts.
#
# Usage: tests/bench/bench.sh [options] [BUILDDIR]
#   BUILDDIR         build folder with tools/shoal-flood, server/shoald and
#                    tests/bench/shoald-ceiling
#                    (default: $SHOAL_BUILDDIR, else the newest build/*/)
#   -s "SIZES"       zone sizes in names (default "10000 1000000")
#   -t THREADS       server threads (default 2)
#   -r ROUNDS        rounds of A B C ... (default 3)
#   -l SECONDS       length of one shoal-flood run (default 5)
#   -S "SERVERS"     among shoal nsd knot ceiling base affinity echo (default:
#                    all that exist but base and affinity; affinity is shoald
#                    with --cpu-affinity yes)
#   -B BUILDDIR      "base": the shoald of another build, to measure a change
#                    (-S "shoal base" -B build/before: before and after)
#   -o DIR           results folder (default tests/bench/results)
#   -P               skip the spreading experiment
#   -D               DNSSEC: sign each zone (ldns-signzone, NSEC3, no salt,
#                    0 iterations as RFC 9276 asks, ECDSA P-256) and send
#                    every query with DO, so answers carry RRSIGs and the
#                    NXDOMAIN share carries NSEC3 proofs
#   -L               zone loads only: in each round start every server,
#                    time start to first answer, stop it; no queries, no
#                    spreading experiment (report bench-load-DATE.md)
#   -Z FILE          with -L: load FILE (names under bench.test.) instead
#                    of a generated zone; -s then only labels it
#   -A SCPU:FCPU     pinned mode: every server on CPUs SCPU (taskset list),
#                    shoal-flood on FCPU; per round, three loads: saturation,
#                    paced at -Q q/s evenly spaced ("paced") and at -Q q/s
#                    with exponential gaps ("random", shoal-flood --arrivals
#                    random); answers/s, server CPU per answer (schedstat),
#                    IPIs sent per answer (perf, where the kernel has the
#                    ipi tracepoints) and the kernel's UDP drops for shoal, ceiling, echo
#                    (tests/bench/bench-echo), knot and nsd; -t defaults to 1
#                    and -s to 10000 (report bench-pinned-DATE.md)
#   -Q QPS           with -A: the paced loads' rate (default 40000)
#   -h               this text
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
usage() { sed -n '2,/^#   -h/p' "$0" | sed 's/^# \{0,1\}//'; }

sizes="10000 1000000" threads=2 rounds=3 seconds=5 servers="" outdir=$SRC/tests/bench/results
spread=yes dnssec=no base_build="" servers_given=no load_only=no zone_file=""
pinned="" paced_qps=40000 threads_given=no sizes_given=no
while getopts "s:t:r:l:S:o:B:PDLZ:A:Q:h" opt; do
	case $opt in
	s) sizes=$OPTARG sizes_given=yes ;;
	t) threads=$OPTARG threads_given=yes ;;
	r) rounds=$OPTARG ;;
	l) seconds=$OPTARG ;;
	S) servers=$OPTARG servers_given=yes ;;
	o) outdir=$OPTARG ;;
	B) base_build=$OPTARG ;;
	P) spread=no ;;
	D) dnssec=yes ;;
	L) load_only=yes ;;
	Z) zone_file=$OPTARG ;;
	A) pinned=$OPTARG ;;
	Q) paced_qps=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
. "$SRC/tests/bench/servers.sh"
build=$(bench_build "${1:-}")
if [ -z "$build" ] || [ ! -x "$build/tools/shoal-flood" ]; then
	echo "bench: no build folder with tools/shoal-flood; give it as an argument" >&2
	exit 1
fi
export SHOAL_BUILDDIR=$build SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
set +e

tools=(jq gnuplot "$DIG")
[ "$dnssec" = yes ] && tools+=(ldns-keygen ldns-signzone)
for tool in "${tools[@]}"; do
	command -v "$tool" >/dev/null || { echo "bench: $tool missing (apt-get install jq gnuplot dnsutils)" >&2; exit 1; }
done
have_shoald=no have_ceiling=no have_echo=no
[ -x "$SHOALD" ] && have_shoald=yes
[ -x "$SHOALD_CEILING" ] && have_ceiling=yes
[ -x "$build/tests/bench/bench-echo" ] && have_echo=yes
if [ -z "$servers" ]; then
	servers="nsd knot"
	[ "$have_shoald" = yes ] && servers="shoal $servers"
	[ "$have_ceiling" = yes ] && servers="$servers ceiling"
	[ -n "$pinned" ] && [ "$have_echo" = yes ] && servers="$servers echo"
fi
for s in $servers; do
	case $s in
	shoal) [ "$have_shoald" = yes ] || { echo "bench: $SHOALD missing" >&2; exit 1; } ;;
	ceiling) [ "$have_ceiling" = yes ] || { echo "bench: $SHOALD_CEILING missing" >&2; exit 1; } ;;
	echo) [ "$have_echo" = yes ] || { echo "bench: $build/tests/bench/bench-echo missing" >&2; exit 1; } ;;
	affinity) [ "$have_shoald" = yes ] || { echo "bench: $SHOALD missing" >&2; exit 1; } ;;
	base) [ -x "$base_build/server/shoald" ] || { echo "bench: base needs -B BUILDDIR with server/shoald" >&2; exit 1; }
		SHOALD_BASE=$(cd "$base_build" && pwd)/server/shoald ;;
	nsd) command -v nsd >/dev/null || { echo "bench: nsd missing (apt-get install nsd)" >&2; exit 1; } ;;
	knot) command -v knotd >/dev/null || { echo "bench: knotd missing (apt-get install knot)" >&2; exit 1; } ;;
	*) echo "bench: unknown server $s" >&2; exit 1 ;;
	esac
done
mkdir -p "$outdir"
stamp=$(date -u +%Y%m%d-%H%M)
[ "$dnssec" = yes ] && stamp=dnssec-$stamp
report=$outdir/bench-$stamp.md
runs=$T_DIR/runs.tsv
info=$T_DIR/info.tsv
: >"$runs"
: >"$info"
origin=bench.test.
# The query mix: 90% names that exist (A, some AAAA), 10% NXDOMAIN.
flood_args=(-T 1 -c 100 -i 200 -e 1232 -w 1 --json)
[ "$dnssec" = yes ] && flood_args=(-D "${flood_args[@]}")

log() { echo "bench: $*" >&2; }

# run_flood PORT OUT.json ARGS...: one bounded shoal-flood run.
run_flood() {
	local port=$1 out=$2
	shift 2
	"$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" "$@" >"$out" 2>>"$T_DIR/flood.err"
}

# sign_zone FILE ORIGIN: replace FILE by its NSEC3-signed form (fresh keys).
sign_zone() {
	local zsk ksk t0
	t0=$(date +%s.%N)
	zsk=$(cd "$T_DIR" && ldns-keygen -a ECDSAP256SHA256 -r /dev/urandom "$2") &&
		ksk=$(cd "$T_DIR" && ldns-keygen -a ECDSAP256SHA256 -r /dev/urandom -k "$2") &&
		ldns-signzone -n -t 0 -f "$1.signed" "$1" "$T_DIR/$zsk" "$T_DIR/$ksk" &&
		mv "$1.signed" "$1" || { log "signing $1 failed"; exit 1; }
	log "signed $1 in $(since "$t0") s"
}

median() {
	sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan";
		else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# raw_runs COLUMNS: the report's closing block, every run as measured.
raw_runs() {
	printf '\nRaw runs (%s):\n\n```\n' "$1"
	cat "$runs"
	printf '```\n'
}

# -L: zone loads only, every server started and stopped once per round,
# round by round (A B C A B C), so a busy machine weighs on all alike.
if [ "$load_only" = yes ]; then
	servers=${servers// ceiling/}
	report=$outdir/bench-load-$stamp.md
	for size in $sizes; do
		zone=$T_DIR/zone-$size.zone
		if [ -n "$zone_file" ]; then
			cp "$zone_file" "$zone" || exit 1
		else
			"$SRC/tests/bench/genzone.sh" "$origin" "$size" "$zone" "$T_DIR/q.txt" 10 10
			[ "$dnssec" = yes ] && sign_zone "$zone" "$origin"
		fi
		records=$(grep -cv '^[;$]' "$zone")
		for r in $(seq 1 "$rounds"); do
			for s in $servers; do
				p=$(free_port) || exit 1
				"start_$s" "$T_DIR/$s-$size-$r" "$p" "$threads" "$zone" "$origin"
				if ! load=$(wait_zone "$p" "h0.$origin" 120 "$SERVER_PID"); then
					log "$s did not start; its log:"
					tail -n 20 "$T_DIR/$s-$size-$r"/*.log >&2
					exit 1
				fi
				hwm=$(hwm_kib "$SERVER_PID")
				printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$s" "$r" "$load" "$records" "$hwm" >>"$runs"
				log "$size $s round $r: answering after ${load}s, peak RSS $((hwm / 1024)) MiB (load $(cut -d' ' -f1 /proc/loadavg))"
				stop_pid "$SERVER_PID" >/dev/null 2>&1
			done
		done
	done
	{
		echo "# Shoal zone loads, $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "Command: \`tests/bench/bench.sh -L -s \"$sizes\" -t $threads -r $rounds$([ "$dnssec" = yes ] && echo " -D")$([ -n "$zone_file" ] && echo " -Z $zone_file")$([ "$servers_given" = yes ] && echo " -S \"$servers\"")$([ -n "$base_build" ] && echo " -B $base_build")\`"
		echo "Machine: $(nproc) CPUs, Linux $(uname -r); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)."
		echo "Each server started $rounds times per zone, interleaved ($servers), $threads threads;"
		echo "seconds from start to the first answer from the zone (dig polled every 20 ms);"
		echo "peak RSS: VmHWM of the server's processes at the first answer, summed (median)."
		for size in $sizes; do
			echo
			echo "## $size names ($(awk -F'\t' -v z="$size" '$1 == z { print $5; exit }' "$runs") lines of records)"
			echo
			echo "| server | median s | min s | max s | peak RSS MiB | runs |"
			echo "|---|---|---|---|---|---|"
			for s in $servers; do
				v=$(awk -F'\t' -v z="$size" -v s="$s" '$1 == z && $2 == s { print $4 }' "$runs")
				m=$(awk -F'\t' -v z="$size" -v s="$s" '$1 == z && $2 == s { print $6 }' "$runs")
				printf '| %s | %s | %s | %s | %s | %s |\n' "$s" "$(echo "$v" | median)" \
					"$(echo "$v" | sort -g | head -1)" "$(echo "$v" | sort -g | tail -1)" \
					"$(($(echo "$m" | median | cut -d. -f1) / 1024))" "$(echo $v)"
			done
		done
	} >"$report"
	cat "$report"
	log "wrote $report"
	exit 0
fi

# -A: pinned. The servers on their CPUs, the flood on its own, so a server's
# CPU per answer is its own cost and not a share of a contended CPU; three
# loads (saturation, and a paced rate where wake-ups dominate, evenly spaced
# and at random), every server in each round (A B C A B C), medians.
if [ -n "$pinned" ]; then
	command -v taskset >/dev/null || { echo "bench: taskset missing (util-linux)" >&2; exit 1; }
	server_cpus=${pinned%%:*} flood_cpus=${pinned#*:}
	[ "$threads_given" = yes ] || threads=1
	[ "$sizes_given" = yes ] || sizes=10000
	report=$outdir/bench-pinned-$stamp.md
	export SERVER_WRAP="taskset -c $server_cpus"
	# paced: evenly spaced, so whether an answer finds the flood asleep hangs
	# on the phase between the server's latency and the send period; random:
	# a Poisson process at the same mean rate, as independent clients send,
	# where that phase does not exist
	loads="saturation paced random"
	# ipi_fit LOAD: with IPI counts and at least two rounds, how much of
	# each server's CPU under LOAD they account for: CPU = the server's own
	# constant + b x IPIs per answer, b common to all (least squares within
	# each server's rounds of that load alone: the loads differ in more than
	# their IPIs); each constant over the echo's is the ratio the servers
	# would have with the same IPI rate.
	ipi_fit() {
		awk -F'\t' -v z="$size" -v l="$1" -v servers="$servers" '
			$1 == z && $2 == l && $14 != "-" && $14 != "" {
				n[$3]++; c[$3, n[$3]] = $6; i[$3, n[$3]] = $14
				sc[$3] += $6; si[$3] += $14
			}
			END {
				k = split(servers, sv, " ")
				for (j = 1; j <= k; j++) {
					s = sv[j]
					for (r = 1; r <= n[s]; r++) {
						dc = c[s, r] - sc[s] / n[s]; di = i[s, r] - si[s] / n[s]
						num += dc * di; den += di * di
					}
				}
				if (den <= 0 || !n["echo"])
					exit
				b = num / den
				e = sc["echo"] / n["echo"] - b * si["echo"] / n["echo"]
				printf "\nIPIs account for %.2f µs each (fit over every %s round: the server'"'"'s\n", b, l
				printf "CPU = its own constant + that x its IPIs per answer). At the same IPI rate:\n\n"
				printf "| server | CPU µs/answer at 0 IPIs | vs echo at the same IPI rate |\n|---|---|---|\n"
				for (j = 1; j <= k; j++) {
					s = sv[j]
					if (!n[s])
						continue
					a = sc[s] / n[s] - b * si[s] / n[s]
					printf "| %s | %.2f | %.2f |\n", s, a, a / e
				}
			}' "$runs"
	}
	# the interrupts a server sends to wake the flood's idle CPU: about 5 us
	# each in a guest, and how many there are moves with the machine
	ipi=no
	have_ipi_count && ipi=yes
	for size in $sizes; do
		zone=$T_DIR/zone-$size.zone
		queries=$T_DIR/queries-$size.txt
		"$SRC/tests/bench/genzone.sh" "$origin" "$size" "$zone" "$queries" 100000 10
		declare -A port pid
		for s in $servers; do
			port[$s]=$(free_port) || exit 1
			"start_$s" "$T_DIR/$s-$size" "${port[$s]}" "$threads" "$zone" "$origin"
			pid[$s]=$SERVER_PID
			if ! wait_zone "${port[$s]}" "h0.$origin" 120 "${pid[$s]}" >/dev/null; then
				log "$s did not start; its log:"
				tail -n 20 "$T_DIR/$s-$size"/*.log >&2
				exit 1
			fi
		done
		for r in $(seq 1 "$rounds"); do
			for load in $loads; do
				pace=()
				[ "$load" = paced ] && pace=(-Q "$paced_qps")
				[ "$load" = random ] && pace=(-Q "$paced_qps" --arrivals random)
				for s in $servers; do
					out=$T_DIR/$s-$size-$load-$r.json
					if [ "$ipi" = yes ]; then
						# the whole tree: NSD answers from forked children
						perf stat -x, -e ipi:ipi_send_cpu \
							-p "$(tree "${pid[$s]}" | paste -sd,)" \
							-o "$T_DIR/ipi.perf" 2>/dev/null &
						perf_pid=$!
						sleep 0.2
					fi
					d0=$(udp_drops "${port[$s]}") c0=$(cpu_ns "${pid[$s]}")
					taskset -c "$flood_cpus" "$SHOAL_FLOOD" -s 127.0.0.1 -p "${port[$s]}" \
						-d "$queries" -l "$seconds" "${pace[@]}" "${flood_args[@]}" \
						>"$out" 2>>"$T_DIR/flood.err"
					c1=$(cpu_ns "${pid[$s]}") d1=$(udp_drops "${port[$s]}")
					ipis=-
					if [ "$ipi" = yes ]; then
						kill -INT "$perf_pid" && wait "$perf_pid"
						ipis=$(awk -F, '$3 ~ /ipi_send_cpu/ && $1 ~ /^[0-9]+$/ { print $1 }' \
							"$T_DIR/ipi.perf")
					fi
					jq -r --arg size "$size" --arg l "$load" --arg s "$s" --arg r "$r" \
						--arg ns $((c1 - c0)) --arg drops $((d1 - d0)) \
						--arg la "$(cut -d' ' -f1 /proc/loadavg)" --arg ipis "${ipis:--}" \
						'[$size, $l, $s, $r, .qps, (($ns | tonumber) / 1000 /
						  (if .answered > 0 then .answered else 1 end)), .latency_ms.p50,
						  .latency_ms.p99, .answered, .lost, .sent, $drops, $la,
						  (if $ipis == "-" then "-" else ($ipis | tonumber) /
						   (if .answered > 0 then .answered else 1 end) end)] | @tsv' \
						"$out" >>"$runs" || log "$s $load round $r: no report"
					log "$size $load $s round $r: $(tail -1 "$runs" | cut -f5,6,10,12 | tr '\t' ' ') (qps µs/answer lost drops)"
				done
			done
		done
		for s in $servers; do
			stop_pid "${pid[$s]}" >/dev/null 2>&1
		done
		unset port pid
	done
	{
		echo "# Shoal benchmark, pinned, $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "Command: \`tests/bench/bench.sh -A $pinned -Q $paced_qps -s \"$sizes\" -t $threads -r $rounds -l $seconds$([ "$servers_given" = yes ] && echo " -S \"$servers\"")$([ -n "$base_build" ] && echo " -B $base_build")\`"
		echo "Machine: $(nproc) CPUs, Linux $(uname -r); every server (all its threads and processes)"
		echo "on CPUs $server_cpus, $threads worker thread(s); shoal-flood on CPUs $flood_cpus"
		echo "(${flood_args[*]:0:${#flood_args[@]}-1} -l $seconds), unpaced (saturation), -Q $paced_qps (paced,"
		echo "evenly spaced) and -Q $paced_qps --arrivals random (random: exponential gaps, a Poisson process);"
		echo "$rounds rounds, in each every load on every server in turn ($servers); medians."
		echo "CPU µs/answer: the server's threads' time on a CPU (/proc/PID/task/*/schedstat) over the"
		echo "run divided by answers. Kernel drops: the drops column of /proc/net/udp for the"
		echo "server's port over the run (receive buffer full); lost: queries the flood saw no"
		echo "answer to. Load average (1 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
		echo "vs echo: the median CPU over the echo's; per round: the median of each round's"
		echo "ratio, the echo's run of the same round as the reference (rounds interleave the"
		echo "servers, so this cancels the machine's slow drift). IPIs/answer: interprocessor"
		echo "interrupts the server sent (perf, ipi:ipi_send_cpu), each an answer that found"
		echo "the flood asleep on its idle CPU and paid to wake it; they move with the machine."
		for size in $sizes; do
			for load in $loads; do
				echo
				case $load in
				paced) title="paced at $paced_qps q/s, even arrivals" ;;
				random) title="paced at $paced_qps q/s, random arrivals" ;;
				*) title=$load ;;
				esac
				echo "## $size names, $title"
				echo
				echo "| server | answers/s | CPU µs/answer | vs echo | vs echo, per round | IPIs/answer | p50 ms | p99 ms | lost | kernel drops | load avg |"
				echo "|---|---|---|---|---|---|---|---|---|---|---|"
				get() { awk -F'\t' -v z="$size" -v l="$load" -v s="$1" -v c="$2" \
					'$1 == z && $2 == l && $3 == s { print $c }' "$runs" | median; }
				# per_round S: each round's CPU of S over the echo's in that round
				per_round() { awk -F'\t' -v z="$size" -v l="$load" -v s="$1" '
					$1 == z && $2 == l && $3 == s { c[$4] = $6 }
					$1 == z && $2 == l && $3 == "echo" { e[$4] = $6 }
					END { for (r in c) if (e[r] > 0) print c[r] / e[r] }' "$runs" | median; }
				ipis() { awk -F'\t' -v z="$size" -v l="$load" -v s="$1" \
					'$1 == z && $2 == l && $3 == s && $14 != "-" && $14 != "" { print $14 }' \
					"$runs" | median; }
				ec=$(get echo 6)
				for s in $servers; do
					awk -v s="$s" -v q="$(get "$s" 5)" -v c="$(get "$s" 6)" -v ec="$ec" \
						-v pr="$(per_round "$s")" -v ipi="$(ipis "$s")" \
						-v p50="$(get "$s" 7)" -v p99="$(get "$s" 8)" -v lost="$(get "$s" 10)" \
						-v drops="$(get "$s" 12)" -v la="$(get "$s" 13)" \
						'BEGIN { printf "| %s | %.0f | %.2f | %s | %s | %s | %.3f | %.3f | %s | %s | %s |\n", s, q, c,
							(ec + 0 > 0 ? sprintf("%.2f", c / ec) : "-"),
							(pr != "nan" ? sprintf("%.2f", pr) : "-"),
							(ipi != "nan" ? sprintf("%.2f", ipi) : "-"), p50, p99, lost, drops, la }'
				done
				[ "$load" != saturation ] && ipi_fit "$load"
			done
		done
		raw_runs "size, load, server, round, qps, CPU µs/answer, p50, p99, answered, lost, sent, kernel drops, load avg, IPIs/answer"
	} >"$report"
	for size in $sizes; do
		for s in $servers; do
			printf '%s' "$s"
			for load in $loads; do
				printf '\t%s' "$(awk -F'\t' -v z="$size" -v l="$load" -v s="$s" \
					'$1 == z && $2 == l && $3 == s { print $6 }' "$runs" | median)"
			done
			printf '\n'
		done >"$T_DIR/pinned-$size.tsv"
		gnuplot <<-GP 2>>"$T_DIR/gnuplot.err" || log "gnuplot failed: $(cat "$T_DIR/gnuplot.err")"
		set terminal pngcairo size 900,500
		set style data histograms
		set style histogram clustered
		set key below
		set style fill solid 0.8 border -1
		set grid ytics
		set yrange [0:*]
		set datafile separator "\t"
		set output "$outdir/bench-pinned-$stamp-$size-cpu.png"
		set title "Server CPU per answer, pinned ($threads thread(s) on CPU $server_cpus, flood on $flood_cpus), $size names"
		set ylabel "microseconds"
		plot "$T_DIR/pinned-$size.tsv" using 2:xticlabels(1) title "saturation" lc rgb "#3070b0", \
			'' using 3 title "paced $paced_qps q/s, even" lc rgb "#b05030", \
			'' using 4 title "paced $paced_qps q/s, random" lc rgb "#40a040"
		GP
	done
	cat "$report"
	log "wrote $report and $outdir/bench-pinned-$stamp-*.png"
	exit 0
fi

for size in $sizes; do
	zone=$T_DIR/zone-$size.zone
	queries=$T_DIR/queries-$size.txt
	log "zone of $size names"
	"$SRC/tests/bench/genzone.sh" "$origin" "$size" "$zone" "$queries" 100000 10
	[ "$dnssec" = yes ] && sign_zone "$zone" "$origin"
	declare -A port pid
	for s in $servers; do
		port[$s]=$(free_port) || exit 1
		"start_$s" "$T_DIR/$s-$size" "${port[$s]}" "$threads" "$zone" "$origin"
		pid[$s]=$SERVER_PID
		if ! load=$(wait_zone "${port[$s]}" "h0.$origin" 120 "${pid[$s]}"); then
			log "$s did not start; its log:"
			tail -n 20 "$T_DIR/$s-$size"/*.log >&2
			exit 1
		fi
		# The ceiling loads nothing: its start-up time is not a zone load.
		printf '%s\t%s\tload_s\t%s\n' "$size" "$s" "$load" >>"$info"
		log "$s on port ${port[$s]}, answering after ${load}s"
	done
	for r in $(seq 1 "$rounds"); do
		for s in $servers; do
			out=$T_DIR/$s-$size-$r.json
			c0=$(cpu_ticks "${pid[$s]}")
			run_flood "${port[$s]}" "$out" -d "$queries" -l "$seconds" "${flood_args[@]}"
			c1=$(cpu_ticks "${pid[$s]}")
			jq -r --arg size "$size" --arg s "$s" --arg r "$r" --arg ticks $((c1 - c0)) \
				--arg hz "$(getconf CLK_TCK)" \
				'[$size, $s, $r, .qps, (($ticks | tonumber) / ($hz | tonumber) * 1e6 /
				  (if .answered > 0 then .answered else 1 end)), .latency_ms.p50,
				  .latency_ms.p99, .answered, .lost, .sent] | @tsv' "$out" >>"$runs" ||
				log "$s round $r: no report"
			log "$size $s round $r: $(jq -r '"\(.qps) qps, lost \(.lost)"' "$out" 2>/dev/null)"
		done
	done
	for s in $servers; do
		printf '%s\t%s\tmem_kib\t%s\n' "$size" "$s" "$(mem_kib "${pid[$s]}")" >>"$info"
		printf '%s\t%s\trss_kib\t%s\n' "$size" "$s" "$(rss_kib "${pid[$s]}")" >>"$info"
		stop_pid "${pid[$s]}" >/dev/null 2>&1
	done
	unset port pid
done

# The spreading experiment: how evenly do Shoal's threads share 1000 clients?
spread_tsv=$T_DIR/spread.tsv
: >"$spread_tsv"
if [ "$spread" = yes ] && [ "$have_shoald" = yes ]; then
	zone=$T_DIR/zone-spread.zone
	"$SRC/tests/bench/genzone.sh" "$origin" 1000 "$zone" "$T_DIR/queries-spread.txt" 10000 10
	for mode in reuseport shared cpu; do
		for n in 2 4; do
			p=$(free_port) || exit 1
			if [ "$mode" = cpu ]; then
				start_affinity "$T_DIR/spread-$mode-$n" "$p" "$n" "$zone" "$origin"
			else
				start_shoal "$T_DIR/spread-$mode-$n" "$p" "$n" "$zone" "$origin" --socket-mode "$mode"
			fi
			wait_zone "$p" "h0.$origin" 30 >/dev/null || { log "shoald $mode did not start"; exit 1; }
			out=$T_DIR/spread-$mode-$n.json
			run_flood "$p" "$out" -d "$T_DIR/queries-spread.txt" -l "$seconds" -T 2 -c 500 \
				-i 1000 -w 1 --nsid --json
			stop_pid "$SERVER_PID" >/dev/null 2>&1
			jq -r --arg m "$mode" --arg n "$n" '[$m, $n, .qps, (.nsid.max_min // "inf"),
				.nsid.stickiness, (.nsid.threads | map(tostring) | join("/")),
				.nsid.sockets_answered] | @tsv' "$out" >>"$spread_tsv"
			log "spread $mode $n threads: $(tail -1 "$spread_tsv")"
		done
	done
fi

# The report.
base=shoal
case " $servers " in *" shoal "*) ;; *) base=${servers%% *} ;; esac
{
	echo "# Shoal benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`tests/bench/bench.sh -s \"$sizes\" -t $threads -r $rounds -l $seconds$([ "$dnssec" = yes ] && echo " -D")$([ "$servers_given" = yes ] && echo " -S \"$servers\"")$([ -n "$base_build" ] && echo " -B $base_build")\`"
	echo "Machine: $(nproc) CPUs, Linux $(uname -r); servers: $threads threads each;"
	echo "load: shoal-flood ${flood_args[*]:0:${#flood_args[@]}-1} -l $seconds, mix 90% existing names, 10% NXDOMAIN;"
	[ "$dnssec" = yes ] && echo "DNSSEC (-D): zones signed with ldns-signzone -n -t 0 (NSEC3, no salt), ECDSA P-256; every query with DO."
	echo "$rounds rounds interleaved ($servers); medians. Client and server share the machine."
	echo "CPU/query: user+system time of the server's processes over the run divided by answers;"
	echo "with client and servers on the same few CPUs, this (not qps) is the figure that compares"
	echo "servers, and CPU vs ceiling (server/ceiling) says how close each comes to the kernel's cost."
	echo "Memory after the rounds: PSS (shared pages split between processes) and VmRSS, summed"
	echo "over the server's processes. Zone load: start to the first answer from the zone."
	echo "Ratios are server/$base."
	for size in $sizes; do
		echo
		echo "## $size names"
		echo
		echo "| server | qps | vs $base | vs ceiling | CPU µs/query | vs $base | vs ceiling | p50 ms | p99 ms | PSS MiB | VmRSS MiB | zone load s |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
		get() { awk -F'\t' -v z="$size" -v s="$1" -v c="$2" '$1 == z && $2 == s { print $c }' "$runs" | median; }
		inf() { awk -F'\t' -v z="$size" -v s="$1" -v k="$2" '$1 == z && $2 == s && $3 == k { print $4 }' "$info"; }
		bq=$(get "$base" 4) bc=$(get "$base" 5) cq=$(get ceiling 4) cc=$(get ceiling 5)
		for s in $servers; do
			q=$(get "$s" 4) c=$(get "$s" 5)
			awk -v s="$s" -v q="$q" -v c="$c" -v bq="$bq" -v bc="$bc" -v cq="$cq" -v cc="$cc" \
				-v p50="$(get "$s" 6)" -v p99="$(get "$s" 7)" -v m="$(inf "$s" mem_kib)" -v rss="$(inf "$s" rss_kib)" \
				-v l="$(inf "$s" load_s)" 'function r(a, b) { return (b + 0 > 0 && a != "nan") ? sprintf("%.2f", a / b) : "-" }
				BEGIN { printf "| %s | %.0f | %s | %s | %.2f | %s | %s | %.3f | %.3f | %.1f | %.1f | %s |\n",
					s, q, r(q, bq), r(q, cq), c, r(c, bc), r(c, cc), p50, p99, m / 1024, rss / 1024,
					(s == "ceiling" ? "-" : l) }'
		done
	done
	if [ -s "$spread_tsv" ]; then
		echo
		echo "## Spreading: shoald socket-mode (cpu: reuseport with --cpu-affinity yes), 1000 client sockets (shoal-flood -T 2 -c 500 --nsid)"
		echo
		echo "| socket-mode | threads | qps | answers per thread | max/min | stickiness |"
		echo "|---|---|---|---|---|---|"
		awk -F'\t' '{ printf "| %s | %s | %.0f | %s | %s | %.3f (%s sockets) |\n", $1, $2, $3, $6,
			($4 == "inf" ? "inf" : sprintf("%.3f", $4)), $5, $7 }' "$spread_tsv"
	fi
	raw_runs "size, server, round, qps, CPU µs/query, p50, p99, answered, lost, sent"
} >"$report"

# Charts: throughput and CPU per query per server and size; shares per mode.
for size in $sizes; do
	for s in $servers; do
		printf '%s\t%s\t%s\t%s\n' "$size" "$s" \
			"$(awk -F'\t' -v z="$size" -v s="$s" '$1 == z && $2 == s { print $4 }' "$runs" | median)" \
			"$(awk -F'\t' -v z="$size" -v s="$s" '$1 == z && $2 == s { print $5 }' "$runs" | median)"
	done
done >"$T_DIR/chart.tsv"
gnuplot <<-GP 2>>"$T_DIR/gnuplot.err" || log "gnuplot failed: $(cat "$T_DIR/gnuplot.err")"
	set terminal pngcairo size 900,500
	set style data histograms
	set style fill solid 0.8 border -1
	set boxwidth 0.8
	set grid ytics
	set yrange [0:*]
	set datafile separator "\t"
	set xtics rotate by -30
	set output "$outdir/bench-$stamp-qps.png"
	set title "Answers per second ($threads server threads, shoal-flood on the same machine)"
	set ylabel "queries/s"
	plot "$T_DIR/chart.tsv" using 3:xticlabels(sprintf("%s %s", strcol(2), strcol(1))) title "qps" lc rgb "#3070b0"
	set output "$outdir/bench-$stamp-cpu.png"
	set title "Server CPU time per answered query"
	set ylabel "microseconds"
	plot "$T_DIR/chart.tsv" using 4:xticlabels(sprintf("%s %s", strcol(2), strcol(1))) title "CPU µs/query" lc rgb "#b05030"
GP
if [ -s "$spread_tsv" ]; then
	# One row per (mode, threads, thread index): that thread's share of answers.
	awk -F'\t' '{ n = split($6, a, "/"); t = 0; for (i = 1; i <= n; i++) t += a[i];
		for (i = 1; i <= n; i++) printf "%s-%st-%d\t%.4f\n", $1, $2, i - 1, (t ? a[i] / t : 0) }' \
		"$spread_tsv" >"$T_DIR/shares.tsv"
	gnuplot <<-GP 2>>"$T_DIR/gnuplot.err" || log "gnuplot failed: $(cat "$T_DIR/gnuplot.err")"
	set terminal pngcairo size 900,500
	set style data histograms
	set style fill solid 0.8 border -1
	set grid ytics
	set yrange [0:*]
	set datafile separator "\t"
	set xtics rotate by -45
	set output "$outdir/bench-$stamp-spread.png"
	set title "Share of answers per server thread, 1000 client sockets"
	set ylabel "share"
	plot "$T_DIR/shares.tsv" using 2:xticlabels(1) title "share" lc rgb "#40a040"
	GP
fi
cat "$report"
log "wrote $report and $outdir/bench-$stamp-*.png"
