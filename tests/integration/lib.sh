# SPDX-License-Identifier: GPL-3.0-or-later
# Shared helpers for the integration tests: start the real daemon on a free
# loopback port, ask it with dig, count passes and failures.
# Sourced by each tests/integration/*.sh; needs SHOAL_BUILDDIR and SHOAL_SRCDIR
# (set by `make check`; defaults work from a build in the source tree).

set -u
SHOAL_BUILDDIR=${SHOAL_BUILDDIR:-$(pwd)}
SHOAL_SRCDIR=${SHOAL_SRCDIR:-$SHOAL_BUILDDIR}
DIG=${DIG:-dig}
SHOALD=$SHOAL_BUILDDIR/server/shoald
SHOALD_CEILING=$SHOAL_BUILDDIR/tests/bench/shoald-ceiling
SHOALCTL=$SHOAL_BUILDDIR/tools/shoalctl
SHOAL_FLOOD=$SHOAL_BUILDDIR/tools/shoal-flood
HOLDTHREAD=$SHOAL_BUILDDIR/tests/integration/holdthread
EXAMPLES=$SHOAL_SRCDIR/examples

T_PASSED=0
T_FAILED=0
T_NAME=$(basename "$0" .sh)
T_DIR=$(mktemp -d "/tmp/shoal-$T_NAME.XXXXXX")
T_PIDS=""

t_cleanup() {
	for p in $T_PIDS; do
		kill "$p" 2>/dev/null
	done
	# bounded: a process that does not heed SIGTERM must not hold the test for good
	for p in $T_PIDS; do
		wait_within "$p" 10 2>/dev/null
	done
	# a failed run's sanitizer reports would go with the folder: into the test's log first
	local report='^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: )|runtime error: '
	if [ "$T_FAILED" -gt 0 ] && [ -d "$T_DIR" ]; then
		grep -rlE "$report" "$T_DIR" 2>/dev/null | while read -r f; do
			echo "--- sanitizer report in $(basename "$f") ---"
			awk -v re="$report" '$0 ~ re { on = 1 } on && n++ < 80' "$f"
		done
	fi
	rm -rf "$T_DIR"
}
trap t_cleanup EXIT

# pass/fail MESSAGE: record one check.
# skip_memory_under_sanitizer: memory is the kernel's count (VmRSS, VmHWM), and a
# sanitizer's allocator keeps what is freed: such a test skips itself there.
skip_memory_under_sanitizer() {
	if [ -n "${SHOAL_SANITIZER:-}" ]; then
		echo "SKIP: memory is not measured under the $SHOAL_SANITIZER sanitizer"
		exit 77
	fi
}

# need_nobody WHY: skip the test (77) unless it runs as root on a system with the user nobody
# and setpriv: WHY says what for. Sets AS_NOBODY, the words that run a command with nobody's
# uid and gid and no supplementary groups: "${AS_NOBODY[@]}" CMD & leaves CMD's pid in $!
# (a shell function run in the background would leave its subshell's). The checkout may lie
# where nobody cannot read (/root is mode 0700 on a fresh machine): NOBODY_DIR is a folder of
# the test's that nobody can read, a ThreadSanitizer suppressions file named in TSAN_OPTIONS
# is read from a copy there, and nobody_copy puts a program or file there too.
need_nobody() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: $T_NAME needs root ($1)"
		exit 77
	fi
	if ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
		echo "SKIP: no user nobody or no setpriv"
		exit 77
	fi
	NOBODY_DIR=$T_DIR/for-nobody
	mkdir -p "$NOBODY_DIR" && chmod 755 "$T_DIR" "$NOBODY_DIR" || exit 99
	local opts=${TSAN_OPTIONS:-}
	if [ -n "$opts" ]; then
		cp "$SHOAL_SRCDIR/tests/tsan.supp" "$NOBODY_DIR/" || exit 99
		opts=${opts//"$SHOAL_SRCDIR/tests/tsan.supp"/"$NOBODY_DIR/tsan.supp"}
	fi
	AS_NOBODY=(env "TSAN_OPTIONS=$opts" setpriv --reuid nobody --regid "$(id -g nobody)"
		--clear-groups)
}

# nobody_copy FILE: a copy of FILE in NOBODY_DIR (need_nobody first), mode kept; prints its path.
nobody_copy() {
	cp -p "$1" "$NOBODY_DIR/" && chmod o+r "$NOBODY_DIR/$(basename "$1")" || exit 99
	printf '%s\n' "$NOBODY_DIR/$(basename "$1")"
}

# as_nobody CMD...: run CMD in the foreground as nobody (need_nobody first).
as_nobody() {
	"${AS_NOBODY[@]}" "$@"
}

pass() { T_PASSED=$((T_PASSED + 1)); echo "PASS: $*"; }
fail() { T_FAILED=$((T_FAILED + 1)); echo "FAIL: $*"; }

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1: expected [$2], got [$3]"
	fi
}

# check_match WHAT REGEX TEXT (extended regex, grep -E)
check_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		pass "$1"
	else
		fail "$1: [$3] does not match /$2/"
	fi
}

