#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/zonefile_sync: a secondary's file is written by the flush thread, zonefile-sync
# seconds after a new version (issue 31). A Shoal primary changes three zones by reloads;
# a Shoal secondary has zonefile-sync 3600 globally, 0 for now.test (written after each
# transfer, as before the option; a reconfig then sets an hour), 3 for soon.test (two transfers within the 3 s: one
# write, of the newest serial), and the global hour for late.test (nothing written while
# it runs; a stop writes it). A secondary killed with a write pending restarts with its
# older file and the journal: it serves the newest serial it had (the journal's changes
# applied onto the file, where the start used to cut them).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

PORT=$(free_port) || exit 99
SEC=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
sctl() { "$SHOALCTL" -s "$T_DIR/sctl" "$@" 2>&1; }
# version ZONE SERIAL: ZONE's file on the primary at SERIAL
version() {
	{
		printf '$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1 hostmaster %s 3600 600 86400 60\n' "$1" "$2"
		printf '@ IN NS ns1\nns1 IN A 192.0.2.1\nv IN TXT "%s"\n' "$2"
	} >"$T_DIR/p/$1.zone.new"
	mv "$T_DIR/p/$1.zone.new" "$T_DIR/p/$1.zone"
}
# to ZONE SERIAL: the primary reloads ZONE at SERIAL; the secondary serves it
to() {
	version "$1" "$2"
	ctl reload "$1" >/dev/null
	wait_until 30 serial_is "$SEC" "$1" "$2" || fail "the secondary did not take $1 $2"
}
# writes ZONE: how many times the secondary wrote ZONE's file
writes() { grep -c "zone $1\.: serial [0-9]* written to" "$T_DIR/shoald.log"; }
# ixfr PORT ZONE SERIAL: the answer to an IXFR from SERIAL
ixfr() { "$DIG" @127.0.0.1 -p "$1" +time=3 +tries=1 +noall +answer "$2" "IXFR=$3" 2>&1; }
# shape TEXT: an IXFR answer as "SOAS/SERIAL" (changes: 4 SOAs or more; the whole zone: 2)
shape() {
	printf '%s\n' "$1" | awk '$4 == "SOA" { n++; if (n == 1) s = $7 } END { print (n > 4 ? 4 : n) "/" s }'
}
# saved ZONE: the serial in the secondary's file of ZONE
saved() { awk '{ for (i = 1; i < NF; i++) if ($i == "SOA") { print $(i + 3); exit } }' "$T_DIR/s/$1.zone" 2>/dev/null; }
# saved_is ZONE SERIAL: the secondary's file of ZONE is at SERIAL
saved_is() { [ "$(saved "$1")" = "$2" ]; }

mkdir -p "$T_DIR/p" "$T_DIR/s" "$T_DIR/sstate"
chmod 700 "$T_DIR/sstate"
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nzones:\n' "$PORT" "$T_DIR"
	for z in now.test soon.test late.test; do
		version "$z" 1
		printf '  - name: %s\n    file: %s/p/%s.zone\n' "$z" "$T_DIR" "$z"
		printf '    provide-xfr: ["127.0.0.1 NOKEY"]\n    notify: [ 127.0.0.1@%s NOKEY ]\n' "$SEC"
	done
} >"$T_DIR/shoald.conf"
# sec_conf NOW: the secondary's configuration, with zonefile-sync NOW for now.test
sec_conf() {
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/sctl\n' "$SEC" "$T_DIR"
	printf 'state-dir: %s/sstate\nzonefile-sync: 3600\nzones:\n' "$T_DIR"
	for z in "now.test:$1" soon.test:3 late.test:; do
		printf '  - name: %s\n    file: %s/s/%s.zone\n' "${z%:*}" "$T_DIR" "${z%:*}"
		printf '    primaries: [ 127.0.0.1@%s NOKEY ]\n' "$PORT"
		printf '    allow-notify: ["127.0.0.1 NOKEY"]\n    provide-xfr: ["127.0.0.1 NOKEY"]\n'
		[ -n "${z#*:}" ] && printf '    zonefile-sync: %s\n' "${z#*:}"
	done
}
sec_conf 0 >"$T_DIR/sec.conf"
# the secondary starts with soon.test and late.test saved at serial 1: no transfer for them
cp "$T_DIR/p/soon.test.zone" "$T_DIR/p/late.test.zone" "$T_DIR/s/"

