# SPDX-License-Identifier: GPL-3.0-or-later
# tests/peers.sh: the other servers Shoal is measured and tested against
# (Knot DNS, NSD, BIND), started on loopback on a free high port, never 53,
# each in its own folder with its own configuration. One place writes their
# configuration and starts them, so the differential test (tests/diff), the
# zone transfer tests (tests/xfr) and the benchmarks (tests/bench) run the
# same peers. Sourced after tests/integration/lib.sh (DIG, T_PIDS).
#
# The *_conf functions print a part of a configuration; a caller writes
# them in turn into DIR/knot.conf, DIR/nsd.conf or DIR/named.conf and
# starts the server with knot_start, nsd_start or named_start.
# An argument "KEY: VALUE" to a *_conf function adds that line to the part,
# and takes the place of the default line for KEY where the part has one.

KNOTD=$(command -v knotd || ls /usr/sbin/knotd 2>/dev/null)
KNOTC=$(command -v knotc || ls /usr/sbin/knotc 2>/dev/null)
NSD=$(command -v nsd || ls /usr/sbin/nsd 2>/dev/null)
NAMED=$(command -v named || ls /usr/sbin/named 2>/dev/null)

# conf_lines INDENT N DEFAULT... LINE...: the N DEFAULT lines whose key no
# LINE gives, then every LINE, each after INDENT.
conf_lines() {
	local indent=$1 n=$2 i line key
	shift 2
	local defaults=("${@:1:n}")
	shift "$n"
	for line in "${defaults[@]}"; do
		key=${line%%:*}
		for i in "$@"; do
			[ "${i%%:*}" = "$key" ] && continue 2
		done
		printf '%s%s\n' "$indent" "$line"
	done
	for line in "$@"; do
		printf '%s%s\n' "$indent" "$line"
	done
}

# ---- Knot DNS ----

# knot_server_conf DIR PORT LEVEL [LINE...]: the server, log and database
# parts for one knotd on 127.0.0.1@PORT with its state under DIR, logging
# to stderr from LEVEL up; one worker of each kind unless a LINE says.
knot_server_conf() {
	local dir=$1 port=$2 level=$3
	shift 3
	printf 'server:\n    rundir: "%s"\n    listen: 127.0.0.1@%s\n' "$dir" "$port"
	conf_lines '    ' 3 'udp-workers: 1' 'tcp-workers: 1' 'background-workers: 1' "$@"
	printf 'log:\n  - target: stderr\n    any: %s\n' "$level"
	printf 'database:\n    storage: "%s/db"\n' "$dir"
}

# knot_keys NAME SECRET [NAME SECRET...]: a key part, HMAC-SHA256 TSIG keys;
# with TSIG_ALG set, keys of that algorithm. knot_key NAME ALG SECRET: one
# entry of a key part.
knot_keys() {
	echo "key:"
	while [ $# -ge 2 ]; do
		knot_key "$1" "${TSIG_ALG:-hmac-sha256}" "$2"
		shift 2
	done
}
knot_key() {
	printf '  - id: %s\n    algorithm: %s\n    secret: %s\n' "$1" "$2" "$3"
}

# knot_remote ID PORT [KEY]: an entry of the remote part, 127.0.0.1@PORT,
# TSIG with KEY unless it is empty or NOKEY.
knot_remote() {
	printf '  - id: %s\n    address: 127.0.0.1@%s\n' "$1" "$2"
	case ${3:-NOKEY} in NOKEY) ;; *) printf '    key: %s\n' "$3" ;; esac
}

# knot_acl ID ACTION [KEY]: an entry of the acl part, ACTION (transfer,
# notify) allowed from 127.0.0.1, with TSIG KEY unless it is empty or NOKEY.
knot_acl() {
	printf '  - id: %s\n    address: 127.0.0.1\n' "$1"
	case ${3:-NOKEY} in NOKEY) ;; *) printf '    key: %s\n' "$3" ;; esac
	printf '    action: %s\n' "$2"
}

# knot_template STORAGE FILE [LINE...]: the default template, zone files
# STORAGE/FILE (%s is the zone's name), never written back, no semantic
# checks at load (Shoal and NSD run none either); then the zone part's head,
# for the caller's "  - domain:" lines.
knot_template() {
	local storage=$1 file=$2
	shift 2
	printf 'template:\n  - id: default\n    storage: "%s"\n    file: "%s"\n' "$storage" "$file"
	conf_lines '    ' 2 'zonefile-sync: -1' 'semantic-checks: off' "$@"
	echo "zone:"
}

# knot_start DIR LOG: knotd with DIR/knot.conf (its state folder DIR/db made
# here), stderr appended to LOG; sets PEER_PID.
knot_start() {
	mkdir -p "$1/db"
	${SERVER_WRAP:-} "$KNOTD" -c "$1/knot.conf" >>"$2" 2>&1 &
	PEER_PID=$!
	T_PIDS="$T_PIDS $PEER_PID"
}

