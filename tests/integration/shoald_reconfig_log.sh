#!/bin/bash
# shoald_reconfig_log: log-level applies at reconfig, without a restart. Raised to debug, the
# control's debug line for each command appears; lowered back to info, it is gone again.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
CONF=$T_DIR/shoald.conf
# conf LEVEL: the configuration at log-level LEVEL
conf() {
	cat >"$CONF.new" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
log-level: $1
zones:
  - name: example.com
    file: $EXAMPLES/example.com.zone
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

stop_within "$SHOALD_PID"
check_eq "shoald exits 0" 0 $?
done_testing
