#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/xot_bind: zone transfers over TLS (RFC 9103) with BIND 9.18, TSIG and
# TLS both. A test CA signs Shoal's certificate (shoal.test) and BIND's
# (bind.test); another CA signs nothing of theirs.
# - BIND as Shoal's XoT secondary: strict TLS (ca-file, remote-hostname) gets
#   sec.test, which Shoal serves over TLS only; with the other CA, BIND
#   refuses Shoal's certificate and says why, and Shoal counts and logs the
#   failed handshake.
# - BIND as Shoal's XoT primary (allow-transfer over TLS only): Shoal checks
#   BIND by its key's pin (pin.test) or by the CA and host name (host.test),
#   and transfers both over TLS; a pin that is not BIND's key (wrongpin.test)
#   or a host name its certificate does not have (wrongname.test) is refused
#   during the handshake, logged with the reason.
# Skipped without named or openssl.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

OPENSSL=$(command -v openssl)
if [ -z "$NAMED" ] || [ -z "$OPENSSL" ]; then
	echo "SKIP: named or openssl is not installed (Debian packages bind9, openssl)"
	exit 77
fi
TLSCLIENT=$SHOAL_BUILDDIR/tests/integration/tlsclient
chmod 755 "$T_DIR"
mkdir -p "$T_DIR/pki" "$T_DIR/bind" "$T_DIR/shoal" "$T_DIR/sec"
chmod 755 "$T_DIR/pki" "$T_DIR/bind" "$T_DIR/shoal" "$T_DIR/sec"

