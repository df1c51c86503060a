#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Zone transfers in over TLS (RFC 9103): one shoald is the primary, its
# provide-xfr asking for TLS and a key; a second one, its secondary with
# primaries "ADDR@PORT KEY tls", transfers pin.test with the primary's pin
# (strict, RFC 9103 9.3.2) and opp.test without (opportunistic, 9.3.1): the
# SOA query and the transfer both go over TLS (the primary's handshakes count
# them, its UDP and TCP see none of them), a change reaches the secondary by
# IXFR over TLS. bad.test, with a pin that is not the primary's, is refused
# during the handshake: the secondary logs the key it was shown, the
# primary counts and logs the failed handshake. Mutual TLS: the primary,
# reconfigured to ask for the secondary's key by its pin, gives mtls.test to
# it and refuses mbad.test (another pin), saying what was missing.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

mkdir -p "$T_DIR/pri/state" "$T_DIR/sec/state"
chmod 700 "$T_DIR/pri/state" "$T_DIR/sec/state"
# write_zone NAME SERIAL: www moves with the serial.
write_zone() {
	{
		printf '$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hostmaster %s 3600 600 86400 300\n' "$1" "$2"
		printf '@ NS ns1\nns1 A 192.0.2.1\nwww A 192.0.2.%s\n' "$2"
	} >"$T_DIR/pri/$1.zone"
}
for z in pin.test opp.test bad.test mtls.test mbad.test; do write_zone $z 1; done
PPORT=$(free_port) || exit 99
TPORT=$(free_port) || exit 99
PORT=$(free_port) || exit 99
PCTL=$T_DIR/pri/ctl
KEY="keys:
  - name: xfr-key
    algorithm: hmac-sha256
    secret: \"hVXazZpI2xIG1nyPHmlJNC8tV89c4sQXRlcOGNTYPG0=\""
# pri_conf ZONE:TLS...: the primary's configuration, each ZONE given to 127.0.0.1 with
# xfr-key and "tls TLS" ("tls" alone when TLS is empty)
pri_conf() {
	local z
	printf 'listen: 127.0.0.1@%s\nlisten-tls: 127.0.0.1@%s\nthreads: 2\n' "$PPORT" "$TPORT"
	printf 'identity: primary.test\nstate-dir: %s\ncontrol: %s\n%s\nzones:\n' \
		"$T_DIR/pri/state" "$PCTL" "$KEY"
	for z in "$@"; do
		printf '  - name: %s\n    file: %s\n' "${z%%:*}" "$T_DIR/pri/${z%%:*}.zone"
		printf '    provide-xfr: ["127.0.0.1 xfr-key tls%s"]\n' "${z#*:}"
	done
}
pri_conf pin.test: opp.test: bad.test: >"$T_DIR/pri/shoald.conf"
"$SHOALD" -c "$T_DIR/pri/shoald.conf" >"$T_DIR/pri/log" 2>&1 &
PRI_PID=$!
T_PIDS="$T_PIDS $PRI_PID"
wait_answering 127.0.0.1 "$PPORT" || { cat "$T_DIR/pri/log"; exit 99; }
wait_ready "$PCTL" "$PRI_PID" || exit 99
pin=$("$SHOALCTL" -s "$PCTL" tls-pin | head -1)
other=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
# pri_stat NAME [N]: the primary's total counter NAME, summed over its first N
# (default 1) occurrences: "queries" is UDP's, then TCP's, then TLS's
pri_stat() {
	"$SHOALCTL" -s "$PCTL" stats json | grep '"total"' | grep -o "\"$1\": [0-9]*" |
		head -"${2:-1}" | cut -d' ' -f2 | awk '{ s += $1 } END { print s + 0 }'
}
plain_before=$(pri_stat queries 2)

cat >"$T_DIR/sec/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
state-dir: $T_DIR/sec/state
min-refresh-time: 1
min-retry-time: 1
xfr-message-timeout: 5
$KEY
zones:
  - name: pin.test
    file: $T_DIR/sec/pin.test.zone
    primaries: ["127.0.0.1@$TPORT xfr-key tls"]
    tls-pin: "$pin"
  - name: opp.test
    file: $T_DIR/sec/opp.test.zone
    primaries: ["127.0.0.1@$TPORT xfr-key tls"]
  - name: bad.test
    file: $T_DIR/sec/bad.test.zone
    primaries: ["127.0.0.1@$TPORT xfr-key tls"]
    tls-pin: ["$other"]
CONF
start_shoald "$PORT" -c "$T_DIR/sec/shoald.conf" || exit 99
serial_is() { [ "$(q "$PORT" +short "$1" SOA 2>/dev/null | awk '{print $3}')" = "$2" ]; }
if wait_until 20 serial_is pin.test 1; then pass "pin.test transferred over TLS, the pin checked"
else fail "pin.test transferred over TLS: $(cat "$T_DIR/shoald.log")"; fi
if wait_until 20 serial_is opp.test 1; then pass "opp.test transferred over TLS, opportunistic"
else fail "opp.test transferred over TLS"; fi
check_eq "its records" 192.0.2.1 "$(q "$PORT" +short www.opp.test A)"
check_match "the primary logs the transfers over TLS" \
	'AXFR pin\.test\. to 127\.0\.0\.1@[0-9]+ over TLS: serial 1' "$(cat "$T_DIR/pri/log")"

