#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_cookies: DNS cookies (RFC 7873, server cookies as RFC 9018 makes
# them) against the real daemon with dig. A client cookie gets a server
# cookie back; that cookie is valid from the same address and not from
# another; BADCOOKIE comes only with cookie-require and only over UDP; a
# malformed COOKIE option gets FORMERR; a cookie made under a previous
# secret stays valid while that secret is the staging one (after
# shoalctl cookie-rotate, or from the configuration) and not after; servers
# with the same secret accept each other's cookies.
. "${SHOAL_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

ZONE="example.com=$EXAMPLES/example.com.zone"
CLIENT=0102030405060708
SECRET1=000102030405060708090a0b0c0d0e0f
SECRET2=f0e0d0c0b0a090807060504030201000

# ask SRC COOKIE [DIG-ARGS]: "STATUS COOKIE-HEX" of dig's answer from SRC
ask() {
	local src=$1 cookie=$2
	shift 2
	q "$port" -b "$src" +nobadcookie +cookie="$cookie" "$@" www.example.com A |
		sed -n -e 's/.*status: \([A-Z]*\),.*/\1/p' -e 's/^; COOKIE: \([0-9a-f]*\).*/\1/p' |
		tr '\n' ' ' | sed 's/ $//'
}
stat() {
	"$SHOALCTL" -s "$T_DIR/ctl" stats json | sed -n "s/^ \"total\": .*\"$1\": \\([0-9]*\\).*/\\1/p"
}
# conf FILE SECRET [STAGING]: a configuration with these cookie secrets
conf() {
	{
		echo "cookie-secret: $2"
		[ -n "${3:-}" ] && echo "cookie-secret-staging: $3"
		echo "cookie-require: yes"
	} >"$1"
}

# count NAME COMMAND...: run COMMAND (its output kept for `last`) and print
# by how much the counter NAME grew meanwhile
count() {
	local name=$1 before
	shift
	before=$(stat "$name")
	"$@" >"$T_DIR/last"
	echo $(($(stat "$name") - before))
}
last() { cat "$T_DIR/last"; }

port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--control "$T_DIR/ctl" || exit 1

# 1. A client cookie gets a server cookie: 8 octets of client cookie and
# 16 of server cookie (RFC 9018 4: version 1, reserved, time, hash), within
# the 16 to 40 octets RFC 7873 4 allows.
check_eq "cookie_client counts a client cookie alone" 1 "$(count cookie_client ask 127.0.0.1 $CLIENT)"
check_match "which gets NOERROR and a cookie of 24 octets" "^NOERROR ${CLIENT}01[0-9a-f]{30}$" "$(last)"
cookie=$(last | cut -d" " -f2)

# 2. Replayed from the same address it is valid; from another it is not,
# and is answered in full with a fresh cookie for that address (RFC 7873
# 5.2.3: without cookie-require).
check_eq "cookie_valid counts the cookie replayed" 1 "$(count cookie_valid ask 127.0.0.1 "$cookie")"
check_match "from the same address: NOERROR, a cookie" "^NOERROR ${CLIENT}01[0-9a-f]{30}$" "$(last)"
check_eq "cookie_invalid counts it replayed from another address" 1 \
	"$(count cookie_invalid ask 127.0.0.2 "$cookie")"
check_match "which is answered with a fresh cookie" "^NOERROR ${CLIENT}01[0-9a-f]{30}$" "$(last)"
check_eq "the fresh cookie differs" 1 "$([ "$(last | cut -d" " -f2)" != "$cookie" ] && echo 1)"
check_eq "and is valid from that address" 1 "$(count cookie_valid ask 127.0.0.2 "$(last | cut -d" " -f2)")"

# 3. Malformed COOKIE options get FORMERR (RFC 7873 5.2.2): a client cookie
# of other than 8 octets, a server cookie of fewer than 8 or more than 32
# (dig sends no more than 40 octets: 41 goes by rrl_flood.pl).
for len in 7 9 15; do
	hex=$(printf '%0*d' $((len * 2)) 0)
	check_match "a COOKIE option of $len octets gets FORMERR" '^FORMERR' "$(ask 127.0.0.1 "$hex")"
