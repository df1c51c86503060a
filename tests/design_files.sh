#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/design_files.sh [DIR]: every source file under proto/, zone/, server/
# and tools/ is named in doc/design.md's file tables, so the map cannot drift.
# A table belongs to the folder its heading names (a heading such as
# "### server/net/" or "## zone/, file by file"); its rows name files relative
# to that folder, in backquotes (`udp.c`, `tcp.c`, `tcp.h`); a name written
# from the root (`tests/bench/ceiling.c`) is taken as it is. With DIR, check
# that tree: every file no table names, and every name that is no file, is
# printed and the exit status is 1. Without, as in make check: check the
# source tree, then a copy whose design.md lost one row, which must fail.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SHOAL_SRCDIR=${SHOAL_SRCDIR:-$(cd "$HERE/.." && pwd)}
FOLDERS="proto zone server tools"

# check_tree DIR: print the files of DIR missing from its doc/design.md; 1 if any.
check_tree() {
	(
		cd "$1" || exit 99
		[ -f doc/design.md ] || { echo "design_files: no doc/design.md under $1" >&2; exit 99; }
		# shellcheck disable=SC2086
		files=$(find $FOLDERS -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | LC_ALL=C sort)
		[ -n "$files" ] || { echo "design_files: no source file under $1" >&2; exit 99; }
		awk -v list="$files" -v folders="$FOLDERS" '
		BEGIN {
			n = split(list, f, "\n")
			for (i = 1; i <= n; i++)
				have[f[i]] = 1
			split(folders, t, " ")
			for (i in t)
				top[t[i]] = 1
		}
		# a heading that names a folder starts its tables; any other heading ends them
		/^#+ / {
			folder = ""
			if (match($0, /[a-z_]+(\/[a-z_]+)*\//)) {
				p = substr($0, RSTART, RLENGTH)
				first = p
				sub(/\/.*/, "", first)
				if (first in top)
					folder = p
			}
			next
		}
		folder != "" && /^\|/ {
			row = $0
			while (match(row, /`[^`]+`/)) {
				name = substr(row, RSTART + 1, RLENGTH - 2)
				row = substr(row, RSTART + RLENGTH)
				if (name !~ /^[A-Za-z0-9_\/]+\.[ch]$/)
					continue
				# a path from the root (tests/bench/ceiling.c) is taken as it is
				if (name ~ /^(proto|zone|server|tools|tests|doc)\//) {
					first = name
					sub(/\/.*/, "", first)
					if (first in top)
						named[name] = FNR
					continue
				}
				named[folder name] = FNR
			}
		}
		END {
			missing = 0
			for (i = 1; i <= n; i++)
				if (!(f[i] in named)) {
					printf "%s: not named in doc/design.md'"'"'s file tables\n", f[i]
					missing++
				}
			for (p in named)
				if (!(p in have)) {
					printf "doc/design.md:%d: `%s` names no file\n", named[p], p
					missing++
				}
			if (missing) {
				printf "design_files: %d of %d files or names do not match\n", missing, n
				exit 1
			}
			printf "design_files: all %d files of %s are named in doc/design.md\n", n, folders
		}' doc/design.md
	)
}

if [ $# -gt 0 ]; then
	check_tree "$1"
	exit $?
fi

status=0
echo "=== the source tree"
check_tree "$SHOAL_SRCDIR" || status=1

# The control run: the same tree with one file's row taken out of design.md,
# which the check must fail on and name.
echo "=== a control tree whose design.md lost proto/wire.h (the check must name it)"
T=$(mktemp -d /tmp/shoal-design.XXXXXX)
trap 'rm -rf "$T"' EXIT
for d in $FOLDERS doc; do
	cp -r "$SHOAL_SRCDIR/$d" "$T/$d"
done
grep -v '`wire\.h`' "$SHOAL_SRCDIR/doc/design.md" >"$T/doc/design.md"
out=$(check_tree "$T")
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 1 ] || ! printf '%s\n' "$out" | grep -q '^proto/wire\.h: not named'; then
	echo "FAIL: the check did not name proto/wire.h, missing from the table (exit $rc)"
	status=1
fi
[ $status -eq 0 ] && echo "design_files: every file is on the map; a file left off is named"
exit $status
