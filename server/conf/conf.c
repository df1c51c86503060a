/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoald's configuration: the option table, the YAML loader, the command line, --help. */
#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/conf/conf.h"
#include "server/conf/internal.h"

#define OFF(field) offsetof(conf_t, field)

/*
 * Every option, once. The YAML loader looks keys up here, the command line
 * accepts --<cli> for each entry with a cli name, --help prints the table,
 * and tests/unit/test_conf.c checks it against man/shoald.conf.5.
 */
const conf_option_t conf_options[] = {
	{ "listen", "listen", "ADDR@PORT", CONF_LISTEN, 0, 0, NULL, "0.0.0.0@53, ::@53",
	  OFF(listen), "address and port to answer on; a list (repeat on the command line)",
	  CONF_RESTART },
	{ "listen-tls", "listen-tls", "ADDR@PORT", CONF_LISTEN, CONF_TLS_PORT, 0, NULL, "(none)",
	  OFF(listen_tls),
	  "address and port to answer DNS over TLS and zone transfers over TLS on (port 853 "
	  "when none is given); a list",
	  CONF_RESTART },
	{ "threads", "threads", "N", CONF_UINT, 1, CONF_THREADS_MAX, NULL, "online CPUs",
	  OFF(threads), "number of worker threads", CONF_RESTART },
	{ "socket-mode", "socket-mode", "MODE", CONF_ENUM, 0, 0, socket_mode_names, "reuseport",
	  OFF(socket_mode), "reuseport: one UDP socket per worker; shared: one socket for all",
	  CONF_RESTART },
	{ "cpu-affinity", "cpu-affinity", "yes|no", CONF_BOOL, 0, 0, NULL, "no", OFF(cpu_affinity),
	  "pin each worker to CPUs; a datagram goes to the worker of the CPU it came in on",
	  CONF_RESTART },
	{ "udp-receive-buffer", NULL, "OCTETS", CONF_UINT, 65536, 1073741824, NULL, "4194304",
	  OFF(udp_receive_buffer), "receive buffer asked for each UDP socket (SO_RCVBUF)",
	  CONF_RESTART },
	{ "udp-send-buffer", NULL, "OCTETS", CONF_UINT, 65536, 1073741824, NULL, "4194304",
	  OFF(udp_send_buffer), "send buffer asked for each UDP socket (SO_SNDBUF)", CONF_RESTART },
	{ "user", "user", "USER", CONF_STRING, 0, 0, NULL, "(none)", OFF(user),
	  "drop privileges to this user after binding", CONF_RESTART },
	{ "group", "group", "GROUP", CONF_STRING, 0, 0, NULL, "the user's group", OFF(group),
	  "drop privileges to this group after binding", CONF_RESTART },
	{ "nsid", "nsid", "ID", CONF_STRING, 0, 0, NULL, "(none)", OFF(nsid),
	  "NSID (RFC 5001) sent to clients that ask", CONF_RESTART },
	{ "nsid-thread", "nsid-thread", "yes|no", CONF_BOOL, 0, 0, NULL, "yes", OFF(nsid_thread),
	  "append /<thread index> to the NSID", CONF_RESTART },
	{ "identity", "identity", "NAME", CONF_STRING, 0, UINT8_MAX, NULL, "the host name",
	  OFF(identity), "answer to TXT queries of class CH for id.server and hostname.bind",
	  CONF_RESTART },
	{ "version", NULL, "TEXT", CONF_STRING, 0, UINT8_MAX, NULL, "(hidden)", OFF(version),
	  "answer to TXT queries of class CH for version.server and version.bind", CONF_RESTART },
	{ "control", "control", "PATH", CONF_STRING, 0, 0, NULL, "(none)", OFF(control),
	  "unix socket for shoalctl (mode 0600; shoalctl's default: " CONF_CONTROL_DEFAULT ")",
	  CONF_RESTART },
	{ "pid-file", "pid-file", "PATH", CONF_STRING, 0, 0, NULL, "(none)", OFF(pid_file),
	  "write the process id to this file while running", CONF_RESTART },
	{ "tls-key-file", "tls-key-file", "PATH", CONF_STRING, 0, 0, NULL,
	  "a self-signed key kept in state-dir", OFF(tls_key_file),
	  "the TLS private key (PEM), with tls-cert-file; read again by reconfig", CONF_RUNTIME },
	{ "tls-cert-file", "tls-cert-file", "PATH", CONF_STRING, 0, 0, NULL,
	  "a self-signed certificate kept in state-dir", OFF(tls_cert_file),
	  "the TLS certificate chain (PEM), with tls-key-file; read again by reconfig",
	  CONF_RUNTIME },
	{ "tls-ca-file", "tls-ca-file", "PATH", CONF_STRING, 0, 0, NULL, "(none)", OFF(tls_ca_file),
	  "CA certificates (PEM) that sign clients' certificates (provide-xfr \"tls ca\") and "
	  "primaries' (tls-hostname)",
	  CONF_RUNTIME },
	{ "tls-handshake-timeout", "tls-handshake-timeout", "MS", CONF_UINT, 1, 3600000, NULL,
	  "5000", OFF(tcp.handshake_timeout_ms), "time a TLS client has to finish its handshake",
	  CONF_RESTART },
	{ "tls-max-handshakes", "tls-max-handshakes", "N", CONF_UINT, 1, 65536, NULL, "64",
	  OFF(tcp.max_handshakes),
	  "TLS handshakes under way per worker; past it the oldest is closed", CONF_RESTART },
	{ "log-level", "log-level", "LEVEL", CONF_ENUM, 0, 0, log_level_names, "info",
	  OFF(log_level), "error, warning, notice, info or debug", CONF_RUNTIME },
	{ "syslog", "syslog", "yes|no", CONF_BOOL, 0, 0, NULL, "no", OFF(syslog),
	  "also log to syslog", CONF_RESTART },
	{ "log-file", "log-file", "PATH", CONF_STRING, 0, 0, NULL, "(none)", OFF(log_file),
	  "append log lines to this file instead of stderr; log-reopen or SIGUSR1 reopens it",
	  CONF_RESTART },
	{ "edns-size", "edns-size", "OCTETS", CONF_UINT, DNS_UDP_MIN, 4096, NULL, "1232",
	  OFF(edns_size), "largest UDP answer, advertised in EDNS", CONF_RESTART },
	{ "tcp-idle-timeout", "tcp-idle-timeout", "MS", CONF_UINT, 1, 3600000, NULL, "10000",
	  OFF(tcp.idle_timeout_ms), "close a TCP connection idle this long", CONF_RESTART },
	{ "tcp-max-connections", "tcp-max-connections", "N", CONF_UINT, 1, 65536, NULL, "256",
	  OFF(tcp.max_connections),
	  "most TCP connections per worker (fewer if descriptors are short)", CONF_RESTART },
	{ "tcp-message-timeout", "tcp-message-timeout", "MS", CONF_UINT, 1, 3600000, NULL, "5000",
	  OFF(tcp.message_timeout_ms), "time to receive one whole TCP message", CONF_RESTART },
	{ "tcp-max-output", "tcp-max-output", "OCTETS", CONF_UINT, 65537, 67108864, NULL, "262144",
	  OFF(tcp.max_output), "answer octets queued per TCP connection", CONF_RESTART },
	{ "tcp-max-per-address", "tcp-max-per-address", "N", CONF_UINT, 0, 65536, NULL, "32",
	  OFF(tcp.max_per_address),
	  "most TCP connections one client address holds over all workers; 0: no limit",
	  CONF_RESTART },
	{ "max-nsec3-iterations", NULL, "N", CONF_UINT, 0, ZONE_MAX_NSEC3_ITERATIONS_MAX, NULL,
	  "150", OFF(max_nsec3_iterations), "the most NSEC3 iterations a zone may ask for",
	  CONF_RUNTIME },
	{ "max-types-per-name", "max-types-per-name", "N", CONF_UINT, 1, ZONE_LIMIT_MAX, NULL,
	  "100", OFF(max_types_per_name),
	  "refuse a zone with a name of more types (a signed type counts twice)", CONF_RUNTIME },
	{ "max-records-per-type", "max-records-per-type", "N", CONF_UINT, 1, ZONE_LIMIT_MAX, NULL,
	  "1000", OFF(max_records_per_type), "refuse a zone with an RRset of more records",
	  CONF_RUNTIME },
	{ "reload-timeout", "reload-timeout", "SECONDS", CONF_UINT, 1, 86400, NULL, "300",
	  OFF(reload_timeout), "abandon a reload still running after this long; the zones stay",
	  CONF_RUNTIME },
	{ "max-zone-file-size", "max-zone-file-size", "MIB", CONF_UINT, 1, 1048576, NULL, "1024",
	  OFF(max_zone_file_mib), "MiB read for one zone, its $INCLUDEs counted", CONF_RUNTIME },
	{ "max-zone-includes", "max-zone-includes", "N", CONF_UINT, 0, 65536, NULL, "256",
	  OFF(max_zone_includes), "$INCLUDE directives followed for one zone", CONF_RUNTIME },
	{ "ixfr-journal-size", NULL, "OCTETS", CONF_UINT, 0, UINT32_MAX, NULL, "1048576",
	  OFF(ixfr_journal_size), "IXFR history kept per zone (0: none; a zone may set its own)",
	  CONF_RUNTIME },
	{ "ixfr-journal-total", NULL, "MIB", CONF_UINT, 0, 1048576, NULL, "1024",
	  OFF(ixfr_journal_total_mib),
	  "MiB of every zone's IXFR journal files in state-dir together (0: in memory only)",
	  CONF_RESTART },
	{ "zonefile-sync", NULL, "SECONDS", CONF_UINT, 0, CONF_ZONEFILE_SYNC_MAX, NULL, "0",
	  OFF(zonefile_sync),
	  "write a secondary's file this long after a new version, one write for the changes "
	  "meanwhile (0: at once; a zone may set its own)",
	  CONF_RUNTIME },
	{ "max-zone-size", NULL, "OCTETS", CONF_UINT, 512, UINT32_MAX, NULL, "1073741824",
	  OFF(max_zone_size), "octets one incoming zone transfer may bring", CONF_RUNTIME },
	{ "notify-retry", NULL, "N", CONF_UINT, 1, 20, NULL, "5", OFF(notify_retry),
	  "NOTIFY sent this many times until a secondary answers", CONF_RUNTIME },
	{ "xfr-timeout", NULL, "SECONDS", CONF_UINT, 1, 86400, NULL, "600", OFF(xfr_timeout),
	  "give up an incoming zone transfer that takes longer", CONF_RUNTIME },
	{ "xfr-message-timeout", NULL, "SECONDS", CONF_UINT, 1, 3600, NULL, "30",
	  OFF(xfr_message_timeout), "time to connect to a primary, and for each message",
	  CONF_RUNTIME },
	{ "transfers-out", NULL, "N", CONF_UINT, 1, 1024, NULL, "10", OFF(transfers_out),
	  "outgoing zone transfers at once, per worker thread", CONF_RESTART },
	{ "transfers-in", NULL, "N", CONF_UINT, 1, 256, NULL, "10", OFF(transfers_in),
	  "incoming zone transfers at once: the threads that refresh secondary zones",
	  CONF_RESTART },
	{ "update-max-inflight", NULL, "N", CONF_UINT, 1, 65536, NULL, "64",
	  OFF(update_max_inflight),
	  "dynamic updates queued or being applied for one zone; past it SERVFAIL", CONF_RUNTIME },
	{ "update-max-inflight-total", NULL, "N", CONF_UINT, 1, 1048576, NULL, "1024",
	  OFF(update_max_inflight_total),
	  "dynamic updates queued or being applied for all zones together; past it SERVFAIL",
	  CONF_RUNTIME },
	{ "update-max-records", NULL, "N", CONF_UINT, 1, 65535, NULL, "1000",
	  OFF(update_max_records), "records in one update's update section; past it REFUSED",
	  CONF_RUNTIME },
	{ "update-rate-per-key", NULL, "N", CONF_UINT, 0, 1000000, NULL, "0",
	  OFF(update_rate_per_key),
	  "dynamic updates a second per TSIG key (unsigned: per address); past it REFUSED; "
	  "0: no limit",
	  CONF_RUNTIME },
	{ "serial-query-rate", NULL, "N", CONF_UINT, 1, 100000, NULL, "500", OFF(serial_query_rate),
	  "SOA queries a second to the primaries, all secondary zones together", CONF_RUNTIME },
	{ "min-refresh-time", NULL, "SECONDS", CONF_UINT, 1, 86400 * 28, NULL, "5",
	  OFF(min_refresh_time), "a secondary checks its primary at least this far apart",
	  CONF_RUNTIME },
	{ "max-refresh-time", NULL, "SECONDS", CONF_UINT, 1, 86400 * 28, NULL, "86400",
	  OFF(max_refresh_time), "and at most this far apart, whatever the SOA says",
	  CONF_RUNTIME },
	{ "min-retry-time", NULL, "SECONDS", CONF_UINT, 1, 86400 * 28, NULL, "5",
	  OFF(min_retry_time), "the shortest wait after a failed check", CONF_RUNTIME },
	{ "max-retry-time", NULL, "SECONDS", CONF_UINT, 1, 86400 * 28, NULL, "3600",
	  OFF(max_retry_time), "the longest wait after a failed check", CONF_RUNTIME },
	{ "min-expire-time", NULL, "SECONDS", CONF_UINT, 1, 86400 * 365, NULL, "10",
	  OFF(min_expire_time), "a secondary serves its last version at least this long",
	  CONF_RUNTIME },
	{ "max-expire-time", NULL, "SECONDS", CONF_UINT, 1, 86400 * 365, NULL, "2419200",
	  OFF(max_expire_time), "and at most this long without a successful check", CONF_RUNTIME },
	{ "keys", NULL, "LIST", CONF_KEYS, 0, 0, NULL, "(none)", OFF(keys),
	  "TSIG keys: a list of {name, algorithm, secret or secret-file}", CONF_RUNTIME },
	{ "allow-query", NULL, "LIST", CONF_ACL, 0, 0, NULL, "(anyone)", OFF(allow_query),
	  "who may query the zones without an allow-query of their own: ADDR[/PREFIX] KEY|NOKEY",
	  CONF_RUNTIME },
	{ "dnstap-file", NULL, "PATH", CONF_STRING, 0, 0, NULL, "(none)", OFF(dnstap_file),
	  "write dnstap (AUTH_QUERY, AUTH_RESPONSE) to this file, made anew at each start",
	  CONF_RESTART },
	{ "dnstap-socket", NULL, "PATH", CONF_STRING, 0, 0, NULL, "(none)", OFF(dnstap_socket),
	  "send dnstap to the collector listening on this unix socket", CONF_RESTART },
	{ "dnstap-sample", NULL, "N", CONF_UINT, 1, 1000000, NULL, "1", OFF(dnstap_sample),
	  "log one query in N (and its response) to dnstap", CONF_RESTART },
	{ "rate-limit", "rate-limit", "N", CONF_UINT, 0, RRL_RATE_MAX, NULL, "0", OFF(rrl.rate),
	  "UDP answers per second per response class (RRL); 0: off", CONF_RESTART },
	{ "rate-limit-nxdomain", "rate-limit-nxdomain", "N", CONF_UINT, 0, RRL_RATE_MAX, NULL,
	  "as rate-limit", OFF(rrl.nxdomain_rate),
	  "NXDOMAIN answers per second per class; 0: not limited", CONF_RESTART },
	{ "rate-limit-errors", "rate-limit-errors", "N", CONF_UINT, 0, RRL_RATE_MAX, NULL,
	  "as rate-limit", OFF(rrl.error_rate),
	  "error answers per second per class; 0: not limited", CONF_RESTART },
	{ "rate-limit-slip", "rate-limit-slip", "N", CONF_UINT, 0, RRL_SLIP_MAX, NULL, "2",
	  OFF(rrl.slip), "send every Nth limited answer truncated (TC); 0: drop them all",
	  CONF_RESTART },
	{ "rate-limit-ipv4-prefix", "rate-limit-ipv4-prefix", "BITS", CONF_UINT, 0, 32, NULL, "24",
	  OFF(rrl.ipv4_prefix), "IPv4 clients in one network share their classes", CONF_RESTART },
	{ "rate-limit-ipv6-prefix", "rate-limit-ipv6-prefix", "BITS", CONF_UINT, 0, 128, NULL, "56",
	  OFF(rrl.ipv6_prefix), "IPv6 clients in one network share their classes", CONF_RESTART },
	{ "rate-limit-size", "rate-limit-size", "N", CONF_UINT, RRL_SIZE_MIN, RRL_SIZE_MAX, NULL,
	  "1048576", OFF(rrl.size), "classes the rate limiting table holds (8 octets each)",
	  CONF_RESTART },
	{ "rate-limit-exempt", "rate-limit-exempt", "ADDR/BITS", CONF_PREFIXES, 0, 0, NULL,
	  "(none)", OFF(rrl.exempt),
	  "networks never rate limited; a list (repeat on the command line)", CONF_RESTART },
	{ "cookie-secret", NULL, "HEX", CONF_SECRET, 0, 0, NULL, "random at start",
	  OFF(cookie_secret), "DNS cookie server secret, 32 hex digits (RFC 9018)", CONF_RESTART },
	{ "cookie-secret-staging", NULL, "HEX", CONF_SECRET, 0, 0, NULL, "(none)",
	  OFF(cookie_secret_staging), "a second cookie secret that is accepted, not used",
	  CONF_RESTART },
	{ "cookie-require", "cookie-require", "yes|no", CONF_BOOL, 0, 0, NULL, "no",
	  OFF(cookie_require),
	  "answer BADCOOKIE over UDP to a client cookie without a valid server cookie",
	  CONF_RESTART },
	{ "zones-dir", NULL, "DIR", CONF_STRING, 0, 0, NULL, "the configuration file's folder",
	  OFF(zones_dir), "folder that relative zone file paths start from", CONF_RUNTIME },
	{ "state-dir", NULL, "DIR", CONF_STRING, 0, 0, NULL, CONF_STATE_DIR_DEFAULT, OFF(state_dir),
	  "folder of the zones' timers kept across restarts (relative: to the file's folder)",
	  CONF_RESTART },
	{ "metrics", "metrics", "[ADDR@]PORT", CONF_ADDR, 0, 0, NULL, "(off)", OFF(metrics),
	  "serve Prometheus metrics at GET /metrics over HTTP; a port alone: 127.0.0.1",
	  CONF_RESTART },
	{ "metrics-allow", "metrics-allow", "ADDR/BITS", CONF_PREFIXES, 0, 0, NULL, "loopback",
	  OFF(metrics_allow),
	  "networks whose clients may read the metrics; a list (repeat on the command line)",
	  CONF_RESTART },
	{ "dnssec-policies", NULL, "LIST", CONF_POLICIES, 0, 0, NULL, "(none)",
	  OFF(dnssec_policies), "DNSSEC signing policies: a list of {id, algorithm, ...}",
	  CONF_RUNTIME },
	{ "keys-dir", NULL, "DIR", CONF_STRING, 0, 0, NULL, CONF_KEYS_DIR_DEFAULT, OFF(keys_dir),
	  "folder of the zones' DNSSEC keys (relative: to the file's folder)", CONF_RESTART },
	{ "templates", NULL, "LIST", CONF_TEMPLATES, 0, 0, NULL, "(none)", OFF(templates),
	  "settings catalog zones' members are configured with: a list of {id, zone keys}",
	  CONF_RUNTIME },
	{ "zones", "zone", "NAME=PATH", CONF_ZONES, 0, 0, NULL, "(none)", OFF(zone_runs),
	  "zones to serve: a list of {name, file} (repeat on the command line)", CONF_RUNTIME },
};