# ca NAME: a CA key and certificate, NAME.key and NAME.crt in pki/
ca() {
	"$OPENSSL" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
		-subj "/CN=$1" -keyout "$T_DIR/pki/$1.key" -out "$T_DIR/pki/$1.crt" 2>/dev/null
}
# leaf NAME CA: a server certificate for the host name NAME, signed by CA
leaf() {
	"$OPENSSL" req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
		-keyout "$T_DIR/pki/$1.key" -out "$T_DIR/pki/$1.csr" 2>/dev/null &&
		printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$1" \
			>"$T_DIR/pki/$1.ext" &&
		"$OPENSSL" x509 -req -in "$T_DIR/pki/$1.csr" -CA "$T_DIR/pki/$2.crt" \
			-CAkey "$T_DIR/pki/$2.key" -CAcreateserial -days 30 \
			-extfile "$T_DIR/pki/$1.ext" -out "$T_DIR/pki/$1.crt" 2>/dev/null
}
ca test-ca && ca other-ca && leaf shoal.test test-ca && leaf bind.test test-ca || {
	echo "openssl could not make the test certificates"
	exit 99
}
chmod 644 "$T_DIR"/pki/*
# pin_of CERT: base64 SHA-256 of the certificate's SubjectPublicKeyInfo (RFC 7858 4.2)
pin_of() {
	"$OPENSSL" x509 -in "$1" -pubkey -noout | "$OPENSSL" pkey -pubin -outform der |
		"$OPENSSL" dgst -sha256 -binary | base64
}

# write_zone DIR NAME SERIAL
write_zone() {
	{
		printf '$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hostmaster %s 3600 600 86400 300\n' "$2" "$3"
		printf '@ NS ns1\nns1 A 192.0.2.1\nwww A 192.0.2.%s\n' "$3"
	} >"$1/$2.zone"
}

# ---- BIND as Shoal's XoT secondary ----
PORT=$(free_port) || exit 99
TPORT=$(free_port) || exit 99
BPORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
for z in sec.test bad.test; do write_zone "$T_DIR/shoal" $z 1; done
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
listen-tls: 127.0.0.1@$TPORT
threads: 2
control: $CTL
tls-key-file: $T_DIR/pki/shoal.test.key
tls-cert-file: $T_DIR/pki/shoal.test.crt
keys:
  - name: $XFR_KEY
    algorithm: hmac-sha256
    secret: "$XFR_SECRET"
zones:
  - name: sec.test
    file: $T_DIR/shoal/sec.test.zone
    provide-xfr: ["127.0.0.1 $XFR_KEY tls"]
  - name: bad.test
    file: $T_DIR/shoal/bad.test.zone
    provide-xfr: ["127.0.0.1 $XFR_KEY tls"]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
{
	named_server_conf "$T_DIR/bind" "$BPORT"
	named_keys "$XFR_KEY" "$XFR_SECRET"
	cat <<-CONF
	tls strict { ca-file "$T_DIR/pki/test-ca.crt"; remote-hostname "shoal.test"; };
	tls wrong-ca { ca-file "$T_DIR/pki/other-ca.crt"; remote-hostname "shoal.test"; };
	zone "sec.test" {
	    type secondary;
	    file "sec.test.db";
	    primaries port $TPORT { 127.0.0.1 key $XFR_KEY tls strict; };
	};
	zone "bad.test" {
	    type secondary;
	    file "bad.test.db";
	    primaries port $TPORT { 127.0.0.1 key $XFR_KEY tls wrong-ca; };
	};
	CONF
} >"$T_DIR/bind/named.conf"
named_start "$T_DIR/bind" "$T_DIR/bind/log"
BIND_PID=$PEER_PID
if wait_until 30 serial_is "$BPORT" sec.test 1; then
	pass "BIND, strict TLS (CA and host name), transfers sec.test from Shoal"
else
	fail "BIND transfers sec.test over TLS: $(tail -20 "$T_DIR/bind/log")"
fi
check_eq "BIND answers its records" 192.0.2.1 \
	"$("$DIG" @127.0.0.1 -p "$BPORT" +norec +short www.sec.test A)"
check_match "Shoal logs the transfer over TLS" \
	'AXFR sec\.test\. to 127\.0\.0\.1@[0-9]+ over TLS: serial 1' "$(cat "$T_DIR/shoald.log")"
wait_line "$T_DIR/bind/log" "bad\\.test.*TLS peer certificate verification failed"
check_match "BIND, with another CA, refuses Shoal's certificate and says so" \
	"transfer of 'bad\\.test/IN' from 127\\.0\\.0\\.1#$TPORT: failed to connect: TLS peer certificate verification failed" \
	"$(cat "$T_DIR/bind/log")"
check_eq "so bad.test is not on BIND" "" "$(peer_serial "$BPORT" bad.test)"
tls_failed() {
	"$SHOALCTL" -s "$CTL" stats json | grep '"total"' | grep -o '"handshake_failed": [0-9]*' |
		cut -d' ' -f2
}
failed_some() { [ "$(tls_failed)" -gt 0 ]; }
wait_until 5 failed_some
check_match "Shoal counts the refused handshakes" '^[1-9]' "$(tls_failed)"
check_match "and logs them" 'TLS from 127\.0\.0\.1@[0-9]+: ' "$(cat "$T_DIR/shoald.log")"
check_eq "nothing was asked of Shoal over plain TCP" "" \
	"$(grep 'asks for TLS' "$T_DIR/shoald.log")"
stop_within "$BIND_PID" 20
stop_within "$SHOALD_PID"

# ---- BIND as Shoal's XoT primary ----
BTPORT=$(free_port) || exit 99
mkdir -p "$T_DIR/bind2"
chmod 755 "$T_DIR/bind2"
ZONES="pin.test host.test wrongpin.test wrongname.test"
for z in $ZONES; do write_zone "$T_DIR/bind2" $z 1; done
{
	# the TLS listener beside the plain one (named has one options block)
	named_server_conf "$T_DIR/bind2" "$BPORT" |
		sed "s/^\( *\)listen-on port $BPORT .*/&\n\1listen-on port $BTPORT tls local { 127.0.0.1; };/"
	named_keys "$XFR_KEY" "$XFR_SECRET"
	cat <<-CONF
	tls local { key-file "$T_DIR/pki/bind.test.key"; cert-file "$T_DIR/pki/bind.test.crt"; };
	CONF
	for z in $ZONES; do
		cat <<-CONF
		zone "$z" {
		    type primary;
		    file "$z.zone";
		    allow-transfer port $BTPORT transport tls { key $XFR_KEY; };
		};
		CONF
	done
} >"$T_DIR/bind2/named.conf"
named_start "$T_DIR/bind2" "$T_DIR/bind2/log"
BIND_PID=$PEER_PID
if ! peer_serves "$BPORT" "$BIND_PID" 30 $ZONES; then
	fail "BIND serves the zones: $(tail -20 "$T_DIR/bind2/log")"
	done_testing
