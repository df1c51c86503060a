#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/flush_big: a big zone's file write takes no transfer slot (issue 31). A Shoal
# secondary with one transfers-in thread has big.test (200,000 records) and small.test
# from a Shoal primary. big.test changes; its write is held (SHOAL_TEST_FLUSH_HOLD, as
# a slow disk would) after its IXFR is published; small.test then changes and is
# transferred and served while big.test's write still waits; released, the write lands.
# Before the flush thread, the transfer thread wrote the file, and with transfers-in 1
# every other zone's transfer waited for it.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

PORT=$(free_port) || exit 99
SEC=$(free_port) || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# version ZONE SERIAL [HOSTS]: ZONE's file on the primary at SERIAL, with HOSTS A records
version() {
	awk -v z="$1" -v s="$2" -v n="${3:-0}" 'BEGIN {
		printf "$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1 hostmaster %s 3600 600 86400 60\n", z, s
		printf "@ IN NS ns1\nns1 IN A 192.0.2.1\nv IN TXT \"%s\"\n", s
		for (i = 0; i < n; i++)
			printf "h%d IN A 10.%d.%d.%d\n", i, int(i / 65536) % 256, int(i / 256) % 256, i % 256
	}' >"$T_DIR/p/$1.zone.new"
	mv "$T_DIR/p/$1.zone.new" "$T_DIR/p/$1.zone"
}
writes() { grep -c "zone $1\.: serial [0-9]* written to" "$T_DIR/shoald.log"; }
saved() { awk '{ for (i = 1; i < NF; i++) if ($i == "SOA") { print $(i + 3); exit } }' "$T_DIR/s/$1.zone" 2>/dev/null; }
# saved_is ZONE SERIAL: the secondary's file of ZONE is at SERIAL
saved_is() { [ "$(saved "$1")" = "$2" ]; }

mkdir -p "$T_DIR/p" "$T_DIR/s"
version big.test 1 200000
version small.test 1
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nzones:\n' "$PORT" "$T_DIR"
	for z in big.test small.test; do
		printf '  - name: %s\n    file: %s/p/%s.zone\n' "$z" "$T_DIR" "$z"
		printf '    provide-xfr: ["127.0.0.1 NOKEY"]\n    notify: [ 127.0.0.1@%s NOKEY ]\n' "$SEC"
	done
} >"$T_DIR/shoald.conf"
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ntransfers-in: 1\nzones:\n' "$SEC"
	for z in big.test small.test; do
		printf '  - name: %s\n    file: %s/s/%s.zone\n' "$z" "$T_DIR" "$z"
		printf '    primaries: [ 127.0.0.1@%s NOKEY ]\n    allow-notify: ["127.0.0.1 NOKEY"]\n' "$PORT"
	done
} >"$T_DIR/sec.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
export SHOAL_TEST_FLUSH_HOLD=$T_DIR/hold
start_shoald "$SEC" -c "$T_DIR/sec.conf" || exit 99
unset SHOAL_TEST_FLUSH_HOLD
for z in big.test small.test; do
	wait_until 120 saved_is $z 1 || fail "$z not transferred and written"
done
check_eq "both written once" "1 1" "$(writes big.test) $(writes small.test)"

touch "$T_DIR/hold"
version big.test 2 200000
ctl reload big.test >/dev/null
wait_until 60 serial_is "$SEC" big.test 2 || fail "big.test not at serial 2"
version small.test 2
ctl reload small.test >/dev/null
if wait_until 30 serial_is "$SEC" small.test 2; then
	pass "small.test transferred while big.test's write waits"
else
	fail "small.test not transferred while big.test's write waits"
fi
check_eq "... big.test's file still at serial 1, not written again" "1 1" \
	"$(saved big.test) $(writes big.test)"
check_eq "... small.test's write waits behind it" 1 "$(saved small.test)"
rm -f "$T_DIR/hold"
wait_until 60 saved_is small.test 2
check_eq "released: big.test then small.test written" "2 2 2 2" \
	"$(saved big.test) $(writes big.test) $(saved small.test) $(writes small.test)"
check_match "in that order" "big\.test.*small\.test" \
	"$(grep 'serial 2 written to' "$T_DIR/shoald.log" | tr '\n' ' ')"
done_testing