const size_t conf_option_count = sizeof(conf_options) / sizeof(conf_options[0]);

const conf_zone_key_t conf_zone_keys[] = {
	{ "name", "the zone's apex" },
	{ "file",
	  "its master file; for a secondary, where each transfer is saved (relative: in state-dir)" },
	{ "primaries", "servers to transfer it from, in order: the zone is a secondary" },
	{ "allow-notify", "who may send NOTIFY for it (default: the primaries)" },
	{ "provide-xfr", "who may transfer it from us" },
	{ "allow-query", "who may query it (default: the global allow-query, else anyone)" },
	{ "notify", "secondaries sent NOTIFY when its serial changes" },
	{ "ixfr-journal-size", "IXFR history kept for it, in octets" },
	{ "zonefile-sync", "seconds from a new version to its file's write" },
	{ "tls-pin", "the SPKI pins its primaries over TLS must show (strict TLS)" },
	{ "tls-hostname", "the name its primaries' certificates must be for (strict TLS)" },
	{ "dnssec-policy", "the id of the dnssec-policies entry it is signed by" },
	{ "catalog-role", "none, consumer or producer: the zone is a catalog (RFC 9432)" },
	{ "catalog-member-of", "the catalog zone made here (catalog-role producer) listing it" },
	{ "catalog-group", "its group property in that catalog (RFC 9432 4.4.2)" },
	{ "catalog-template", "a consumer's template for its members (an id of templates)" },
	{ "catalog-group-templates", "a consumer's template per group property: {GROUP: ID}" },
	{ "allow-update", "who may send it dynamic updates (RFC 2136), and what they may change" },
	{ "serial-policy", "an update's new SOA serial: increment, unixtime or dateserial" },
	{ "update-forward",
	  "yes: a secondary forwards the updates allow-update lets in to a primary" },
	{ "update-max-records", "its own update-max-records" },
	{ "update-rate-per-key", "its own update-rate-per-key: its updates counted apart" },
};

