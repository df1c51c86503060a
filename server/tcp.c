/* DNS over TCP for one worker: accepting, RFC 7766 framing, pipelining, limits, graceful stop. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/wire.h"
#include "server/tcp.h"

/* RFC 1035 4.2.2: a two-octet length, then at most 65535 octets of message. */
#define TCP_MSG_MAX 65535u
#define TCP_FRAME_MAX (2u + TCP_MSG_MAX)

/* After our FIN, how long to read and discard what the peer still sends
 * before closing: closing with unread input sends a RST (RFC 1122
 * 4.2.2.13), which can destroy answers the peer has not read yet. */
#define TCP_LINGER_MS 2000u

/* An output buffer that was grown past this is given back when its
 * connection closes, so a burst of big answers does not pin memory. */
#define TCP_OUT_KEEP 65536u

/* When stopping, how long a connection that has sent nothing yet may take
 * to send its first query. */
#define TCP_STOP_GRACE_MS 1000u

/* Answers to pipelined queries are collected up to this many octets per
 * write system call. */
#define TCP_GATHER_MAX 16384u

#define TCP_LISTEN_BACKLOG 1024

/* Answers waiting to be written; see tcp_conn.out. */
typedef struct tcp_outbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
	uint32_t answers; /* answers with bytes in this buffer */
} tcp_outbuf_t;

typedef struct tcp_conn tcp_conn_t;

struct tcp_conn {
	uv_tcp_t handle;
	uv_timer_t timer; /* idle, message, or linger timeout: one at a time */
	uv_write_t write_req;
	uv_shutdown_t shutdown_req;
	tcp_server_t *srv;
	/* Open connections: the activity list, least recently active first.
	 * Free slots: `next` links the free list. */
	tcp_conn_t *prev, *next;
	uint8_t *in;   /* TCP_FRAME_MAX octets, allocated on first use of the slot */
	size_t in_len; /* octets of unprocessed input at in[0] */
	/* Double buffer: out[flight] is being written by libuv (its memory must
	 * not move), out[flight ^ 1] collects answers meanwhile. With no write in
	 * flight, out[flight ^ 1] collects only during one pass over the input
	 * and is flushed at its end (conn_flush). */
	tcp_outbuf_t out[2];
	unsigned flight;
	uint8_t closes_pending;
	bool writing;        /* write_req is in flight */
	bool reading;        /* uv_read_start is in effect */
	bool eof;            /* the peer closed its side; answer what is read, then close */
	bool timing_message; /* the timer runs the message timeout, not the idle one */
	bool shut;           /* our FIN is sent; discarding input until the peer's */
	bool got_input;      /* at least one octet arrived */
	bool stop_grace;     /* stopping: the timer is the first-query grace */
	bool closing;        /* uv_close called, waiting for both close callbacks */
};

typedef struct tcp_listener {
	uv_tcp_t handle;
	tcp_server_t *srv;
	bool waiting; /* libuv holds an accepted fd for us until a slot frees */
} tcp_listener_t;

struct tcp_server {
	uv_loop_t *loop;
	tcp_limits_t lim;
	tcp_answer_fn answer;
	void *arg;
	tcp_stats_t *stats;
	tcp_listener_t *listeners;
	size_t n_listeners;
	tcp_conn_t *conns; /* the pool: lim.max_connections slots */
	tcp_conn_t *free_list;
	tcp_conn_t *active_head, *active_tail;
	size_t in_use;        /* slots taken (open or closing) */
	size_t closing;       /* slots whose handles are closing */
	size_t waiting;       /* listeners with a connection waiting for a slot */
	size_t handles_open;  /* listeners and stop_timer not yet closed */
	uv_timer_t stop_timer; /* bounds how long a stop waits for connections */
	bool stop_timer_closing;
	bool stopping;
	void (*done)(void *arg);
	void *done_arg;
	uint8_t *scratch; /* TCP_FRAME_MAX: the answer callback writes at scratch + 2 */
};

