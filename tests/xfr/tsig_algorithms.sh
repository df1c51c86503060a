#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tsig_algorithms: TSIG with each algorithm Shoal offers (hmac-sha1, -sha224, -sha256,
# -sha384, -sha512), against other implementations, both ways. kdig -y and dig -y ask
# Shoal for an AXFR signed with each key, and verify the signed answer; Knot DNS and BIND
# transfer a zone per algorithm from Shoal, signed, and after a new serial Shoal's signed
# NOTIFY brings the change; Shoal transfers a zone per algorithm from Knot and from BIND.
# Each peer is skipped when it is not installed; hmac-sha1 was refused at start before.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

KDIG=$(command -v kdig)
ALGS="hmac-sha1 hmac-sha224 hmac-sha256 hmac-sha384 hmac-sha512"
short() { echo "${1#hmac-}"; }
key_of() { echo "k-$(short "$1")"; }
# a secret of its own for each algorithm, the length of its hash
secret_of() {
	local n
	case $1 in
	hmac-sha1) n=20 ;; hmac-sha224) n=28 ;; hmac-sha256) n=32 ;; hmac-sha384) n=48 ;; *) n=64 ;;
	esac
	printf '%s' "$1-0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopq" |
		head -c "$n" | base64 -w0
}
# zone_file FILE ORIGIN SERIAL
zone_file() {
	printf '$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hm %s 3600 600 86400 300\n@ NS ns1\n' "$2" "$3" >"$1"
	printf 'ns1 A 192.0.2.1\nwww A 192.0.2.%s\n' "$3" >>"$1"
}

have_knot=false have_bind=false
[ -n "$KNOTD" ] && have_knot=true
[ -n "$NAMED" ] && have_bind=true
PORT=$(free_port) || exit 99
KPORT=$(free_port) || exit 99
BPORT=$(free_port) || exit 99
mkdir -p "$T_DIR/zones" "$T_DIR/sec" "$T_DIR/knot/zones" "$T_DIR/bind"

# --- the peers' configuration: primaries of ALG.knot.test and ALG.bind.test, secondaries of
# ALG.out.test
if $have_knot; then
	{
		knot_server_conf "$T_DIR/knot" "$KPORT" info
		echo "key:"
		for a in $ALGS; do knot_key "$(key_of "$a")" "$a" "$(secret_of "$a")"; done
		echo "remote:"
		for a in $ALGS; do knot_remote "shoal-$(short "$a")" "$PORT" "$(key_of "$a")"; done
		echo "acl:"
		for a in $ALGS; do
			knot_acl "xfr-$(short "$a")" transfer "$(key_of "$a")"
			knot_acl "notify-$(short "$a")" notify "$(key_of "$a")"
		done
		knot_template "$T_DIR/knot/zones" "%s.zone"
		for a in $ALGS; do
			zone_file "$T_DIR/knot/zones/$(short "$a").knot.test.zone" "$(short "$a").knot.test" 1
			printf '  - domain: %s.knot.test\n    acl: xfr-%s\n' "$(short "$a")" "$(short "$a")"
			printf '  - domain: %s.out.test\n    master: shoal-%s\n    acl: notify-%s\n' \
				"$(short "$a")" "$(short "$a")" "$(short "$a")"
		done
	} >"$T_DIR/knot/knot.conf"
else
	echo "SKIP: Knot DNS (knotd) is not installed"
fi
if $have_bind; then
	{
		named_server_conf "$T_DIR/bind" "$BPORT"
		for a in $ALGS; do TSIG_ALG=$a named_keys "$(key_of "$a")" "$(secret_of "$a")"; done
		for a in $ALGS; do
			z=$(short "$a")
			zone_file "$T_DIR/bind/$z.bind.test.zone" "$z.bind.test" 1
			cat <<-CONF
			zone "$z.bind.test" { type primary; file "$z.bind.test.zone"; allow-transfer { key $(key_of "$a"); }; };
			zone "$z.out.test" {
			    type secondary;
			    file "$z.out.test.db";
			    primaries port $PORT { 127.0.0.1 key $(key_of "$a"); };
			    allow-notify { 127.0.0.1; };
			};
			CONF
		done
	} >"$T_DIR/bind/named.conf"
else
	echo "SKIP: BIND (named) is not installed"
fi

# --- Shoal: the primary of ALG.out.test, the secondary of ALG.knot.test and ALG.bind.test
{
	printf 'listen: [127.0.0.1@%s]\nthreads: 1\ncontrol: %s\n' "$PORT" "$T_DIR/ctl"
	printf 'min-retry-time: 1\nmin-refresh-time: 1\nkeys:\n'
	for a in $ALGS; do
		printf '  - name: %s\n    algorithm: %s\n    secret: "%s"\n' "$(key_of "$a")" "$a" \
			"$(secret_of "$a")"
	done
	echo "zones:"
	for a in $ALGS; do
		z=$(short "$a") k=$(key_of "$a")
		zone_file "$T_DIR/zones/$z.out.test.zone" "$z.out.test" 1
		notify=""
		$have_knot && notify="\"127.0.0.1@$KPORT $k\""
		$have_bind && notify="$notify${notify:+, }\"127.0.0.1@$BPORT $k\""
		printf '  - name: %s.out.test\n    file: %s\n' "$z" "$T_DIR/zones/$z.out.test.zone"
		printf '    provide-xfr: ["127.0.0.1 %s"]\n    notify: [%s]\n' "$k" "$notify"
		$have_knot && printf '  - name: %s.knot.test\n    file: %s\n    primaries: ["127.0.0.1@%s %s"]\n' \
			"$z" "$T_DIR/sec/$z.knot.test.zone" "$KPORT" "$k"
		$have_bind && printf '  - name: %s.bind.test\n    file: %s\n    primaries: ["127.0.0.1@%s %s"]\n' \
			"$z" "$T_DIR/sec/$z.bind.test.zone" "$BPORT" "$k"
	done
} >"$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
# the peers once Shoal answers: their first refresh of ALG.out.test finds it (BIND's retry
# after a failed first one can come minutes later); Shoal retries theirs each second
if $have_knot; then
	knot_start "$T_DIR/knot" "$T_DIR/knot/log"
	KNOT_PID=$PEER_PID