const size_t conf_zone_key_count = sizeof(conf_zone_keys) / sizeof(conf_zone_keys[0]);

/* Options of the command line only (not in the file). */
typedef struct cli_flag {
	const char *name;
	char short_name;
	const char *arg;
	const char *help;
} cli_flag_t;

static const cli_flag_t cli_flags[] = {
	{ "config", 'c', "FILE", "read the YAML configuration FILE (see shoald.conf(5))" },
	{ "check", 0, NULL, "check the configuration and the zones, then exit" },
	{ "takeover", 0, "PATH",
	  "take the sockets over from the shoald whose control socket is PATH" },
	{ "share-port", 0, NULL,
	  "join the ports another server holds, on purpose (see shoald(8))" },
	{ "help", 'h', NULL, "print this help and exit" },
	{ "version", 'V', NULL, "print the version and exit" },
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A CONF_LISTEN option's list is its field, its count right after it. */
_Static_assert(offsetof(conf_t, listen_count) ==
		       offsetof(conf_t, listen) + sizeof(((conf_t *)0)->listen),
	       "listen_count follows listen");
_Static_assert(offsetof(conf_t, listen_tls_count) ==
		       offsetof(conf_t, listen_tls) + sizeof(((conf_t *)0)->listen_tls),
	       "listen_tls_count follows listen_tls");

const listen_addr_t *conf_listen_addrs(const conf_t *cfg, const conf_option_t *o, size_t *count)
{
	const listen_addr_t *list = (const void *)((const char *)cfg + o->offset);
	*count = *(const size_t *)(list + CONF_LISTEN_MAX);
	return list;
}

/* The same, to fill. */
static listen_addr_t *listen_list(conf_t *cfg, const conf_option_t *o, size_t **count)
{
	listen_addr_t *list = (void *)((char *)cfg + o->offset);
	*count = (size_t *)(list + CONF_LISTEN_MAX);
	return list;
}

int conf_parse_listen(const char *text, listen_addr_t *a)
{
	addr_parsed_t p;
	if (addr_parse(text, ADDR_PORT, &p, NULL, 0) < 0)
		return SHOAL_EINVAL;
	memset(a, 0, sizeof(*a));
	a->addr = p.sa;
	a->addr_len = p.len;
	addr_text((const struct sockaddr *)&a->addr, a->text, sizeof(a->text));
	return 0;
}

int conf_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(s, no[i]))
			return *out = false, 0;
	}
	return SHOAL_EINVAL;
}

