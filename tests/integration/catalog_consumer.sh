#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# catalog_consumer: consumer catalog zones (RFC 9432) on a real shoald. Two catalogs loaded
# from files on the consumer; their members are transferred from two primaries (shoald too),
# one per template. Members appear and answer from their template's primary (group ->
# template), a member removed answers REFUSED and loses its file, a version-1 catalog is
# refused with its members kept, a new unique id resets a member, a member claimed by two
# catalogs stays with the first (a log line names both), coo hands a member over without
# it ever stopping to answer, a reconfig keeps the members and drops a dropped catalog's, and
# a restart serves the members from their saved files.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# www NAME: the address www.NAME has on the consumer
www() { q "$PORT" +short "www.$1" A; }
answers() { [ "$(www "$1")" = "$2" ]; }
refused() { q "$PORT" "www.$1" A | grep -q "status: REFUSED"; }
log_has() { grep -qE -- "$1" "$T_DIR/shoald.log"; }

PORT=$(free_port) || exit 99
PORTP=$(free_port) || exit 99
PORTQ=$(free_port) || exit 99
mkdir -p "$T_DIR/p" "$T_DIR/q"
mkdir -m 700 "$T_DIR/state"

# primary DIR PORT ADDR: a shoald in DIR serving m1..m4.test, www of each at ADDR
primary() {
	local dir=$1 port=$2 addr=$3 z
	{
		printf 'listen: 127.0.0.1@%s\nthreads: 1\nzones:\n' "$port"
		for z in m1 m2 m3 m4; do
			printf '  - name: %s.test\n    file: %s.zone\n' "$z" "$z"
			printf '    provide-xfr: 127.0.0.0/8 NOKEY\n'
			printf '$ORIGIN %s.test.\n$TTL 300\n@ SOA ns hm 1 3600 600 86400 300\n' "$z" \
				>"$dir/$z.zone"
			printf '@ NS ns\nns A 192.0.2.1\nwww A %s\n' "$addr" >>"$dir/$z.zone"
		done
	} >"$dir/shoald.conf"
	"$SHOALD" -c "$dir/shoald.conf" >"$dir/log" 2>&1 &
	T_PIDS="$T_PIDS $!"
	PRIMARY_PIDS="${PRIMARY_PIDS:-} $!"
	wait_answering 127.0.0.1 "$port"
}
primary "$T_DIR/p" "$PORTP" 192.0.2.11 || exit 99
primary "$T_DIR/q" "$PORTQ" 192.0.2.22 || exit 99

# catalog NAME SERIAL VERSION RECORDS...: the file of catalog NAME, each record a line
catalog() {
	local name=$1 serial=$2 version=$3
	shift 3
	{
		printf '$ORIGIN %s.\n$TTL 0\n@ SOA invalid. invalid. %s 3600 600 86400 0\n' \
			"$name" "$serial"
		printf '@ NS invalid.\nversion TXT "%s"\n' "$version"
		printf '%s\n' "$@"
	} >"$T_DIR/$name.zone"
}
catalog cat.test 1 2 "a.zones PTR m1.test." "b.zones PTR m2.test." \
	"group.b.zones TXT other"
catalog cat2.test 1 2
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
state-dir: $T_DIR/state
min-refresh-time: 1
templates:
  - id: t1
    primaries: 127.0.0.1@$PORTP NOKEY
  - id: t2
    primaries: 127.0.0.1@$PORTQ NOKEY
zones:
  - name: cat.test
    file: cat.test.zone
    catalog-role: consumer
    catalog-template: t1
    catalog-group-templates: { other: t2 }
  - name: cat2.test
    file: cat2.test.zone
    catalog-role: consumer
    catalog-template: t1
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99

# --- the first load: members added, each from its template's primary ---
if wait_until 60 answers m1.test 192.0.2.11 && wait_until 60 answers m2.test 192.0.2.22; then
	pass "members appear: m1 from the default template, m2 (group other) from t2"
else
	fail "members appear: m1 [$(www m1.test)] m2 [$(www m2.test)]: $(ctl zone-status)"
fi
m1_file="$T_DIR/state/catalog/cat.test./m1.test..zone"
if wait_until 30 test -s "$m1_file"; then
	pass "m1's transfer is saved under state-dir/catalog/cat.test./"
else
	fail "m1's file: $(find "$T_DIR/state" | tr '\n' ' ')"