wait_line "$T_DIR/shoald.log" 'bad\.test.*TLS handshake failed'
check_match "bad.test: the pin refused during the handshake" \
	"bad\\.test.*primary 127\\.0\\.0\\.1@$TPORT over TLS: TLS handshake failed: " \
	"$(cat "$T_DIR/shoald.log")"
check_eq "the line names the key shown, and the pins asked for" 1 \
	"$(grep 'bad\.test.*TLS handshake failed' "$T_DIR/shoald.log" | head -1 |
		grep -cF "the server's key (pin $pin) is none of tls-pin")"
check_eq "bad.test is not served" "" "$(q "$PORT" +short bad.test SOA)"
# the client's alert, or its reset: the primary counts it at once, not at its handshake timeout
failed_some() { [ "$(pri_stat handshake_failed)" -gt 0 ]; }
wait_until 3 failed_some
check_match "the primary counts the failed handshake" '^[1-9]' "$(pri_stat handshake_failed)"
check_match "and logs it" 'TLS from 127\.0\.0\.1@[0-9]+: ' "$(cat "$T_DIR/pri/log")"
check_eq "no refusal for want of TLS: nothing went over plain TCP" "" \
	"$(grep 'asks for TLS' "$T_DIR/pri/log")"

# a change, and a refresh asked for (no NOTIFY): an SOA query, then IXFR, over TLS
write_zone pin.test 2
kill -HUP "$PRI_PID"
wait_line "$T_DIR/pri/log" 'zone pin\.test\. serial 2 loaded'
"$SHOALCTL" -s "$T_DIR/ctl" refresh pin.test >/dev/null
if wait_until 20 serial_is pin.test 2; then pass "the change reaches the secondary"
else fail "the change reaches the secondary: $(tail "$T_DIR/shoald.log")"; fi
check_eq "its records" 192.0.2.2 "$(q "$PORT" +short www.pin.test A)"
check_match "by IXFR over TLS" 'IXFR pin\.test\. to 127\.0\.0\.1@[0-9]+ over TLS' \
	"$(cat "$T_DIR/pri/log")"
# the refresh: an SOA query, then the transfer, each on its own TLS connection
check_eq "the SOA query went over TLS too (handshakes: 2 AXFR, 1 SOA, 1 IXFR)" 4 \
	"$(pri_stat handshakes)"
check_eq "the primary answered no UDP or TCP query of theirs" "$plain_before" \
	"$(pri_stat queries 2)"

# mutual TLS (RFC 9103 9.3.3): the primary asks for the secondary's key by its pin
sec_pin=$("$SHOALCTL" -s "$T_DIR/ctl" tls-pin | head -1)
pri_conf pin.test: opp.test: bad.test: "mtls.test: $sec_pin" "mbad.test: $other" \
	>"$T_DIR/pri/shoald.conf"
check_match "the primary takes the client pins by reconfig" '^reconfig done' \
	"$("$SHOALCTL" -s "$PCTL" reconfig 2>&1)"
cat >>"$T_DIR/sec/shoald.conf" <<CONF
  - name: mtls.test
    file: $T_DIR/sec/mtls.test.zone
    primaries: ["127.0.0.1@$TPORT xfr-key tls"]
    tls-pin: "$pin"
  - name: mbad.test
    file: $T_DIR/sec/mbad.test.zone
    primaries: ["127.0.0.1@$TPORT xfr-key tls"]
    tls-pin: "$pin"
CONF
check_match "the secondary takes the two zones by reconfig" '^reconfig done' \
	"$("$SHOALCTL" -s "$T_DIR/ctl" reconfig 2>&1)"
if wait_until 20 serial_is mtls.test 1; then pass "mutual TLS: the secondary's key, pinned, gets mtls.test"
else fail "mutual TLS: mtls.test: $(grep mtls "$T_DIR/shoald.log" "$T_DIR/pri/log")"; fi
wait_line "$T_DIR/pri/log" 'mbad\.test.*REFUSED'
check_match "another client pin: REFUSED, and the primary says what was missing" \
	'mbad\.test\. from 127\.0\.0\.1@[0-9]+.*a client certificate of the pinned key \(another key was shown\).*REFUSED' \
	"$(cat "$T_DIR/pri/log")"
check_match "the secondary logs the refusal" 'mbad\.test.*REFUSED' "$(cat "$T_DIR/shoald.log")"
check_eq "mbad.test is not served" "" "$(q "$PORT" +short mbad.test SOA)"

stop_within "$SHOALD_PID"
check_eq "the secondary stops cleanly" 0 $?
stop_within "$PRI_PID"
check_eq "the primary stops cleanly" 0 $?
done_testing
