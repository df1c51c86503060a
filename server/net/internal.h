/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inside server/net/tcp.c, tcp_conn.c and tls_conn.c: the server, its connection slots, how their
 * octets move, shared helpers. */
#ifndef SHOAL_SERVER_NET_INTERNAL_H
#define SHOAL_SERVER_NET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "server/common/log.h"
#include "server/common/tls.h"
#include "server/conf/acl.h"
#include "server/net/acceptor.h"
#include "server/net/tcp.h"

/* RFC 1035 4.2.2: a two-octet length, then at most 65535 octets of message. */
#define TCP_MSG_MAX   65535u
#define TCP_FRAME_MAX (2u + TCP_MSG_MAX)

/* After our FIN, how long to read and discard what the peer still sends
 * before closing: closing with unread input sends a RST (RFC 1122
 * 4.2.2.13), which can destroy answers the peer has not read yet. */
#define TCP_LINGER_MS 2000u

/* A connection's input buffer starts this big (a few dozen pipelined
 * queries fit) and grows to hold one whole message when a longer one
 * comes. A buffer, input or output, grown past this is given back when its
 * connection goes idle or closes, so a slot keeps at most this much of
 * each: a burst of big messages does not pin memory (it kept about 200
 * KiB per slot). */
#define TCP_BUF_KEEP 4096u

/* When stopping, how long a connection that has sent nothing yet may take
 * to send its first query. */
#define TCP_STOP_GRACE_MS 1000u

/* A stop waits at most this long for connections to finish, however long
 * tcp-message-timeout is, so SIGTERM always ends the process soon. */
#define TCP_STOP_MAX_MS 5000u

/* Answers to pipelined queries are collected up to this many octets per
 * write system call. */
#define TCP_GATHER_MAX 16384u

/* Answers waiting to be written; see tcp_conn.out. */
typedef struct tcp_outbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
	uint32_t answers; /* answers with bytes in this buffer */
} tcp_outbuf_t;

typedef struct tcp_conn tcp_conn_t;

/*
 * How a connection's octets move: TCP's (libuv's stream, below in
 * tcp_conn.c) or TLS's (tls_conn.c: GnuTLS on the socket, which uv_poll
 * watches). One table per server, chosen at its start, so the TCP path
 * has no TLS branch. Everything on the loop's thread.
 *   open: take the accepted fd into c's I/O handle; start serving it
 *     (tcp_conn_open now, or once a handshake is done). An error closes
 *     the connection (tcp_conn_close) and fd.
 *   set_reading: read, or stop reading; what is read comes to
 *     tcp_conn_received, into c->in past in_len (anywhere in c->in once
 *     shut: discarded).
 *   write: start writing p[0..len) (it stays put until done); the end
 *     comes to tcp_conn_written on a later turn of the loop. Returns 0 or
 *     a negative error (nothing will come).
 *   try_write: write what the socket takes now, without waiting: the
 *     octets taken (0: none), or a negative error. When fewer than len,
 *     the next call is write(p + taken, ...).
 *   shutdown: our side is done: FIN (TLS: close_notify first), after what
 *     is written; errors come to tcp_conn_shutdown_done.
 *   has_input: whether input waits unread (used only when stopping).
 *   close: close the I/O handle (its close callback is
 *     tcp_conn_handle_closed) and the socket.
 */
typedef struct tcp_io {
	void (*open)(tcp_conn_t *c, int fd);
	void (*set_reading)(tcp_conn_t *c, bool want);
	int (*write)(tcp_conn_t *c, const uint8_t *p, size_t len);
	ssize_t (*try_write)(tcp_conn_t *c, const uint8_t *p, size_t len);
	int (*shutdown)(tcp_conn_t *c);
	bool (*has_input)(tcp_conn_t *c);
	void (*close)(tcp_conn_t *c);
} tcp_io_t;

