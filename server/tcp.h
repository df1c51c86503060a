/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNS over TCP for one worker: listeners, connections, RFC 7766 framing. */
#ifndef SHOAL_SERVER_TCP_H
#define SHOAL_SERVER_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "server/addrlimit.h"
#include "server/stats.h"

/*
 * Answers one message from the client at peer: q[0..len) in, answer
 * written to out[0..cap) (cap is 65535). Returns the answer length, or 0
 * for no answer. Called on the worker's loop thread; the TCP code calls it
 * for every complete message.
 */
typedef size_t (*tcp_answer_fn)(void *arg, const struct sockaddr *peer, const uint8_t *q,
				size_t len, uint8_t *out, size_t cap);

/*
 * An answer of many messages (a zone transfer). The connection asks for
 * one message at a time, when the one before has been handed to the
 * socket: one message per turn of the loop, so the worker's other
 * connections are served in between, and none while the peer does not
 * read (its idle timeout then closes the connection). Queries pipelined
 * behind a stream wait until it ends.
 * next: write the next message into out[0..cap) (cap is 65535); return
 *   its length, 0 when the stream is over, or a negative error, which
 *   closes the connection.
 * end: called once when the stream is over, complete (next returned 0)
 *   or not (an error, the connection closed, the server stopping); frees
 *   the stream.
 * Both on the loop's thread.
 */
typedef struct tcp_stream tcp_stream_t;
struct tcp_stream {
	int (*next)(tcp_stream_t *s, uint8_t *out, size_t cap);
	void (*end)(tcp_stream_t *s, bool complete);
};

/* From a tcp_special_fn: let the answer function answer this message. */
#define TCP_SPECIAL_PASS (-1)

/*
 * Messages whose answer depends on who asks or takes many messages (zone
 * transfers, NOTIFY), set with tcp_server_set_special: called with the
 * peer's address for every whole message before the answer function.
 * Returns TCP_SPECIAL_PASS to leave the message to the answer function;
 * otherwise the length of the answer written to out[0..cap) (0: none) and,
 * when it sets *stream, the stream's messages follow that answer. On the
 * loop's thread.
 */
typedef int (*tcp_special_fn)(void *arg, const struct sockaddr *peer, const uint8_t *q, size_t len,
			      uint8_t *out, size_t cap, tcp_stream_t **stream);

/* Limits that protect the server (shoald.conf(5) documents each). */
typedef struct tcp_limits {
	uint32_t idle_timeout_ms;    /* close a connection idle this long (10000) */
	uint32_t max_connections;    /* per worker; past it the oldest idle goes (256) */
	uint32_t message_timeout_ms; /* to receive one whole message (5000) */
	uint32_t max_output;         /* queued answer octets per connection (262144) */
	uint32_t max_pipelined;      /* messages read ahead of writes per connection (64) */
	uint32_t max_per_address;    /* per client address, over all workers; 0: no limit (32) */
} tcp_limits_t;

#define TCP_LIMITS_DEFAULT                       \
	{                                        \
		10000, 256, 5000, 262144, 64, 32 \
	}

typedef struct tcp_server tcp_server_t;

/*
 * Start serving the listening sockets fds[0..n) (already bound, with
 * SO_REUSEPORT, and listening) on loop. The server keeps `stats` and `arg`
 * pointers for its life. Returns 0 and *out, or a negative error.
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
		     tcp_answer_fn answer, void *arg, tcp_stats_t *stats, tcp_server_t **out);

/* Ask fn (with the server's arg) first for every message from now on. On the loop's thread. */
void tcp_server_set_special(tcp_server_t *t, tcp_special_fn fn);

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
