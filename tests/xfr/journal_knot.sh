#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/journal_knot: issue 31's "done when", with Knot DNS as the secondary. Knot takes
# k.test at serial 1 from a Shoal primary and stops; Shoal's zone goes to serial 4 by three
# reloads, then Shoal restarts; Knot starts again, three serials behind, and is brought up
# to date by IXFR with the changes (Shoal's counters: one IXFR answer, no whole zone sent;
# Knot's log: no AXFR-style answer), the same records as Shoal serves. Skipped without
# knotd.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

if [ -z "$KNOTD" ] || [ -z "$KNOTC" ]; then
	echo "SKIP: knotd is not installed (Debian package knot)"
	exit 77
fi
PORT=$(free_port) || exit 99
KPORT=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# version SERIAL: k.test at SERIAL, with one host per version up to it
version() { hosts_version k.test "$1"; }
# counter NAME: an outgoing transfer counter of shoalctl stats json
counter() { json_value "$(ctl stats json)" "$1" | tr -d ' '; }
version 1
mkdir -p "$T_DIR/state" "$T_DIR/knot"
chmod 700 "$T_DIR/state"
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
state-dir: $T_DIR/state
zones:
  - name: k.test
    file: k.test.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
    notify: [ 127.0.0.1@$KPORT NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
SEC_ZONES="k.test:NOKEY"
knot_secondary "$T_DIR/knot" "$KPORT" "$PORT"
wait_until 30 serial_is "$KPORT" k.test 1 || fail "Knot took serial 1: $(tail -5 "$T_DIR/knot/log")"
# Knot keeps serial 1 across its own restart: its zone file written now (forced: the
# peers' template turns its own writing off)
"$KNOTC" -c "$T_DIR/knot/knot.conf" -b -f zone-flush k.test >"$T_DIR/knotc.out" 2>&1 || cat "$T_DIR/knotc.out"
check_eq "Knot saved serial 1" yes "$([ -s "$T_DIR/knot/zones/k.test.zone" ] && echo yes)"
kill "$PEER_PID"
wait "$PEER_PID" 2>/dev/null

# three serials while Knot is down, then a restart of the primary
for s in 2 3 4; do
	version "$s"
	ctl reload k.test >/dev/null
done
check_eq "the primary serves serial 4" 4 "$(peer_serial "$PORT" k.test)"
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

lines=$(wc -l <"$T_DIR/knot/log")
knot_start "$T_DIR/knot" "$T_DIR/knot/log"
wait_until 30 serial_is "$KPORT" k.test 1 || fail "Knot serves its saved serial 1"
# its refresh is an hour away: asked now, as a NOTIFY it missed would have
"$KNOTC" -c "$T_DIR/knot/knot.conf" zone-refresh k.test >"$T_DIR/knotc.out" 2>&1 ||
	cat "$T_DIR/knotc.out"
if wait_until 60 serial_is "$KPORT" k.test 4; then pass "Knot, three serials behind, reaches 4"
else fail "Knot reaches 4: $(tail -5 "$T_DIR/knot/log")"; fi
check_eq "Shoal answered one IXFR with the changes" 1 "$(counter ixfr)"
check_eq "... and sent no whole zone" 0 "$(counter axfr)"
knot_lines=$(tail -n +"$((lines + 1))" "$T_DIR/knot/log")
check_match "Knot took an IXFR" "IXFR, incoming.*(finished|serial 1 -> 4)" "$knot_lines"
check_eq "... not an AXFR-style one" "" "$(printf '%s\n' "$knot_lines" | grep -i 'AXFR-style')"
check_eq "Knot serves the hosts Shoal serves" "$(answers "$PORT" h4.k.test A h1.k.test A)" \
	"$(answers "$KPORT" h4.k.test A h1.k.test A)"
kill "$PEER_PID"
stop_within "$SHOALD_PID"
done_testing