/* A TLS connection's state (tls_conn.c). */
typedef struct tls_conn {
	tls_session_t *session;
	int fd;
	int events; /* what the poll handle watches now (UV_READABLE, UV_WRITABLE) */
	/* the write under way: out[done..len) left, the session's unflushed record included */
	const uint8_t *out;
	size_t out_len, out_done;
	/* after a try_write that stopped within a record: its octets, which the session holds */
	size_t head_taken;
	bool handshaking;
	bool writing;      /* a write is under way */
	bool shutting;     /* close_notify, then FIN, under way */
	bool recv_blocked; /* a read waits for the socket to take a record first (rare) */
	tcp_conn_t *hs_prev, *hs_next; /* handshakes under way, the oldest first */
} tls_conn_t;

struct tcp_conn {
	union {
		uv_handle_t any;
		uv_tcp_t tcp;   /* TCP: libuv's stream */
		uv_poll_t poll; /* TLS: the socket polled; the session reads and writes it */
	} handle;
	uv_timer_t timer; /* handshake, idle, message, or linger timeout: one at a time */
	uv_write_t write_req;
	uv_shutdown_t shutdown_req;
	tcp_server_t *srv;
	tls_conn_t tls;
	/* Open connections: the activity list, least recently active first.
	 * Free slots: `next` links the free list. */
	tcp_conn_t *prev, *next;
	/* On the waiting list (stream_waiting): streams a waker's ring asks again. */
	tcp_conn_t *wait_prev, *wait_next;
	uint8_t *in; /* in_cap octets: TCP_BUF_KEEP, up to TCP_FRAME_MAX for a long message */
	size_t in_cap;
	size_t in_len; /* octets of unprocessed input at in[0] */
	/* Double buffer: out[flight] is being written by libuv (its memory must
	 * not move), out[flight ^ 1] collects answers meanwhile. With no write in
	 * flight, out[flight ^ 1] collects only during one pass over the input
	 * and is flushed at its end (conn_flush). */
	tcp_outbuf_t out[2];
	unsigned flight;
	tcp_stream_t *stream;         /* a many-message answer being sent, or NULL */
	struct sockaddr_storage peer; /* the client's address */
	/* what a provide-xfr entry checks: the address, TLS, the certificate (tls_conn.c) */
	acl_client_t client;
	uint8_t closes_pending;
	bool io_open;        /* the I/O handle is made: tcp_conn_close closes it */
	bool opened;         /* served: tcp_conn_open ran (a TLS one: after its handshake) */
	bool writing;        /* write_req is in flight */
	bool reading;        /* uv_read_start is in effect */
	bool eof;            /* the peer closed its side; answer what is read, then close */
	bool timing_message; /* the timer runs the message timeout, not the idle one */
	bool shut;           /* our FIN is sent; discarding input until the peer's */
	bool got_input;      /* at least one octet arrived */
	bool stop_grace;     /* stopping: the timer is the first-query grace */
	bool stream_waiting; /* the stream's next message is not ready: on srv's waiting list */
	bool closing;        /* uv_close called, waiting for both close callbacks */
	bool counted;        /* its address is counted in srv->addresses */
};

typedef struct tcp_listener {
	acceptor_t acc;
	tcp_server_t *srv;
	bool waiting; /* the acceptor holds an accepted fd for us until a slot frees */
} tcp_listener_t;

struct tcp_server {
	uv_loop_t *loop;
	const tcp_io_t *io; /* tcp_io_tcp, or tcp_io_tls */
	tcp_limits_t lim;
	tcp_answer_fn answer;
	tcp_special_fn special; /* or NULL */
	void *arg;
	tcp_stats_t *stats;
	addrlimit_t *addresses; /* connections per client address, or NULL */
	tcp_listener_t *listeners;
	size_t n_listeners;
	tcp_conn_t *conns; /* the pool: lim.max_connections slots */
	tcp_conn_t *free_list;
	tcp_conn_t *active_head, *active_tail;
	/* connections whose stream waits on another thread: tcp_server_resume asks them again */
	tcp_conn_t *wait_head, *wait_tail;
	size_t streams_waiting;
	size_t in_use;         /* slots taken (open or closing) */
	size_t closing;        /* slots whose handles are closing */
	size_t waiting;        /* listeners with a connection waiting for a slot */
	size_t handles_open;   /* listeners and stop_timer not yet closed */
	uv_timer_t stop_timer; /* bounds how long a stop waits for connections */
	bool stop_timer_closing;
	bool stopping;
	void (*done)(void *arg);
	void *done_arg;
	uint8_t *scratch; /* TCP_FRAME_MAX: the answer callback writes at scratch + 2 */
	/* TLS: its context and counters; the handshakes under way, the oldest first */
	tls_ctx_t *tls;
	tls_stats_t *tls_stats;
	tcp_conn_t *hs_head, *hs_tail;
	size_t handshakes;
	log_limit_t tls_log; /* handshake failures: any client can make them */
};

