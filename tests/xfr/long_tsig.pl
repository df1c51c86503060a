#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# A query signed with a key no server knows, whose key and algorithm names
# are each LEN octets long (wire form, at most 255), for tests/xfr/xfr_out.sh:
# the answer's TSIG RR (RFC 8945 5.3.2: BADKEY, the names echoed) then
# takes about 2 x LEN octets, more than 512 for LEN 245.
#   long_tsig.pl PORT ZONE LEN udp|tcp
# sends "ZONE SOA" without EDNS to 127.0.0.1@PORT and prints one line:
#   rcode R tc T ancount A arcount C tsig_error E octets N
# (tsig_error - when the answer has no TSIG RR), or "no answer" after 3 s.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

my ($port, $zone, $len, $proto) = @ARGV;
die "usage: long_tsig.pl PORT ZONE LEN udp|tcp\n"
    unless $proto && $len >= 2 && $len <= 255 && $proto =~ /^(udp|tcp)$/;

sub wire { my $n = ''; $n .= chr(length $_) . $_ for split /\./, shift; return $n . "\0" }

# a name of LEN octets in wire form, labels of the letter C
sub long_name {
	my ($left, $c) = (shift() - 1, shift);
	my $n = '';
	while ($left > 0) {
		my $l = $left - 1 > 63 ? 63 : $left - 1;
		$l-- if $left - $l - 1 == 1; # a label needs two octets: leave none of one
		$n .= chr($l) . ($c x $l);
		$left -= $l + 1;
	}
	return $n . "\0";
}

my $id = 0x2845;
my $q = pack('n6', $id, 0, 1, 0, 0, 1) . wire($zone) . pack('nn', 6, 1);
my $rdata = long_name($len, 'a') . pack('nNnn', 0, time, 300, 32) . ("\x5a" x 32) .
    pack('nnn', $id, 0, 0);
$q .= long_name($len, 'k') . pack('nnNn', 250, 255, 0, length $rdata) . $rdata;

my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => $proto,
    Timeout => 3) or die "long_tsig.pl: $proto to $port: $!\n";
$s->send($proto eq 'tcp' ? pack('n', length $q) . $q : $q);
my $r = '';
my $sel = IO::Select->new($s);
while ($sel->can_read(3)) {
	my $got = '';
	last unless defined $s->recv($got, 70000) && length $got;
	$r .= $got;
	last if $proto eq 'udp' || (length $r >= 2 && length $r >= 2 + unpack('n', $r));
}
$r = substr($r, 2) if $proto eq 'tcp' && length $r >= 2;
if (length $r < 12) {
	print "no answer\n";
	exit 0;
}

# skip a name at offset $i (pointers end it); returns the offset after it
sub skip_name {
	my $i = shift;
	while ($i < length $r) {
		my $l = ord substr($r, $i, 1);
		return $i + 2 if ($l & 0xc0) == 0xc0;
		return $i + 1 if $l == 0;
		$i += $l + 1;
	}
	return $i;
}

my ($rid, $flags, $qd, $an, $ns, $ar) = unpack('n6', $r);
my $i = 12;
$i = skip_name($i) + 4 for 1 .. $qd;
my $tsig_error = '-';
for (1 .. $an + $ns + $ar) {
	$i = skip_name($i);
	last if $i + 10 > length $r;
	my ($type, $class, $ttl, $rdlen) = unpack('nnNn', substr($r, $i, 10));
	my $rd = $i + 10;
	if ($type == 250) {
		my $j = skip_name($rd) + 8; # algorithm; time signed, fudge
		my $mac = unpack('n', substr($r, $j, 2));
		$tsig_error = unpack('n', substr($r, $j + 2 + $mac + 2, 2));
	}
	$i = $rd + $rdlen;
}
printf "rcode %d tc %d ancount %d arcount %d tsig_error %s octets %d\n", $flags & 15,
    ($flags >> 9) & 1, $an, $ar, $tsig_error, length $r;