/*
 * Store the scalar `value` for option o. Returns 0, or SHOAL_EINVAL with
 * the reason (without location) in err.
 */
static int set_scalar_at(conf_t *cfg, void *base, const conf_option_t *o, const char *value,
			 char *err, size_t errlen)
{
	void *field = (char *)base + o->offset;
	switch (o->type) {
	case CONF_UINT: {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(value, &end, 10);
		if (errno || end == value || *end || value[0] == '-' || v < o->min || v > o->max) {
			set_err(err, errlen, "%s: \"%s\" is not a number from %u to %u", o->name,
				value, o->min, o->max);
			return SHOAL_EINVAL;
		}
		*(uint32_t *)field = (uint32_t)v;
		return 0;
	}
	case CONF_BOOL:
		if (conf_parse_bool(value, (bool *)field) < 0) {
			set_err(err, errlen, "%s: \"%s\" is not yes or no", o->name, value);
			return SHOAL_EINVAL;
		}
		return 0;
	case CONF_STRING: {
		/* max, when set, bounds the length (a TXT character-string: 255) */
		if (o->max && strlen(value) > o->max) {
			set_err(err, errlen, "%s: longer than %u octets", o->name, o->max);
			return SHOAL_EINVAL;
		}
		char *copy = strdup(value);
		if (!copy)
			return SHOAL_ENOMEM;
		free(*(char **)field);
		*(char **)field = copy;
		return 0;
	}
	case CONF_ENUM:
		for (uint32_t i = 0; o->names[i]; i++) {
			if (!strcasecmp(value, o->names[i])) {
				*(uint32_t *)field = i;
				return 0;
			}
		}
		set_err(err, errlen, "%s: \"%s\" is not one of the allowed values", o->name, value);
		return SHOAL_EINVAL;
	case CONF_LISTEN: {
		size_t *count;
		listen_addr_t *list = listen_list(cfg, o, &count);
		if (*count == CONF_LISTEN_MAX) {
			set_err(err, errlen, "%s: more than %d addresses", o->name,
				CONF_LISTEN_MAX);
			return SHOAL_EINVAL;
		}
		if (conf_parse_listen(value, &list[*count]) < 0) {
			set_err(err, errlen, "%s: \"%s\" is not ADDR@PORT", o->name, value);
			return SHOAL_EINVAL;
		}
		/* an address alone: the option's own port (listen-tls: 853) */
		if (o->min && !strchr(value, '@')) {
			listen_addr_t *a = &list[*count];
			addr_set_port((struct sockaddr *)&a->addr, (uint16_t)o->min);
			addr_text((const struct sockaddr *)&a->addr, a->text, sizeof(a->text));
		}
		(*count)++;
		return 0;
	}
	case CONF_PREFIXES: {
		addr_prefix_list_t *l = field;
		if (l->count == ADDR_PREFIX_LIST_MAX) {
			set_err(err, errlen, "%s: more than %d prefixes", o->name,
				ADDR_PREFIX_LIST_MAX);
			return SHOAL_EINVAL;
		}
		if (addr_prefix_parse(value, &l->items[l->count]) < 0) {
			set_err(err, errlen, "%s: \"%s\" is not ADDR/BITS", o->name, value);
			return SHOAL_EINVAL;
		}
		l->count++;
		return 0;
	}
	case CONF_SECRET: {
		conf_secret_t *secret = field;
		if (cookie_secret_from_hex(secret->value, value) < 0) {
			/* the value is a secret: not repeated in the message */
			set_err(err, errlen, "%s: not 32 hex digits", o->name);
			return SHOAL_EINVAL;
		}
		secret->set = true;
		return 0;
	}
	case CONF_ADDR: {
		/* a port alone is on loopback: the counters are not for everyone */
		char text[sizeof(((listen_addr_t *)0)->text)];
		bool port_only = value[0] && strspn(value, "0123456789") == strlen(value);
		snprintf(text, sizeof(text), "%s%s", port_only ? "127.0.0.1@" : "", value);
		if (!strchr(text, '@') || conf_parse_listen(text, (listen_addr_t *)field) < 0) {
			set_err(err, errlen, "%s: \"%s\" is not [ADDR@]PORT", o->name, value);
			return SHOAL_EINVAL;
		}
		return 0;
	}
	case CONF_ZONES:
	case CONF_KEYS:
	case CONF_ACL:
	case CONF_POLICIES:
	case CONF_TEMPLATES:
		break;
	}
	set_err(err, errlen, "%s: not a single value", o->name);
	return SHOAL_EINVAL;
}

static int set_scalar(conf_t *cfg, const conf_option_t *o, const char *value, char *err,
		      size_t errlen)
{
	return set_scalar_at(cfg, cfg, o, value, err, errlen);
}

int conf_set_value(void *base, const conf_option_t *o, const char *value, char *err, size_t errlen)
{
	/* the kinds that need no conf_t beside their field */
	assert(o->type == CONF_UINT || o->type == CONF_BOOL || o->type == CONF_ENUM ||
	       o->type == CONF_STRING);
	return set_scalar_at(NULL, base, o, value, err, errlen);
}

static int add_zone(conf_t *cfg, const char *name, const char *file)
{
	/* one form in every log line and reply: "example.com." (a bad name stays as typed,
	 * for the load's message) */
	char canonical[NAME_TEXT_MAX + 2];
	if (name_zone_text(name, canonical, sizeof(canonical)) > 0)
		name = canonical;
	/* the limits are filled in once every option is read (apply_zone_limits) */
	return conf_zones_append(cfg, name, file);
}

/*
 * Every zone from `from` on gets the limits, whichever came first in the
 * file or on the command line: the one place the options become a
 * zone_limits_t.
 */
