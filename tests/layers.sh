#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/layers.sh [DIR]: the layers' include rules, checked.
#   proto/   includes only proto/;
#   zone/    includes only proto/ and zone/ (so nothing of server/ or tools/);
#   server/  is in folders by concern, each including only the folders before
#            it in SERVER_ORDER (and proto/, zone/), never one after it;
#   an internal header (*internal.h) is for the files of its own folder only;
#   tests/   include a folder's internal header only in a test of that folder's
#            internals, which its name tells: tests/*/test_<folder>_*.c and
#            fuzz_<folder>*.c (<folder> the top folder or the sub-folder's own
#            name), or test_<module>.c of <folder>/<module>.c.
# Includes are read as the compiler finds them: "x.h" beside the file first,
# then from the root. With DIR, check that tree: every include that breaks a
# rule is printed as FILE:LINE and the exit status is 1. Without, as in make
# check: check the source tree, then a control tree with one include that
# breaks each rule, which the check must name, each of them.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SHOAL_SRCDIR=${SHOAL_SRCDIR:-$(cd "$HERE/.." && pwd)}
FOLDERS="proto zone server tools tests"
# server/'s folders, each after every folder it may include
SERVER_ORDER="common conf events query net ctl daemon"

# check_tree DIR: print the includes of DIR that break a rule; 1 if any.
check_tree() {
	(
		cd "$1" || exit 99
		# shellcheck disable=SC2086
		files=$(find $FOLDERS -type f -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
		[ -n "$files" ] || { echo "layers: no C file under $1" >&2; exit 99; }
		# shellcheck disable=SC2086
		awk -v list="$files" -v folders="$FOLDERS" -v server_order="$SERVER_ORDER" '
		BEGIN {
			n = split(list, f, "\n")
			for (i = 1; i <= n; i++)
				have[f[i]] = 1
			split(folders, t, " ")
			for (i in t)
				top[t[i]] = 1
			k = split(server_order, o, " ")
			for (i = 1; i <= k; i++)
				rank["server/" o[i]] = i
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
		function dirof(p) { sub(/\/[^\/]*$/, "", p); return p }
		function internal(p) { return base(p) ~ /internal\.h$/ }
		# the folder of server/ a path lies in ("server/net"), or ""
		function server_folder(p,   parts) {
			if (split(p, parts, "/") < 3 || parts[1] != "server")
				return ""
			return "server/" parts[2]
		}
		# whether a test file tests the internals of folder d, by its name (see the header)
		function tests_folder(file, d,   b, rest, word, first) {
			b = base(file)
			if (b !~ /^(test|fuzz)_/)
				return 0
			rest = b
			sub(/^(test|fuzz)_/, "", rest)
			sub(/\.c$/, "", rest)
			word = rest
			sub(/_.*/, "", word)
			first = d
			sub(/\/.*/, "", first)
			return word == first || word == base(d) || ((d "/" rest ".c") in have) ||
			       ((d "/" word ".c") in have)
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
			from_s = server_folder(FILENAME)
			to_s = server_folder(target)
			if (folder == "proto" && to != "proto")
				bad("proto/ includes only proto/")
			else if (folder == "zone" && to != "proto" && to != "zone")
				bad("zone/ includes only proto/ and zone/")
			else if (from_s != "" && to == "server" && !(to_s in rank))
				bad(to_s "/ is no folder of server/ in the order")
			else if (from_s != "" && to_s != "" && rank[to_s] > rank[from_s])
				bad(from_s "/ includes only the folders before it (" server_order \
				    "), not " to_s "/")
			else if (folder != "tests" && internal(target) && dirof(target) != dirof(FILENAME))
				bad(dirof(FILENAME) "/ includes no other folder'"'"'s internal header")
			else if (folder == "tests" && internal(target) && to != "tests" &&
				 !tests_folder(FILENAME, dirof(target)))
				bad("only a test of " dirof(target) "/ (test_" base(dirof(target)) "_*, fuzz_" \
				    base(dirof(target)) "*, test_<module of " dirof(target) "/>) includes its internal header")
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
mkdir -p "$T"/proto "$T"/zone "$T"/server/common "$T"/server/conf "$T"/server/net \
	"$T"/server/ctl "$T"/tools "$T"/tests/unit "$T"/tests/fuzz
inc() { printf '#include "%s"\n' "$2" >>"$T/$1"; }
touch "$T"/zone/zone.h "$T"/zone/internal.h "$T"/server/common/stats.h "$T"/server/net/internal.h \
	"$T"/server/net/tcp.c "$T"/server/net/socket.h "$T"/server/ctl/control.h "$T"/zone/load.c
inc proto/name.c zone/zone.h                    # proto/ reaching up
inc zone/answer.c server/common/stats.h         # zone/ reaching up
inc zone/store.c ../server/common/stats.h       # the same, by a relative path
inc server/net/udp.c zone/internal.h            # server/ inside zone/
inc tools/checkzone.c zone/internal.h           # tools/ inside zone/
inc tests/unit/test_name.c zone/internal.h
inc tests/unit/test_control.c zone/internal.h   # a test of server/, not of zone/
inc tests/fuzz/replay.c server/net/internal.h
inc server/conf/conf.h server/net/socket.h      # conf/ reaching up to net/
inc server/net/worker.c ../ctl/control.h        # net/ reaching up to ctl/, relatively
inc server/ctl/metrics.c server/net/internal.h  # another folder's internal header
inc server/conf/acl.c server/misc/x.h           # a folder not in the order
inc zone/build.c internal.h                     # kept: zone/internal.h inside zone/
inc tests/unit/test_zone_load.c zone/internal.h # kept: a test of zone/
inc tests/unit/test_tcp.c server/net/internal.h # kept: a test of server/net/tcp.c
inc server/net/tcp_conn.c internal.h            # kept: server/net/internal.h inside net/
inc server/ctl/control.c server/net/socket.h    # kept: ctl/ includes net/, before it
out=$(check_tree "$T")
rc=$?
printf '%s\n' "$out"
want="proto/name.c:1 zone/answer.c:1 zone/store.c:1 server/net/udp.c:1 tools/checkzone.c:1
tests/unit/test_name.c:1 tests/unit/test_control.c:1 tests/fuzz/replay.c:1 server/conf/conf.h:1
server/net/worker.c:1 server/ctl/metrics.c:1 server/conf/acl.c:1"
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
if [ "$n" -ne 12 ]; then
	echo "FAIL: the check named $n includes, not the 12 wrong ones"
	status=1
fi
[ $status -eq 0 ] && echo "layers: the source tree keeps the rules; the control tree's 12 wrong includes are named"
exit $status
