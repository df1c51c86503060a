# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by the zone transfer tests: Knot DNS, NSD and BIND started on
# loopback as Shoal's secondaries or primaries, each with its own
# configuration in the test's folder and a free high port, never 53.
# Sourced after tests/integration/lib.sh; the peers' configuration and
# start are tests/peers.sh's.

# shellcheck source=../peers.sh
. "$SHOAL_SRCDIR/tests/peers.sh"

# SHOAL_KEEP=1 keeps the test's folder (configurations, logs) for a look after.
if [ -n "${SHOAL_KEEP:-}" ]; then
	trap 'for p in $T_PIDS; do kill "$p" 2>/dev/null; done; wait; echo "kept $T_DIR"' EXIT
fi

# The key every peer shares with Shoal, and one Shoal does not know.
XFR_KEY=xfr-key
XFR_SECRET="hVXazZpI2xIG1nyPHmlJNC8tV89c4sQXRlcOGNTYPG0="
OTHER_KEY=other-key
OTHER_SECRET="Kp1o0bUJyDNBvgSdmqNTh5sNDcc2ENqF+5lgdIBOqlE="

# hosts_version ZONE SERIAL: T_DIR/ZONE.zone at SERIAL, with one host per version up to it
# (h1 to hSERIAL), written whole and renamed into place
hosts_version() {
	{
		printf '$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1 hostmaster %s 3600 600 86400 60\n' "$1" "$2"
		printf '@ IN NS ns1\nns1 IN A 192.0.2.1\n'
		seq 1 "$2" | sed 's/.*/h& IN A 192.0.2.&/'
	} >"$T_DIR/$1.zone.new"
	mv "$T_DIR/$1.zone.new" "$T_DIR/$1.zone"
}

# ixfr_shape TEXT: an IXFR answer as "SOAS/SERIAL": how many SOA records it holds (the
# changes, condensed into one as RFC 1995 6 lets a server: 4; the whole zone: 2) and the
# serial it leads to
ixfr_shape() {
	printf '%s\n' "$1" | awk '$4 == "SOA" { n++; if (n == 1) s = $7 } END { print n "/" s }'
}

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

