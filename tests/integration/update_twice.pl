#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# update_twice.pl: send one UPDATE (RFC 2136) twice, as a client retransmits it: the same
# message (same ID) from the same socket, GAP seconds apart, to 127.0.0.1@PORT; then read the
# answers until SECONDS after the first send and print the rcode of each, in order, on one line
# ("none" when there is none). The update is unsigned: "OWNER is not in use" (RFC 2136 2.4.5)
# and an add of OWNER 60 TXT "x" in ZONE, so applying it twice answers YXDOMAIN the second time.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);

my ($port, $zone, $owner, $gap, $seconds) = @ARGV;
die "usage: update_twice.pl PORT ZONE OWNER GAP SECONDS\n" unless defined $seconds;

sub wire {
	my $n = shift;
	$n =~ s/\.$//;
	return join('', map { chr(length $_) . $_ } split /\./, $n) . "\0";
}

my %rcodes = (0 => 'NOERROR', 1 => 'FORMERR', 2 => 'SERVFAIL', 3 => 'NXDOMAIN', 4 => 'NOTIMP',
	5 => 'REFUSED', 6 => 'YXDOMAIN', 7 => 'YXRRSET', 8 => 'NXRRSET', 9 => 'NOTAUTH',
	10 => 'NOTZONE');
my $id = int(rand(65536));
my $msg = pack('nnnnnn', $id, 5 << 11, 1, 1, 1, 0)
	. wire($zone) . pack('nn', 6, 1)                  # zone section: ZONE SOA IN
	. wire($owner) . pack('nnNn', 255, 254, 0, 0)     # prerequisite: ANY NONE, not in use
	. wire($owner) . pack('nnNn', 16, 1, 60, 2) . "\x01x"; # update: add TXT "x"
my $s = IO::Socket::INET->new(Proto => 'udp', PeerAddr => '127.0.0.1', PeerPort => $port)
	or die "socket: $!\n";
my $start = time;
$s->send($msg) or die "send: $!\n";
sleep($gap);
$s->send($msg) or die "send: $!\n";
my $sel = IO::Select->new($s);
my @got;
while ((my $left = $start + $seconds - time) > 0) {
	next unless $sel->can_read($left);
	my $buf;
	$s->recv($buf, 65535) or next;
	next if length($buf) < 12;
	my ($aid, $flags) = unpack('nn', $buf);
	next if $aid != $id;
	my $rc = $flags & 15;
	push @got, $rcodes{$rc} // $rc;
}
print @got ? join(' ', @got) : 'none', "\n";