done
out=$(perl "$SHOAL_SRCDIR/tests/integration/rrl_flood.pl" "$port" www.example.com 1 0 127.0.0.1 \
	"$(printf '%082d' 0)")
check_match "a COOKIE option of 41 octets gets FORMERR" ' rcode 1 ' "$out"
check_match "40 octets are well formed (a server cookie of 32, not valid)" '^NOERROR' \
	"$(ask 127.0.0.1 "$(printf '%080d' 0)")"
check_match "a query without a cookie is answered" 'status: NOERROR' \
	"$(q "$port" +nocookie www.example.com A)"
stop_pid "$SHOALD_PID"

# With cookie-require: BADCOOKIE over UDP to a client cookie without a
# valid server cookie, with a cookie to retry with; over TCP, and without
# a COOKIE option, the usual answer.
port=$(free_port)
start_shoald "$port" --listen "127.0.0.1@$port" --threads 2 --zone "$ZONE" \
	--cookie-require yes --control "$T_DIR/ctl" || exit 1
r=$(ask 127.0.0.1 $CLIENT)
check_match "cookie-require: a client cookie alone gets BADCOOKIE and a cookie" \
	"^BADCOOKIE ${CLIENT}01[0-9a-f]{30}$" "$r"
cookie=${r#* }
check_match "which is then valid" '^NOERROR ' "$(ask 127.0.0.1 "$cookie")"
check_match "not from another address" '^BADCOOKIE ' "$(ask 127.0.0.2 "$cookie")"
check_match "over TCP an invalid cookie is answered" '^NOERROR ' \
	"$(ask 127.0.0.2 "$cookie" +tcp)"
check_match "a query without a cookie is answered" 'status: NOERROR' \
	"$(q "$port" +nocookie www.example.com A)"
check_match "40 octets, not valid: BADCOOKIE" '^BADCOOKIE' \
	"$(ask 127.0.0.1 "$(printf '%080d' 0)")"

# 4. shoalctl cookie-rotate: the cookie made before stays valid (its
# secret is now the staging one), and not after a second rotation.
out=$("$SHOALCTL" -s "$T_DIR/ctl" cookie-rotate)
check_eq "cookie-rotate exits 0" 0 $?
check_match "and says so" 'rotated' "$out"
check_match "after one rotation the old cookie is valid" '^NOERROR ' "$(ask 127.0.0.1 "$cookie")"
r=$(ask 127.0.0.1 $CLIENT)
check_match "new cookies are made under the new secret" "^BADCOOKIE ${CLIENT}01" "$r"
check_eq "a bad secret is refused" 1 \
	"$("$SHOALCTL" -s "$T_DIR/ctl" cookie-rotate 0011 >/dev/null 2>&1; echo $?)"
"$SHOALCTL" -s "$T_DIR/ctl" cookie-rotate "$SECRET2" >/dev/null
check_match "after two rotations it is BADCOOKIE" '^BADCOOKIE ' "$(ask 127.0.0.1 "$cookie")"
check_match "the cookie made after the first rotation is still valid" '^NOERROR ' \
	"$(ask 127.0.0.1 "${r#* }")"
check_match "the rotation is logged" 'notice: control: cookie secret rotated' \
	"$(cat "$T_DIR/shoald.log")"
stop_pid "$SHOALD_PID"
check_eq "shoald stops with SIGTERM, exit 0" 0 $?

# 5. Secrets from the configuration: a cookie from a server with SECRET1 is
# valid at another server with SECRET1 (an anycast set), at one with
# SECRET2 and SECRET1 staging, and not at one with SECRET2 alone.
run_with() {
	conf "$T_DIR/c.conf" "$@"
	port=$(free_port)
	start_shoald "$port" --config "$T_DIR/c.conf" --listen "127.0.0.1@$port" --threads 1 \
		--zone "$ZONE" || exit 1
}
run_with $SECRET1
cookie=$(ask 127.0.0.1 $CLIENT)
cookie=${cookie#* }
stop_pid "$SHOALD_PID"
run_with $SECRET1
check_match "another server with the same secret accepts the cookie" '^NOERROR ' \
	"$(ask 127.0.0.1 "$cookie")"
stop_pid "$SHOALD_PID"
run_with $SECRET2 $SECRET1
check_match "a server with it as staging secret accepts the cookie" '^NOERROR ' \
	"$(ask 127.0.0.1 "$cookie")"
r=$(ask 127.0.0.1 $CLIENT)
check_eq "and makes cookies with its current secret" 1 \
	"$([ "${r#* }" != "$cookie" ] && echo 1)"
stop_pid "$SHOALD_PID"
run_with $SECRET2
check_match "a server without that secret answers BADCOOKIE" '^BADCOOKIE ' \
	"$(ask 127.0.0.1 "$cookie")"

# 6. dig +cookie against Knot DNS with its cookies module (which answers as
# cookie-require does) and the same secret: the same rcode for each case,
# and each server accepts the other's cookies (both make them as RFC 9018
# says). Skipped without knotd.
KNOTD=$(command -v knotd || ls /usr/sbin/knotd 2>/dev/null)
if [ -z "$KNOTD" ]; then
	echo "# skipped the comparison with Knot DNS: no knotd (Debian package knot)"
else
	shoal_port=$port
	knot_port=$(free_port)
	mkdir -p "$T_DIR/knot/db"
	cat >"$T_DIR/knot/knot.conf" <<-CONF
	server:
	    rundir: "$T_DIR/knot"
	    listen: 127.0.0.1@$knot_port
	    udp-workers: 1
	    tcp-workers: 1
	    background-workers: 1
	log:
	  - target: stderr
	    any: notice
	database:
	    storage: "$T_DIR/knot/db"
	mod-cookies:
	  - id: same
	    secret: 0x$SECRET2
	template:
	  - id: default
	    storage: "$EXAMPLES"
	    file: "%s.zone"
	    journal-content: none
	    zonefile-sync: -1
	    zonefile-load: whole
	    semantic-checks: off
	    global-module: mod-cookies/same
	zone:
	  - domain: example.com
	CONF
	"$KNOTD" -c "$T_DIR/knot/knot.conf" >"$T_DIR/knot/stderr.log" 2>&1 &
	knot_pid=$!
	T_PIDS="$T_PIDS $knot_pid"
	wait_answering 127.0.0.1 "$knot_port" || fail "knotd did not start"
	# rcodes SERVER-PORT COOKIE-FROM-THAT-SERVER: one rcode per case
	rcodes() {
		local p=$1 c=$2 r
		for args in "127.0.0.1 $CLIENT" "127.0.0.1 $c" "127.0.0.2 $c" "127.0.0.2 $c +tcp" \
			"127.0.0.1 $(printf '%014d' 0)" "127.0.0.1 $(printf '%018d' 0)" \
			"127.0.0.1 $(printf '%030d' 0)" "127.0.0.1 $(printf '%080d' 0)"; do
			# shellcheck disable=SC2086
			r=$(port=$p ask $args)
			printf '%s ' "${r%% *}"
		done
	}
	c_shoal=$(port=$shoal_port ask 127.0.0.1 $CLIENT)
	c_shoal=${c_shoal#* }
	c_knot=$(port=$knot_port ask 127.0.0.1 $CLIENT)
	c_knot=${c_knot#* }
	shoal_rcodes=$(rcodes "$shoal_port" "$c_shoal")
	knot_rcodes=$(rcodes "$knot_port" "$c_knot")
	echo "# shoald: $shoal_rcodes"
	echo "# knotd:  $knot_rcodes"
	check_eq "the same rcodes as Knot DNS for the same cases" "$knot_rcodes" "$shoal_rcodes"
	check_match "Knot's cookie is valid at shoald" '^NOERROR ' \
		"$(port=$shoal_port ask 127.0.0.1 "$c_knot")"
	check_match "shoald's cookie is valid at Knot" '^NOERROR ' \
		"$(port=$knot_port ask 127.0.0.1 "$c_shoal")"
	stop_pid "$knot_pid"
fi

stop_pid "$SHOALD_PID"
check_eq "shoald stops with SIGTERM, exit 0" 0 $?
done_testing
