#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_chaos: TXT queries of class CHAOS. id.server and hostname.bind answer
# the identity (default: the host name), version.server and version.bind the
# version only when it is set (else REFUSED); TTL 0, no AA; other CH names and
# types are REFUSED. Where nsd and knotd are installed, the same queries go to
# them, configured alike, and each of Shoal's answers (rcode, flags, answer
# section) must equal NSD's or Knot's.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

# The cases: NAME TYPE [dig options]; ANY is where NSD and Knot differ.
CASES="id.server TXT
hostname.bind TXT
ID.Server TXT
version.server TXT
version.bind TXT
version.bind TXT +tcp
authors.bind TXT
foo.server TXT
server TXT
id.server A
id.server ANY
example.com SOA"

# ch PORT NAME TYPE [OPTS]: one CH query, reduced to its rcode, its header
# flags and its answer records (blanks squeezed), one line each.
ch() {
	local port=$1 name=$2 type=$3
	shift 3
	q "$port" +nocookie "$@" CH "$type" "$name" | awk '
		/status:/ { s = $0; sub(/.*status: /, "", s); sub(/,.*/, "", s); print "rcode " s }
		/^;; flags:/ { f = $0; sub(/^;; flags: /, "", f); sub(/;.*/, "", f); print "flags " f }
		/^[^;]/ && NF { $1 = $1; print "rr " $0 }'
}

# all PORT: every case, a blank line between.
all() {
	local name type opts
	while read -r name type opts; do
		# shellcheck disable=SC2086
		ch "$1" "$name" "$type" $opts
		echo
	done <<<"$CASES"
}

cat >"$T_DIR/shoald.conf" <<CONF
identity: ns1.test
version: "9.9.9"
zones:
  - name: example.com
    file: $EXAMPLES/example.com.zone
CONF
PORT=$(free_port) || exit 99
start_shoald "$PORT" -c "$T_DIR/shoald.conf" --listen "127.0.0.1@$PORT" --threads 1 || exit 99
check_eq "id.server CH TXT: the identity, TTL 0, no AA" \
	"$(printf 'rcode NOERROR\nflags qr\nrr id.server. 0 CH TXT "ns1.test"')" \
	"$(ch "$PORT" id.server TXT)"
check_eq "hostname.bind over TCP too" \
	"$(printf 'rcode NOERROR\nflags qr\nrr hostname.bind. 0 CH TXT "ns1.test"')" \
	"$(ch "$PORT" hostname.bind TXT +tcp)"
check_match "version.bind: the version set" '^rr version.bind. 0 CH TXT "9.9.9"$' \
	"$(ch "$PORT" version.bind TXT)"
check_match "authors.bind: REFUSED" '^rcode REFUSED$' "$(ch "$PORT" authors.bind TXT)"
check_match "id.server CH A: REFUSED" '^rcode REFUSED$' "$(ch "$PORT" id.server A)"
check_match "IN data still answered" 'status: NOERROR' "$(q "$PORT" www.example.com A)"
all "$PORT" >"$T_DIR/shoal.out"
stop_pid "$SHOALD_PID"

# Defaults: the host name; the version hidden.
PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 || exit 99
check_match "identity defaults to the host name" "^rr id.server. 0 CH TXT \"$(hostname)\"$" \
	"$(ch "$PORT" id.server TXT)"
check_match "version hidden by default: REFUSED" '^rcode REFUSED$' \
	"$(ch "$PORT" version.server TXT)"
stop_pid "$SHOALD_PID"

PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 1 --identity "a b" || exit 99
check_match "--identity on the command line" '^rr hostname.bind. 0 CH TXT "a b"$' \
	"$(ch "$PORT" hostname.bind TXT)"
stop_pid "$SHOALD_PID"

# One TXT character-string holds 255 octets: a longer text stops start-up
# with the line, and 255 is accepted.
long=$(printf 'v%.0s' $(seq 1 256))
printf 'threads: 1\nversion: %s\n' "$long" >"$T_DIR/long.conf"
out=$("$SHOALD" --check -c "$T_DIR/long.conf" 2>&1)
check_match "a 256-octet version: the file, line and reason" \
	"long.conf:2: version: longer than 255 octets" "$out"
