#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The worst case of TCP memory, driven to its bound: every connection slot of one worker
# held by a client that pipelines queries for a 7 KB answer and never reads, so each
# slot's queued output reaches tcp-max-output and the connection is closed as too slow.
# The peak resident memory (VmHWM, reset just before) grows by at most what
# shoald.conf(5) gives as the worst case, slots x (65537 + 2 x tcp-max-output) octets
# (plus a margin for the allocator), and by at least two slots' full output (held, not
# assumed; slots fill and are closed at their own pace, so how many are full at the
# peak depends on the machine's load); UDP answers meanwhile. Memory is the kernel's count,
# so the test skips itself under a sanitizer, whose allocator keeps what is freed.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

skip_memory_under_sanitizer
TCPCLIENT=$SHOAL_BUILDDIR/tests/integration/tcpclient
SLOTS=16
OUT=262144     # tcp-max-output, the default: 37 answers, under the 64 read ahead
QUERIES=2000   # per connection: far more answers than the kernel's buffers take
MARGIN_KB=4096 # the allocator's own, and the process's other threads meanwhile

port=$(free_port)
CTL=$T_DIR/ctl
start_shoald "$port" --listen "127.0.0.1@$port" --threads 1 --control "$CTL" \
	--tcp-max-connections $SLOTS --tcp-max-output $OUT --tcp-max-per-address 0 \
	--tcp-idle-timeout 60000 --tcp-message-timeout 60000 \
	--zone "tcp.test=$SHOAL_SRCDIR/tests/integration/zones/tcp-big.zone" || exit 1
status() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SHOALD_PID/status"; }
slow() {
	json_value "$(timeout 10 "$SHOALCTL" -s "$CTL" --json stats 2>/dev/null)" closed_slow |
		tr -d ' '
}

# the worker's connection buffers are made now: they are part of the bound, not of the
# growth measured
q "$port" +tcp +short big.tcp.test TXT >/dev/null
before=$(status VmRSS)
echo 5 >"/proc/$SHOALD_PID/clear_refs" # VmHWM := VmRSS (proc(5))

"$TCPCLIENT" -c $SLOTS -n $QUERIES -l 30 -w 2 -r "$T_DIR/sent" 127.0.0.1 "$port" \
	big.tcp.test TXT >"$T_DIR/client" 2>&1 &
CLIENT=$!
T_PIDS="$T_PIDS $CLIENT"
wait_until 30 test -e "$T_DIR/sent"
all_slow() { [ "$(slow)" = "$SLOTS" ]; }
wait_until 30 all_slow
check_eq "every slot reached tcp-max-output (closed as too slow)" "$SLOTS" "$(slow)"
check_match "UDP answers meanwhile" 'status: NOERROR' "$(q "$port" tcp.test SOA)"
peak=$(status VmHWM)
kill "$CLIENT" 2>/dev/null
wait "$CLIENT" 2>/dev/null

grown=$((peak - before))
bound=$((SLOTS * (65537 + 2 * OUT) / 1024 + MARGIN_KB))
least=$((2 * OUT / 1024))
echo "# VmRSS before ${before} kB, peak ${peak} kB: grown ${grown} kB;" \
	"worst case ${bound} kB with the margin; at least ${least} kB"
if [ "$grown" -le "$bound" ]; then
	pass "the peak stays within slots x (65537 + 2 x tcp-max-output) (${grown} <= ${bound} kB)"
else
	fail "the peak grew ${grown} kB, more than the worst case ${bound} kB"
fi
if [ "$grown" -ge "$least" ]; then
	pass "the slots' output was really held (${grown} >= ${least} kB)"
else
	fail "the peak grew only ${grown} kB: the slots' output was not held (${least} kB)"
fi
done_testing