fi
check_match "zone-status shows m2's catalog" "^m2\.test\. serial 1 .* catalog cat\.test\." \
	"$(ctl zone-status m2.test)"
check_match "... in JSON too" '"catalog":"cat\.test\."' "$(ctl zone-status m2.test --json)"

# --- a member added: that one, derived as zone-add does ---
catalog cat.test 2 2 "a.zones PTR m1.test." "b.zones PTR m2.test." \
	"group.b.zones TXT other" "c.zones PTR m3.test."
ctl reload cat.test >/dev/null
if wait_until 60 answers m3.test 192.0.2.11; then
	pass "m3 added to the catalog answers"
else
	fail "m3 added: [$(www m3.test)]"
fi
check_match "the log counts one added" "catalog cat\.test\.: 3 members; 1 added, 0 removed" \
	"$(cat "$T_DIR/shoald.log")"

# --- a member removed: REFUSED, its file gone ---
catalog cat.test 3 2 "b.zones PTR m2.test." "group.b.zones TXT other" "c.zones PTR m3.test."
ctl reload cat.test >/dev/null
if wait_until 30 refused m1.test; then
	pass "m1, removed from the catalog, answers REFUSED"
else
	fail "m1 removed: $(q "$PORT" www.m1.test A | grep status)"
fi
if wait_until 10 test ! -e "$m1_file"; then
	pass "m1's saved file is removed"
else
	fail "m1's saved file is still there"
fi
check_eq "m2 still answers" 192.0.2.22 "$(www m2.test)"

# --- a version-1 catalog: refused, the members kept ---
catalog cat.test 4 1 "c.zones PTR m3.test."
ctl reload cat.test >/dev/null
if wait_until 30 log_has "catalog cat\.test\. \(serial 4\) refused: version \"1\" is not 2"; then
	pass "a version-1 catalog is refused with a clear error"
else
	fail "version 1 refused: $(grep catalog "$T_DIR/shoald.log" | tail -3)"
fi
check_eq "m2 is kept" 192.0.2.22 "$(www m2.test)"
check_eq "m3 is kept" 192.0.2.11 "$(www m3.test)"

# --- a new unique id resets the member: removed, then added again ---
catalog cat.test 5 2 "b2.zones PTR m2.test." "group.b2.zones TXT other" "c.zones PTR m3.test."
ctl reload cat.test >/dev/null
if wait_until 30 log_has "1 removed \(1 reset\)"; then
	pass "m2's new unique id resets it"
else
	fail "m2 reset: $(grep catalog "$T_DIR/shoald.log" | tail -3)"
fi
if wait_until 60 answers m2.test 192.0.2.22; then
	pass "m2 answers again after its reset"
else
	fail "m2 after reset: [$(www m2.test)]"
fi

# --- a member's group changes: its settings follow the other template, its data stays ---
catalog cat.test 6 2 "b2.zones PTR m2.test." "c.zones PTR m3.test."
ctl reload cat.test >/dev/null
if wait_until 30 log_has "catalog cat\.test\. done: .*options: m2\.test\."; then
	pass "m2 without its group takes the default template's settings (a reconfig of m2 alone)"
else
	fail "m2 regrouped: $(grep catalog "$T_DIR/shoald.log" | tail -3)"
fi
check_match "the log counts it regrouped" "0 taken over, 1 regrouped" "$(cat "$T_DIR/shoald.log")"
check_eq "m2 keeps its data" 192.0.2.22 "$(www m2.test)"
catalog cat.test 7 2 "b2.zones PTR m2.test." "group.b2.zones TXT other" "c.zones PTR m3.test."
ctl reload cat.test >/dev/null
wait_until 30 log_has "catalog cat\.test\.: 2 members; 0 added, 0 removed \(0 reset\), 0 taken over, 1 regrouped.*" || true

# --- a member claimed by two catalogs: the first keeps it ---
catalog cat2.test 2 2 "c.zones PTR m3.test." "y.zones PTR m4.test."
ctl reload cat2.test >/dev/null
if wait_until 30 log_has "catalog cat2\.test\.: member m3\.test\. refused: catalog cat\.test\. has it"; then
	pass "m3 claimed by cat2 too: refused, the log names both"
else
	fail "two claims: $(grep catalog "$T_DIR/shoald.log" | tail -3)"
fi
if wait_until 60 answers m4.test 192.0.2.11; then
	pass "cat2's own member m4 answers"