static void conn_advance(tcp_conn_t *c, bool wrote);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void server_serve_waiting(tcp_server_t *t);
static void server_maybe_finish(tcp_server_t *t);

/*
 * Count into the caller's tcp_stats_t. Only this loop's thread writes it, but
 * other threads read it at any time (statistics), so each store is a relaxed
 * atomic one: no lock prefix, no torn value.
 */
static inline void stat_add(uint64_t *counter, uint64_t v)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + v,
			 __ATOMIC_RELAXED);
}

/* ---- activity list and pool ---- */

static void active_remove(tcp_server_t *t, tcp_conn_t *c)
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

static void active_append(tcp_server_t *t, tcp_conn_t *c)
{
	c->next = NULL;
	c->prev = t->active_tail;
	if (t->active_tail)
		t->active_tail->next = c;
	else
		t->active_head = c;
	t->active_tail = c;
}

static tcp_conn_t *pool_take(tcp_server_t *t)
{
	tcp_conn_t *c = t->free_list;
	if (c) {
		t->free_list = c->next;
		c->next = NULL;
		t->in_use++;
	}
	return c;
}

/* Both handles of a slot are closed: reset it and put it back. */
static void pool_release(tcp_conn_t *c)
{
	tcp_server_t *t = c->srv;
	for (int i = 0; i < 2; i++) {
		tcp_outbuf_t *o = &c->out[i];
		if (o->cap > TCP_OUT_KEEP) {
			free(o->data);
			o->data = NULL;
			o->cap = 0;
		}
		o->len = 0;
		o->answers = 0;
	}
	c->in_len = 0;
	c->flight = 0;
	c->writing = c->reading = c->eof = c->timing_message = false;
	c->shut = c->closing = c->got_input = c->stop_grace = false;
	c->next = t->free_list;
	t->free_list = c;
	t->in_use--;
	t->closing--;
	if (t->stopping)
		server_maybe_finish(t);
	else
		server_serve_waiting(t);
}

/* ---- closing ---- */

static void on_conn_handle_closed(uv_handle_t *h)
{
	tcp_conn_t *c = h->data;
	if (--c->closes_pending == 0)
		pool_release(c);
}

/* Close now; `counter` (may be NULL) is the statistic that names why. */
static void conn_close(tcp_conn_t *c, uint64_t *counter)
{
	if (c->closing)
		return;
	tcp_server_t *t = c->srv;
	c->closing = true;
	active_remove(t, c);
	t->closing++;
	if (counter)
		stat_add(counter, 1);
	c->closes_pending = 2;
	uv_close((uv_handle_t *)&c->handle, on_conn_handle_closed);
	uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
}

/* ---- state questions ---- */

static size_t conn_queued_bytes(const tcp_conn_t *c)
{
	return c->out[0].len + c->out[1].len;
}

/* RFC 7766 6.2.1.1: pipelined queries are read ahead of their answers, but
 * only so far: past max_pipelined unwritten answers we stop reading. */
static bool conn_blocked(const tcp_conn_t *c)
{
	return c->out[0].answers + c->out[1].answers >= c->srv->lim.max_pipelined;
}

/* True when a whole length-prefixed message starts at the cursor. */
static bool frame_complete(const wire_t *w)
{
	size_t left = wire_left(w);
	return left >= 2 && left >= 2u + wire_get_u16(w->buf + w->pos);
}

static bool conn_has_complete_message(const tcp_conn_t *c)
{
	wire_t w;
	wire_init_read(&w, c->in, c->in_len);
	return frame_complete(&w);
}

/* Nothing half-read and nothing unwritten: the best one to close for room. */
static bool conn_idle(const tcp_conn_t *c)
{
	return c->shut || (c->in_len == 0 && !c->writing);
}

