#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/xfr_out: what Shoal answers as a primary, asked with dig: AXFR past
# provide-xfr (refused otherwise, and logged), with TSIG (a wrong secret
# BADSIG, an unknown key BADKEY), IXFR over TCP with the changes of two
# reloads condensed, beyond the journal the whole zone, over UDP the SOA or
# nothing (TC), a serial from the future answered with our SOA and logged,
# a big zone in many messages, a record too big for the usual message size
# in a bigger one (AXFR, IXFR; over UDP TC) and one too big with a TSIG RR
# logged as our failure, signed ordinary queries answered signed, access
# lists written as IPv4-mapped addresses, a BADKEY answer too big for 512
# octets; and the daemon answers throughout. The rcodes and flags dig does
# not show for transfers are checked in tests/unit/test_transfer.c.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

KEY="hmac-sha256:$XFR_KEY:$XFR_SECRET"
# write_zone SERIAL: www moves with the serial; v$SERIAL is added each time
write_zone() {
	{
		printf '$ORIGIN out.test.\n$TTL 300\n'
		printf '@ IN SOA ns1 hostmaster %s 3600 600 86400 60\n@ IN NS ns1\n' "$1"
		printf 'ns1 IN A 192.0.2.1\nwww IN A 192.0.2.%s\n' "$1"
		for i in $(seq 1 "$1"); do printf 'v%s IN TXT "version-%s"\n' "$i" "$i"; done
	} >"$T_DIR/out.test.zone.new"
	mv "$T_DIR/out.test.zone.new" "$T_DIR/out.test.zone"
}
write_zone 1
# big.test: 20000 names, several hundred kilobytes of AXFR
{
	printf '$ORIGIN big.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n@ IN NS ns1\n'
	for i in $(seq 1 20000); do printf 'h%s IN A 10.0.%s.%s\n' "$i" $((i / 250)) $((i % 250))
	done
} >"$T_DIR/big.test.zone"
# fat.test: a TXT record of 40160 octets, more than a 16 KiB message holds
# but well within a TCP message; version 2 adds another
write_fat() {
	local big
	big=$(awk 'BEGIN { s = sprintf("%250s", ""); gsub(/ /, "a", s)
		for (i = 0; i < 160; i++) printf "\"%s\" ", s }')
	{
		printf '$ORIGIN fat.test.\n$TTL 300\n'
		printf '@ IN SOA ns1 hostmaster %s 3600 600 86400 60\n@ IN NS ns1\n' "$1"
		printf 'ns1 IN A 192.0.2.1\nfat IN TXT %s\n' "$big"
		[ "$1" -gt 1 ] && printf 'fat2 IN TXT %s\n' "$big"
	} >"$T_DIR/fat.test.zone.new"
	mv "$T_DIR/fat.test.zone.new" "$T_DIR/fat.test.zone"
}
write_fat 1
# edge.test: a TXT record of 65450 octets, which loads and goes unsigned, but
# not with a TSIG RR after it
{
	printf '$ORIGIN edge.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n'
	printf '@ IN NS ns1\nns1 IN A 192.0.2.1\nedge IN TXT '
	awk 'BEGIN { s = sprintf("%255s", ""); gsub(/ /, "e", s)
		for (i = 0; i < 255; i++) printf "\"%s\" ", s
		print "\"" substr(s, 1, 169) "\"" }'
} >"$T_DIR/edge.test.zone"
cp "$T_DIR/out.test.zone" "$T_DIR/nojournal.test.zone"
sed -i 's/out.test/nojournal.test/' "$T_DIR/nojournal.test.zone"
sed 's/out.test/mapped.test/' "$T_DIR/out.test.zone" >"$T_DIR/mapped.test.zone"

PORT=$(free_port) || exit 99
DEAD=$(free_port) || exit 99 # a secondary that never answers NOTIFY
# held by a socket that never reads, so no other test's server takes the port and answers
perl -MIO::Socket::INET -e '$| = 1;
	my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0],
		Proto => "udp") or die "xfr_out: hold port $ARGV[0]: $!\n";
	print "held\n"; sleep 600' "$DEAD" >"$T_DIR/dead" 2>&1 &
