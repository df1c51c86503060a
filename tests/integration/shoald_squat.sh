#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_squat: another local user cannot keep shoald from starting on a port. A process
# running as nobody first takes every name of the one-instance lock an outsider could reach
# (the abstract unix socket "shoald.instance:ADDR@PORT" shoald once used, which has no owner;
# the per-uid folder /tmp/shoald-0; a lock on every file of the lock folder it can open);
# shoald, as root, still starts and answers, and a second shoald of the same user on the port
# is still refused, naming the first. Needs root (to run the squatter as nobody).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

need_nobody "to run a process as another user"

PORT=$(free_port) || exit 99
chmod 755 "$T_DIR"
mkdir "$T_DIR/squat" && chown nobody "$T_DIR/squat"
cp "$EXAMPLES/example.com.zone" "$T_DIR/example.com.zone"
chmod 644 "$T_DIR/example.com.zone"
ZONE="example.com=$T_DIR/example.com.zone"

# The squatter: binds the abstract name for the address, makes
# /tmp/shoald-0 its own, takes a lock on every file of the run-state folders it can open,
# says what it holds in squat/held, and stays until killed.
cat >"$T_DIR/squat.pl" <<'PERL'
use strict;
use warnings;
use Socket;
use Fcntl qw(:flock O_RDONLY);
my ($port, $out) = @ARGV;
my (@held, @keep);
my $name = "shoald.instance:127.0.0.1\@$port";
socket(my $s, AF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
if (bind($s, pack_sockaddr_un("\0$name"))) { push @keep, $s; push @held, "abstract $name"; }
push @held, "folder /tmp/shoald-0" if mkdir("/tmp/shoald-0", 0777);
for my $dir ("/run/shoal", "/tmp/shoald-0", $ENV{XDG_RUNTIME_DIR} // ()) {
	opendir(my $d, $dir) or next;
	for my $f (readdir $d) {
		next if $f =~ /^\.\.?$/;
		sysopen(my $fh, "$dir/$f", O_RDONLY) or next;
		if (flock($fh, LOCK_EX | LOCK_NB)) { push @keep, $fh; push @held, "lock $dir/$f"; }
	}
}
open(my $o, '>', "$out.tmp") or die "$out: $!";
print $o "$_\n" for @held;
close $o;
rename("$out.tmp", $out) or die "rename: $!";
sleep 600;
PERL
"${AS_NOBODY[@]}" perl "$T_DIR/squat.pl" "$PORT" "$T_DIR/squat/held" >"$T_DIR/squat.log" 2>&1 &
SQUAT=$!
T_PIDS="$T_PIDS $SQUAT"
wait_ready "$T_DIR/squat/held" "$SQUAT" || { cat "$T_DIR/squat.log"; exit 99; }
echo "# the squatter holds:"
sed 's/^/#   /' "$T_DIR/squat/held"
check_match "the squatter holds the abstract name" "^abstract shoald.instance:127.0.0.1@$PORT$" \
	"$(cat "$T_DIR/squat/held")"

if start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 --zone "$ZONE"; then
	pass "shoald starts on a port whose lock names another user's process holds"
else
	fail "shoald starts on a port whose lock names another user's process holds: $(tail -3 "$T_DIR/shoald.log")"
fi
check_match "and answers" "status: NOERROR" "$(q "$PORT" www.example.com A)"
FIRST=$SHOALD_PID

# the lock still works between two servers of the same user
out=$(timeout 20 "$SHOALD" --listen "127.0.0.1@$PORT" --threads 1 --zone "$ZONE" 2>&1)
check_eq "a second shoald of the same user on the port exits 1" 1 $?
check_match "naming the first" "127.0.0.1@$PORT: another shoald, pid $FIRST \(shoald\)" "$out"

stop_pid "$FIRST"
check_eq "the first one exits 0" 0 $?
stop_pid "$SQUAT"
rmdir /tmp/shoald-0 2>/dev/null
done_testing
