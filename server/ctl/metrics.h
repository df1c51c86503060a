/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Prometheus endpoint: GET /metrics over HTTP/1.1, served on the main loop. */
#ifndef SHOAL_SERVER_CTL_METRICS_H
#define SHOAL_SERVER_CTL_METRICS_H

#include <stddef.h>
#include <uv.h>

#include "server/events/sched.h"
#include "server/net/socket.h"
#include "server/net/worker.h"
#include "server/query/rrl.h"
#include "zone/zonedb.h"

/*
 * The bounds of the endpoint: HTTP clients served at once; of them, the
 * most one client address holds (so one address cannot take every slot);
 * octets of one request's head (request line and header fields); the time
 * a client has from its connection to the end of its request head (a
 * scraper sends it at once), and then to the end of its answer. When every
 * slot is taken, the client idle the longest (no request yet, or answered
 * and not gone) gives way to a new one, as a TCP connection does at
 * tcp-max-connections: idle clients cannot keep a scrape out.
 */
#define METRICS_CLIENTS_MAX     8
#define METRICS_PER_ADDRESS_MAX 2
#define METRICS_REQUEST_MAX     4096
#define METRICS_HEAD_TIMEOUT_MS 2000
#define METRICS_TIMEOUT_MS      10000
#define METRICS_CONTENT_TYPE    "text/plain; version=0.0.4; charset=utf-8"

typedef struct metrics metrics_t;

/* What the endpoint reads; copied by metrics_open, what it points to outlives the endpoint. */
typedef struct metrics_env {
	uv_loop_t *loop;                /* the main loop */
	workers_t *workers;             /* the counters */
	const stats_groups_t *counters; /* the counters kept outside the workers */
	zonedb_ref_t *zones;            /* the set served, to name the zones' counters */
	sched_t *const *sched;          /* where the scheduler is (NULL in it: none), its gauges */
	addr_prefix_list_t allow;       /* metrics-allow: the clients answered; none: loopback */
} metrics_env_t;

/*
 * metrics on an address other hosts can reach (not loopback): a warning
 * that names who is answered there (metrics-allow, or loopback alone).
 * Main thread, at start-up and for --check.
 */
void metrics_warn_reach(const listen_addr_t *addr, const addr_prefix_list_t *allow);

/*
 * Listen on addr (TCP) and answer every "GET /metrics" (and HEAD) with
 * the counters in the Prometheus text format, one connection per request
 * ("Connection: close"); other paths get 404, other methods 405, a head
 * past METRICS_REQUEST_MAX 431, what is not HTTP 400. A client whose
 * address env->allow does not list is closed at once, unanswered.
 * Returns 0, or with
 * err a system error (-errno, the bind's). *out is set as soon as there is
 * something to close, also when the call fails. Main thread, before the
 * privilege drop (the port may be privileged).
 */
int metrics_open(metrics_t **out, const metrics_env_t *env, const listen_addr_t *addr, char *err,
		 size_t errlen);

/* Close the listener and every client; NULL does nothing. Main thread. */
void metrics_close(metrics_t *m);

/* Free a closed endpoint once the loop has run the close callbacks; NULL does nothing. */
void metrics_free(metrics_t *m);

#endif
