#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_update: dynamic updates (RFC 2136) with nsupdate and knsupdate, over UDP and TCP:
# add, delete, replace; each prerequisite kind true and false; a wrong key; an ACME-style
# policy (_acme-challenge TXT by address) refusing everything else, whole; the bound on
# records per update; the zone file rewritten and reloaded to the same zone; 100 challenge
# records added and removed by 10 clients at once, each seen by dig right after its answer;
# updates and reloads of the zone at once, never half applied.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

command -v nsupdate >/dev/null && command -v knsupdate >/dev/null || {
	echo "SKIP: nsupdate and knsupdate (bind9-dnsutils, knot-dnsutils) are needed"
	exit 77
}
PORT=$(free_port) || exit 99
CTL="$T_DIR/shoald.ctl"
ctl() { "$SHOALCTL" -s "$CTL" "$@" 2>&1; }
cp "$EXAMPLES/example.com.zone" "$T_DIR/example.com.zone"
SECRET=$(printf 'dynamic update test secret, 32 o' | base64)
KEY="hmac-sha256:upd:$SECRET"
cat >"$T_DIR/shoald.conf" <<EOF
listen: [ 127.0.0.1@$PORT ]
threads: 2
control: $CTL
zonefile-sync: 0
keys:
  - { name: upd, algorithm: hmac-sha256, secret: "$SECRET" }
zones:
  - name: example.com
    file: $T_DIR/example.com.zone
    allow-update:
      - key: upd
      - address: 127.0.0.2
        names: ["_acme-challenge.*"]
        types: [TXT]
EOF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

# nu [NSUPDATE-ARGS...] < COMMANDS: send one update with nsupdate to the server; prints
# NOERROR or the rcode it failed with
nu() {
	local out
	out=$({
		printf 'server 127.0.0.1 %s\nzone example.com\n' "$PORT"
		cat
		printf 'send\n'
	} | timeout 20 nsupdate "$@" 2>&1)
	case $out in
	*"update failed: "*) sed -n 's/.*update failed: \([A-Z]*\).*/\1/p' <<<"$out" | head -1 ;;
	"") echo NOERROR ;;
	*) echo "OTHER: $out" ;;
	esac
}
# knu COMMANDS: the same with knsupdate (key upd), over UDP
knu() {
	local out
	out=$({
		printf 'server 127.0.0.1 %s\nzone example.com.\n' "$PORT"
		cat
		printf 'send\nanswer\n'
	} | timeout 20 knsupdate -y "$KEY" 2>&1)
	sed -n 's/.*status: \([A-Z]*\).*/\1/p' <<<"$out" | head -1
}
a() { q "$PORT" +short "$@"; }
# records: what the zone serves, but its SOA (whose serial updates move), sorted
records() { ctl zone-read example.com | grep -v '	SOA	' | sort; }
serial() { a example.com SOA | awk '{ print $3 }'; }

START=$(records)
S0=$(serial)

# ---- add, delete, replace ----
check_eq "add over UDP: NOERROR" NOERROR "$(nu -y "$KEY" <<<'update add new.example.com 300 A 192.0.2.99')"
check_eq "the record is served at once" 192.0.2.99 "$(a new.example.com A)"
check_eq "the serial moved by one" $((S0 + 1)) "$(serial)"
check_eq "add over TCP: NOERROR" NOERROR \
	"$(nu -v -y "$KEY" <<<'update add new.example.com 300 A 192.0.2.98')"
check_eq "both records served" "192.0.2.98 192.0.2.99" "$(a new.example.com A | sort | xargs)"
check_eq "delete one RR: NOERROR" NOERROR \
	"$(nu -y "$KEY" <<<'update delete new.example.com A 192.0.2.99')"
