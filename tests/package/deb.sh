#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian package, end to end: build it from a clean copy of the sources
# with dpkg-buildpackage, check it with lintian (no error), look at what it
# holds, install it into a fresh Debian 12 made by debootstrap (apt pulls
# the libraries it depends on), and there check the user shoal, the enabled
# unit, `shoald --check` on the default configuration, a zone added to it, and
# a short run answering dig on loopback. Slow (minutes) and needs root and
# Debian's mirror, so it is not in `make check`: run `make check-deb` or
#   bash tests/package/deb.sh [SOURCE_TOP]
# SHOAL_DEB_MIRROR overrides the mirror; SHOAL_DEB_CACHE is a folder where the
# bare chroot is kept as a tarball between runs (default: none, so each run
# starts from debootstrap).
# Without the mirror the chroot part is skipped (said so, exit 77 when nothing
# failed) and the package is only unpacked and its shoald run from there.

top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
SHOAL_BUILDDIR=$top SHOAL_SRCDIR=$top
. "$top/tests/integration/lib.sh"

MIRROR=${SHOAL_DEB_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
ROOT=$T_DIR/root
START=$SECONDS

# The chroot has /proc mounted while it runs: unmount before lib.sh's
# cleanup removes the folder, so rm never walks into the host's /proc.
deb_cleanup() {
	mountpoint -q "$ROOT/proc" 2>/dev/null && umount "$ROOT/proc"
	mountpoint -q "$ROOT/proc" 2>/dev/null && umount -l "$ROOT/proc"
	t_cleanup
}
trap deb_cleanup EXIT

step() { echo "# $(($SECONDS - START))s: $*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (debootstrap, chroot)"
	exit 77
fi
for tool in dpkg-buildpackage lintian debootstrap; do
	command -v $tool >/dev/null || {
		echo "SKIP: $tool is missing (apt-get install devscripts lintian debootstrap)"
		exit 77
	}
done

# 1. build from a copy holding only the repository's files (no build folders)
src=$T_DIR/src/shoal
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 tar cf - --no-recursion) | tar xf - -C "$src"
else
	(cd "$top" && tar cf - --exclude=./build --exclude=./autom4te.cache .) | tar xf - -C "$src"
fi
step "building the package (log: dpkg-buildpackage.log)"
if (cd "$src" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$T_DIR/build.log" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b"
else
	tail -30 "$T_DIR/build.log"
	fail "dpkg-buildpackage -us -uc -b"
	done_testing
fi
deb=$(ls "$T_DIR"/src/shoal_*.deb | grep -v dbgsym)
changes=$(ls "$T_DIR"/src/shoal_*.changes)
echo "# $(basename "$deb"): $(stat -c %s "$deb") octets"

# 2. lintian: nothing at the error level (warnings are printed, not fatal)
step "lintian"
out=$(lintian --fail-on error "$changes" 2>&1)
st=$?
[ -n "$out" ] && printf '# %s\n' "$out"
check_eq "lintian: no error" 0 "$st"

# 3. what the package holds
contents=$(dpkg -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
for f in /usr/sbin/shoald /usr/bin/shoalctl /usr/bin/shoal-checkzone /usr/bin/shoal-flood \
	/lib/systemd/system/shoald.service /etc/shoal/shoald.conf \
	/usr/share/man/man8/shoald.8.gz /usr/share/man/man5/shoald.conf.5.gz \
	/usr/share/man/man8/shoalctl.8.gz /usr/share/man/man1/shoal-checkzone.1.gz \
	/usr/share/man/man1/shoal-flood.1.gz /usr/share/doc/shoal/examples/example.com.zone; do
	check_match "package holds $f" "^$f\$" "$contents"
done
conffiles=$(dpkg-deb -f "$deb" Package >/dev/null && dpkg-deb -I "$deb" conffiles)
check_match "the configuration is a conffile" '^/etc/shoal/shoald.conf$' "$conffiles"

# 4. a fresh Debian 12; without the mirror, the unpacked package only
if ! timeout 30 bash -c "exec 3<>/dev/tcp/${MIRROR#*://}" 2>/dev/null &&
	! timeout 30 wget -q -O /dev/null "$MIRROR/dists/$SUITE/Release" 2>/dev/null &&
	! timeout 30 curl -fsS -o /dev/null "$MIRROR/dists/$SUITE/Release" 2>/dev/null; then
	echo "# BLOCKED: $MIRROR is not reachable; no chroot install"
	mkdir -p "$T_DIR/x" && dpkg-deb -x "$deb" "$T_DIR/x"
	"$T_DIR/x/usr/sbin/shoald" --check -c "$T_DIR/x/etc/shoal/shoald.conf" >"$T_DIR/c.out" 2>&1
	check_eq "unpacked shoald --check on the packaged configuration" 0 $?
	[ $T_FAILED -eq 0 ] && {
		echo "SKIP: the chroot install (mirror blocked)"
		exit 77
	}
	done_testing
fi
cache=${SHOAL_DEB_CACHE:+$SHOAL_DEB_CACHE/$SUITE-minbase.tar}
mkdir -p "$ROOT"
if [ -n "$cache" ] && [ -f "$cache" ]; then
	step "unpacking the cached $SUITE chroot"
	tar xf "$cache" -C "$ROOT"
else
	step "debootstrap $SUITE (log: debootstrap.log)"
	if ! debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$T_DIR/debootstrap.log" 2>&1; then
		tail -20 "$T_DIR/debootstrap.log"
		fail "debootstrap $SUITE"
		done_testing
	fi
	[ -n "$cache" ] && mkdir -p "$SHOAL_DEB_CACHE" && tar cf "$cache" -C "$ROOT" .
fi
check_match "the chroot is Debian 12" '^12\.' "$(cat "$ROOT/etc/debian_version")"
mount -t proc proc "$ROOT/proc"
# no service starts inside the chroot (and none would on the host's port 53)
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod +x "$ROOT/usr/sbin/policy-rc.d"
cp "$deb" "$ROOT/tmp/"
step "apt-get install ./$(basename "$deb") in the chroot (log: apt.log)"
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
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