T_PIDS="$T_PIDS $!"
wait_line "$T_DIR/dead" '^held$' || { cat "$T_DIR/dead"; exit 99; }
CTL=$T_DIR/ctl
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $CTL
notify-retry: 2
keys:
  - name: $XFR_KEY
    algorithm: hmac-sha256
    secret: "$XFR_SECRET"
zones:
  - name: out.test
    file: $T_DIR/out.test.zone
    provide-xfr: ["127.0.0.2 NOKEY", "127.0.0.1 $XFR_KEY"]
    notify: ["127.0.0.1@$DEAD NOKEY"]
  - name: nojournal.test
    file: $T_DIR/nojournal.test.zone
    provide-xfr: ["127.0.0.2 NOKEY"]
    ixfr-journal-size: 0
  - name: big.test
    file: $T_DIR/big.test.zone
    provide-xfr: ["127.0.0.0/8 NOKEY"]
  - name: fat.test
    file: $T_DIR/fat.test.zone
    provide-xfr: ["127.0.0.2 NOKEY", "127.0.0.1 $XFR_KEY"]
  - name: edge.test
    file: $T_DIR/edge.test.zone
    provide-xfr: ["127.0.0.2 NOKEY", "127.0.0.1 $XFR_KEY"]
  - name: mapped.test
    file: $T_DIR/mapped.test.zone
    provide-xfr: ["::ffff:127.0.0.0/104 NOKEY", "::ffff:127.0.0.1 $XFR_KEY"]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
alive() { check_eq "still answering ($1)" 192.0.2.1 "$(q "$PORT" +short ns1.out.test A)"; }
# xfr ARGS: dig's transfer output, records only (no comments)
xfr() { "$DIG" @127.0.0.1 -p "$PORT" +time=5 +tries=1 +nocmd +nostats "$@" 2>&1; }

# provide-xfr: 127.0.0.2 unsigned, 127.0.0.1 only with the key
out=$(xfr -b 127.0.0.2 out.test AXFR)
check_eq "AXFR: SOA first and last, every record" 6 "$(echo "$out" | grep -c 'IN')"
check_match "AXFR refused without the key" "Transfer failed" "$(xfr out.test AXFR)"
check_match "the refusal is logged" "AXFR out.test. from 127.0.0.1@[0-9]+ without TSIG: not allowed by provide-xfr: REFUSED" \
	"$(cat "$T_DIR/shoald.log")"
out=$(xfr -y "$KEY" out.test AXFR)
check_match "AXFR with the key: signed" "TSIG.*NOERROR" "$out"
check_eq "AXFR with the key: the records" 6 "$(echo "$out" | grep -v TSIG | grep -c 'IN')"
check_match "a wrong secret: BADSIG" "BADSIG" \
	"$(xfr -y "hmac-sha256:$XFR_KEY:$OTHER_SECRET" out.test AXFR)"
check_match "an unknown key: BADKEY" "BADKEY" \
	"$(xfr -y "hmac-sha256:$OTHER_KEY:$OTHER_SECRET" out.test AXFR)"
check_match "the TSIG failures are logged" "TSIG BADKEY with key $OTHER_KEY.: NOTAUTH" \
	"$(cat "$T_DIR/shoald.log")"
check_match "a name that is no zone apex: refused" "Transfer failed" \
	"$(xfr -b 127.0.0.2 www.out.test AXFR)"
check_match "a zone not served: refused" "Transfer failed" "$(xfr -b 127.0.0.2 example.org AXFR)"
alive "after refusals"

# a signed ordinary query gets a signed answer
out=$("$DIG" @127.0.0.1 -p "$PORT" +time=2 +tries=1 -y "$KEY" www.out.test A 2>&1)
check_match "a signed query is answered" "status: NOERROR" "$out"
check_match "... signed" "TSIG.*NOERROR" "$out"
check_eq "... and dig verified it" "" "$(echo "$out" | grep -i "couldn't verify\|failed")"

# two reloads: IXFR from 1 to 3 in one condensed changeset (RFC 1995 6)
for s in 2 3; do
	write_zone $s
	check_match "reload to serial $s" reloaded "$("$SHOALCTL" -s "$CTL" reload out.test)"
