#!/usr/bin/perl
# SPDX-License-Identifier: GPL-3.0-or-later
# stats_keys.pl FORMAT: one output of the counters (shoalctl stats's table, its JSON, or the
# Prometheus text) on stdin, as "KEY VALUE" lines in one naming for all three, sorted, so the
# outputs compare with diff. KEY is LIST_NAME (udp_queries, notify_out_sent), with [LABEL]
# for a counter of a labelled series (udp_answers[NOERROR], query_type[A],
# zone_answers[example.com.]) and @N for thread N's value; without @N it is the total. A
# labelled counter at 0 is left out (JSON leaves out each column's zero rcodes and types).
# The one mapping between the outputs' names:
#   text        "udp answers NOERROR  TOTAL  T0  T1", "zone ZONE NAME TOTAL": the row's words
#   json        a column's own fields are udp's; "tcp", "tls", "query", "xfr" nest theirs; "zones"
#               by zone, a total alone, beside "total"; the groups kept outside the workers
#               ("server", "notify_out", "xfr_in", "sched") sit beside them, totals alone
#   prometheus  shoal_METRIC[_total]{thread="N",protocol="P",FIXED="F",LABEL="V"}, METRIC
#               named after Prometheus's conventions (server/common/stats.h gives each
#               field's): %metric below maps it back, with its protocol and fixed label, to
#               LIST_NAME; a sample without thread is a total alone; the threads' samples
#               sum to the total
use strict;
use warnings;
use JSON::PP;

my $format = shift or die "usage: stats_keys.pl text|json|prometheus\n";

