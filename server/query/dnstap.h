/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dnstap: queries and responses sampled into a file or a collector's socket, off the answer path.
 */
#ifndef SHOAL_SERVER_QUERY_DNSTAP_H
#define SHOAL_SERVER_QUERY_DNSTAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

/*
 * The writer: fstrm's I/O thread, its output (a file or a unix socket),
 * and one input queue per producer. Made and freed by the main thread.
 */
typedef struct dnstap dnstap_t;

/*
 * What one thread that answers queries (a worker's loop, a UDP receiver)
 * logs with: its own fstrm input queue (single producer, single consumer:
 * no lock), a ring of buffers allocated once that the messages are
 * serialised into (the I/O thread hands each back when written), its
 * sampling count and its counters. Only that thread uses it.
 */
typedef struct dnstap_producer dnstap_producer_t;

/* What dnstap_new sets up from the configuration. Strings are the caller's, copied. */
typedef struct dnstap_conf {
	const char *file;     /* dnstap-file: written anew at each start, or NULL */
	const char *socket;   /* dnstap-socket: a collector's unix socket, or NULL */
	uint32_t sample;      /* one query in `sample` is logged, 1 and up */
	const char *identity; /* the Dnstap identity field */
	const char *version;  /* the Dnstap version field */
	unsigned producers;   /* threads that log: one input queue each */
} dnstap_conf_t;

/*
 * Start the writer for c (exactly one of file and socket set): its I/O
 * thread opens the output (a socket collector that is not there is tried
 * again every few seconds) and writes what the producers queue. Returns 0
 * with *out, or SHOAL_EINVAL / SHOAL_ENOMEM with the reason in err. Main
 * thread.
 */
int dnstap_new(const dnstap_conf_t *c, dnstap_t **out, char *err, size_t errlen);

/*
 * Producer i (0 <= i < c->producers) of t, its counters queued[0] and
 * dropped[0] (the caller's, counted with stats_add by the producer's
 * thread). Main thread, before the producer's thread starts. NULL when i
 * is out of range.
 */
dnstap_producer_t *dnstap_producer(dnstap_t *t, unsigned i, uint64_t *queued, uint64_t *dropped);

/*
 * Stop the writer once no producer logs any more: what is queued is
 * written (a collector that does not read gets at most a few seconds,
 * then is cut off), the output closed, the thread joined, everything
 * freed. NULL is fine. Main thread.
 */
void dnstap_free(dnstap_t *t);

/* One query and what was answered, as the transport saw them. */
typedef struct dnstap_query {
	const struct sockaddr *peer; /* the client */
	bool tcp;
	const uint8_t *query;
	size_t query_len;
	const uint8_t *response; /* NULL or length 0: nothing was sent */
	size_t response_len;
	struct timespec query_time; /* when it came (CLOCK_REALTIME); the response's is now */
} dnstap_query_t;

/*
 * Whether this query is one to log: one in the configured sample, counted
 * by the producer alone (the Nth, 2Nth... query its thread answers). Call
 * only with dnstap on (p not NULL). Query path: no allocation, no lock.
 */
bool dnstap_sampled(dnstap_producer_t *p);

/*
 * Log q as an AUTH_QUERY and, when something was sent, an AUTH_RESPONSE
 * message: each serialised into a free buffer of p's ring and handed to
 * the I/O thread's queue. A full ring or queue, or a message larger than
 * a buffer, drops that message and counts it; nothing waits. The
 * producer's thread; no allocation, no lock.
 */
void dnstap_log(dnstap_producer_t *p, const dnstap_query_t *q);

#endif
