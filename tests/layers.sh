#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/layers.sh [DIR]: the layers' include rules, checked.
#   proto/   includes only proto/;
#   zone/    includes only proto/ and zone/ (so nothing of server/ or tools/);
#   server/, tools/  include no other folder's internal header (*internal.h);
#   tests/   include a folder's internal header only in a test of that folder's
#            internals, which its name tells: tests/*/test_<folder>_*.c and
#            fuzz_<folder>*.c, or test_<module>.c of <folder>/<module>.c.
# Includes are read as the compiler finds them: "x.h" beside the file first,
# then from the root. With DIR, check that tree: every include that breaks a
# rule is printed as FILE:LINE and the exit status is 1. Without, as in make
# check: check the source tree, then a control tree with one include that
# breaks each rule, which the check must name, each of them.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SHOAL_SRCDIR=${SHOAL_SRCDIR:-$(cd "$HERE/.." && pwd)}
FOLDERS="proto zone server tools tests"

# check_tree DIR: print the includes of DIR that break a rule; 1 if any.
check_tree() {
	(
		cd "$1" || exit 99
		# shellcheck disable=SC2086
		files=$(find $FOLDERS -type f -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
		[ -n "$files" ] || { echo "layers: no C file under $1" >&2; exit 99; }
		# shellcheck disable=SC2086
		awk -v list="$files" -v folders="$FOLDERS" '
		BEGIN {
			n = split(list, f, "\n")
			for (i = 1; i <= n; i++)
				have[f[i]] = 1
			split(folders, t, " ")
			for (i in t)
				top[t[i]] = 1
		}
		# a/./b/../c -> a/c
		function norm(p,   parts, n, i, out, k) {
			n = split(p, parts, "/")
			k = 0
			for (i = 1; i <= n; i++) {
				if (parts[i] == "." || parts[i] == "")
					continue
				if (parts[i] == ".." && k > 0)
					k--
				else
					out[++k] = parts[i]
			}
			p = out[1]
			for (i = 2; i <= k; i++)
				p = p "/" out[i]
			return p
		}
		function base(p) { sub(/.*\//, "", p); return p }
		function internal(p) { return base(p) ~ /internal\.h$/ }
		# the folder a test file tests, by its name (see the header)
		function tests_folder(file, folder,   b, rest, word) {
			b = base(file)
			if (b !~ /^(test|fuzz)_/)
				return 0
			rest = b
			sub(/^(test|fuzz)_/, "", rest)
			sub(/\.c$/, "", rest)
			word = rest
			sub(/_.*/, "", word)
			return word == folder || ((folder "/" rest ".c") in have) ||
			       ((folder "/" word ".c") in have)
		}
		function bad(rule) {
			printf "%s:%d: #include \"%s\": %s\n", FILENAME, FNR, target, rule
			broken++
		}
		FNR == 1 {
			dir = FILENAME
			sub(/\/[^\/]*$/, "", dir)
			folder = FILENAME
			sub(/\/.*/, "", folder)
		}
		/^[ \t]*#[ \t]*include[ \t]*[<"]/ {
			quoted = $0 ~ /include[ \t]*"/
			target = $0
			sub(/^[^<"]*[<"]/, "", target)
			sub(/[>"].*$/, "", target)
			if (quoted && (norm(dir "/" target) in have))
				target = norm(dir "/" target)
			else
				target = norm(target)
			to = target
			sub(/\/.*/, "", to)
			if (!(to in top))
				next  # the system, libraries, config.h
			checked++
			if (folder == "proto" && to != "proto")
				bad("proto/ includes only proto/")
			else if (folder == "zone" && to != "proto" && to != "zone")
				bad("zone/ includes only proto/ and zone/")
			else if ((folder == "server" || folder == "tools") && internal(target) &&
				 to != folder)
				bad(folder "/ includes no other folder'"'"'s internal header")
			else if (folder == "tests" && internal(target) && to != "tests" &&
				 !tests_folder(FILENAME, to))
				bad("only a test of " to "/ (test_" to "_*, fuzz_" to "*, test_<module of " \
				    to "/>) includes its internal header")
		}
		END {
			if (broken) {
				printf "layers: %d of %d includes break the rules\n", broken, checked
				exit 1
			}
			printf "layers: %d files, %d includes between folders, all within the rules\n",
				NR ? n : 0, checked
		}' $files
	)
}

if [ $# -gt 0 ]; then
	check_tree "$1"
	exit $?
fi

status=0
echo "=== the source tree"
check_tree "$SHOAL_SRCDIR" || status=1

# The control run: a tree of one-line files, each breaking one rule (and two
# that keep them), which the check must fail on and name one by one.
echo "=== a control tree with wrong includes (the check must name each)"
T=$(mktemp -d /tmp/shoal-layers.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T"/proto "$T"/zone "$T"/server "$T"/tools "$T"/tests/unit "$T"/tests/fuzz
inc() { printf '#include "%s"\n' "$2" >>"$T/$1"; }
touch "$T"/zone/zone.h "$T"/zone/internal.h "$T"/server/stats.h "$T"/server/tcp_internal.h \
	"$T"/server/tcp.c "$T"/zone/load.c
inc proto/name.c zone/zone.h          # proto/ reaching up
inc zone/answer.c server/stats.h      # zone/ reaching up
inc zone/store.c ../server/stats.h    # the same, by a relative path
inc server/udp.c zone/internal.h      # server/ inside zone/
inc tools/checkzone.c zone/internal.h # tools/ inside zone/
inc tests/unit/test_name.c zone/internal.h
inc tests/unit/test_control.c zone/internal.h # a test of server/, not of zone/
inc tests/fuzz/replay.c server/tcp_internal.h
inc zone/build.c internal.h                   # kept: zone/internal.h inside zone/
inc tests/unit/test_zone_load.c zone/internal.h # kept: a test of zone/
inc tests/unit/test_tcp.c server/tcp_internal.h # kept: a test of server/tcp.c
out=$(check_tree "$T")
rc=$?
printf '%s\n' "$out"
want="proto/name.c:1 zone/answer.c:1 zone/store.c:1 server/udp.c:1 tools/checkzone.c:1
tests/unit/test_name.c:1 tests/unit/test_control.c:1 tests/fuzz/replay.c:1"
if [ $rc -ne 1 ]; then
	echo "FAIL: the check passed a tree with wrong includes (exit $rc)"
	status=1
fi
for w in $want; do
	if ! printf '%s\n' "$out" | grep -q "^$w: "; then
		echo "FAIL: the check did not name $w"
		status=1
	fi
done
n=$(printf '%s\n' "$out" | grep -c '^[a-z].*:[0-9]*: #include')
if [ "$n" -ne 8 ]; then
	echo "FAIL: the check named $n includes, not the 8 wrong ones"
	status=1
fi
[ $status -eq 0 ] && echo "layers: the source tree keeps the rules; the control tree's 8 wrong includes are named"
exit $status
