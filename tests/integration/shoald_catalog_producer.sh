#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_catalog_producer: a catalog zone made by shoald (RFC 9432, catalog-role producer)
# from the zones naming it in catalog-member-of: its records over AXFR; the same serial and
# unique ids after a restart; a reconfig that adds a member or removes one changes the
# catalog by one IXFR (the old serial's SOA, the PTR added or deleted, no other member), and
# a member removed and added back gets a new id (RFC 9432 5.4). shoalctl zone-add --catalog
# adds a member and zone-remove removes one, each by one IXFR of the catalog.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
PORT=$(free_port) || exit 99
mkdir -p "$T_DIR/state"
for z in a b c d e; do
	printf '$ORIGIN %s.test.\n@ 300 IN SOA ns hostmaster 1 3600 600 86400 300\n@ 300 IN NS ns\nns 300 IN A 192.0.2.1\n' \
		"$z" >"$T_DIR/$z.zone"
done
# conf MEMBER...: a.test, b.test, c.test served; the members named are in cat.test (a.test
# in group "blue")
conf() {
	{
		printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nstate-dir: %s/state\nzones:\n' \
			"$PORT" "$T_DIR" "$T_DIR"
		printf '  - name: cat.test\n    catalog-role: producer\n    provide-xfr: 127.0.0.1 NOKEY\n'
		for z in a b c; do
			printf '  - name: %s.test\n    file: %s.zone\n' "$z" "$z"
			case " $* " in
			*" $z "*) printf '    catalog-member-of: cat.test\n' ;;
			esac
			[ "$z" = a ] && printf '    catalog-group: blue\n'
		done
		true
	} >"$T_DIR/shoald.conf.new"
	mv "$T_DIR/shoald.conf.new" "$T_DIR/shoald.conf"
}
# records: the catalog over AXFR, one "owner type rdata" a line, sorted
records() {
	q "$PORT" +nocmd +nostats +noall +answer cat.test AXFR |
		awk '{ o = $1; t = $4; $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print o, t, $0 }' | sort -u
}
serial() { q "$PORT" +short cat.test SOA | awk '{ print $3 }'; }
# moved WHAT OLD NEW: the serial went forward (the clock's, or one more: RFC 1982)
moved() {
	if [ -n "$3" ] && [ "$3" -gt "$2" ]; then pass "$1"; else fail "$1 ($2 -> $3)"; fi
}
# id_of MEMBER: its unique id in the catalog
id_of() { records | awk -v m="$1." '$2 == "PTR" && $3 == m { split($1, l, "."); print l[1] }'; }

conf a b
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
out=$(records)
echo "$out"
check_match "NS invalid. (RFC 9432 4.1)" "^cat\\.test\\. NS invalid\\.$" "$out"
check_match "version TXT \"2\" (4.2.1)" '^version\.cat\.test\. TXT "2"$' "$out"
check_match "a.test is a member under zones" '^[0-9a-f]{16}\.zones\.cat\.test\. PTR a\.test\.$' "$out"
check_match "b.test too" '^[0-9a-f]{16}\.zones\.cat\.test\. PTR b\.test\.$' "$out"
check_eq "c.test is not" "" "$(echo "$out" | grep 'PTR c\.test')"
check_match "a.test's group (4.4.2)" '^group\.[0-9a-f]{16}\.zones\.cat\.test\. TXT "blue"$' "$out"
check_eq "two members, two ids" 2 "$(echo "$out" | grep -c ' PTR ')"
s1=$(serial)
a1=$(id_of a.test)
b1=$(id_of b.test)
check_match "a serial" "^[0-9]+$" "$s1"
check_match "zone-status names a member's catalog and group" \
	"^a\.test\. serial 1 .* catalog cat\.test\. group blue" "$(ctl zone-status a.test)"
check_match "and in JSON" '"catalog":"cat\.test\.","catalog_group":"blue"' \
	"$(ctl zone-status a.test --json)"
check_eq "a zone in no catalog names none" "" "$(ctl zone-status c.test | grep ' catalog ')"
check_match "the log says the catalog was made" "catalog cat\.test\.: 2 members \(had 0\), serial $s1" \
	"$(cat "$T_DIR/shoald.log")"

# --- a restart: the same zone, serial and ids ---
stop_pid "$SHOALD_PID"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "after a restart, the same serial" "$s1" "$(serial)"
check_eq "and the same records" "$out" "$(records)"