else
	fail "m4: [$(www m4.test)]"
fi

# --- coo: cat hands m3 to cat2, which lists it under the same unique id: m3 is never
# dropped (a new id would reset it, RFC 9432 4.3.1) ---
catalog cat.test 8 2 "b2.zones PTR m2.test." "group.b2.zones TXT other" \
	"c.zones PTR m3.test." "coo.c.zones PTR cat2.test."
( for _ in $(seq 1 40); do www m3.test; sleep 0.05; done ) >"$T_DIR/m3.answers" &
watcher=$!
ctl reload cat.test >/dev/null
if wait_until 30 log_has "catalog cat2\.test\.: 2 members; 0 added, 0 removed \(0 reset\), 1 taken over"; then
	pass "coo: cat2 takes m3 over"
else
	fail "coo: $(grep catalog "$T_DIR/shoald.log" | tail -4)"
fi
wait "$watcher"
check_eq "m3 answered throughout the move" "" "$(grep -v '^192\.0\.2\.11$' "$T_DIR/m3.answers")"
# cat drops m3 now: it is cat2's, so it stays
catalog cat.test 9 2 "b2.zones PTR m2.test." "group.b2.zones TXT other"
ctl reload cat.test >/dev/null
wait_until 30 log_has "catalog cat\.test\.: 1 members" || true
check_eq "m3, now cat2's, stays when cat drops it" 192.0.2.11 "$(www m3.test)"

# --- reconfig: the members stay with their catalogs; a catalog dropped takes its own ---
out=$(ctl reconfig)
check_match "a reconfig of the same file keeps every member" "added: -; removed: -" "$out"
check_eq "m2 answers after it" 192.0.2.22 "$(www m2.test)"
# cat2 dropped; m4 configured by hand instead (from the other primary)
sed -i '/name: cat2.test/,$d' "$T_DIR/shoald.conf"
printf '  - name: m4.test\n    primaries: 127.0.0.1@%s NOKEY\n' "$PORTQ" >>"$T_DIR/shoald.conf"
out=$(ctl reconfig)
check_match "a reconfig dropping cat2 removes its member m3" "removed: cat2\.test\., m3\.test\." \
	"$out"
if wait_until 30 refused m3.test; then
	pass "m3 answers REFUSED with its catalog gone"
else
	fail "m3 with cat2 gone: $(q "$PORT" www.m3.test A | grep status)"
fi
# the step that forgets cat2 runs after the reconfig: m4 is not among what it removes
wait_until 30 log_has "catalog cat2\.test\. \(no longer a consumer\)" || true
check_eq "m4, now configured by hand, is not mistaken for a de-catalogued member" \
	"" "$(grep -E 'removed: [^;]*m4\.test' "$T_DIR/shoald.log")"
check_eq "m4 answers" 192.0.2.11 "$(www m4.test)"
check_eq "m2 still answers" 192.0.2.22 "$(www m2.test)"

# --- a restart with the primaries down: the members answer from their saved files ---
stop_within "$SHOALD_PID"
check_eq "shoald exits 0 (no sanitizer report)" 0 $?
for p in $PRIMARY_PIDS; do stop_within "$p"; done
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
if wait_until 30 answers m2.test 192.0.2.22; then
	pass "after a restart, m2 answers from its saved file with its primary down"
else
	fail "m2 after a restart: [$(www m2.test)]"
fi
check_eq "m3 stays removed" "" "$(www m3.test)"

# --- shoalctl restart (a takeover: the zones are read before the sockets are taken) ---
reply=$(ctl restart)
PID=$(printf '%s\n' "$reply" | sed -n 's/^restarted: pid \([0-9]*\) serves now.*/\1/p')
check_match "shoalctl restart: a new process serves" '^[0-9]+$' "$PID"
if wait_until 30 answers m2.test 192.0.2.22; then
	pass "after shoalctl restart, m2 is served by the new process"
else
	fail "m2 after shoalctl restart: [$(www m2.test)]"
fi
check_match "... which added the catalog's members itself" \
	"shoald\[$PID\]: info: catalog cat\.test\.: 1 members; 1 added" "$(cat "$T_DIR/shoald.log")"
wait "$SHOALD_PID"
check_eq "the old process exits 0" 0 $?
kill -TERM "$PID"
wait_until 60 gone "$PID" && pass "the new process stops" || fail "the new process stops"
done_testing
