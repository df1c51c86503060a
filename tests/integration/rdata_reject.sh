#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# rdata_reject: every zone file of tests/integration/zones/rdata-reject has one
# record whose RDATA is wrong for its type (marked "<- refused"); shoal-checkzone
# refuses each with FILE:LINE of that record. Each file names the other
# checkers that refuse it ("; rejected-by: nsd knot"); when they are installed
# they must refuse it too (and accept the same file without that record), so
# the corpus stays honest.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

CHECKZONE=$SHOAL_BUILDDIR/tools/shoal-checkzone
CORPUS=$SHOAL_SRCDIR/tests/integration/zones/rdata-reject
ORIGIN=bad.test.

# knot_check FILE: exit status of Knot's zone loader on FILE (kzonecheck, or
# knotc zone-check without a running server, which Debian 12's knot has).
knot_check() {
	if command -v kzonecheck >/dev/null; then
		kzonecheck -o "$ORIGIN" "$1" >/dev/null 2>&1
		return $?
	fi
	mkdir -p "$T_DIR/knot"
	cat >"$T_DIR/knot/knot.conf" <<CONF
server:
    rundir: $T_DIR/knot
database:
    storage: $T_DIR/knot
zone:
  - domain: $ORIGIN
    file: $1
CONF
	timeout 30 knotc -c "$T_DIR/knot/knot.conf" zone-check "$ORIGIN" >/dev/null 2>&1
}
have_nsd=false
command -v nsd-checkzone >/dev/null && have_nsd=true
have_knot=false
{ command -v kzonecheck >/dev/null || command -v knotc >/dev/null; } && have_knot=true
echo "nsd-checkzone: $have_nsd, Knot: $have_knot"

count=0
for f in "$CORPUS"/*.zone; do
	name=$(basename "$f")
	line=$(grep -n '<- refused' "$f" | cut -d: -f1)
	out=$("$CHECKZONE" -q "$ORIGIN" "$f" 2>&1)
	check_eq "$name: shoal-checkzone refuses it" 1 $?
	check_match "$name: at FILE:LINE" "^error: $f:$line: " "$out"
	by=$(sed -n 's/^; rejected-by: //p' "$f")
	# the same file without the bad record: every checker accepts it
	grep -v '<- refused' "$f" >"$T_DIR/good.zone"
	if [ "$(basename "$f" .zone)" = soa-short ]; then
		sed -i '/^\$TTL/a @ SOA ns1 hm 1 2 3 4 5' "$T_DIR/good.zone"
	fi
	"$CHECKZONE" -q "$ORIGIN" "$T_DIR/good.zone" >/dev/null 2>&1
	check_eq "$name without that record: shoal-checkzone loads it" 0 $?
	if $have_nsd && [[ " $by " == *" nsd "* ]]; then
		nsd-checkzone "$ORIGIN" "$f" >/dev/null 2>&1
		rc=$?
		[ $rc -ne 0 ] && [ $rc -lt 128 ] && pass "$name: nsd-checkzone refuses it" ||
			fail "$name: nsd-checkzone exit $rc"
		nsd-checkzone "$ORIGIN" "$T_DIR/good.zone" >/dev/null 2>&1
		check_eq "$name without that record: nsd-checkzone loads it" 0 $?
	fi
	if $have_knot && [[ " $by " == *" knot "* ]]; then
		knot_check "$f"
		rc=$?
		[ $rc -ne 0 ] && [ $rc -lt 128 ] && pass "$name: Knot refuses it" ||
			fail "$name: Knot exit $rc"
		knot_check "$T_DIR/good.zone"
		check_eq "$name without that record: Knot loads it" 0 $?
	fi
	count=$((count + 1))
done
if [ "$count" -ge 20 ]; then
	pass "$count zone files in the corpus"
else
	fail "only $count zone files in $CORPUS"
fi
done_testing
