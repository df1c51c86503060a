#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_limits: what grows with the configuration or the clients stays
# served: shoalctl stats at 256 threads (a fixed 64 KiB reply refused it),
# zone-status with 4000 zones (it stopped near 600), control clients bounded
# in number and in the time they may take to send their command and to read
# the reply, and a warning when shoald runs as root with no user to drop to.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

ZONE="example.com=$EXAMPLES/example.com.zone"

# 1. shoalctl stats at 256 threads: one entry per thread. Each worker takes
# about 8 descriptors; shoald raises its soft limit to the hard one.
THREADS=256
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $((THREADS * 8 + 200)) ]; then
	echo "# skipped 256 threads: hard descriptor limit $(ulimit -Hn)"
else
	port=$(free_port)
	start_shoald "$port" --listen "127.0.0.1@$port" --threads $THREADS --zone "$ZONE" \
		--control "$T_DIR/ctl256" || exit 1
	stats=$(timeout 30 "$SHOALCTL" -s "$T_DIR/ctl256" stats json 2>&1)
	check_eq "shoalctl stats at $THREADS threads exits 0" 0 $?
	check_eq "one entry per thread" $THREADS \
		"$(printf '%s\n' "$stats" | grep -c '^ *{"thread": [0-9]*, ')"
	check_match "and the totals" '"total": \{"queries": [0-9]+' "$stats"
	stop_pid "$SHOALD_PID"
	check_eq "$THREADS threads stop with SIGTERM, exit 0" 0 $?
fi

# 2. zone-status lists every zone, however long the reply.
ZONES=4000
args=()
for i in $(seq 1 $ZONES); do
	printf '@ 300 IN SOA ns hm %d 7200 3600 1209600 300\n@ 300 IN NS ns\nns 300 IN A 192.0.2.1\n' \
		"$i" >"$T_DIR/z$i.zone"
	args+=(--zone "z$i.test=$T_DIR/z$i.zone")
done
port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 1 "${args[@]}" \
	--control "$T_DIR/ctl" || exit 1
out=$(timeout 30 "$SHOALCTL" -s "$T_DIR/ctl" zone-status)
check_eq "zone-status exits 0" 0 $?
check_eq "zone-status lists all $ZONES zones" $ZONES \
	"$(printf '%s\n' "$out" | grep -c '^z[0-9]*\.test\. serial [0-9]* ')"
check_match "down to the last one" "^z$ZONES\\.test\\. serial $ZONES " \
	"$(printf '%s\n' "$out" | grep "^z$ZONES\\.test\\.")"

# 3. Control clients: 4 that send nothing and 4 that ask for zone-status
# (about 400 KB, more than the socket holds) and never read hold every
# client slot until their 10 s are up: the first are told they took too
# long, the others are hung up on; a shoalctl that came meanwhile is
# answered after them.
perl -MIO::Socket::UNIX -MIO::Poll=POLLHUP -e '
	my ($path, $n, $ready) = @ARGV;
	my (@idle, @mute);
	for (1 .. 2 * $n) {
		my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path)
			or die "connect: $!\n";
		if ($_ <= $n) {
			push @idle, $s;
		} else {
			print $s "zone-status\n";
			$s->flush;
			push @mute, $s;
		}
	}
	open(my $f, ">", $ready) and close($f);
	my ($told, $cut) = (0, 0);
	local $SIG{ALRM} = sub { print "told $told cut $cut\n"; exit 1 };
	alarm 60;
	for my $s (@idle) {
		local $/;
		my $r = <$s>;
		$told++ if defined $r && $r =~ /^error\nno command line received in time/;
	}
	# the silent readers: wait (30 s at most) for the server to hang up
	my $p = IO::Poll->new;
	$p->mask($_ => POLLHUP) for @mute;
	my $until = time + 30;
	while ($cut < @mute && time < $until) {
		$p->poll(1);
		$cut = grep { $p->events($_) & POLLHUP } @mute;
	}
	print "told $told cut $cut\n";' "$T_DIR/ctl" 4 "$T_DIR/held" >"$T_DIR/idle.out" 2>&1 &
idle=$!
wait_ready "$T_DIR/held" $idle
check_match "shoalctl is answered while 8 slow clients are connected" '^version ' \
	"$(timeout 40 "$SHOALCTL" -s "$T_DIR/ctl" status 2>&1 | head -1)"
wait $idle
check_eq "idle clients told they took too long, silent readers hung up on" "told 4 cut 4" \
	"$(cat "$T_DIR/idle.out")"
stop_pid "$SHOALD_PID"

# 4. As root with no user to drop to, shoald warns; with a user it does not.
if [ "$(id -u)" -eq 0 ]; then
	check_match "root without --user: a warning" 'warning: running as root with no user' \
		"$(grep 'running as root' "$T_DIR/shoald.log" | head -1)"
	if id nobody >/dev/null 2>&1; then
		: >"$T_DIR/shoald.log"
		port=$(free_port)
		# nobody reads its zone from a folder of its own: the checkout may be
		# under a home folder no other user may enter (/root is 0700)
		chmod 755 "$T_DIR"
		cp "$EXAMPLES/example.com.zone" "$T_DIR/nobody.zone"
		chmod 644 "$T_DIR/nobody.zone"
		start_shoald "$port" --listen "127.0.0.1@$port" --threads 1 --user nobody \
			--zone "example.com=$T_DIR/nobody.zone" || exit 1
		stop_pid "$SHOALD_PID"
		check_eq "root with --user nobody: no such warning" "" \
			"$(grep 'running as root' "$T_DIR/shoald.log")"
	fi
else
	check_eq "not root: no root warning" "" "$(grep 'running as root' "$T_DIR/shoald.log")"
fi

done_testing
