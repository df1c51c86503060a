/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Every counter, from one table: per-worker ones on their own cache lines, and the groups. */
#ifndef SHOAL_SERVER_COMMON_STATS_H
#define SHOAL_SERVER_COMMON_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dns.h"

/*
 * The counters, one line each, in the order shoalctl stats prints them:
 * the structs, reading, summing and every output (text, JSON, the
 * Prometheus exporter) expand these lists. X(name, kind, metric, help):
 *   name    a C identifier: the field, and the key of the table and the JSON
 *   kind    COUNTER (only grows), GAUGE (goes up and down), RCODES (a
 *           counter per rcode, named by dns_rcode_name, label "rcode"),
 *           QTYPES (a counter per query type of STATS_QTYPES and one for the
 *           rest, label "type") or INFO (1, with the version in label
 *           "version"): STATS_<kind> of enum stats_kind
 *   metric  its Prometheus metric: shoal_<metric>, "_total" after a counter's,
 *           following Prometheus's naming (units as suffixes: _bytes,
 *           _seconds); a fixed label may follow in braces, so that related
 *           counters are one metric ("closed_connections{reason=\"idle\"}").
 *           The fields of STATS_UDP and STATS_TCP carry the label protocol
 *           ("udp", "tcp"): queries over both are one metric, shoal_queries_total.
 *           Fields that share a metric are shown under the first one's help.
 *   help    one line on what it counts
 * STATS_UDP are the fields of worker_stats_t. rcvbuf_drops are datagrams
 * the kernel dropped on full receive buffers: shoald never sees them, so
 * they are not in queries; the thread that reads the statistics reads
 * them from the sockets (SO_MEMINFO) and is the only writer of that field.
 */
#define STATS_UDP(X)                                                                        \
	X(queries, COUNTER, "queries", "queries received, by protocol (UDP: datagrams)")    \
	X(answers, RCODES, "answers", "answers sent, by protocol and rcode")                \
	X(truncated, COUNTER, "truncated_answers", "UDP answers sent with TC set")          \
	X(dropped, COUNTER, "dropped_queries",                                              \
	  "UDP queries not answered, or whose answer could not be sent")                    \
	X(malformed, COUNTER, "malformed_queries",                                          \
	  "UDP queries answered FORMERR or dropped as malformed")                           \
	X(bytes_in, COUNTER, "received_bytes", "octets of queries received, by protocol")   \
	X(bytes_out, COUNTER, "sent_bytes", "octets of answers sent, by protocol")          \
	X(rcvbuf_drops, COUNTER, "receive_buffer_drops",                                    \
	  "UDP datagrams the kernel dropped on a full receive buffer")                      \
	X(rrl_dropped, COUNTER, "rrl_answers{action=\"dropped\"}",                          \
	  "UDP answers over rate-limit (RRL): dropped, or slipped (sent truncated)")        \
	X(rrl_slipped, COUNTER, "rrl_answers{action=\"slipped\"}",                          \
	  "UDP answers sent truncated: their class was over rate-limit")                    \
	X(cookie_client, COUNTER, "cookie_queries{cookie=\"client\"}",                      \
	  "UDP queries with DNS cookies (RFC 7873): a client cookie alone, a valid server " \
	  "cookie, or one not valid here and now")                                          \
	X(cookie_valid, COUNTER, "cookie_queries{cookie=\"valid\"}",                        \
	  "UDP queries with a valid server cookie")                                         \
	X(cookie_invalid, COUNTER, "cookie_queries{cookie=\"invalid\"}",                    \
	  "UDP queries with a server cookie not valid here and now")

/*
 * STATS_CONN(X, T) are the fields of tcp_stats_t, which server/net/tcp.c
 * writes for a server of connections, T its transport in the help: "tcp"
 * in the JSON for TCP's (STATS_TCP), and the start of "tls" for TLS's
 * (DNS over TLS, zone transfers over TLS); both carry the label protocol.
 */
