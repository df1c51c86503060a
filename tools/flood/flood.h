/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's shared pieces: options, queries, per-thread state and counters. */
#ifndef SHOAL_TOOLS_FLOOD_H
#define SHOAL_TOOLS_FLOOD_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "proto/dns.h"

#define FLOOD_NSID_THREADS  256 /* server thread indexes counted one by one */
#define FLOOD_HIST_SUB_BITS 5   /* 32 sub-buckets per power of two: ~3% */
#define FLOOD_HIST_BUCKETS  (64 << FLOOD_HIST_SUB_BITS)
#define FLOOD_NSID_MAX      128 /* NSID bytes kept from one answer */

/* How -Q spaces one thread's queries (--arrivals). */
typedef enum flood_arrivals {
	FLOOD_ARRIVALS_EVEN,   /* query k due at start + k/rate */
	FLOOD_ARRIVALS_RANDOM, /* exponential gaps of mean 1/rate: a Poisson process */
} flood_arrivals_t;

/* Everything the command line sets. Filled once by main, read-only after. */
typedef struct flood_opts {
	struct sockaddr_storage server;
	socklen_t server_len;
	const char *server_text;
	uint16_t port;
	const char *datafile;  /* -d, or NULL */
	const char *qname;     /* -q, or NULL */
	const char *qtype;     /* -t */
	unsigned threads;      /* -T */
	unsigned sockets;      /* -c: per thread */
	double duration;       /* -l seconds; 0 = none */
	uint64_t count;        /* -n; 0 = none */
	double rate;           /* -Q qps over all threads; 0 = as fast as possible */
	unsigned inflight;     /* -i over all sockets */
	unsigned edns;         /* -e payload size; 0 = no OPT record */
	bool dnssec_ok;        /* -D */
	bool nsid;             /* --nsid */
	uint8_t cookie[40];    /* --cookie: a COOKIE option's data (RFC 7873 4) */
	uint8_t cookie_len;    /* 0: none */
	unsigned tcp_pipeline; /* 0 = UDP; N = TCP with N queries per connection */
	double timeout;        /* -w seconds */
	unsigned batch;        /* -b: sendmmsg/recvmmsg batch */
	bool json;             /* --json */
	bool allow_remote;     /* --allow-remote */
	bool progress;         /* stderr is a terminal */

	flood_arrivals_t arrivals; /* --arrivals: how -Q spaces the queries */
	unsigned long timer_slack; /* --timer-slack ns; 0: the kernel's default */
} flood_opts_t;

/* One pre-built query: the whole message; its ID bytes are patched at send. */
typedef struct flood_query {
	uint8_t *pkt;
	uint16_t len;
} flood_query_t;

typedef struct flood_queries {
	flood_query_t *q;
	size_t count;
	uint8_t *arena; /* one block holding every packet */
} flood_queries_t;

/*
 * Counters of one sender thread. Only the owning thread writes them (relaxed
 * loads and stores, no read-modify-write); the main thread reads them for the
 * live progress line and sums them at the end.
 */
typedef struct flood_stats {
	_Atomic uint64_t sent;
	_Atomic uint64_t answered;
	_Atomic uint64_t lost;         /* timed out, or still outstanding at the end */
	_Atomic uint64_t truncated;    /* TC set */
	_Atomic uint64_t unexpected;   /* no outstanding query matches (late, bogus) */
	_Atomic uint64_t send_errors;  /* the kernel refused a send */
	_Atomic uint64_t refused_icmp; /* ICMP port unreachable came back */
	_Atomic uint64_t last_answer_ns;
	_Atomic uint64_t max_latency_ns;
	_Atomic uint64_t rcode[16];
	_Atomic uint64_t hist[FLOOD_HIST_BUCKETS];
	_Atomic uint64_t nsid_thread[FLOOD_NSID_THREADS];
	_Atomic uint64_t nsid_other;   /* an NSID without a readable "/N" suffix */
	_Atomic uint64_t nsid_missing; /* answers without an NSID option */
	uint64_t sockets_answered;     /* client sockets with at least one answer */
	uint64_t sockets_sticky;       /* ... whose answers all came from one server thread */
	char nsid_sample[FLOOD_NSID_MAX + 1]; /* one NSID as seen, for the report */
} flood_stats_t;

/* One sender thread: its share of the work and its counters. */
typedef struct flood_thread {
	const flood_opts_t *opts;
	const flood_queries_t *queries;
	unsigned index;
	uint64_t count;           /* queries to send; UINT64_MAX = until the deadline */
	double rate;              /* this thread's share of -Q */
	unsigned inflight;        /* outstanding queries allowed per socket */
	uint64_t start_ns;        /* common start, CLOCK_MONOTONIC */
	uint64_t send_end_ns;     /* stop sending here; UINT64_MAX = by count only */
	int error;                /* 0, or a setup failure (-errno) */
	pthread_barrier_t *ready; /* setup done / start time set (flood_thread_ready) */

	/* Pacing (flood_pace_init, flood_budget), the thread's own. */
	flood_arrivals_t arrivals; /* as the options say */
	uint64_t due;              /* random: queries due so far */
	double next_due_ns;        /* random: when query `due` is due, after start_ns */
	uint64_t prng;             /* random: the gaps' generator, seeded from index */
	flood_stats_t stats __attribute__((aligned(64)));
} flood_thread_t;

