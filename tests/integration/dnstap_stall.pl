#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# dnstap_stall: a dnstap collector that stalls. It listens on the unix socket PATH, answers
# each writer's Frame Streams handshake (READY, then ACCEPT with dnstap's content type, then
# START) and then never reads again, holding the connection open, as a collector that hangs
# does. Prints "ready" once listening; runs until killed.
use strict;
use warnings;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM SOL_SOCKET SO_RCVBUF);

my $path = shift or die "usage: dnstap_stall.pl PATH\n";
unlink $path;
my $srv = IO::Socket::UNIX->new(Type => SOCK_STREAM, Local => $path, Listen => 16)
  or die "dnstap_stall: $path: $!\n";
$| = 1;
print "ready\n";

# read_exact(SOCK, N): N octets, or undef when the writer went away
sub read_exact {
	my ($s, $n) = @_;
	my $buf = '';
	while (length($buf) < $n) {
		my $got = sysread($s, $buf, $n - length($buf), length($buf));
		return undef unless $got;
	}
	return $buf;
}

# one control frame: the escape (0), its length, then that many octets
sub read_control {
	my ($s) = @_;
	my $head = read_exact($s, 8) or return undef;
	my (undef, $len) = unpack('N N', $head);
	return read_exact($s, $len);
}

my $ct = 'protobuf:dnstap.Dnstap';
my @held;
while (my $c = $srv->accept) {
	setsockopt($c, SOL_SOCKET, SO_RCVBUF, 4096);
	defined read_control($c) or next;    # READY
	my $accept = pack('N N N', 1, 1, length $ct) . $ct;    # ACCEPT, CONTENT_TYPE
	syswrite($c, pack('N N', 0, length $accept) . $accept);
	defined read_control($c) or next;    # START
	push @held, $c;                      # and never read again
}
