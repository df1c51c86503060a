#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_allow_query: allow-query per zone and globally: a client in the list is answered, one
# outside it gets REFUSED over UDP and TCP; a zone without it answers both; a TSIG key in an
# entry admits signed queries; shoalctl reconfig changes the lists; zone-add and zone-remove
# keep them.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
CTL="$T_DIR/shoald.ctl"
ctl() { "$SHOALCTL" -s "$CTL" "$@" 2>&1; }
sed 's/example\.com\./open.test./g' "$EXAMPLES/example.com.zone" >"$T_DIR/open.zone"
SECRET=$(printf 'allow-query test secret 32 octets' | base64)

# write_conf EXAMPLE_LIST GLOBAL_LIST: the zone example.com with its own allow-query (when
# EXAMPLE_LIST is not empty), open.test without, and the global list (when not empty)
write_conf() {
	{
		printf 'listen: [ 127.0.0.1@%s ]\nthreads: 2\ncontrol: %s\n' "$PORT" "$CTL"
		printf 'keys:\n  - { name: qkey, algorithm: hmac-sha256, secret: "%s" }\n' "$SECRET"
		[ -n "$2" ] && printf 'allow-query: %s\n' "$2"
		printf 'zones:\n  - name: example.com\n    file: %s\n' "$EXAMPLES/example.com.zone"
		[ -n "$1" ] && printf '    allow-query: %s\n' "$1"
		printf '  - name: open.test\n    file: %s\n' "$T_DIR/open.zone"
	} >"$T_DIR/shoald.conf"
}

# status FROM ARGS...: the rcode of the answer to a query sent from address FROM
status() {
	local from=$1
	shift
	q "$PORT" -b "$from" "$@" | sed -n 's/.*status: \([A-Z]*\).*/\1/p'
}

write_conf '[ "127.0.0.1 NOKEY", "10.0.0.0/8 qkey" ]' ''
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "allowed address, UDP: answered" NOERROR "$(status 127.0.0.1 www.example.com A)"
check_eq "allowed address, TCP: answered" NOERROR "$(status 127.0.0.1 +tcp www.example.com A)"
check_eq "other address, UDP: REFUSED" REFUSED "$(status 127.0.0.2 www.example.com A)"
check_eq "other address, TCP: REFUSED" REFUSED "$(status 127.0.0.2 +tcp www.example.com A)"
out=$(q "$PORT" -b 127.0.0.2 www.example.com A)
check_match "the refusal shows nothing of the zone" "ANSWER: 0, AUTHORITY: 0" "$out"
check_eq "a name that does not exist: REFUSED too" REFUSED \
	"$(status 127.0.0.2 nosuch.example.com A)"
check_eq "zone without allow-query, UDP: answered" NOERROR "$(status 127.0.0.2 www.open.test A)"
check_eq "zone without allow-query, TCP: answered" NOERROR \
	"$(status 127.0.0.2 +tcp www.open.test A)"
# a key admits only signed queries: unsigned from 127.0.0.1 matches the NOKEY entry, but
# a signed one from there must match an entry with its key
write_conf '[ "127.0.0.2 qkey" ]' ''
check_eq "reconfig to a keyed entry exits 0" 0 "$(ctl reconfig >/dev/null; echo $?)"
check_eq "keyed entry: unsigned from it REFUSED" REFUSED "$(status 127.0.0.2 www.example.com A)"
check_eq "keyed entry: signed from it answered (UDP)" NOERROR \
	"$(status 127.0.0.2 -y "hmac-sha256:qkey:$SECRET" www.example.com A)"
check_eq "keyed entry: signed from it answered (TCP)" NOERROR \
	"$(status 127.0.0.2 +tcp -y "hmac-sha256:qkey:$SECRET" www.example.com A)"
check_eq "keyed entry: signed from elsewhere REFUSED" REFUSED \
	"$(status 127.0.0.1 -y "hmac-sha256:qkey:$SECRET" www.example.com A)"
check_eq "reconfig changed the list: 127.0.0.1 now REFUSED" REFUSED \
	"$(status 127.0.0.1 www.example.com A)"
# the global list covers the zones without their own
write_conf '' '[ "127.0.0.2 NOKEY" ]'
ctl reconfig >/dev/null
check_eq "global allow-query: the listed address answered" NOERROR \
	"$(status 127.0.0.2 www.open.test A)"
check_eq "global allow-query: others REFUSED" REFUSED "$(status 127.0.0.1 www.open.test A)"
check_eq "global allow-query: every zone (TCP)" REFUSED \
	"$(status 127.0.0.1 +tcp www.example.com A)"
# a zone-add and a zone-remove carry the served lists over (the set derived, the global list
# that of the configuration copied): the zones kept and the one added all under it
sed 's/example\.com\./added.test./g' "$EXAMPLES/example.com.zone" >"$T_DIR/added.zone"
ctl zone-add added.test "$T_DIR/added.zone" >/dev/null
check_eq "zone-add: the zone added under the global list" REFUSED \
	"$(status 127.0.0.1 www.added.test A)"
check_eq "zone-add: the zone added answers the listed address" NOERROR \
	"$(status 127.0.0.2 www.added.test A)"
check_eq "zone-add: a zone kept still under it" REFUSED "$(status 127.0.0.1 www.open.test A)"
ctl zone-remove added.test >/dev/null
check_eq "zone-remove: a zone kept still under it" REFUSED "$(status 127.0.0.1 www.open.test A)"
check_eq "zone-remove: a zone kept answers the listed address" NOERROR \
	"$(status 127.0.0.2 +tcp www.example.com A)"
write_conf '' ''
ctl reconfig >/dev/null
check_eq "reconfig removing it: everyone answered again" NOERROR \
	"$(status 127.0.0.1 www.example.com A)"
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?

# a key that is not configured is an error with its line
write_conf '[ "127.0.0.1 nokey-such" ]' ''
out=$("$SHOALD" -c "$T_DIR/shoald.conf" --check 2>&1)
check_match "an unknown key is refused with the line" \
	'shoald.conf:[0-9]+: allow-query: no key called "nokey-such"' "$out"
done_testing
