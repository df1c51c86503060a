/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Worker threads: each its own loop, its UDP sockets polled, its TCP server, its counters. */
#ifndef SHOAL_SERVER_NET_WORKER_H
#define SHOAL_SERVER_NET_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "server/common/stats.h"
#include "server/conf/conf.h"
#include "server/net/socket.h"
#include "server/net/tcp.h"
#include "server/net/udp.h"
#include "server/query/cookies.h"
#include "server/query/dnstap.h"
#include "server/query/responder.h"
#include "server/query/rrl.h"
#include "server/query/transfer.h"
#include "zone/answer.h"
#include "zone/zonedb.h"

typedef struct workers workers_t;

/*
 * Zone statistics slots per counter set: zone sets give slots below the
 * zones of two sets together (zonedb_zone_slot), slot 0 unused. Each set
 * is address space reserved once (mmap, MAP_NORESERVE: 256 MiB for 2^24
 * slots, 8 million zones) of which only the pages a query counts into
 * are ever touched: a zone without traffic costs no counter memory, and
 * a page holds 256 zones' counters. Where the reservation is refused
 * (strict overcommit), WORKER_ZONE_SLOTS_LOW are reserved instead, and
 * zones of slots past them are not counted.
 */
#define WORKER_ZONE_SLOTS     (1u << 24)
#define WORKER_ZONE_SLOTS_LOW (1u << 16)

/*
 * One UDP socket's receiver: a thread of its own, blocked in recvmmsg
 * until datagrams come, with everything the UDP path writes (buffers,
 * answer context, rate-limit state, transfer state, counters), so no
 * other thread writes any of it and nothing is shared with the worker's
 * loop. Made by workers_create; from workers_start to workers_stop only
 * its thread touches it, but for `stop` (atomic) and `stats` (read by any
 * thread, stats_read).
 */
typedef struct udp_receiver {
	/* what each wake-up reads first, side by side (the caches are cold by then) */
	struct worker *w;
	udp_batch_t *batch;
	worker_stats_t *stats;    /* a part of its worker's column (stats_source_t) */
	zone_stats_t *zone_stats; /* zone_slots of them */
	responder_fn answer;      /* the worker's responder's, copied: one page less a wake-up */
	dnstap_producer_t *tap;   /* its dnstap input, NULL when dnstap is off */
	int fd;                   /* the socket set's, read only */
	bool stop;                /* atomic: set by workers_stop, which then wakes the thread */
	bool zones;               /* the responder's `zones` */
	bool thread_started;
	uint32_t zone_slots; /* all->zone_slots, copied beside the array */
	answer_ctx_t ctx;
	rrl_worker_t rrl; /* this receiver's slip count and log budget */
	transfer_t xfr;   /* IXFR over UDP and NOTIFY */
	pthread_t thread;
} udp_receiver_t;

/* What one of a worker's servers (TCP, TLS) answers with: the worker, its transport's counters. */
typedef struct worker_side {
	struct worker *w;
	tcp_stats_t *conn;
} worker_side_t;

/*
 * One worker: a loop thread for TCP, TLS and the stop, and a receiver
 * thread per UDP socket. Made by workers_create on the main thread; from
 * workers_start to workers_stop its own thread is the only one to touch
 * it, but for `started` (under all->start_lock), `stats` (read by any
 * thread, stats_read) and the receivers (their own threads).
 */