#define STATS_CONN(X, T)                                                                           \
	X(accepted, COUNTER, "accepted_connections", T " connections accepted")                    \
	X(closed_idle, COUNTER, "closed_connections{reason=\"idle\"}",                             \
	  T " connections shoald closed, by reason: idle (tcp-idle-timeout), limit (the "          \
	    "oldest, for tcp-max-connections), slow (tcp-message-timeout or tcp-max-output), "     \
	    "per_address (at once, for tcp-max-per-address)")                                      \
	X(closed_limit, COUNTER, "closed_connections{reason=\"limit\"}",                           \
	  T " connections closed, the oldest, for max_connections")                                \
	X(closed_slow, COUNTER, "closed_connections{reason=\"slow\"}",                             \
	  T " connections closed for the message timeout or output cap")                           \
	X(queries, COUNTER, "queries", T " queries received")                                      \
	X(answers, COUNTER, "sent_answers",                                                        \
	  "answers sent over " T ", a zone transfer counting one (by rcode: shoal_answers_total)") \
	X(bytes_in, COUNTER, "received_bytes",                                                     \
	  "octets read from " T " connections (TLS: decrypted)")                                   \
	X(bytes_out, COUNTER, "sent_bytes",                                                        \
	  "octets written to " T " connections (TLS: before encryption)")                          \
	X(accept_paused, COUNTER, "accept_pauses",                                                 \
	  T " listener rests: accept found no descriptor or memory")                               \
	X(refused_per_address, COUNTER, "closed_connections{reason=\"per_address\"}",              \
	  T " connections closed at once: tcp-max-per-address")                                    \
	X(rcode, RCODES, "answers", T " answers, by rcode")
#define STATS_TCP(X) STATS_CONN(X, "TCP")

/* STATS_TLS are the fields of tls_stats_t after its connections' ones: its handshakes. */
#define STATS_TLS(X)                                                                           \
	X(handshakes, COUNTER, "tls_handshakes", "TLS handshakes done")                        \
	X(resumed, COUNTER, "tls_resumed_handshakes",                                          \
	  "TLS handshakes that resumed a session (a ticket): no signature")                    \
	X(handshake_failed, COUNTER, "tls_failed_handshakes",                                  \
	  "TLS handshakes that failed: not TLS, no common version, cipher or ALPN, an alert, " \
	  "a reset")                                                                           \
	X(handshake_timeouts, COUNTER, "tls_handshake_timeouts",                               \
	  "TLS connections closed: no handshake within tls-handshake-timeout")                 \
	X(handshakes_evicted, COUNTER, "tls_evicted_handshakes",                               \
	  "TLS connections closed mid-handshake for tls-max-handshakes")

/*
 * STATS_QUERY are the fields of query_stats_t: what the queries asked,
 * over UDP and TCP alike, counted for every query with a question;
 * "query" in the JSON.
 */
#define STATS_QUERY(X)                                                                    \
	X(type, QTYPES, "query_types", "queries by QTYPE, the less common as other")      \
	X(edns, COUNTER, "edns_queries", "queries with an EDNS OPT record")               \
	X(dnssec_ok, COUNTER, "dnssec_ok_queries", "queries with the DNSSEC OK bit (DO)") \
	X(dnstap_queued, COUNTER, "dnstap_messages{result=\"queued\"}",                   \
	  "dnstap messages, by result: queued for the writer thread, or dropped (its "    \
	  "queue or the thread's buffers full, or larger than a buffer)")                 \
	X(dnstap_dropped, COUNTER, "dnstap_messages{result=\"dropped\"}",                 \
	  "dnstap messages dropped: the writer's queue or buffers full")

/*
 * STATS_ZONE are the fields of zone_stats_t: per zone served, in each
 * worker's array indexed by the zone's slot in the zone set
 * (zonedb_zone_slot), shown summed over the threads: "zones" in the JSON,
 * label "zone", a series per zone with traffic (a million zones without
 * do not make a million series).
 */
#define STATS_ZONE(X)                                                             \
	X(answers, COUNTER, "zone_answers", "answers from the zone, every rcode") \
	X(nxdomain, COUNTER, "zone_nxdomain_answers", "NXDOMAIN answers from the zone")

/*
 * STATS_SERVED: what a zone of those shown serves (stats_served_t, read from
 * the zone set when rendering), when it serves a version.
 */
#define STATS_SERVED(X) X(serial, GAUGE, "zone_serial", "the serial of the version served")

/*
 * STATS_SECONDARY: a secondary zone's timers and copy on disk, as the
 * scheduler shows them (stats_secondary_t, server/events/sched.c): shown
 * for every secondary zone, traffic or not. Times are seconds since the
 * epoch, 0 for none (expires: nothing served).
 */
