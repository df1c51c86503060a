/* What the files of server/ share: the server and its workers. */
#ifndef SHOAL_SERVER_INTERNAL_H
#define SHOAL_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "server/conf.h"
#include "server/reload.h"
#include "server/responder.h"
#include "server/socket.h"
#include "server/stats.h"
#include "server/tcp.h"
#include "zone/answer.h"
#include "zone/zonedb.h"

/* recvmmsg/sendmmsg batch: batches of 16 to 64 measured best on this kernel */
#define UDP_BATCH 32
/* a longer datagram is cut short (MSG_TRUNC) and dropped */
#define UDP_QUERY_MAX 4096
/* then back to the loop, so a stop and the other sockets get a turn */
#define UDP_BATCHES_PER_WAKEUP 8
/* EAGAIN on sendmmsg: retry this often, then drop */
#define UDP_SEND_RETRIES 4

typedef struct server server_t;
typedef struct worker worker_t;

/* Buffers for one recvmmsg/sendmmsg batch, allocated once per worker. */
typedef struct udp_batch {
	struct mmsghdr rx[UDP_BATCH];
	struct mmsghdr tx[UDP_BATCH];
	struct iovec rx_iov[UDP_BATCH];
	struct iovec tx_iov[UDP_BATCH];
	struct sockaddr_storage peer[UDP_BATCH];
	uint8_t *rx_buf; /* UDP_BATCH * UDP_QUERY_MAX */
	uint8_t *tx_buf; /* UDP_BATCH * answer_cap */
	size_t answer_cap;
} udp_batch_t;

struct worker {
	server_t *srv;
	unsigned index;
	pthread_t thread;
	bool thread_started;
	uv_loop_t loop;
	uv_async_t stop_async;
	const responder_t *responder;
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
	worker_stats_t *stats; /* &srv->stats[index] */
	int started;           /* 0 starting, 1 running, -1 failed (under srv->start_lock) */
};

struct server {
	conf_t *cfg;
	const responder_t *responder;
	socket_set_t *sockets; /* every listening socket, made before the privilege drop */
	worker_t *workers;
	size_t worker_count;
	worker_stats_t *stats; /* one per worker, cache-line aligned */
	zonedb_ref_t zones;    /* what workers read (RCU) */
	reload_t reload;       /* loads and publishes the zones */
	uv_loop_t *loop;       /* main loop: signals, control, reload results */
	uv_signal_t sig_term, sig_int, sig_hup;
	struct control *control;
	struct control *control_closed; /* closed, freed after the close callbacks */
	bool stopping;
	pthread_mutex_t start_lock;
	pthread_cond_t start_cond;
	time_t started_at;
};

/*
 * Allocate w->batch: UDP_BATCH receive buffers of UDP_QUERY_MAX, answer
 * buffers of answer_cap, the mmsghdr and iovec arrays. w owns it until
 * udp_batch_free. Main thread. Returns 0 or SHOAL_ENOMEM.
 */
int udp_batch_new(worker_t *w, size_t answer_cap);
void udp_batch_free(worker_t *w);

/*
 * uv_poll callback (handle->data is the worker): read the socket in
 * recvmmsg batches, answer each query inside one rcu_read_lock per batch,
 * sendmmsg the answers; at most UDP_BATCHES_PER_WAKEUP batches per call.
 * Worker thread; allocates nothing.
 */
void udp_on_readable(uv_poll_t *handle, int status, int events);

/*
 * Workers (server/worker.c), all on the main thread.
 * workers_create: srv->workers and srv->stats, every worker's buffers.
 *   Returns 0 or a negative error with err.
 * workers_start: one thread each (signals blocked), waits until every
 *   worker runs its loop or failed. Returns 0 or SHOAL_ESYSTEM with err.
 * workers_stop: tell each worker to stop after its batch; join them.
 * workers_destroy: free what the workers own (not the sockets: srv->sockets).
 */
int workers_create(server_t *srv, char *err, size_t errlen);
int workers_start(server_t *srv, char *err, size_t errlen);
void workers_stop(server_t *srv);
void workers_destroy(server_t *srv);

/* Control clients served at once; more wait, unaccepted, until one leaves. */
#define CONTROL_CLIENTS_MAX 8

/*
 * Control socket (server/control.c), on the main loop.
 * control_check_path: refuse a path under a folder every user may write
 *   without the sticky bit (any of them could replace the socket), and
 *   warn about one in a sticky world-writable folder. Before binding, also
 *   for --check. Returns 0 or SHOAL_ECONFIG with err.
 * control_open: bind a unix stream socket at path, mode 0600 from the
 *   start, replacing a stale socket file but not a live one, and hold the
 *   new file by an O_PATH descriptor. Returns 0 or a negative error with err.
 * control_chown: hand the socket file to uid/gid through that descriptor
 *   (never by name: a name swapped for a symbolic link would hand over its
 *   target); fails, with err, when the name no longer leads to it.
 * control_close: close the listener and clients, unlink the file.
 * control_free: after the loop ran the close callbacks, free the rest.
 */
int control_check_path(const char *path, char *err, size_t errlen);
int control_open(server_t *srv, const char *path, char *err, size_t errlen);
int control_chown(server_t *srv, uid_t uid, gid_t gid, char *err, size_t errlen);
void control_close(server_t *srv);
void control_free(server_t *srv);

/* Stop the server: end the main loop; server_run then stops the workers. Main thread. */
void server_request_stop(server_t *srv);

#endif
