/* Per-worker counters on their own cache lines, summed only when read. */
#ifndef SHOAL_SERVER_STATS_H
#define SHOAL_SERVER_STATS_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dns.h"
#include "server/tcp.h"
#include "zone/answer.h"

/*
 * One worker's counters. Only the owning worker writes them (stats_add:
 * relaxed atomic stores, no lock prefix); any thread may read them with
 * stats_sum at any time. alignas(64) keeps two workers' counters off one
 * cache line, so counting never bounces a line between CPUs.
 */
typedef struct worker_stats {
	alignas(64) uint64_t queries;    /* UDP datagrams received */
	uint64_t answers[DNS_RCODE_MAX]; /* UDP answers sent, by rcode */
	uint64_t truncated;              /* UDP answers with TC set */
	uint64_t dropped;                /* no answer, or the send failed */
	uint64_t malformed;              /* FORMERR or dropped as malformed */
	uint64_t bytes_in;
	uint64_t bytes_out;
	tcp_stats_t tcp; /* written by server/tcp.c */
	/*
	 * Datagrams the kernel dropped because the worker's receive buffers
	 * were full: shoald never sees them, so they are not in `queries`.
	 * Read from the sockets (SO_MEMINFO) by the thread that reads the
	 * statistics, which is the only writer of this field.
	 */
	uint64_t rcvbuf_drops;
} worker_stats_t;

/* Add v to a counter of the calling worker's own stats. */
static inline void stats_add(uint64_t *counter, uint64_t v)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/*
 * Count one UDP query of `in` octets, answered or not, described by info
 * (bytes_out is counted when the answer is sent). Worker thread, on its
 * own stats.
 */
void stats_count_udp(worker_stats_t *s, size_t in, bool answered, const answer_info_t *info);

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
