#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_many_zones: 20,000 zones (the configuration once refused more than 4,096) load and
# answer; a reload of one zone, a zone-add and a zone-remove change that zone alone (every
# other zone's line of zone-status, load time included, stays as it was: the same version);
# zone-status shows one zone, or a page of them with the next page's start; shoalctl stats
# lists only the zones that were asked. zone-add and zone-remove under load lose no query.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONES=20000
chmod 755 "$T_DIR"
# relative names: one file serves every zone
cp "$SHOAL_SRCDIR/tests/integration/zones/small.zone" "$T_DIR/zone.db"
cp "$T_DIR/zone.db" "$T_DIR/z7.db"
PORT=$(free_port) || exit 99
{
	printf 'listen: [127.0.0.1@%s]\nthreads: 1\ncontrol: %s/ctl\nzones-dir: %s\nzones:\n' \
		"$PORT" "$T_DIR" "$T_DIR"
	awk -v n=$ZONES 'BEGIN {
		for (i = 0; i < n; i++)
			printf "  - {name: z%d.many, file: %s}\n", i, (i == 7 ? "z7.db" : "zone.db")
	}'
} >"$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@"; }
q() { "$DIG" @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 "$@"; }

check_match "the first zone answers" "^192.0.2.3$" "$(q +short www.z0.many A)"
check_match "the last zone answers" "^192.0.2.4$" "$(q +short host.z$((ZONES - 1)).many A)"
check_match "a name in no zone is refused" "status: REFUSED" "$(q www.z$ZONES.many A)"

all=$(ctl zone-status)
check_eq "zone-status lists every zone" $ZONES "$(printf '%s\n' "$all" | grep -c '^z[0-9]*\.many\. serial 1 ')"
check_match "zone-status ZONE: that zone" "^z123\\.many\\. serial 1 rrs 7 loaded 2" "$(ctl zone-status z123.many)"
check_eq "and only it" 1 "$(ctl zone-status z123.many | wc -l)"
page=$(ctl zone-status 100 50)
check_eq "zone-status FROM COUNT: a page" 50 "$(printf '%s\n' "$page" | grep -c ' serial ')"
check_match "from the FROMth zone" "^z100\\.many\\. " "$(printf '%s\n' "$page" | head -1)"
check_eq "then where the next page starts" "next 150" "$(printf '%s\n' "$page" | tail -1)"
check_eq "the last page says no next" 0 "$(ctl zone-status $((ZONES - 10)) 50 | grep -c '^next')"
ctl zone-status no.such.zone >/dev/null 2>&1
check_eq "zone-status of a zone not configured exits 1" 1 $?

# the load times are seconds: a change a second later shows in the changed zone's line
sleep 1.1
# others: every line but ZONE's, as zone-status shows them
others() { printf '%s\n' "$1" | grep -v "^$2\\. "; }
sed -i 's/ 1 7200/ 2 7200/' "$T_DIR/z7.db"
ctl reload z7.many >/dev/null
check_eq "reload of one zone exits 0" 0 $?
after=$(ctl zone-status)
check_match "that zone serves its new serial" "^z7\\.many\\. serial 2 " "$(ctl zone-status z7.many)"
if [ "$(others "$all" z7.many)" = "$(others "$after" z7.many)" ]; then
	pass "every other zone keeps its version and load time"
else
	fail "a reload of z7.many changed other zones: $(diff <(others "$all" z7.many) <(others "$after" z7.many) | head -5)"
fi

ctl zone-add added.many "$T_DIR/zone.db" >/dev/null
check_eq "zone-add exits 0" 0 $?
check_match "the zone added answers" "^192.0.2.3$" "$(q +short www.added.many A)"
added=$(ctl zone-status)
if [ "$(others "$after" added.many)" = "$(others "$added" added.many)" ]; then
	pass "zone-add leaves every other zone as it was"
else
	fail "zone-add changed other zones"
fi
ctl zone-remove z5.many >/dev/null
check_eq "zone-remove exits 0" 0 $?
check_match "the zone removed is refused" "status: REFUSED" "$(q www.z5.many A)"
removed=$(ctl zone-status)
check_eq "zone-status has one zone less" 0 "$(printf '%s\n' "$removed" | grep -c '^z5\.many\. ')"
if [ "$(others "$added" z5.many)" = "$removed" ]; then
	pass "zone-remove leaves every other zone as it was"
else
	fail "zone-remove changed other zones"
fi
check_match "the others still answer" "^192.0.2.3$" "$(q +short www.z6.many A)"

# zone-add and zone-remove under load: each set derived from the one served, the entries it
# shares handed over when it is published in its place, while a worker reads the old one. 20
# rounds while shoal-flood asks for names across the zones, those removed among them: every
# query is answered, and after them the zones added answer, those removed are refused.
if [ -x "$SHOAL_FLOOD" ]; then
	awk -v n=$ZONES 'BEGIN { for (i = 0; i < 2000; i++) printf "www.z%d.many. A\n", (i * 7919) % n }' \
		>"$T_DIR/spread.q"
	"$SHOAL_FLOOD" -s 127.0.0.1 -p "$PORT" -d "$T_DIR/spread.q" -l 4 -Q 1000 -c 8 -w 2 \
		--json >"$T_DIR/flood.json" 2>"$T_DIR/flood.err" &
	FLOOD=$!
	T_PIDS="$T_PIDS $FLOOD"
	rounds=0
	for r in $(seq 20); do
		ctl zone-add "round$r.many" "$T_DIR/zone.db" >/dev/null &&
			ctl zone-remove "z$((100 + r * 7)).many" >/dev/null && rounds=$((rounds + 1))
	done
	wait "$FLOOD"
	json=$(cat "$T_DIR/flood.json")
	echo "# under zone-add/zone-remove: sent $(json_value "$json" sent), lost $(json_value "$json" lost)"
	check_eq "20 rounds of zone-add and zone-remove under load exit 0" 20 "$rounds"
	check_eq "no query lost meanwhile" 0 "$(json_value "$json" lost)"
	check_match "a zone added under load answers" "^192.0.2.3$" "$(q +short www.round20.many A)"
	check_match "a zone removed under load is refused" "status: REFUSED" "$(q www.z240.many A)"
	check_match "the zone after it answers" "^192.0.2.3$" "$(q +short www.z241.many A)"
else
	echo "# SKIP zone-add and zone-remove under load: $SHOAL_FLOOD not built"
fi

# counters: the zones asked have rows, the other 19,997 none
table=$(ctl stats)
check_match "a zone asked has its row" "^zone z6\\.many\\. answers +[1-9]" "$table"
check_eq "a zone never asked has none" 0 "$(printf '%s\n' "$table" | grep -c '^zone z9\.many\. ')"

stop_pid "$SHOALD_PID"
check_eq "shoald exits 0" 0 $?
done_testing
