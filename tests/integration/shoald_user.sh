#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_user: with --user nobody the daemon binds as root, then runs as nobody and still
# answers; a process running as nobody cannot bind the port beside it, with SO_REUSEPORT,
# SO_REUSEADDR or both (doc/design.md, "Sockets"). Zones are read with nobody's rights from
# the start, as every reload reads them: a file only root may read fails --check, and at a start
# its zone serves nothing (SERVFAIL) while zone-status says why. The pid file,
# which nobody cannot remove at the stop, names no process after it; one of another user is
# refused. Root does not take the sockets over from a server of nobody's. Needs root.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

need_nobody "to bind as root and drop to nobody"
BINDTEST=$(nobody_copy "$SHOAL_BUILDDIR/tests/integration/bindtest")

PORT=$(free_port) || exit 99
chmod 755 "$T_DIR" # the zone file must be readable by nobody for reloads
cp "$EXAMPLES/example.com.zone" "$T_DIR/example.com.zone"
chmod 644 "$T_DIR/example.com.zone"
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --listen "::1@$PORT" --threads 2 --user nobody \
	--control "$T_DIR/ctl" --zone "example.com=$T_DIR/example.com.zone" || exit 99

uid_line=$(grep '^Uid:' "/proc/$SHOALD_PID/status")
check_match "runs as nobody (Uid of every kind)" "^Uid:[[:space:]]+65534[[:space:]]+65534[[:space:]]+65534[[:space:]]+65534$" \
	"$(printf '%s' "$uid_line" | sed "s/$(id -u nobody)/65534/g")"
check_match "no supplementary groups" "^Groups:[[:space:]]*$" "$(grep '^Groups:' "/proc/$SHOALD_PID/status")"
check_match "still answers" "status: NOERROR" "$(q "$PORT" www.example.com A)"
check_eq "control socket belongs to nobody" nobody "$(stat -c %U "$T_DIR/ctl")"
check_match "reload works after the drop" "reloaded" "$("$SHOALCTL" -s "$T_DIR/ctl" reload)"

for mode in reuseport reuseaddr both; do
	check_eq "nobody binds 127.0.0.1:$PORT with $mode: EADDRINUSE" EADDRINUSE \
		"$(as_nobody "$BINDTEST" 127.0.0.1 "$PORT" "$mode")"
	check_eq "nobody binds [::1]:$PORT with $mode: EADDRINUSE" EADDRINUSE \
		"$(as_nobody "$BINDTEST" ::1 "$PORT" "$mode")"
done
check_match "the port is still answered by shoald" "status: NOERROR" "$(q "$PORT" www.example.com A)"

# Zone files are read with nobody's rights at start as at every reload: one only root may
# read would load once and then fail every reload.
cp "$EXAMPLES/example.com.zone" "$T_DIR/rootonly.zone"
chmod 600 "$T_DIR/rootonly.zone"
out=$("$SHOALD" --check --zone "example.com=$T_DIR/rootonly.zone" 2>&1)
check_eq "without --user, root reads a root-only zone" 0 $?
out=$("$SHOALD" --check --user nobody --zone "example.com=$T_DIR/rootonly.zone" 2>&1)
check_eq "with --user nobody, --check of a root-only zone exits 1" 1 $?
check_match "naming the file" "$T_DIR/rootonly.zone: cannot open: Permission denied" "$out"
# a start reads the zones after the sockets, with nobody's rights: the zone
# serves nothing (SERVFAIL, as NSD and Knot answer a zone that did not load),
# and zone-status says why
PORT3=$(free_port) || exit 99
start_shoald "$PORT3" --listen "127.0.0.1@$PORT3" --user nobody --control "$T_DIR/ctl3" \
	--zone "example.com=$T_DIR/rootonly.zone" || fail "a start with a zone nobody cannot read"
check_match "that zone answers SERVFAIL" "status: SERVFAIL" \
	"$("$DIG" @127.0.0.1 -p "$PORT3" +time=2 +tries=1 www.example.com A)"
check_match "zone-status names the file" \
	"^example.com. .* loaded no .*error $T_DIR/rootonly.zone: cannot open: Permission denied" \
	"$("$SHOALCTL" -s "$T_DIR/ctl3" zone-status)"
