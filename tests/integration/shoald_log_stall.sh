#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_log_stall: a log reader that stalls (a full pipe nobody reads, as with a hung
# journald) holds no thread of shoald. With stderr into a FIFO this shell holds open and
# never reads, and zones that log far more than the pipe holds: shoald starts and answers,
# a reload is answered, SIGTERM stops it within its grace; the lines that did not fit are
# dropped, and once someone reads again one line says how many. Before, the first full
# pipe blocked the thread that logged (start-up, the reload, the "stopping" line), so
# shoald never answered and SIGTERM could not stop it. The same for log-file on a disk
# that does not answer (a FIFO as the file): it holds the log thread alone.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

# 40 zones of 60 records outside them: 51 warning lines each, some 300 KB a load, where
# a pipe holds 64 KB
noisy_zones 40
PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl

# stalled DEST WHERE: shoald logging to a FIFO held open and never read, as DEST
# ("stderr" or "log-file", the name its note of lines dropped gives); WHERE is
# "stderr" (2>FIFO) or "file" (--log-file FIFO).
stalled() {
	local dest=$1 fifo=$T_DIR/$1.fifo
	mkfifo "$fifo" || exit 99
	exec 3<>"$fifo" # a reader that never reads: the pipe fills and stays full
	if [ "$2" = file ]; then
		"$SHOALD" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" "${ZONES[@]}" \
			--log-file "$fifo" >>"$T_DIR/shoald.log" 2>&1 &
	else
		"$SHOALD" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" "${ZONES[@]}" \
			>>"$T_DIR/shoald.log" 2>"$fifo" &
	fi
	SHOALD_PID=$!
	T_PIDS="$T_PIDS $SHOALD_PID"

	wait_until 60 started "$PORT"
	check_eq "$dest full: shoald starts and answers" "NOERROR" \
		"$(q "$PORT" z40.test SOA | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
	out=$(timeout 30 "$SHOALCTL" -s "$CTL" reload 2>&1)
	check_eq "$dest full: a reload is answered (its log lines are dropped)" 0 $?
	check_eq "and the zones still answer" "NOERROR" \
		"$(q "$PORT" z1.test SOA | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"

	# someone reads again: the next line says how many were dropped
	cat <&3 >"$T_DIR/$dest.read" &
	CAT_PID=$!
	T_PIDS="$T_PIDS $CAT_PID"
	# the reader has begun (the full pipe gives it lines at once): a reload logged before it
	# ran would be dropped whole, and with no line after it nothing would count the drops
	wait_until 30 test -s "$T_DIR/$dest.read"
	timeout 30 "$SHOALCTL" -s "$CTL" reload >/dev/null 2>&1
	wait_line "$T_DIR/$dest.read" "warning: [0-9]+ log lines dropped \($dest was full\)$"
	check_eq "$dest drains: one line counts the lines dropped" 0 $?
	kill "$CAT_PID" 2>/dev/null
	wait "$CAT_PID" 2>/dev/null

	# full again, then SIGTERM ("stopping" is logged before the loop stops)
	timeout 30 "$SHOALCTL" -s "$CTL" reload >/dev/null 2>&1
	stop_within "$SHOALD_PID" 20
	check_eq "$dest full: SIGTERM stops shoald within its grace" 0 $?
	exec 3>&-
}
stalled stderr stderr
stalled log-file file
done_testing