#define STATS_SECONDARY(X)                                                                   \
	X(next_refresh, GAUGE, "zone_next_refresh_timestamp_seconds",                        \
	  "when the secondary zone's primaries are asked next")                              \
	X(expires, GAUGE, "zone_expiry_timestamp_seconds",                                   \
	  "when the version served expires unless a refresh succeeds (RFC 1035 3.3.13); 0: " \
	  "none served")                                                                     \
	X(last_refresh, GAUGE, "zone_last_refresh_timestamp_seconds",                        \
	  "the last refresh of the secondary zone that succeeded; 0: none yet")              \
	X(last_failure, GAUGE, "zone_last_failure_timestamp_seconds",                        \
	  "the last refresh of the secondary zone that failed; 0: none")                     \
	X(unsaved, GAUGE, "zone_unsaved",                                                    \
	  "1 when the secondary zone's file does not hold the version served (a save failed)")

/* The query types counted by name (DNS_TYPE_<name>); every other is "other". */
#define STATS_QTYPES(X) \
	X(A)            \
	X(NS)           \
	X(CNAME)        \
	X(SOA)          \
	X(PTR)          \
	X(MX)           \
	X(TXT)          \
	X(AAAA)         \
	X(SRV)          \
	X(NAPTR)        \
	X(DS)           \
	X(RRSIG)        \
	X(NSEC)         \
	X(DNSKEY)       \
	X(NSEC3)        \
	X(NSEC3PARAM)   \
	X(TLSA)         \
	X(SVCB)         \
	X(HTTPS)        \
	X(CAA)          \
	X(IXFR)         \
	X(AXFR)         \
	X(ANY)

/* STATS_QTYPE_<name> for each, then OTHER; STATS_QTYPE_MAX is the size of per-type arrays. */
#define STATS_QTYPE_ENUM(t) STATS_QTYPE_##t,
enum stats_qtype { STATS_QTYPES(STATS_QTYPE_ENUM) STATS_QTYPE_OTHER, STATS_QTYPE_MAX };
#undef STATS_QTYPE_ENUM

/* The counter of qtype: its STATS_QTYPE_<name>, or STATS_QTYPE_OTHER. */
static inline unsigned stats_qtype_index(uint16_t qtype)
{
	switch (qtype) {
#define STATS_QTYPE_CASE(t) \
	case DNS_TYPE_##t:  \
		return STATS_QTYPE_##t;
		STATS_QTYPES(STATS_QTYPE_CASE)
#undef STATS_QTYPE_CASE
	default:
		return STATS_QTYPE_OTHER;
	}
}

/* The name of counter i of a QTYPES field ("A", ..., "other"). Static storage. */
const char *stats_qtype_name(unsigned i);

/*
 * STATS_XFR are the fields of xfr_stats_t: a worker's side of zone
 * transfers, written by server/query/transfer.c on the worker; "xfr" in the JSON.
 */
#define STATS_XFR(X)                                                                             \
	X(requests, COUNTER, "xfr_out_requests",                                                 \
	  "AXFR and IXFR requests received (TCP, and IXFR over UDP)")                            \
	X(refused, COUNTER, "xfr_out_refused",                                                   \
	  "transfer requests refused: provide-xfr, TSIG, transfers-out")                         \
	X(axfr, COUNTER, "xfr_out_axfr",                                                         \
	  "whole zones sent: AXFR, and IXFR beyond the journal's history")                       \
	X(ixfr, COUNTER, "xfr_out_ixfr",                                                         \
	  "IXFR answers with the changes since the client's serial")                             \
	X(uptodate, COUNTER, "xfr_out_uptodate",                                                 \
	  "IXFR answered with the SOA alone: the client is up to date")                          \
	X(done, COUNTER, "xfr_out_completed", "outgoing transfers sent whole")                   \
	X(failed, COUNTER, "xfr_out_failed",                                                     \
	  "outgoing transfers cut short: the client left, an error, a stop")                     \
	X(messages, COUNTER, "xfr_out_messages", "outgoing transfer messages")                   \
	X(bytes_out, COUNTER, "xfr_out_sent_bytes", "octets of outgoing transfer messages")      \
	X(notify_in, COUNTER, "notify_in{result=\"accepted\"}",                                  \
	  "NOTIFY messages received, by result: accepted (handed to the scheduler), ignored (a " \
	  "serial not newer than the one served), refused (allow-notify, TSIG, not a "           \
	  "secondary)")                                                                          \
	X(notify_ignored, COUNTER, "notify_in{result=\"ignored\"}",                              \
	  "NOTIFY let in with a serial not newer than the one served")                           \
	X(notify_refused, COUNTER, "notify_in{result=\"refused\"}",                              \
	  "NOTIFY refused: not in allow-notify, TSIG, not a secondary")

