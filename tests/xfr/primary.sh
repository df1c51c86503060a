#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/primary: Shoal as the primary of Knot DNS, NSD and BIND secondaries,
# each on loopback with its own configuration. Each transfers three zones:
# plain.test without TSIG, tsig.test signed with xfr-key, wrong.test with
# a key Shoal does not know (refused: BADKEY). Then the zones change and
# `shoalctl reload`: Shoal's NOTIFY brings every secondary to the new
# serial by IXFR (the zones' SOA refresh is an hour, so only the NOTIFY
# can), shown by the secondaries' own logs and Shoal's; every name then
# gets the same answers from each secondary as from Shoal. A peer that is
# not installed is left out; with none, the test is skipped.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

PEERS=""
[ -n "$KNOTD" ] && PEERS="$PEERS knot"
[ -n "$NSD" ] && PEERS="$PEERS nsd"
[ -n "$NAMED" ] && PEERS="$PEERS bind"
if [ -z "$PEERS" ]; then
	echo "SKIP: none of knotd, nsd, named is installed (Debian packages knot, nsd, bind9)"
	exit 77
fi

# write_zone NAME SERIAL: version 1, or version 2 with www changed, new added, old gone.
write_zone() {
	local f=$T_DIR/$1.zone
	{
		cat <<-ZONE
		\$ORIGIN $1.
		\$TTL 300
		@      IN SOA ns1 hostmaster $2 3600 600 86400 60
		@      IN NS  ns1
		@      IN NS  ns2.example.net.
		@      IN MX  10 mail
		@      IN TXT "v=spf1 -all"
		ns1    IN A   192.0.2.1
		mail   IN A   192.0.2.25
		mail   IN AAAA 2001:db8::25
		alias  IN CNAME www
		_sip._tcp IN SRV 10 60 5060 mail
		*.wild IN TXT "wildcard"
		sub    IN NS  ns.sub
		ns.sub IN A   192.0.2.53
		ZONE
		if [ "$2" = 1 ]; then
			printf 'www IN A 192.0.2.80\nold IN A 192.0.2.99\n'
		else
			printf 'www IN A 192.0.2.81\nnew IN AAAA 2001:db8::1\n'
		fi
	} >"$f.new"
	mv "$f.new" "$f"
}

ZONES="plain.test tsig.test wrong.test"
for z in $ZONES; do write_zone "$z" 1; done
PORT=$(free_port) || exit 99
for p in $PEERS; do
	eval "PORT_$p=\$(free_port)" || exit 99
done
targets() { # targets KEY: the notify list entries of every peer
	local p out=""
	for p in $PEERS; do
		eval "out=\"\$out, \\\"127.0.0.1@\$PORT_$p $1\\\"\""
	done
	echo "[${out#, }]"
}
CTL=$T_DIR/ctl
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 2
control: $CTL
keys:
  - name: $XFR_KEY
    algorithm: hmac-sha256
    secret: "$XFR_SECRET"
zones:
  - name: plain.test
    file: $T_DIR/plain.test.zone
    provide-xfr: ["127.0.0.1 NOKEY"]
    notify: $(targets NOKEY)
  - name: tsig.test
    file: $T_DIR/tsig.test.zone
    provide-xfr: ["127.0.0.1 $XFR_KEY"]
    notify: $(targets $XFR_KEY)
  - name: wrong.test
    file: $T_DIR/wrong.test.zone
    provide-xfr: ["127.0.0.1 $XFR_KEY"]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

SEC_ZONES="plain.test:NOKEY tsig.test:$XFR_KEY wrong.test:$OTHER_KEY"
for p in $PEERS; do
	eval "port=\$PORT_$p"
	"${p}_secondary" "$T_DIR/$p" "$port" "$PORT"
	T_PIDS="$T_PIDS $PEER_PID"
	eval "PID_$p=$PEER_PID"
done

# The first transfers: AXFR of the two zones each may have.
for p in $PEERS; do
	eval "port=\$PORT_$p"
	for z in plain.test tsig.test; do
		if wait_until 30 serial_is "$port" "$z" 1; then
			pass "$p: $z transferred (serial 1)"
		else
			fail "$p: $z not transferred; its log:"
			tail -20 "$T_DIR/$p/log"
		fi
	done
done
# The wrong key is refused, and said so: BADKEY in Shoal's log, and the zone not served.
for p in $PEERS; do
	eval "port=\$PORT_$p"
	check_eq "$p: wrong.test not served (wrong key)" "" "$(peer_serial "$port" wrong.test)"
