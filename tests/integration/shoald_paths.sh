#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_paths: the paths of a packaged daemon. Without -c shoald reads
# SYSCONFDIR/shoal/shoald.conf (and says so when it is missing); relative
# zone paths start from zones-dir, by default the file's folder, whatever
# the current folder; shoald and shoalctl agree on the control socket's
# default; the control folder is made when missing; pid-file, and a stale one (its server
# killed, its number reused) does not stop a start.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

# the default file is missing here: shoald says so and goes on
out=$(cd "$T_DIR" && "$SHOALD" --check --listen "127.0.0.1@5399" 2>&1)
check_eq "no default file: --check still passes" 0 $?
default_conf=$(sed -n 's/.*no configuration file \([^ ]*\) (-c FILE names another).*/\1/p' <<<"$out")
check_match "and it is named" "/shoal/shoald.conf$" "$default_conf"

# zones-dir: a configuration and its zones elsewhere, shoald started from /
mkdir -p "$T_DIR/etc/zones" "$T_DIR/run"
cp "$EXAMPLES/example.com.zone" "$T_DIR/etc/zones/"
PORT=$(free_port) || exit 99
cat >"$T_DIR/etc/shoald.conf" <<CONF
listen: [127.0.0.1@$PORT]
threads: 1
nsid: paths
control: $T_DIR/ctl/shoald.ctl
pid-file: $T_DIR/run/shoald.pid
zones-dir: zones
zones:
  - name: example.com
    file: example.com.zone
CONF
out=$(cd / && "$SHOALD" --check -c "$T_DIR/etc/shoald.conf" 2>&1)
check_eq "zones-dir relative to the file's folder: --check passes from /" 0 $?
(cd / && exec "$SHOALD" -c "$T_DIR/etc/shoald.conf" >>"$T_DIR/shoald.log" 2>&1) &
SHOALD_PID=$!
T_PIDS="$T_PIDS $SHOALD_PID"
wait_answering 127.0.0.1 "$PORT" || fail "shoald with zones-dir did not start"
check_match "it serves the zone" "status: NOERROR" "$(q "$PORT" www.example.com A)"
# the control socket's folder did not exist: it was made
out=$("$SHOALCTL" -s "$T_DIR/ctl/shoald.ctl" reload example.com 2>&1)
check_eq "the control folder was made; a reload finds the zone from zones-dir" 0 $?
check_eq "pid-file holds the pid" "$SHOALD_PID" "$(cat "$T_DIR/run/shoald.pid" 2>/dev/null)"
# another server with the same pid file, on another port: refused
PORT2=$(free_port) || exit 99
out=$("$SHOALD" --listen "127.0.0.1@$PORT2" --threads 1 --pid-file "$T_DIR/run/shoald.pid" 2>&1)
check_eq "a second server with the same pid file exits 1" 1 $?
check_match "saying whose it is" "pid-file $T_DIR/run/shoald.pid: names pid $SHOALD_PID, which is running" "$out"
stop_pid "$SHOALD_PID"
check_eq "stopped: the pid file is gone" no "$([ -e "$T_DIR/run/shoald.pid" ] && echo yes || echo no)"

# A server killed (SIGKILL) leaves its pid file, and its number may go to another process
# later: such a file does not stop a start, whatever it names, for no live server holds it.
start_shoald "$PORT2" --listen "127.0.0.1@$PORT2" --threads 1 --pid-file "$T_DIR/run/shoald.pid" \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99
kill -KILL "$SHOALD_PID"
wait "$SHOALD_PID" 2>/dev/null
check_eq "killed: the pid file is left behind" "$SHOALD_PID" "$(cat "$T_DIR/run/shoald.pid")"
sleep 300 &
REUSED=$!
T_PIDS="$T_PIDS $REUSED"
echo "$REUSED" >"$T_DIR/run/shoald.pid" # its number taken by another process
start_shoald "$PORT2" --listen "127.0.0.1@$PORT2" --threads 1 --pid-file "$T_DIR/run/shoald.pid" \
	--zone "example.com=$EXAMPLES/example.com.zone"
check_eq "a pid file naming a live process that does not hold it does not stop a start" \
	"$SHOALD_PID" "$(cat "$T_DIR/run/shoald.pid" 2>/dev/null)"
check_match "the stale file is logged as replaced" \
	"pid-file $T_DIR/run/shoald.pid: named pid $REUSED, which did not hold it" "$(cat "$T_DIR/shoald.log")"
stop_pid "$SHOALD_PID"
kill "$REUSED"

# shoalctl looks where shoald's help says shoalctl looks
ctl_default=$("$SHOALCTL" --help | sed -n 's/.*control socket (default \(.*\))$/\1/p')
shoald_says=$("$SHOALD" --help | sed -n "s/.*shoalctl's default: \([^)]*\)).*/\1/p")
check_match "shoalctl's default is a path" "^/.*/shoal/shoald.ctl$" "$ctl_default"
check_eq "shoald's --help names the same default" "$ctl_default" "$shoald_says"

# The default file found: SYSCONFDIR hidden behind a fresh tmpfs in a mount
# namespace of this test's own, so the machine's files are not touched.
etc=$(dirname "$(dirname "$default_conf")")
if [ "$(id -u)" -eq 0 ] && [ -d "$etc" ] && unshare -m true 2>/dev/null; then
	out=$(unshare -m bash -c '
		mount -t tmpfs shoal-test "$1" && mkdir "$1/shoal" &&
		cp "$2/etc/shoald.conf" "$1/shoal/shoald.conf" &&
		cp -r "$2/etc/zones" "$1/shoal/zones" &&
		cd / && "$3" --check' _ "$etc" "$T_DIR" "$SHOALD" 2>&1)
	check_eq "without -c, $default_conf is read" 0 $?
	check_match "--check names it" "^$default_conf: configuration and 1 zone\(s\) OK" "$out"
else
	echo "SKIP: the default file found (needs root and unshare -m, and $etc)"
fi
done_testing
