#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_stats_outputs: shoalctl stats, shoalctl stats --json and GET /metrics show the same
# counters with the same values: the workers' (UDP, TCP, queries, zones, transfers out) and
# those kept outside them, NOTIFY out and transfers in, moved here by a secondary zone and a
# NOTIFY target (bad_primary.pl is both). stats_keys.pl puts the three in one naming.
# /metrics passes promtool check metrics, and contrib/'s Grafana dashboard uses only metrics it
# serves.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

if ! perl -MJSON::PP -e 1 2>/dev/null; then
	echo "SKIP: perl with JSON::PP is needed"
	exit 77
fi
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@"; }
keys() { perl "$SHOAL_SRCDIR/tests/integration/stats_keys.pl" "$1"; }
metrics() {
	timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "GET /metrics HTTP/1.0\r\n\r\n" >&3; cat <&3' _ "$MPORT" | sed '1,/^\r$/d'
}
notify_out() { ctl stats json | grep -o '"notify_out": {[^}]*}'; }
answered() { [ "$(json_value "$(notify_out)" answered | tr -d ' ')" = 1 ]; }

PORT=$(free_port) || exit 99
MPORT=$(free_port) || exit 99
# the primary of s.test (its zone whole, serial 2) and example.com's NOTIFY target (NOERROR)
start_bad_primary PORTB
cp "$EXAMPLES/example.com.zone" "$T_DIR/"
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 2
control: $T_DIR/ctl
metrics: 127.0.0.1@$MPORT
zones:
  - name: example.com
    file: $T_DIR/example.com.zone
    notify: [ 127.0.0.1@$PORTB NOKEY ]
  - name: s.test
    primaries: [ 127.0.0.1@$PORTB NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
wait_until 20 serial_is "$PORT" s.test 2 || fail "s.test transferred: [$(ctl zone-status)]"
ctl notify example.com >/dev/null
wait_until 20 answered || fail "example.com's NOTIFY answered: [$(notify_out)]"
q "$PORT" www.example.com A >/dev/null
q "$PORT" nx.example.com A >/dev/null
q "$PORT" +tcp ns1.s.test A >/dev/null

# the outputs, each in the common naming; read again until two JSON readings around the
# others agree (nothing moved meanwhile), a few times at most
same=0
for try in 1 2 3 4 5; do
	ctl stats json | keys json >"$T_DIR/json.keys"
	metrics | keys prometheus >"$T_DIR/prom.keys"
	ctl stats | keys text >"$T_DIR/text.keys"
	ctl stats json | keys json >"$T_DIR/json2.keys"
	if cmp -s "$T_DIR/json.keys" "$T_DIR/json2.keys"; then
		same=1
		break
	fi
	sleep 0.5
done
check_eq "the counters held still for one reading of each" 1 "$same"
for k in notify_out_sent notify_out_answered xfr_in_checks xfr_in_axfr xfr_in_bytes_in \
	udp_queries tcp_queries 'zone_nxdomain[example.com.]'; do
	check_eq "$k moved" 1 "$(awk -v k="$k" '$1 == k && $2 > 0 { n++ } END { print n + 0 }' \
		"$T_DIR/json.keys")"
done
check_eq "JSON and /metrics: the same counters and values" "" \
	"$(diff "$T_DIR/json.keys" "$T_DIR/prom.keys")"
check_eq "JSON and the table: the same counters and values" "" \
	"$(diff "$T_DIR/json.keys" "$T_DIR/text.keys")"
check_eq "and as many as the struct has counters, at least" 1 \
	"$(awk 'END { print (NR > 100) }' "$T_DIR/json.keys")"
check_match "the secondary's gauges are there" "^zone_expires\[s.test.\] [1-9]" \
	"$(cat "$T_DIR/json.keys")"

# /metrics as Prometheus's own checker reads it (naming, types, units), where installed
metrics >"$T_DIR/metrics.prom"
if command -v promtool >/dev/null; then
	out=$(promtool check metrics <"$T_DIR/metrics.prom" 2>&1)
	check_eq "promtool check metrics passes on /metrics" 0 $?
	check_eq "... and says nothing" "" "$out"
else
	echo "# promtool (Debian's prometheus) is not installed: its check is not run"
fi
# the Grafana dashboard in contrib/ draws on metrics shoald serves, every one of them
dash=$SHOAL_SRCDIR/contrib/grafana-shoal.json
check_eq "the dashboard is JSON" ok "$(perl -MJSON::PP -e 'local $/; decode_json(<>); print "ok"' \
	"$dash" 2>&1)"
used=$(grep -o 'shoal_[a-z_]*' "$dash" | sort -u)
check_eq "it uses the metrics (threads, rcodes, transfers, RRL, secondaries)" 0 \
	"$(for m in shoal_answers_total shoal_rrl_answers_total shoal_xfr_in_axfr_total \
		shoal_zone_expiry_timestamp_seconds; do printf '%s\n' "$used" | grep -qx "$m" || echo "$m"; done |
		wc -l)"
check_eq "every metric it uses is served" "" \
	"$(for m in $used; do grep -q "^# TYPE $m " "$T_DIR/metrics.prom" || echo "$m"; done)"
stop_within "$SHOALD_PID"
check_eq "shoald exits 0 (no sanitizer report)" 0 $?
done_testing
