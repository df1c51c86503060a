#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# zone_reload_bad: shoald serves a zone; the file is replaced by one with
# untrusted data (an NS and a DNAME without a name, all 65,536 type numbers
# at one name, 201 types at one name, an RRset no TCP message can carry);
# each `shoalctl reload`
# fails with FILE:LINE in its reply and in the log, the old version keeps
# being answered, and the daemon lives. A good file after them loads (the
# reloads did run), and a DNAME with a target is answered with it.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONE=$T_DIR/bad.test.zone
HEAD='$ORIGIN bad.test.
$TTL 300
@    IN SOA ns1 hostmaster 1 3600 600 86400 300
@    IN NS  ns1
ns1  IN A   192.0.2.1'
# put TEXT: the zone file becomes HEAD and TEXT, whole (a reload never sees half a file)
put() {
	{ printf '%s\n' "$HEAD"; printf '%s' "$1"; } >"$ZONE.new"
	mv "$ZONE.new" "$ZONE"
}
put 'www  IN A   192.0.2.10
'
PORT=$(free_port) || exit 99
CTL=$T_DIR/ctl
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --control "$CTL" \
	--zone "bad.test=$ZONE" || exit 99
check_eq "first version served" 192.0.2.10 "$(q "$PORT" +short www.bad.test A)"

# bad NAME LINE: reload the file as it is now; it must fail at LINE, the old data stays
bad() {
	local out
	out=$("$SHOALCTL" -s "$CTL" reload bad.test 2>&1)
	check_eq "$1: reload exits 1" 1 $?
	check_match "$1: the reply names FILE:LINE" "$ZONE:$2: " "$out"
	check_match "$1: the log names FILE:LINE" "error: $ZONE:$2: " "$(cat "$T_DIR/shoald.log")"
	check_eq "$1: the old data is still served" 192.0.2.10 "$(q "$PORT" +short www.bad.test A)"
	check_eq "$1: over TCP too" 192.0.2.10 "$(q "$PORT" +tcp +short www.bad.test A)"
	if kill -0 "$SHOALD_PID" 2>/dev/null; then
		pass "$1: shoald is running"
	else
		fail "$1: shoald is gone"
	fi
}

put 'www  IN A   192.0.2.20
sub  IN NS  \# 0
x.sub IN TXT "the record after it"
'
bad "NS without a name" 7

put 'www  IN A   192.0.2.20
d    IN DNAME \# 0
e    IN TXT "the neighbour"
'
bad "DNAME without a target" 7

put "www  IN A   192.0.2.20
$(for t in $(seq 0 65535); do printf '@ IN TYPE%d \\# 0\n' "$t"; done)
"
bad "every type number at the apex" "[0-9]+"

put "www  IN A   192.0.2.20
$(for t in $(seq 1000 1200); do printf '@ IN TYPE%d \\# 0\n' "$t"; done)
"
bad "201 types at the apex" "[0-9]+"
check_match "201 types: too many" "bad.test.: more than 100 types at one name" \
	"$(cat "$T_DIR/shoald.log")"

put "www  IN A   192.0.2.20
$(for i in $(seq 0 4599); do printf 'big IN A 10.0.%d.%d\n' $((i / 256)) $((i % 256)); done)
"
bad "an RRset of 4600 A records" "[0-9]+"
check_match "4600 A records: too many" "big.bad.test.: more than 1000 A records" \
	"$(cat "$T_DIR/shoald.log")"

put 'www  IN A   192.0.2.30
d    IN DNAME target.example.
'
out=$("$SHOALCTL" -s "$CTL" reload bad.test 2>&1)
check_eq "a good file after them: reload exits 0" 0 $?
check_eq "and its data is served" 192.0.2.30 "$(q "$PORT" +short www.bad.test A)"
check_match "a name below the DNAME gets the CNAME to its target" \
	"^www.d.bad.test.[[:space:]]+300[[:space:]]+IN[[:space:]]+CNAME[[:space:]]+www.target.example.$" \
	"$(q "$PORT" +noall +answer www.d.bad.test A)"
stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0" 0 $?
done_testing