/*
 * The counters kept outside the workers, a group per source; a group
 * whose list names one thread has that one writer, which counts with
 * stats_add; one written by several (the transfer pool) counts with
 * stats_add_shared. Any thread reads them with relaxed loads. A group is one value per
 * counter, with no column per thread. X(group, name, kind, metric, help): the
 * group is passed through (LIST(X, group)), so that one expansion names
 * the field stats_<group>_t.<name> and the JSON's "<group>": {"<name>": ...};
 * metric as above.
 *
 * STATS_SERVER: the process. zones is the set's, read when rendering;
 * start_time the daemon's (stats_set at start); build_info is 1.
 */
#define STATS_SERVER(X, g)                                             \
	X(g, zones, GAUGE, "zones", "zones configured, served or not") \
	X(g, start_time, GAUGE, "start_time_seconds",                  \
	  "when this shoald started, in seconds since the epoch")      \
	X(g, build_info, INFO, "build_info", "1, with the version of shoald in label version")

/* STATS_NOTIFY_OUT: NOTIFY out, on the main thread (server/events/notify_out.c). */
#define STATS_NOTIFY_OUT(X, g)                                                                   \
	X(g, sent, COUNTER, "notify_out_sent", "NOTIFY messages sent, retries included")         \
	X(g, answered, COUNTER, "notify_out_answered", "NOTIFY answered NOERROR by a secondary") \
	X(g, refused, COUNTER, "notify_out_refused",                                             \
	  "NOTIFY answered with an error (REFUSED, NOTAUTH...)")                                 \
	X(g, unanswered, COUNTER, "notify_out_unanswered",                                       \
	  "NOTIFY given up after notify-retry sends")

/*
 * STATS_XFR_IN: transfers in, on the pool's threads (server/events/secondary.c):
 * several writers, stats_add_shared.
 */
#define STATS_XFR_IN(X, g)                                                                       \
	X(g, checks, COUNTER, "xfr_in_checks",                                                   \
	  "refreshes: a primary asked whether the zone changed")                                 \
	X(g, axfr, COUNTER, "xfr_in_axfr",                                                       \
	  "whole zones received (AXFR, or IXFR answered AXFR-style)")                            \
	X(g, ixfr, COUNTER, "xfr_in_ixfr", "changes received by IXFR")                           \
	X(g, uptodate, COUNTER, "xfr_in_uptodate", "refreshes that found the zone up to date")   \
	X(g, failed, COUNTER, "xfr_in_failed",                                                   \
	  "transfers in that failed (each primary tried counts)")                                \
	X(g, bytes_in, COUNTER, "xfr_in_received_bytes", "octets of transfer messages received") \
	X(g, expired, COUNTER, "xfr_in_expired_zones",                                           \
	  "zones that expired: no refresh succeeded for expire seconds")                         \
	X(g, save_failed, COUNTER, "xfr_in_save_failures",                                       \
	  "saves of a transferred zone to its file that failed")

/*
 * STATS_SCHED: the zone-event scheduler (server/events/sched.c), its thread
 * and the workers that hand it NOTIFYs: several writers, stats_add_shared
 * (the gauges, its thread alone: stats_set; unsaved by whichever thread
 * moves a zone's flag, atomically).
 */
#define STATS_SCHED(X, g)                                                                         \
	X(g, zones, GAUGE, "secondary_zones",                                                     \
	  "secondary zones whose refresh and expiry the scheduler times")                         \
	X(g, running, GAUGE, "xfr_in_running",                                                    \
	  "refreshes running now, each on a thread of the pool (transfers-in)")                   \
	X(g, refreshes, COUNTER, "sched_refreshes",                                               \
	  "refreshes handed to the pool: timers, NOTIFY, shoalctl, reconfig")                     \
	X(g, soa_queries, COUNTER, "sched_soa_queries",                                           \
	  "SOA queries over UDP (TLS to a TLS primary), a refresh's first question")              \
	X(g, notify_coalesced, COUNTER, "sched_notify_coalesced",                                 \
	  "NOTIFYs for a zone whose refresh was pending already")                                 \
	X(g, rate_limited, COUNTER, "sched_rate_limited",                                         \
	  "times refreshes due waited for serial-query-rate")                                     \
	X(g, zones_taken, COUNTER, "sched_zones_taken",                                           \
	  "secondary zones started, checked or retired as the scheduler took a reconfig")         \
	X(g, state_saves, COUNTER, "state_saves", "saves of the zones' timers to state-dir")      \
	X(g, state_save_errors, COUNTER, "state_save_failures", "saves to state-dir that failed") \
	X(g, unsaved, GAUGE, "secondary_unsaved_zones",                                           \
	  "secondary zones whose file does not hold the version served")

