#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_log_lines: log lines and messages that used to mislead an operator (issue 33).
# Every line names the process that wrote it (shoald[PID], as NSD and syslog write it), so
# the two processes of a restart, which write one stream, are told apart; zones are named
# with their final dot, as zone-status names them (the command echoed as given excepted); a
# reconfig's outcome is one line; a zone-add of a missing file says the file is missing,
# not "zone content error"; a served zone transfer is an answered TCP query in the count
# at stop; --syslog yes without a log socket says so at start; shoalctl without a control
# socket says which path it tried and why it may be missing; a control folder the service
# user may not make stops the start with a message that says what to do.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

LOG=$T_DIR/shoald.log
CTL=$T_DIR/ctl
LINE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z shoald\[[0-9]+\]: (error|warning|notice|info|debug): '
mkdir -p "$T_DIR/zones"
cp "$EXAMPLES/example.com.zone" "$T_DIR/zones/"
zone() {
	printf '$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hm 1 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.1\n' \
		"$1" >"$T_DIR/zones/$1.zone"
}
zone a.test
zone b.test
PORT=$(free_port) || exit 99
# conf [ZONE...]: the configuration, with example.com, a.test and each ZONE, named without
# the final dot
conf() {
	{
		printf 'listen: [127.0.0.1@%s]\nthreads: 1\ncontrol: %s\nzones:\n' "$PORT" "$CTL"
		printf '  - name: example.com\n    file: zones/example.com.zone\n'
		printf '    provide-xfr: ["127.0.0.1 NOKEY"]\n'
		for z in a.test "$@"; do
			printf '  - name: %s\n    file: zones/%s.zone\n' "$z" "$z"
		done
	} >"$T_DIR/shoald.conf"
}
conf
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
ctl() { timeout 60 "$SHOALCTL" -s "$CTL" "$@"; }

# --- zone names: one form, with the final dot ---
ctl reload a.test >/dev/null
conf b.test
out=$(ctl reconfig)
check_match "reconfig's reply names the zone added with its dot" "added: b\.test\.;" "$out"
check_match "the log too" "reconfig done: zones: 3; added: b\.test\.;" "$(cat "$LOG")"
check_match "a reload of one zone names it with its dot" "reload of a\.test\. started" "$(cat "$LOG")"
check_eq "no line names a zone without its final dot (the echo of a command aside)" "" \
	"$(grep -E '(a|b)\.test([^.a-z0-9-]|$)|example\.com([^.]|$)' "$LOG" | grep -v ': requested$')"

# --- a reconfig's outcome: one line ---
check_eq "'reconfig done' is logged once" 1 "$(grep -c 'reconfig done' "$LOG")"
check_eq "'reload of a.test. done' is logged once" 1 "$(grep -c 'reload of a\.test\. done' "$LOG")"

# --- zone-add of a missing file ---
out=$(ctl zone-add c.test "$T_DIR/zones/missing.zone" 2>&1)
check_eq "zone-add of a missing file: refused" 1 $?
check_match "the reply says the file is missing" \
	"zone-add refused \(.*missing\.zone: cannot open: No such file or directory\)" "$out"
check_match "the log says so" \
	"zone-add refused \(.*missing\.zone: cannot open: No such file or directory\): nothing changed" \
	"$(cat "$LOG")"
check_eq "nothing calls it a zone content error" "" "$(grep -i 'content error' "$LOG")"
check_eq "nor says zones that failed keep their version (nothing changed)" "" \
	"$(grep 'keep their previous version' "$LOG")"

# --- a zone transfer served is a TCP query answered ---
q "$PORT" +tcp www.example.com A >/dev/null
check_match "an AXFR is served" "XFR size: [0-9]+ records" "$(q "$PORT" example.com AXFR)"

