#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Install what Shoal needs on Debian 12 and build it. Sourced by .ci/run and
# .ci/demo; run as root on a fresh machine, or as a user when the packages are
# already there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SHOAL_TOP=$(pwd)

# Build and library packages (GnuTLS for DNS over TLS); dnsutils (dig) and
# ldnsutils for tests; nsd and knot for the differential tests and the
# benchmark; bind9 with them, and knot-dnsutils (kdig), for the zone transfer,
# TSIG and DNS over TLS tests; openssl (the command) for the XoT test's
# certificates; clang, its sanitizer runtimes and llvm-14 (whose
# llvm-symbolizer names the functions in a report, which suppressions need)
# for the sanitizer builds; prometheus for promtool, which checks /metrics; dnstap-ldns
# reads back what dnstap wrote; unbound and bind9-utils (dnssec-verify) check what shoald
# signs. libfstrm and protobuf-c (with protoc-c) for dnstap. libssl-dev: OpenSSL's libcrypto
# makes the P-256 signatures.
SHOAL_PACKAGES="build-essential autoconf automake pkg-config
 libldns-dev libknot-dev libuv1-dev libsodium-dev nettle-dev libcunit1-dev liburcu-dev libyaml-dev
 libgnutls28-dev libssl-dev libfstrm-dev libprotobuf-c-dev protobuf-c-compiler
 dnsutils bind9-dnsutils ldnsutils iproute2 procps"
SHOAL_TEST_PACKAGES="nsd knot knot-dnsutils bind9 openssl dnsperf clang libclang-rt-14-dev llvm-14
 clang-format prometheus dnstap-ldns unbound bind9-utils"

shoal_install() {
	local want="$SHOAL_PACKAGES ${1:-}" missing=""
	for p in $want; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing Debian packages:$missing (run as root to install them)" >&2
		return 1
	fi
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# packaged daemons (nsd, knot) must not start on the machine's port 53
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
	apt-get install -y -q --no-install-recommends $missing
	rm -f /usr/sbin/policy-rc.d
}

# shoal_build DIR [configure flags...]: out-of-tree build in DIR.
shoal_build() {
	local dir=$1
	shift
	[ -x "$SHOAL_TOP/configure" ] || (cd "$SHOAL_TOP" && autoreconf -fi)
	mkdir -p "$dir"
	(cd "$dir" && "$SHOAL_TOP/configure" -q "$@" && make -s -j"$(nproc)")
}