/*
 * The groups, in the order the outputs show them, after the workers'
 * counters: X(group, list). A new source of counters is its list and one
 * line here.
 */
#define STATS_GROUPS(X)                 \
	X(server, STATS_SERVER)         \
	X(notify_out, STATS_NOTIFY_OUT) \
	X(xfr_in, STATS_XFR_IN)         \
	X(sched, STATS_SCHED)

enum stats_kind {
	STATS_COUNTER,
	STATS_GAUGE,
	STATS_RCODES,
	STATS_QTYPES,
	STATS_INFO,
};

/* The declaration of one field of each kind. */
#define STATS_DIM_COUNTER
#define STATS_DIM_GAUGE
#define STATS_DIM_RCODES [DNS_RCODE_MAX]
#define STATS_DIM_QTYPES [STATS_QTYPE_MAX]
#define STATS_DIM_INFO
#define STATS_FIELD(name, kind, metric, help) uint64_t name STATS_DIM_##kind;

/*
 * Per-worker TCP counters; the worker owns the memory (its cache lines).
 * The loop's thread writes them with stats_add; any thread may read them
 * with relaxed atomic loads.
 */
typedef struct tcp_stats {
	STATS_TCP(STATS_FIELD)
} tcp_stats_t;

/* Per-worker counters of what was asked, UDP and TCP together. */
typedef struct query_stats {
	STATS_QUERY(STATS_FIELD)
} query_stats_t;

/* One zone's counters in one worker's array. */
typedef struct zone_stats {
	STATS_ZONE(STATS_FIELD)
} zone_stats_t;

/* What a zone serves, for the outputs (STATS_SERVED). */
typedef struct stats_served {
	STATS_SERVED(STATS_FIELD)
} stats_served_t;

/* A secondary zone's timers and copy on disk, for the outputs (STATS_SECONDARY). */
typedef struct stats_secondary {
	STATS_SECONDARY(STATS_FIELD)
} stats_secondary_t;

/* Called once for each secondary zone by a source's secondaries: apex is lowercase wire. */
typedef void (*stats_secondary_fn)(void *arg, const uint8_t *apex, const stats_secondary_t *g);

/*
 * What lists the secondary zones' gauges: calls each(arg, ...) once per
 * secondary zone of what `from` names, on the calling thread, before it
 * returns (server/events/sched.h's sched_secondaries).
 */
typedef void (*stats_secondaries_fn)(const void *from, stats_secondary_fn each, void *arg);

/*
 * One worker's counters. Only the owning worker writes them (stats_add:
 * relaxed atomic stores, no lock prefix); any thread may read them with
 * stats_read at any time. Aligned to 64, so two workers' counters never
 * share a cache line and counting never bounces one between CPUs.
 */
/* Per-worker transfer counters, written by the worker as tcp_stats_t are. */
typedef struct xfr_stats {
	STATS_XFR(STATS_FIELD)
} xfr_stats_t;

/* Per-worker TLS counters: its TLS server's connections, then the handshakes. */
typedef struct tls_stats {
	tcp_stats_t conn;
	STATS_TLS(STATS_FIELD)
} tls_stats_t;

typedef struct worker_stats {
	/* what every UDP query counts first, side by side: the caches are cold at a wake-up */
	STATS_UDP(STATS_FIELD)
	query_stats_t query;
	tcp_stats_t tcp;
	tls_stats_t tls;
	xfr_stats_t xfr;
} __attribute__((aligned(64))) worker_stats_t;

/* stats_<group>_t: one group's counters. */
#define STATS_GROUP_FIELD(g, name, kind, metric, help) STATS_FIELD(name, kind, metric, help)
#define STATS_GROUP_STRUCT(g, list)        \
	typedef struct stats_##g {         \
		list(STATS_GROUP_FIELD, g) \
	} stats_##g##_t;
STATS_GROUPS(STATS_GROUP_STRUCT)
#undef STATS_GROUP_STRUCT

/*
 * Every group, one member each. The daemon owns one for its life and
 * hands each source its own group, so a source made anew (the transfer
 * thread that a reconfig stops and a later one starts) counts on from
 * where it was, and the readers need no pointer to the sources.
 */
