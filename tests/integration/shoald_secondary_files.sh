#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_secondary_files: a secondary's copy on disk cannot be lost without a word (issue 33).
# A secondary's relative file: lives in state-dir, written right after the first transfer. A
# folder the service user (nobody) cannot write fails --check, naming it and the cause; at
# runtime each save that fails keeps its errno ("Permission denied"), shows in zone-status
# (save-error), in the metrics (shoal_xfr_in_save_failures_total, shoal_zone_unsaved,
# shoal_secondary_unsaved_zones) and in the log. A reconfig that points the zone at a folder it
# can write saves it at once, without waiting for a new serial. Restarted with the primary
# down, the secondary serves both zones from state-dir. Needs root (to be nobody).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

need_nobody "to run the secondary as a user that cannot write every folder"
mkdir -p "$T_DIR/pri" "$T_DIR/sec" "$T_DIR/ro" "$T_DIR/sec/state"
chmod 755 "$T_DIR/pri" "$T_DIR/sec" "$T_DIR/ro"
# the state folder: the service user's, as systemd's StateDirectory= makes it
chown nobody: "$T_DIR/sec/state" && chmod 700 "$T_DIR/sec/state"
ctl() { "$SHOALCTL" -s "$T_DIR/sec/ctl" "$@" 2>&1; }
metrics() {
	timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3; cat <&3' _ "$MPORT" | sed '1,/^\r$/d'
}
for z in s r; do
	printf '$ORIGIN %s.test.\n$TTL 300\n@ SOA ns1 hm 7 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.7\n' \
		"$z" >"$T_DIR/pri/$z.test.zone"
done

PPORT=$(free_port) || exit 99
PORT=$(free_port) || exit 99
MPORT=$(free_port) || exit 99
cat >"$T_DIR/pri/shoald.conf" <<CONF
listen: 127.0.0.1@$PPORT
threads: 1
zones:
  - name: s.test
    file: s.test.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
  - name: r.test
    file: r.test.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
CONF
"$SHOALD" -c "$T_DIR/pri/shoald.conf" >"$T_DIR/pri/log" 2>&1 &
PRI_PID=$!
T_PIDS="$T_PIDS $PRI_PID"
wait_answering 127.0.0.1 "$PPORT" || { cat "$T_DIR/pri/log"; exit 99; }

# sec_conf S-FILE: the secondary's configuration, s.test saved to S-FILE; r.test relative
sec_conf() {
	cat >"$T_DIR/sec/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
user: nobody
control: $T_DIR/sec/ctl
metrics: 127.0.0.1@$MPORT
state-dir: state
zones:
  - name: s.test
    file: $1
    primaries: ["127.0.0.1@$PPORT NOKEY"]
  - name: r.test
    file: r.test.zone
    primaries: ["127.0.0.1@$PPORT NOKEY"]
CONF
}

# a folder nobody cannot write: --check says so, naming the folder and the cause
sec_conf "$T_DIR/ro/s.test.zone"
out=$("$SHOALD" --check -c "$T_DIR/sec/shoald.conf" 2>&1)
check_eq "--check of a secondary whose folder the user cannot write exits 1" 1 $?
check_match "... naming the zone, the folder and the cause" \
	"s.test.*$T_DIR/ro.*Permission denied" "$out"
sec_conf s.test.zone
out=$("$SHOALD" --check -c "$T_DIR/sec/shoald.conf" 2>&1)
check_eq "--check with both files in state-dir exits 0" 0 $?

# at runtime: served, but not saved, and every output says so
sec_conf "$T_DIR/ro/s.test.zone"
start_shoald "$PORT" -c "$T_DIR/sec/shoald.conf" || exit 99
served() { [ "$(q "$PORT" +short "$1" SOA | awk '{print $3}')" = 7 ]; }
wait_until 30 served s.test || fail "s.test transferred: [$(ctl zone-status)]"
saved() { [ -s "$T_DIR/sec/state/r.test.zone" ]; }
if wait_until 30 saved; then pass "r.test's relative file is written in state-dir"
else fail "r.test saved in state-dir: [$(ls -la "$T_DIR/sec/state")] [$(ctl zone-status)]"; fi
check_eq "... and nowhere else" "" "$(ls "$T_DIR/sec" | grep 'r.test')"
unsaved() { ctl zone-status s.test | grep -q 'save-error'; }
wait_until 30 unsaved
check_match "zone-status shows s.test's failed save with its cause" \
	"^s.test. .* save-error cannot save to $T_DIR/ro/s.test.zone: .*Permission denied" \
	"$(ctl zone-status s.test)"
check_match "r.test has none" "^r.test. " "$(ctl zone-status r.test)"
check_eq "... none at all" "" "$(ctl zone-status r.test | grep save-error)"
m=$(metrics)
check_match "the metrics count the failed save" "^shoal_xfr_in_save_failures_total [1-9]" "$m"
check_match "... show the zone unsaved" '^shoal_zone_unsaved\{zone="s.test."\} 1$' "$m"
check_match "... and r.test saved" '^shoal_zone_unsaved\{zone="r.test."\} 0$' "$m"
check_match "... and how many are unsaved" "^shoal_secondary_unsaved_zones 1$" "$m"
check_match "the log says why" "zone s.test.*cannot save to $T_DIR/ro/s.test.zone.*Permission denied" \
	"$(cat "$T_DIR/shoald.log")"

# the path fixed by a reconfig: written at once, the primary's serial unchanged
sec_conf s.test.zone
out=$(ctl reconfig)
check_eq "the reconfig that moves s.test's file exits 0" 0 $?
saved_s() { [ -s "$T_DIR/sec/state/s.test.zone" ]; }
if wait_until 30 saved_s; then pass "s.test is saved at once after the reconfig (no new serial)"
else fail "s.test saved after the reconfig: [$(ctl zone-status s.test)]"; fi
fixed() { ! ctl zone-status s.test | grep -q save-error; }
wait_until 10 fixed
check_eq "zone-status no longer shows a save error" "" "$(ctl zone-status s.test | grep save-error)"
m=$(metrics)
check_match "the gauge is back to 0" "^shoal_secondary_unsaved_zones 0$" "$m"
check_match "... and the zone's" '^shoal_zone_unsaved\{zone="s.test."\} 0$' "$m"
stop_within "$SHOALD_PID"
check_eq "the secondary stops cleanly" 0 $?

# the primary down, a restart serves both from state-dir
stop_within "$PRI_PID"
start_shoald "$PORT" -c "$T_DIR/sec/shoald.conf" || exit 99
check_eq "restarted with the primary down, s.test answers from state-dir" 7 \
	"$(q "$PORT" +short s.test SOA | awk '{print $3}')"
check_eq "... and r.test" 7 "$(q "$PORT" +short r.test SOA | awk '{print $3}')"
stop_within "$SHOALD_PID"
check_eq "the secondary stops cleanly" 0 $?
done_testing
