# Shared by the zone transfer tests: Knot DNS, NSD and BIND started on
# loopback as Shoal's secondaries or primaries, each with its own
# configuration in the test's folder and a free high port, never 53.
# Sourced after tests/integration/lib.sh.

KNOTD=$(command -v knotd || ls /usr/sbin/knotd 2>/dev/null)
KNOTC=$(command -v knotc || ls /usr/sbin/knotc 2>/dev/null)
NSD=$(command -v nsd || ls /usr/sbin/nsd 2>/dev/null)
NAMED=$(command -v named || ls /usr/sbin/named 2>/dev/null)

# SHOAL_KEEP=1 keeps the test's folder (configurations, logs) for a look after.
if [ -n "${SHOAL_KEEP:-}" ]; then
	trap 'for p in $T_PIDS; do kill "$p" 2>/dev/null; done; wait; echo "kept $T_DIR"' EXIT
fi

# The key every peer shares with Shoal, and one Shoal does not know.
XFR_KEY=xfr-key
XFR_SECRET="hVXazZpI2xIG1nyPHmlJNC8tV89c4sQXRlcOGNTYPG0="
OTHER_KEY=other-key
OTHER_SECRET="Kp1o0bUJyDNBvgSdmqNTh5sNDcc2ENqF+5lgdIBOqlE="

# serial_is PORT ZONE SERIAL: the server on PORT serves ZONE with SERIAL.
serial_is() {
	[ "$("$DIG" @127.0.0.1 -p "$1" +norec +time=1 +tries=1 +short "$2" SOA 2>/dev/null |
		awk '{print $3}')" = "$3" ]
}

# peer_serial PORT ZONE: the serial served, or nothing.
peer_serial() {
	"$DIG" @127.0.0.1 -p "$1" +norec +time=1 +tries=1 +short "$2" SOA 2>/dev/null |
		awk '{print $3}'
}

# answers PORT NAME TYPE [NAME TYPE...]: the answer sections, sorted, TTLs
# kept, for comparing servers.
answers() {
	local port=$1
	shift
	"$DIG" @127.0.0.1 -p "$port" +norec +time=2 +tries=1 +noall +answer +nottlunits "$@" \
		2>&1 | sort
}

# ---- Shoal's secondaries: Knot, NSD, BIND ----
# Each takes DIR PORT PRIMARY_PORT and the zones in $SEC_ZONES as
# "ZONE:KEY" (KEY: NOKEY, $XFR_KEY or $OTHER_KEY), transfers them from
# Shoal on 127.0.0.1@PRIMARY_PORT and accepts its NOTIFY; sets PEER_PID.

# knot_server_conf DIR PORT: the server, log, database and first key parts of
# a knotd configuration on 127.0.0.1@PORT with its state under DIR; the
# caller appends more keys and the rest.
knot_server_conf() {
	local dir=$1 port=$2
	cat <<-CONF
	server:
	    rundir: "$dir"
	    listen: 127.0.0.1@$port
	    udp-workers: 1
	    tcp-workers: 1
	    background-workers: 1
	log:
	  - target: stderr
	    any: info
	database:
	    storage: "$dir/db"
	key:
	  - id: $XFR_KEY
	    algorithm: hmac-sha256
	    secret: $XFR_SECRET
	CONF
}

