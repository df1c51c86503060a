#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/dnssec.sh: the DNSSEC differential test: run.sh over
# the signed zones of tests/diff/dnssec (NSEC, NSEC3 with opt-out, a signed
# child) and their corpus, every case without and with DO. Options as run.sh.
HERE=$(cd "$(dirname "$0")" && pwd)
exec "$HERE/run.sh" -z "$HERE/dnssec" -q "$HERE/dnssec/queries.txt" "$@"
