#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/update_knot: a dynamic update reaches a secondary by NOTIFY and IXFR (issue 35). Knot
# DNS takes u.test from a Shoal primary; nsupdate adds and deletes records at Shoal; Knot
# follows each new serial by IXFR (Shoal's counters: IXFR answers, no whole zone sent after
# the first; Knot's log: IXFR in) and serves what Shoal serves. Skipped without knotd or
# nsupdate.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

if [ -z "$KNOTD" ] || [ -z "$KNOTC" ] || ! command -v nsupdate >/dev/null; then
	echo "SKIP: knotd (Debian package knot) and nsupdate (bind9-dnsutils) are needed"
	exit 77
fi
PORT=$(free_port) || exit 99
KPORT=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
counter() { json_value "$(ctl stats json)" "$1" | tr -d ' '; }
{
	printf '$ORIGIN u.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n'
	printf '@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.80\n'
} >"$T_DIR/u.test.zone"
mkdir -p "$T_DIR/knot"
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
keys:
  - { name: $XFR_KEY, algorithm: hmac-sha256, secret: "$XFR_SECRET" }
zones:
  - name: u.test
    file: u.test.zone
    provide-xfr: ["127.0.0.1 $XFR_KEY"]
    notify: [ "127.0.0.1@$KPORT $XFR_KEY" ]
    allow-update:
      - key: $XFR_KEY
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
SEC_ZONES="u.test:$XFR_KEY"
knot_secondary "$T_DIR/knot" "$KPORT" "$PORT"
wait_until 30 serial_is "$KPORT" u.test 1 || fail "Knot took serial 1: $(tail -5 "$T_DIR/knot/log")"

# nu COMMANDS: one update to Shoal, signed; prints NOERROR or the rcode it failed with
nu() {
	local out
	out=$({
		printf 'server 127.0.0.1 %s\nzone u.test\n' "$PORT"
		cat
		printf 'send\n'
	} | timeout 20 nsupdate -y "hmac-sha256:$XFR_KEY:$XFR_SECRET" 2>&1)
	if [ -z "$out" ]; then echo NOERROR; else sed -n 's/.*update failed: \([A-Z]*\).*/\1/p' <<<"$out"; fi
}
lines=$(wc -l <"$T_DIR/knot/log")
check_eq "add at the primary: NOERROR" NOERROR "$(nu <<<'update add new.u.test 300 A 192.0.2.99')"
if wait_until 30 serial_is "$KPORT" u.test 2; then pass "Knot follows to serial 2"
else fail "Knot reaches 2: $(tail -5 "$T_DIR/knot/log")"; fi
REPLACE='update delete www.u.test A
update add www.u.test 300 A 192.0.2.81
update add new.u.test 300 TXT "two types"'
check_eq "delete and replace: NOERROR" NOERROR "$(nu <<<"$REPLACE")"
if wait_until 30 serial_is "$KPORT" u.test 3; then pass "Knot follows to serial 3"
else fail "Knot reaches 3: $(tail -5 "$T_DIR/knot/log")"; fi
knot_lines=$(tail -n +"$((lines + 1))" "$T_DIR/knot/log")
check_match "Knot took IXFRs" "IXFR, incoming.*(finished|serial 2 -> 3)" "$knot_lines"
check_eq "... none AXFR-style" "" "$(printf '%s\n' "$knot_lines" | grep -i 'AXFR-style')"
check_eq "Shoal sent no whole zone after the first" 1 "$(counter axfr)"
check_match "Shoal answered IXFRs" "^[1-9]" "$(counter ixfr)"
check_eq "Knot serves what Shoal serves" \
	"$(answers "$PORT" new.u.test A new.u.test TXT www.u.test A)" \
	"$(answers "$KPORT" new.u.test A new.u.test TXT www.u.test A)"
check_match "... the updated records" "192.0.2.81" "$(answers "$KPORT" www.u.test A)"
kill "$PEER_PID"
wait "$PEER_PID" 2>/dev/null
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