done
out=$(xfr -b 127.0.0.2 out.test IXFR=1 | grep 'IN')
check_eq "IXFR 1 to 3: SOA 3, SOA 1, www 1, SOA 3, v2, v3, www 3, SOA 3 (canonical order)" \
	"3 1 192.0.2.1 3 \"version-2\" \"version-3\" 192.0.2.3 3" \
	"$(echo "$out" | awk '$4 == "SOA" {printf "%s ", $7} $4 != "SOA" {printf "%s ", $5}' | sed 's/ $//')"
check_match "IXFR logged as changes" "IXFR out.test. to 127.0.0.2@[0-9]+: serial 3 started" \
	"$(cat "$T_DIR/shoald.log")"
out=$(xfr -b 127.0.0.2 out.test IXFR=3 | grep -c 'IN')
check_eq "IXFR when up to date: the SOA alone" 1 "$out"
out=$(xfr -b 127.0.0.2 out.test IXFR=7 | grep -c 'IN')
check_eq "IXFR from the future: our SOA alone" 1 "$out"
check_match "... and said" "IXFR out.test. from 127.0.0.2@[0-9]+: serial 7 is newer than ours \\(3\\)" \
	"$(cat "$T_DIR/shoald.log")"
# over UDP (+ignore: dig would go on over TCP after TC)
udp_ixfr() { "$DIG" @127.0.0.1 -p "$PORT" +notcp +ignore +time=2 +tries=1 "$@" 2>&1; }
out=$(udp_ixfr -b 127.0.0.2 out.test IXFR=3)
check_eq "IXFR over UDP, up to date: the SOA alone" 1 "$(echo "$out" | grep -c 'IN.*SOA')"
check_match "... over UDP" "\(UDP\)" "$out"
out=$(udp_ixfr -b 127.0.0.2 out.test IXFR=1)
check_eq "IXFR over UDP, older: no records (TC: ask over TCP)" 0 "$(echo "$out" | grep -c 'IN')"
check_match "... the header and question alone" "MSG SIZE  rcvd: 37" "$out"
# beyond the journal: the whole zone, AXFR-style
write_zone 2
sed 's/out.test/nojournal.test/' "$T_DIR/out.test.zone" >"$T_DIR/nojournal.test.zone"
check_match "reload nojournal.test" reloaded "$("$SHOALCTL" -s "$CTL" reload nojournal.test)"
out=$(xfr -b 127.0.0.2 nojournal.test IXFR=1 | grep 'IN')
check_eq "IXFR without history: the whole zone" 7 "$(echo "$out" | wc -l)"
alive "after the IXFRs"

check_match "a big zone in many messages" "XFR size: 20003 records \(messages [2-9]" \
	"$(xfr +stats -b 127.0.0.2 big.test AXFR)"

# one record over 16 KiB: a message of its own, up to 65535 octets (RFC 5936 2.2)
out=$(xfr +stats -b 127.0.0.2 fat.test AXFR)
check_eq "AXFR of a 40 KB record: SOA, NS, A, TXT, SOA" 5 "$(echo "$out" | grep -c 'IN')"
check_match "... the record whole" "^fat\.fat\.test\..*TXT[[:space:]]+(\"a{250}\" ?){160}$" "$out"
check_match "... in a message over 16 KiB" "XFR size: 5 records \(messages 2, bytes 4[0-9]{4}\)" "$out"
check_match "... and logged as done" "AXFR fat.test. to 127.0.0.2@[0-9]+: serial 1, 2 messages, 5 records" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "... not as cut short" "" "$(grep "fat.test.*cut short" "$T_DIR/shoald.log")"
out=$(xfr -y "$KEY" fat.test AXFR)
check_match "AXFR of a 40 KB record with TSIG: signed" "TSIG.*NOERROR" "$out"
check_eq "... every record, and dig verified each message" "5 0" \
	"$(echo "$out" | grep -v TSIG | grep -c 'IN') $(echo "$out" | grep -ci "couldn't verify\|failed")"
write_fat 2
check_match "reload fat.test to serial 2" reloaded "$("$SHOALCTL" -s "$CTL" reload fat.test)"
out=$(xfr -b 127.0.0.2 fat.test IXFR=1)
check_eq "IXFR adding a 40 KB record: SOA 2, SOA 1, SOA 2, TXT, SOA 2" "SOA SOA SOA TXT SOA" \
	"$(echo "$out" | awk '$3 == "IN" {printf "%s ", $4}' | sed 's/ $//')"
