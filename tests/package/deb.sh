#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian package, end to end, as a clean machine builds it: in a fresh
# Debian 12 made by debootstrap, `apt-get build-dep ./` on a copy of the
# sources (the repository's files alone) and dpkg-buildpackage as a user
# that is not root, with the test suite dh runs (make check) unless
# SHOAL_DEB_NOCHECK=1; so every build dependency, the test suite's
# included, is in debian/control. Then lintian (no error), what the package
# holds (the programs, man pages, unit, configuration, README and every
# example shoald.conf(5) names), and an install into a second fresh Debian
# 12 (apt pulls the libraries it depends on), where the user shoal, the
# enabled unit, `shoald --check` on the default configuration, a zone added
# to it, and a short run answering dig on loopback are checked. Slow
# (minutes; the test suite in the chroot about as long as make check) and
# needs root and Debian's mirror, so it is not in `make check`: run
# `make check-deb` or
#   bash tests/package/deb.sh [SOURCE_TOP]
# SHOAL_DEB_MIRROR overrides the mirror; SHOAL_DEB_CACHE is a folder where the
# bare chroot is kept as a tarball between runs (default: none, so each run
# starts from debootstrap).
# Without the mirror the package is built on this machine instead (no test
# suite), the chroot parts are skipped (said so, exit 77 when nothing
# failed), and the package is only unpacked and its shoald run from there.

top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
SHOAL_BUILDDIR=$top SHOAL_SRCDIR=$top
. "$top/tests/integration/lib.sh"

