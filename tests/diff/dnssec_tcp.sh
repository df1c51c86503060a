#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/dnssec_tcp.sh: dnssec.sh over TCP (one kept-open connection per
# server), so signed answers too large for UDP come whole. Options as run.sh.
HERE=$(cd "$(dirname "$0")" && pwd)
exec "$HERE/dnssec.sh" -t "$@"
