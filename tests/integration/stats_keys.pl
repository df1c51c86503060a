#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# stats_keys.pl FORMAT: one output of the counters (shoalctl stats's table, its JSON, or the
# Prometheus text) on stdin, as "KEY VALUE" lines in one naming for all three, sorted, so the
# outputs compare with diff. KEY is LIST_NAME (udp_queries, notify_out_sent), with [LABEL]
# for a counter of a labelled series (udp_answers[NOERROR], query_type[A],
# zone_answers[example.com.]) and @N for thread N's value; without @N it is the total. A
# labelled counter at 0 is left out (JSON leaves out each column's zero rcodes and types).
# The one mapping between the outputs' names:
#   text        "udp answers NOERROR  TOTAL  T0  T1", "zone ZONE NAME ...": the row's words
#   json        a column's own fields are udp's; "tcp", "tls", "query", "xfr" nest theirs; "zones"
#               by zone; the groups kept outside the workers ("notify_out", "xfr_in") sit
#               beside "total", a total alone
#   prometheus  shoal_LIST_NAME_total{thread="N",LABEL="V"}; a sample without thread is a
#               total alone; the threads' samples sum to the total
use strict;
use warnings;
use JSON::PP;

my $format = shift or die "usage: stats_keys.pl text|json|prometheus\n";
my %v;
local $/;
my $in = <STDIN>;

# a JSON column: its own fields are udp's (the first list), its objects other lists or zones
sub column {
	my ($c, $suffix) = @_;
	for my $k (keys %$c) {
		my $x = $c->{$k};
		next if $k eq 'thread';
		if ($k eq 'zones') {
			for my $z (keys %$x) {
				$v{"zone_$_\[$z]$suffix"} = $x->{$z}{$_} for keys %{ $x->{$z} };
			}
		} elsif (ref $x && grep { $k eq $_ } qw(tcp tls query xfr)) {
			fields($k, $x, $suffix);
		} else {
			fields('udp', { $k => $x }, $suffix);
		}
	}
}

# a list's fields: a number, or by label (rcode, type) an object of numbers
sub fields {
	my ($list, $o, $suffix) = @_;
	for my $n (keys %$o) {
		if (ref $o->{$n}) {
			$v{"${list}_$n\[$_]$suffix"} = $o->{$n}{$_} for keys %{ $o->{$n} };
		} else {
			$v{"${list}_$n$suffix"} = $o->{$n};
		}
	}
}

if ($format eq 'json') {
	my $j = decode_json($in);
	column($_, '@' . $_->{thread}) for @{ $j->{threads} };
	column($j->{total}, '');
	for my $g (grep { $_ ne 'threads' && $_ ne 'total' } keys %$j) {
		fields($g, $j->{$g}, '');
	}
} elsif ($format eq 'text') {
	my @lines = split /\n/, $in;
	my $head = shift @lines;
	die "no header: $head\n" unless $head =~ /^counter +total/;
	for (@lines) {
		my @w = split / +/;
		my @n;
		unshift @n, pop @w while @w && $w[-1] =~ /^[0-9]+$/;
		my $key = $w[0] eq 'zone' ? "zone_$w[2]\[$w[1]]"
			: @w == 3 ? "$w[0]_$w[1]\[$w[2]]" : "$w[0]_$w[1]";
		$v{$key} = shift @n;
		$v{"$key\@$_"} = $n[$_] for 0 .. $#n;
	}
} elsif ($format eq 'prometheus') {
	for (split /\n/, $in) {
		next if /^#/;
		/^shoal_(\w+?)(?:_total)?(?:\{(.*)\})? ([0-9]+)$/ or die "not a sample: $_\n";
		my ($name, $labels, $n) = ($1, $2 // '', $3);
		my ($thread, $label);
		while ($labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g) {
			if ($1 eq 'thread') { $thread = $2 } else { $label = $2 }
		}
		my $key = defined $label ? "$name\[$label]" : $name;
		$v{$key} += $n;
		$v{"$key\@$thread"} = $n if defined $thread;
	}
} else {
	die "unknown format $format\n";
}
for (sort keys %v) {
	print "$_ $v{$_}\n" unless /\[/ && $v{$_} == 0;
}