typedef struct stats_groups {
#define STATS_GROUP_MEMBER(g, list) stats_##g##_t g;
	STATS_GROUPS(STATS_GROUP_MEMBER)
#undef STATS_GROUP_MEMBER
} stats_groups_t;

/*
 * Add v to a counter the calling thread is the one writer of (a worker's
 * own stats, a group's source): a relaxed load and store, no lock prefix,
 * and no torn value for a reader on another thread.
 */
static inline void stats_add(uint64_t *counter, uint64_t v)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/*
 * Add v to a counter of a group several threads write (the transfer pool):
 * an atomic add. Never on the query path.
 */
static inline void stats_add_shared(uint64_t *counter, uint64_t v)
{
	__atomic_fetch_add(counter, v, __ATOMIC_RELAXED);
}

/* Set a gauge its one writer keeps (stats_add's rules). */
static inline void stats_set(uint64_t *gauge, uint64_t v)
{
	__atomic_store_n(gauge, v, __ATOMIC_RELAXED);
}

/*
 * Count one UDP query of `in` octets, answered or not, described by info
 * (bytes_out is counted when the answer is sent), and what it asked.
 * Worker thread, on its own stats.
 */
struct answer_info;
void stats_count_udp(worker_stats_t *s, size_t in, bool answered, const struct answer_info *info);

/*
 * Count one query's rcode into conn (the worker's TCP or TLS counters)
 * when answered, and what it asked (the server counts the messages and
 * octets). Worker thread, on its own stats.
 */
void stats_count_tcp(worker_stats_t *s, tcp_stats_t *conn, bool answered,
		     const struct answer_info *info);

/*
 * Count an answer from the zone whose slot info names into zones[0..slots)
 * (the calling worker's own array); nothing for a query no zone answered,
 * or a slot past the array. Worker thread.
 */
void stats_count_zone(zone_stats_t *zones, size_t slots, bool answered,
		      const struct answer_info *info);

/* A consistent-enough copy of one worker's counters (each read atomically). */
void stats_read(const worker_stats_t *s, worker_stats_t *out);

/* Add a's counters into total. */
void stats_sum(worker_stats_t *total, const worker_stats_t *a);

struct zonedb;

/*
 * What the statistics are read from: count workers' counters, each with
 * its zone array (zone_slots entries; zones may be NULL for none), and the
 * zone set that names the slots (NULL: no zone counters). A worker whose
 * threads each count on their own has `parts` consecutive entries in
 * workers and zones, summed into its column (0 means 1). The reader must
 * be inside a read section of db.
 */
typedef struct stats_source {
	const worker_stats_t *workers; /* count * parts */
	size_t count;
	zone_stats_t *const *zones; /* count * parts */
	size_t zone_slots;
	const struct zonedb *db;
	size_t parts;
	const stats_groups_t *groups;     /* NULL: every group's counters 0 */
	stats_secondaries_fn secondaries; /* the secondary zones' gauges; NULL: none */
	const void *secondaries_from;
} stats_source_t;

/* The start of every metric name in the Prometheus output (shoal_queries_total). */
#define STATS_METRIC_PREFIX "shoal_"

/* The outputs: shoalctl stats's table, its JSON, the Prometheus text format. */
enum stats_format {
	STATS_FORMAT_TEXT,
	STATS_FORMAT_JSON,
	STATS_FORMAT_PROMETHEUS,
};

/* "text", "json", "prometheus" (indexed by enum stats_format), NULL-terminated. */
extern const char *const stats_format_names[];

/*
 * Every counter of src in format f, into a string the caller frees:
 *   TEXT        a table: one row per counter (the zero ones of RCODES and
 *               QTYPES left out), a column for the total and one per
 *               thread; a zone's and a group's rows end after the total
 *   JSON        {"threads": [{"thread": 0, ...}, ...], "total": {...},
 *               "zones": {"<zone>": {...}, ...}, "<group>": {...}, ...}
 *   PROMETHEUS  the text exposition format 0.0.4: HELP and TYPE per
 *               metric, a worker's counter one sample per thread (label
 *               thread="N"), a zone's and a group's one sample
 * Zones are shown when a worker counted something for them, or they are
 * secondaries (their gauges). Returns 0 with *out (NUL-terminated) and
 * *len, or SHOAL_ENOMEM. Any thread; reads the counters atomically.
 */
int stats_render(const stats_source_t *src, enum stats_format f, char **out, size_t *len);

#endif