/* The activity list: open connections, least recently active first. */
static inline void tcp_active_remove(tcp_server_t *t, tcp_conn_t *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		t->active_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		t->active_tail = c->prev;
	c->prev = c->next = NULL;
}

static inline void tcp_active_append(tcp_server_t *t, tcp_conn_t *c)
{
	c->next = NULL;
	c->prev = t->active_tail;
	if (t->active_tail)
		t->active_tail->next = c;
	else
		t->active_head = c;
	t->active_tail = c;
}

/* The waiting list: connections whose stream's next message another thread prepares. */
static inline void tcp_waiting_remove(tcp_server_t *t, tcp_conn_t *c)
{
	if (!c->stream_waiting)
		return;
	if (c->wait_prev)
		c->wait_prev->wait_next = c->wait_next;
	else
		t->wait_head = c->wait_next;
	if (c->wait_next)
		c->wait_next->wait_prev = c->wait_prev;
	else
		t->wait_tail = c->wait_prev;
	c->wait_prev = c->wait_next = NULL;
	c->stream_waiting = false;
	t->streams_waiting--;
}

static inline void tcp_waiting_append(tcp_server_t *t, tcp_conn_t *c)
{
	if (c->stream_waiting)
		return;
	c->wait_next = NULL;
	c->wait_prev = t->wait_tail;
	if (t->wait_tail)
		t->wait_tail->wait_next = c;
	else
		t->wait_head = c;
	t->wait_tail = c;
	c->stream_waiting = true;
	t->streams_waiting++;
}

/* The two ways octets move (tcp_conn.c, tls_conn.c). */
extern const tcp_io_t tcp_io_tcp;
extern const tcp_io_t tcp_io_tls;

/*
 * Connections (server/net/tcp_conn.c). All on the loop's thread.
 * tcp_conn_open: c was just accepted into its slot (TLS: its handshake is
 *   done); start reading and timing (during a stop: the grace for its first
 *   queries, as a connection accepted just before).
 * tcp_conn_close: close now; `counter` (may be NULL) is the statistic that
 *   names why; the slot returns through tcp_pool_release once both handles
 *   are closed.
 * tcp_conn_advance: answer what is whole in the input, then decide reading,
 *   timers and closing; `wrote` says a write just completed.
 * tcp_conn_idle: nothing half-read and nothing unwritten.
 */
void tcp_conn_open(tcp_conn_t *c);
void tcp_conn_close(tcp_conn_t *c, uint64_t *counter);
void tcp_conn_advance(tcp_conn_t *c, bool wrote);
bool tcp_conn_idle(const tcp_conn_t *c);

/*
 * What an I/O table reports (tcp_io_t): nread octets read into c->in
 * (0: nothing, UV_EOF: the peer closed, < 0: an error that closes); a
 * write ended (status 0 or a negative error); a shutdown failed; an I/O
 * handle closed.
 */
void tcp_conn_received(tcp_conn_t *c, ssize_t nread);
void tcp_conn_written(tcp_conn_t *c, int status);
void tcp_conn_shutdown_done(tcp_conn_t *c, int status);
void tcp_conn_handle_closed(uv_handle_t *h);

/* Both handles of c are closed: reset the slot and give it back (server/net/tcp.c). */
void tcp_pool_release(tcp_conn_t *c);

/* Give back c's buffers grown past TCP_BUF_KEEP; none may hold data
 * (server/net/tcp_conn.c). */
void tcp_conn_trim(tcp_conn_t *c);

#endif
