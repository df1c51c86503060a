#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_reconfig_live: a reconfig and the running process. log-level applies at reconfig,
# without a restart: raised to debug, the control's debug line for each command appears;
# lowered back to info, it is gone again. And shoald stopped while a reconfig runs frees that
# reconfig's configuration exactly once, whether the reload thread had swapped its set in or
# not (the main loop did not hear of it either way): the reconfig is held in its first open()
# by holdthread, SIGTERM comes, then the thread is let go; the ASan build's LeakSanitizer makes
# the exit status non-zero on a leak, and a double free is reported the same way.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
CONF=$T_DIR/shoald.conf
# conf LEVEL [EXTRA-YAML]: the configuration at log-level LEVEL with example.com, and
# EXTRA-YAML after its keys
conf() {
	cat >"$CONF.new" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
log-level: $1
zones:
  - name: example.com
    file: $EXAMPLES/example.com.zone
${2:-}
CONF
	mv "$CONF.new" "$CONF"
}
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
debug_lines() { grep -c " debug: control: status" "$T_DIR/shoald.log"; }

conf info
start_shoald "$PORT" -c "$CONF" || exit 99
ctl status >/dev/null
check_eq "at info, no debug line" 0 "$(debug_lines)"

conf debug
out=$(ctl reconfig)
check_eq "reconfig to debug exits 0" 0 $?
if printf '%s\n' "$out" | grep -q "needs a restart"; then
	fail "log-level is not named as needing a restart: [$out]"
else
	pass "log-level is not named as needing a restart"
fi
ctl status >/dev/null
check_eq "at debug, the control's debug line appears" 1 "$(debug_lines)"

conf info
out=$(ctl reconfig)
check_eq "reconfig back to info exits 0" 0 $?
ctl status >/dev/null
check_eq "back at info, no new debug line" 1 "$(debug_lines)"

# --- stopped during a reconfig that adds h.test ---
printf '$ORIGIN h.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 86400 300\n@ IN NS ns1\nns1 IN A 192.0.2.1\n' \
	>"$T_DIR/h.test.zone"
conf info "  - name: h.test
    file: $T_DIR/h.test.zone"
"$SHOAL_BUILDDIR/tests/integration/holdthread" "$SHOALD_PID" >"$T_DIR/hold.out" 2>&1 &
HOLD_PID=$!
T_PIDS="$T_PIDS $HOLD_PID"
if ! wait_line "$T_DIR/hold.out" "^attached|cannot trace" || ! grep -q '^attached' "$T_DIR/hold.out"; then
	echo "# SKIP stop during a reconfig: holdthread cannot hold the reload thread"
	stop_within "$SHOALD_PID"
	check_eq "shoald exits 0" 0 $?
	done_testing
fi
timeout 120 "$SHOALCTL" -s "$T_DIR/ctl" reconfig >"$T_DIR/held.out" 2>&1 &
CTL_PID=$!
T_PIDS="$T_PIDS $CTL_PID"
if wait_line "$T_DIR/hold.out" "^held "; then
	pass "the reconfig is held in its first open()"
else
	fail "the reconfig is held: [$(cat "$T_DIR/hold.out")]"
fi
# stop: the main loop ends with the reconfig still running; then let its thread go, well
# within the grace time stopping waits for it
kill -TERM "$SHOALD_PID"
wait_line "$T_DIR/shoald.log" "info: stopping" || fail "shoald did not start stopping"
kill "$HOLD_PID"
wait "$HOLD_PID" 2>/dev/null
if wait_until 60 gone "$SHOALD_PID"; then
	wait "$SHOALD_PID"
	rc=$?
else
	kill -KILL "$SHOALD_PID"
	rc=124
fi
if grep -q "did not stop within" "$T_DIR/shoald.log"; then
	echo "# the reload thread outlived the grace time: the process exited without it"
fi
check_eq "shoald exits 0 with a reconfig running at stop (no sanitizer report)" 0 "$rc"
check_match "the reconfig's client was answered" "reconfig not applied: shoald is stopping" \
	"$(cat "$T_DIR/held.out")"
if [ "$rc" != 0 ]; then
	grep -A12 -E "ERROR: (LeakSanitizer|AddressSanitizer)" "$T_DIR/shoald.log" | head -30
fi
done_testing
