#!/bin/bash
# shoald_user: with --user nobody the daemon binds as root, then runs as nobody and still
# answers; a process running as nobody cannot bind the port beside it, with SO_REUSEPORT,
# SO_REUSEADDR or both (DESIGN: hijack protection). Needs root.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: shoald_user needs root (to bind as root and drop to nobody)"
	exit 77
fi
if ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
	echo "SKIP: no user nobody or no setpriv"
	exit 77
fi
BINDTEST=$SHOAL_BUILDDIR/tests/integration/bindtest
# as_nobody CMD...: run CMD with nobody's uid and gid and no supplementary groups
as_nobody() {
	setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$@"
}

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

out=$("$SHOALD" --listen "127.0.0.1@$(free_port)" --user no-such-user-here \
	--zone "example.com=$T_DIR/example.com.zone" 2>&1)
check_eq "a user that does not exist stops start-up" 1 $?
check_match "and says so" 'user "no-such-user-here" does not exist' "$out"

stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0 as nobody" 0 $?
done_testing