done
check_match "Shoal logs the wrong key" "wrong.test.* TSIG BADKEY with key $OTHER_KEY.*NOTAUTH" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "Shoal answers throughout" 1 "$(peer_serial "$PORT" plain.test)"

# The change: NOTIFY, then IXFR.
lines_before=$(wc -l <"$T_DIR/shoald.log")
for z in $ZONES; do write_zone "$z" 2; done
start=$(date +%s.%N)
check_match "shoalctl reload" "reloaded" "$("$SHOALCTL" -s "$CTL" reload 2>&1)"
# every secondary watched at once, so each time is its own (a generous bound:
# the NOTIFY takes a second or so; the SOA refresh would take an hour)
for p in $PEERS; do
	eval "port=\$PORT_$p"
	for z in plain.test tsig.test; do
		(wait_until 20 serial_is "$port" "$z" 2 &&
			since "$start" >"$T_DIR/$p.$z.took") &
		watchers="${watchers:-} $!"
	done
done
for w in $watchers; do wait "$w"; done
for p in $PEERS; do
	for z in plain.test tsig.test; do
		if [ -s "$T_DIR/$p.$z.took" ]; then
			pass "$p: $z at serial 2 after $(cat "$T_DIR/$p.$z.took") s"
		else
			fail "$p: $z not at serial 2; its log:"
			tail -20 "$T_DIR/$p/log"
		fi
	done
done
new_log=$(tail -n +$((lines_before + 1)) "$T_DIR/shoald.log")
check_match "Shoal notified the secondaries" "NOTIFY plain.test. serial 2 to 127.0.0.1@[0-9]+: answered" \
	"$new_log"
n_ixfr=$(echo "$new_log" | grep -cE "IXFR (plain|tsig).test. to 127.0.0.1@[0-9]+: serial 2 started$")
check_eq "Shoal sent each secondary an IXFR of each zone" $((2 * $(echo $PEERS | wc -w))) "$n_ixfr"
check_eq "no whole zone went out for the change" 0 \
	"$(echo "$new_log" | grep -c "serial 2 (whole zone) started")"
# The secondaries say so too: Knot names it; BIND asked IXFR and took 8
# records (the AXFR had 16); NSD does not name it, but took fewer octets.
for p in $PEERS; do
	log=$(cat "$T_DIR/$p/log")
	case $p in
	knot)
		check_match "knot logs the incoming IXFR" \
			"\[tsig.test.\] IXFR, incoming, remote 127.0.0.1@$PORT.*finished" "$log"
		;;
	bind)
		check_match "bind requested an IXFR" "tsig.test/IN: requesting IXFR" "$log"
		check_match "bind took the changes only" \
			"'tsig.test/IN'.*Transfer completed: 1 messages, 8 records.*serial 2" "$log"
		;;
	nsd)
		size() { echo "$log" | sed -n "s/.*zone tsig.test. received update to serial $1 .* of \([0-9]*\) bytes.*/\1/p"; }
		s1=$(size 1) s2=$(size 2)
		if [ -n "$s1" ] && [ -n "$s2" ] && [ "$s2" -lt "$s1" ]; then
			pass "nsd took the changes only ($s2 octets, the zone $s1)"
		else
			fail "nsd: serial 2 came in [$s2] octets, the zone in [$s1]"
		fi
		;;
	esac
done

# Every name, the same answers as from Shoal (one dig per zone and server:
# a dig each would take most of the test's time).
NAMES="@:SOA @:NS @:MX @:TXT ns1:A mail:A mail:AAAA alias:A www:A new:AAAA old:A _sip._tcp:SRV
 x.wild:TXT sub:NS ns.sub:A"
for p in $PEERS; do
	eval "port=\$PORT_$p"
	bad=0
	for z in plain.test tsig.test; do
		set --
		for nt in $NAMES; do
			n=${nt%%:*} t=${nt#*:}
			[ "$n" = @ ] && set -- "$@" "$z" "$t" || set -- "$@" "$n.$z" "$t"
		done
		a=$(answers "$PORT" "$@") b=$(answers "$port" "$@")
		if [ "$a" != "$b" ]; then
			bad=$((bad + 1))
			diff <(echo "$a") <(echo "$b") | sed "s/^/  $p $z: /"
		fi
	done
	check_eq "$p answers every name as Shoal does" 0 "$bad"
done

stats=$("$SHOALCTL" -s "$CTL" stats json)
check_match "stats count the IXFRs" "\"ixfr\": [1-9]" "$stats"
check_match "stats count the refusals" "\"refused\": [1-9]" "$stats"
check_eq "Shoal still answers" 2 "$(peer_serial "$PORT" plain.test)"
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
