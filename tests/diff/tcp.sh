#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/tcp.sh: the differential test over TCP: every case of
# the corpus on one kept-open connection per server (RFC 7766), so the TCP
# path answers as the UDP path does, without truncation. Options as run.sh.
HERE=$(cd "$(dirname "$0")" && pwd)
exec "$HERE/run.sh" -t "$@"
