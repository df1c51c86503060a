#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_log: what the log tells an operator. Each zone loaded, at start and at a reload, is
# logged with its name and serial, and a failed reload with the serial the zone keeps; the
# tcp_migrate_req state is said at most once, in one short line; when stderr is the journal
# (JOURNAL_STREAM names it) lines carry a "<N>" priority and no timestamp, and when the
# variable names another stream (a shell redirected stderr) the timestamps stay.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONE=$T_DIR/log.test.zone
LOG=$T_DIR/shoald.log
# write_zone SERIAL [EXTRA-LINE]
write_zone() {
	cat >"$ZONE.new" <<ZONEFILE
\$ORIGIN log.test.
\$TTL 300
@    IN SOA ns1 hostmaster $1 3600 600 86400 300
@    IN NS  ns1
ns1  IN A   192.0.2.1
${2:-; nothing more}
ZONEFILE
	mv "$ZONE.new" "$ZONE"
}
TS='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z shoald\[[0-9]+\]:'

write_zone 7
PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--zone "log.test=$ZONE" || exit 99
check_match "start: the zone's name and serial" "$TS info: zone log\.test\. serial 7 loaded, 3 records$" "$(cat "$LOG")"

write_zone 8
timeout 60 "$SHOALCTL" -s "$CTL" reload log.test >/dev/null 2>&1
check_match "reload: the new serial" "$TS info: zone log\.test\. serial 8 loaded, 3 records$" "$(cat "$LOG")"
write_zone 9 "www  IN A   192.0.2.300"
timeout 60 "$SHOALCTL" -s "$CTL" reload >/dev/null 2>&1
check_match "a failed reload: the serial kept and why" \
	"$TS warning: zone log\.test\. keeps serial 8: $ZONE:6: .*" "$(cat "$LOG")"
check_eq "the failed version's serial is not said to be loaded" "" \
	"$(grep 'serial 9' "$LOG")"
stop_pid "$SHOALD_PID"

lines=$(grep -c 'tcp_migrate_req' "$LOG")
[ "$lines" -le 1 ] && pass "tcp_migrate_req said at most once ($lines)" ||
	fail "tcp_migrate_req said $lines times"
if [ "$(cat /proc/sys/net/ipv4/tcp_migrate_req 2>/dev/null)" = 0 ]; then
	line=$(grep 'tcp_migrate_req' "$LOG")
	check_match "tcp_migrate_req=0: a notice" "notice: net\.ipv4\.tcp_migrate_req=0" "$line"
	n=$(printf '%s' "${line#* notice: }" | wc -c)
	[ "$n" -le 100 ] && pass "in one short line ($n characters)" || fail "$n characters: [$line]"
else
	check_eq "tcp_migrate_req=1: nothing at the info level" 0 "$lines"
fi

# stderr is the journal: JOURNAL_STREAM is the device and inode of stderr
write_zone 10
: >"$LOG"
JOURNAL_STREAM=$(stat -c '%d:%i' "$LOG") start_shoald "$PORT" --listen "127.0.0.1@$PORT" \
	--threads 1 --zone "log.test=$ZONE" || exit 99
stop_pid "$SHOALD_PID"
check_match "journal: a priority and no timestamp" "^<6>info: zone log\.test\. serial 10 loaded" \
	"$(cat "$LOG")"
check_eq "journal: no line has a timestamp" "" "$(grep -E "$TS" "$LOG")"
check_match "journal: every line has a priority" "^<[3-7]>" "$(cat "$LOG")"
check_eq "journal: no line without one" "" "$(grep -Ev '^<[3-7]>(error|warning|notice|info|debug): ' "$LOG")"

# JOURNAL_STREAM left over from a shell that redirected stderr: timestamps stay
: >"$LOG"
JOURNAL_STREAM=$(stat -c '%d:%i' "$ZONE") start_shoald "$PORT" --listen "127.0.0.1@$PORT" \
	--threads 1 --zone "log.test=$ZONE" || exit 99
stop_pid "$SHOALD_PID"
check_match "another stream: timestamps" "$TS info: zone log\.test\. serial 10 loaded" "$(cat "$LOG")"
check_eq "another stream: no priority prefix" "" "$(grep '^<' "$LOG")"
done_testing
