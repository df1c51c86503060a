#!/bin/bash
# shoald_limits: what grows with the clients stays bounded and served:
# control clients are bounded in number and in the time they may take to
# send their command.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

ZONE="example.com=$EXAMPLES/example.com.zone"

# 1. Control clients: 8 that connect and send nothing hold every client slot
# until their 10 s to send a command are up; each is then told so, and a
# shoalctl that came meanwhile is answered after them.
port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 1 --zone "$ZONE" \
	--control "$T_DIR/ctl" || exit 1
perl -MIO::Socket::UNIX -e '
	my ($path, $n, $ready) = @ARGV;
	my @s;
	for (1 .. $n) {
		push @s, IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path)
			or die "connect: $!\n";
	}
	open(my $f, ">", $ready) and close($f);
	my $told = 0;
	local $SIG{ALRM} = sub { print "told $told\n"; exit 1 };
	alarm 40;
	for my $s (@s) {
		local $/;
		my $r = <$s>;
		$told++ if defined $r && $r =~ /^error\nno command line received in time/;
	}
	print "told $told\n";' "$T_DIR/ctl" 8 "$T_DIR/held" >"$T_DIR/idle.out" 2>&1 &
idle=$!
for _ in $(seq 1 200); do
	[ -e "$T_DIR/held" ] || ! kill -0 $idle 2>/dev/null && break
	sleep 0.05
done
check_match "shoalctl is answered while 8 idle clients are connected" '^version ' \
	"$(timeout 40 "$SHOALCTL" -s "$T_DIR/ctl" status 2>&1 | head -1)"
wait $idle
check_eq "the 8 idle clients were told they took too long" "told 8" "$(cat "$T_DIR/idle.out")"
stop_pid "$SHOALD_PID"

done_testing