check_match "... the record whole" "^fat2\.fat\.test\..*TXT[[:space:]]+(\"a{250}\" ?){160}$" "$out"
out=$(udp_ixfr -b 127.0.0.2 fat.test IXFR=1)
check_eq "IXFR over UDP: no records (TC: ask over TCP)" 0 "$(echo "$out" | grep -c 'IN')"
check_match "... the header and question alone" "MSG SIZE  rcvd: 37" "$out"
check_match "AXFR of a 65450-octet record" "XFR size: 5 records \(messages 3, bytes 65[0-9]{3}\)" \
	"$(xfr +stats -b 127.0.0.2 edge.test AXFR)"
check_eq "... with TSIG: no room for the TSIG RR, the transfer stops" "" \
	"$(xfr -y "$KEY" edge.test AXFR | grep 'IN.*TXT')"
check_match "... said so in the log" "AXFR edge.test. to 127.0.0.1@[0-9]+ failed after 1 messages: a record does not fit a message of 65535 octets with the TSIG RR" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "... not blamed on the client" "" "$(grep "edge.test.*cut short" "$T_DIR/shoald.log")"
alive "after the big records"

# provide-xfr written as IPv4-mapped addresses: they hold IPv4 peers
out=$(xfr -b 127.0.0.2 mapped.test AXFR)
check_eq "AXFR allowed by ::ffff:127.0.0.0/104" 6 "$(echo "$out" | grep -c 'IN')"
check_match "AXFR allowed by ::ffff:127.0.0.1 with the key: signed" "TSIG.*NOERROR" \
	"$(xfr -y "$KEY" mapped.test AXFR)"
check_match "... the key from another address refused" "Transfer failed" \
	"$(xfr -b 127.0.0.2 -y "$KEY" mapped.test AXFR)"

# RFC 8945 5.3: a TSIG error answer bigger than 512 octets (key and algorithm
# names of 245 octets echoed) is sent truncated over UDP, whole over TCP
long_tsig() { perl "$SHOAL_SRCDIR/tests/xfr/long_tsig.pl" "$PORT" out.test 245 "$1" 2>&1; }
check_eq "an unknown long key over UDP without EDNS: TC, no TSIG RR" \
	"rcode 0 tc 1 ancount 0 arcount 0 tsig_error - octets 26" "$(long_tsig udp)"
check_eq "... over TCP: NOTAUTH, BADKEY" "rcode 9 tc 0 ancount 0 arcount 1 tsig_error 17 octets 542" \
	"$(long_tsig tcp)"
alive "after the long TSIG names"

# NOTIFY out to a secondary that never answers: sent notify-retry times
# (after 1 s, then 2 s more), then given up, and said
gave_up() { grep -q "NOTIFY out.test. serial 3 to 127.0.0.1@$DEAD: no answer after 2 tries" "$T_DIR/shoald.log"; }
if wait_until 20 gave_up; then pass "NOTIFY retried, then given up"; else fail "NOTIFY not given up"; fi
check_match "shoalctl notify: sent at once" "NOTIFY sent to 1 secondaries" \
	"$("$SHOALCTL" -s "$CTL" notify out.test 2>&1)"
check_match "shoalctl notify: a zone without a notify list" "big.test has no notify list" \
	"$("$SHOALCTL" -s "$CTL" notify big.test 2>&1)"
check_match "shoalctl notify: a zone not configured" "no zone example.org is configured" \
	"$("$SHOALCTL" -s "$CTL" notify example.org 2>&1)"
check_match "zone-status: the journal's depth" "^out.test. serial 3 .* journal 2 changes [0-9]+ octets from 1" \
	"$("$SHOALCTL" -s "$CTL" zone-status)"

stats=$("$SHOALCTL" -s "$CTL" stats json)
for c in sent unanswered; do
	check_match "stats: notify_out $c counted" "\"$c\": [1-9]" "$(echo "$stats" | sed -n '/"notify_out"/,$p')"
done
for c in requests refused axfr ixfr uptodate done messages bytes_out; do
	check_match "stats: xfr $c counted" "\"$c\": [1-9]" "$(echo "$stats" | sed -n '/"total"/,$p')"
done
alive "at the end"
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
