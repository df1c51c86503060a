#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_notify: the readiness protocol of a Type=notify unit, without
# systemd. NOTIFY_SOCKET names a datagram socket the test listens on:
# READY=1 with STATUS= (zones and threads) comes once the zones are loaded
# and the port answers; a reload (SIGHUP, shoalctl reload) is framed by
# RELOADING=1 (with MONOTONIC_USEC) and READY=1; a stop sends STOPPING=1.
# Then the unit file passes systemd-analyze verify, when systemd is there.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

LISTEN=$SHOAL_BUILDDIR/tests/integration/notifylisten
SOCK=$T_DIR/notify.sock
OUT=$T_DIR/notify.out

# wait_count PATTERN N: up to 15 s for N lines of $OUT to match PATTERN
wait_count() {
	local i
	for i in $(seq 1 150); do
		[ "$(grep -cE "$1" "$OUT" 2>/dev/null)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

"$LISTEN" "$SOCK" 120 >"$OUT" 2>&1 &
LISTENER=$!
T_PIDS="$T_PIDS $LISTENER"
wait_ready "$SOCK" "$LISTENER" || fail "the notification socket is there"

PORT=$(free_port) || exit 99
NOTIFY_SOCKET=$SOCK "$SHOALD" --listen "127.0.0.1@$PORT" --threads 2 \
	--control "$T_DIR/shoald.ctl" --zone "example.com=$EXAMPLES/example.com.zone" \
	>>"$T_DIR/shoald.log" 2>&1 &
SHOALD_PID=$!
T_PIDS="$T_PIDS $SHOALD_PID"
wait_count '^READY=1' 1 || fail "READY=1 arrives"
# by then the port answers: READY=1 comes after the sockets are bound
check_match "when READY=1 came, the zone was served" "status: NOERROR" \
	"$(q "$PORT" +time=1 www.example.com A)"
check_match "the zones are read after the sockets: STATUS= says how far first" \
	"^STATUS=loading zones: [01] of 1 EXTEND_TIMEOUT_USEC=[0-9]+$" "$(head -1 "$OUT")"
check_eq "READY=1 carries the zones and threads" \
	"READY=1 STATUS=serving 1 zone(s) with 2 thread(s)" "$(grep -m1 '^READY=1' "$OUT")"

kill -HUP "$SHOALD_PID"
wait_count '^READY=1' 2 || fail "READY=1 after the SIGHUP reload"
"$SHOALCTL" -s "$T_DIR/shoald.ctl" reload example.com >/dev/null
check_eq "shoalctl reload exits 0" 0 $?
wait_count '^READY=1' 3 || fail "READY=1 after shoalctl reload"
stop_pid "$SHOALD_PID"
check_eq "shoald exits 0" 0 $?
wait_count '^STOPPING=1' 1 || fail "STOPPING=1 arrives"
kill -TERM "$LISTENER"
wait "$LISTENER"

cat "$OUT"
check_eq "the states in order" "READY=1 RELOADING=1 READY=1 RELOADING=1 READY=1 STOPPING=1" \
	"$(grep -v '^STATUS=loading' "$OUT" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
check_match "RELOADING=1 carries MONOTONIC_USEC" "^RELOADING=1 STATUS=reloading MONOTONIC_USEC=[0-9]+$" \
	"$(grep -m1 '^RELOADING=1' "$OUT")"
m1=$(grep '^RELOADING=1' "$OUT" | sed -n '1s/.*MONOTONIC_USEC=//p')
m2=$(grep '^RELOADING=1' "$OUT" | sed -n '2s/.*MONOTONIC_USEC=//p')
if [ -n "$m1" ] && [ -n "$m2" ] && [ "$m2" -gt "$m1" ]; then
	pass "MONOTONIC_USEC grows from one reload to the next"
else
	fail "MONOTONIC_USEC grows from one reload to the next ($m1, $m2)"
fi

# a NOTIFY_SOCKET that is neither a path nor @name: a warning, and shoald serves
PORT=$(free_port) || exit 99
NOTIFY_SOCKET=relative/path start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 ||
	fail "shoald starts with a bad NOTIFY_SOCKET"
stop_pid "$SHOALD_PID"
check_match "and says it cannot notify" "NOTIFY_SOCKET: cannot tell" "$(cat "$T_DIR/shoald.log")"

# the unit file, as systemd reads it
UNIT=$SHOAL_BUILDDIR/systemd/shoald.service
if command -v systemd-analyze >/dev/null && [ -f "$UNIT" ]; then
	# the programs as built, where the unit names the installed ones
	mkdir -p "$T_DIR/unit"
	sed -e "s|^ExecStart=[^ ]*/shoald |ExecStart=$SHOALD |" \
		-e "s|^ExecReload=[^ ]*/shoalctl |ExecReload=$SHOALCTL |" "$UNIT" >"$T_DIR/unit/shoald.service"
	out=$(cd "$T_DIR" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no \
		"$T_DIR/unit/shoald.service" 2>&1)
	check_eq "systemd-analyze verify shoald.service: no complaint" "" "$out"
else
	echo "SKIP: systemd-analyze or the unit file is missing"
fi
done_testing
