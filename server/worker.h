/* Worker threads: each its own loop, its UDP sockets polled, its TCP server, its counters. */
#ifndef SHOAL_SERVER_WORKER_H
#define SHOAL_SERVER_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "server/conf.h"
#include "server/responder.h"
#include "server/socket.h"
#include "server/stats.h"
#include "server/tcp.h"
#include "server/udp.h"
#include "zone/answer.h"
#include "zone/zonedb.h"

typedef struct workers workers_t;

/*
 * Zone statistics slots per worker: zone sets give slots below the
 * zones of two sets together (zonedb_zone_slot), so twice the most zones
 * a configuration holds, and slot 0 unused. 128 KiB per worker of which
 * only the pages of slots in use are ever touched.
 */
#define WORKER_ZONE_SLOTS (2 * CONF_ZONES_MAX + 1)

/*
 * One worker. Made by workers_create on the main thread; from
 * workers_start to workers_stop its own thread is the only one to touch
 * it, but for `started` (under all->start_lock) and `stats` (read by any
 * thread, stats_read).
 */
typedef struct worker {
	workers_t *all;
	unsigned index;
	pthread_t thread;
	bool thread_started;
	uv_loop_t loop;
	uv_async_t stop_async;
	const responder_t *responder;
	zonedb_ref_t *zones;          /* the served set (RCU) */
	int udp_fds[CONF_LISTEN_MAX]; /* the socket set's, read only */
	uv_poll_t udp_polls[CONF_LISTEN_MAX];
	size_t udp_count;
	size_t polls_ready; /* udp_polls initialised (to close on stop) */
	bool loop_ready;    /* loop initialised */
	bool async_ready;   /* stop_async initialised (set before started) */
	tcp_server_t *tcp;
	answer_ctx_t ctx_udp;
	answer_ctx_t ctx_tcp;
	char nsid[300];
	udp_batch_t *batch;
	worker_stats_t *stats;    /* &all->stats[index] */
	zone_stats_t *zone_stats; /* all->zone_stats[index]: WORKER_ZONE_SLOTS */
	/* 0 starting, 1 running, or the error it failed with (under all->start_lock) */
	int started;
} worker_t;

/*
 * The server's workers and what they all read. The fields are the
 * module's; the main thread may read count, w, stats (the counters with
 * stats_read, from any thread) and sockets.
 */
struct workers {
	const conf_t *cfg; /* threads, edns-size, nsid, the TCP limits */
	const responder_t *responder;
	zonedb_ref_t *zones;
	socket_set_t *sockets; /* each worker's UDP sockets and TCP listeners */
	worker_t *w;           /* count of them */
	size_t count;
	worker_stats_t *stats;     /* one per worker, cache-line aligned */
	zone_stats_t **zone_stats; /* one array per worker, WORKER_ZONE_SLOTS each */
	pthread_mutex_t start_lock;
	pthread_cond_t start_cond;
	bool sync_ready;    /* start_lock and start_cond initialised */
	char hostname[256]; /* the CHAOS identity when identity: is not set */
};

/*
 * Make cfg->threads workers in ws (caller memory) with their counters and
 * buffers, to answer with responder from *zones on the sockets of
 * `sockets` (opened for as many workers). Nothing runs yet. Returns 0 or
 * a negative error with err; either way workers_destroy frees what was
 * made. cfg, responder, zones and sockets must outlive ws. Main thread.
 */
int workers_create(workers_t *ws, const conf_t *cfg, const responder_t *responder,
		   zonedb_ref_t *zones, socket_set_t *sockets, char *err, size_t errlen);

/*
 * Start one thread per worker (with every signal blocked: the main loop
 * takes them) and wait until each runs its loop or has failed. Returns 0,
 * or a negative error with err (pthread_create's as -errno, or the error
 * the first failed worker gave): then the threads that started must still
 * be stopped with workers_stop. Main thread.
 */
int workers_start(workers_t *ws, char *err, size_t errlen);

/*
 * Tell each worker to stop after its batch (its TCP server finishes the
 * answers it owes), and join them. Main thread.
 */
void workers_stop(workers_t *ws);

/*
 * Every counter of the workers in format f (stats_render), the zones
 * named from the set *zones serves: a string the caller frees, and its
 * length. Reads the kernel's drop counts of the UDP sockets first.
 * Returns 0 or SHOAL_ENOMEM. Main thread (the one reader that writes
 * rcvbuf_drops), registered with RCU.
 */
int workers_stats_render(workers_t *ws, zonedb_ref_t *zones, enum stats_format f, char **out,
			 size_t *len);

/*
 * Zero, in every worker's array, the counters of the zones that db (built,
 * not yet published) gives a fresh slot: a slot free in the set served, so
 * no worker counts into it until db is published. ws may be NULL or not
 * yet created (at the first load): then there is nothing to zero. The
 * thread that builds and publishes sets.
 */
void workers_zone_slots_reset(workers_t *ws, const zonedb_t *db);

/*
 * Free what workers_create made, not the sockets (the socket set's). Main
 * thread, after workers_stop.
 */
void workers_destroy(workers_t *ws);

#endif
