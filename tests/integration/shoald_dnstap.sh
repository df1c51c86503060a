#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_dnstap: dnstap. The queries dig sent over UDP and TCP, read back from dnstap-file by
# dnstap-ldns, each with its response; dnstap-sample 4 logs exactly every 4th query each
# thread answers; a collector that stalls (takes the handshake, then never reads) costs no
# answer: 20000 queries are all answered, the drop counter rises, shoald stops in time.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

command -v dnstap-ldns >/dev/null || { echo "dnstap-ldns missing (dnstap-ldns package)"; exit 77; }
FLOOD=$SHOAL_BUILDDIR/tools/shoal-flood
CTL="$T_DIR/shoald.ctl"
ctl() { "$SHOALCTL" -s "$CTL" "$@" 2>&1; }

# write_conf PORT SAMPLE KEY PATH: one thread, one address, dnstap to KEY (dnstap-file or
# dnstap-socket) PATH, one query in SAMPLE
write_conf() {
	cat >"$T_DIR/shoald.conf" <<CONF
listen: [ 127.0.0.1@$1 ]
threads: 1
control: $CTL
identity: tap.test
dnstap-sample: $2
$3: $4
zones:
  - name: example.com
    file: $EXAMPLES/example.com.zone
CONF
}

# udp_queries: the UDP queries the one thread has counted (the start's probes among them)
udp_queries() { json_value "$(ctl stats --json)" queries; }

# send FIRST LAST: u<i>.example.com A over UDP for i in FIRST..LAST, then
# t<i>.example.com AAAA over TCP
send() {
	local i
	for i in $(seq "$1" "$2"); do q "$PORT" "u$i.example.com" A >/dev/null; done
	for i in $(seq "$1" "$2"); do q "$PORT" +tcp "t$i.example.com" AAAA >/dev/null; done
}

