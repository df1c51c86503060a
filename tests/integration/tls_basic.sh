#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# DNS over TLS (listen-tls, RFC 7858): kdig +tls and dig +tls get answers; the
# self-signed key and certificate are made at the first start in state-dir (key
# mode 0600, subject CN=identity) and kept, so the pin shoalctl tls-pin prints
# stays the same across a restart; kdig +tls-pin with it connects, with another
# pin it is refused; pipelined queries come back in order on one connection; a
# client with a ticket resumes; ALPN other than "dot" is refused; zone
# transfers over TLS (RFC 9103) with provide-xfr "tls", refused over plain TCP
# with the reason logged.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

TLSCLIENT=$SHOAL_BUILDDIR/tests/integration/tlsclient
KDIG=$(command -v kdig)
port=$(free_port)
tport=$(free_port)
mkdir -m 700 "$T_DIR/state"
cat >"$T_DIR/example.zone" <<'ZONE'
$ORIGIN example.
$TTL 300
@ SOA ns1 hostmaster 7 3600 600 86400 300
@ NS ns1
ns1 A 192.0.2.1
www A 192.0.2.2
ZONE
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$port
listen-tls: 127.0.0.1@$tport
threads: 2
identity: ns1.tls.test
state-dir: $T_DIR/state
control: $T_DIR/ctl
zones:
  - name: example.
    file: $T_DIR/example.zone
    provide-xfr: [ "127.0.0.1 NOKEY tls" ]
CONF
start_shoald "$port" -c "$T_DIR/shoald.conf" || exit 1

check_match "the first start makes a self-signed pair in state-dir" \
	"made a self-signed key and certificate \(CN=ns1.tls.test\) in $T_DIR/state" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "the key is the owner's alone" 600 "$(stat -c %a "$T_DIR/state/tls.key")"
pin_out=$("$SHOALCTL" -s "$T_DIR/ctl" tls-pin)
pin=$(echo "$pin_out" | head -1)
check_match "shoalctl tls-pin: the pin alone on the first line" '^[A-Za-z0-9+/]{43}=$' "$pin"
check_match "and the subject" '^subject CN=ns1.tls.test$' "$pin_out"
check_eq "the log names the same pin" 1 "$(grep -cF "SPKI pin $pin" "$T_DIR/shoald.log")"

# tls_total NAME: the total of the TLS counter NAME (only tls has these names)
tls_total() {
	"$SHOALCTL" -s "$T_DIR/ctl" stats json | grep '"total"' | grep -o "\"$1\": [0-9]*" |
		cut -d' ' -f2
}
check_eq "kdig +tls" 192.0.2.2 "$("$KDIG" @127.0.0.1 -p "$tport" +tls +short www.example A)"
check_eq "dig +tls" 192.0.2.2 "$(q "$tport" +tls +short www.example A)"
check_eq "kdig +tls-pin with shoalctl's pin" 192.0.2.2 \
	"$("$KDIG" @127.0.0.1 -p "$tport" +tls-pin="$pin" +short www.example A)"
other=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
out=$("$KDIG" @127.0.0.1 -p "$tport" +tls-pin="$other" +short +retry=0 www.example A 2>&1)
check_match "kdig +tls-pin with another pin is refused" 'failed|ERROR' "$out"
# the client hangs up mid-handshake (an alert, or a reset): the server counts and logs it
failed_one() { [ "$(tls_total handshake_failed)" = 1 ]; }
wait_until 5 failed_one
check_eq "the server counts the failed handshake at once" 1 "$(tls_total handshake_failed)"
check_match "and the server logs the failed handshake" 'TLS from 127\.0\.0\.1@[0-9]+: ' \
	"$(cat "$T_DIR/shoald.log")"
check_eq "the pin tlsclient computes is shoalctl's" "pin $pin" \
	"$("$TLSCLIENT" -P 127.0.0.1 "$tport" www.example | head -1)"

out=$("$TLSCLIENT" -c 4 -n 300 127.0.0.1 "$tport" www.example)
echo "# $out"
check_match "300 pipelined queries on each of 4 connections, answered in order" \
	'queries 1200 answers 1200 in_order 1200 noerror 1200 lost 0' "$out"
out=$("$TLSCLIENT" -R -c 3 -n 2 127.0.0.1 "$tport" www.example)
check_match "a session ticket resumes the later connections" 'opened 3 resumed 2 ' "$out"
check_match "tls.resumed counts them" '^[2-9]$' "$(tls_total resumed)"
failed=$(tls_total handshake_failed)
check_eq "a client that offers only h2 is refused (ALPN)" 1 \
	"$("$TLSCLIENT" -A h2 127.0.0.1 "$tport" www.example >/dev/null 2>&1; echo $?)"
check_eq "and it is counted" $((failed + 1)) "$(tls_total handshake_failed)"

# transfers: over TLS only
out=$("$KDIG" @127.0.0.1 -p "$tport" +tls example AXFR)
check_match "AXFR over TLS" 'www\.example\.[[:space:]]+300[[:space:]]+IN[[:space:]]+A[[:space:]]+192\.0\.2\.2' \
	"$out"
check_match "dig +tls AXFR" 'XFR size: 5 records' "$(q "$tport" +tls example AXFR)"
check_match "AXFR over plain TCP: REFUSED" 'REFUSED' \
	"$("$KDIG" @127.0.0.1 -p "$port" +tcp example AXFR 2>&1)"
check_match "and the log says TLS is asked for" \
	'AXFR example\. from 127\.0\.0\.1@[0-9]+: provide-xfr 127\.0\.0\.1 asks for TLS: REFUSED' \
	"$(cat "$T_DIR/shoald.log")"
check_match "the transfer over TLS is logged so" 'AXFR example\. to 127\.0\.0\.1@[0-9]+ over TLS: serial 7' \
	"$(cat "$T_DIR/shoald.log")"
check_match "plain DNS over TCP still answers" 192.0.2.2 "$(q "$port" +tcp +short www.example A)"

# a restart keeps the pair, and so the pin
stop_within "$SHOALD_PID" 20
start_shoald "$port" -c "$T_DIR/shoald.conf" || exit 1
check_eq "after a restart, the same pin" "$pin" "$("$SHOALCTL" -s "$T_DIR/ctl" tls-pin | head -1)"
check_eq "and no new pair made" 1 "$(grep -c 'made a self-signed' "$T_DIR/shoald.log")"
check_eq "kdig +tls-pin still connects" 192.0.2.2 \
	"$("$KDIG" @127.0.0.1 -p "$tport" +tls-pin="$pin" +short www.example A)"
done_testing
