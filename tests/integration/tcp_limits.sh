#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tcp_limits: the limits a TCP client meets. tcp-max-per-address: one
# address holds that many connections, the next is closed at once while
# another address is served, and a closed one makes room again (control
# run: with no limit the same connections are all served). A slow-TCP
# attack (many connections writing a query one octet per second, past the
# per-worker connection limit) does not stop UDP answers or new TCP
# clients. A client without EDNS gets at most 512 octets over UDP.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

ZONE="example.com=$EXAMPLES/example.com.zone"

tcp_counter() {
	"$SHOALCTL" -s "$T_DIR/ctl" stats json | sed -n "s/^ \"total\": .*\"tcp\": {[^}]*\"$1\": \([0-9]*\).*/\1/p"
}

# hold SRC N SECONDS: open N connections from SRC, then ask www.example.com
# A on each, once all are open; print "served S closed C" (closed: those
# the server closed before answering) and keep the served ones open
# SECONDS more.
hold() {
	perl -MIO::Socket::INET -MIO::Select -e '
		my ($port, $src, $n, $linger) = @ARGV;
		$SIG{PIPE} = "IGNORE";
		my @s;
		for (1 .. $n) {
			my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port,
				LocalAddr => $src, Proto => "tcp") or die "connect: $!\n";
			push @s, $c;
		}
		sleep 1; # the server has taken them all in, and closed those past the limit
		my $q = pack("nnnnnn", 7, 0, 1, 0, 0, 0) . "\3www\7example\3com\0" . pack("nn", 1, 1);
		my ($served, $closed) = (0, 0);
		for my $c (@s) {
			$c->syswrite(pack("n", length $q) . $q);
			my $sel = IO::Select->new($c);
			my $buf = "";
			while ($sel->can_read(5)) {
				last unless $c->sysread($buf, 4096, length $buf);
				last if length $buf >= 2 && length $buf >= 2 + unpack("n", $buf);
			}
			if (length $buf > 2) { $served++ } else { $closed++ }
		}
		print "served $served closed $closed\n";
		sleep $linger;
	' "$port" "$@"
}

port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--tcp-max-per-address 4 --control "$T_DIR/ctl" || exit 1

# 1. Four connections from 127.0.0.1 are served, the fifth is closed; the
# four held open meanwhile, 127.0.0.2 is served; once they close, 127.0.0.1
# is served again.
hold 127.0.0.1 5 3 >"$T_DIR/held" &
holder=$!
T_PIDS="$T_PIDS $holder"
wait_until 20 test -s "$T_DIR/held"
check_eq "tcp-max-per-address 4: 4 of 5 connections from one address served" \
	"served 4 closed 1" "$(cat "$T_DIR/held")"
check_eq "tcp.refused_per_address counts the fifth" 1 "$(tcp_counter refused_per_address)"
check_eq "another address is served meanwhile" "served 1 closed 0" "$(hold 127.0.0.2 1 0)"
wait "$holder"
check_eq "once they closed, the address is served again" "served 4 closed 0" \
	"$(hold 127.0.0.1 4 0)"
stop_pid "$SHOALD_PID"

# The control run: no limit, the same five are all served.
port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--tcp-max-per-address 0 --control "$T_DIR/ctl" || exit 1
check_eq "tcp-max-per-address 0: all 5 served" "served 5 closed 0" "$(hold 127.0.0.1 5 0)"
check_eq "and none refused" 0 "$(tcp_counter refused_per_address)"
stop_pid "$SHOALD_PID"

# 2. Slow TCP: 120 connections from 40 addresses (3 each, within the
# per-address limit), each writing its query one octet a second, against
# 16 connections per worker; for 6 seconds UDP is asked every half second,
# and a new TCP client from another address every second: each is answered.
port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--tcp-max-connections 16 --tcp-message-timeout 2000 --control "$T_DIR/ctl" || exit 1
perl -MIO::Socket::INET -e '
	my ($port, $seconds) = @ARGV;
	$SIG{PIPE} = "IGNORE";
	my $q = pack("nnnnnn", 9, 0, 1, 0, 0, 0) . "\3www\7example\3com\0" . pack("nn", 1, 1);
	$q = pack("n", length $q) . $q;
	my @s;
	for my $a (1 .. 40) {
		for (1 .. 3) {
			my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port,
				LocalAddr => "127.0.3.$a", Proto => "tcp", Blocking => 0);
			push @s, $c if $c;
		}
	}
	for my $i (0 .. $seconds - 1) {
		$_->syswrite(substr($q, $i % length $q, 1)) for @s;
		sleep 1;
	}
' "$port" 6 &
slow=$!
T_PIDS="$T_PIDS $slow"
sleep 1
udp_ok=0 tcp_ok=0
for i in $(seq 1 10); do
	[ "$(q "$port" +short www.example.com A | wc -l)" = 2 ] && udp_ok=$((udp_ok + 1))
	if [ $((i % 2)) = 0 ]; then
		[ "$(q "$port" -b 127.0.4.1 +tcp +short www.example.com A | wc -l)" = 2 ] &&
			tcp_ok=$((tcp_ok + 1))
	fi
	sleep 0.5
done
check_eq "during the slow-TCP attack every UDP query is answered" 10 $udp_ok
check_eq "and every new TCP client" 5 $tcp_ok
wait "$slow"
closed=$(($(tcp_counter closed_limit) + $(tcp_counter closed_idle)))
check_match "the slow connections were closed (limit or timeout: $closed)" '^[1-9][0-9]+$' "$closed"

# 3. No EDNS: an answer longer than 512 octets comes truncated in 512
# (RFC 1035 4.2.1), with EDNS 1232 whole or truncated within 1232.
# mid.test holds 12 TXT records of 60 octets: about 900 octets in all.
stop_pid "$SHOALD_PID"
{
	echo '@ 300 IN SOA ns hm 1 7200 3600 1209600 300'
	echo '@ 300 IN NS ns'
	echo 'ns 300 IN A 192.0.2.1'
	for i in $(seq 10 21); do
		echo "@ 300 IN TXT \"$i$(printf '%058d' 0)\""
	done
} >"$T_DIR/mid.zone"
port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 1 --zone "mid.test=$T_DIR/mid.zone" \
	--control "$T_DIR/ctl" || exit 1
out=$(q "$port" +noedns +ignore +notcp mid.test TXT)
check_match "no EDNS: truncated" 'flags: qr aa tc' "$out"
check_match "within 512 octets" 'MSG SIZE +rcvd: ([0-9]{1,2}|[1-4][0-9]{2}|50[0-9]|51[0-2])$' "$out"
out=$(q "$port" +bufsize=1232 +ignore +notcp mid.test TXT)
check_match "EDNS 1232: whole, more than 512 octets" 'MSG SIZE +rcvd: (5[2-9][0-9]|[6-9][0-9]{2}|1[0-9]{3})$' \
	"$out"
stop_pid "$SHOALD_PID"
check_eq "shoald stops with SIGTERM, exit 0" 0 $?
done_testing