# free_port: a port free for both UDP and TCP on loopback, from 10000-31999
# (below the kernel's ephemeral range, so no client socket takes it meanwhile)
# chosen by process id and chance, so two runs at once do not collide.
free_port() {
	local p tries=0
	while [ $tries -lt 200 ]; do
		p=$((10000 + (RANDOM * 32768 + RANDOM + $$) % 22000))
		if ! ss -Hlnu "sport = :$p" | grep -q . && ! ss -Hlnt "sport = :$p" | grep -q .; then
			echo "$p"
			return 0
		fi
		tries=$((tries + 1))
	done
	echo "no free port" >&2
	return 1
}

# start_shoald PORT ARGS...: run the daemon in the background (log in
# $T_DIR/shoald.log), wait until it answers on 127.0.0.1@PORT and has read
# its zones (it answers while it reads them, SERVFAIL for a zone not read
# yet); sets SHOALD_PID.
start_shoald() {
	local port=$1 lines
	shift
	lines=0
	[ -f "$T_DIR/shoald.log" ] && lines=$(wc -l <"$T_DIR/shoald.log")
	"$SHOALD" "$@" >>"$T_DIR/shoald.log" 2>&1 &
	SHOALD_PID=$!
	T_PIDS="$T_PIDS $SHOALD_PID"
	# a start that fails ends the process: that is seen at once; a slow one (thousands of
	# zones in a sanitizer build) gets two minutes
	wait_until 120 started "$port"
	wait_until 120 zones_read "$lines"
	answering 127.0.0.1 "$port" && zones_read "$lines" || {
		echo "shoald did not start; its log:" >&2
		cat "$T_DIR/shoald.log" >&2
		return 1
	}
}

# zones_read LINES: the log after its first LINES lines says shoald has read its
# zones (its first load is done, or failed for a zone; the ceiling has none), or
# shoald has exited.
zones_read() {
	tail -n +"$(($1 + 1))" "$T_DIR/shoald.log" |
		grep -qE 'first load (done|failed)|no zone is consulted' || gone "$SHOALD_PID"
}

# calc EXPR: EXPR's value in floating point (awk's arithmetic: + - * / and
# parentheses), printed with three decimals; what bc would be asked, from a tool
# every Debian has.
calc() {
	awk "BEGIN { printf \"%.3f\\n\", $1 }" </dev/null
}

# since START: the seconds from START (a `date +%s.%N` reading) to now.
since() {
	calc "$(date +%s.%N) - $1"
}