/* True when the kernel holds input we have not read (used only when stopping). */
static bool conn_socket_has_input(tcp_conn_t *c)
{
	uv_os_fd_t fd;
	uint8_t b;
	if (uv_fileno((uv_handle_t *)&c->handle, &fd) != 0)
		return false;
	return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static void conn_set_reading(tcp_conn_t *c, bool want)
{
	if (want == c->reading)
		return;
	if (want) {
		if (uv_read_start((uv_stream_t *)&c->handle, on_alloc, on_read) == 0)
			c->reading = true;
	} else {
		uv_read_stop((uv_stream_t *)&c->handle);
		c->reading = false;
	}
}

/* ---- timers ---- */

static void on_conn_timer(uv_timer_t *timer)
{
	tcp_conn_t *c = timer->data;
	tcp_stats_t *st = c->srv->stats;
	if (c->shut)
		conn_close(c, NULL);
	else if (c->in_len > 0 || c->writing)
		/* a message not whole in time, or answers the peer does not read */
		conn_close(c, &st->closed_slow);
	else
		conn_close(c, &st->closed_idle);
}

/*
 * One timer per connection. With input pending (a message begun, or whole
 * ones held back by max_pipelined) it is the message timeout, started when
 * the message began and not extended by more octets of it, so a sender that
 * drips bytes cannot hold the slot (RFC 7766 6.2.3). Otherwise it is the idle
 * timeout, restarted by every message and every finished write.
 */
static void conn_arm_timer(tcp_conn_t *c, bool message_done, bool wrote)
{
	const tcp_limits_t *lim = &c->srv->lim;
	if (c->in_len > 0) {
		if (message_done || !c->timing_message) {
			uv_timer_start(&c->timer, on_conn_timer, lim->message_timeout_ms, 0);
			c->timing_message = true;
		}
	} else if (message_done || wrote || c->timing_message) {
		uv_timer_start(&c->timer, on_conn_timer, lim->idle_timeout_ms, 0);
		c->timing_message = false;
	}
}

/* ---- output ---- */

static void on_write(uv_write_t *req, int status);

/* Move the collecting buffer into flight. */
static void conn_start_write(tcp_conn_t *c)
{
	c->flight ^= 1;
	tcp_outbuf_t *o = &c->out[c->flight];
	uv_buf_t b = uv_buf_init((char *)o->data, (unsigned)o->len);
	if (uv_write(&c->write_req, (uv_stream_t *)&c->handle, &b, 1, on_write) != 0) {
		conn_close(c, NULL);
		return;
	}
	c->writing = true;
}

static void on_write(uv_write_t *req, int status)
{
	tcp_conn_t *c = req->data;
	c->writing = false;
	if (c->closing)
		return; /* cancelled by conn_close; the slot is reset on release */
	if (status < 0) {
		conn_close(c, NULL);
		return;
	}
	tcp_outbuf_t *o = &c->out[c->flight];
	stat_add(&c->srv->stats->bytes_out, o->len);
	o->len = 0;
	o->answers = 0;
	if (c->out[c->flight ^ 1].len > 0)
		conn_start_write(c);
	if (!c->closing)
		conn_advance(c, true);
}

/* Grow o to hold `more` octets, never past `limit` in capacity. */
static int outbuf_reserve(tcp_outbuf_t *o, size_t more, size_t limit)
{
	size_t need = o->len + more;
	if (need <= o->cap)
		return 0;
	size_t cap = o->cap ? o->cap * 2 : 4096;
	if (cap < need)
		cap = need;
	if (cap > limit)
		cap = limit;
	uint8_t *p = realloc(o->data, cap);
	if (!p)
		return SHOAL_ENOMEM;
	o->data = p;
	o->cap = cap;
	return 0;
}

/*
 * Try to hand `len` octets at p to the socket now (nothing may be in
 * flight). Returns how many it took (0 when it would block), or a negative
 * error after closing the connection.
 */
static ssize_t conn_try_write(tcp_conn_t *c, const uint8_t *p, size_t len)
{
	uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);
	int r = uv_try_write((uv_stream_t *)&c->handle, &b, 1);
	if (r == UV_EAGAIN)
		return 0;
	if (r < 0) {
		conn_close(c, NULL);
		return r;
	}
	stat_add(&c->srv->stats->bytes_out, (uint64_t)r);
	return r;
}

