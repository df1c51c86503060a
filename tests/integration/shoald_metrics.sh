#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_metrics: the Prometheus endpoint. GET /metrics parses as the text
# exposition format (a small parser here; promtool too when installed), has a
# sample per thread, and its per-thread counters sum to the queries shoal-flood
# sent; other paths, methods and a head too long get their errors; the bounds
# hold: idle clients of one address cannot keep a scrape out, and a client that
# sends nothing is closed by the server; metrics-allow names the clients
# answered (loopback by default), and an address other hosts reach is warned about.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

# http PORT REQUEST: send REQUEST (printf format, CRLFs written as \r\n) on
# one connection with bash's /dev/tcp and print what comes back until the
# server closes; at most 20 s.
http() {
	timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "$2" >&3; cat <&3' _ "$1" "$2"
}

# http_from SRC PORT REQUEST: as http, from the local address SRC (127.0.0.2: another client).
http_from() {
	timeout 20 perl -MIO::Socket::INET -e '
		my ($src, $port, $req) = @ARGV;
		my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port,
			LocalAddr => $src, Proto => "tcp") or die "connect: $!\n";
		$req =~ s/\\r/\r/g;
		$req =~ s/\\n/\n/g;
		print $s $req;
		local $/;
		my $r = <$s>;
		print $r // "";' "$1" "$2" "$3"
}

# prom_check FILE: the exposition format, line by line: "# HELP name text",
# "# TYPE name counter|gauge" before a metric's samples, samples
# name{label="value",...} integer with each label name once. Prints the
# problems; empty when the file is good.
prom_check() {
	awk '
	/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* / { next }
	/^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge)$/ { typed[$3] = 1; next }
	/^#/ { print NR ": bad comment: " $0; next }
	{
		if (!match($0, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) { print NR ": no metric name: " $0; next }
		name = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
		if (!(name in typed)) print NR ": " name " has no TYPE before it"
		if (substr(rest, 1, 1) == "{") {
			rest = substr(rest, 2); delete seen
			while (match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"/)) {
				label = substr(rest, 1, index(rest, "=") - 1)
				if (label in seen) print NR ": label " label " twice"
				seen[label] = 1
				rest = substr(rest, RLENGTH + 1)
				if (substr(rest, 1, 1) == ",") rest = substr(rest, 2)
			}
			if (substr(rest, 1, 1) != "}") { print NR ": bad labels: " $0; next }
			rest = substr(rest, 2)
		}
		if (rest !~ /^ [0-9]+$/) print NR ": bad value: " $0
	}' "$1"
}

# prom_sum FILE METRIC [LABEL_TEXT]: the sum of METRIC's samples (with LABEL_TEXT).
prom_sum() {
	awk -v m="$2" -v l="${3:-}" 'index($0, m "{") == 1 && index($0, l) { s += $NF }
		END { print s + 0 }' "$1"
}

# the parser is a check: a sample without its TYPE, a bad label, a bad value
printf '# TYPE a counter\na{x="1"} 2\nb 1\na{x=1} 2\na{x="1",x="2"} 3\na 1.5\n' >"$T_DIR/bad.prom"
check_eq "the parser finds what is wrong" 4 "$(prom_check "$T_DIR/bad.prom" | wc -l)"

PORT=$(free_port) || exit 99
MPORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --metrics "$MPORT" \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99
check_match "listens on loopback when given a port alone" "127.0.0.1:$MPORT " \
	"$(ss -Hltn "sport = :$MPORT")"

http "$MPORT" 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n' >"$T_DIR/before.http"
check_match "GET /metrics: 200" '^HTTP/1.1 200 OK' "$(head -1 "$T_DIR/before.http")"
check_match "the exposition format's content type" \
	'^Content-Type: text/plain; version=0.0.4' "$(tr -d '\r' <"$T_DIR/before.http")"
sed '1,/^\r$/d' "$T_DIR/before.http" >"$T_DIR/before.prom"
check_eq "Content-Length is the body's" "$(wc -c <"$T_DIR/before.prom")" \
	"$(tr -d '\r' <"$T_DIR/before.http" | sed -n 's/^Content-Length: //p')"
check_eq "the body parses" "" "$(prom_check "$T_DIR/before.prom")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$T_DIR/before.prom" >"$T_DIR/promtool.out" 2>&1
	check_eq "promtool check metrics" 0 $?
fi
check_match "a sample per thread" 'thread="1"' "$(grep '^shoal_queries_total' "$T_DIR/before.prom")"
check_eq "a zone without traffic has no series (a million zones are not a million)" 0 \
	"$(grep -c '^shoal_zone_answers_total' "$T_DIR/before.prom")"

SENT=3000
"$SHOAL_FLOOD" -s 127.0.0.1 -p "$PORT" -q www.example.com -n $SENT -T 1 -c 32 -i 64 \
	>"$T_DIR/flood.out" 2>&1
check_match "shoal-flood lost nothing" '^ *lost +0 ' "$(cat "$T_DIR/flood.out")"
http "$MPORT" 'GET /metrics?x=1 HTTP/1.0\r\n\r\n' | sed '1,/^\r$/d' >"$T_DIR/after.prom"
check_eq "the body parses after the load" "" "$(prom_check "$T_DIR/after.prom")"
b=$(prom_sum "$T_DIR/before.prom" shoal_queries_total 'protocol="udp"')
a=$(prom_sum "$T_DIR/after.prom" shoal_queries_total 'protocol="udp"')
check_eq "the threads' UDP queries sum to the queries sent" $SENT $((a - b))
b=$(prom_sum "$T_DIR/before.prom" shoal_zone_answers_total)
a=$(prom_sum "$T_DIR/after.prom" shoal_zone_answers_total)
check_eq "so do the zone's answers" $SENT $((a - b))
b=$(prom_sum "$T_DIR/before.prom" shoal_query_types_total 'type="A"')
a=$(prom_sum "$T_DIR/after.prom" shoal_query_types_total 'type="A"')
check_eq "and the A queries" $SENT $((a - b))
check_eq "a zone's counters, one sample each (not zones x threads)" 1 \
	"$(grep -c '^shoal_zone_answers_total{zone="example.com."}' "$T_DIR/after.prom")"
