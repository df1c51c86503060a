#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A certificate changed by shoalctl reconfig, with connections in flight: the
# connections made before keep their session and get their answers, new ones
# see the new key (its pin by shoalctl tls-pin), no restart. A key file that
# does not read refuses the reconfig, nothing changed.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

TLSCLIENT=$SHOAL_BUILDDIR/tests/integration/tlsclient
port=$(free_port)
tport=$(free_port)

# make_pair DIR: a key and a self-signed certificate in DIR (tls.key, tls.crt),
# made by a shoald of its own with DIR as its state-dir.
make_pair() {
	local p tp pid
	mkdir -m 700 "$1"
	p=$(free_port)
	tp=$(free_port)
	printf 'listen: 127.0.0.1@%s\nlisten-tls: 127.0.0.1@%s\nstate-dir: %s\n' "$p" "$tp" "$1" \
		>"$1.conf"
	"$SHOALD" -c "$1.conf" >"$1.log" 2>&1 &
	pid=$!
	T_PIDS="$T_PIDS $pid"
	wait_until 20 test -s "$1/tls.crt"
	stop_within "$pid" 20
}
make_pair "$T_DIR/a"
make_pair "$T_DIR/b"
# write_conf DIR: the configuration with DIR's pair
write_conf() {
	cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$port
listen-tls: 127.0.0.1@$tport
threads: 2
control: $T_DIR/ctl
tls-key-file: $1/tls.key
tls-cert-file: $1/tls.crt
zones:
  - name: example.com.
    file: $EXAMPLES/example.com.zone
CONF
}
write_conf "$T_DIR/a"
start_shoald "$port" -c "$T_DIR/shoald.conf" || exit 1
pin_a=$("$SHOALCTL" -s "$T_DIR/ctl" tls-pin | head -1)
check_match "the certificate is tls-cert-file's" "^certificate $T_DIR/a/tls.crt\$" \
	"$("$SHOALCTL" -s "$T_DIR/ctl" tls-pin)"
check_eq "a client sees its key" "pin $pin_a" \
	"$("$TLSCLIENT" -P 127.0.0.1 "$tport" www.example.com | head -1)"

# connections in flight: handshakes done, queries after the reconfig
"$TLSCLIENT" -P -c 4 -n 50 -r "$T_DIR/ready" -l 3 -w 10 127.0.0.1 "$tport" www.example.com \
	>"$T_DIR/inflight" 2>&1 &
client=$!
T_PIDS="$T_PIDS $client"
wait_ready "$T_DIR/ready" "$client"
write_conf "$T_DIR/b"
out=$("$SHOALCTL" -s "$T_DIR/ctl" reconfig)
check_match "reconfig takes the new certificate" '^reconfig done' "$out"
pin_b=$("$SHOALCTL" -s "$T_DIR/ctl" tls-pin | head -1)
check_eq "shoalctl tls-pin says the new key" "$(grep -o 'SPKI pin .*' "$T_DIR/b.log" | cut -d' ' -f3)" \
	"$pin_b"
check_eq "a new connection sees the new key" "pin $pin_b" \
	"$("$TLSCLIENT" -P 127.0.0.1 "$tport" www.example.com | head -1)"
wait_within "$client" 30
echo "# in flight: $(tail -1 "$T_DIR/inflight")"
check_match "the connections made before got their answers after the reconfig" \
	'opened 4 .*answers 200 in_order 200 noerror 200 lost 0' "$(cat "$T_DIR/inflight")"
check_eq "over the old key, each of them" 4 "$(grep -c "^pin $pin_a\$" "$T_DIR/inflight")"
check_match "the log names the new pin" "TLS \(reconfig\): certificate .*, $T_DIR/b/tls.crt" \
	"$(cat "$T_DIR/shoald.log")"

# a key file that does not read: refused, the certificate served stays
write_conf "$T_DIR/nowhere"
out=$("$SHOALCTL" -s "$T_DIR/ctl" reconfig 2>&1)
check_match "a missing key file refuses the reconfig" "reconfig refused: .*$T_DIR/nowhere/tls.crt.*nothing changed" \
	"$out"
check_eq "the pin is still the new key's" "$pin_b" "$("$SHOALCTL" -s "$T_DIR/ctl" tls-pin | head -1)"
check_eq "and clients still connect" "pin $pin_b" \
	"$("$TLSCLIENT" -P 127.0.0.1 "$tport" www.example.com | head -1)"
done_testing
