#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# A peer that counts what it is sent, by second, for tests/xfr/start_spread.sh and
# notify_pace.sh: on 127.0.0.1@PORT it answers every SOA query over UDP with an SOA of
# SERIAL for the name asked, printing "soa SECOND" (the time(2) second it came in), every
# NOTIFY with NOERROR (as a secondary, RFC 1996 4.7), printing "notify SECOND ZONE", and
# takes every TCP connection only to close it, printing "tcp SECOND". Ends when killed.
#   soa_primary.pl PORT SERIAL
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

my ($port, $serial) = @ARGV;
die "usage: soa_primary.pl PORT SERIAL\n" unless defined $serial;
my $udp = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'udp')
    or die "udp: $!\n";
my $tcp = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp',
    Listen => 128, ReuseAddr => 1) or die "tcp: $!\n";
$| = 1;
print "ready\n";
my $rdata = "\0\0" . pack('NNNNN', $serial, 3600, 600, 86400, 60);
my $soa = "\xc0\x0c" . pack('nnNn', 6, 1, 300, length $rdata) . $rdata;
my $sel = IO::Select->new($udp, $tcp);
for (;;) {
	for my $s ($sel->can_read) {
		if ($s == $tcp) {
			my $c = $tcp->accept;
			close $c if $c;
			print "tcp " . time . "\n";
			next;
		}
		my $peer = $udp->recv(my $q, 65535) or next;
		next if length $q < 12;
		my ($id, $flags) = unpack('nn', $q);
		my $opcode = ($flags >> 11) & 15;
		# the question: up to the end of its name, then type and class
		my $i = 12;
		my @labels;
		while ($i < length $q && (my $l = ord(substr($q, $i, 1)))) {
			push @labels, substr($q, $i + 1, $l);
			$i += $l + 1;
		}
		my $question = substr($q, 12, $i + 5 - 12);
		if ($opcode == 4) {
			print "notify " . time . " " . join('.', @labels) . "\n";
			$udp->send(pack('nnnnnn', $id, 0x8400 | 4 << 11, 1, 0, 0, 0) . $question, 0, $peer);
			next;
		}
		print "soa " . time . "\n";
		$udp->send(pack('nnnnnn', $id, 0x8400, 1, 1, 0, 0) . $question . $soa, 0, $peer);
	}
}
