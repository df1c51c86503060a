#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/journal: the IXFR journal survives a restart (issue 31). A Shoal primary changes
# p.test by reloads from serial 1 to 4; after a restart a client at serial 1 still gets
# the changes (IXFR, the same answer as before), not the whole zone, as it did
# when the journal was kept in memory only (shown by removing the file). Memory keeps only
# where each change lies in the file: a record gone bad there is sent as the whole zone. A zone file
# edited while shoald was down drops the history, said in the log. A Shoal secondary
# killed while it writes a transferred change to its journal (at several octets of the
# record, SHOAL_TEST_JOURNAL_EXIT) restarts with its saved zone and a journal that leads
# to it: IXFR from serial 1 works up to the last complete change (a change written whole
# is applied onto the saved zone), and the next refresh goes on from there. A primary killed so restarts with its zone file's version: a torn
# change is cut and the history, which no longer leads to it, dropped (logged); a whole
# one stays. zone-remove takes the zone's journal file with it; a start removes the files
# of zones not configured and temporaries left by a crash.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

PORT=$(free_port) || exit 99
SEC=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
sctl() { "$SHOALCTL" -s "$T_DIR/sctl" "$@" 2>&1; }
# version SERIAL: p.test at SERIAL, with one host per version up to it
version() { hosts_version p.test "$1"; }
# ixfr PORT SERIAL: the answer to an IXFR from SERIAL
ixfr() { "$DIG" @127.0.0.1 -p "$1" +time=3 +tries=1 +noall +answer p.test "IXFR=$2" 2>&1; }
shape() { ixfr_shape "$1"; }
version 1
mkdir -p "$T_DIR/state" "$T_DIR/sstate"
chmod 700 "$T_DIR/state" "$T_DIR/sstate"
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
state-dir: $T_DIR/state
zones:
  - name: p.test
    file: p.test.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
    notify: [ 127.0.0.1@$SEC NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
for s in 2 3 4; do
	version "$s"
	ctl reload p.test >/dev/null
done
check_eq "the primary serves serial 4" 4 "$(peer_serial "$PORT" p.test)"
before=$(ixfr "$PORT" 1)
check_eq "IXFR from 1: the changes to 4" 4/4 "$(shape "$before")"
check_match "... h2 to h4 added, h1 not sent" "^h2[^h]*h3[^h]*h4[^h]*$" "$(printf '%s\n' "$before" | awk '$4 == "A" { print $1 }' | tr -d '\n')"
JFILE=$T_DIR/state/journal/p.test.journal
check_eq "the journal file is there" yes "$([ -s "$JFILE" ] && echo yes)"
check_match "zone-status says how much of it is on disk" \
	"journal 3 changes [0-9]+ octets from 1 on-disk $(stat -c %s "$JFILE")\b" \
	"$(ctl zone-status p.test)"
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?

# what a start finds there that is no journal of a zone configured goes: a zone taken out
# while shoald was down, a compaction's temporary file left by a crash
cp "$JFILE" "$T_DIR/state/journal/gone.test.journal"
cp "$JFILE" "$JFILE.1a2b3c4d"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "a start removes the journals of zones not configured, and temporary files" \
	"p.test.journal" "$(ls "$T_DIR/state/journal")"
check_match "... and says so" "2 file\(s\) of zones not configured, or left by a crash, removed" \
	"$(cat "$T_DIR/shoald.log")"
after=$(ixfr "$PORT" 1)
check_eq "after a restart, IXFR from 1: still the changes" 4/4 "$(shape "$after")"
check_eq "... the same answer as before the restart" "$before" "$after"
check_eq "IXFR from 3: one change" 4/4 "$(shape "$(ixfr "$PORT" 3)")"
# memory keeps where each change lies in the file, which an IXFR reads back: a record
# gone bad there (an octet of the first one's body changed) is sent as the whole zone
# (RFC 1995 4), logged; the changes after it still go as IXFR
cp "$JFILE" "$T_DIR/good.journal"
printf '\377' | dd of="$JFILE" bs=1 seek=60 count=1 conv=notrunc 2>/dev/null
check_eq "a bad record in the journal file: the whole zone" 2/4 "$(shape "$(ixfr "$PORT" 1)")"
check_match "... said in the log" "IXFR p.test. from serial 1 .*: the journal file .*p.test.journal cannot be read back" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "... the changes after it: IXFR" 4/4 "$(shape "$(ixfr "$PORT" 3)")"
cp "$T_DIR/good.journal" "$JFILE"
check_eq "... and the record put back: IXFR again" "$before" "$(ixfr "$PORT" 1)"
stop_within "$SHOALD_PID"

# the loss it prevents: without the file, a restart answers with the whole zone
cp "$JFILE" "$T_DIR/kept.journal"
rm -f "$JFILE"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "without the journal on disk: the whole zone" 2/4 "$(shape "$(ixfr "$PORT" 1)")"
stop_within "$SHOALD_PID"

# the zone file edited while shoald was down: the history cannot lead to it
cp "$T_DIR/kept.journal" "$JFILE"
version 9
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_match "an edited zone file drops the journal, logged" \
	"p.test.journal: its history leads to serial 4, not to the serial 9" \
	"$(grep 'history leads' "$T_DIR/shoald.log")"
check_eq "... and its file is removed" no "$([ -e "$JFILE" ] && echo yes || echo no)"
check_eq "... IXFR from 4 is the whole zone" 2/9 "$(shape "$(ixfr "$PORT" 4)")"

# ---- a secondary killed while it writes its journal ----
cat >"$T_DIR/sec.conf" <<CONF
listen: 127.0.0.1@$SEC
threads: 1
control: $T_DIR/sctl
state-dir: $T_DIR/sstate
zones:
  - name: p.test
    file: sec.p.test.zone
    primaries: [ 127.0.0.1@$PORT NOKEY ]
    allow-notify: ["127.0.0.1 NOKEY"]
    provide-xfr: ["127.0.0.1 NOKEY"]
CONF
SJFILE=$T_DIR/sstate/journal/p.test.journal
# start_sec: the secondary, SEC_PID (SHOALD_PID stays the primary's)
start_sec() {
	local primary=$SHOALD_PID rc
	start_shoald "$SEC" -c "$T_DIR/sec.conf"
	rc=$?
	SEC_PID=$SHOALD_PID
	SHOALD_PID=$primary
	return $rc
}
# primary_to SERIAL: the primary reloads p.test at SERIAL
primary_to() {
	version "$1"
	ctl reload p.test >/dev/null
}
start_sec || exit 99
wait_until 30 serial_is "$SEC" p.test 9 || fail "the secondary took serial 9: $(sctl zone-status)"
for s in 10 11 12; do
	primary_to "$s"
	wait_until 30 serial_is "$SEC" p.test "$s" || fail "the secondary took serial $s"
done
check_eq "the secondary: IXFR from 9, the changes" 4/12 "$(shape "$(ixfr "$SEC" 9)")"
stop_within "$SEC_PID"
serial=12
# octets of the record written before the kill: none, inside the header, inside the
# body, all of it (not synced)
for cut in 0 20 60 100000; do
	serial=$((serial + 1))
	primary_to "$serial"
	before=$(stat -c %s "$SJFILE")
	SHOAL_TEST_JOURNAL_EXIT=$cut "$SHOALD" -c "$T_DIR/sec.conf" >>"$T_DIR/shoald.log" 2>&1 &
	pid=$!
	T_PIDS="$T_PIDS $pid"
	wait_within "$pid" 60
	check_eq "cut $cut: the secondary dies writing its journal" 75 $?
	grown=$(($(stat -c %s "$SJFILE") - before))
	want=$cut
	[ "$cut" -gt 1000 ] && want=$grown # all of it: the record's size
	check_eq "cut $cut: $want octets of the change are on disk" "$want" "$grown"
	start_sec || exit 99
	# the saved zone is the one before the change: the history must lead to it; a change
	# written whole is applied onto it (as a file zonefile-sync had not written yet)
	got=$((serial - 1))
	[ "$cut" -gt 1000 ] && got=$serial
	check_eq "cut $cut: the saved zone, and a whole change, are served" "$got" \
		"$(peer_serial "$SEC" p.test)"
	check_eq "cut $cut: IXFR from 9 after the restart: the changes to $got" \
		"4/$got" "$(shape "$(ixfr "$SEC" 9)")"
	sctl refresh p.test >/dev/null
	wait_until 30 serial_is "$SEC" p.test "$serial" || fail "cut $cut: the secondary took $serial"
	check_eq "cut $cut: then the refresh's change is added: IXFR from 9 to $serial" \
		"4/$serial" "$(shape "$(ixfr "$SEC" 9)")"
	stop_within "$SEC_PID"
done

# ---- the primary killed while it writes its journal ----
stop_within "$SHOALD_PID"
# its zone file has the new serial already: a torn change leaves a history that leads to
# the serial before, which cannot answer for the zone loaded, and goes; a whole one stays
for cut in 40 100000; do
	SHOAL_TEST_JOURNAL_EXIT=$cut start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
	prev=$serial
	serial=$((serial + 1))
	version "$serial"
	ctl reload p.test >/dev/null
	wait_within "$SHOALD_PID" 60
	check_eq "primary cut $cut: it dies writing its journal" 75 $?
	lines=$(wc -l <"$T_DIR/shoald.log")
	start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
	check_eq "primary cut $cut: the zone file's version is served" "$serial" \
		"$(peer_serial "$PORT" p.test)"
	new=$(tail -n +"$((lines + 1))" "$T_DIR/shoald.log")
	if [ "$cut" -lt 1000 ]; then
		check_match "primary cut $cut: the torn change is cut, logged" \
			"p.test.journal: $cut octets of a torn or damaged change cut off its end" "$new"
		check_match "primary cut $cut: then the history to $prev is dropped, logged" \
			"its history leads to serial $prev, not to the serial $serial" "$new"
		check_eq "primary cut $cut: IXFR from $prev is the whole zone" "2/$serial" \
			"$(shape "$(ixfr "$PORT" "$prev")")"
	else
		# the history starts at 17: the torn case before dropped what came before
		check_eq "primary cut $cut: the whole change stays: IXFR from $prev" "4/$serial" \
			"$(shape "$(ixfr "$PORT" "$prev")")"
	fi
	stop_within "$SHOALD_PID"
done

# a zone taken out of the configuration takes its journal with it
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "the journal is there before zone-remove" yes "$([ -s "$JFILE" ] && echo yes)"
ctl zone-remove p.test >/dev/null
check_eq "zone-remove removes the zone's journal" no "$([ -e "$JFILE" ] && echo yes || echo no)"
stop_within "$SHOALD_PID"
done_testing