/*
 * Add to a counter that only the calling thread writes: a relaxed load and
 * store, no locked read-modify-write, so the hot path stays cheap while the
 * main thread can still read a consistent value.
 */
static inline void flood_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Set by the main thread (signal or fatal error): stop sending, drain, report. */
extern atomic_bool flood_stop;

/* Monotonic clock in nanoseconds. */
uint64_t flood_now_ns(void);

/* A relative timeout for epoll_pwait2. */
struct timespec flood_timespec(uint64_t ns);

/*
 * Called by a worker after its setup (t->error set): waits until every
 * worker is set up and the main thread has set the common start time.
 * Returns 0 to go, or -1 when any worker failed (then the worker cleans up
 * and returns without sending).
 */
int flood_thread_ready(flood_thread_t *t);

/* True while t should still send: no stop asked, before the deadline, below its count. */
bool flood_keep_sending(const flood_thread_t *t, uint64_t sent, uint64_t now);

/*
 * Make t's pacing state ready, from t->index and t->arrivals: random gaps
 * come from a generator seeded with the thread's index, so every run of the
 * same command draws the same schedule. Called once, before t's first
 * flood_budget; start_ns may be set later.
 */
void flood_pace_init(flood_thread_t *t);

/*
 * How many queries t may send now, having sent `sent`: all that is left of
 * its count when unpaced; when paced (-Q), the number due by now (evenly
 * spaced, or after exponential gaps with --arrivals random), never more than
 * is left, and *wait_ns is lowered to the time until the next one is due
 * (0 when one is due already). Random arrivals draw their gaps here, in t:
 * only t's own thread calls it.
 */
uint64_t flood_budget(flood_thread_t *t, uint64_t sent, uint64_t now, uint64_t *wait_ns);

/* "even" or "random". */
const char *flood_arrivals_name(flood_arrivals_t a);

/* The kind a name gives (as flood_arrivals_name spells it), or -1. */
int flood_arrivals_parse(const char *name);

/*
 * Load the queries: lines "name type" from opts->datafile (dnsperf format,
 * '#' comments and blank lines skipped), or the single opts->qname/qtype.
 * Builds every message once (ID 0, RD clear, OPT record per opts->edns,
 * DO bit, empty NSID option). Returns 0, or -1 after printing the reason
 * (file name and line) to stderr. Caller frees with flood_queries_free.
 */
int flood_queries_load(flood_queries_t *qs, const flood_opts_t *opts);
void flood_queries_free(flood_queries_t *qs);

/* Histogram bucket of a latency in nanoseconds (log-linear). */
unsigned flood_hist_bucket(uint64_t ns);

/* A value that represents bucket b: the middle of its range, in nanoseconds. */
uint64_t flood_hist_value(unsigned b);

/*
 * The q-quantile (0 <= q <= 1) of a histogram of `buckets` counts; 0 when it
 * is empty. Pure function, any thread.
 */
uint64_t flood_hist_quantile(const uint64_t *hist, double q);

/* What one answer says, as far as shoal-flood cares. */
typedef struct flood_answer {
	uint16_t id;
	uint8_t rcode; /* the header's 4 bits */
	bool truncated;
	bool has_nsid;
	int nsid_thread;     /* the N of an "ID/N" NSID, or -1 */
	const uint8_t *nsid; /* points into the packet */
	uint16_t nsid_len;
} flood_answer_t;

/*
 * Read an answer's header, and with `want_nsid` walk its records with the
 * bounds-checked cursor to the OPT record's NSID option (RFC 5001 2.3).
 * Returns 0, or SHOAL_EMALFORMED when even the header is missing (an answer
 * whose later records are malformed still counts, has_nsid false).
 * Allocates nothing; pure function.
 */
int flood_answer_parse(flood_answer_t *a, const uint8_t *pkt, size_t len, bool want_nsid);

/* Record one matched answer in t's counters (latency, rcode, TC, NSID). */
void flood_count_answer(flood_thread_t *t, const flood_answer_t *a, uint64_t latency_ns,
			uint64_t now_ns);

/* The worker thread bodies: UDP (sendmmsg/recvmmsg) and TCP. arg is a flood_thread_t. */
void *flood_udp_thread(void *arg);
void *flood_tcp_thread(void *arg);

/*
 * Sum of every thread's counters into `sum` (caller memory; relaxed reads,
 * so a live sum may be a moment stale).
 */
void flood_stats_sum(flood_stats_t *sum, const flood_thread_t *threads, unsigned n);

/* Print the final report, text or JSON, to stdout. elapsed_ns: start to last answer. */
void flood_report(const flood_opts_t *opts, const flood_stats_t *sum, uint64_t elapsed_ns);

#endif
