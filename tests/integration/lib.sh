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
	for p in $T_PIDS; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$T_DIR"
}
trap t_cleanup EXIT

# pass/fail MESSAGE: record one check.
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
# $T_DIR/shoald.log), wait until it answers on 127.0.0.1@PORT; sets SHOALD_PID.
start_shoald() {
	local port=$1
	shift
	"$SHOALD" "$@" >>"$T_DIR/shoald.log" 2>&1 &
	SHOALD_PID=$!
	T_PIDS="$T_PIDS $SHOALD_PID"
	wait_answering 127.0.0.1 "$port" || {
		echo "shoald did not start; its log:" >&2
		cat "$T_DIR/shoald.log" >&2
		return 1
	}
}

# wait_answering ADDR PORT: up to 10 s for any DNS answer (even REFUSED).
wait_answering() {
	local i
	for i in $(seq 1 100); do
		if "$DIG" @"$1" -p "$2" +time=1 +tries=1 . SOA >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# stop_pid PID: SIGTERM and wait; returns the exit status.
stop_pid() {
	kill -TERM "$1" 2>/dev/null
	wait "$1"
}

# q PORT DIG-ARGS...: dig on loopback with settings that make output stable.
q() {
	local port=$1
	shift
	"$DIG" @127.0.0.1 -p "$port" +norec +time=2 +tries=1 "$@"
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
	local i
	for i in $(seq 1 300); do
		[ -e "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	[ -e "$1" ]
}

# poll_until SECONDS COMMAND: run COMMAND (eval'd) every 0.1 s until it
# succeeds (returns 0) or SECONDS have passed (returns 1).
poll_until() {
	local i
	for i in $(seq 1 $(($1 * 10))); do
		eval "$2" && return 0
		sleep 0.1
	done
	return 1
}