knot_secondary() {
	local dir=$1 port=$2 primary=$3 z name key
	mkdir -p "$dir/db" "$dir/zones"
	knot_server_conf "$dir" "$port" >"$dir/knot.conf"
	cat >>"$dir/knot.conf" <<-CONF
	  - id: $OTHER_KEY
	    algorithm: hmac-sha256
	    secret: $OTHER_SECRET
	remote:
	  - id: shoal-NOKEY
	    address: 127.0.0.1@$primary
	  - id: shoal-$XFR_KEY
	    address: 127.0.0.1@$primary
	    key: $XFR_KEY
	  - id: shoal-$OTHER_KEY
	    address: 127.0.0.1@$primary
	    key: $OTHER_KEY
	acl:
	  - id: notify-NOKEY
	    address: 127.0.0.1
	    action: notify
	  - id: notify-$XFR_KEY
	    address: 127.0.0.1
	    key: $XFR_KEY
	    action: notify
	  - id: notify-$OTHER_KEY
	    address: 127.0.0.1
	    key: $OTHER_KEY
	    action: notify
	template:
	  - id: default
	    storage: "$dir/zones"
	    file: "%s.zone"
	    zonefile-sync: -1
	    semantic-checks: off
	zone:
	CONF
	for z in $SEC_ZONES; do
		name=${z%%:*} key=${z#*:}
		printf '  - domain: %s\n    master: shoal-%s\n    acl: notify-%s\n' \
			"$name" "$key" "$key" >>"$dir/knot.conf"
	done
	"$KNOTD" -c "$dir/knot.conf" >"$dir/log" 2>&1 &
	PEER_PID=$!
}

# nsd_server_conf DIR PORT: the server and remote-control parts of an NSD
# configuration for one process on 127.0.0.1@PORT that keeps its files in DIR.
nsd_server_conf() {
	local dir=$1 port=$2
	cat <<-CONF
	server:
	  ip-address: 127.0.0.1@$port
	  server-count: 1
	  reuseport: no
	  username: ""
	  chroot: ""
	  zonesdir: "$dir"
	  database: ""
	  pidfile: "$dir/nsd.pid"
	  xfrdfile: "$dir/xfrd.state"
	  zonelistfile: "$dir/zone.list"
	  xfrdir: "$dir"
	  logfile: "$dir/log"
	  verbosity: 2
	remote-control:
	  control-enable: no
	CONF
}

nsd_secondary() {
	local dir=$1 port=$2 primary=$3 z name key
	mkdir -p "$dir"
	{
		nsd_server_conf "$dir" "$port"
		cat <<-CONF
	key:
	  name: $XFR_KEY
	  algorithm: hmac-sha256
	  secret: "$XFR_SECRET"
	key:
	  name: $OTHER_KEY
	  algorithm: hmac-sha256
	  secret: "$OTHER_SECRET"
	CONF
	} >"$dir/nsd.conf"
	for z in $SEC_ZONES; do
		name=${z%%:*} key=${z#*:}
		printf 'zone:\n  name: %s\n  zonefile: %s.zone\n  request-xfr: 127.0.0.1@%s %s\n  allow-notify: 127.0.0.1 %s\n' \
			"$name" "$name" "$primary" "$key" "$key" >>"$dir/nsd.conf"
	done
	"$NSD" -d -c "$dir/nsd.conf" >"$dir/stderr" 2>&1 &
	PEER_PID=$!
}

bind_secondary() {
	local dir=$1 port=$2 primary=$3 z name key keyclause
	mkdir -p "$dir"
	cat >"$dir/named.conf" <<-CONF
	options {
	    directory "$dir";
	    pid-file "$dir/named.pid";
	    listen-on port $port { 127.0.0.1; };
	    listen-on-v6 { none; };
	    recursion no;
	    notify no;
	    dnssec-validation no;
	    allow-query { any; };
	};
	controls { };
	key "$XFR_KEY" { algorithm hmac-sha256; secret "$XFR_SECRET"; };
	key "$OTHER_KEY" { algorithm hmac-sha256; secret "$OTHER_SECRET"; };
	logging {
	    channel everything { stderr; severity info; print-time yes; print-category yes; };
	    category default { everything; };
	    category xfer-in { everything; };
	    category notify { everything; };
	};
	CONF
	for z in $SEC_ZONES; do
		name=${z%%:*} key=${z#*:} keyclause=""
		[ "$key" != NOKEY ] && keyclause=" key $key"
		cat >>"$dir/named.conf" <<-CONF
		zone "$name" {
		    type secondary;
		    file "$name.db";
		    primaries port $primary { 127.0.0.1$keyclause; };
		    allow-notify { 127.0.0.1; };
		};
		CONF
	done
	# -d 1: the log says IXFR or AXFR for each transfer in
	"$NAMED" -g -d 1 -c "$dir/named.conf" >"$dir/log" 2>&1 &
	PEER_PID=$!
}

# ---- Shoal's primary: Knot ----
# knot_primary DIR PORT SECONDARY_PORT: Knot on 127.0.0.1@PORT serving the
# zones of $PRI_ZONES ("ZONE:KEY", each from DIR/ZONE.zone), letting Shoal
# transfer them (signed with KEY unless NOKEY) and notifying it on
# 127.0.0.1@SECONDARY_PORT; a reload of a file with a newer serial keeps
# the differences for IXFR (zonefile-load: difference). Sets PEER_PID.
knot_primary() {
	local dir=$1 port=$2 secondary=$3 z name key
	mkdir -p "$dir/db"
	knot_server_conf "$dir" "$port" >"$dir/knot.conf"
	cat >>"$dir/knot.conf" <<-CONF
	remote:
	  - id: shoal-NOKEY
	    address: 127.0.0.1@$secondary
	  - id: shoal-$XFR_KEY
	    address: 127.0.0.1@$secondary
	    key: $XFR_KEY
	acl:
	  - id: xfr-NOKEY
	    address: 127.0.0.1
	    action: transfer
	  - id: xfr-$XFR_KEY
	    address: 127.0.0.1
	    key: $XFR_KEY
	    action: transfer
	template:
	  - id: default
	    storage: "$dir"
	    file: "%s.zone"
	    zonefile-sync: -1
	    zonefile-load: difference
	    journal-content: changes
	    semantic-checks: off
	zone:
	CONF
	for z in $PRI_ZONES; do
		name=${z%%:*} key=${z#*:}
		printf '  - domain: %s\n    notify: shoal-%s\n    acl: xfr-%s\n' \
			"$name" "$key" "$key" >>"$dir/knot.conf"
	done
	"$KNOTD" -c "$dir/knot.conf" >>"$dir/log" 2>&1 &
	PEER_PID=$!
}

# ---- Shoal's primary: NSD ----
# nsd_primary DIR PORT SECONDARY_PORT ZONE: NSD on 127.0.0.1@PORT serving
# ZONE from DIR/ZONE.zone to anyone on loopback, notifying Shoal on
# 127.0.0.1@SECONDARY_PORT; a SIGHUP rereads a changed file and keeps the
# differences for IXFR (create-ixfr). Sets PEER_PID.
nsd_primary() {
	local dir=$1 port=$2 secondary=$3 zone=$4
	{
		nsd_server_conf "$dir" "$port"
		cat <<-CONF
	zone:
	  name: $zone
	  zonefile: $zone.zone
	  provide-xfr: 127.0.0.1 NOKEY
	  notify: 127.0.0.1@$secondary NOKEY
	  store-ixfr: yes
	  create-ixfr: yes
	CONF
	} >"$dir/nsd.conf"
	"$NSD" -d -c "$dir/nsd.conf" >"$dir/stderr" 2>&1 &
	PEER_PID=$!
}
