#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/run.sh: the differential test. Serves the zones of
# tests/diff/zones with NSD, Knot DNS and shoald on loopback, asks each the
# cases of tests/diff/queries.txt with dig, and compares the normalised
# answers (normalise.awk, compare.awk).
#
# Usage: tests/diff/run.sh [-v] [-k] [-M] [-m PCT] [-q FILE] [-z DIR] [-t] [-s]
#   -v       also list every case where NSD and Knot differ, with both answers
#   -k       keep the temporary directory (configurations, logs, raw dig output)
#   -m PCT   pass mark in percent (default $DIFF_MIN_PCT, else 99)
#   -q FILE  another corpus (default tests/diff/queries.txt)
#   -z DIR   another folder of zones, DIR/ORIGIN.zone (default tests/diff/zones)
#   -t       every case over TCP, one connection kept open per server
#            (dig +tcp +keepopen): the TCP path with many queries in turn
#   -M       NSD with minimal-responses: yes (no NS RRset in the authority
#            section of positive answers, as Knot does); default: stock NSD
#   -s       shoald as a secondary of the Knot started here: every zone
#            comes to it by AXFR, not from the files
# Environment: SHOAL_BUILDDIR (shoald is $SHOAL_BUILDDIR/server/shoald),
# SHOAL_SRCDIR, DIG. Exit 77 (skip) when nsd or knotd is not installed, or
# when shoald is not built (then the NSD-against-Knot figure is still printed).
# Exit 1 when Shoal agrees on fewer than PCT percent of the cases, 99 when
# the harness fails (a server does not start, dig output out of step).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SHOAL_SRCDIR=${SHOAL_SRCDIR:-$(cd "$HERE/../.." && pwd)}
SHOAL_BUILDDIR=${SHOAL_BUILDDIR:-$(pwd)}
export SHOAL_SRCDIR SHOAL_BUILDDIR
DIFF=$SHOAL_SRCDIR/tests/diff
# shellcheck source=../integration/lib.sh
. "$SHOAL_SRCDIR/tests/integration/lib.sh"

VERBOSE=0
KEEP=0
MIN_PCT=${DIFF_MIN_PCT:-99}
CORPUS=$DIFF/queries.txt
NSD_MINIMAL=no
TRANSPORT=""
ZONEDIR=$DIFF/zones
SECONDARY=0
while getopts "vkm:q:z:tMs" opt; do
	case $opt in
	v) VERBOSE=1 ;;
	k) KEEP=1 ;;
	m) MIN_PCT=$OPTARG ;;
	q) CORPUS=$OPTARG ;;
	z) ZONEDIR=$(cd "$OPTARG" && pwd) ;;
	M) NSD_MINIMAL=yes ;;
	t) TRANSPORT="+tcp +keepopen" ;;
	s) SECONDARY=1 ;;
	*)
		sed -n '2,23s/^# \{0,1\}//p' "$0"
		exit 2
		;;
	esac
done

# shellcheck source=../peers.sh
. "$SHOAL_SRCDIR/tests/peers.sh"
if [ -z "$NSD" ] || [ -z "$KNOTD" ]; then
	echo "diff: SKIP, nsd and knotd are needed (Debian packages nsd, knot)"
	exit 77
fi
if [ "$KEEP" = 1 ]; then
	trap 'for p in $T_PIDS; do kill "$p" 2>/dev/null; done; wait; echo "kept $T_DIR"' EXIT
fi

