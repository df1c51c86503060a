#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_config: a bad configuration stops start-up with FILE:LINE: reason; --check;
# --help and man/shoald.8 list the same options.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONEFILE=$EXAMPLES/example.com.zone

# bad_config NAME EXPECTED-REGEX: write $T_DIR/NAME.conf from stdin, run --check on it.
bad_config() {
	local conf=$T_DIR/$1.conf out rc
	cat >"$conf"
	out=$("$SHOALD" --check -c "$conf" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then pass "$1: exit status $rc"; else fail "$1: exit status 0"; fi
	check_match "$1: message" "$2" "$out"
}

bad_config unknown-key "$T_DIR/unknown-key.conf:3: unknown key \"thraeds\"" <<CONF
listen:
  - 127.0.0.1@5353
thraeds: 2
CONF

bad_config bad-number "$T_DIR/bad-number.conf:2: threads: \"lots\" is not a number" <<CONF
# a comment
threads: lots
CONF

bad_config bad-listen "$T_DIR/bad-listen.conf:4: listen: \"127.0.0.300@53\" is not ADDR@PORT" <<CONF
nsid: x

listen:
  - 127.0.0.300@53
CONF

bad_config bad-enum "$T_DIR/bad-enum.conf:1: socket-mode: \"many\" is not one of" <<CONF
socket-mode: many
CONF

bad_config missing-zone "$T_DIR/missing-zone.conf:5: zone example.com: cannot read file /nonexistent/zone" <<CONF
threads: 1
zones:
  - name: example.com
    file: $ZONEFILE
  - { name: example.com, file: /nonexistent/zone }
CONF

bad_config zone-key "$T_DIR/zone-key.conf:4: zones: unknown key \"path\"" <<CONF
threads: 1
zones:
  - name: example.com
    path: $ZONEFILE
CONF

bad_config yaml-syntax "$T_DIR/yaml-syntax.conf:[23]: " <<CONF
threads: 1
listen: [127.0.0.1@53
CONF

out=$("$SHOALD" --threads 0 --check 2>&1)
check_match "bad --threads value" 'threads: "0" is not a number from 1 to' "$out"
out=$("$SHOALD" --no-such-option 2>&1)
check_eq "an unknown option exits 2 (usage)" 2 $?
check_match "unknown command-line option" 'unknown option "--no-such-option"' "$out"
"$SHOALD" --threads >/dev/null 2>&1
check_eq "an option without its value exits 2" 2 $?
"$SHOALD" --threads 0 --check >/dev/null 2>&1
check_eq "a bad value on the command line exits 2" 2 $?
"$SHOALD" --check stray-argument >/dev/null 2>&1
check_eq "a stray argument exits 2" 2 $?
out=$("$SHOALD" --version)
check_match "--version" "^shoald [0-9]+\.[0-9]+" "$out"
out=$("$SHOALD" --zone example.com=/nonexistent --check 2>&1)
check_match "--zone with a missing file" 'cannot read file /nonexistent' "$out"

cat >"$T_DIR/good.conf" <<CONF
listen: [127.0.0.1@5353, "::1@5353"]
threads: 2
socket-mode: shared
nsid: ns1
nsid-thread: no
log-level: debug
syslog: no
edns-size: 1400
tcp-idle-timeout: 2000
tcp-max-connections: 10
tcp-message-timeout: 1000
tcp-max-output: 100000
zones:
  - name: example.com
    file: $ZONEFILE
CONF
out=$("$SHOALD" --check -c "$T_DIR/good.conf" 2>&1)
check_eq "--check of a good file exits 0" 0 $?
check_match "--check says OK" "configuration and 1 zone\(s\) OK" "$out"
# the example names its zone relative to the source tree
out=$(cd "$SHOAL_SRCDIR" && "$SHOALD" --check -c examples/shoald.conf 2>&1)
check_eq "examples/shoald.conf passes --check" 0 $?

# --help and man/shoald.8 name the same long options.
"$SHOALD" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u >"$T_DIR/help.opts"
sed -n 's/\\-/-/g; s/\\f[BIR]//g; p' "$SHOAL_SRCDIR/man/shoald.8.in" | grep -E '^-' |
	grep -oE -- '--[a-z][a-z-]+' | sort -u >"$T_DIR/man.opts"
check_eq "--help and shoald(8) list the same options" "$(cat "$T_DIR/help.opts")" "$(cat "$T_DIR/man.opts")"
check_match "--version" "^shoald [0-9]" "$("$SHOALD" --version)"
done_testing