static zone_limits_t zone_limits_of(const conf_t *cfg)
{
	return (zone_limits_t){
		.max_types_per_name = cfg->max_types_per_name,
		.max_records_per_type = cfg->max_records_per_type,
		.max_octets = (uint64_t)cfg->max_zone_file_mib << 20,
		.max_includes = cfg->max_zone_includes,
		.max_nsec3_iterations = cfg->max_nsec3_iterations,
	};
}

/*
 * Zone i's limits and secondary flag from cfg's options and its own
 * settings; the zone is cfg's own (conf_zone_spec_mut copies a shared one).
 */
static void set_zone_limits(conf_t *cfg, size_t i)
{
	zone_limits_t limits = zone_limits_of(cfg);
	zone_spec_t *z = conf_zone_spec_mut(cfg, i);
	if (!z)
		return; /* out of memory: the shared spec keeps its limits */
	int64_t own = conf_zone_xfr(cfg, i)->journal_size;
	limits.max_journal = own >= 0 ? (uint64_t)own : cfg->ixfr_journal_size;
	z->limits = limits;
	z->secondary = conf_zone_is_secondary(cfg, i);
	z->sign = conf_sign_spec(conf_zone_xfr(cfg, i)->sign);
}

static void apply_zone_limits(conf_t *cfg, size_t from)
{
	if (from == 0) { /* every zone: counted anew */
		cfg->zone_secondaries = 0;
		cfg->zone_secondaries_stale = false;
	}
	for (size_t i = from; i < cfg->zone_count; i++) {
		/* the loader's zones, or the one conf_zone_add appended: cfg's own, no copy */
		set_zone_limits(cfg, i);
		cfg->zone_secondaries += conf_zone_spec(cfg, i)->secondary;
	}
}

const char *const socket_mode_names[] = { "reuseport", "shared", NULL };

static const conf_option_t *find_option(const char *key, bool cli)
{
	for (size_t i = 0; i < conf_option_count; i++) {
		const char *n = cli ? conf_options[i].cli : conf_options[i].name;
		if (n && !strcmp(n, key))
			return &conf_options[i];
	}
	return NULL;
}

/* The default listen addresses, used when neither file nor command line names one. */
static void default_listen(conf_t *cfg)
{
	conf_parse_listen("0.0.0.0@53", &cfg->listen[0]);
	conf_parse_listen("::@53", &cfg->listen[1]);
	cfg->listen_count = 2;
}

int conf_init(conf_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cfg->threads = cpus < 1 ? 1 : cpus > CONF_THREADS_MAX ? CONF_THREADS_MAX : (uint32_t)cpus;
	cfg->socket_mode = SOCKET_MODE_REUSEPORT;
	cfg->udp_receive_buffer = cfg->udp_send_buffer = SOCKET_UDP_BUFFER_DEFAULT;
	cfg->nsid_thread = true;
	cfg->log_level = LOG_LEVEL_INFO;
	cfg->edns_size = DNS_EDNS_DEFAULT;
	cfg->tcp = (tcp_limits_t)TCP_LIMITS_DEFAULT;
	cfg->reload_timeout = CONF_RELOAD_TIMEOUT_DEFAULT;
	cfg->max_types_per_name = ZONE_MAX_TYPES_DEFAULT;
	cfg->max_nsec3_iterations = ZONE_MAX_NSEC3_ITERATIONS_DEFAULT;
	cfg->max_records_per_type = ZONE_MAX_RECORDS_DEFAULT;
	cfg->max_zone_file_mib = (uint32_t)(ZONE_MAX_OCTETS_DEFAULT >> 20);
	cfg->max_zone_includes = ZONE_MAX_INCLUDES_DEFAULT;
	cfg->ixfr_journal_size = ZONE_JOURNAL_DEFAULT;
	cfg->ixfr_journal_total_mib = 1024;
	cfg->max_zone_size = 1u << 30;
	cfg->notify_retry = 5;
	cfg->xfr_timeout = 600;
	cfg->xfr_message_timeout = 30;
	cfg->transfers_out = 10;
	cfg->transfers_in = 10;
	cfg->update_max_inflight = 64;
	cfg->update_max_inflight_total = 1024;
	cfg->update_max_records = 1000;
	cfg->serial_query_rate = CONF_SERIAL_QUERY_RATE_DEFAULT;
	cfg->min_refresh_time = 5;
	cfg->max_refresh_time = 86400;
	cfg->min_retry_time = 5;
	cfg->max_retry_time = 3600;
	cfg->min_expire_time = 10;
	cfg->max_expire_time = 2419200;
	cfg->rrl = (rrl_limits_t)RRL_LIMITS_DEFAULT;
	cfg->dnstap_sample = 1;
	default_listen(cfg);
	return 0;
}

void conf_clear(conf_t *cfg)
{
	free(cfg->user);
	free(cfg->group);
	free(cfg->nsid);
	free(cfg->identity);
	free(cfg->version);
	free(cfg->control);
	free(cfg->pid_file);
	free(cfg->tls_key_file);
	free(cfg->tls_cert_file);
	free(cfg->tls_ca_file);
	free(cfg->log_file);
	free(cfg->zones_dir);
	free(cfg->state_dir);
	free(cfg->dnstap_file);
	free(cfg->dnstap_socket);
	free(cfg->file);
	conf_xfr_clear(cfg);
	conf_dnssec_clear(cfg);
	conf_templates_clear(cfg);
	free(cfg->takeover);
	conf_zones_clear(cfg);
	sodium_memzero(&cfg->cookie_secret, sizeof(cfg->cookie_secret));
	sodium_memzero(&cfg->cookie_secret_staging, sizeof(cfg->cookie_secret_staging));
	memset(cfg, 0, sizeof(*cfg));
}

/* YAML loading with the document API: every node carries its line. */

int conf_yerr(yaml_ctx_t *y, const yaml_node_t *n, const char *fmt, ...)
{
	char reason[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	set_err(y->err, y->errlen, "%s:%lu: %s", y->path,
		(unsigned long)(n ? n->start_mark.line + 1 : 0), reason);
	return SHOAL_ECONFIG;
}

const char *conf_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* "name, file, ...": the keys a zone may have, for the unknown-key message. */
static void zone_key_list(char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < conf_zone_key_count && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
					conf_zone_keys[i].name);
}

static bool is_zone_key(const char *key)
{
	for (size_t i = 0; i < conf_zone_key_count; i++)
		if (!strcmp(conf_zone_keys[i].name, key))
			return true;
	return false;
}

/*
 * One zone's mapping: name and file first, then its transfer keys (which
 * need the zone added). A secondary (with primaries) may lack file, or
 * name one that does not exist yet: its first transfer makes it.
 */