/* Append one answer (or its unsent tail) to the collecting buffer, within max_output. */
static void conn_append(tcp_conn_t *c, const uint8_t *p, size_t len)
{
	tcp_server_t *t = c->srv;
	if (conn_queued_bytes(c) + len > t->lim.max_output) {
		conn_close(c, &t->stats->closed_slow);
		return;
	}
	tcp_outbuf_t *o = &c->out[c->flight ^ 1];
	if (outbuf_reserve(o, len, t->lim.max_output) != 0) {
		conn_close(c, NULL);
		return;
	}
	memcpy(o->data + o->len, p, len);
	o->len += len;
	o->answers++;
}

/*
 * With nothing in flight, write the collected answers: one system call for
 * all the answers to one read's pipelined queries. What the socket does not
 * take goes into flight.
 */
static void conn_flush(tcp_conn_t *c)
{
	tcp_outbuf_t *o = &c->out[c->flight ^ 1];
	if (c->writing || o->len == 0)
		return;
	ssize_t r = conn_try_write(c, o->data, o->len);
	if (r < 0)
		return;
	if ((size_t)r == o->len) {
		o->len = 0;
		o->answers = 0;
		return;
	}
	memmove(o->data, o->data + r, o->len - (size_t)r);
	o->len -= (size_t)r;
	conn_start_write(c);
}

/*
 * Send one framed answer. A lone answer with nothing queued goes straight to
 * the socket (no copy); answers to pipelined queries are collected and
 * written together by conn_flush; behind a write in flight they wait, in
 * order, up to max_output queued octets. `more` says another whole query
 * follows in the input.
 */
static void conn_send(tcp_conn_t *c, const uint8_t *p, size_t len, bool more)
{
	tcp_outbuf_t *o = &c->out[c->flight ^ 1];
	if (!c->writing && o->len + len > TCP_GATHER_MAX) {
		conn_flush(c);
		if (c->closing)
			return;
	}
	if (!c->writing && o->len == 0 && !more) {
		ssize_t r = conn_try_write(c, p, len);
		if (r < 0 || (size_t)r == len)
			return;
		conn_append(c, p + r, len - (size_t)r);
		if (!c->closing)
			conn_start_write(c);
		return;
	}
	conn_append(c, p, len);
}

/* One whole message: answer it, or not: an answer of length 0 drops the
 * message and keeps the connection (NSD closes the connection on a dropped
 * query; keeping it costs nothing more than a query that is answered, and
 * the timeouts still apply). */
static void conn_answer(tcp_conn_t *c, const uint8_t *msg, size_t len, bool more)
{
	tcp_server_t *t = c->srv;
	stat_add(&t->stats->queries, 1);
	size_t n = t->answer(t->arg, msg, len, t->scratch + 2, TCP_MSG_MAX);
	if (n == 0 || n > TCP_MSG_MAX)
		return;
	wire_t w;
	wire_init_write(&w, t->scratch, 2);
	wire_write_u16(&w, (uint16_t)n);
	stat_add(&t->stats->answers, 1);
	conn_send(c, t->scratch, 2 + n, more);
}

/* ---- stopping one connection ---- */

static void on_shutdown(uv_shutdown_t *req, int status)
{
	tcp_conn_t *c = req->data;
	if (!c->closing && status < 0)
		conn_close(c, NULL);
}

/* Send our FIN, then read and discard until the peer's FIN or the linger time. */
static void conn_shutdown(tcp_conn_t *c)
{
	c->shut = true;
	c->in_len = 0; /* a message begun and not received is not answered */
	if (uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->handle, on_shutdown) != 0) {
		conn_close(c, NULL);
		return;
	}
	conn_set_reading(c, true);
	uv_timer_start(&c->timer, on_conn_timer, TCP_LINGER_MS, 0);
}

/* ---- input ---- */

/*
 * The one place a connection moves on, after input arrived or a write
 * finished: answer every whole message in the buffer, in order (RFC 7766
 * 6.2.1.1: each as it completes, without waiting for earlier writes), keep a
 * partial one for the next read, then decide about reading, timers and
 * closing.
 */
