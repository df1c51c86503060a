#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# rrl_flood.pl: send COUNT UDP queries for NAME/A from one socket bound to
# SRC, evenly paced over SECONDS, to 127.0.0.1@PORT, and meanwhile one query
# every 200 ms from a socket bound to SRC2 (when given); read the answers
# for two more seconds and print what came back:
#   full N tc N other N lost N second_full N second_sent N first_second S
#   last_second S rcode R octets_out N octets_in N
# full: NOERROR with records and TC clear; tc: TC set, no records; other:
# anything else; rcode: that of the last answer of the flood (-1: none).
# first/last_second: the clock seconds (time(2)) of the first query sent
# and of the last answer read, between which the server counted; the first
# is read 50 ms early, because the server's time(2) is the kernel's coarse
# clock, read once a batch, which may still say the second before (one
# tick behind: a flood that starts just after a second began can be counted
# partly in the one before). COOKIE, when given, is the hex of a COOKIE option sent with
# every query of the flood (the second sender sends none). TYPES, when
# given, is a comma-separated list of type numbers the flood's queries take
# in turn (default 1, A); octets_out and octets_in are the DNS payload the
# flood sent and received.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use Socket qw(SOL_SOCKET SO_RCVBUF);
use Time::HiRes qw(time sleep);

my ($port, $name, $count, $seconds, $src, $cookie, $src2, $types) = @ARGV;
die "usage: rrl_flood.pl PORT NAME COUNT SECONDS SRC [COOKIE|-] [SRC2|-] [TYPES]\n"
	unless defined $src;
$cookie = '' if !defined $cookie || $cookie eq '-';
$src2 = undef if defined $src2 && $src2 eq '-';
my @types = split /,/, ($types // '1');

sub query {
	my ($id, $cookie_hex, $type) = @_;
	my $q = pack('nnnnnn', $id, 0, 1, 0, 0, 1);
	$q .= pack('C/a*', $_) for split /\./, $name;
	$q .= pack('Cnn', 0, $type // 1, 1);
	my $opt = '';
	$opt = pack('nn', 10, length($cookie_hex) / 2) . pack('H*', $cookie_hex) if $cookie_hex ne '';
	return $q . pack('Cnnnnn', 0, 41, 1232, 0, 0, length $opt) . $opt;
}

sub open_socket {
	my ($addr) = @_;
	my $s = IO::Socket::INET->new(Proto => 'udp', LocalAddr => $addr,
		PeerAddr => '127.0.0.1', PeerPort => $port) or die "socket $addr: $!\n";
	setsockopt($s, SOL_SOCKET, SO_RCVBUF, 4 << 20);
	$s->blocking(0);
	return $s;
}

my $flood = open_socket($src);
my $second = $src2 ? open_socket($src2) : undef;
my $sel = IO::Select->new($flood, $second ? $second : ());
my %r = (octets_out => 0, octets_in => 0, rcode => -1, full => 0, tc => 0, other => 0, second_full => 0, second_sent => 0);
my $answers = 0;

sub read_answers {
	my ($wait) = @_;
	for my $s ($sel->can_read($wait)) {
		my $buf;
		while (defined $s->recv($buf, 65535) && length $buf >= 12) {
			my ($id, $flags, $qd, $an) = unpack('nnnn', $buf);
			my $rcode = $flags & 0xf;
			if ($second && $s == $second) {
				$r{second_full}++ if $rcode == 0 && $an > 0 && !($flags & 0x200);
				next;
			}
			$answers++;
			$r{octets_in} += length $buf;
			$r{rcode} = $rcode;
			if ($rcode == 0 && $an > 0 && !($flags & 0x200)) {
				$r{full}++;
			} elsif ($flags & 0x200 && $an == 0) {
				$r{tc}++;
			} else {
				$r{other}++;
			}
			$r{last_second} = int(time);
		}
	}
}

my $start = time;
$r{first_second} = int($start - 0.05);
my $next_second = $start;
for my $i (0 .. $count - 1) {
	my $due = $start + $seconds * $i / $count;
	while (time < $due) {
		read_answers($due - time);
	}
	my $q = query($i & 0xffff, $cookie, $types[$i % @types]);
	$r{octets_out} += length $q;
	$flood->send($q);
	if ($second && time >= $next_second) {
		$second->send(query($r{second_sent}++, ''));
		$next_second += 0.2;
	}
}
my $until = time + 2;
while (time < $until && $answers < $count) {
	read_answers($until - time);
}
read_answers(0.2) if $second; # the second sender's last answer
$r{last_second} //= int(time);
$r{lost} = $count - $answers;
print join(' ', map { "$_ $r{$_}" }
	qw(full tc other lost second_full second_sent first_second last_second rcode
	   octets_out octets_in)), "\n";