# --- a reconfig adds c.test: one IXFR of the catalog ---
conf a b c
r=$(ctl reconfig)
check_eq "reconfig exits 0" 0 $?
wait_until 10 test "$(serial)" != "$s1"
s2=$(serial)
moved "the serial moved on" "$s1" "$s2"
c2=$(id_of c.test)
check_match "c.test is a member" "^[0-9a-f]{16}$" "$c2"
check_eq "a.test keeps its id" "$a1" "$(id_of a.test)"
check_eq "b.test keeps its id" "$b1" "$(id_of b.test)"
ixfr=$(q "$PORT" +nocmd +nostats +noall +answer cat.test "IXFR=$s1")
echo "$ixfr"
check_eq "the IXFR is incremental: the new SOA, the old, the new (RFC 1995 4)" \
	"$s2 $s1 $s2 $s2" "$(echo "$ixfr" | awk '$4 == "SOA" { printf "%s%s", sep, $7; sep = " " }')"
check_match "it adds c.test's PTR" "$c2\.zones\.cat\.test\..*PTR.*c\.test\." "$ixfr"
check_eq "and carries no other member" "" "$(echo "$ixfr" | grep -E 'PTR\s+[ab]\.test\.')"

# --- a reconfig removes b.test from the catalog (it stays a zone) ---
conf a c
ctl reconfig >/dev/null
wait_until 10 test "$(serial)" != "$s2"
s3=$(serial)
check_eq "b.test is no longer a member" "" "$(id_of b.test)"
ixfr=$(q "$PORT" +nocmd +nostats +noall +answer cat.test "IXFR=$s2")
check_eq "one IXFR deletes its PTR" "$s3 $s2 $s3 $s3" \
	"$(echo "$ixfr" | awk '$4 == "SOA" { printf "%s%s", sep, $7; sep = " " }')"
check_match "b.test's PTR deleted" "$b1\.zones\.cat\.test\..*PTR.*b\.test\." "$ixfr"
check_match "b.test itself is still served" "status: NOERROR" "$(q "$PORT" b.test SOA)"

# --- b.test back: a new id (RFC 9432 5.4) ---
conf a b c
ctl reconfig >/dev/null
wait_until 10 test "$(serial)" != "$s3"
b2=$(id_of b.test)
check_match "b.test is a member again" "^[0-9a-f]{16}$" "$b2"
if [ "$b2" != "$b1" ]; then
	pass "with a new id"
else
	fail "with a new id (still $b1)"
fi
# a reconfig that changes no member leaves the catalog as it is
s4=$(serial)
ctl reconfig >/dev/null
check_eq "a reconfig without a member change keeps the serial" "$s4" "$(serial)"

# --- zone-add --catalog: d.test served, and a member by one IXFR, before the reply ---
out=$("$SHOALCTL" -s "$T_DIR/ctl" zone-add d.test "$T_DIR/d.zone" --catalog cat.test 2>&1)
check_eq "zone-add --catalog exits 0" 0 $?
check_match "its reply says the catalog was updated" "catalog cat\.test\.: updated" "$out"
s5=$(serial)
moved "the catalog's serial moved on, by the time of the reply" "$s4" "$s5"
d1=$(id_of d.test)
check_match "d.test is a member" "^[0-9a-f]{16}$" "$d1"
check_match "d.test answers" "status: NOERROR" "$(q "$PORT" d.test SOA)"
check_match "zone-status names its catalog" " catalog cat\.test\. journal " "$(ctl zone-status d.test)"
check_match "it is transferred as the catalog is (its consumers take it)" "ns\.d\.test\..*A.*192\.0\.2\.1" \
	"$(q "$PORT" d.test AXFR)"
ixfr=$(q "$PORT" +nocmd +nostats +noall +answer cat.test "IXFR=$s4")
check_eq "one IXFR adds it" "$s5 $s4 $s5 $s5" \
	"$(echo "$ixfr" | awk '$4 == "SOA" { printf "%s%s", sep, $7; sep = " " }')"
check_eq "with its PTR alone" "1" "$(echo "$ixfr" | grep -c 'PTR')"
out=$(ctl zone-add e.test "$T_DIR/d.zone" --catalog a.test)
check_eq "zone-add --catalog naming no producer exits 1" 1 $?
check_match "and says why" "a\.test\. is not a zone with catalog-role: producer" "$out"
check_match "nothing changed" "status: REFUSED" "$(q "$PORT" e.test SOA)"