start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
PRI_PID=$SHOALD_PID
start_shoald "$SEC" -c "$T_DIR/sec.conf" || exit 99
SEC_PID=$SHOALD_PID

# zonefile-sync 0: each transfer is written, as before the option
wait_until 30 serial_is "$SEC" now.test 1 || fail "now.test not transferred"
wait_until 30 saved_is now.test 1
check_eq "sync 0: the first transfer is written" "1 1" "$(writes now.test) $(saved now.test)"
to now.test 2
wait_until 30 saved_is now.test 2
check_eq "sync 0: the next one too" "2 2" "$(writes now.test) $(saved now.test)"

# zonefile-sync 3: two IXFRs within the 3 s, one write of the newest
to soon.test 2
to soon.test 3
check_eq "sync 3: nothing written yet after two transfers" "0 1" \
	"$(writes soon.test) $(saved soon.test)"
wait_until 30 saved_is soon.test 3
check_eq "sync 3: then one write, of serial 3" "1 3" "$(writes soon.test) $(saved soon.test)"
check_match "both came by IXFR" "soon\.test\.: serial 2 .* by IXFR.*soon\.test\.: serial 3 .* by IXFR" \
	"$(grep 'soon.test.: serial [23] from' "$T_DIR/shoald.log" | tr '\n' ' ')"
check_match "zone-status: soon.test saved" "^soon.test. serial 3 .*" "$(sctl zone-status soon.test)"

# zonefile-sync 3600 (the global one): written at the stop, not before
to late.test 2
to late.test 3
check_eq "sync 3600: nothing written while it runs" "0 1" \
	"$(writes late.test) $(saved late.test)"
# a reconfig changes it: now.test from 0 to an hour
sec_conf 3600 >"$T_DIR/sec.conf"
out=$(sctl reconfig)
check_eq "reconfig exits 0" 0 $?
to now.test 3
check_eq "after a reconfig to 3600, now.test's next version is not written" "2 2" \
	"$(writes now.test) $(saved now.test)"
stop_within "$SEC_PID"
check_eq "shoald stops cleanly" 0 $?
check_eq "... the stop writes it" "3 3" "$(writes now.test) $(saved now.test)"
check_eq "the stop writes the pending version, once" "1 3" \
	"$(writes late.test) $(saved late.test)"

# killed with a write pending: the older file and the journal give the newest serial
start_shoald "$SEC" -c "$T_DIR/sec.conf" || exit 99
SEC_PID=$SHOALD_PID
check_eq "the restart serves the saved late.test" 3 "$(peer_serial "$SEC" late.test)"
to late.test 4
to late.test 5
check_eq "serial 5 not written yet" 3 "$(saved late.test)"
kill -KILL "$SEC_PID"
wait "$SEC_PID" 2>/dev/null
stop_within "$PRI_PID" # the primary down: only the file and the journal are left
lines=$(wc -l <"$T_DIR/shoald.log")
start_shoald "$SEC" -c "$T_DIR/sec.conf" || exit 99
SEC_PID=$SHOALD_PID
check_eq "after a crash, the journal brings the file's serial 3 to 5" 5 \
	"$(peer_serial "$SEC" late.test)"
check_match "... said in the log" "2 changes past its serial 3 \\(to 5\\), not written to it yet, applied from the journal" \
	"$(tail -n +"$((lines + 1))" "$T_DIR/shoald.log")"
check_eq "... no history dropped" "" \
	"$(tail -n +"$((lines + 1))" "$T_DIR/shoald.log" | grep -E "history leads|never saved")"
check_eq "... and IXFR from 3 still answers with the changes" "4/5" "$(shape "$(ixfr "$SEC" late.test 3)")"
check_eq "... and the file is written at that start" 5 "$(saved late.test)"
stop_within "$SEC_PID"

done_testing