# --- restart: two processes, one stream, each line says whose ---
old=$SHOALD_PID
ctl restart >/dev/null
wait_line "$LOG" "took over from pid $old" || fail "the restart did not complete"
new=$(sed -nE "s/.* shoald\[([0-9]+)\]: .*took over from pid $old.*/\1/p" "$LOG")
T_PIDS="$T_PIDS $new"
check_match "the new process's lines carry its own pid" '^[0-9]+$' "$new"
[ -n "$new" ] && [ "$new" != "$old" ] && pass "the pids differ ($old, $new)" || fail "one pid: $new"
wait_until 30 gone "$old"
check_match "the old process's count carries its pid" \
	"shoald\[$old\]: info: answered [0-9]+ of [0-9]+ UDP queries and 2 of 2 TCP queries before the takeover" \
	"$(cat "$LOG")"
check_eq "every line: a timestamp, shoald[PID], a level" "" "$(grep -Ev "$LINE" "$LOG")"
check_eq "every line of one of the two processes" "" \
	"$(grep -Ev "shoald\[($old|$new)\]: " "$LOG")"
[ -n "$new" ] && kill "$new"
wait_until 30 gone "$new" || fail "the new process did not stop"

# --- syslog without a log socket ---
out=$(SHOAL_SYSLOG_SOCKET=$T_DIR/no-logger.sock "$SHOALD" --check --syslog yes \
	--listen "127.0.0.1@$PORT" 2>&1)
check_match "--syslog yes without a log socket: said at start" \
	"warning: syslog: cannot reach $T_DIR/no-logger.sock \(No such file or directory\)" "$out"

# --- shoalctl without a control socket ---
out=$("$SHOALCTL" -s "$T_DIR/none.ctl" reload 2>&1)
check_eq "shoalctl, no socket: exit 2" 2 $?
check_match "it names the path it tried and why it failed" \
	"shoalctl: cannot reach shoald at $T_DIR/none\.ctl: No such file or directory" "$out"
check_match "and what that may mean" "shoald may not be running, or its control: names another path \(-s PATH\)" "$out"

# --- the control folder, started as the service user ---
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	need_nobody "to start shoald as a service user"
	shoald=$(nobody_copy "$SHOALD")
	zone=$(nobody_copy "$T_DIR/zones/a.test.zone")
	mkdir -p "$NOBODY_DIR/rootonly" "$NOBODY_DIR/theirs"
	chown nobody "$NOBODY_DIR/theirs"
	P2=$(free_port) || exit 99
	out=$(timeout 60 "${AS_NOBODY[@]}" "$shoald" --listen "127.0.0.1@$P2" --threads 1 \
		--control "$NOBODY_DIR/rootonly/shoal/shoald.ctl" --zone "a.test=$zone" 2>&1)
	check_eq "a control folder nobody may not make: exit 1" 1 $?
	check_match "the message names the folder, why, and what to do" \
		"control $NOBODY_DIR/rootonly/shoal/shoald.ctl: cannot make the folder $NOBODY_DIR/rootonly/shoal: Permission denied; make it, owned by uid $(id -u nobody), or let the unit's RuntimeDirectory= make it" \
		"$out"
	"${AS_NOBODY[@]}" "$shoald" --listen "127.0.0.1@$P2" --threads 1 \
		--control "$NOBODY_DIR/theirs/shoal/shoald.ctl" --zone "a.test=$zone" >"$T_DIR/nobody.log" 2>&1 &
	NPID=$!
	T_PIDS="$T_PIDS $NPID"
	wait_until 30 test -S "$NOBODY_DIR/theirs/shoal/shoald.ctl"
	check_match "a folder its parent lets it make: made, and the start goes on" \
		"control: made the folder $NOBODY_DIR/theirs/shoal" "$(cat "$T_DIR/nobody.log")"
	check_eq "the folder is the user's" nobody "$(stat -c %U "$NOBODY_DIR/theirs/shoal")"
	stop_within "$NPID" 30
	check_eq "it stops" 0 $?
else
	echo "SKIP: the control folder as the service user (needs root, nobody and setpriv)"
fi
done_testing