check_eq "the other stays" 192.0.2.98 "$(a new.example.com A)"
check_eq "replace an RRset (delete, add): NOERROR" NOERROR "$(nu -y "$KEY" <<EOF
update delete www.example.com A
update add www.example.com 600 A 192.0.2.82
EOF
)"
check_eq "www replaced (both its A records)" 192.0.2.82 "$(a www.example.com A)"
check_eq "knsupdate add: NOERROR" NOERROR "$(knu <<<'update add k.example.com. 60 TXT "from knsupdate"')"
check_eq "knsupdate's record served" '"from knsupdate"' "$(a k.example.com TXT)"
check_eq "knsupdate delete name: NOERROR" NOERROR "$(knu <<<'update delete k.example.com.')"
check_eq "the name is gone" NXDOMAIN \
	"$(q "$PORT" k.example.com TXT | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"

# ---- prerequisites (RFC 2136 2.4): each kind true, then false ----
# pre NAME PREREQ RCODE: an update with PREREQ adding NAME.example.com TXT: RCODE, and the
# record there exactly when it passed
pre() {
	local got want_txt=""
	got=$(nu -y "$KEY" <<<"prereq $2
update add $1.example.com 60 TXT ok")
	check_eq "prereq $2: $3" "$3" "$got"
	[ "$3" = NOERROR ] && want_txt='"ok"'
	check_eq "prereq $2: added exactly when it held" "$want_txt" "$(a "$1".example.com TXT)"
}
pre p1 "yxdomain www.example.com" NOERROR
pre p2 "yxdomain nothere.example.com" NXDOMAIN
pre p3 "nxdomain nothere.example.com" NOERROR
pre p4 "nxdomain www.example.com" YXDOMAIN
pre p5 "yxrrset www.example.com A" NOERROR
pre p6 "yxrrset www.example.com MX" NXRRSET
pre p7 "nxrrset www.example.com MX" NOERROR
pre p8 "nxrrset www.example.com A" YXRRSET
pre p9 "yxrrset www.example.com A 192.0.2.82" NOERROR
pre p10 "yxrrset www.example.com A 192.0.2.80" NXRRSET

# ---- who may ----
check_eq "a wrong key: NOTAUTH" NOTAUTH \
	"$(nu -y "hmac-sha256:upd:$(printf 'not the secret at all, 32 octets' | base64)" \
		<<<'update add w.example.com 60 A 192.0.2.1')"
check_match "the refusal is logged with the TSIG error" "UPDATE example.com. from .*BADSIG" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "unsigned from an address with no rule: REFUSED" REFUSED \
	"$(nu <<<'update add w.example.com 60 A 192.0.2.1')"
# nsupdate checks host names itself (check-names): off, to let the server refuse
ACME='local 127.0.0.2
check-names off'
check_eq "ACME rule: challenge TXT from its address: NOERROR" NOERROR \
	"$(nu <<<"$ACME
update add _acme-challenge.example.com 60 TXT token-1")"
check_eq "ACME rule: below a name too" NOERROR \
	"$(nu <<<"$ACME
update add _acme-challenge.www.example.com 60 TXT token-2")"
check_eq "ACME rule: another type REFUSED" REFUSED \
	"$(nu <<<"$ACME
update add _acme-challenge.example.com 60 A 192.0.2.1")"
check_eq "ACME rule: another name REFUSED" REFUSED \
	"$(nu <<<"$ACME
update add www.example.com 60 TXT nope")"
check_eq "ACME rule: one record outside refuses the whole" REFUSED "$(nu <<<"$ACME
update add _acme-challenge.example.com 60 TXT token-3
update delete www.example.com A")"
check_eq "nothing of the refused update applied" '"token-1"' \
	"$(a _acme-challenge.example.com TXT)"
check_eq "www untouched" 192.0.2.82 "$(a www.example.com A)"
check_match "the refusal is logged" "update from 127.0.0.2@[0-9]* without TSIG: .*not allowed" \
	"$(cat "$T_DIR/shoald.log")"

# ---- bounds: records per update ----
many() { seq 1 "$1" | sed 's/.*/update add many.example.com 60 TXT "&"/'; }
check_eq "1000 records in one update: NOERROR" NOERROR "$(many 1000 | nu -v -y "$KEY")"
check_eq "all 1000 served" 1000 "$(q "$PORT" +tcp +short many.example.com TXT | grep -c .)"
check_eq "1001 records in one update: REFUSED" REFUSED \
	"$(many 1001 | sed 's/many\./many2./' | nu -v -y "$KEY")"
check_eq "nothing of it applied" "" "$(a many2.example.com TXT)"
check_eq "cleanup: NOERROR" NOERROR "$(nu -y "$KEY" <<<'update delete many.example.com')"

# ---- the zone file: rewritten, and read back to the same zone ----
wait_until 10 grep -q "serial $(serial) written to" "$T_DIR/shoald.log"
check_match "the zone file was rewritten" "written by shoald after dynamic updates" \
	"$(head -1 "$T_DIR/example.com.zone")"
BEFORE=$(ctl zone-read example.com)
check_eq "reload of the written file: exit 0" 0 "$(ctl reload example.com >/dev/null; echo $?)"
check_eq "it reloads to the same zone" "$BEFORE" "$(ctl zone-read example.com)"

# ---- ACME-style: 10 clients at once, 10 challenges each, added then removed ----
# client N: for each challenge, add it, check dig sees it at once, then remove it
client() {
	local i name
	for i in $(seq 1 10); do
		name="_acme-challenge.c$1-$i.example.com"
		[ "$(nu <<<"$ACME
update add $name 60 TXT tok-$1-$i")" = NOERROR ] || echo "add $name failed"
		[ "$(a "$name" TXT)" = "\"tok-$1-$i\"" ] || echo "$name not seen after its answer"
		[ "$(nu <<<"$ACME
update delete $name TXT")" = NOERROR ] || echo "delete $name failed"
		[ -z "$(a "$name" TXT)" ] || echo "$name still seen after its removal"
	done
}
CLIENTS=""
for c in $(seq 1 10); do
	client "$c" >"$T_DIR/client$c.out" 2>&1 &
	CLIENTS="$CLIENTS $!"
done
for c in $CLIENTS; do wait_within "$c" 120; done
check_eq "100 challenges added, seen, removed by 10 clients" "" "$(cat "$T_DIR"/client*.out)"
check_eq "ACME removes its first two: NOERROR" NOERROR "$(nu <<<"$ACME
update delete _acme-challenge.example.com TXT
update delete _acme-challenge.www.example.com TXT")"

# ---- back to the start, but for the records changed on purpose ----
check_eq "restore www, remove the rest: NOERROR" NOERROR "$(nu -y "$KEY" <<EOF
update delete www.example.com A
update add www.example.com 3600 A 192.0.2.80
update add www.example.com 3600 A 192.0.2.81
update delete new.example.com
$(for p in 1 3 5 7 9; do echo "update delete p$p.example.com"; done)
EOF
)"
check_eq "the zone's records are back to the start" "$START" "$(records)"

# ---- an update and a reload of the zone at once: one or the other, never half ----
half=0
for i in $(seq 1 10); do
	ctl reload example.com >/dev/null &
	reloading=$!
	nu -y "$KEY" >/dev/null <<EOF
update add r$i.example.com 60 A 192.0.2.1
update add r$i.example.com 60 TXT both
EOF
	wait_within "$reloading" 60
	got=$(q "$PORT" +short r$i.example.com A; q "$PORT" +short r$i.example.com TXT)
	case $(echo "$got" | grep -c .) in 0 | 2) ;; *) half=$((half + 1)) ;; esac
done
check_eq "10 updates beside reloads: none half applied" 0 "$half"
check_eq "the server still answers" NOERROR \
	"$(q "$PORT" www.example.com A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')"

stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
