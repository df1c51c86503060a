#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/tsig_errors: a peer that refuses Shoal's TSIG says why in the TSIG
# RR's Error (RFC 8945 5.3), unsigned for BADSIG and BADKEY (5.3.2), and
# Shoal's log names it. tests/xfr/bad_primary.pl answers as a peer whose
# secret (badsig) or key (badkey) differs: to a signed transfer request, as
# the primary of two secondary zones; to a signed NOTIFY, as the secondary
# of two primary zones, where an answer with an error is an answer, not
# "no answer". A third secondary answers NOTIFY NOERROR without TSIG: that
# answer does not verify and is discarded (5.3), and the last line says so.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

start_bad_primary BAD
PORT=$(free_port) || exit 99

{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nnotify-retry: 2\n' "$PORT" "$T_DIR"
	printf 'keys:\n  - name: %s\n    algorithm: hmac-sha256\n    secret: "%s"\nzones:\n' "$XFR_KEY" "$XFR_SECRET"
	for z in badsig.test badkey.test badsig.n.test badkey.n.test plain.n.test; do
		printf '$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n@ IN NS ns1\nns1 IN A 192.0.2.1\n' \
			"$z" >"$T_DIR/$z.zone"
		printf '  - name: %s\n    file: %s\n' "$z" "$T_DIR/$z.zone"
		case $z in
		*.n.test) printf '    notify: ["127.0.0.1@%s %s"]\n' "$BAD" "$XFR_KEY" ;;
		*) printf '    primaries: ["127.0.0.1@%s %s"]\n' "$BAD" "$XFR_KEY" ;;
		esac
	done
} >"$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
logged() { grep -qE "$1" "$T_DIR/shoald.log"; }

# As a secondary: the refusal of the transfer names the TSIG error.
for e in BADSIG BADKEY; do
	z=$(echo "$e" | tr 'A-Z' 'a-z').test
	line="zone $z.: transfer from 127.0.0.1@$BAD failed: primary 127.0.0.1@$BAD answered NOTAUTH, TSIG error $e;"
	if wait_until 20 logged "$line"; then pass "$z: the refusal names $e"; else fail "$z: no line like: $line"; fi
	check_match "zone-status: $z's last error names $e" "^$z. serial 1 .* last-error .*NOTAUTH, TSIG error $e" \
		"$("$SHOALCTL" -s "$T_DIR/ctl" zone-status)"
done

# As a primary: a NOTIFY answered NOTAUTH with a TSIG error is answered.
for z in badsig.n.test badkey.n.test plain.n.test; do
	check_match "shoalctl notify $z" "NOTIFY sent to 1 secondaries" \
		"$("$SHOALCTL" -s "$T_DIR/ctl" notify "$z" 2>&1)"
done
for e in BADSIG BADKEY; do
	z=$(echo "$e" | tr 'A-Z' 'a-z').n.test
	line="NOTIFY $z. serial 1 to 127.0.0.1@$BAD: answered NOTAUTH, TSIG error $e$"
	if wait_until 20 logged "$line"; then pass "$z: NOTIFY answered, $e named"; else fail "$z: no line like: $line"; fi
done
gave_up="NOTIFY plain.n.test. serial 1 to 127.0.0.1@$BAD: no answer that verifies after 2 tries \(the last one discarded: NOERROR\)"
if wait_until 20 logged "$gave_up"; then pass "an answer without TSIG: discarded, and said so"
else fail "no line like: $gave_up"; fi
check_match "... each time" "NOTIFY plain.n.test. to 127.0.0.1@$BAD: an answer \(NOERROR\) whose TSIG does not verify \(BADSIG\): discarded" \
	"$(cat "$T_DIR/shoald.log")"
check_match "the NOTIFYs answered NOTAUTH are not 'no answer'" "^$" \
	"$(grep -E "NOTIFY bad(sig|key).n.test. .*no answer" "$T_DIR/shoald.log")"
check_match "stats: counted as answered with an error" "\"refused\": 2," \
	"$("$SHOALCTL" -s "$T_DIR/ctl" stats json | sed -n '/"notify_out"/,$p')"
stop_pid "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
