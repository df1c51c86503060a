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
 * Prometheus exporter) expand these lists. X(name, kind, help):
 *   name  a C identifier: the field, the JSON key, and the end of the
 *         metric name shoal_<list>_<name> (udp, tcp, query, zone), with
 *         "_total" for what only grows
 *   kind  COUNTER (only grows), GAUGE (goes up and down), RCODES (a
 *         counter per rcode, named by dns_rcode_name, label "rcode") or
 *         QTYPES (a counter per query type of STATS_QTYPES and one for
 *         the rest, label "type"): STATS_<kind> of enum stats_kind
 *   help  one line on what it counts
 * STATS_UDP are the fields of worker_stats_t. rcvbuf_drops are datagrams
 * the kernel dropped on full receive buffers: shoald never sees them, so
 * they are not in queries; the thread that reads the statistics reads
 * them from the sockets (SO_MEMINFO) and is the only writer of that field.
 */
#define STATS_UDP(X)                                                                           \
	X(queries, COUNTER, "UDP datagrams received")                                          \
	X(answers, RCODES, "UDP answers sent, by rcode")                                       \
	X(truncated, COUNTER, "UDP answers sent with TC set")                                  \
	X(dropped, COUNTER, "UDP queries not answered, or whose answer could not be sent")     \
	X(malformed, COUNTER, "UDP queries answered FORMERR or dropped as malformed")          \
	X(bytes_in, COUNTER, "octets of UDP queries received")                                 \
	X(bytes_out, COUNTER, "octets of UDP answers sent")                                    \
	X(rcvbuf_drops, COUNTER, "UDP datagrams the kernel dropped on a full receive buffer")  \
	X(rrl_dropped, COUNTER, "UDP answers not sent: their class was over rate-limit")       \
	X(rrl_slipped, COUNTER, "UDP answers sent truncated: their class was over rate-limit") \
	X(cookie_client, COUNTER, "UDP queries with a client cookie alone (RFC 7873)")         \
	X(cookie_valid, COUNTER, "UDP queries with a valid server cookie")                     \
	X(cookie_invalid, COUNTER, "UDP queries with a server cookie not valid here and now")

/* STATS_TCP are the fields of tcp_stats_t, which server/net/tcp.c writes; "tcp" in the JSON. */
#define STATS_TCP(X)                                                                            \
	X(accepted, COUNTER, "TCP connections accepted")                                        \
	X(closed_idle, COUNTER, "TCP connections closed after the idle timeout")                \
	X(closed_limit, COUNTER, "TCP connections closed, the oldest, for max_connections")     \
	X(closed_slow, COUNTER, "TCP connections closed for the message timeout or output cap") \
	X(queries, COUNTER, "TCP queries received")                                             \
	X(answers, COUNTER, "TCP answers sent")                                                 \
	X(bytes_in, COUNTER, "octets read from TCP connections")                                \
	X(bytes_out, COUNTER, "octets written to TCP connections")                              \
	X(accept_paused, COUNTER, "TCP listener rests: accept found no descriptor or memory")   \
	X(refused_per_address, COUNTER, "TCP connections closed at once: tcp-max-per-address")  \
	X(rcode, RCODES, "TCP answers, by rcode")

/*
 * STATS_QUERY are the fields of query_stats_t: what the queries asked,
 * over UDP and TCP alike, counted for every query with a question;
 * "query" in the JSON.
 */
#define STATS_QUERY(X)                                                \
	X(type, QTYPES, "queries by QTYPE, the less common as other") \
	X(edns, COUNTER, "queries with an EDNS OPT record")           \
	X(dnssec_ok, COUNTER, "queries with the DNSSEC OK bit (DO)")

/*
 * STATS_ZONE are the fields of zone_stats_t: per zone served, in each
 * worker's array indexed by the zone's slot in the zone set
 * (zonedb_zone_slot); "zones" in the JSON, label "zone".
 */
#define STATS_ZONE(X)                                             \
	X(answers, COUNTER, "answers from the zone, every rcode") \
	X(nxdomain, COUNTER, "NXDOMAIN answers from the zone")

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
#define STATS_XFR(X)                                                                            \
	X(requests, COUNTER, "AXFR and IXFR requests received (TCP, and IXFR over UDP)")        \
	X(refused, COUNTER, "transfer requests refused: provide-xfr, TSIG, transfers-out")      \
	X(axfr, COUNTER, "whole zones sent: AXFR, and IXFR beyond the journal's history")       \
	X(ixfr, COUNTER, "IXFR answers with the changes since the client's serial")             \
	X(uptodate, COUNTER, "IXFR answered with the SOA alone: the client is up to date")      \
	X(done, COUNTER, "outgoing transfers sent whole")                                       \
	X(failed, COUNTER, "outgoing transfers cut short: the client left, an error, a stop")   \
	X(messages, COUNTER, "outgoing transfer messages")                                      \
	X(bytes_out, COUNTER, "octets of outgoing transfer messages")                           \
	X(notify_in, COUNTER, "NOTIFY messages let in and handed to the scheduler")             \
	X(notify_ignored, COUNTER, "NOTIFY let in with a serial not newer than the one served") \
	X(notify_refused, COUNTER, "NOTIFY refused: not in allow-notify, TSIG, not a secondary")

