/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNS over TCP for one worker: listeners, connections, RFC 7766 framing. */
#ifndef SHOAL_SERVER_NET_TCP_H
#define SHOAL_SERVER_NET_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "server/common/stats.h"
#include "server/common/tls.h"
#include "server/conf/limits.h"
#include "server/net/addrlimit.h"
#include "server/query/responder.h"

/*
 * Answers one message from the client at peer: q[0..len) in, answer
 * written to out[0..cap) (cap is 65535). Returns the answer length, or 0
 * for no answer. Called on the worker's loop thread; the TCP code calls it
 * for every complete message.
 */
typedef size_t (*tcp_answer_fn)(void *arg, const struct sockaddr *peer, const uint8_t *q,
				size_t len, uint8_t *out, size_t cap);

typedef struct tcp_server tcp_server_t;

/* A server of TLS connections (listen-tls): every session starts from ctx; counted in stats. */
typedef struct tcp_tls {
	tls_ctx_t *ctx;
	tls_stats_t *stats;
} tcp_tls_t;

/*
 * Start serving the listening sockets fds[0..n) (already bound, with
 * SO_REUSEPORT, and listening) on loop; with tls (else NULL), every
 * connection is DNS over TLS (RFC 7858): a handshake within
 * limits->handshake_timeout_ms first, at most limits->max_handshakes at
 * once (the one begun first gives way), then the same framing. The server
 * keeps the `stats`, `arg` and tls pointers for its life. Returns 0 and
 * *out, or a negative error.
 * Must be called on the loop's thread.
 * The fds belong to the server after a 0 return (tcp_server_stop closes
 * them). SHOAL_EINVAL (a zero limit, a socket that is not a listening TCP
 * socket) and SHOAL_ENOMEM leave them to the caller; a system error (libuv
 * refused one: shoal_error_is_system) means they are closed. limits->max_output below 65537 is
 * raised to 65537, so one whole answer always fits.
 * The process must ignore SIGPIPE: libuv writes with write(2), which raises
 * it when a peer has gone.
 * Memory: 65537 octets per worker, then per open connection (at most
 * max_connections) 4 KiB of input buffer, up to 65537 while a longer message
 * arrives, plus queued output: at most max_output octets, held in buffers
 * of at most 2 * max_output. A connection that is idle or closed keeps at
 * most 4 KiB of each of its three buffers.
 */
int tcp_server_start(uv_loop_t *loop, const int *fds, size_t n, const tcp_limits_t *limits,
		     tcp_answer_fn answer, void *arg, tcp_stats_t *stats, const tcp_tls_t *tls,
		     tcp_server_t **out);

/* Ask fn (with the server's arg) first for every message from now on. On the loop's thread. */
void tcp_server_set_special(tcp_server_t *t, tcp_special_fn fn);

/*
 * Another thread readied what a stream waits on (its waker rang): ask
 * every connection whose stream returned TCP_STREAM_WAIT for its next
 * message again, once each. t may be NULL. On the loop's thread.
 */
void tcp_server_resume(tcp_server_t *t);

/*
 * Graceful stop: close the listeners at once, let open connections finish
 * writing the answers to queries already received (streams are cut), then close them, then
 * call done(arg) and free the server. Connections still open after
 * message_timeout_ms, and at most 5 seconds, are closed as they are. On
 * the loop's thread.
 */
void tcp_server_stop(tcp_server_t *t, void (*done)(void *arg), void *arg);

/*
 * Count connections per client address in a (shared by every worker's
 * server; NULL: no limit): a connection from an address that holds the
 * limit is closed as soon as it is accepted (stats->refused_per_address).
 * a must outlive t. On the loop's thread, before connections come.
 */
void tcp_server_limit_addresses(tcp_server_t *t, addrlimit_t *a);

/* Open connections right now (for statistics). */
size_t tcp_server_connections(const tcp_server_t *t);

/*
 * net.ipv4.tcp_migrate_req in this network namespace: 1 when the kernel
 * hands a closing listener's queued connections to the other listeners of
 * its SO_REUSEPORT group (Linux 5.14+), 0 when it resets them, or a negative
 * error when it cannot be read (older kernel). Any thread; reads /proc.
 */
int tcp_migrate_req_state(void);

#endif