stop_pid "$SHOALD_PID"
# an $INCLUDE only root may read: the same, at the $INCLUDE's line
cp "$T_DIR/rootonly.zone" "$T_DIR/rootonly.inc"
printf '$ORIGIN example.com.\n$TTL 300\n$INCLUDE rootonly.inc\n' >"$T_DIR/inc.zone"
chmod 644 "$T_DIR/inc.zone"
out=$("$SHOALD" --check --user nobody --zone "example.com=$T_DIR/inc.zone" 2>&1)
check_eq "an \$INCLUDE only root may read fails --check" 1 $?
check_match "at its line" "$T_DIR/inc.zone:3: \\\$INCLUDE $T_DIR/rootonly.inc: cannot open: Permission denied" "$out"
# the group's rights are nobody's group's: a file of that group, mode 640, loads
chgrp "$(id -gn nobody)" "$T_DIR/rootonly.zone"
chmod 640 "$T_DIR/rootonly.zone"
out=$("$SHOALD" --check --user nobody --zone "example.com=$T_DIR/rootonly.zone" 2>&1)
check_eq "a zone nobody's group may read passes --check" 0 $?

out=$("$SHOALD" --listen "127.0.0.1@$(free_port)" --user no-such-user-here \
	--zone "example.com=$T_DIR/example.com.zone" 2>&1)
check_eq "a user that does not exist stops start-up" 1 $?
check_match "and says so" 'user "no-such-user-here" does not exist' "$out"

stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0 as nobody" 0 $?

# The pid file is root's, in root's folder: the server, nobody by then, cannot remove it at
# its stop. It is emptied instead, so it names no process whose number may be reused later.
PORT2=$(free_port) || exit 99
mkdir "$T_DIR/run"
start_shoald "$PORT2" --listen "127.0.0.1@$PORT2" --threads 1 --user nobody \
	--pid-file "$T_DIR/run/shoald.pid" --zone "example.com=$T_DIR/example.com.zone" || exit 99
check_eq "the pid file names the server" "$SHOALD_PID" "$(cat "$T_DIR/run/shoald.pid")"
stop_pid "$SHOALD_PID"
check_eq "stopped as nobody: the pid file names no process" "" \
	"$(cat "$T_DIR/run/shoald.pid" 2>/dev/null)"
# a pid file another user made is not taken as this server's
echo 1 >"$T_DIR/run/theirs.pid"
chown nobody "$T_DIR/run/theirs.pid"
out=$(timeout 20 "$SHOALD" --listen "127.0.0.1@$PORT2" --threads 1 --pid-file "$T_DIR/run/theirs.pid" \
	--zone "example.com=$T_DIR/example.com.zone" 2>&1)
check_eq "a pid file of another user stops start-up" 1 $?
check_match "saying whose it is" "theirs.pid: not a regular file of this user \(uid 0\) but one of uid $(id -u nobody)" "$out"

# A takeover takes sockets only from a server of root or of its own user: a server run by
# nobody (its control socket in a folder of nobody's) is not taken over by root, and serves on.
mkdir "$T_DIR/nobody" && chown nobody "$T_DIR/nobody"
shoald_copy=$(nobody_copy "$SHOALD")
"${AS_NOBODY[@]}" "$shoald_copy" --listen "127.0.0.1@$PORT2" --threads 1 --control "$T_DIR/nobody/ctl" \
	--zone "example.com=$T_DIR/example.com.zone" >"$T_DIR/giver.log" 2>&1 &
GIVER=$!
T_PIDS="$T_PIDS $GIVER"
wait_answering 127.0.0.1 "$PORT2" || fail "shoald as nobody answers"
"$SHOALD" --listen "127.0.0.1@$PORT2" --threads 1 --zone "example.com=$T_DIR/example.com.zone" \
	--takeover "$T_DIR/nobody/ctl" >"$T_DIR/taker.log" 2>&1 &
TAKER=$!
T_PIDS="$T_PIDS $TAKER"
wait_until 30 eval "gone $TAKER || grep -q 'took over from' '$T_DIR/taker.log'"
wait_within "$TAKER" 1
check_eq "root's takeover of nobody's server exits 1" 1 $?
check_match "saying why" "takeover: .*runs as uid $(id -u nobody), not as root or as this process's user" \
	"$(cat "$T_DIR/taker.log")"
check_eq "nobody's server serves on" yes "$(gone "$GIVER" && echo no || echo yes)"
check_match "and answers" "status: NOERROR" "$(q "$PORT2" www.example.com A)"
stop_pid "$GIVER"
check_eq "and exits 0 at SIGTERM" 0 $?
done_testing
