#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_nsid: NSID (RFC 5001) carries the thread index, or not with nsid-thread: no;
# the same settings work from a configuration file; SIGTERM exits 0.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --nsid ID \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99
check_match "dig +nsid shows ID/0 or ID/1" '; NSID: .*\("ID/[01]"\)' \
	"$(q "$PORT" +nsid www.example.com A)"
check_match "over TCP too" '; NSID: .*\("ID/[01]"\)' "$(q "$PORT" +tcp +nsid www.example.com A)"
out=$(q "$PORT" www.example.com A)
if printf '%s\n' "$out" | grep -q 'NSID'; then
	fail "no NSID without +nsid"
else
	pass "no NSID without +nsid"
fi
stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0" 0 $?

# A long NSID and a long query name with EDNS 512: the header, question and
# OPT with the NSID do not fit 512 octets. The answer comes without the NSID
# (RFC 5001 2.2: including it is the server's choice); it used to be dropped.
PORT=$(free_port) || exit 99
long_id=$(printf 'n%.0s' $(seq 1 290))
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --nsid "$long_id" \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99
label=$(printf 'a%.0s' $(seq 1 60))
long_name="$label.$label.$label.example.com"
out=$(q "$PORT" +nsid +bufsize=512 +ignore "$long_name" A)
check_match "long NSID, long name, EDNS 512: answered" 'status: NXDOMAIN' "$out"
if printf '%s\n' "$out" | grep -q 'NSID'; then
	fail "that answer has no NSID (it cannot fit)"
else
	pass "that answer has no NSID (it cannot fit)"
fi
check_match "that answer fits 512 octets" 'MSG SIZE +rcvd: ([1-4][0-9]{2}|50[0-9]|51[0-2])$' "$out"
check_match "a short name still gets the long NSID" "; NSID: .*\(\"$long_id/[01]\"\)" \
	"$(q "$PORT" +nsid +bufsize=512 +ignore www.example.com A)"
stop_pid "$SHOALD_PID"

PORT=$(free_port) || exit 99
cat >"$T_DIR/shoald.conf" <<CONF
listen:
  - 127.0.0.1@$PORT
threads: 2
nsid: ID
nsid-thread: no
zones:
  - name: example.com
    file: $EXAMPLES/example.com.zone
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_match "nsid-thread: no shows ID" '; NSID: .*\("ID"\)' "$(q "$PORT" +nsid www.example.com A)"
kill -INT "$SHOALD_PID"
wait "$SHOALD_PID"
check_eq "SIGINT exits 0" 0 $?
check_match "the log says it stopped" "info: stopped" "$(cat "$T_DIR/shoald.log")"
done_testing