fi
bind_pin=$(pin_of "$T_DIR/pki/bind.test.crt")
check_eq "BIND's key's pin, as tlsclient sees it on its TLS port" "pin $bind_pin" \
	"$("$TLSCLIENT" -P 127.0.0.1 "$BTPORT" pin.test SOA 2>/dev/null | head -1)"
"$DIG" @127.0.0.1 -p "$BPORT" +tcp +time=2 +tries=1 pin.test AXFR -y \
	"hmac-sha256:$XFR_KEY:$XFR_SECRET" >/dev/null 2>&1
check_match "BIND refuses a transfer over plain TCP (allow-transfer over TLS only)" \
	"zone transfer 'pin\\.test/AXFR/IN' denied" "$(cat "$T_DIR/bind2/log")"
other=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
cat >"$T_DIR/sec/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $CTL
xfr-message-timeout: 5
tls-ca-file: $T_DIR/pki/test-ca.crt
keys:
  - name: $XFR_KEY
    algorithm: hmac-sha256
    secret: "$XFR_SECRET"
zones:
  - name: pin.test
    file: $T_DIR/sec/pin.test.zone
    primaries: ["127.0.0.1@$BTPORT $XFR_KEY tls"]
    tls-pin: "$bind_pin"
  - name: host.test
    file: $T_DIR/sec/host.test.zone
    primaries: ["127.0.0.1@$BTPORT $XFR_KEY tls"]
    tls-hostname: bind.test
  - name: wrongpin.test
    file: $T_DIR/sec/wrongpin.test.zone
    primaries: ["127.0.0.1@$BTPORT $XFR_KEY tls"]
    tls-pin: "$other"
  - name: wrongname.test
    file: $T_DIR/sec/wrongname.test.zone
    primaries: ["127.0.0.1@$BTPORT $XFR_KEY tls"]
    tls-hostname: shoal.test
CONF
start_shoald "$PORT" -c "$T_DIR/sec/shoald.conf" || exit 99
sec_serial_is() { serial_is "$PORT" "$1" 1; }
for z in pin.test host.test; do
	if wait_until 20 sec_serial_is $z; then pass "Shoal transfers $z from BIND over TLS"
	else fail "Shoal transfers $z from BIND over TLS: $(grep "$z" "$T_DIR/shoald.log")"; fi
done
check_eq "and answers its records" 192.0.2.1 \
	"$("$DIG" @127.0.0.1 -p "$PORT" +norec +short www.host.test A)"
check_match "BIND logs the transfers out, signed" \
	"/key $XFR_KEY \\(pin\\.test\\): transfer of 'pin\\.test/IN': AXFR started: TSIG $XFR_KEY" \
	"$(cat "$T_DIR/bind2/log")"
wait_line "$T_DIR/shoald.log" 'wrongname\.test.*TLS handshake failed'
wait_line "$T_DIR/shoald.log" 'wrongpin\.test.*TLS handshake failed'
check_eq "a pin that is not BIND's: refused, with the key BIND showed" 1 \
	"$(grep 'wrongpin\.test.*TLS handshake failed' "$T_DIR/shoald.log" | head -1 |
		grep -cF "the server's key (pin $bind_pin) is none of tls-pin")"
check_match "a host name BIND's certificate lacks: refused, and why" \
	'wrongname\.test.*over TLS: TLS handshake failed: .*shoal\.test' "$(cat "$T_DIR/shoald.log")"
for z in wrongpin.test wrongname.test; do
	check_eq "$z is not served" "" "$("$DIG" @127.0.0.1 -p "$PORT" +norec +short $z SOA)"
done
stop_within "$SHOALD_PID"
check_eq "Shoal stops cleanly" 0 $?
stop_within "$BIND_PID" 20
done_testing