typedef struct worker {
	workers_t *all;
	unsigned index;
	pthread_t thread;
	bool thread_started;
	uv_loop_t loop;
	uv_async_t stop_async;
	/* rung by the threads that ready a TCP stream's next message (UPDATE answers) */
	waker_t *waker;
	const responder_t *responder;
	zonedb_ref_t *zones;                 /* the served set (RCU) */
	udp_receiver_t udp[CONF_LISTEN_MAX]; /* one per address */
	size_t udp_count;
	bool loop_ready;  /* loop initialised */
	bool async_ready; /* stop_async initialised (set before started) */
	tcp_server_t *tcp;
	tcp_server_t *tls; /* DNS over TLS (listen-tls), or NULL */
	worker_side_t side_tcp, side_tls;
	transfer_t xfr;         /* zone transfers and NOTIFY over TCP and TLS */
	dnstap_producer_t *tap; /* the loop's dnstap input (TCP and TLS), NULL when dnstap is off */
	answer_ctx_t ctx_udp;   /* what each receiver's context starts as */
	answer_ctx_t ctx_tcp;
	char nsid[300];
	worker_stats_t *stats;    /* &all->stats[index * all->parts]: the loop's part */
	zone_stats_t *zone_stats; /* all->zone_stats[index * all->parts]: all->zone_slots */
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
	size_t parts;               /* counter sets per worker: its loop's, then one per receiver */
	worker_stats_t *stats;      /* count * parts, cache-line aligned */
	zone_stats_t **zone_stats;  /* count * parts arrays, zone_slots each (mapped) */
	size_t zone_slots;          /* WORKER_ZONE_SLOTS, or _LOW when that was refused */
	rrl_t *rrl;                 /* response rate limiting, shared; NULL when off */
	dnstap_t *dnstap;           /* the dnstap writer, an input per part; NULL when off */
	addrlimit_t *tcp_addresses; /* TCP connections per client address; NULL: no limit */
	addrlimit_t *tls_addresses; /* TLS connections per client address, counted apart */
	tls_ctx_t *tls;             /* what TLS sessions start from (workers_set_tls) */
	cookies_t cookies;          /* the cookie secrets (cookies_rotate from the main thread) */
	bool cookies_ready;
	pthread_mutex_t start_lock;
	pthread_cond_t start_cond;
	bool sync_ready;      /* start_lock and start_cond initialised */
	char hostname[256];   /* the CHAOS identity when identity: is not set */
	struct jread *reader; /* IXFR changes read from journal files (workers_start..stop) */
};

/*
 * Point ctx's client address at peer's address octets (addr_octets: 4, an
 * IPv4-mapped address's too, or 16; none for another family), for cookies
 * and rate limiting. ctx keeps the pointer: peer must outlive the answer.
 * Worker thread.
 */
void worker_client_ip(answer_ctx_t *ctx, const struct sockaddr *peer);

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
 * Where the workers hand UPDATEs (server/events/update.h): u, or NULL to
 * answer them REFUSED (before u is freed). Main thread; the workers read
 * it atomically.
 */
void workers_set_updater(workers_t *ws, struct updater *u);

/*
 * Where each worker hands the NOTIFY messages it lets in (see
 * transfer_notify_fn): after workers_create, before workers_start. Main
 * thread.
 */
void workers_set_notify(workers_t *ws, transfer_notify_fn fn, void *arg);

/*
 * The TLS context the workers' TLS servers take their sessions from
 * (needed with listen-tls addresses; ctx must outlive ws): after
 * workers_create, before workers_start. Main thread.
 */
void workers_set_tls(workers_t *ws, tls_ctx_t *ctx);

/*
 * Start one thread per worker (with every signal blocked: the main loop
 * takes them) and wait until each runs its loop or has failed; then a
 * receiver thread per UDP socket. Returns 0,
 * or a negative error with err (pthread_create's as -errno, or the error
 * the first failed worker gave): then the threads that started must still
 * be stopped with workers_stop. Main thread.
 */
int workers_start(workers_t *ws, char *err, size_t errlen);

/*
 * Stop and join the receivers (each finishes its batch: a signal wakes
 * one blocked in recvmmsg, the socket itself is left as it is), then tell
 * each worker's loop to stop (its TCP server finishes the answers it
 * owes), and join them. Main thread.
 */
void workers_stop(workers_t *ws);

/*
 * Every counter in format f (stats_render): the workers', the zones named
 * from the set *zones serves, the groups kept outside the workers (NULL:
 * 0), and the secondary zones' gauges that secondaries lists from `from`
 * (NULL: none): a string the caller frees, and its length. Reads the
 * kernel's drop counts of the UDP sockets first. Returns 0 or
 * SHOAL_ENOMEM. Main thread (the one reader that writes rcvbuf_drops),
 * registered with RCU.
 */
int workers_stats_render(workers_t *ws, zonedb_ref_t *zones, const stats_groups_t *groups,
			 stats_secondaries_fn secondaries, const void *from, enum stats_format f,
			 char **out, size_t *len);

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