fi
if $have_bind; then
	named_start "$T_DIR/bind" "$T_DIR/bind/log"
	BIND_PID=$PEER_PID
fi

# --- clients: kdig -y and dig -y, an AXFR signed with each key, the answer verified
for a in $ALGS; do
	z=$(short "$a").out.test
	if [ -n "$KDIG" ]; then
		out=$("$KDIG" @127.0.0.1 -p "$PORT" +tcp +time=5 +retry=0 -y "$a:$(key_of "$a"):$(secret_of "$a")" \
			AXFR "$z" 2>&1)
		check_eq "kdig -y $a: AXFR of $z, 2 SOA records" 2 "$(grep -c "	SOA	" <<<"$out")"
		check_eq "kdig -y $a: the answer's TSIG verifies (no 'reply verification' line)" "" \
			"$(grep -E '^;; (WARNING|ERROR)' <<<"$out")"
		check_match "kdig -y $a: signed with $a" "TSIG	$a\.? " "$out"
	fi
	out=$("$DIG" @127.0.0.1 -p "$PORT" +time=5 +tries=1 -y "$a:$(key_of "$a"):$(secret_of "$a")" \
		AXFR "$z" 2>&1)
	check_eq "dig -y $a: AXFR of $z, 2 SOA records" 2 "$(grep -cE "	SOA	" <<<"$out")"
	check_match "dig -y $a: signed with $a" "TSIG	$a\. " "$out"
	check_eq "dig -y $a: the answer's TSIG verifies" "" \
		"$(grep -iE "couldn't verify|transfer failed|tsig verify failure" <<<"$out")"
	# the wrong secret: refused (NOTAUTH, BADSIG) and no zone
	out=$("$DIG" @127.0.0.1 -p "$PORT" +time=5 +tries=1 -y "$a:$(key_of "$a"):$(secret_of hmac-md5)" \
		AXFR "$z" 2>&1)
	check_eq "dig -y $a with another secret: no zone" "" "$(grep 'XFR size' <<<"$out")"
done

# --- Knot and BIND transfer from Shoal; Shoal from them ---
peer_has() { [ "$(peer_serial "$1" "$2")" = "$3" ]; }
for a in $ALGS; do
	z=$(short "$a")
	if $have_knot; then
		wait_until 30 peer_has "$KPORT" "$z.out.test" 1
		check_eq "Knot transfers $z.out.test from Shoal with $a" 1 "$(peer_serial "$KPORT" "$z.out.test")"
		wait_until 30 serial_is "$PORT" "$z.knot.test" 1
		check_eq "Shoal transfers $z.knot.test from Knot with $a" 1 "$(peer_serial "$PORT" "$z.knot.test")"
	fi
	if $have_bind; then
		wait_until 30 peer_has "$BPORT" "$z.out.test" 1
		check_eq "BIND transfers $z.out.test from Shoal with $a" 1 "$(peer_serial "$BPORT" "$z.out.test")"
		wait_until 30 serial_is "$PORT" "$z.bind.test" 1
		check_eq "Shoal transfers $z.bind.test from BIND with $a" 1 "$(peer_serial "$PORT" "$z.bind.test")"
	fi
done

# --- a new serial: Shoal's signed NOTIFY, then the peers' signed transfer ---
for a in $ALGS; do
	z=$(short "$a").out.test
	zone_file "$T_DIR/zones/$z.zone" "$z" 2
	timeout 60 "$SHOALCTL" -s "$T_DIR/ctl" reload "$z" >/dev/null || fail "reload $z"
done
for a in $ALGS; do
	z=$(short "$a").out.test
	if $have_knot; then
		wait_until 30 peer_has "$KPORT" "$z" 2
		check_eq "NOTIFY signed with $a: Knot has serial 2 of $z" 2 "$(peer_serial "$KPORT" "$z")"
	fi
	if $have_bind; then
		wait_until 30 peer_has "$BPORT" "$z" 2
		check_eq "NOTIFY signed with $a: BIND has serial 2 of $z" 2 "$(peer_serial "$BPORT" "$z")"
	fi
done
# the one refusal of each key is the request with another secret
check_eq "Shoal's log: a BADSIG for each request with another secret" "$(echo $ALGS | wc -w)" \
	"$(grep -c 'TSIG BADSIG with key' "$T_DIR/shoald.log")"
check_eq "Shoal's log: no other TSIG failure" "" \
	"$(grep -E 'BADSIG|BADKEY|BADTIME|BADTRUNC|TSIG error' "$T_DIR/shoald.log" | grep -v 'TSIG BADSIG with key')"
stop_pid "$SHOALD_PID"
check_eq "shoald exits 0" 0 $?
$have_knot && peer_stop "$KNOT_PID"
$have_bind && peer_stop "$BIND_PID"
done_testing