static void conn_advance(tcp_conn_t *c, bool wrote)
{
	tcp_server_t *t = c->srv;
	wire_t w;
	bool message_done = false;

	if (c->shut)
		return;
	wire_init_read(&w, c->in, c->in_len);
	for (;;) {
		while (!c->closing && !conn_blocked(c) && frame_complete(&w)) {
			/* RFC 1035 4.2.2: the length prefix, then the message */
			uint16_t len = wire_read_u16(&w);
			const uint8_t *msg = wire_read_ptr(&w, len);
			conn_answer(c, msg, len, frame_complete(&w));
			message_done = true;
		}
		if (!c->closing)
			conn_flush(c);
		if (c->closing)
			return;
		/* blocked by max_pipelined, but the flush emptied the queue: go on */
		if (c->writing || !frame_complete(&w))
			break;
	}
	if (w.pos > 0) {
		memmove(c->in, c->in + w.pos, c->in_len - w.pos);
		c->in_len -= w.pos;
	}
	if (message_done) {
		active_remove(t, c);
		active_append(t, c);
	}
	if (!c->writing && !conn_has_complete_message(c)) {
		if (c->eof) {
			/* the client closed its side; all its answers are out */
			conn_close(c, NULL);
			return;
		}
		if (t->stopping && !conn_socket_has_input(c)) {
			if (c->got_input) {
				conn_shutdown(c);
				return;
			}
			/* Accepted, but its first query is not here yet: a client
			 * connects and then writes, so give it a moment rather
			 * than close a connection it is about to use. */
			if (!c->stop_grace) {
				c->stop_grace = true;
				uv_timer_start(&c->timer, on_conn_timer, TCP_STOP_GRACE_MS, 0);
			}
			conn_set_reading(c, true);
			return;
		}
	}
	conn_set_reading(c, !c->eof && !conn_blocked(c) && c->in_len < TCP_FRAME_MAX);
	conn_arm_timer(c, message_done, wrote);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	tcp_conn_t *c = h->data;
	if (c->shut) /* discarding: any space will do */
		*buf = uv_buf_init((char *)c->in, TCP_FRAME_MAX);
	else
		*buf = uv_buf_init((char *)c->in + c->in_len, (unsigned)(TCP_FRAME_MAX - c->in_len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	tcp_conn_t *c = s->data;
	if (nread == 0)
		return; /* EAGAIN */
	if (nread == UV_EOF) {
		c->reading = false; /* libuv stopped reading */
		if (c->shut) {
			conn_close(c, NULL);
			return;
		}
		/* A FIN may be a half close: the client sent its last query and
		 * still reads (RFC 793 3.5). RFC 7766 6.2.4 says not to send
		 * answers after the client closed, but a FIN does not tell the
		 * two apart, and after a full close our write only draws a RST;
		 * so the queries already read are answered, then we close. */
		c->eof = true;
		conn_advance(c, false);
		return;
	}
	if (nread < 0) {
		conn_close(c, NULL);
		return;
	}
	if (c->shut)
		return;
	stat_add(&c->srv->stats->bytes_in, (uint64_t)nread);
	c->in_len += (size_t)nread;
	c->got_input = true;
	conn_advance(c, false);
}

/* ---- accepting ---- */

static void conn_accept(tcp_listener_t *l, tcp_conn_t *c)
{
	tcp_server_t *t = l->srv;
	uv_tcp_init(t->loop, &c->handle);
	uv_timer_init(t->loop, &c->timer);
	c->handle.data = c;
	c->timer.data = c;
	c->write_req.data = c;
	c->shutdown_req.data = c;
	active_append(t, c);
	if (!c->in)
		c->in = malloc(TCP_FRAME_MAX);
	/* accept even without memory, or the listener stays paused */
	if (uv_accept((uv_stream_t *)&l->handle, (uv_stream_t *)&c->handle) != 0 || !c->in) {
		conn_close(c, NULL);
		return;
	}
	stat_add(&t->stats->accepted, 1);
	/* each answer is one write; Nagle would hold the next one back for an ACK */
	uv_tcp_nodelay(&c->handle, 1);
	conn_set_reading(c, true);
	conn_arm_timer(c, true, false);
}

/*
 * Make room for the waiting listeners: close the connection idle the longest,
 * else the least recently active one. Their slots come back in the close
 * callbacks (next loop turn), which hand them to the waiting listeners.
 */
static void server_make_room(tcp_server_t *t)
{
	while (t->closing < t->waiting) {
		tcp_conn_t *victim = NULL;
		for (tcp_conn_t *c = t->active_head; c; c = c->next)
			if (conn_idle(c)) {
				victim = c;
				break;
			}
		if (!victim)
			victim = t->active_head;
		if (!victim)
			return;
		conn_close(victim, &t->stats->closed_limit);
	}
}

static void server_serve_waiting(tcp_server_t *t)
{
	for (size_t i = 0; i < t->n_listeners && t->waiting > 0; i++) {
		tcp_listener_t *l = &t->listeners[i];
		if (!l->waiting)
			continue;
		tcp_conn_t *c = pool_take(t);
		if (!c)
			break;
		l->waiting = false;
		t->waiting--;
		conn_accept(l, c);
	}
	server_make_room(t);
}

static void on_connection(uv_stream_t *s, int status)
{
	tcp_listener_t *l = s->data;
	tcp_server_t *t = l->srv;
	if (status < 0 || t->stopping)
		return;
	tcp_conn_t *c = pool_take(t);
	if (c) {
		conn_accept(l, c);
		return;
	}
	/* Not calling uv_accept pauses this listener with the connection held;
	 * it resumes when a slot frees. */
	if (!l->waiting) {
		l->waiting = true;
		t->waiting++;
	}
	server_make_room(t);
}

/* ---- the server ---- */

static void server_free(tcp_server_t *t)
{
	if (t->conns) {
		for (size_t i = 0; i < t->lim.max_connections; i++) {
			free(t->conns[i].in);
			free(t->conns[i].out[0].data);
			free(t->conns[i].out[1].data);
		}
	}
	free(t->conns);
	free(t->listeners);
	free(t->scratch);
	free(t);
}

static void server_handle_closed(tcp_server_t *t)
{
	t->handles_open--;
	server_maybe_finish(t);
}

static void on_stop_timer_closed(uv_handle_t *h)
{
	server_handle_closed(h->data);
}

static void on_listener_closed(uv_handle_t *h)
{
	tcp_listener_t *l = h->data;
	server_handle_closed(l->srv);
}

/* When stopping: once every connection is gone, close the stop timer; once
 * every handle is closed, free and report. */
static void server_maybe_finish(tcp_server_t *t)
{
	if (!t->stopping || t->in_use > 0)
		return;
	if (!t->stop_timer_closing) {
		t->stop_timer_closing = true;
		uv_close((uv_handle_t *)&t->stop_timer, on_stop_timer_closed);
		return;
	}
	if (t->handles_open > 0)
		return;
	void (*done)(void *) = t->done;
	void *arg = t->done_arg;
	server_free(t);
	if (done)
		done(arg);
}

static int limits_check(tcp_limits_t *lim)
{
	if (lim->max_connections == 0 || lim->max_pipelined == 0 || lim->idle_timeout_ms == 0 ||
	    lim->message_timeout_ms == 0)
		return SHOAL_EINVAL;
	/* one whole answer must always fit in the queue */
	if (lim->max_output < TCP_FRAME_MAX)
		lim->max_output = TCP_FRAME_MAX;
	return 0;
}

/* A socket we can serve: a listening TCP stream socket. */
static int listener_fd_check(int fd)
{
	int type = 0, listening = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
		return SHOAL_EINVAL;
	len = sizeof(listening);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
		return SHOAL_EINVAL;
	return 0;
}

int tcp_server_start(uv_loop_t *loop, const int *fds, size_t n, const tcp_limits_t *limits,
		     tcp_answer_fn answer, void *arg, tcp_stats_t *stats, tcp_server_t **out)
{
	if (!loop || (!fds && n > 0) || !limits || !answer || !stats || !out)
		return SHOAL_EINVAL;
	tcp_limits_t lim = *limits;
	int err = limits_check(&lim);
	for (size_t i = 0; err == 0 && i < n; i++)
		err = listener_fd_check(fds[i]);
	if (err)
		return err;

	tcp_server_t *t = calloc(1, sizeof(*t));
	if (!t)
		return SHOAL_ENOMEM;
	t->loop = loop;
	t->lim = lim;
	t->answer = answer;
	t->arg = arg;
	t->stats = stats;
	t->conns = calloc(lim.max_connections, sizeof(*t->conns));
	t->listeners = calloc(n ? n : 1, sizeof(*t->listeners));
	t->scratch = malloc(TCP_FRAME_MAX);
	if (!t->conns || !t->listeners || !t->scratch) {
		server_free(t);
		return SHOAL_ENOMEM;
	}
	for (size_t i = lim.max_connections; i-- > 0;) {
		t->conns[i].srv = t;
		t->conns[i].next = t->free_list;
		t->free_list = &t->conns[i];
	}

	uv_timer_init(loop, &t->stop_timer);
	t->stop_timer.data = t;
	t->handles_open = 1;
	for (size_t i = 0; i < n; i++) {
		tcp_listener_t *l = &t->listeners[i];
		l->srv = t;
		uv_tcp_init(loop, &l->handle);
		l->handle.data = l;
		t->handles_open++;
		t->n_listeners++;
		err = uv_tcp_open(&l->handle, fds[i]);
		if (err) {
			close(fds[i]); /* libuv did not take it, so uv_close will not */
		} else {
			err = uv_listen((uv_stream_t *)&l->handle, TCP_LISTEN_BACKLOG, on_connection);
		}
		if (err) {
			fprintf(stderr, "tcp: cannot serve socket %d: %s\n", fds[i], uv_strerror(err));
			for (size_t j = i + 1; j < n; j++)
				close(fds[j]);
			break;
		}
	}
	if (err) {
		/* The handles exist, so they must close before the memory goes:
		 * a stop with no connections does exactly that. */
		tcp_server_stop(t, NULL, NULL);
		return SHOAL_ESYSTEM;
	}
	*out = t;
	return 0;
}

/* The stop took too long: close what is left, answered or not. */
static void on_stop_timer(uv_timer_t *timer)
{
	tcp_server_t *t = timer->data;
	while (t->active_head)
		conn_close(t->active_head, NULL);
}

void tcp_server_stop(tcp_server_t *t, void (*done)(void *arg), void *arg)
{
	if (!t || t->stopping)
		return;
	t->stopping = true;
	t->done = done;
	t->done_arg = arg;
	for (size_t i = 0; i < t->n_listeners; i++)
		uv_close((uv_handle_t *)&t->listeners[i].handle, on_listener_closed);
	t->waiting = 0;
	/* Connections finish what they have read, then shut down; the stop
	 * timer bounds a peer that keeps sending or never reads. */
	for (tcp_conn_t *c = t->active_head, *next; c; c = next) {
		next = c->next;
		conn_advance(c, false);
	}
	if (t->in_use > 0)
		uv_timer_start(&t->stop_timer, on_stop_timer, t->lim.message_timeout_ms, 0);
	server_maybe_finish(t);
}

size_t tcp_server_connections(const tcp_server_t *t)
{
	return t ? t->in_use - t->closing : 0;
}

int tcp_migrate_req_state(void)
{
	/* Linux 5.14+, per network namespace (ip-sysctl.rst, tcp_migrate_req) */
	int fd = open("/proc/sys/net/ipv4/tcp_migrate_req", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return SHOAL_ENOTFOUND;
	char b[8] = { 0 };
	ssize_t r = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (r <= 0)
		return SHOAL_EIO;
	return b[0] == '0' ? 0 : 1;
}
