#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_syslog: --syslog yes sends each line as an RFC 3164 datagram to the log socket
# (here the test's, named by SHOAL_SYSLOG_SOCKET, in place of /dev/log), and a logger that
# stalls (a hung journald) holds no thread of shoald. A reader that reads sees well-formed
# lines, "<PRI>Mmm dd hh:mm:ss shoald[PID]: message", PRI the daemon facility (3) times 8
# plus the severity. A reader that binds the socket and never reads, with zones that log
# far more than its queue holds: shoald starts and answers, a reload is answered, SIGTERM
# stops it; once the reader reads, one line says how many were dropped. With syslog(3),
# whose send to the socket blocks, the first full queue held the thread that logged:
# shoald never answered and SIGTERM could not stop it.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

# sink SOCKET OUT GO: bind the datagram socket SOCKET and, while the file GO exists,
# append each datagram read to OUT as a line; while it does not, read nothing.
sink() {
	perl -MSocket -MIO::Handle -e '
		my ($path, $out, $go) = @ARGV;
		socket(my $s, AF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
		bind($s, pack_sockaddr_un($path)) or die "bind $path: $!";
		open(my $fh, ">>", $out) or die "$out: $!";
		$fh->autoflush(1);
		for (;;) {
			if (!-e $go) { select(undef, undef, undef, 0.1); next; }
			my $rin = "";
			vec($rin, fileno($s), 1) = 1;
			next unless select(my $rout = $rin, undef, undef, 0.1);
			my $msg;
			recv($s, $msg, 65536, 0) // die "recv: $!";
			print $fh "$msg\n";
		}' "$@" &
	T_PIDS="$T_PIDS $!"
	SINK_PID=$!
}

# the log socket's reader: every line's form and priority. SYSLOG_TEST_SOCKET=/dev/log runs
# the test against a shoald that knows no SHOAL_SYSLOG_SOCKET (syslog(3)), in a mount
# namespace of its own with a /dev of its own.
SOCK=${SYSLOG_TEST_SOCKET:-$T_DIR/log.sock}
GO=$T_DIR/go
OUT=$T_DIR/syslog
touch "$GO"
sink "$SOCK" "$OUT" "$GO"
wait_ready "$SOCK" "$SINK_PID" || exit 99
{
	printf '$ORIGIN sl.test.\n$TTL 300\n@ SOA ns1 hm 1 3600 600 86400 300\n'
	printf '@ NS ns1\nns1 A 192.0.2.1\nw.example.org. A 192.0.2.1\n'
} >"$T_DIR/sl.zone"
PORT=$(free_port) || exit 99
SHOAL_SYSLOG_SOCKET=$SOCK start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 \
	--syslog yes --zone "sl.test=$T_DIR/sl.zone" || exit 99
PID=$SHOALD_PID
stop_within "$PID" 60
check_eq "reader: shoald stops" 0 $?
wait_line "$OUT" ': stopping$'
HEAD="^<[0-9]+>(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9] shoald\\[$PID\\]: [^ ]"
check_eq "every line is <PRI>TIMESTAMP shoald[PID]: MESSAGE" "" "$(grep -Ev "$HEAD" "$OUT")"
check_match "a zone's load at info: PRI 30 (daemon 3 * 8 + 6)" \
	"^<30>.*: zone sl\\.test\\. serial 1 loaded" "$(cat "$OUT")"
check_match "the record outside the zone at warning: PRI 28 (3 * 8 + 4)" \
	"^<28>.*: .*w\\.example\\.org" "$(cat "$OUT")"
check_match "the same line on stderr" " warning: .*w\\.example\\.org" "$(cat "$T_DIR/shoald.log")"
check_match "and \"stopping\" at info" "^<30>.*: stopping$" "$(cat "$OUT")"
kill "$SINK_PID" 2>/dev/null
wait "$SINK_PID" 2>/dev/null

# a reader that does not read: 40 zones of 60 records outside them, 51 warning lines each
# a load, where a datagram socket queues a few (net.unix.max_dgram_qlen)
noisy_zones 40
rm -f "$SOCK" "$GO" "$OUT"
sink "$SOCK" "$OUT" "$GO"
wait_ready "$SOCK" "$SINK_PID" || exit 99
PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
SHOAL_SYSLOG_SOCKET=$SOCK "$SHOALD" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--syslog yes "${ZONES[@]}" >>"$T_DIR/stalled.log" 2>&1 &
SHOALD_PID=$!
T_PIDS="$T_PIDS $SHOALD_PID"
wait_until 60 started "$PORT"
check_eq "syslog full: shoald starts and answers" "NOERROR" \
	"$(q "$PORT" z40.test SOA | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
timeout 30 "$SHOALCTL" -s "$CTL" reload >/dev/null 2>&1
check_eq "syslog full: a reload is answered (its syslog lines are dropped)" 0 $?
check_eq "and the zones still answer" "NOERROR" \
	"$(q "$PORT" z1.test SOA | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
check_match "stderr has every line meanwhile" "info: zone z40\\.test\\. serial 1 loaded" \
	"$(cat "$T_DIR/stalled.log")"

# the reader reads again: the next line says how many were dropped
touch "$GO"
wait_line "$OUT" "z1\\.zone:" # it reads what was queued before the stall
timeout 30 "$SHOALCTL" -s "$CTL" reload >/dev/null 2>&1
wait_line "$OUT" "^<28>.*shoald\\[$SHOALD_PID\\]: [0-9]+ log lines dropped \\(syslog was full\\)$"
check_eq "once the reader reads: one line counts the lines dropped" 0 $?

# full again, then SIGTERM ("stopping" is logged before the loop stops)
rm -f "$GO"
sleep 0.3 # the reader's last wait for a datagram ends (0.1 s); no timing is measured
timeout 30 "$SHOALCTL" -s "$CTL" reload >/dev/null 2>&1
stop_within "$SHOALD_PID" 20
check_eq "syslog full: SIGTERM stops shoald within its grace" 0 $?
done_testing