# METRIC, with "/P" for its protocol and "/F" for its fixed label's value: LIST_NAME
my %metric = (
	'queries/udp' => 'udp_queries', 'answers/udp' => 'udp_answers',
	'truncated_answers/udp' => 'udp_truncated', 'dropped_queries/udp' => 'udp_dropped',
	'malformed_queries/udp' => 'udp_malformed', 'received_bytes/udp' => 'udp_bytes_in',
	'sent_bytes/udp' => 'udp_bytes_out', 'receive_buffer_drops/udp' => 'udp_rcvbuf_drops',
	'rrl_answers/udp/dropped' => 'udp_rrl_dropped', 'rrl_answers/udp/slipped' => 'udp_rrl_slipped',
	'cookie_queries/udp/client' => 'udp_cookie_client',
	'cookie_queries/udp/valid' => 'udp_cookie_valid',
	'cookie_queries/udp/invalid' => 'udp_cookie_invalid',
	'accepted_connections/tcp' => 'tcp_accepted', 'closed_connections/tcp/idle' => 'tcp_closed_idle',
	'closed_connections/tcp/limit' => 'tcp_closed_limit',
	'closed_connections/tcp/slow' => 'tcp_closed_slow',
	'closed_connections/tcp/per_address' => 'tcp_refused_per_address',
	'queries/tcp' => 'tcp_queries', 'sent_answers/tcp' => 'tcp_answers',
	'received_bytes/tcp' => 'tcp_bytes_in', 'sent_bytes/tcp' => 'tcp_bytes_out',
	'accept_pauses/tcp' => 'tcp_accept_paused', 'answers/tcp' => 'tcp_rcode',
	'accepted_connections/tls' => 'tls_accepted', 'closed_connections/tls/idle' => 'tls_closed_idle',
	'closed_connections/tls/limit' => 'tls_closed_limit',
	'closed_connections/tls/slow' => 'tls_closed_slow',
	'closed_connections/tls/per_address' => 'tls_refused_per_address',
	'queries/tls' => 'tls_queries', 'sent_answers/tls' => 'tls_answers',
	'received_bytes/tls' => 'tls_bytes_in', 'sent_bytes/tls' => 'tls_bytes_out',
	'accept_pauses/tls' => 'tls_accept_paused', 'answers/tls' => 'tls_rcode',
	'tls_handshakes/tls' => 'tls_handshakes', 'tls_resumed_handshakes/tls' => 'tls_resumed',
	'tls_failed_handshakes/tls' => 'tls_handshake_failed',
	'tls_handshake_timeouts/tls' => 'tls_handshake_timeouts',
	'tls_evicted_handshakes/tls' => 'tls_handshakes_evicted',
	'query_types' => 'query_type', 'edns_queries' => 'query_edns',
	'dnssec_ok_queries' => 'query_dnssec_ok',
	'dnstap_messages/queued' => 'query_dnstap_queued',
	'dnstap_messages/dropped' => 'query_dnstap_dropped',
	'xfr_out_requests' => 'xfr_requests', 'xfr_out_refused' => 'xfr_refused',
	'xfr_out_axfr' => 'xfr_axfr', 'xfr_out_ixfr' => 'xfr_ixfr', 'xfr_out_uptodate' => 'xfr_uptodate',
	'xfr_out_completed' => 'xfr_done', 'xfr_out_failed' => 'xfr_failed',
	'xfr_out_messages' => 'xfr_messages', 'xfr_out_sent_bytes' => 'xfr_bytes_out',
	'notify_in/accepted' => 'xfr_notify_in', 'notify_in/ignored' => 'xfr_notify_ignored',
	'notify_in/refused' => 'xfr_notify_refused',
	'zone_answers' => 'zone_answers', 'zone_nxdomain_answers' => 'zone_nxdomain',
	'zone_serial' => 'zone_serial', 'zone_next_refresh_timestamp_seconds' => 'zone_next_refresh',
	'zone_expiry_timestamp_seconds' => 'zone_expires',
	'zone_last_refresh_timestamp_seconds' => 'zone_last_refresh',
	'zone_last_failure_timestamp_seconds' => 'zone_last_failure', 'zone_unsaved' => 'zone_unsaved',
	'zones' => 'server_zones', 'start_time_seconds' => 'server_start_time',
	'build_info' => 'server_build_info',
	'notify_out_sent' => 'notify_out_sent', 'notify_out_answered' => 'notify_out_answered',
	'notify_out_refused' => 'notify_out_refused', 'notify_out_unanswered' => 'notify_out_unanswered',
	'xfr_in_checks' => 'xfr_in_checks', 'xfr_in_axfr' => 'xfr_in_axfr', 'xfr_in_ixfr' => 'xfr_in_ixfr',
	'xfr_in_uptodate' => 'xfr_in_uptodate', 'xfr_in_failed' => 'xfr_in_failed',
	'xfr_in_received_bytes' => 'xfr_in_bytes_in', 'xfr_in_expired_zones' => 'xfr_in_expired',
	'xfr_in_save_failures' => 'xfr_in_save_failed',
	'secondary_zones' => 'sched_zones', 'xfr_in_running' => 'sched_running',
	'sched_refreshes' => 'sched_refreshes', 'sched_soa_queries' => 'sched_soa_queries',
	'sched_notify_coalesced' => 'sched_notify_coalesced',
	'sched_rate_limited' => 'sched_rate_limited', 'sched_zones_taken' => 'sched_zones_taken',
	'state_saves' => 'sched_state_saves',
	'state_save_failures' => 'sched_state_save_errors',
	'secondary_unsaved_zones' => 'sched_unsaved',
);
my %varying = map { $_ => 1 } qw(rcode type zone version);
my %v;
local $/;
my $in = <STDIN>;

# a JSON column: its own fields are udp's (the first list), its objects other lists
sub column {
	my ($c, $suffix) = @_;
	for my $k (keys %$c) {
		my $x = $c->{$k};
		next if $k eq 'thread';
		if (ref $x && grep { $k eq $_ } qw(tcp tls query xfr)) {
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
	for my $z (keys %{ $j->{zones} }) {
		$v{"zone_$_\[$z]"} = $j->{zones}{$z}{$_} for keys %{ $j->{zones}{$z} };
	}
	for my $g (grep { !/^(threads|total|zones)$/ } keys %$j) {
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
		my ($m, $labels, $n) = ($1, $2 // '', $3);
		my ($thread, $protocol, $fixed, $label);
		while ($labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g) {
			if ($1 eq 'thread') { $thread = $2 }
			elsif ($1 eq 'protocol') { $protocol = $2 }
			elsif ($varying{$1}) { $label = $2 }
			else { $fixed = $2 }
		}
		my $k = join '/', grep { defined } $m, $protocol, $fixed;
		my $name = $metric{$k} // die "no name for the metric $k\n";
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