# wait_until SECONDS COMMAND...: run COMMAND every 0.1 s until it succeeds, for about
# SECONDS at most (the command's own time comes on top); returns 0 when it did.
wait_until() {
	local tries=$(($1 * 10))
	shift
	until "$@"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

# answering ADDR PORT: the server there gives any DNS answer (even REFUSED).
answering() {
	"$DIG" @"$1" -p "$2" +time=1 +tries=1 . SOA >/dev/null 2>&1
}

# wait_answering ADDR PORT: up to 10 s for any DNS answer.
wait_answering() {
	wait_until 10 answering "$1" "$2"
}

# started PORT: shoald (SHOALD_PID) answers on PORT, or has exited.
started() {
	answering 127.0.0.1 "$1" || gone "$SHOALD_PID"
}

# gone PID: PID has exited (this shell reaps its own children as they end).
gone() {
	! kill -0 "$1" 2>/dev/null
}

# stop_pid PID: SIGTERM and wait; returns the exit status.
stop_pid() {
	kill -TERM "$1" 2>/dev/null
	wait "$1"
}

# stop_within PID [SECONDS]: SIGTERM, then up to SECONDS (default 60) for PID to exit;
# returns its exit status, or 124 after killing a PID that did not stop in time. Call it
# in the shell that started PID (not in $(...)): only that shell can wait for it.
stop_within() {
	kill -TERM "$1" 2>/dev/null
	wait_within "$1" "${2:-60}"
}

# wait_within PID [SECONDS]: up to SECONDS (default 60) for PID, which ends by itself, to
# exit; returns its exit status, or 124 after killing it. Same shell as stop_within.
wait_within() {
	if wait_until "${2:-60}" gone "$1"; then
		wait "$1"
		return $?
	fi
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 124
}

# noisy_zones N: N zone files in T_DIR, z1.test. to zN.test., each with 60 records
# outside the zone, so each load logs many warning lines (the log tests fill a stalled
# reader with them); sets the array ZONES to shoald's --zone arguments for them.
noisy_zones() {
	local i
	ZONES=()
	for i in $(seq 1 "$1"); do
		{
			printf '$ORIGIN z%d.test.\n$TTL 300\n@ SOA ns1 hm 1 3600 600 86400 300\n' "$i"
			printf '@ NS ns1\nns1 A 192.0.2.1\n'
			seq 1 60 | sed 's/.*/w&.example.org. A 192.0.2.1/'
		} >"$T_DIR/z$i.zone"
		ZONES+=(--zone "z$i.test=$T_DIR/z$i.zone")
	done
}

# q PORT DIG-ARGS...: dig on loopback with settings that make output stable.
q() {
	local port=$1
	shift
	"$DIG" @127.0.0.1 -p "$port" +norec +time=2 +tries=1 "$@"
}

# verify_signed PORT ZONE WHEN: ZONE transferred out (AXFR, into $T_DIR/ZONE.axfr) holds a
# DNSKEY and passes ldns-verify-zone and BIND's dnssec-verify (their output shown on failure).
verify_signed() {
	local f=$T_DIR/$2.axfr rc
	"$DIG" @127.0.0.1 -p "$1" +nocmd +nostats +noall +answer "$2" AXFR >"$f"
	check_match "$2 $3: the transfer holds DNSKEY and RRSIG" "DNSKEY" "$(awk '$4 == "DNSKEY"' "$f")"
	ldns-verify-zone "$f" >"$f.ldns" 2>&1
	rc=$?
	check_eq "$2 $3: ldns-verify-zone passes it" 0 $rc
	[ $rc -eq 0 ] || cat "$f.ldns"
	dnssec-verify -o "$2" "$f" >"$f.bind" 2>&1
	rc=$?
	check_eq "$2 $3: dnssec-verify passes it" 0 $rc
	[ $rc -eq 0 ] || cat "$f.bind"
}

# done_testing: print the closing count line and exit non-zero on failure.
done_testing() {
	echo "$T_NAME: $T_PASSED passed, $T_FAILED failed"
	[ "$T_FAILED" -eq 0 ] && [ "$T_PASSED" -gt 0 ]
	exit $?
}

# wait_ready FILE PID: up to 15 s for FILE to appear, or until PID (the
# process that makes it) ends; returns 0 when FILE is there.
wait_ready() {
	wait_until 15 ready_or_gone "$1" "$2"
	[ -e "$1" ]
}
ready_or_gone() { [ -e "$1" ] || gone "$2"; }

# wait_line FILE REGEX: up to 30 s for a line of FILE to match REGEX (grep -E).
wait_line() {
	wait_until 30 grep -Eq -- "$2" "$1" 2>/dev/null
}

# check_help_man WHAT HELP MANPAGE: the options HELP (a program's --help text) names and
# those MANPAGE marks up (.B \-s, .BI \-\-long, .BR \-h ", " \-\-help) are the same.
check_help_man() {
	local help_opts man_opts
	help_opts=$(printf '%s\n' "$2" | grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | tr -d ' ,' |
		sort -u)
	man_opts=$(grep -E '^\.(B|BI|BR) \\-' "$3" | grep -oE '(\\-)+[a-zA-Z][a-zA-Z\\-]*' |
		sed 's/\\-/-/g' | sort -u)
	check_eq "$1" "$help_opts" "$man_opts"
}

# json_value JSON KEY: the first scalar called KEY in the JSON text, quotes removed.
json_value() {
	printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -1 | cut -d: -f2- | tr -d '"'
}

# hold_reload CTL: a reload thread stuck in the kernel. holdthread stops the next thread
# SHOALD_PID makes as it opens a file, and keeps it there; then a reload is asked on the
# control socket CTL. Sets HOLD_PID, RELOAD_PID; returns 0 once the thread is held. An attach
# that fails (seen once on a loaded machine, after one had worked) is tried again before the
# case is skipped (77).
hold_reload() {
	local try
	for try in 1 2 3; do
		"$HOLDTHREAD" "$SHOALD_PID" >"$T_DIR/hold.out" 2>&1 &
		HOLD_PID=$!
		T_PIDS="$T_PIDS $HOLD_PID"
		wait_line "$T_DIR/hold.out" "^attached|cannot trace" || return 1
		grep -q '^attached' "$T_DIR/hold.out" && break
		wait_within "$HOLD_PID"
		[ $try -eq 3 ] && return 77
		sleep 1
	done
	timeout 120 "$SHOALCTL" -s "$1" reload >"$T_DIR/reload.out" 2>&1 &
	RELOAD_PID=$!
	T_PIDS="$T_PIDS $RELOAD_PID"
	wait_line "$T_DIR/hold.out" "^held " || return 1
}

# take_over_run WHAT ARGS...: a shoald run with ARGS (--takeover among them) takes over
# from PID; waits until it has and the old process has exited, checked with WHAT in the
# message; its log is T_DIR/shoald-N.log for the next LOGN; sets PID to the new one.
take_over_run() {
	local what=$1 old=$PID log
	shift
	LOGN=$((LOGN + 1))
	log=$T_DIR/shoald-$LOGN.log
	"$SHOALD" "$@" >"$log" 2>&1 &
	PID=$!
	T_PIDS="$T_PIDS $PID"
	if wait_until 60 grep -q "took over from pid $old" "$log" && wait_until 60 gone "$old"; then
		wait "$old"
		check_eq "takeover by $what: pid $PID took over from $old, which exited 0" 0 $?
	else
		fail "takeover by $what: $(cat "$log")"
	fi
}
