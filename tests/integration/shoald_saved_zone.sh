#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_saved_zone: a secondary saves what it transfers as a file its next start reads. One
# shoald is the primary of odd.test: owners with octets Knot's zone scanner reads only
# escaped (a,b+c=d, \000, a blank), and records of types it knows only in RFC 3597's form
# (GPOS, HIP, ISDN, NSAP, NULL, PX, WKS, X25). A second shoald, started under umask 027,
# transfers the zone and saves it: the file loads (shoal-checkzone, both readers) and is
# made 0640, as the umask says. With the primary stopped, the secondary restarted answers
# every name as the primary did, from the saved file.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

mkdir -p "$T_DIR/pri" "$T_DIR/sec"
chmod 755 "$T_DIR" "$T_DIR/pri" "$T_DIR/sec"
cat >"$T_DIR/pri/odd.test.zone" <<'ZONEFILE'
$ORIGIN odd.test.
$TTL 300
@              IN SOA  ns1 hostmaster 1 3600 600 86400 300
@              IN NS   ns1
ns1            IN A    192.0.2.1
a\,b\+c\=d     IN A    192.0.2.2
\000\255\032x  IN TXT  "nul, 255, blank"
q\!\#\%\&\'\:  IN A    192.0.2.3
\<\>\?\[\]\^\` IN A    192.0.2.4
\{\|\}\~.\@\$  IN A    192.0.2.5
gpos           IN TYPE27 \# 16 052d33322e360531392e35380331302e
hip            IN TYPE55 \# 16 04020003484954214b45590372767300
isdn           IN TYPE20 \# 20 0f31353038363230323830303332313703303034
nsap           IN TYPE22 \# 20 47000580005a0000000001e133ffffff00016100
null           IN TYPE10 \# 3 010203
px             IN TYPE26 \# 23 000a036e6574026974000450524d44036e657402697400
wks            IN TYPE11 \# 9 c00002010600000040
x25            IN TYPE19 \# 13 0c333131303631373030393536
ZONEFILE
# every name and type of the zone, for dig
QUESTIONS="odd.test SOA odd.test NS ns1.odd.test A a\\,b\\+c\\=d.odd.test A
\\000\\255\\032x.odd.test TXT q\\!\\#\\%\\&\\'\\:.odd.test A \\<\\>\\?\\[\\]\\^\\\`.odd.test A
\\{\\|\\}\\~.\\@\\$.odd.test A gpos.odd.test TYPE27 hip.odd.test TYPE55
isdn.odd.test TYPE20 nsap.odd.test TYPE22 null.odd.test TYPE10 px.odd.test TYPE26
wks.odd.test TYPE11 x25.odd.test TYPE19"
# answers PORT: the answer sections to QUESTIONS, sorted, TTLs and all
answers() {
	# shellcheck disable=SC2086
	q "$1" +noall +answer +nottlunits $QUESTIONS 2>&1 | sort
}

PPORT=$(free_port) || exit 99
PORT=$(free_port) || exit 99
cat >"$T_DIR/pri/shoald.conf" <<CONF
listen: 127.0.0.1@$PPORT
threads: 1
zones:
  - name: odd.test
    file: $T_DIR/pri/odd.test.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
CONF
cat >"$T_DIR/sec/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
zones:
  - name: odd.test
    file: $T_DIR/sec/odd.test.zone
    primaries: ["127.0.0.1@$PPORT NOKEY"]
CONF
"$SHOALD" -c "$T_DIR/pri/shoald.conf" >"$T_DIR/pri/log" 2>&1 &
PRI_PID=$!
T_PIDS="$T_PIDS $PRI_PID"
wait_answering 127.0.0.1 "$PPORT" || { cat "$T_DIR/pri/log"; exit 99; }
primary=$(answers "$PPORT")
check_eq "the primary answers every name" 16 "$(printf '%s\n' "$primary" | grep -c .)"

# The secondary transfers and saves, under umask 027.
umask_was=$(umask)
umask 027
start_shoald "$PORT" -c "$T_DIR/sec/shoald.conf" || exit 99
umask "$umask_was"
saved() { grep -q 'x25' "$T_DIR/sec/odd.test.zone" 2>/dev/null; }
if wait_until 30 saved; then pass "the secondary saved the zone"
else fail "the secondary saved the zone: $(cat "$T_DIR/shoald.log")"; fi
check_eq "it answers as the primary" "$primary" "$(answers "$PORT")"
for reader in zscanner ldns; do
	out=$("$SHOAL_BUILDDIR/tools/shoal-checkzone" -R $reader odd.test "$T_DIR/sec/odd.test.zone" 2>&1)
	check_eq "the saved file loads ($reader)" 0 $?
	check_match "... with every record" "loaded, serial 1, 16 records" "$out"
done
check_eq "the saved file is 0640, as umask 027 says" 640 "$(stat -c %a "$T_DIR/sec/odd.test.zone")"
check_eq "no temporary file is left" "odd.test.zone" "$(ls "$T_DIR/sec" | grep odd.test)"

# The primary down, the secondary restarted: it answers from the saved file.
stop_within "$SHOALD_PID"
check_eq "the secondary stops cleanly" 0 $?
stop_within "$PRI_PID"
start_shoald "$PORT" -c "$T_DIR/sec/shoald.conf" || exit 99
check_eq "restarted, the secondary answers as the primary did" "$primary" "$(answers "$PORT")"
check_eq "nothing failed to save or load" "" \
	"$(grep -E 'cannot save|error' "$T_DIR/shoald.log")"
stop_within "$SHOALD_PID"
check_eq "the secondary stops cleanly" 0 $?
done_testing