# knot_zones FORMAT ZONE:KEY...: a zone entry for each ZONE, its lines
# FORMAT (printf) with KEY for each %s.
knot_zones() {
	local format=$1 z key
	shift
	for z in "$@"; do
		key=${z#*:}
		printf '  - domain: %s\n' "${z%%:*}"
		# shellcheck disable=SC2059
		printf "$format" "$key" "$key"
	done
}

# ---- Shoal's secondaries: Knot, NSD, BIND ----
# Each takes DIR PORT PRIMARY_PORT and the zones in $SEC_ZONES as
# "ZONE:KEY" (KEY: NOKEY, $XFR_KEY or $OTHER_KEY), transfers them from
# Shoal on 127.0.0.1@PRIMARY_PORT and accepts its NOTIFY; sets PEER_PID.

knot_secondary() {
	local dir=$1 port=$2 primary=$3 key
	mkdir -p "$dir/zones"
	{
		knot_server_conf "$dir" "$port" info
		knot_keys "$XFR_KEY" "$XFR_SECRET" "$OTHER_KEY" "$OTHER_SECRET"
		echo "remote:"
		for key in NOKEY "$XFR_KEY" "$OTHER_KEY"; do
			knot_remote "shoal-$key" "$primary" "$key"
		done
		echo "acl:"
		for key in NOKEY "$XFR_KEY" "$OTHER_KEY"; do
			knot_acl "notify-$key" notify "$key"
		done
		knot_template "$dir/zones" "%s.zone"
		# shellcheck disable=SC2086
		knot_zones '    master: shoal-%s\n    acl: notify-%s\n' $SEC_ZONES
	} >"$dir/knot.conf"
	knot_start "$dir" "$dir/log"
}

nsd_secondary() {
	local dir=$1 port=$2 primary=$3 z name key
	mkdir -p "$dir"
	{
		nsd_server_conf "$dir" "$port" "logfile: \"$dir/log\"" "verbosity: 2"
		nsd_keys "$XFR_KEY" "$XFR_SECRET" "$OTHER_KEY" "$OTHER_SECRET"
		for z in $SEC_ZONES; do
			name=${z%%:*} key=${z#*:}
			nsd_zone "$name" "$name.zone" "request-xfr: 127.0.0.1@$primary $key" \
				"allow-notify: 127.0.0.1 $key"
		done
	} >"$dir/nsd.conf"
	nsd_start "$dir" "$dir/stderr"
}

bind_secondary() {
	local dir=$1 port=$2 primary=$3 z name key keyclause
	mkdir -p "$dir"
	{
		named_server_conf "$dir" "$port"
		named_keys "$XFR_KEY" "$XFR_SECRET" "$OTHER_KEY" "$OTHER_SECRET"
		for z in $SEC_ZONES; do
			name=${z%%:*} key=${z#*:} keyclause=""
			[ "$key" != NOKEY ] && keyclause=" key $key"
			cat <<-CONF
			zone "$name" {
			    type secondary;
			    file "$name.db";
			    primaries port $primary { 127.0.0.1$keyclause; };
			    allow-notify { 127.0.0.1; };
			};
			CONF
		done
	} >"$dir/named.conf"
	named_start "$dir" "$dir/log"
}

# ---- Shoal's primary: Knot ----
# knot_primary DIR PORT SECONDARY_PORT: Knot on 127.0.0.1@PORT serving the
# zones of $PRI_ZONES ("ZONE:KEY", each from DIR/ZONE.zone), letting Shoal
# transfer them (signed with KEY unless NOKEY) and notifying it on
# 127.0.0.1@SECONDARY_PORT; a reload of a file with a newer serial keeps
# the differences for IXFR (zonefile-load: difference). Sets PEER_PID.
knot_primary() {
	local dir=$1 port=$2 secondary=$3 key
	{
		knot_server_conf "$dir" "$port" info
		knot_keys "$XFR_KEY" "$XFR_SECRET"
		echo "remote:"
		for key in NOKEY "$XFR_KEY"; do
			knot_remote "shoal-$key" "$secondary" "$key"
		done
		echo "acl:"
		for key in NOKEY "$XFR_KEY"; do
			knot_acl "xfr-$key" transfer "$key"
		done
		knot_template "$dir" "%s.zone" "zonefile-load: difference" "journal-content: changes"
		# shellcheck disable=SC2086
		knot_zones '    notify: shoal-%s\n    acl: xfr-%s\n' $PRI_ZONES
	} >"$dir/knot.conf"
	knot_start "$dir" "$dir/log"
}

# ---- Shoal's primary: NSD ----
# nsd_primary DIR PORT SECONDARY_PORT ZONE: NSD on 127.0.0.1@PORT serving
# ZONE from DIR/ZONE.zone to anyone on loopback, notifying Shoal on
# 127.0.0.1@SECONDARY_PORT; a SIGHUP rereads a changed file and keeps the
# differences for IXFR (create-ixfr). Sets PEER_PID.
nsd_primary() {
	local dir=$1 port=$2 secondary=$3 zone=$4
	{
		nsd_server_conf "$dir" "$port" "logfile: \"$dir/log\"" "verbosity: 2"
		nsd_zone "$zone" "$zone.zone" "provide-xfr: 127.0.0.1 NOKEY" \
			"notify: 127.0.0.1@$secondary NOKEY" "store-ixfr: yes" "create-ixfr: yes"
	} >"$dir/nsd.conf"
	nsd_start "$dir" "$dir/stderr"
}

# ---- Shoal's primary or secondary: a scripted one ----
# start_bad_primary NAME [SERIAL]: tests/xfr/bad_primary.pl on a free port of
# 127.0.0.1, at SERIAL (2 unless given), printing the requests it gets to
# $T_DIR/NAME.out; sets the variable NAME to its port, NAME_PID to its
# process. Skips the test without perl.
start_bad_primary() {
	local port
	command -v perl >/dev/null || { echo "SKIP: perl is not installed"; exit 77; }
	port=$(free_port) || exit 99
	BAD_SERIAL=${2:-2} perl "$SHOAL_SRCDIR/tests/xfr/bad_primary.pl" "$port" >"$T_DIR/$1.out" 2>&1 &
	T_PIDS="$T_PIDS $!"
	printf -v "$1_PID" %s "$!"
	wait_until 10 grep -q ready "$T_DIR/$1.out" || { echo "bad_primary.pl did not start"; exit 99; }
	printf -v "$1" %s "$port"
}