# The zones: ORIGIN=FILE, the file name is the origin plus ".zone".
ZONES=""
for f in "$ZONEDIR"/*.zone; do
	z=$(basename "$f" .zone)
	ZONES="$ZONES $z"
done

# start_nsd DIR PORT: NSD in the foreground of a background job, as the
# current user, rate limiting off (RRL would throttle a batch), CHAOS
# identity answers off (they name the server; shoald_chaos.sh compares
# those).
start_nsd() {
	local dir=$1 port=$2 z
	mkdir -p "$dir"
	{
		nsd_server_conf "$dir" "$port" "zonesdir: \"$ZONEDIR\"" "rrl-ratelimit: 0" \
			"hide-version: yes" "hide-identity: yes" "minimal-responses: $NSD_MINIMAL"
		for z in $ZONES; do
			nsd_zone "$z" "$z.zone"
		done
	} >"$dir/nsd.conf"
	nsd_start "$dir" "$dir/stderr.log"
	SERVER_PID=$PEER_PID
}

# start_knot DIR PORT: knotd with its own run and storage directories, no
# journal, no zone file writes, no signing; identity and version answers off.
start_knot() {
	local dir=$1 port=$2 z
	mkdir -p "$dir"
	{
		knot_server_conf "$dir" "$port" notice 'identity: ""' 'version: ""'
		echo "acl:"
		knot_acl xfr transfer
		knot_template "$ZONEDIR" "%s.zone" "journal-content: none" "zonefile-load: whole"
		for z in $ZONES; do
			printf '  - domain: "%s"\n    acl: xfr\n' "$z"
		done
	} >"$dir/knot.conf"
	knot_start "$dir" "$dir/stderr.log"
	SERVER_PID=$PEER_PID
}

# start_shoal DIR PORT: shoald, one worker thread, every zone (with -s,
# every zone transferred from the Knot on $PORT_KNOT).
start_shoal() {
	local dir=$1 port=$2 z args=""
	mkdir -p "$dir"
	if [ "$SECONDARY" = 1 ]; then
		printf 'listen: 127.0.0.1@%s\nthreads: 1\nzones:\n' "$port" >"$dir/shoald.conf"
		for z in $ZONES; do
			printf '  - name: %s\n    primaries: ["127.0.0.1@%s NOKEY"]\n' "$z" "$PORT_KNOT" \
				>>"$dir/shoald.conf"
		done
		"$SHOALD" -c "$dir/shoald.conf" >"$dir/stderr.log" 2>&1 &
		SERVER_PID=$!
		T_PIDS="$T_PIDS $SERVER_PID"
		return
	fi
	for z in $ZONES; do
		args="$args --zone $z=$ZONEDIR/$z.zone"
	done
	# shellcheck disable=SC2086
	"$SHOALD" --listen "127.0.0.1@$port" --threads 1 $args >"$dir/stderr.log" 2>&1 &
	SERVER_PID=$!
	T_PIDS="$T_PIDS $SERVER_PID"
}

# launch NAME: start_NAME on a free port and wait until it serves the zones;
# sets LAUNCHED_PORT. free_port only finds a port free when it looks, and
# tests running beside this one may take it first, so a start that fails
# with "in use" in the server's log is retried on another port (five tries).
launch() {
	local name=$1 try port
	for try in 1 2 3 4 5; do
		port=$(free_port)
		"start_$name" "$T_DIR/$name" "$port"
		# shellcheck disable=SC2086
		if peer_serves "$port" "$SERVER_PID" 10 $ZONES; then
			LAUNCHED_PORT=$port
			return 0
		fi
		peer_stop "$SERVER_PID"
		grep -qi 'in use' "$T_DIR/$name"/*.log || break
		echo "diff: $name: port $port taken meanwhile, another (try $try)" >&2
		for log in "$T_DIR/$name"/*.log; do mv "$log" "$log.$try"; done
	done
	echo "diff: $name did not serve the zones on port $port; its log:" >&2
	cat "$T_DIR/$name"/*.log >&2
	return 1
}

# ask NAME PORT: the whole corpus in one dig batch, normalised.
ask() {
	local name=$1 port=$2
	# shellcheck disable=SC2086
	"$DIG" @127.0.0.1 -p "$port" +norec +time=2 +tries=1 +ignore +nocookie +nostats $TRANSPORT \
		-f "$T_DIR/cases.txt" >"$T_DIR/$name.out" 2>&1
	awk -f "$DIFF/normalise.awk" "$T_DIR/$name.out" >"$T_DIR/$name.norm"
}

grep -v '^#' "$CORPUS" | grep . >"$T_DIR/cases.txt"

launch nsd || exit 99
PORT_NSD=$LAUNCHED_PORT
launch knot || exit 99
PORT_KNOT=$LAUNCHED_PORT

SHOAL_NORM=""
if [ -x "$SHOALD" ]; then
	launch shoal || exit 1
	PORT_SHOAL=$LAUNCHED_PORT
	SHOAL_NORM=$T_DIR/shoal.norm
fi

echo "diff: $(wc -l <"$T_DIR/cases.txt") cases from $CORPUS; nsd on $PORT_NSD, knotd on $PORT_KNOT${SHOAL_NORM:+, shoald on $PORT_SHOAL}"
ASKERS=""
ask nsd "$PORT_NSD" &
ASKERS="$ASKERS $!"
ask knot "$PORT_KNOT" &
ASKERS="$ASKERS $!"
if [ -n "$SHOAL_NORM" ]; then
	ask shoal "$PORT_SHOAL" &
	ASKERS="$ASKERS $!"
fi
# shellcheck disable=SC2086
wait $ASKERS

awk -v cases="$T_DIR/cases.txt" -v nsd="$T_DIR/nsd.norm" -v knot="$T_DIR/knot.norm" \
	-v shoal="$SHOAL_NORM" -v verbose="$VERBOSE" -v min_pct="$MIN_PCT" -f "$DIFF/compare.awk"
rc=$?
# 2: the harness itself failed (a server's output is short or out of step):
# an ERROR for automake (99), whether Shoal took part or not.
[ "$rc" = 2 ] && exit 99
if [ -z "$SHOAL_NORM" ]; then
	echo "diff: SKIP, $SHOALD is not built; only NSD against Knot compared"
	exit 77
fi
exit $rc
