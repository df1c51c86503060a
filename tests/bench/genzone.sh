#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Generate a benchmark zone of N names and a matching query file (dnsperf format).
# Usage: genzone.sh ORIGIN NAMES ZONEFILE QUERYFILE [QUERIES] [NXDOMAIN_PERCENT]
#   ORIGIN            zone apex, e.g. bench.test.
#   NAMES             number of host names (h0 .. hN-1), each with an A record,
#                     every tenth with an AAAA record too
#   QUERIES           query lines to write (default 100000), spread over the names
#   NXDOMAIN_PERCENT  share of queries for names that do not exist (default 10)
# Deterministic: the same arguments give the same files, so every server in a
# benchmark run is asked the same mix.
set -euo pipefail
if [ $# -lt 4 ]; then
	sed -n '2,10p' "$0" >&2
	exit 1
fi
origin=$1 names=$2 zone=$3 queries=$4 nq=${5:-100000} nxpct=${6:-10}
case $origin in *.) ;; *) origin="$origin." ;; esac

awk -v origin="$origin" -v n="$names" 'BEGIN {
	printf "$ORIGIN %s\n$TTL 3600\n", origin
	printf "@ IN SOA ns1 hostmaster 2026120301 7200 3600 1209600 300\n"
	printf "@ IN NS ns1\n@ IN NS ns2\nns1 IN A 127.0.0.1\nns2 IN AAAA ::1\n"
	printf "@ IN A 192.0.2.1\n@ IN MX 10 mail\nmail IN A 192.0.2.25\n"
	for (i = 0; i < n; i++) {
		printf "h%d IN A 10.%d.%d.%d\n", i, int(i / 65536) % 256, int(i / 256) % 256, i % 256
		if (i % 10 == 0)
			printf "h%d IN AAAA 2001:db8::%x:%x\n", i, int(i / 65536), i % 65536
	}
}' >"$zone"

# A fixed linear congruential walk picks names, so the mix is the same every run.
awk -v origin="$origin" -v n="$names" -v nq="$nq" -v nxpct="$nxpct" 'BEGIN {
	x = 12345
	for (q = 0; q < nq; q++) {
		x = (x * 1103515245 + 12345) % 2147483648
		i = int(x / 7) % n
		if (x % 100 < nxpct)
			printf "nx%d.%s A\n", i, origin
		else if (i % 10 == 0 && x % 3 == 0)
			printf "h%d.%s AAAA\n", i, origin
		else
			printf "h%d.%s A\n", i, origin
	}
}' >"$queries"
