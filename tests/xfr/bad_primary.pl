#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# A primary that breaks the protocol, for tests/xfr/faults.sh and the tests
# beside it: on 127.0.0.1@PORT (TCP) it answers any AXFR or IXFR for ZONE
# with serial $BAD_SERIAL (2 unless set) sent the way the zone's first label says:
#   truncated  the records, then the connection closed before the final SOA
#   wrongsoa   a final SOA with another serial
#   outside    a record of another zone in the middle
#   stall      the first message, then nothing
#   trickle    one octet a second
#   wrongid    the whole answer, each message with an ID not the request's
#   stray      a message with another ID first, then the answer (RFC 5452 9.1: not the answer)
#   big        a stream over max-zone-size
#   hold       the first message, then the rest once the file HOLD exists (a minute at most),
#              at the serial after the one an IXFR asks from
#   soa        an IXFR from a serial not older than ours: the SOA alone (RFC 1995 2)
#   refused    an IXFR: REFUSED (an AXFR gets the zone whole)
#   longsoa    an SOA whose MNAME and RNAME take 250 octets each, at the serial after the
#              one an IXFR asks from
#   badsig     NOTAUTH, TSIG error BADSIG in an unsigned TSIG RR (RFC 8945 5.3.2), as a
#              peer whose secret differs answers; so is a NOTIFY over UDP on the same port
#   badkey     the same with BADKEY, as a peer without the key answers
# Any other first label gets the zone whole. Each request is printed, "request LABEL TYPE
# [SERIAL]" (TYPE 251 IXFR with the serial it asks from, 252 AXFR, 6 a NOTIFY), so a
# test counts the requests that reached it. An SOA query over UDP (a refresh's first
# question) is answered with the SOA at the serial above, printed "query LABEL soa";
# hold and longsoa answer it with TC (the secondary goes on over TCP), badsig and badkey
# as a NOTIFY; every mode does with BAD_UDP_SOA=tc set, so that the transfer tells. Each connection is served by a child; the parent ends when killed.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

my $port = shift or die "usage: bad_primary.pl PORT [HOLD]\n";
my $hold = shift // '';
my $serial = $ENV{BAD_SERIAL} // 2;
my $udp_tc = ($ENV{BAD_UDP_SOA} // '') eq 'tc';
my $srv = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp',
    Listen => 16, ReuseAddr => 1) or die "listen: $!\n";
my $udp = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'udp')
    or die "udp: $!\n";
$SIG{CHLD} = 'IGNORE';
$| = 1;
print "ready\n";

sub rr {    # rr OWNER_WIRE TYPE RDATA: class IN, TTL 300
	my ($owner, $type, $rdata) = @_;
	return $owner . pack('nnNn', $type, 1, 300, length $rdata) . $rdata;
}

sub name_end {    # name_end MSG OFFSET: the offset after the (maybe compressed) name there
	my ($m, $i) = @_;
	while ((my $l = ord substr($m, $i, 1)) != 0) {
		return $i + 2 if $l >= 0xc0;
		$i += $l + 1;
	}
	return $i + 1;
}

# parse MSG: its ID, question, mode (the first label), qtype, opcode, the serial of its first
# SOA past the question (an IXFR's, a NOTIFY's), and its TSIG RR's key and algorithm names
sub parse {
	my ($q) = @_;
	my ($id, $flags, $qd, @counts) = unpack('n6', $q);
	my $i = name_end($q, 12);
	my %r = (id => $id, opcode => ($flags >> 11) & 15, question => substr($q, 12, $i + 4 - 12),
	    mode => substr($q, 13, ord substr($q, 12, 1)), qtype => unpack('n', substr($q, $i, 2)));
	$i += 4;
	for (1 .. $counts[0] + $counts[1] + $counts[2]) {
		my $rdata_at = name_end($q, $i) + 10;
		my ($type, $len) = unpack('n x6 n', substr($q, $rdata_at - 10, 10));
		$r{serial} //= unpack('N', substr($q, $rdata_at + $len - 20, 4)) if $type == 6;
		if ($type == 250) {
			$r{key} = substr($q, $i, name_end($q, $i) - $i);
			$r{alg} = substr($q, $rdata_at, name_end($q, $rdata_at) - $rdata_at);
		}
		$i = $rdata_at + $len;
	}
	return \%r;
}

