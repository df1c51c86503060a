#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_threads: every thread of a running shoald has a name (ps -L, top -H show it) and takes
# no signal meant for the main loop: SIGHUP, SIGINT and SIGTERM are blocked in every thread but
# main. Seen in /proc/PID/task/*/comm and status (SigBlk) with workers, UDP receivers of two
# addresses, the zone-event scheduler, its flush and transfer threads, and a reload thread
# held in its open() by holdthread.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
PORT2=$(free_port) || exit 99
CTL=$T_DIR/ctl
cp "$EXAMPLES/example.com.zone" "$T_DIR/p.zone" || exit 99
# s.test's primary: a port nothing answers on; the scheduler and a transfer thread run all the same
cat >"$T_DIR/shoald.conf" <<CONF
listen: [ 127.0.0.1@$PORT, 127.0.0.1@$PORT2 ]
threads: 2
control: $CTL
zones:
  - name: example.com
    file: p.zone
  - name: s.test
    primaries: [ 127.0.0.1@$(free_port) NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

# threads: "TID NAME SIGBLK" per thread of shoald
threads() {
	local t
	for t in /proc/"$SHOALD_PID"/task/*; do
		printf '%s %s %s\n' "${t##*/}" "$(cat "$t/comm")" \
			"$(awk '$1 == "SigBlk:" { print $2 }' "$t/status")"
	done 2>/dev/null
}
# blocks MASK: SIGHUP, SIGINT and SIGTERM (signal n is bit n-1) are all set in MASK (hex)
blocks() {
	local want=$(((1 << 0) | (1 << 1) | (1 << 14)))
	[ $((0x$1 & want)) -eq $want ]
}
# check_threads WHAT EXPECTED-NAMES: the other threads' names (sorted, one a line) are
# EXPECTED-NAMES, and each blocks the main loop's signals, which main does not
check_threads() {
	local list names tid name mask wrong=""
	list=$(threads)
	names=$(printf '%s\n' "$list" | awk -v main="$SHOALD_PID" '$1 != main { print $2 }' |
		LC_ALL=C sort)
	# ThreadSanitizer's runtime runs a thread of its own, which shoald does not start
	[ "${SHOAL_SANITIZER:-}" = thread ] &&
		names=$(printf '%s\n' "$names" | awk '$0 == "shoald" && !seen++ { next } 1')
	check_eq "$1: the threads and their names" "$2" "$names"
	while read -r tid name mask; do
		if [ "$tid" = "$SHOALD_PID" ]; then
			blocks "$mask" && wrong="$wrong main($mask)"
		else
			blocks "$mask" || wrong="$wrong $name($mask)"
		fi
	done <<<"$list"
	check_eq "$1: HUP, INT and TERM blocked in every thread but main" "" "$wrong"
}

check_eq "main keeps the program's name" shoald "$(cat /proc/"$SHOALD_PID"/comm)"
# per worker: its loop (TCP) and a UDP receiver per address; the scheduler, its flush and sign
# threads, a transfer thread; the update thread; the journal reader (IXFR out)
RUNNING="shoald-flush
shoald-jread
shoald-sched
shoald-sign
shoald-tcp-0
shoald-tcp-1
shoald-udp-0-0
shoald-udp-0-1
shoald-udp-1-0
shoald-udp-1-1
shoald-update
shoald-xfr-0"
check_threads "running" "$RUNNING"

# a reload thread, held in its first open()
hold_reload "$CTL"
rc=$?
if [ $rc -eq 77 ]; then
	echo "SKIP: holdthread cannot trace shoald here: $(cat "$T_DIR/hold.out")"
else
	check_eq "the reload thread is held" 0 $rc
	check_threads "reloading" "$(printf 'shoald-reload\n%s\n' "$RUNNING" | sort)"
fi
stop_within "$SHOALD_PID"
check_eq "shoald stops with status 0" 0 $?
done_testing
