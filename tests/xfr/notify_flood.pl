#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# NOTIFYs for tests/xfr/notify_flood.sh, as a primary (or one who forges its address) sends
# them: COUNT NOTIFY messages for ZONE with an SOA of SERIAL in the answer section (RFC 1996
# 3.7), from 127.0.0.1 to 127.0.0.1@PORT, one after the other, each answer awaited for 1 s at
# most. Prints "answered N RCODE..." (the rcodes of the answers, counted by kind).
#   notify_flood.pl PORT ZONE SERIAL COUNT
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

my ($port, $zone, $serial, $count) = @ARGV;
die "usage: notify_flood.pl PORT ZONE SERIAL COUNT\n" unless defined $count;

sub wire { my $n = ''; $n .= chr(length $_) . $_ for split /\./, shift; return $n . "\0" }

my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1', PeerAddr => '127.0.0.1', PeerPort => $port,
    Proto => 'udp') or die "udp: $!\n";
my $sel = IO::Select->new($sock);
my $q = wire($zone) . pack('nn', 6, 1);
# the SOA: a pointer to the question's name, its RDATA with the serial (RFC 1035 3.3.13)
my $rdata = "\0\0" . pack('NNNNN', $serial, 3600, 600, 86400, 60);
my $soa = "\xc0\x0c" . pack('nnNn', 6, 1, 300, length $rdata) . $rdata;
my (%rcodes, $answered);
for my $id (1 .. $count) {
	# opcode NOTIFY (4), AA (RFC 1996 3.7), one question, one answer
	$sock->send(pack('nnnnnn', $id, 4 << 11 | 0x0400, 1, 1, 0, 0) . $q . $soa);
	next unless $sel->can_read(1);
	$sock->recv(my $a, 65535);
	next unless length $a >= 12 && unpack('n', $a) == $id;
	$answered++;
	$rcodes{unpack('n', substr($a, 2, 2)) & 15}++;
}
print "answered " . ($answered // 0) . join('', map { " rcode$_=$rcodes{$_}" } sort keys %rcodes) . "\n";
