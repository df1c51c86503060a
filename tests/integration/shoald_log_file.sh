#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_log_file: log-file for logrotate. Lines are appended to the file (what was there
# stays), made with the mode the umask leaves, instead of stderr; after the file is moved
# away, `shoalctl log-reopen` (or SIGUSR1) opens a new one at the path: the lines before
# the reopen are in the moved file, those after it in the new one, none lost and none
# twice. A file that stalls (a disk that does not answer): shoald_log_stall.sh.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

mkdir -p "$T_DIR/logs"
FILE=$T_DIR/logs/shoald.log
CTL=$T_DIR/ctl
printf '$ORIGIN a.test.\n$TTL 300\n@ SOA ns1 hm 1 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.1\n' \
	>"$T_DIR/a.test.zone"
echo "a line from before" >"$FILE"
PORT=$(free_port) || exit 99
(umask 027 && rm -f "$FILE.new" && exec "$SHOALD" --listen "127.0.0.1@$PORT" --threads 2 \
	--control "$CTL" --log-file "$FILE" --zone "a.test=$T_DIR/a.test.zone") \
	>>"$T_DIR/shoald.log" 2>&1 &
SHOALD_PID=$!
T_PIDS="$T_PIDS $SHOALD_PID"
wait_until 60 started "$PORT"
answering 127.0.0.1 "$PORT" || { cat "$T_DIR/shoald.log"; exit 99; }
ctl() { timeout 60 "$SHOALCTL" -s "$CTL" "$@"; }

check_eq "what the file held stays, first" "a line from before" "$(head -1 "$FILE")"
check_match "lines go to the file" "shoald\[$SHOALD_PID\]: info: zone a\.test\. serial 1 loaded" \
	"$(cat "$FILE")"
check_eq "and not to stderr" "" "$(grep 'zone a\.test\. serial 1 loaded' "$T_DIR/shoald.log")"

# rounds N: N reloads, each logging "reload of a.test. done" once
rounds() {
	local i
	for i in $(seq 1 "$1"); do
		ctl reload a.test >/dev/null || fail "reload $i"
	done
}
done_lines() { grep -c 'reload of a\.test\. done' "$@" 2>/dev/null; }
rounds 20
wait_until 10 test "$(done_lines "$FILE")" -eq 20
mv "$FILE" "$FILE.1"
rounds 5 # after the move, before the reopen: still into the moved file
out=$(ctl log-reopen)
check_eq "log-reopen is answered ok" 0 $?
check_match "and says which file" "log-file $FILE reopened" "$out"
rounds 20
wait_until 10 test "$(done_lines "$FILE")" -eq 20
check_eq "the moved file holds the lines logged before the reopen" 25 "$(done_lines "$FILE.1")"
check_eq "the new file the 20 after it" 20 "$(done_lines "$FILE")"
check_match "the new file starts with the reopen" "^[^ ]+ shoald\[$SHOALD_PID\]: info: log-file $FILE reopened" \
	"$(head -1 "$FILE")"
check_eq "the new file's mode: 0666 less the umask 027" 640 "$(stat -c %a "$FILE")"
check_eq "no line is in both" "" \
	"$(sort "$FILE" "$FILE.1" | uniq -d | grep -v 'a line from before')"

# SIGUSR1 does the same
mv "$FILE" "$FILE.2"
kill -USR1 "$SHOALD_PID"
wait_until 10 test -s "$FILE"
check_match "SIGUSR1: a new file at the path" "log-file $FILE reopened" "$(cat "$FILE" 2>/dev/null)"
rounds 3
wait_until 10 test "$(done_lines "$FILE")" -eq 3
check_eq "SIGUSR1: the lines after it in the new file" 3 "$(done_lines "$FILE")"
check_eq "and none in the file moved away after the signal" 20 "$(done_lines "$FILE.2")"

# a reopen that cannot open (a folder at the path, which root cannot open either): said in
# the reply, and the lines go on to the file open before
mv "$FILE" "$FILE.3"
mkdir "$FILE"
out=$(ctl log-reopen 2>&1)
check_eq "a reopen that cannot open the file: an error" 1 $?
check_match "saying why" "log-file $FILE: .*Is a directory" "$out"
rounds 2
wait_until 10 test "$(done_lines "$FILE.3")" -eq 5
check_eq "the lines go on to the file open before" 5 "$(done_lines "$FILE.3")"
rmdir "$FILE"
stop_within "$SHOALD_PID" 30
check_eq "shoald stops" 0 $?

# without log-file, log-reopen has nothing to do and says so
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 --control "$CTL" || exit 99
out=$(ctl log-reopen)
check_eq "no log-file: log-reopen is answered ok" 0 $?
check_match "saying there is nothing to reopen" "no log-file" "$out"
stop_within "$SHOALD_PID" 30

done_testing
