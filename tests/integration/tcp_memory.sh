#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# TCP connection buffers are given back: after 256 connections that each
# pipelined 1500 queries for a 7 KB answer have closed, shoald's resident
# memory is about what it was before (it kept about 200 KiB per connection
# slot). Memory is the kernel's count (VmRSS), so the test skips itself
# under a sanitizer, whose allocator keeps what is freed.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

skip_memory_under_sanitizer
TCPCLIENT=$SHOAL_BUILDDIR/tests/integration/tcpclient
CONNS=256
QUERIES=1500
PER_CONN_MAX_KB=32 # what a closed slot may still hold (4 KiB kept, and slack)

port=$(free_port)
# every connection comes from 127.0.0.1: no limit per address here
start_shoald "$port" --listen "127.0.0.1@$port" --threads 1 --tcp-max-connections 512 \
	--tcp-max-per-address 0 --zone "tcp.test=$SHOAL_SRCDIR/tests/integration/zones/tcp-big.zone" || exit 1
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SHOALD_PID/status"; }

before=$(rss)
"$TCPCLIENT" -c $CONNS -n $QUERIES -l 1 -w 20 127.0.0.1 "$port" big.tcp.test TXT \
	>"$T_DIR/client" 2>&1
echo "# $(head -1 "$T_DIR/client")"
# established: the connections to shoald still open.
established() { ss -Htn state established "sport = :$port" | wc -l; }
all_closed() { [ "$(established)" -eq 0 ]; }
wait_until 20 all_closed # shoald closes them all
check_eq "every connection closed" 0 "$(established)"
after=$(rss)
per=$(((after - before) / CONNS))
echo "# VmRSS before ${before} kB, after ${after} kB: ${per} kB per connection"
if [ "$per" -le $PER_CONN_MAX_KB ]; then
	pass "closed connections hold at most $PER_CONN_MAX_KB kB each (${per} kB)"
else
	fail "closed connections hold ${per} kB each (at most $PER_CONN_MAX_KB)"
fi
check_match "shoald still answers over TCP" '^"record 00' \
	"$(q "$port" +tcp +short big.tcp.test TXT | head -1)"
done_testing
