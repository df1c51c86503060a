#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The TLS listeners join the hand-over (issue 36: "the same zero-loss socket
# hand-over on restart"): DoT clients connect again and again (each a
# handshake and 20 pipelined queries) while shoald is taken over three times
# (2, then 1, then 3, then 2 workers): every connection is made and every
# query answered, the key (kept in state-dir) is the same for all, and the
# taker listens on the sockets it was given, not new ones; a client that
# connects before a takeover and starts its handshake after it is served by
# the old process. Control: the same clients across a stop and a start fail.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

TLSCLIENT=$SHOAL_BUILDDIR/tests/integration/tlsclient
port=$(free_port) || exit 99
tport=$(free_port) || exit 99
ctl=$T_DIR/ctl
mkdir -m 700 "$T_DIR/state"
cat >"$T_DIR/example.zone" <<'ZONE'
$ORIGIN example.
$TTL 300
@ SOA ns1 hostmaster 1 3600 600 86400 300
@ NS ns1
www A 192.0.2.2
ZONE
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$port
listen-tls: 127.0.0.1@$tport
state-dir: $T_DIR/state
control: $ctl
zones:
  - name: example.
    file: $T_DIR/example.zone
CONF

# clients OUT: tlsclient runs one after another until T_DIR/stop, a line each in OUT
clients() {
	while [ ! -e "$T_DIR/stop" ]; do
		if r=$("$TLSCLIENT" -P -n 20 -w 5 127.0.0.1 "$tport" www.example 2>&1); then
			printf 'ok %s\n' "$(echo "$r" | head -1)"
		else
			printf 'lost %s\n' "$(echo "$r" | tr '\n' ' ')"
		fi
	done >"$1"
}

LOGN=0
start_first() {
	LOGN=$((LOGN + 1))
	"$SHOALD" -c "$T_DIR/shoald.conf" --threads "$1" >"$T_DIR/shoald-$LOGN.log" 2>&1 &
	PID=$!
	T_PIDS="$T_PIDS $PID"
	wait_answering 127.0.0.1 "$port" || { cat "$T_DIR/shoald-$LOGN.log"; exit 99; }
}
take_over() {
	take_over_run "$1 threads" -c "$T_DIR/shoald.conf" --threads "$1" --takeover "$ctl"
}

# tls_sockets: the inodes of the listening sockets on the TLS port, sorted
tls_sockets() {
	ss -Hltne "sport = :$tport" | grep -o 'ino:[0-9]*' | sort
}
start_first 2
first=$(tls_sockets)
clients "$T_DIR/clients" &
cl=$!
sleep 1
take_over 1
sleep 1
check_eq "the taker listens on one of the same TLS sockets (handed over, not reopened)" "" \
	"$(comm -13 <(echo "$first") <(tls_sockets))"
check_eq "... one" 1 "$(tls_sockets | wc -l)"
take_over 3
sleep 1
# a client connected before a takeover, its ClientHello sent after it: the old process,
# which accepted it, finishes its handshake and answers it before it exits
"$TLSCLIENT" -d 1500 -n 20 -w 10 127.0.0.1 "$tport" www.example >"$T_DIR/slow" 2>&1 &
slow=$!
sleep 0.3
take_over 2
wait "$slow"
check_eq "a handshake begun before a takeover is finished and answered" \
	"connections 1 opened 1 resumed 0 queries 20 answers 20 in_order 20 noerror 20 lost 0" \
	"$(cat "$T_DIR/slow")"
sleep 1
touch "$T_DIR/stop"
wait "$cl"
runs=$(wc -l <"$T_DIR/clients")
echo "# $runs client runs; the first: $(head -1 "$T_DIR/clients")"
check_match "clients ran throughout (more than 10)" '^([1-9][0-9]+)$' "$runs"
check_eq "no connection and no query lost over three takeovers" "" \
	"$(grep -v '^ok' "$T_DIR/clients" | head -3)"
check_eq "one key throughout (state-dir)" 1 \
	"$(awk '$1 == "ok" { print $3 }' "$T_DIR/clients" | sort -u | wc -l)"

# control: a stop, then a start, under the same clients
rm -f "$T_DIR/stop"
clients "$T_DIR/control" &
cl=$!
sleep 1
stop_within "$PID"
start_first 2
sleep 1
touch "$T_DIR/stop"
wait "$cl"
check_match "control: across a stop and a start, connections fail" 'lost' \
	"$(grep -v '^ok' "$T_DIR/control" | head -1)"
stop_within "$PID"
check_eq "stops cleanly" 0 $?
done_testing