/*
 * The counters kept outside the workers, a group per source; a group
 * whose list names one thread has that one writer, which counts with
 * stats_add; one written by several (the transfer pool) counts with
 * stats_add_shared. Any thread reads them with relaxed loads. A group is one value per
 * counter, with no column per thread. X(group, name, kind, help): the
 * group is passed through (LIST(X, group)), so that one expansion names
 * the field stats_<group>_t.<name>, the JSON's "<group>": {"<name>": ...}
 * and the metric shoal_<group>_<name>_total.
 *
 * STATS_NOTIFY_OUT: NOTIFY out, on the main thread (server/events/notify_out.c).
 */
#define STATS_NOTIFY_OUT(X, g)                                                        \
	X(g, sent, COUNTER, "NOTIFY messages sent, retries included")                 \
	X(g, answered, COUNTER, "NOTIFY answered NOERROR by a secondary")             \
	X(g, refused, COUNTER, "NOTIFY answered with an error (REFUSED, NOTAUTH...)") \
	X(g, unanswered, COUNTER, "NOTIFY given up after notify-retry sends")

/*
 * STATS_XFR_IN: transfers in, on the pool's threads (server/events/secondary.c):
 * several writers, stats_add_shared.
 */
#define STATS_XFR_IN(X, g)                                                                    \
	X(g, checks, COUNTER, "refreshes: a primary asked whether the zone changed")          \
	X(g, axfr, COUNTER, "whole zones received (AXFR, or IXFR answered AXFR-style)")       \
	X(g, ixfr, COUNTER, "changes received by IXFR")                                       \
	X(g, uptodate, COUNTER, "refreshes that found the zone up to date")                   \
	X(g, failed, COUNTER, "transfers in that failed (each primary tried counts)")         \
	X(g, bytes_in, COUNTER, "octets of transfer messages received")                       \
	X(g, expired, COUNTER, "zones that expired: no refresh succeeded for expire seconds") \
	X(g, save_failed, COUNTER, "saves of a transferred zone to its file that failed")

/*
 * STATS_SCHED: the zone-event scheduler (server/events/sched.c), its thread
 * and the workers that hand it NOTIFYs: several writers, stats_add_shared
 * (the gauges, its thread alone: stats_set).
 */
#define STATS_SCHED(X, g)                                                                          \
	X(g, zones, GAUGE, "secondary zones whose refresh and expiry the scheduler times")         \
	X(g, running, GAUGE, "refreshes running now, each on a thread of the pool (transfers-in)") \
	X(g, refreshes, COUNTER,                                                                   \
	  "refreshes handed to the pool: timers, NOTIFY, shoalctl, reconfig")                      \
	X(g, soa_queries, COUNTER, "SOA queries over UDP, a refresh's first question")             \
	X(g, notify_coalesced, COUNTER, "NOTIFYs for a zone whose refresh was pending already")    \
	X(g, rate_limited, COUNTER, "times refreshes due waited for serial-query-rate")            \
	X(g, state_saves, COUNTER, "saves of the zones' timers to state-dir")                      \
	X(g, state_save_errors, COUNTER, "saves to state-dir that failed")                         \
	X(g, unsaved, GAUGE, "secondary zones whose file does not hold the version served")

/*
 * The groups, in the order the outputs show them, after the workers'
 * counters: X(group, list). A new source of counters is its list and one
 * line here.
 */
#define STATS_GROUPS(X)                 \
	X(notify_out, STATS_NOTIFY_OUT) \
	X(xfr_in, STATS_XFR_IN)         \
	X(sched, STATS_SCHED)

enum stats_kind {
	STATS_COUNTER,
	STATS_GAUGE,
	STATS_RCODES,
	STATS_QTYPES,
};

/* The declaration of one field of each kind. */
#define STATS_DIM_COUNTER
#define STATS_DIM_GAUGE
#define STATS_DIM_RCODES              [DNS_RCODE_MAX]
#define STATS_DIM_QTYPES              [STATS_QTYPE_MAX]
#define STATS_FIELD(name, kind, help) uint64_t name STATS_DIM_##kind;

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

typedef struct worker_stats {
	/* what every UDP query counts first, side by side: the caches are cold at a wake-up */
	STATS_UDP(STATS_FIELD)
	query_stats_t query;
	tcp_stats_t tcp;
	xfr_stats_t xfr;
} __attribute__((aligned(64))) worker_stats_t;

/* stats_<group>_t: one group's counters. */
#define STATS_GROUP_FIELD(g, name, kind, help) STATS_FIELD(name, kind, help)
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
 * Count one TCP query's rcode when answered, and what it asked (the TCP
 * server counts the messages and octets). Worker thread, on its own stats.
 */
void stats_count_tcp(worker_stats_t *s, bool answered, const struct answer_info *info);

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
	const stats_groups_t *groups; /* NULL: every group's counters 0 */
} stats_source_t;

/* The start of every metric name in the Prometheus output (shoal_udp_queries_total). */
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
 *               QTYPES left out, and the zones no worker counted anything
 *               for), a column for the total and one per
 *               thread; a group's rows end after the total
 *   JSON        {"threads": [{"thread": 0, ...}, ...], "total": {...},
 *               "<group>": {...}, ...}
 *   PROMETHEUS  the text exposition format 0.0.4: HELP and TYPE per
 *               metric, one sample per thread (label thread="N"); a
 *               group's counter, one sample without it
 * Returns 0 with *out (NUL-terminated) and *len, or SHOAL_ENOMEM. Any
 * thread; reads the counters atomically.
 */
int stats_render(const stats_source_t *src, enum stats_format f, char **out, size_t *len);

#endif
