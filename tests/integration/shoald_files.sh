#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_files: files that would hold a load for good do not. An $INCLUDE of a FIFO or of
# /dev/zero fails the reload at once with FILE:LINE and the next reload works; the octets and
# the $INCLUDEs of a zone are bounded; a reload stuck in the kernel (its thread held stopped
# by holdthread) is abandoned after reload-timeout while the old zone keeps answering, and
# SIGTERM stops shoald even then. A control socket, a pid file or a takeover's socket under a
# folder every user may write is refused.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONE=$T_DIR/files.test.zone
# write_zone LAST-OCTET [EXTRA-LINE]: the zone, www's address ending in LAST-OCTET; line 6 is
# EXTRA-LINE when given
write_zone() {
	cat >"$ZONE.new" <<ZONEFILE
\$ORIGIN files.test.
\$TTL 300
@    IN SOA ns1 hostmaster 1 3600 600 86400 300
@    IN NS  ns1
ns1  IN A   192.0.2.1
${2:-; nothing included}
www  IN A   192.0.2.$1
ZONEFILE
	mv "$ZONE.new" "$ZONE"
}

write_zone 10
PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--zone "files.test=$ZONE" || exit 99
check_eq "first version served" 192.0.2.10 "$(q "$PORT" +short www.files.test A)"

# A FIFO: open() would wait for a writer that never comes.
mkfifo "$T_DIR/fifo"
write_zone 11 "\$INCLUDE fifo"
out=$(timeout 60 "$SHOALCTL" -s "$CTL" reload 2>&1)
check_eq "reload with a FIFO included exits 1" 1 $?
check_match "and names FILE:LINE and the FIFO" "$ZONE:6: \\\$INCLUDE $T_DIR/fifo: not a regular file \(a FIFO\)" "$out"
check_eq "the old data is still served" 192.0.2.10 "$(q "$PORT" +short www.files.test A)"

# /dev/zero: it never ends.
write_zone 12 "\$INCLUDE /dev/zero"
out=$(timeout 60 "$SHOALCTL" -s "$CTL" reload 2>&1)
check_eq "reload with /dev/zero included exits 1" 1 $?
check_match "and names FILE:LINE" "$ZONE:6: \\\$INCLUDE /dev/zero: not a regular file \(a character device\)" "$out"

write_zone 13
out=$(timeout 60 "$SHOALCTL" -s "$CTL" reload 2>&1)
check_eq "the next reload works" 0 $?
check_eq "and serves the new data" 192.0.2.13 "$(q "$PORT" +short www.files.test A)"
stop_within "$SHOALD_PID"
check_eq "SIGTERM exits 0" 0 $?

# The bounds, driven to them with --check: octets of a zone, $INCLUDEs of a zone.
head -c $((1024 * 1024)) /dev/zero | tr '\0' ';' >"$T_DIR/comment"
write_zone 14 "\$INCLUDE comment"
out=$("$SHOALD" --check --max-zone-file-size 1 --zone "files.test=$ZONE" 2>&1)
check_eq "a zone past max-zone-file-size fails --check" 1 $?
check_match "at the \$INCLUDE that passes it" "$ZONE:6: \\\$INCLUDE $T_DIR/comment: 1048576 octets, more than the [0-9]+ left for the zone's files \(max-zone-file-size\)" "$out"
out=$("$SHOALD" --check --max-zone-file-size 2 --zone "files.test=$ZONE" 2>&1)
check_eq "and passes with room for it" 0 $?
printf 'x  IN A 192.0.2.20\n' >"$T_DIR/x"
write_zone 15 "\$INCLUDE x"
printf '$INCLUDE x\n' >>"$ZONE"
out=$("$SHOALD" --check --max-zone-includes 1 --zone "files.test=$ZONE" 2>&1)
check_eq "a second \$INCLUDE past max-zone-includes 1 fails --check" 1 $?
check_match "at its line" "$ZONE:8: more than 1 \\\$INCLUDE directives in the zone \(max-zone-includes\)" "$out"
out=$("$SHOALD" --check --max-zone-includes 2 --zone "files.test=$ZONE" 2>&1)
check_eq "two pass with max-zone-includes 2" 0 $?