printf 'threads: 1\nversion: %s\n' "${long:1}" >"$T_DIR/long.conf"
"$SHOALD" --check -c "$T_DIR/long.conf" >/dev/null 2>&1
check_eq "a 255-octet version is accepted" 0 $?

# The references, when installed, configured with the same texts.
NSD=$(command -v nsd || ls /usr/sbin/nsd 2>/dev/null)
KNOTD=$(command -v knotd || ls /usr/sbin/knotd 2>/dev/null)
if [ -z "$NSD" ] || [ -z "$KNOTD" ]; then
	echo "shoald_chaos: nsd or knotd missing, no comparison (Debian packages nsd, knot)"
	done_testing
fi

# wait_id PORT PID: up to 10 s until id.server answers, or PID has exited.
wait_id() {
	local i
	for i in $(seq 1 100); do
		kill -0 "$2" 2>/dev/null || return 1
		ch "$1" id.server TXT | grep -q '^rcode NOERROR' && return 0
		sleep 0.1
	done
	return 1
}

mkdir -p "$T_DIR/nsd" "$T_DIR/knot/db"
PORT_NSD=$(free_port) || exit 99
cat >"$T_DIR/nsd/nsd.conf" <<CONF
server:
  ip-address: 127.0.0.1@$PORT_NSD
  server-count: 1
  reuseport: no
  username: ""
  chroot: ""
  database: ""
  pidfile: "$T_DIR/nsd/nsd.pid"
  xfrdfile: "$T_DIR/nsd/xfrd.state"
  zonelistfile: "$T_DIR/nsd/zone.list"
  xfrdir: "$T_DIR/nsd"
  logfile: "$T_DIR/nsd/nsd.log"
  identity: "ns1.test"
  version: "9.9.9"
remote-control:
  control-enable: no
CONF
"$NSD" -d -c "$T_DIR/nsd/nsd.conf" >"$T_DIR/nsd/stderr.log" 2>&1 &
NSD_PID=$!
T_PIDS="$T_PIDS $NSD_PID"

PORT_KNOT=$(free_port) || exit 99
cat >"$T_DIR/knot/knot.conf" <<CONF
server:
    rundir: "$T_DIR/knot"
    listen: 127.0.0.1@$PORT_KNOT
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    identity: "ns1.test"
    version: "9.9.9"
log:
  - target: stderr
    any: notice
database:
    storage: "$T_DIR/knot/db"
CONF
"$KNOTD" -c "$T_DIR/knot/knot.conf" >"$T_DIR/knot/stderr.log" 2>&1 &
KNOT_PID=$!
T_PIDS="$T_PIDS $KNOT_PID"

if ! wait_id "$PORT_NSD" "$NSD_PID" || ! wait_id "$PORT_KNOT" "$KNOT_PID"; then
	echo "shoald_chaos: nsd or knotd did not answer; their logs:" >&2
	cat "$T_DIR"/nsd/*.log "$T_DIR"/knot/*.log >&2
	exit 99
fi
all "$PORT_NSD" >"$T_DIR/nsd.out"
all "$PORT_KNOT" >"$T_DIR/knot.out"
kill "$NSD_PID" "$KNOT_PID"

# Compare case by case (paragraph i of each output is case i).
i=0
while read -r name type opts; do
	i=$((i + 1))
	para() { awk -v n="$i" 'BEGIN { RS = "" } NR == n' "$1"; }
	s=$(para "$T_DIR/shoal.out") n=$(para "$T_DIR/nsd.out") k=$(para "$T_DIR/knot.out")
	what="CH $type $name${opts:+ $opts}"
	if [ -z "$s" ]; then
		fail "$what: no answer from shoald"
	elif [ "$s" = "$n" ] && [ "$s" = "$k" ]; then
		pass "$what: as NSD and Knot"
	elif [ "$s" = "$n" ] || [ "$s" = "$k" ]; then
		pass "$what: as $([ "$s" = "$n" ] && echo NSD || echo Knot) (the two differ)"
	else
		fail "$what: shoald [$s], NSD [$n], Knot [$k]"
	fi
done <<<"$CASES"
done_testing
