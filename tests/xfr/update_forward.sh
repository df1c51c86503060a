#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/update_forward: a Shoal secondary with update-forward: yes forwards the updates its
# own allow-update lets in to its Shoal primary (RFC 2136 6), signed with the zone's key for
# that primary; the primary's answer goes back with the client's ID and signature; the
# change is served by the primary, then by the secondary after NOTIFY and IXFR. An update
# its rule does not allow is refused by the secondary, not forwarded; a primary that does not
# answer (stopped) gives SERVFAIL within the client's patience; update-forward: no (the
# default) keeps NOTAUTH.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

command -v nsupdate >/dev/null || { echo "SKIP: nsupdate (bind9-dnsutils) is needed"; exit 77; }
PPORT=$(free_port) || exit 99
SPORT=$(free_port) || exit 99
mkdir -p "$T_DIR/p" "$T_DIR/s"
cp "$EXAMPLES/example.com.zone" "$T_DIR/p/example.com.zone"
sed 's/example\.com/example.net/g' "$EXAMPLES/example.com.zone" >"$T_DIR/p/example.net.zone"
FWD=$(printf 'forwarding key of the secondary..' | base64)
CLI=$(printf 'the client key of the acme runner' | base64)
cat >"$T_DIR/p.conf" <<CONF
listen: 127.0.0.1@$PPORT
threads: 2
keys:
  - { name: fwd, algorithm: hmac-sha256, secret: "$FWD" }
zones:
  - name: example.com
    file: $T_DIR/p/example.com.zone
    provide-xfr: ["127.0.0.1 fwd"]
    notify: ["127.0.0.1@$SPORT fwd"]
    allow-update:
      - key: fwd
  - name: example.net
    file: $T_DIR/p/example.net.zone
    provide-xfr: ["127.0.0.1 fwd"]
    allow-update:
      - key: fwd
CONF
cat >"$T_DIR/s.conf" <<CONF
listen: 127.0.0.1@$SPORT
threads: 2
min-refresh-time: 1
keys:
  - { name: fwd, algorithm: hmac-sha256, secret: "$FWD" }
  - { name: cli, algorithm: hmac-sha256, secret: "$CLI" }
zones:
  - name: example.com
    file: $T_DIR/s/example.com.zone
    primaries: ["127.0.0.1@$PPORT fwd"]
    update-forward: yes
    allow-update:
      - key: cli
        names: ["_acme-challenge.*"]
        types: [TXT]
  - name: example.net
    file: $T_DIR/s/example.net.zone
    primaries: ["127.0.0.1@$PPORT fwd"]
    allow-update:
      - key: cli
CONF
start_shoald "$PPORT" -c "$T_DIR/p.conf" || exit 99
P_PID=$SHOALD_PID
start_shoald "$SPORT" -c "$T_DIR/s.conf" || exit 99
S_PID=$SHOALD_PID
serial() { q "$1" +short "${2:-example.com}" SOA | awk '{ print $3 }'; }
loaded() { [ "$(serial "$SPORT" "$1")" = "$(serial "$PPORT" "$1")" ]; }
wait_until 60 loaded example.com && wait_until 60 loaded example.net
check_eq "the secondary has both zones" 2026120301 "$(serial "$SPORT" example.net)"

# nu ZONE LINE...: one update (nsupdate's LINEs: update add..., prereq...) signed by cli, over TCP, to the secondary; NOERROR or the
# rcode it failed with
nu() {
	local zone=$1 out
	shift
	out=$({
		printf 'server 127.0.0.1 %s\nzone %s\n' "$SPORT" "$zone"
		printf '%s\n' "$@"
		printf 'send\n'
	} | timeout 60 nsupdate -v -t 30 -y "hmac-sha256:cli:$CLI" 2>&1)
	case $out in
	*"update failed: "*) sed -n 's/.*update failed: \([A-Z]*\).*/\1/p' <<<"$out" | head -1 ;;
	"") echo NOERROR ;;
	*) echo "$out" ;;
	esac
}
check_eq "an ACME record sent to the secondary is NOERROR (the answer verified by nsupdate)" \
	NOERROR "$(nu example.com 'update add _acme-challenge.www.example.com 60 TXT "token1"')"
check_eq "the primary serves it" '"token1"' \
	"$(q "$PPORT" +short _acme-challenge.www.example.com TXT)"
check_eq "the primary's serial moved" 2026120302 "$(serial "$PPORT")"
has_token() { [ "$(q "$SPORT" +short _acme-challenge.www.example.com TXT)" = '"token1"' ]; }
wait_until 60 has_token
check_eq "the secondary serves it after the primary's NOTIFY and its transfer" '"token1"' \
	"$(q "$SPORT" +short _acme-challenge.www.example.com TXT)"
check_match "by IXFR" "zone example.com.: serial 2026120302 from .* by IXFR" \
	"$(cat "$T_DIR/shoald.log")"
check_match "the forward is logged" "update from 127.0.0.1.* forwarded to a primary: NOERROR" \
	"$(cat "$T_DIR/shoald.log")"
check_eq "a record outside the secondary's rule is REFUSED there" REFUSED \
	"$(nu example.com 'update add www2.example.com 60 A 192.0.2.9')"
check_eq "and never reaches the primary" "" "$(q "$PPORT" +short www2.example.com A)"
check_eq "the primary's prerequisite check is relayed (NXRRSET)" NXRRSET \
	"$(nu example.com 'prereq yxrrset _acme-challenge.none.example.com TXT' \
		'update add _acme-challenge.y.example.com 60 TXT "t"')"
check_eq "update-forward no (example.net): NOTAUTH" NOTAUTH \
	"$(nu example.net 'update add x.example.net 60 A 192.0.2.9')"

# the primary stopped (SIGSTOP): its socket takes the update, nothing answers
kill -STOP "$P_PID"
check_eq "a primary that does not answer: SERVFAIL, before the client's 30 s" SERVFAIL \
	"$(nu example.com 'update add _acme-challenge.z.example.com 60 TXT "t"')"
kill -CONT "$P_PID"
check_match "logged" "update from 127.0.0.1.*: not forwarded: .*: SERVFAIL" "$(cat "$T_DIR/shoald.log")"
stop_within "$S_PID"
check_eq "the secondary stops" 0 $?
stop_within "$P_PID"
check_eq "the primary stops" 0 $?
done_testing