# tsig_error REQUEST ERROR: the flags (QR, the request's opcode, NOTAUTH) and the body (the
# question, an unsigned TSIG RR with ERROR: 16 BADSIG, 17 BADKEY) of a peer's answer (RFC 8945
# 5.3.2)
sub tsig_error {
	my ($r, $error) = @_;
	my $tsig = $r->{key} . pack('nnN', 250, 255, 0);
	my $rdata = ($r->{alg} // "\x0bhmac-sha256\0") . pack('nNnnnnn', 0, time, 300, 0, $r->{id}, $error, 0);
	return (0x8000 | $r->{opcode} << 11 | 9, $r->{question} . $tsig . pack('n', length $rdata) . $rdata);
}

sub tsig_errno { return $_[0] eq 'badsig' ? 16 : 17 }

sub send_msg {    # send_msg SOCKET BODY [TRICKLE]: one TCP message, with its length
	my ($c, $body, $trickle) = @_;
	my $out = pack('n', length $body) . $body;
	if ($trickle) {
		for my $o (split //, $out) { print $c $o; $c->flush; sleep 1 }
	} else {
		print $c $out;
		$c->flush;
	}
}

# A datagram: a NOTIFY, answered NOERROR, or an SOA query, answered with the SOA (TC for hold
# and longsoa); badsig and badkey answer either NOTAUTH with their TSIG error.
sub datagram {
	$udp->recv(my $q, 65535) or return;
	my $peer = $udp->peername;
	my $r = parse($q);
	my $query = $r->{opcode} == 0;
	print $query ? "query $r->{mode} soa\n" : "request $r->{mode} 6 " . ($r->{serial} // '') . "\n";
	my ($flags, $body, $counts) = (0x8000 | $r->{opcode} << 11 | 0x0400, $r->{question}, [0, 0, 0]);
	if ($r->{mode} =~ /^bad(sig|key)$/ && $r->{key}) {
		($flags, $body) = tsig_error($r, tsig_errno($r->{mode}));
		$counts = [0, 0, 1];
	} elsif ($query && ($udp_tc || $r->{mode} =~ /^(hold|longsoa)$/)) {
		$flags |= 0x0200;
	} elsif ($query) {
		$body .= (records($r))[0];
		$counts = [1, 0, 0];
	}
	$udp->send(pack('nnnnnn', $r->{id}, $flags, 1, @$counts) . $body, 0, $peer);
}

# The records of the answer for mode, the SOA first and last (but for truncated).
sub records {
	my ($r) = @_;
	my $mode = $r->{mode};
	my $apex = "\xc0\x0c";    # a pointer to the question's name
	my $s = $serial;
	# a version newer than the secondary's, whatever it has
	$s = ($r->{serial} + 1) % 2**32 if $r->{qtype} == 251 && $mode =~ /^(hold|longsoa)$/;
	my ($mname, $rname) = ($apex, $apex);
	if ($mode eq 'longsoa') {
		# 250 octets each: three labels of 63, one of 57, then the root
		($mname, $rname) = map { my $c = $_; join("", (chr(63) . ($c x 63)) x 3) . chr(57) . ($c x 57) . "\0" } ('m', 'r');
	}
	my $soa = sub { rr($apex, 6, $mname . $rname . pack('NNNNN', $_[0], 3600, 600, 86400, 60)) };
	my @rrs = ($soa->($s), rr($apex, 2, "\x03ns1$apex"), rr("\x03ns1$apex", 1, pack('C4', 192, 0, 2, 1)),
	    rr("\x03www$apex", 1, pack('C4', 192, 0, 2, 2)));
	if ($mode eq 'outside') {
		push @rrs, rr("\x03www\x05other\x04test\0", 1, pack('C4', 192, 0, 2, 3));
	} elsif ($mode eq 'big') {
		push @rrs, rr("\x01t" . pack('n', $_) . $apex, 16, "\xff" . ('x' x 255)) for 1 .. 40;
	}
	# RFC 1995 2: nothing newer than the client has: the SOA alone
	return ($soa->($s)) if $mode eq 'soa' && $r->{qtype} == 251 && ($r->{serial} - $s) % 2**32 < 2**31;
	push @rrs, $soa->($mode eq 'wrongsoa' ? $s + 1 : $s) unless $mode eq 'truncated';
	return @rrs;
}

# One transfer connection: the request, then the answer as the mode says.
sub transfer {
	my ($c) = @_;
	read($c, my $len, 2) == 2 or return;
	read($c, my $q, unpack('n', $len)) or return;
	my $r = parse($q);
	my $mode = $r->{mode};
	print "request $mode $r->{qtype}" . ($r->{qtype} == 251 ? " $r->{serial}" : '') . "\n";
	if ($mode =~ /^bad(sig|key)$/ && $r->{key}) {
		my ($flags, $body) = tsig_error($r, tsig_errno($mode));
		send_msg($c, pack('nnnnnn', $r->{id}, $flags, 1, 0, 0, 1) . $body);
		return;
	}
	if ($mode eq 'refused' && $r->{qtype} == 251) {
		send_msg($c, pack('nnnnnn', $r->{id}, 0x8405, 1, 0, 0, 0) . $r->{question});
		return;
	}
	my @rrs = records($r);
	my @msgs = ($mode eq 'stall' || $mode eq 'hold') ? ([ @rrs[0 .. 1] ], [ @rrs[2 .. $#rrs] ]) : ([@rrs]);
	my $other = ($r->{id} + 1) % 65536;
	unshift @msgs, [ $rrs[0] ] if $mode eq 'stray';
	for my $k (0 .. $#msgs) {
		my $m = $msgs[$k];
		my $id = ($mode eq 'wrongid' || ($mode eq 'stray' && $k == 0)) ? $other : $r->{id};
		send_msg($c, pack('nnnnnn', $id, 0x8400, 1, scalar @$m, 0, 0) . $r->{question} . join('', @$m),
		    $mode eq 'trickle');
		# until the secondary gives up and closes (at most a minute)
		IO::Select->new($c)->can_read(60) if $mode eq 'stall';
		if ($mode eq 'hold') {
			for (1 .. 600) { last if $hold ne '' && -e $hold; select(undef, undef, undef, 0.1) }
		}
	}
}

my $sel = IO::Select->new($srv, $udp);
for (;;) {
	for my $s ($sel->can_read) {
		if ($s == $udp) {
			datagram();
			next;
		}
		my $c = $srv->accept or next;
		next if fork;
		transfer($c);
		exit 0;
	}
}
