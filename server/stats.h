/* Per-worker counters on their own cache lines, summed only when read. */
#ifndef SHOAL_SERVER_STATS_H
#define SHOAL_SERVER_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dns.h"

/*
 * The counters, one line each, in the order shoalctl stats prints them:
 * the structs, stats_read, stats_sum and stats_json all expand these
 * lists, and an exporter can expand them the same way. X(name, kind, help):
 *   name  a C identifier: the field, the JSON key, and the end of a metric
 *         name (shoal_udp_<name>, shoal_tcp_<name>)
 *   kind  COUNTER (only grows), GAUGE (goes up and down) or RCODES (a
 *         counter per rcode, an array of DNS_RCODE_MAX named by
 *         dns_rcode_name): STATS_<kind> of enum stats_kind
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

/* STATS_TCP are the fields of tcp_stats_t, which server/tcp.c writes; "tcp" in the JSON. */
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
	X(refused_per_address, COUNTER, "TCP connections closed at once: tcp-max-per-address")

enum stats_kind {
	STATS_COUNTER,
	STATS_GAUGE,
	STATS_RCODES,
};

/* The declaration of one field of each kind. */
#define STATS_DIM_COUNTER
#define STATS_DIM_GAUGE
#define STATS_DIM_RCODES              [DNS_RCODE_MAX]
#define STATS_FIELD(name, kind, help) uint64_t name STATS_DIM_##kind;

/*
 * Per-worker TCP counters; the worker owns the memory (its cache lines).
 * The loop's thread writes them with stats_add; any thread may read them
 * with relaxed atomic loads.
 */
typedef struct tcp_stats {
	STATS_TCP(STATS_FIELD)
} tcp_stats_t;

/*
 * One worker's counters. Only the owning worker writes them (stats_add:
 * relaxed atomic stores, no lock prefix); any thread may read them with
 * stats_read at any time. Aligned to 64, so two workers' counters never
 * share a cache line and counting never bounces one between CPUs.
 */
typedef struct worker_stats {
	STATS_UDP(STATS_FIELD)
	tcp_stats_t tcp;
} __attribute__((aligned(64))) worker_stats_t;

/*
 * Add v to a counter of the calling worker's own stats: a relaxed load and
 * store, no lock prefix, and no torn value for a reader on another thread.
 */
static inline void stats_add(uint64_t *counter, uint64_t v)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/*
 * Count one UDP query of `in` octets, answered or not, described by info
 * (bytes_out is counted when the answer is sent). Worker thread, on its
 * own stats.
 */
struct answer_info;
void stats_count_udp(worker_stats_t *s, size_t in, bool answered, const struct answer_info *info);

/* A consistent-enough copy of one worker's counters (each read atomically). */
void stats_read(const worker_stats_t *s, worker_stats_t *out);

/* Add a's counters into total. */
void stats_sum(worker_stats_t *total, const worker_stats_t *a);

/*
 * The most octets one worker's entry (or the totals) takes in the JSON,
 * every counter at its largest; tests/unit/test_stats.c checks it.
 */
#define STATS_JSON_WORKER_MAX 2048

/* A buffer this big always holds stats_json of n workers, with its NUL. */
static inline size_t stats_json_cap(size_t n)
{
	return (n + 1) * STATS_JSON_WORKER_MAX + 64;
}

/*
 * Write the statistics of workers[0..n) as JSON into buf[0..cap): totals and
 * a per-thread breakdown. Returns the length written (without the NUL), or
 * SHOAL_ESPACE. Any thread.
 */
int stats_json(const worker_stats_t *workers, size_t n, char *buf, size_t cap);

#endif
