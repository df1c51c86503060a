#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# A primary that breaks the protocol, for tests/xfr/faults.sh: on
# 127.0.0.1@PORT it answers any AXFR or IXFR for ZONE with serial 2 sent
# the way the zone's first label says:
#   truncated  the records, then the connection closed before the final SOA
#   wrongsoa   a final SOA with another serial
#   outside    a record of another zone in the middle
#   stall      the first message, then nothing
#   trickle    one octet a second
#   big        a stream over max-zone-size
#   hold       the first message, then the rest once the file HOLD exists (a minute at most)
# Any other first label gets the zone whole. Each request is printed, "request LABEL TYPE"
# (TYPE 251 IXFR, 252 AXFR), so a test counts the refreshes that reached the primary.
# Each connection is served by a child; the parent ends when killed.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

my $port = shift or die "usage: bad_primary.pl PORT [HOLD]\n";
my $hold = shift // '';
my $srv = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp',
    Listen => 16, ReuseAddr => 1) or die "listen: $!\n";
$SIG{CHLD} = 'IGNORE';
$| = 1;
print "ready\n";

sub rr {    # rr OWNER_WIRE TYPE RDATA: class IN, TTL 300
	my ($owner, $type, $rdata) = @_;
	return $owner . pack('nnNn', $type, 1, 300, length $rdata) . $rdata;
}

while (my $c = $srv->accept) {
	next if fork;
	read($c, my $len, 2) == 2 or exit 0;
	read($c, my $q, unpack('n', $len)) or exit 0;
	my $id = unpack('n', $q);
	my ($qname, $i) = ('', 12);
	while ((my $l = ord substr($q, $i, 1)) != 0) { $qname .= substr($q, $i, $l + 1); $i += $l + 1 }
	$qname .= "\0";
	my $question = substr($q, 12, length($qname) + 4);
	my $mode = substr($qname, 1, ord substr($qname, 0, 1));
	print "request $mode " . unpack('n', substr($q, 12 + length($qname), 2)) . "\n";
	my $apex = "\xc0\x0c";    # a pointer to the question's name
	my $soa = sub { rr($apex, 6, "$apex$apex" . pack('NNNNN', $_[0], 3600, 600, 86400, 60)) };
	my @rrs = ($soa->(2), rr($apex, 2, "\x03ns1$apex"), rr("\x03ns1$apex", 1, pack('C4', 192, 0, 2, 1)),
	    rr("\x03www$apex", 1, pack('C4', 192, 0, 2, 2)));
	if ($mode eq 'outside') {
		push @rrs, rr("\x03www\x05other\x04test\0", 1, pack('C4', 192, 0, 2, 3));
	} elsif ($mode eq 'big') {
		push @rrs, rr("\x01t" . pack('n', $_) . $apex, 16, "\xff" . ('x' x 255)) for 1 .. 40;
	}
	push @rrs, $soa->($mode eq 'wrongsoa' ? 3 : 2) unless $mode eq 'truncated';
	my @msgs = ($mode eq 'stall' || $mode eq 'hold') ? ([ @rrs[0 .. 1] ], [ @rrs[2 .. $#rrs] ]) : ([@rrs]);
	for my $m (@msgs) {
		my $body = pack('nnnnnn', $id, 0x8400, 1, scalar @$m, 0, 0) . $question . join('', @$m);
		my $out = pack('n', length $body) . $body;
		if ($mode eq 'trickle') {
			for my $o (split //, $out) { print $c $o; $c->flush; sleep 1 }
		} else {
			print $c $out;
			$c->flush;
		}
		# until the secondary gives up and closes (at most a minute)
		IO::Select->new($c)->can_read(60) if $mode eq 'stall';
		if ($mode eq 'hold') {
			for (1 .. 600) { last if $hold ne '' && -e $hold; select(undef, undef, undef, 0.1) }
		}
	}
	exit 0;
}