MIRROR=${SHOAL_DEB_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
BUILD_ROOT=$T_DIR/build-root # where the package is built
ROOT=$T_DIR/root             # where it is installed
START=$SECONDS

# A chroot has /proc (and /dev/shm) mounted while it runs: unmount before
# the folder is removed, so rm never walks into the host's; and the chroots
# go before lib.sh's cleanup, whose look for sanitizer reports would read
# every file of two Debian systems.
deb_cleanup() {
	local r m
	for r in "$BUILD_ROOT" "$ROOT"; do
		for m in "$r/dev/shm" "$r/proc"; do
			mountpoint -q "$m" 2>/dev/null && umount "$m"
			mountpoint -q "$m" 2>/dev/null && umount -l "$m"
		done
		mountpoint -q "$r/proc" 2>/dev/null || rm -rf "$r"
	done
	rm -rf "$T_DIR/src" # a copy of the sources, lib.sh's report pattern included
	t_cleanup
}
trap deb_cleanup EXIT

step() { echo "# $((SECONDS - START))s: $*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (debootstrap, chroot)"
	exit 77
fi
for tool in lintian debootstrap; do
	command -v $tool >/dev/null || {
		echo "SKIP: $tool is missing (apt-get install lintian debootstrap)"
		exit 77
	}
done

# the sources: a copy holding only the repository's files (no build folders)
src=$T_DIR/src/shoal
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 tar cf - --no-recursion) | tar xf - -C "$src"
else
	(cd "$top" && tar cf - --exclude=./build --exclude=./autom4te.cache .) | tar xf - -C "$src"
fi

mirror_reachable() {
	timeout 30 bash -c "exec 3<>/dev/tcp/${MIRROR#*://}" 2>/dev/null ||
		timeout 30 wget -q -O /dev/null "$MIRROR/dists/$SUITE/Release" 2>/dev/null ||
		timeout 30 curl -fsS -o /dev/null "$MIRROR/dists/$SUITE/Release" 2>/dev/null
}

# fresh_root DIR: a bare Debian 12 in DIR (debootstrap, or the cached
# tarball), /proc mounted, no service started by a package (policy-rc.d).
fresh_root() {
	local dir=$1 cache=${SHOAL_DEB_CACHE:+$SHOAL_DEB_CACHE/$SUITE-minbase.tar}
	mkdir -p "$dir"
	if [ -f "$T_DIR/base.tar" ] || { [ -n "$cache" ] && [ -f "$cache" ]; }; then
		tar xf "$([ -f "$T_DIR/base.tar" ] && echo "$T_DIR/base.tar" || echo "$cache")" -C "$dir"
	else
		step "debootstrap $SUITE (log: debootstrap.log)"
		if ! debootstrap --variant=minbase "$SUITE" "$dir" "$MIRROR" \
			>"$T_DIR/debootstrap.log" 2>&1; then
			tail -20 "$T_DIR/debootstrap.log"
			fail "debootstrap $SUITE"
			done_testing
		fi
		tar cf "$T_DIR/base.tar" -C "$dir" .
		[ -n "$cache" ] && mkdir -p "$SHOAL_DEB_CACHE" && cp "$T_DIR/base.tar" "$cache"
	fi
	check_match "the chroot is Debian 12" '^12\.' "$(cat "$dir/etc/debian_version")"
	mount -t proc proc "$dir/proc"
	printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
	chmod +x "$dir/usr/sbin/policy-rc.d"
}
# in_chroot DIR CMD...: CMD as root in the chroot DIR, with a clean environment.
in_chroot() {
	local dir=$1
	shift
	chroot "$dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"
}

if mirror_reachable; then
	# 1. the build, in a clean Debian 12: apt-get build-dep ./, then dpkg-buildpackage
	fresh_root "$BUILD_ROOT"
	mount -t tmpfs shm "$BUILD_ROOT/dev/shm" 2>/dev/null
	mkdir -p "$BUILD_ROOT/build"
	cp -a "$src" "$BUILD_ROOT/build/"
	step "apt-get build-dep ./ in the chroot (log: build-dep.log)"
	if in_chroot "$BUILD_ROOT" sh -c "apt-get update -q && cd /build/shoal &&
		DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q ./" >"$T_DIR/build-dep.log" 2>&1; then
		pass "apt-get build-dep ./ in a clean $SUITE"
	else
		tail -30 "$T_DIR/build-dep.log"
		fail "apt-get build-dep ./ in a clean $SUITE"
		done_testing
	fi
	# as a buildd builds: a user that is not root (Rules-Requires-Root: no)
	in_chroot "$BUILD_ROOT" useradd -m builder &&
		chown -R "$(in_chroot "$BUILD_ROOT" id -u builder):$(in_chroot "$BUILD_ROOT" id -g builder)" \
			"$BUILD_ROOT/build"
	opts=${DEB_BUILD_OPTIONS:-}
	[ -n "${SHOAL_DEB_NOCHECK:-}" ] && opts="nocheck $opts"
	step "dpkg-buildpackage -us -uc -b as a user${opts:+ ($opts)}, the test suite included (log: build.log)"
	if chroot --userspec=builder:builder "$BUILD_ROOT" env -i PATH=/usr/bin:/bin \
		LANG=C.UTF-8 HOME=/home/builder DEB_BUILD_OPTIONS="$opts" \
		sh -c 'cd /build/shoal && dpkg-buildpackage -us -uc -b' >"$T_DIR/build.log" 2>&1; then
		pass "dpkg-buildpackage -us -uc -b in a clean $SUITE"
	else
		grep -E '^(FAIL|ERROR|# (FAIL|ERROR)):' "$T_DIR/build.log" | head -20
		tail -30 "$T_DIR/build.log"
		fail "dpkg-buildpackage -us -uc -b in a clean $SUITE"
		done_testing
	fi
	[ -n "${SHOAL_DEB_NOCHECK:-}" ] ||
		check_match "the test suite ran in the build" "^# PASS: +[1-9]" "$(cat "$T_DIR/build.log")"
	grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$T_DIR/build.log" | sed 's/^/# tests: /'
	umount "$BUILD_ROOT/dev/shm" 2>/dev/null
	out=$T_DIR/out
	mkdir -p "$out" && cp "$BUILD_ROOT"/build/shoal_* "$BUILD_ROOT"/build/shoal-dbgsym_* "$out/"
	have_mirror=true
else
	echo "# BLOCKED: $MIRROR is not reachable: the package is built here, without the tests"
	command -v dpkg-buildpackage >/dev/null || {
		echo "SKIP: dpkg-buildpackage is missing (apt-get install dpkg-dev debhelper)"
		exit 77
	}
	step "building the package here (log: build.log)"
	if (cd "$src" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -us -uc -b) >"$T_DIR/build.log" 2>&1; then
		pass "dpkg-buildpackage -us -uc -b"
	else
		tail -30 "$T_DIR/build.log"
		fail "dpkg-buildpackage -us -uc -b"
		done_testing
	fi
	out=$T_DIR/src
	have_mirror=false
fi
deb=$(ls "$out"/shoal_*.deb | grep -v dbgsym)
changes=$(ls "$out"/shoal_*.changes)
echo "# $(basename "$deb"): $(stat -c %s "$deb") octets"

# 2. lintian: nothing at the error level (warnings are printed, not fatal)
step "lintian"
out=$(lintian --fail-on error "$changes" 2>&1)
st=$?
[ -n "$out" ] && printf '# %s\n' "$out"
check_eq "lintian: no error" 0 "$st"

# 3. what the package holds: the README and every example the docs name too
contents=$(dpkg -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
ex=/usr/share/doc/shoal/examples
for f in /usr/sbin/shoald /usr/bin/shoalctl /usr/bin/shoal-checkzone /usr/bin/shoal-flood \
	/lib/systemd/system/shoald.service /etc/shoal/shoald.conf \
	/usr/share/man/man8/shoald.8.gz /usr/share/man/man5/shoald.conf.5.gz \
	/usr/share/man/man8/shoalctl.8.gz /usr/share/man/man1/shoal-checkzone.1.gz \
	/usr/share/man/man1/shoal-flood.1.gz /usr/share/doc/shoal/README.md \
	$ex/example.com.zone $ex/shoald.conf $ex/primary.conf $ex/secondary.conf \
	$ex/shoald.logrotate; do
	check_match "package holds $f" "^$f(\.gz)?\$" "$contents"
done
named=$(zcat -f "$src/man/shoald.conf.5.in" "$src/man/shoald.8.in" |
	grep -oE 'examples/[a-z.]+\.(conf|zone|logrotate)' | sort -u)
for f in $named; do
	check_match "package holds $f, which the man pages name" "^/usr/share/doc/shoal/$f(\.gz)?\$" \
		"$contents"
done
conffiles=$(dpkg-deb -I "$deb" conffiles)
check_match "the configuration is a conffile" '^/etc/shoal/shoald.conf$' "$conffiles"

# 4. a fresh Debian 12; without the mirror, the unpacked package only
if ! $have_mirror; then
	mkdir -p "$T_DIR/x" && dpkg-deb -x "$deb" "$T_DIR/x"
	"$T_DIR/x/usr/sbin/shoald" --check -c "$T_DIR/x/etc/shoal/shoald.conf" >"$T_DIR/c.out" 2>&1
	check_eq "unpacked shoald --check on the packaged configuration" 0 $?
	[ $T_FAILED -eq 0 ] && {
		echo "SKIP: the chroot build and install (mirror blocked)"
		exit 77
	}
	done_testing
fi
fresh_root "$ROOT"
cp "$deb" "$ROOT/tmp/"
step "apt-get install ./$(basename "$deb") in the chroot (log: apt.log)"
in_root() { in_chroot "$ROOT" "$@"; }
if in_root sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends /tmp/$(basename "$deb")" \
	>"$T_DIR/apt.log" 2>&1; then
	pass "apt-get install of the package into a clean $SUITE"
else
	tail -30 "$T_DIR/apt.log"
	fail "apt-get install of the package into a clean $SUITE"
	done_testing
fi
step "checks in the chroot"
check_match "postinst made the system user shoal" '^shoal:x:[0-9]+:[0-9]+:.*:/usr/sbin/nologin$' \
	"$(in_root getent passwd shoal)"
uid=$(in_root id -u shoal)
[ "$uid" -lt 1000 ] && pass "shoal is a system user (uid $uid)" || fail "shoal uid $uid"
check_eq "the unit is enabled" yes \
	"$([ -L "$ROOT/etc/systemd/system/multi-user.target.wants/shoald.service" ] && echo yes)"
check_eq "no shoald was started (policy-rc.d)" "" "$(pgrep -x shoald | while read -r p; do
	[ "$(readlink "/proc/$p/root")" = "$ROOT" ] && echo "$p"
done)"

out=$(in_root /usr/sbin/shoald --check 2>&1)
check_eq "shoald --check on the default configuration: exit 0 [$out]" 0 $?
# the same, as the user the unit runs it as
out=$(chroot --userspec=shoal:shoal "$ROOT" /usr/sbin/shoald --check 2>&1)
check_eq "shoald --check as the user shoal [$out]" 0 $?

# the operator's first step: uncomment the example zone, copy the file in
conf=$ROOT/etc/shoal/shoald.conf
sed -i -e 's/^#  - name: example.com/  - name: example.com/' \
	-e 's/^#    file: example.com.zone/    file: example.com.zone/' "$conf"
zcat -f "$ROOT"/usr/share/doc/shoal/examples/example.com.zone* >"$ROOT/etc/shoal/example.com.zone"
out=$(chroot --userspec=shoal:shoal "$ROOT" /usr/sbin/shoald --check 2>&1)
check_eq "shoald --check with the example zone enabled [$out]" 0 $?
check_match "the check names the zone" 'example\.com' "$out"

# and it answers: the packaged shoald on a loopback port, as the user shoal
port=$(free_port)
chroot --userspec=shoal:shoal "$ROOT" /usr/sbin/shoald --listen "127.0.0.1@$port" --threads 1 \
	--control /tmp/shoald.ctl >"$T_DIR/shoald.log" 2>&1 &
T_PIDS="$T_PIDS $!"
pid=$!
ans=""
for _ in $(seq 1 40); do
	ans=$($DIG @127.0.0.1 -p "$port" +short +time=1 +tries=1 www.example.com A 2>/dev/null)
	[ -n "$ans" ] && break
	sleep 0.5
done
check_match "the installed shoald answers www.example.com A" '^[0-9.]+$' "$ans"
stop_pid "$pid"
check_eq "shoald exits 0 on SIGTERM" 0 $?

step "done"
echo "# total: $((SECONDS - START)) seconds"
done_testing