# logged KIND PROTO: the names and types of the messages of KIND (AQ, AR) over PROTO (UDP,
# TCP) in the dnstap file, one "name type" a line, sorted
logged() {
	dnstap-ldns -r "$T_DIR/tap.fstrm" |
		awk -v k="$1" -v p="$2" '$3 == k && $5 == p && $7 ~ /example\.com/ {
			gsub(/"/, "", $7); print $7, $9 }' | sort
}

# expect PREFIX TYPE I...: "PREFIX<i>.example.com. TYPE" for each I, sorted
expect() {
	local p=$1 t=$2
	shift 2
	for i in "$@"; do echo "$p$i.example.com. $t"; done | sort
}

# 0. Both outputs: refused with the line
PORT=$(free_port) || exit 99
write_conf "$PORT" 1 dnstap-file "$T_DIR/tap.fstrm"
echo "dnstap-socket: $T_DIR/collector" >>"$T_DIR/shoald.conf"
out=$("$SHOALD" -c "$T_DIR/shoald.conf" --check 2>&1)
check_match "dnstap-file and dnstap-socket both: an error with the line" \
	'shoald.conf:[0-9]+: dnstap-socket: dnstap goes to a file or a socket, not both' "$out"

write_conf "$PORT" 1 dnstap-file "$T_DIR/no/such/folder/tap.fstrm"
"$SHOALD" -c "$T_DIR/shoald.conf" >"$T_DIR/out" 2>&1
check_eq "a dnstap-file that cannot be written stops the start" 1 $?
check_match "and says why" "dnstap-file: cannot write $T_DIR/no/such/folder/tap.fstrm" \
	"$(cat "$T_DIR/out")"

# 1. Every query, UDP and TCP, with its response
PORT=$(free_port) || exit 99
write_conf "$PORT" 1 dnstap-file "$T_DIR/tap.fstrm"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
send 1 12
stats=$(ctl stats --json)
# the writer's thread, which fstrm starts, is named and blocks the main loop's signals
tid=$(grep -l '^shoald-dnstap$' /proc/"$SHOALD_PID"/task/*/comm | head -1 | cut -d/ -f5)
check_match "the dnstap thread is named shoald-dnstap" '^[0-9]+$' "$tid"
mask=$(awk '/^SigBlk:/ { print $2 }' /proc/"$SHOALD_PID"/task/"${tid:-0}"/status 2>/dev/null)
check_eq "it blocks SIGHUP, SIGINT and SIGTERM" $((0x4003)) $((16#${mask:-0} & 0x4003))
stop_pid "$SHOALD_PID"
check_eq "shoald with dnstap stops cleanly" 0 $?
check_eq "the 12 UDP queries are read back" "$(expect u A $(seq 1 12))" "$(logged AQ UDP)"
check_eq "each with its response" "$(expect u A $(seq 1 12))" "$(logged AR UDP)"
check_eq "the 12 TCP queries are read back" "$(expect t AAAA $(seq 1 12))" "$(logged AQ TCP)"
check_eq "each with its response" "$(expect t AAAA $(seq 1 12))" "$(logged AR TCP)"
out=$(dnstap-ldns -y -r "$T_DIR/tap.fstrm")
check_match "the identity is identity:'s" 'identity: "tap.test"' "$out"
check_match "the version is shoal's" 'version: "shoal [0-9]' "$out"
check_match "the responses are the messages sent" 'rcode: NXDOMAIN' "$out"
check_match "the client's address and port are there" 'query_port: [0-9]+' "$out"
if command -v kdig >/dev/null; then
	check_eq "kdig -G reads the 24 responses too" 24 \
		"$(kdig -G "$T_DIR/tap.fstrm" | grep -cE '^;; ?[ut][0-9]+\.example\.com\.')"
fi
queued=$(json_value "$stats" dnstap_queued | tr -d ' ')
[ "${queued:-0}" -ge 48 ] && pass "dnstap_queued counts them ($queued)" ||
	fail "dnstap_queued counts them ($queued)"

# 2. One in four: the 4th, 8th... query each thread answers (the UDP receiver counted the
# start's probes first: their number is read from the statistics)
rm -f "$T_DIR/tap.fstrm"
PORT=$(free_port) || exit 99
write_conf "$PORT" 4 dnstap-file "$T_DIR/tap.fstrm"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
probes=$(udp_queries | tr -d ' ')
send 1 12
stop_pid "$SHOALD_PID"
want=""
for i in $(seq 1 12); do [ $(((probes + i) % 4)) -eq 0 ] && want="$want $i"; done
check_eq "1 in 4: UDP queries $want (after $probes probes)" "$(expect u A $want)" \
	"$(logged AQ UDP)"
check_eq "1 in 4: TCP queries 4 8 12" "$(expect t AAAA 4 8 12)" "$(logged AQ TCP)"
check_eq "1 in 4: their responses too" "$(expect t AAAA 4 8 12)" "$(logged AR TCP)"

# 3. A collector that stalls: answers keep coming, the drops are counted, the stop is bounded
PORT=$(free_port) || exit 99
perl "$SHOAL_SRCDIR/tests/integration/dnstap_stall.pl" "$T_DIR/collector" >"$T_DIR/stall.out" &
STALL_PID=$!
T_PIDS="$T_PIDS $STALL_PID"
wait_until 10 grep -q ready "$T_DIR/stall.out" || { echo "the collector did not start"; exit 99; }
write_conf "$PORT" 1 dnstap-socket "$T_DIR/collector"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
report=$("$FLOOD" -p "$PORT" -q www.example.com -n 20000 -w 5 --json)
check_eq "20000 queries with the collector stalled: all answered" 20000 \
	"$(json_value "$report" answered)"
stats=$(ctl stats --json)
dropped=$(json_value "$stats" dnstap_dropped | tr -d ' ')
[ "${dropped:-0}" -gt 0 ] && pass "the drops are counted ($dropped)" ||
	fail "the drops are counted (${dropped:-none})"
check_eq "TCP is answered too" NOERROR \
	"$(q "$PORT" +tcp www.example.com A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"
start=$(date +%s.%N)
stop_within "$SHOALD_PID" 30
check_eq "shoald stops with the collector stalled" 0 $?
echo "stopped in $(since "$start") s"

# 4. With user:, the file is the user's: the thread opens it before or after the drop
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -p "$T_DIR/nb" && chmod 755 "$T_DIR" "$T_DIR/nb" || exit 99
	cp "$EXAMPLES/example.com.zone" "$T_DIR/nb/" && chmod 644 "$T_DIR/nb/example.com.zone"
	PORT=$(free_port) || exit 99
	cat >"$T_DIR/nb/shoald.conf" <<CONF
listen: [ 127.0.0.1@$PORT ]
threads: 1
user: nobody
dnstap-file: $T_DIR/nb/tap.fstrm
zones:
  - name: example.com
    file: $T_DIR/nb/example.com.zone
CONF
	start_shoald "$PORT" -c "$T_DIR/nb/shoald.conf" || exit 99
	q "$PORT" u1.example.com A >/dev/null
	stop_pid "$SHOALD_PID"
	check_eq "user: nobody: the dnstap file is nobody's" nobody "$(stat -c %U "$T_DIR/nb/tap.fstrm")"
	check_match "and holds the query" 'AQ 127.0.0.1 UDP [0-9]+b "u1.example.com."' \
		"$(dnstap-ldns -r "$T_DIR/nb/tap.fstrm")"
fi
done_testing
