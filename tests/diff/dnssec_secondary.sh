#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/dnssec_secondary.sh: the DNSSEC differential test with shoald
# as a secondary of Knot DNS: the signed zones of tests/diff/dnssec reach it
# by AXFR and must give the same DNSSEC answers (signatures, NSEC, NSEC3
# with opt-out) as when loaded from their files. Options as run.sh.
HERE=$(cd "$(dirname "$0")" && pwd)
exec "$HERE/run.sh" -s -z "$HERE/dnssec" -q "$HERE/dnssec/queries.txt" "$@"