# A control socket under a folder every user may write without the sticky bit: refused;
# with the sticky bit (/tmp): a warning.
write_zone 16
mkdir "$T_DIR/open" "$T_DIR/sticky"
chmod 0777 "$T_DIR/open"
chmod 1777 "$T_DIR/sticky"
out=$("$SHOALD" --check --control "$T_DIR/open/ctl" --zone "files.test=$ZONE" 2>&1)
check_eq "control in a folder all may write fails --check" 1 $?
check_match "and says why" "control $T_DIR/open/ctl: every user may write $T_DIR/open \(mode 0777, not sticky\)" "$out"
out=$("$SHOALD" --check --control "$T_DIR/sticky/ctl" --zone "files.test=$ZONE" 2>&1)
check_eq "control in a sticky folder all may write passes --check" 0 $?
check_match "with a warning" "warning: control $T_DIR/sticky/ctl: every user may write $T_DIR/sticky \(sticky\)" "$out"
# the pid file and the socket a takeover asks are vetted the same way: whoever may replace
# them could keep shoald from starting, or hand it sockets of their own
out=$("$SHOALD" --check --pid-file "$T_DIR/open/pid" --zone "files.test=$ZONE" 2>&1)
check_eq "a pid file in a folder all may write fails --check" 1 $?
check_match "and says why" "pid-file $T_DIR/open/pid: every user may write $T_DIR/open \(mode 0777, not sticky\)" "$out"
out=$("$SHOALD" --check --takeover "$T_DIR/open/ctl" --zone "files.test=$ZONE" 2>&1)
check_eq "a takeover from a folder all may write fails" 1 $?
check_match "and says why" "takeover $T_DIR/open/ctl: every user may write $T_DIR/open \(mode 0777, not sticky\)" "$out"

# SIGTERM while the reload is stuck: shoald exits after its grace time, without the thread.
: >"$T_DIR/shoald.log"
write_zone 17
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--zone "files.test=$ZONE" || exit 99
hold_reload "$CTL"
rc=$?
if [ $rc -eq 77 ]; then
	echo "SKIP: holdthread cannot trace shoald here: $(cat "$T_DIR/hold.out")"
	stop_within "$SHOALD_PID"
	done_testing
fi
check_eq "the reload thread is held" 0 $rc
check_eq "the old zone answers during the stuck reload" 192.0.2.17 "$(q "$PORT" +short www.files.test A)"
stop_within "$SHOALD_PID"
check_eq "SIGTERM during a stuck reload stops shoald with status 0 (124: not in 60 s)" 0 $?
check_match "and it says it left the reload thread" "did not stop within 3000 ms" "$(cat "$T_DIR/shoald.log")"
wait_within "$HOLD_PID"
check_eq "holdthread ends with shoald (124: killed after 60 s)" 0 $?
wait_within "$RELOAD_PID" 130

# reload-timeout: the stuck reload is abandoned, answered, reported; the old zone stays.
: >"$T_DIR/shoald.log"
write_zone 18
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--reload-timeout 1 --zone "files.test=$ZONE" || exit 99
write_zone 19
hold_reload "$CTL"
rc=$?
if [ $rc -eq 77 ]; then
	echo "SKIP: holdthread cannot trace shoald here: $(cat "$T_DIR/hold.out")"
	stop_within "$SHOALD_PID"
	done_testing
fi
check_eq "the reload thread is held" 0 $rc
wait_within "$RELOAD_PID" 130
check_eq "the stuck reload is answered with an error" 1 $?
check_match "that says it was abandoned" "reload started .* abandoned after 1 s \(reload-timeout\): every zone keeps the version it had" "$(cat "$T_DIR/reload.out")"
check_eq "the old zone still answers" 192.0.2.18 "$(q "$PORT" +short www.files.test A)"
check_match "zone-status says so" "abandoned after 1 s" "$(timeout 60 "$SHOALCTL" -s "$CTL" zone-status)"
check_match "status says so" "reloading abandoned" "$(timeout 60 "$SHOALCTL" -s "$CTL" status)"
out=$(timeout 60 "$SHOALCTL" -s "$CTL" reload 2>&1)
check_eq "no other reload starts meanwhile" 1 $?
check_match "and the reply says why" "its thread has not ended yet" "$out"
check_match "the log says so" "error: reload started .* abandoned after 1 s" "$(cat "$T_DIR/shoald.log")"
stop_within "$SHOALD_PID"
check_eq "SIGTERM exits 0 with the thread still held" 0 $?
wait_within "$HOLD_PID"
check_eq "holdthread ends with shoald (124: killed after 60 s)" 0 $?
done_testing