check_eq "both threads answered (SO_REUSEPORT spreads the 32 sockets)" 2 \
	"$(grep -c '^shoal_queries_total{thread="[01]",protocol="udp"} [1-9]' "$T_DIR/after.prom")"

check_match "HEAD: the head alone" '^HTTP/1.1 200 OK' \
	"$(http "$MPORT" 'HEAD /metrics HTTP/1.1\r\n\r\n' | head -1)"
check_eq "HEAD: no body" "" "$(http "$MPORT" 'HEAD /metrics HTTP/1.1\r\n\r\n' | sed '1,/^\r$/d')"
check_match "another path: 404" '^HTTP/1.1 404 ' "$(http "$MPORT" 'GET / HTTP/1.1\r\n\r\n')"
check_match "another method: 405" '^HTTP/1.1 405 ' \
	"$(http "$MPORT" 'POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n')"
check_match "not HTTP: 400" '^HTTP/1.1 400 ' "$(http "$MPORT" 'hello\r\n\r\n')"
long=$(printf 'X-Filler: %05000d\r\n' 0)
check_match "a head past 4096 octets: 431" '^HTTP/1.1 431 ' \
	"$(http "$MPORT" "GET /metrics HTTP/1.1\\r\\n$long\\r\\n\\r\\n")"

# Idle clients cannot keep a scrape out. 24 connections from this address that send nothing
# (three times the 8 slots), then a scrape from the same address: it is answered within
# Prometheus's default scrape timeout (10 s), for one address holds at most 2 slots and the
# oldest idle connection gives way to a new one. (Before, the 8 first held every slot until
# the server closed them 10 s after their connection, the next 8 for 10 s more, and the
# scrape waited behind them, unaccepted.)
IDLE=()
for _ in $(seq 1 24); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$MPORT"
	IDLE+=("$fd")
done
timeout 10 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
	printf "GET /metrics HTTP/1.1\r\n\r\n" >&3; cat <&3' _ "$MPORT" >"$T_DIR/scrape.http"
check_match "a scrape gets through 24 idle connections of its own address" '^HTTP/1.1 200 OK' \
	"$(head -1 "$T_DIR/scrape.http")"
# the idle ones are closed by the server: the request head must come within 2 s
timeout 30 cat <&"${IDLE[23]}" >/dev/null
check_eq "a client that sends nothing is closed by the server" 0 $?
for fd in "${IDLE[@]}"; do
	exec {fd}>&-
done
# another loopback address is a client of its own, allowed by default (loopback only)
check_match "a client from 127.0.0.2 is answered (the default: loopback)" '^HTTP/1.1 200 OK' \
	"$(http_from 127.0.0.2 "$MPORT" 'GET /metrics HTTP/1.1\r\n\r\n' | head -1)"

# a busy port stops start-up with the address in the error
"$SHOALD" --listen "127.0.0.1@$(free_port)" --metrics "$MPORT" \
	--zone "example.com=$EXAMPLES/example.com.zone" >"$T_DIR/second.log" 2>&1
check_eq "a taken metrics port stops start-up" 1 $?
check_match "and says which" "metrics 127.0.0.1@$MPORT: .*in use" "$(cat "$T_DIR/second.log")"

stop_pid "$SHOALD_PID"
check_eq "exits 0" 0 $?

# metrics-allow: the clients answered; any other connection is closed unanswered
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 --metrics "$MPORT" \
	--metrics-allow 127.0.0.2 --metrics-allow 10.0.0.0/8 \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99
check_match "a client metrics-allow lists is answered" '^HTTP/1.1 200 OK' \
	"$(http_from 127.0.0.2 "$MPORT" 'GET /metrics HTTP/1.1\r\n\r\n' | head -1)"
# (reset, most often: its request was not read)
check_eq "one it does not list is closed unanswered" "" \
	"$(http "$MPORT" 'GET /metrics HTTP/1.1\r\n\r\n' 2>/dev/null)"
stop_pid "$SHOALD_PID"
# an address other hosts can reach is warned about, naming who may read the counters
out=$("$SHOALD" --check --metrics "0.0.0.0@$MPORT" --zone "example.com=$EXAMPLES/example.com.zone" 2>&1)
check_match "metrics on 0.0.0.0 is warned about" \
	"warning: metrics 0.0.0.0@$MPORT: reachable from other hosts; only loopback clients are answered" "$out"
out=$("$SHOALD" --check --metrics "[::]@$MPORT" --metrics-allow 192.0.2.0/24 \
	--zone "example.com=$EXAMPLES/example.com.zone" 2>&1)
check_match "and with metrics-allow, the networks are named" \
	"warning: metrics ::@$MPORT: reachable from other hosts; clients of 192.0.2.0/24 are answered" "$out"
out=$("$SHOALD" --check --metrics "$MPORT" --zone "example.com=$EXAMPLES/example.com.zone" 2>&1)
check_eq "loopback is not warned about" "" "$(grep 'warning: metrics' <<<"$out")"
done_testing
