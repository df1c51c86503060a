#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# start_spread: tests/xfr/start_spread.sh at scale, out of make check: 100,000 secondary zones
# (ZONES), each served from its saved copy, start and ask one primary for their SOA; no second
# may bring it more than serial-query-rate (RATE, 500 by default, shoald's) questions, and not
# every zone may be asked within WATCH seconds. Needs a build whose configuration takes that
# many zones (CONF_ZONES_MAX; issue 30's zone set work).
#   tests/bench/start_spread.sh [BUILDDIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
export SHOAL_SRCDIR=${SHOAL_SRCDIR:-$(cd "$here/../.." && pwd)}
export SHOAL_BUILDDIR=${1:-${SHOAL_BUILDDIR:-$PWD}}
export ZONES=${ZONES:-100000} RATE=${RATE:-500} WATCH=${WATCH:-10}
exec bash "$SHOAL_SRCDIR/tests/xfr/start_spread.sh"
