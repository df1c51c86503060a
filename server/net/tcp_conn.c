/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One DNS-over-TCP connection: RFC 7766 framing, answers, the output queue, timeouts, shutdown;
 * TCP's octets through libuv's stream. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/wire.h"
#include "server/net/internal.h"

/* ---- closing ---- */

void tcp_conn_handle_closed(uv_handle_t *h)
{
	tcp_conn_t *c = h->data;
	assert(c->closes_pending > 0); /* one per handle tcp_conn_close closed */
	if (--c->closes_pending == 0)
		tcp_pool_release(c);
}

/* The stream is over, complete or not: let it go. */
static void conn_stream_end(tcp_conn_t *c, bool complete)
{
	tcp_stream_t *s = c->stream;
	c->stream = NULL;
	tcp_waiting_remove(c->srv, c);
	if (s)
		s->end(s, complete);
}

void tcp_conn_close(tcp_conn_t *c, uint64_t *counter)
{
	if (c->closing)
		return;
	tcp_server_t *t = c->srv;
	c->closing = true;
	conn_stream_end(c, false);
	tcp_active_remove(t, c);
	t->closing++;
	if (counter)
		stats_add(counter, 1);
	/* the timer's close and the I/O handle's, when it was made */
	c->closes_pending = c->io_open ? 2 : 1;
	if (c->io_open)
		t->io->close(c);
	uv_close((uv_handle_t *)&c->timer, tcp_conn_handle_closed);
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
	return c->stream || c->out[0].answers + c->out[1].answers >= c->srv->lim.max_pipelined;
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

/* The best one to close for room. */
bool tcp_conn_idle(const tcp_conn_t *c)
{
	return c->shut || (c->in_len == 0 && !c->writing);
}

static void conn_set_reading(tcp_conn_t *c, bool want)
{
	if (want != c->reading)
		c->srv->io->set_reading(c, want);
}

/* ---- timers ---- */

static void on_conn_timer(uv_timer_t *timer)
{
	tcp_conn_t *c = timer->data;
	tcp_stats_t *st = c->srv->stats;
	if (c->shut)
		tcp_conn_close(c, NULL);
	else if (c->in_len > 0 || c->writing)
		/* a message not whole in time, or answers the peer does not read */
		tcp_conn_close(c, &st->closed_slow);
	else
		tcp_conn_close(c, &st->closed_idle);
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
	if (c->stream_waiting) {
		/* the next message is made on another thread, which rings the loop: no timeout
		 * meanwhile (a query is outstanding, RFC 7766 6.2.3), and no polling */
		uv_timer_stop(&c->timer);
		c->timing_message = false;
		return;
	}
	/* behind a stream, queries wait for it: the idle timeout, moved by each write */
	if (c->in_len > 0 && !c->stream) {
		if (message_done || !c->timing_message) {
			uv_timer_start(&c->timer, on_conn_timer, lim->message_timeout_ms, 0);
			c->timing_message = true;
		}
	} else if (message_done || wrote || c->timing_message ||
		   !uv_is_active((uv_handle_t *)&c->timer)) {
		/* (not running: the stream it waited on just ended without a message) */
		uv_timer_start(&c->timer, on_conn_timer, lim->idle_timeout_ms, 0);
		c->timing_message = false;
	}
}

/* ---- output ---- */

/* Move the collecting buffer into flight. */
static void conn_start_write(tcp_conn_t *c)
{
	assert(!c->writing); /* one write_req: one write in flight */
	c->flight ^= 1;
	tcp_outbuf_t *o = &c->out[c->flight];
	if (c->srv->io->write(c, o->data, o->len) != 0) {
		tcp_conn_close(c, NULL);
		return;
	}
	c->writing = true;
}

void tcp_conn_written(tcp_conn_t *c, int status)
{
	assert(c->writing);
	c->writing = false;
	if (c->closing)
		return; /* cancelled by conn_close; the slot is reset on release */
	if (status < 0) {
		tcp_conn_close(c, NULL);
		return;
	}
	tcp_outbuf_t *o = &c->out[c->flight];
	stats_add(&c->srv->stats->bytes_out, o->len);
	o->len = 0;
	o->answers = 0;
	if (c->out[c->flight ^ 1].len > 0)
		conn_start_write(c);
	if (!c->closing)
		tcp_conn_advance(c, true);
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
	ssize_t r = c->srv->io->try_write(c, p, len);
	if (r < 0) {
		tcp_conn_close(c, NULL);
		return r;
	}
	stats_add(&c->srv->stats->bytes_out, (uint64_t)r);
	return r;
}

/* Append one answer (or its unsent tail) to the collecting buffer, within max_output. */
static void conn_append(tcp_conn_t *c, const uint8_t *p, size_t len)
{
	tcp_server_t *t = c->srv;
	if (conn_queued_bytes(c) + len > t->lim.max_output) {
		tcp_conn_close(c, &t->stats->closed_slow);
		return;
	}
	tcp_outbuf_t *o = &c->out[c->flight ^ 1];
	if (outbuf_reserve(o, len, t->lim.max_output) != 0) {
		tcp_conn_close(c, NULL);
		return;
	}
	assert(o->len + len <= o->cap);
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
	stats_add(&t->stats->queries, 1);
	int special = TCP_SPECIAL_PASS;
	if (t->special)
		special = t->special(t->arg, &c->client, msg, len, t->scratch + 2, TCP_MSG_MAX,
				     &c->stream);
	size_t n = special != TCP_SPECIAL_PASS
			   ? (special < 0 ? 0 : (size_t)special)
			   : t->answer(t->arg, (const struct sockaddr *)&c->peer, msg, len,
				       t->scratch + 2, TCP_MSG_MAX);
	if (n == 0 || n > TCP_MSG_MAX)
		return;
	wire_t w;
	wire_init_write(&w, t->scratch, 2);
	wire_write_u16(&w, (uint16_t)n);
	stats_add(&t->stats->answers, 1);
	conn_send(c, t->scratch, 2 + n, more);
}

/*
 * With nothing queued or in flight, have the stream write its next
 * message straight into the collecting buffer and hand it to uv_write,
 * whose callback comes on a later turn of the loop: one message per turn,
 * and the next only once the socket took this one.
 */
static void conn_stream_pump(tcp_conn_t *c)
{
	if (!c->stream || c->writing || conn_queued_bytes(c) > 0)
		return;
	tcp_outbuf_t *o = &c->out[c->flight ^ 1];
	if (outbuf_reserve(o, TCP_FRAME_MAX, c->srv->lim.max_output) != 0) {
		tcp_conn_close(c, NULL);
		return;
	}
	assert(o->cap >= TCP_FRAME_MAX); /* max_output is never below a frame (conf) */
	int n = c->stream->next(c->stream, o->data + 2, TCP_MSG_MAX);
	if (n == TCP_STREAM_WAIT) {
		tcp_waiting_append(c->srv, c);
		return;
	}
	tcp_waiting_remove(c->srv, c);
	if (n <= 0 || n > (int)TCP_MSG_MAX) {
		if (n == 0) {
			/* an answer of many messages (a zone transfer), sent whole: one answer */
			stats_add(&c->srv->stats->answers, 1);
			conn_stream_end(c, true);
		} else {
			tcp_conn_close(c, NULL);
		}
		return;
	}
	wire_t w;
	wire_init_write(&w, o->data, 2);
	wire_write_u16(&w, (uint16_t)n);
	o->len = 2 + (size_t)n;
	o->answers = 1;
	conn_start_write(c);
}

/* ---- stopping one connection ---- */

void tcp_conn_shutdown_done(tcp_conn_t *c, int status)
{
	if (!c->closing && status < 0)
		tcp_conn_close(c, NULL);
}

/* Send our FIN, then read and discard until the peer's FIN or the linger time. */
static void conn_shutdown(tcp_conn_t *c)
{
	c->shut = true;
	c->in_len = 0; /* a message begun and not received is not answered */
	if (c->srv->io->shutdown(c) != 0) {
		tcp_conn_close(c, NULL);
		return;
	}
	conn_set_reading(c, true);
	uv_timer_start(&c->timer, on_conn_timer, TCP_LINGER_MS, 0);
}

/* ---- buffers ---- */

/*
 * The input holds the start of a message longer than the buffer: grow it to
 * the whole message (RFC 1035 4.2.2: the two-octet length says how long).
 * Returns false when there is no memory for it.
 */
static bool conn_input_fits(tcp_conn_t *c)
{
	if (c->in_len < 2)
		return true;
	size_t need = 2u + wire_get_u16(c->in);
	if (need <= c->in_cap)
		return true;
	uint8_t *p = realloc(c->in, need);
	if (!p)
		return false;
	c->in = p;
	c->in_cap = need;
	return true;
}

void tcp_conn_trim(tcp_conn_t *c)
{
	for (int i = 0; i < 2; i++) {
		tcp_outbuf_t *o = &c->out[i];
		if (o->cap > TCP_BUF_KEEP && o->len == 0) {
			free(o->data);
			o->data = NULL;
			o->cap = 0;
		}
	}
	if (c->in_cap > TCP_BUF_KEEP && c->in_len == 0) {
		uint8_t *p = realloc(c->in, TCP_BUF_KEEP);
		if (p) {
			c->in = p;
			c->in_cap = TCP_BUF_KEEP;
		}
	}
}

/* ---- input ---- */

/*
 * The one place a connection moves on, after input arrived or a write
 * finished: answer every whole message in the buffer, in order (RFC 7766
 * 6.2.1.1: each as it completes, without waiting for earlier writes), keep a
 * partial one for the next read, then decide about reading, timers and
 * closing.
 */
void tcp_conn_advance(tcp_conn_t *c, bool wrote)
{
	tcp_server_t *t = c->srv;
	wire_t w;
	bool message_done = false;

	if (c->shut)
		return;
	if (t->stopping)
		conn_stream_end(c, false); /* a transfer cut short is of no use: none more */
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
		if (!c->closing)
			conn_stream_pump(c);
		if (c->closing)
			return;
		/* blocked by max_pipelined (or a stream that ended), but the queue is empty: go on
		 */
		if (c->writing || c->stream || !frame_complete(&w))
			break;
	}
	if (w.pos > 0) {
		memmove(c->in, c->in + w.pos, c->in_len - w.pos);
		c->in_len -= w.pos;
	}
	if (!conn_input_fits(c)) {
		tcp_conn_close(c, NULL);
		return;
	}
	if (message_done) {
		tcp_active_remove(t, c);
		tcp_active_append(t, c);
	}
	if (!c->writing && !conn_has_complete_message(c)) {
		if (c->eof) {
			/* the client closed its side; all its answers are out */
			tcp_conn_close(c, NULL);
			return;
		}
		if (t->stopping && !t->io->has_input(c)) {
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
	conn_set_reading(c, !c->eof && !conn_blocked(c) && c->in_len < c->in_cap);
	conn_arm_timer(c, message_done, wrote);
	if (c->in_len == 0 && !c->writing && conn_queued_bytes(c) == 0)
		tcp_conn_trim(c); /* idle: no burst's buffers held while it waits */
}

void tcp_conn_received(tcp_conn_t *c, ssize_t nread)
{
	if (nread == 0)
		return; /* EAGAIN */
	if (nread == UV_EOF) {
		c->reading = false; /* libuv stopped reading */
		if (c->shut) {
			tcp_conn_close(c, NULL);
			return;
		}
		/* A FIN may be a half close: the client sent its last query and
		 * still reads (RFC 793 3.5). RFC 7766 6.2.4 says not to send
		 * answers after the client closed, but a FIN does not tell the
		 * two apart, and after a full close our write only draws a RST;
		 * so the queries already read are answered, then we close. */
		c->eof = true;
		tcp_conn_advance(c, false);
		return;
	}
	if (nread < 0) {
		tcp_conn_close(c, NULL);
		return;
	}
	if (c->shut)
		return;
	stats_add(&c->srv->stats->bytes_in, (uint64_t)nread);
	c->in_len += (size_t)nread;
	assert(c->in_len <= c->in_cap); /* on_alloc offered what was left */
	c->got_input = true;
	tcp_conn_advance(c, false);
}

/* ---- opening ---- */

void tcp_conn_open(tcp_conn_t *c)
{
	c->opened = true;
	if (c->srv->stopping) {
		/* a TLS handshake that ended during the stop: its first queries get the grace */
		tcp_conn_advance(c, false);
		return;
	}
	conn_set_reading(c, true);
	conn_arm_timer(c, true, false);
}

/* ---- TCP's octets: libuv's stream ---- */

static void tcp_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	tcp_conn_t *c = h->data;
	(void)suggested;
	if (c->shut) /* discarding: any space will do */
		*buf = uv_buf_init((char *)c->in, (unsigned)c->in_cap);
	else
		*buf = uv_buf_init((char *)c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
}

static void tcp_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	(void)buf; /* tcp_on_alloc's: inside c->in */
	tcp_conn_received(s->data, nread);
}

static void tcp_on_write(uv_write_t *req, int status)
{
	tcp_conn_written(req->data, status);
}

static void tcp_on_shutdown(uv_shutdown_t *req, int status)
{
	tcp_conn_shutdown_done(req->data, status);
}

static void tcp_open(tcp_conn_t *c, int fd)
{
	uv_tcp_init(c->srv->loop, &c->handle.tcp);
	c->io_open = true;
	c->handle.any.data = c;
	if (uv_tcp_open(&c->handle.tcp, fd) != 0) {
		close(fd); /* the handle did not take it, so uv_close will not */
		tcp_conn_close(c, NULL);
		return;
	}
	/* each answer is one write; Nagle would hold the next one back for an ACK */
	uv_tcp_nodelay(&c->handle.tcp, 1);
	tcp_conn_open(c);
}

static void tcp_set_reading(tcp_conn_t *c, bool want)
{
	uv_stream_t *s = (uv_stream_t *)&c->handle.tcp;
	if (!want) {
		uv_read_stop(s);
		c->reading = false;
	} else if (uv_read_start(s, tcp_on_alloc, tcp_on_read) == 0) {
		c->reading = true;
	}
}

static int tcp_write(tcp_conn_t *c, const uint8_t *p, size_t len)
{
	uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);
	return uv_write(&c->write_req, (uv_stream_t *)&c->handle.tcp, &b, 1, tcp_on_write);
}

static ssize_t tcp_try_write(tcp_conn_t *c, const uint8_t *p, size_t len)
{
	uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);
	int r = uv_try_write((uv_stream_t *)&c->handle.tcp, &b, 1);
	return r == UV_EAGAIN ? 0 : r;
}

static int tcp_shutdown(tcp_conn_t *c)
{
	return uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->handle.tcp, tcp_on_shutdown);
}

/* True when the kernel holds input we have not read (used only when stopping). */
static bool tcp_has_input(tcp_conn_t *c)
{
	uv_os_fd_t fd;
	uint8_t b;
	if (uv_fileno(&c->handle.any, &fd) != 0)
		return false;
	return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static void tcp_close(tcp_conn_t *c)
{
	uv_close(&c->handle.any, tcp_conn_handle_closed);
}

const tcp_io_t tcp_io_tcp = {
	.open = tcp_open,
	.set_reading = tcp_set_reading,
	.write = tcp_write,
	.try_write = tcp_try_write,
	.shutdown = tcp_shutdown,
	.has_input = tcp_has_input,
	.close = tcp_close,
};
