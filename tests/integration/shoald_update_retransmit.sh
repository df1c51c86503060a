#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_update_retransmit: a UDP retransmit of an UPDATE still in flight (same client address
# and port, same message, ID and all) is dropped, not queued again, so the update is applied
# or forwarded once and answered once. The updates used fail when applied twice ("name not in
# use" and an add of it: YXDOMAIN the second time). The update thread is held by a forward to
# a primary stopped with SIGSTOP: one update is retransmitted while it is being forwarded, a
# second one (to a zone of the secondary's own) twice while it waits in the queue.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PPORT=$(free_port) || exit 99
SPORT=$(free_port) || exit 99
TWICE="perl $SHOAL_SRCDIR/tests/integration/update_twice.pl"
mkdir -p "$T_DIR/p" "$T_DIR/s"
cp "$EXAMPLES/example.com.zone" "$T_DIR/p/example.com.zone"
sed 's/example\.com/example.net/g' "$EXAMPLES/example.com.zone" >"$T_DIR/s/example.net.zone"
cat >"$T_DIR/p.conf" <<CONF
listen: 127.0.0.1@$PPORT
threads: 2
zones:
  - name: example.com
    file: $T_DIR/p/example.com.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
    allow-update:
      - address: 127.0.0.1
CONF
cat >"$T_DIR/s.conf" <<CONF
listen: 127.0.0.1@$SPORT
threads: 2
zones:
  - name: example.com
    file: $T_DIR/s/example.com.zone
    primaries: ["127.0.0.1@$PPORT NOKEY"]
    update-forward: yes
    allow-update:
      - address: 127.0.0.1
  - name: example.net
    file: $T_DIR/s/example.net.zone
    allow-update:
      - address: 127.0.0.1
CONF
start_shoald "$PPORT" -c "$T_DIR/p.conf" || exit 99
P_PID=$SHOALD_PID
start_shoald "$SPORT" -c "$T_DIR/s.conf" || exit 99
S_PID=$SHOALD_PID
loaded() { [ -n "$(q "$SPORT" +short example.com SOA)" ]; }
wait_until 60 loaded
check_eq "the secondary has example.com" 2026120301 \
	"$(q "$SPORT" +short example.com SOA | awk '{ print $3 }')"

# The primary stopped for 2 s: the first forward waits on it (up to 3 s), holding the update
# thread. a.example.com is sent again 0.3 s later, while it is being forwarded;
# b.example.net twice, 0.2 s apart, while both wait in the queue behind it.
kill -STOP "$P_PID"
$TWICE "$SPORT" example.com a.example.com 0.3 8 >"$T_DIR/a.out" &
A_PID=$!
sleep 0.5
$TWICE "$SPORT" example.net b.example.net 0.2 7 >"$T_DIR/b.out" &
B_PID=$!
sleep 1.5
kill -CONT "$P_PID"
wait_within "$A_PID" 20
wait_within "$B_PID" 20
check_eq "retransmitted while forwarded: forwarded once, answered once" NOERROR \
	"$(cat "$T_DIR/a.out")"
check_eq "the primary serves it" '"x"' "$(q "$PPORT" +short a.example.com TXT)"
check_eq "retransmitted while queued: applied once, answered once" NOERROR \
	"$(cat "$T_DIR/b.out")"
check_eq "the secondary serves it" '"x"' "$(q "$SPORT" +short b.example.net TXT)"
check_match "the retransmits are logged" \
	"UPDATE example.com. from 127.0.0.1.*retransmit.*in flight: dropped" "$(cat "$T_DIR/shoald.log")"
check_eq "one sent again 2 s after its answer is a new update (YXDOMAIN: the name is in use)" \
	"NOERROR YXDOMAIN" "$($TWICE "$SPORT" example.net c.example.net 2 4)"
stop_within "$S_PID"
check_eq "the secondary stops" 0 $?
stop_within "$P_PID"
check_eq "the primary stops" 0 $?
done_testing