# ---- NSD ----

# nsd_server_conf DIR PORT [LINE...]: the server and remote-control parts
# for NSD on 127.0.0.1@PORT as the current user, its files in DIR, one
# server process on a socket of its own, logging to DIR/nsd.log, unless a
# LINE says otherwise (zonesdir, logfile, server-count, verbosity...).
nsd_server_conf() {
	local dir=$1 port=$2
	shift 2
	printf 'server:\n  ip-address: 127.0.0.1@%s\n' "$port"
	conf_lines '  ' 5 'server-count: 1' 'reuseport: no' "zonesdir: \"$dir\"" \
		"logfile: \"$dir/nsd.log\"" 'verbosity: 1' "$@"
	cat <<-CONF
	  username: ""
	  chroot: ""
	  database: ""
	  pidfile: "$dir/nsd.pid"
	  xfrdfile: "$dir/xfrd.state"
	  zonelistfile: "$dir/zone.list"
	  xfrdir: "$dir"
	remote-control:
	  control-enable: no
	CONF
}

# nsd_keys NAME SECRET [NAME SECRET...]: HMAC-SHA256 TSIG keys.
nsd_keys() {
	while [ $# -ge 2 ]; do
		printf 'key:\n  name: %s\n  algorithm: hmac-sha256\n  secret: "%s"\n' "$1" "$2"
		shift 2
	done
}

# nsd_zone NAME FILE [LINE...]: a zone part, NAME from FILE (under zonesdir).
nsd_zone() {
	printf 'zone:\n  name: "%s"\n  zonefile: "%s"\n' "$1" "$2"
	shift 2
	conf_lines '  ' 0 "$@"
}

# nsd_start DIR LOG: NSD in the foreground with DIR/nsd.conf, stderr
# appended to LOG; sets PEER_PID.
nsd_start() {
	mkdir -p "$1"
	${SERVER_WRAP:-} "$NSD" -d -c "$1/nsd.conf" >>"$2" 2>&1 &
	PEER_PID=$!
	T_PIDS="$T_PIDS $PEER_PID"
}

# ---- BIND ----

# named_server_conf DIR PORT: the options, controls and logging of a named
# on 127.0.0.1 port PORT, files in DIR, no recursion, no NOTIFY of its own,
# logging to stderr with transfers and NOTIFY.
named_server_conf() {
	cat <<-CONF
	options {
	    directory "$1";
	    pid-file "$1/named.pid";
	    listen-on port $2 { 127.0.0.1; };
	    listen-on-v6 { none; };
	    recursion no;
	    notify no;
	    dnssec-validation no;
	    allow-query { any; };
	};
	controls { };
	logging {
	    channel everything { stderr; severity info; print-time yes; print-category yes; };
	    category default { everything; };
	    category xfer-in { everything; };
	    category notify { everything; };
	};
	CONF
}

# named_keys NAME SECRET [NAME SECRET...]: HMAC-SHA256 TSIG keys; with
# TSIG_ALG set, keys of that algorithm.
named_keys() {
	while [ $# -ge 2 ]; do
		printf 'key "%s" { algorithm %s; secret "%s"; };\n' "$1" "${TSIG_ALG:-hmac-sha256}" "$2"
		shift 2
	done
}

# named_start DIR LOG: named in the foreground with DIR/named.conf, debug
# level 1 (the log then says IXFR or AXFR for each transfer in), stderr
# appended to LOG; sets PEER_PID.
named_start() {
	mkdir -p "$1"
	${SERVER_WRAP:-} "$NAMED" -g -d 1 -c "$1/named.conf" >>"$2" 2>&1 &
	PEER_PID=$!
	T_PIDS="$T_PIDS $PEER_PID"
}

# ---- waiting and stopping ----

# peer_serves PORT PID TIMEOUT_S ZONE...: until the server on PORT answers
# every ZONE's SOA authoritatively (Knot loads zones in the background), for
# about TIMEOUT_S; fails at once when PID has exited.
peer_serves() {
	local port=$1 pid=$2 limit=$3
	shift 3
	wait_until "$limit" peer_serves_now "$port" "$pid" "$@" && ! gone "$pid"
}
peer_serves_now() {
	local port=$1 pid=$2 z
	shift 2
	gone "$pid" && return 0
	for z in "$@"; do
		"$DIG" @127.0.0.1 -p "$port" +norec +time=1 +tries=1 "$z" SOA 2>/dev/null |
			grep -q 'flags: qr aa' || return 1
	done
}

# peer_stop PID: SIGTERM and wait for it (a peer this shell started).
peer_stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