# --- zone-remove of a member: out of the catalog by one IXFR ---
out=$(ctl zone-remove d.test)
check_eq "zone-remove exits 0" 0 $?
check_match "d.test is refused" "status: REFUSED" "$(q "$PORT" d.test SOA)"
s6=$(serial)
moved "the catalog's serial moved on" "$s5" "$s6"
check_eq "d.test is no longer a member" "" "$(id_of d.test)"
ixfr=$(q "$PORT" +nocmd +nostats +noall +answer cat.test "IXFR=$s5")
check_match "one IXFR deletes its PTR" "$d1\.zones\.cat\.test\..*PTR.*d\.test\." "$ixfr"
out=$(ctl zone-remove c.test)
check_eq "c.test removed (a member too)" 0 $?
check_eq "then the catalog lists a and b" "a.test. b.test." \
	"$(records | awk '$2 == "PTR" { print $3 }' | sort | tr '\n' ' ' | sed 's/ $//')"
check_match "each change was applied to the catalog as one member, not read whole" \
	"catalog cat\.test\.: d\.test\. removed, serial $s6" "$(cat "$T_DIR/shoald.log")"

# --- a reconfig refused after making the catalog: nothing it did not serve is listed ---
conf a b c
printf 'not a zone file\n' >"$T_DIR/x.zone"
printf '  - name: x.test\n    file: x.zone\n    catalog-member-of: cat.test\n' >>"$T_DIR/shoald.conf"
s7=$(serial)
out=$(ctl reconfig)
check_match "a reconfig with a broken member is refused" "refused" "$out"
check_eq "the catalog served is as it was" "$s7" "$(serial)"
out=$("$SHOALCTL" -s "$T_DIR/ctl" zone-add e.test "$T_DIR/e.zone" --catalog cat.test 2>&1)
check_eq "a zone-add --catalog after it" 0 $?
check_eq "lists the zones served: a, b and e, not c nor x" "a.test. b.test. e.test." \
	"$(records | awk '$2 == "PTR" { print $3 }' | sort | tr '\n' ' ' | sed 's/ $//')"
check_match "(its change did not start at the serial served: the file was read whole)" \
	"catalog cat\.test\.: the change did not apply" "$(cat "$T_DIR/shoald.log")"

# --- a runtime change survives a restart: the catalog's file holds it ---
before=$(records)
s8=$(serial)
stop_pid "$SHOALD_PID"
conf a b
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "after a restart with a and b configured, e.test is gone from the catalog" "" \
	"$(records | grep ' PTR e\.test')"
check_eq "a and b keep their ids" "$(echo "$before" | grep -E ' PTR [ab]\.test')" \
	"$(records | grep -E ' PTR [ab]\.test')"
moved "and the serial moved on from the one served" "$s8" "$(serial)"

# --- a catalog whose file cannot be read is not made anew over the ids it holds ---
conf a
printf '  - name: cat2.test\n    catalog-role: producer\n    provide-xfr: 127.0.0.1 NOKEY\n' \
	>>"$T_DIR/shoald.conf"
sed -i '/^  - name: b.test$/{n;s|$|\n    catalog-member-of: cat2.test|}' "$T_DIR/shoald.conf"
mkdir "$T_DIR/state/catalog-cat2.test.zone"
out=$(ctl reconfig)
check_match "a reconfig with a catalog file that cannot be read is refused" "refused.*catalog cat2\.test\.: cannot read" "$out"
rmdir "$T_DIR/state/catalog-cat2.test.zone"
printf '$ORIGIN cat2.test.\n@ 0 IN SOA invalid. invalid. 7 3600 600 2147483646 0\n@ 0 IN NS invalid.\nversion 0 IN TXT "2"\n0123456789abcdef.zones 0 IN PTR b.test.\n' \
	>"$T_DIR/state/catalog-cat2.test.zone"
out=$(ctl reconfig)
check_eq "once it can be read, the reconfig applies" 0 $?
check_eq "and b.test keeps the id the file gave it" "0123456789abcdef.zones.cat2.test. PTR b.test." \
	"$(q "$PORT" +nocmd +nostats +noall +answer cat2.test AXFR | awk '$4 == "PTR" { print $1, $4, $5 }')"
stop_pid "$SHOALD_PID"

# --- catalog-member-of naming a zone that is not a producer: no start, the line named ---
sed -i 's/catalog-role: producer/catalog-role: none\n    file: a.zone/' "$T_DIR/shoald.conf"
out=$("$SHOALD" -c "$T_DIR/shoald.conf" 2>&1)
check_match "a start with a wrong catalog stops, naming the line" \
	"shoald.conf:[0-9]+: zone a\.test\.: catalog-member-of: cat\.test\. is not a zone with catalog-role: producer" \
	"$out"
done_testing