static int load_zone_item(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *item)
{
	if (item->type != YAML_MAPPING_NODE)
		return conf_yerr(y, item, "zones: each zone is a mapping with name and file");
	const char *name = NULL, *file = NULL;
	yaml_node_t *file_node = item;
	bool secondary = false, producer = false;
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
		const char *key = conf_scalar(k), *val = conf_scalar(v);
		if (!key)
			return conf_yerr(y, k, "zones: a key must be a plain word");
		if (!is_zone_key(key)) {
			char keys[256];
			zone_key_list(keys, sizeof(keys));
			return conf_yerr(y, k, "zones: unknown key \"%s\" (%s)", key, keys);
		}
		if (!strcmp(key, "primaries"))
			secondary = true;
		if (!strcmp(key, "catalog-role") && val && !strcmp(val, "producer"))
			producer = true;
		if (strcmp(key, "name") && strcmp(key, "file"))
			continue;
		if (!val)
			return conf_yerr(y, v, "zones: %s must be a single value", key);
		if (!strcmp(key, "name")) {
			name = val;
		} else {
			file = val;
			file_node = v;
		}
	}
	if (!name || (!file && !secondary && !producer))
		return conf_yerr(y, item, "zones: a zone needs both name and file (or primaries)");
	if (producer && secondary)
		return conf_yerr(y, item, "zone %s: a producer catalog is made here: no primaries",
				 name);
	char joined[PATH_MAX], made[NAME_TEXT_MAX + 16];
	if (producer && !file)
		file = conf_catalog_file(name, made, sizeof(made));
	if (file && file[0] != '/') {
		/* a secondary's file is written by shoald: in state-dir, which it may write */
		if (snprintf(joined, sizeof(joined), "%s/%s",
			     secondary || producer ? y->state_base : y->zones_base,
			     file) >= (int)sizeof(joined))
			return conf_yerr(y, file_node, "zone %s: file path too long", name);
		file = joined;
	}
	if (file && access(file, R_OK) != 0 && !((secondary || producer) && errno == ENOENT))
		return conf_yerr(y, file_node, "zone %s: cannot read file %s: %s", name, file,
				 strerror(errno));
	int rc = add_zone(cfg, name, file ? file : "");
	if (rc < 0)
		return rc;
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start;
	     rc == 0 && p < item->data.mapping.pairs.top; p++) {
		const char *key = conf_scalar(yaml_document_get_node(y->doc, p->key));
		if (strcmp(key, "name") && strcmp(key, "file"))
			rc = conf_load_zone_key(cfg, y, cfg->zone_count - 1, key,
						yaml_document_get_node(y->doc, p->value));
		if (rc == SHOAL_ENOTFOUND)
			rc = conf_load_zone_dnssec(cfg, y, cfg->zone_count - 1, key,
						   yaml_document_get_node(y->doc, p->value));
	}
	if (rc == 0)
		rc = conf_zone_catalog_check(cfg, y, cfg->zone_count - 1, item);
	return rc == 0 ? conf_zone_tls_check(cfg, y, cfg->zone_count - 1, item) : rc;
}

static int load_pair(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *k, yaml_node_t *v)
{
	const char *key = conf_scalar(k);
	if (!key)
		return conf_yerr(y, k, "a key must be a plain word");
	const conf_option_t *o = find_option(key, false);
	if (!o)
		return conf_yerr(y, k, "unknown key \"%s\"", key);
	char reason[400];
	if (o->type == CONF_KEYS || o->type == CONF_POLICIES || o->type == CONF_TEMPLATES)
		return 0; /* read first, before the zones that name them */
	if (o->type == CONF_ACL) {
		conf_acl_t *acl = (conf_acl_t *)((char *)cfg + o->offset);
		acl->set = true;
		return conf_load_acl(cfg, y, key, ACL_MATCH, &acl->list, v);
	}
	if (o->type == CONF_LISTEN || o->type == CONF_ZONES || o->type == CONF_PREFIXES) {
		/* "zones:" with every item commented out is an empty list, not an error */
		bool empty = conf_scalar(v) && !conf_scalar(v)[0] &&
			     v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (empty && o->type == CONF_ZONES)
			return 0;
		if (v->type != YAML_SEQUENCE_NODE && !(o->type != CONF_ZONES && conf_scalar(v)))
			return conf_yerr(y, v, "%s: expected a list", key);
		if (o->type == CONF_LISTEN) {
			size_t *count;
			listen_list(cfg, o, &count);
			*count = 0; /* the file's list replaces the default */
		}
		if (conf_scalar(v)) {
			int rc = set_scalar(cfg, o, conf_scalar(v), reason, sizeof(reason));
			return rc == SHOAL_ENOMEM ? rc : rc < 0 ? conf_yerr(y, v, "%s", reason) : 0;
		}
		for (yaml_node_item_t *i = v->data.sequence.items.start;
		     i < v->data.sequence.items.top; i++) {
			yaml_node_t *item = yaml_document_get_node(y->doc, *i);
			int rc;
			if (o->type == CONF_ZONES) {
				rc = load_zone_item(cfg, y, item);
				if (rc == 0 && i + 1 == v->data.sequence.items.top)
					rc = conf_catalog_check(cfg, y, v);
			} else if (!conf_scalar(item)) {
				rc = conf_yerr(y, item, "%s: expected %s", key, o->arg);
			} else {
				rc = set_scalar(cfg, o, conf_scalar(item), reason, sizeof(reason));
				if (rc == SHOAL_EINVAL)
					rc = conf_yerr(y, item, "%s", reason);
			}
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (!conf_scalar(v))
		return conf_yerr(y, v, "%s: expected a single value", key);
	if ((o->offset == OFF(dnstap_file) && cfg->dnstap_socket) ||
	    (o->offset == OFF(dnstap_socket) && cfg->dnstap_file))
		return conf_yerr(y, k, "%s: dnstap goes to a file or a socket, not both", key);
	int rc = set_scalar(cfg, o, conf_scalar(v), reason, sizeof(reason));
	return rc == SHOAL_ENOMEM ? rc : rc < 0 ? conf_yerr(y, v, "%s", reason) : 0;
}

/* The value of the top-level key `key` of the document at root, or NULL (*node: its node). */
static const char *top_value(yaml_ctx_t *y, yaml_node_t *root, const char *key, yaml_node_t **node)
{
	const char *found = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		const char *k = conf_scalar(yaml_document_get_node(y->doc, p->key));
		if (!k || strcmp(k, key))
			continue;
		*node = yaml_document_get_node(y->doc, p->value);
		found = conf_scalar(*node) ? conf_scalar(*node) : "";
	}
	return found;
}

/* base = dir, absolute or from folder (NULL dir: def). Returns 0 or SHOAL_ECONFIG. */
static int base_of(yaml_ctx_t *y, yaml_node_t *n, const char *what, const char *dir,
		   const char *def, char *base)
{
	if (dir && !dir[0])
		return conf_yerr(y, n, "%s: expected a folder", what);
	int len;
	if (!dir || dir[0] == '/')
		len = snprintf(base, PATH_MAX, "%s", dir ? dir : def);
	else
		len = snprintf(base, PATH_MAX, "%s/%s", y->folder, dir);
	return len >= PATH_MAX ? conf_yerr(y, n, "%s: path too long", what) : 0;
}

/*
 * Where the file's relative zone paths start, read first wherever the keys
 * stand in the file: into y->zones_base its zones-dir (a relative one from
 * the file's folder) or the file's folder, made absolute so that a reload
 * finds the same files; into y->state_base its state-dir, where a
 * secondary's relative file lies (the files shoald writes go where the
 * service may write: StateDirectory=, not /etc). Returns 0 or
 * SHOAL_ECONFIG.
 */
static int zones_base(yaml_ctx_t *y, yaml_node_t *root)
{
	char folder[PATH_MAX];
	const char *slash = strrchr(y->path, '/');
	if (!slash)
		snprintf(folder, sizeof(folder), ".");
	else
		snprintf(folder, sizeof(folder), "%.*s",
			 (int)(slash == y->path ? 1 : slash - y->path), y->path);
	char real[PATH_MAX];
	if (realpath(folder, real))
		snprintf(folder, sizeof(folder), "%s", real);
	snprintf(y->folder, sizeof(y->folder), "%s", folder);
	yaml_node_t *zn = root, *sn = root;
	const char *zones = top_value(y, root, "zones-dir", &zn);
	const char *state = top_value(y, root, "state-dir", &sn);
	int rc = base_of(y, zn, "zones-dir", zones, folder, y->zones_base);
	if (rc == 0)
		rc = base_of(y, sn, "state-dir", state, CONF_STATE_DIR_DEFAULT, y->state_base);
	return rc;
}

/* state-dir as the file gives it, absolute (zones_base made it: y->state_base). */
static int state_dir_resolve(conf_t *cfg, yaml_ctx_t *y)
{
	if (!cfg->state_dir || !strcmp(cfg->state_dir, y->state_base))
		return 0;
	char *full = strdup(y->state_base);
	if (!full)
		return SHOAL_ENOMEM;
	free(cfg->state_dir);
	cfg->state_dir = full;
	return 0;
}

int conf_load_file(conf_t *cfg, const char *path, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	FILE *f = fopen(path, "r");
	if (!f) {
		set_err(err, errlen, "%s: %s", path, strerror(errno));
		return SHOAL_ECONFIG;
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_ctx_t y = { .doc = &doc, .path = path, .err = err, .errlen = errlen };
	int rc = SHOAL_ECONFIG;
	bool loaded = false; /* doc holds a document to delete */
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return SHOAL_ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		set_err(err, errlen, "%s:%lu: %s", path,
			(unsigned long)parser.problem_mark.line + 1,
			parser.problem ? parser.problem : "YAML syntax error");
		goto done;
	}
	loaded = true;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		rc = 0; /* an empty file: all defaults */
		goto done;
	}
	if (root->type != YAML_MAPPING_NODE) {
		rc = conf_yerr(&y, root, "expected a mapping of option: value");
		goto done;
	}
	rc = zones_base(&y, root);
	/* keys first, wherever they are: the zones' lists name them */
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     rc == 0 && p < root->data.mapping.pairs.top; p++) {
		const char *key = conf_scalar(yaml_document_get_node(&doc, p->key));
		if (key && !strcmp(key, "keys") && !cfg->keys)
			rc = conf_load_keys(cfg, &y, yaml_document_get_node(&doc, p->value));
		if (key && !strcmp(key, "dnssec-policies") && !cfg->dnssec_policies)
			rc = conf_load_dnssec_policies(cfg, &y,
						       yaml_document_get_node(&doc, p->value));
	}
	/* then templates, which name keys and which catalogs name */
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     rc == 0 && p < root->data.mapping.pairs.top; p++) {
		const char *key = conf_scalar(yaml_document_get_node(&doc, p->key));
		if (key && !strcmp(key, "templates") && !cfg->templates)
			rc = conf_load_templates(cfg, &y, yaml_document_get_node(&doc, p->value));
	}
	bool seen[sizeof(conf_options) / sizeof(conf_options[0])] = { false };
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     rc == 0 && p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		const conf_option_t *o = conf_scalar(k) ? find_option(conf_scalar(k), false) : NULL;
		if (o && seen[o - conf_options]) {
			/* a second value would silently win: say so instead */
			rc = conf_yerr(&y, k, "%s is given twice", o->name);
			break;
		}
		if (o)
			seen[o - conf_options] = true;
		rc = load_pair(cfg, &y, k, yaml_document_get_node(&doc, p->value));
	}
	if (rc == 0)
		rc = state_dir_resolve(cfg, &y);
	yaml_node_t *keys_dir = root;
	if (rc == 0 && top_value(&y, root, "keys-dir", &keys_dir))
		rc = conf_keys_dir_resolve(cfg, &y, keys_dir);
	if (rc == 0)
		rc = conf_dnssec_bind(cfg);
