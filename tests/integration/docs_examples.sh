#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# docs_examples: what the README, the man pages and examples/ tell an operator
# to type agrees with the programs. The README's first screen and .ci/demo
# name one port, never 5353 (mDNS, which avahi holds on many machines); every
# control socket path the docs give lies in the default's folder (the unit's
# RuntimeDirectory, where the user shoal may make a socket); every example
# configuration passes shoald --check (a secondary's where its state folder is writable).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

README=$SHOAL_SRCDIR/README.md
DEMO=$SHOAL_SRCDIR/.ci/demo

if [ ! -f "$DEMO" ]; then
	echo "SKIP: no .ci/demo (not in a release tarball)"
	exit 77
fi
demo_port=$(sed -n 's/.*--listen 127\.0\.0\.1@\([0-9]*\).*/\1/p' "$DEMO")
check_match ".ci/demo listens on one port" '^[0-9]+$' "$demo_port"
[ "$demo_port" != 5353 ] && pass "the demo's port is not mDNS's 5353" ||
	fail "the demo listens on 5353, mDNS's port"
readme_ports=$(sed -n '1,/^## /p;/^## Install/q' "$README" | grep -oE '(port |-p )[0-9]+' |
	awk '{print $2}' | sort -u)
check_eq "the README's first screen names the demo's port, and only it" "$demo_port" \
	"$readme_ports"
demo_digs=$(grep -oE 'dig @127\.0\.0\.1 -p [0-9]+' "$DEMO" | awk '{print $4}' | sort -u)
check_eq "the dig lines .ci/demo prints ask that port" "$demo_port" "$demo_digs"

# control paths: YAML `control:` lines and the paths after --control, --takeover and -s
docs=("$README" "$SHOAL_SRCDIR"/man/*.in "$SHOAL_SRCDIR"/examples/*.conf
	"$SHOAL_SRCDIR"/etc/shoald.conf.in "$SHOAL_SRCDIR/doc/design.md")
paths=$(grep -hoE '(control: |\\?-\\?-control |\\?-\\?-takeover |\\?-s )/[^ "`]+' "${docs[@]}" |
	awk '{print $2}' | sort -u)
check_match "the docs name control paths" '\.ctl' "$paths"
stray=$(printf '%s\n' "$paths" | grep -vE '^(/run|@runstatedir@)/shoal/[^/]+\.ctl$')
check_eq "every control path in the docs is in the default's folder (/run/shoal/)" "" "$stray"

# a secondary's saved zone lies in /var/lib/shoal (state-dir): where this user cannot make
# files there, --check says so by name, and that is the one failure allowed
for conf in "$SHOAL_SRCDIR"/examples/*.conf; do
	out=$("$SHOALD" --check -c "$conf" 2>&1) && pass "$(basename "$conf") passes shoald --check" ||
		if [ ! -w /var/lib/shoal ] &&
			printf '%s\n' "$out" | grep -q 'transfers cannot be saved in /var/lib/shoal'; then
			pass "$(basename "$conf"): --check names /var/lib/shoal, not writable here"
		else
			fail "$(basename "$conf") does not pass shoald --check: $out"
		fi
done
done_testing