done:
	if (loaded) {
		apply_zone_limits(cfg, 0);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

bool conf_help_entry(size_t i, conf_help_entry_t *e)
{
	size_t flags = sizeof(cli_flags) / sizeof(cli_flags[0]);
	if (i < flags) {
		const cli_flag_t *c = &cli_flags[i];
		char shortname[8] = "";
		if (c->short_name)
			snprintf(shortname, sizeof(shortname), "-%c, ", c->short_name);
		snprintf(e->head, sizeof(e->head), "%s--%s%s%s", shortname, c->name,
			 c->arg ? " " : "", c->arg ? c->arg : "");
		e->help = c->help;
		e->def = NULL;
		return true;
	}
	size_t left = i - flags; /* options with a cli name to pass first */
	for (size_t k = 0; k < conf_option_count; k++) {
		const conf_option_t *o = &conf_options[k];
		if (!o->cli || left-- > 0)
			continue;
		snprintf(e->head, sizeof(e->head), "--%s %s", o->cli, o->arg);
		e->help = o->help;
		e->def = o->def;
		return true;
	}
	return false;
}

void conf_print_help(FILE *out)
{
	fprintf(out, "Usage: shoald [OPTION]...\n"
		     "Shoal authoritative DNS server. Runs in the foreground.\n\n");
	conf_help_entry_t e;
	for (size_t i = 0; conf_help_entry(i, &e); i++) {
		char head[sizeof(e.head) + 4];
		/* long-only options line up with the long names of "-c, --config" */
		snprintf(head, sizeof(head), "%s%s", e.head[1] == '-' ? "    " : "", e.head);
		if (e.def)
			fprintf(out, "  %-28s %s (default: %s)\n", head, e.help, e.def);
		else
			fprintf(out, "  %-28s %s\n", head, e.help);
	}
	fprintf(out, "\nCommand-line options override the file; --listen replaces the file's\n"
		     "addresses, --zone adds to its zones. See shoald(8), shoald.conf(5).\n");
}

/* The long options of the command line: the flags, then every option with a cli name. */
#define CLI_FLAG_COUNT (sizeof(cli_flags) / sizeof(cli_flags[0]))
#define LONGOPT_TABLE  (CLI_FLAG_COUNT + sizeof(conf_options) / sizeof(conf_options[0]) + 1)
/* getopt_long's value for the table's option k: above every short option's character */
#define LONGOPT_TABLE_BASE 256

static void longopts_fill(struct option *lo, char *shortopts, size_t shortcap)
{
	size_t n = 0, s = 0;
	shortopts[s++] = ':'; /* a missing argument is reported as ':' */
	for (size_t i = 0; i < CLI_FLAG_COUNT; i++, n++) {
		const cli_flag_t *c = &cli_flags[i];
		lo[n] = (struct option){ c->name, c->arg ? required_argument : no_argument, NULL,
					 c->short_name ? c->short_name : (int)(128 + i) };
		if (c->short_name && s + 3 < shortcap) {
			shortopts[s++] = c->short_name;
			if (c->arg)
				shortopts[s++] = ':';
		}
	}
	for (size_t k = 0; k < conf_option_count; k++)
		if (conf_options[k].cli)
			lo[n++] = (struct option){ conf_options[k].cli, required_argument, NULL,
						   LONGOPT_TABLE_BASE + (int)k };
	lo[n] = (struct option){ 0 };
	shortopts[s] = '\0';
}

/* The command-line flag with value v from getopt_long, or NULL. */
static const cli_flag_t *cli_flag_of(int v)
{
	for (size_t i = 0; i < CLI_FLAG_COUNT; i++)
		if (v == (cli_flags[i].short_name ? cli_flags[i].short_name : (int)(128 + i)))
			return &cli_flags[i];
	return NULL;
}

/* "-c" or "--config": how the option getopt just refused was written. */
static const char *refused_option(int argc, char **argv, char *buf, size_t len)
{
	if (optopt > 0 && optopt < 128) {
		snprintf(buf, len, "-%c", optopt);
		return buf;
	}
	return optind > 0 && optind <= argc ? argv[optind - 1] : "?";
}

/*
 * One option of the table from the command line. Returns 0, SHOAL_ENOMEM,
 * or SHOAL_EINVAL with the reason in err.
 */
static int set_cli_option(conf_t *cfg, const conf_option_t *o, const char *value, bool *replaced,
			  char *err, size_t errlen)
{
	char reason[400];
	int rc;
	if (o->type == CONF_ZONES) {
		const char *sep = strchr(value, '=');
		if (!sep || sep == value || !sep[1]) {
			set_err(err, errlen, "--zone: \"%s\" is not NAME=PATH", value);
			return SHOAL_EINVAL;
		}
		char zname[1024];
		snprintf(zname, sizeof(zname), "%.*s", (int)(sep - value), value);
		if (access(sep + 1, R_OK) != 0) {
			set_err(err, errlen, "--zone %s: cannot read file %s: %s", zname, sep + 1,
				strerror(errno));
			return SHOAL_EINVAL;
		}
		rc = add_zone(cfg, zname, sep + 1);
	} else {
		if (o->type == CONF_LISTEN && !replaced[o - conf_options]) {
			size_t *count;
			listen_list(cfg, o, &count);
			*count = 0; /* the command line's list replaces the file's */
			replaced[o - conf_options] = true;
		}
		rc = set_scalar(cfg, o, value, reason, sizeof(reason));
	}
	if (rc == SHOAL_ENOMEM)
		return rc;
	if (rc < 0) {
		set_err(err, errlen, "--%s", reason);
		return SHOAL_EINVAL;
	}
	return 0;
}

int conf_parse_args(conf_t *cfg, int argc, char **argv, FILE *out, char *err, size_t errlen)
{
	struct option lo[LONGOPT_TABLE];
	char shortopts[2 * CLI_FLAG_COUNT + 2];
	longopts_fill(lo, shortopts, sizeof(shortopts));
	char optname[8];
	int v, rc = 0;
	bool replaced[sizeof(conf_options) / sizeof(conf_options[0])] = { false };
	cfg->argc = argc;
	cfg->argv = argv;
	/*
	 * Two passes: the file first, so that the rest of the command line
	 * overrides it, then every option. optind 0 makes getopt start over
	 * (each call of this function, too); opterr 0 leaves the messages to us.
	 */
	opterr = 0;
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		optind = 0;
		while (rc == 0 && (v = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
			const cli_flag_t *flag = cli_flag_of(v);
			if (v == '?' || v == ':') {
				const char *name =
					refused_option(argc, argv, optname, sizeof(optname));
				set_err(err, errlen,
					v == ':' ? "%s needs a value (see --help)"
						 : "unknown option \"%s\" (see --help)",
					name);
				rc = SHOAL_EINVAL;
			} else if (pass == 0) {
				if (flag && flag->short_name == 'c') {
					free(cfg->file);
					if (!(cfg->file = strdup(optarg)))
						rc = SHOAL_ENOMEM;
				}
			} else if (v >= LONGOPT_TABLE_BASE) {
				rc = set_cli_option(cfg, &conf_options[v - LONGOPT_TABLE_BASE],
						    optarg, replaced, err, errlen);
			} else if (flag && flag->short_name == 'h') {
				conf_print_help(out);
				return 1;
			} else if (flag && flag->short_name == 'V') {
				fprintf(out, "shoald %s\n", PACKAGE_VERSION);
				return 1;
			} else if (flag && !strcmp(flag->name, "check")) {
				cfg->check = true;
			} else if (flag && !strcmp(flag->name, "share-port")) {
				cfg->share_port = true;
			} else if (flag && !strcmp(flag->name, "takeover")) {
				free(cfg->takeover);
				if (!(cfg->takeover = strdup(optarg)))
					rc = SHOAL_ENOMEM;
			}
		}
		if (rc == 0 && pass == 0 && optind < argc) {
			set_err(err, errlen, "unexpected argument \"%s\" (see --help)",
				argv[optind]);
			rc = SHOAL_EINVAL;
		}
		if (rc == 0 && pass == 0 && !cfg->file) {
			/* as a packaged daemon: the system's file, when there is one */
			cfg->file_default_missing = access(CONF_FILE_DEFAULT, F_OK) != 0;
			if (!cfg->file_default_missing && !(cfg->file = strdup(CONF_FILE_DEFAULT)))
				rc = SHOAL_ENOMEM;
		}
		if (rc == 0 && pass == 0 && cfg->file)
			rc = conf_load_file(cfg, cfg->file, err, errlen);
	}
	if (rc == 0)
		apply_zone_limits(cfg, 0);
	return rc;
}

int conf_zone_add(conf_t *cfg, const char *name, const char *file)
{
	if (conf_zone_index(cfg, name) >= 0)
		return SHOAL_EEXIST;
	int rc = add_zone(cfg, name, file);
	if (rc == 0)
		apply_zone_limits(cfg, cfg->zone_count - 1); /* the others have theirs */
	return rc;
}

int conf_zone_set_from(conf_t *cfg, size_t i, const conf_zone_xfr_t *from)
{
	conf_zone_xfr_t copy = *from;
	if (!conf_xfr_own(&copy)) {
		conf_zone_xfr_clear(&copy);
		return SHOAL_ENOMEM;
	}
	conf_zone_xfr_t *x = conf_zone_xfr_mut(cfg, i);
	if (!x) {
		conf_zone_xfr_clear(&copy);
		return SHOAL_ENOMEM;
	}
	conf_zone_xfr_clear(x);
	*x = copy;
	/* the settings' journal, a secondary when they have primaries: zone i's alone */
	set_zone_limits(cfg, i);
	return 0;
}

int conf_zone_add_from(conf_t *cfg, const char *name, const char *file, const conf_zone_xfr_t *from)
{
	int rc = conf_zone_add(cfg, name, file);
	if (rc == 0 && (rc = conf_zone_set_from(cfg, cfg->zone_count - 1, from)) < 0)
		(void)conf_zone_remove(cfg, cfg->zone_count - 1); /* the one just added: its own */
	return rc;
}

int conf_validate(const conf_t *cfg, char *err, size_t errlen)
{
	if (cfg->listen_count == 0) {
		set_err(err, errlen, "%s: listen: no address to answer on",
			cfg->file ? cfg->file : "command line");
		return SHOAL_ECONFIG;
	}
	for (size_t i = 0; i < cfg->listen_tls_count; i++)
		for (size_t j = 0; j < cfg->listen_count; j++)
			if (addr_same((const struct sockaddr *)&cfg->listen_tls[i].addr,
				      (const struct sockaddr *)&cfg->listen[j].addr)) {
				set_err(err, errlen,
					"%s is in listen and in listen-tls: a port serves one "
					"or the other",
					cfg->listen[j].text);
				return SHOAL_ECONFIG;
			}
	if (cfg->group && !cfg->user) {
		set_err(err, errlen, "group is set without user");
		return SHOAL_ECONFIG;
	}
	const struct {
		const char *what;
		uint32_t min, max;
	} bounds[] = {
		{ "refresh", cfg->min_refresh_time, cfg->max_refresh_time },
		{ "retry", cfg->min_retry_time, cfg->max_retry_time },
		{ "expire", cfg->min_expire_time, cfg->max_expire_time },
	};
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		if (bounds[i].min > bounds[i].max) {
			set_err(err, errlen, "min-%s-time %u is above max-%s-time %u",
				bounds[i].what, bounds[i].min, bounds[i].what, bounds[i].max);
			return SHOAL_ECONFIG;
		}
	}
	return conf_dnssec_validate(cfg, err, errlen);
}
