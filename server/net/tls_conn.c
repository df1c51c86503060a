/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A DNS-over-TLS connection's octets: its handshake and its bounds, records on the socket watched
 * by uv_poll, close_notify. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/addr.h"
#include "server/common/log.h"
#include "server/net/internal.h"

/*
 * Reads of one wake-up at most (as libuv reads a TCP stream 32 times),
 * unless decrypted octets wait, which no socket event would announce.
 */
#define TLS_READS_PER_WAKE 32

/* Handshake failures logged a second at most per worker: any client can make them. */
#define TLS_LOG_PER_S 5

static void on_poll(uv_poll_t *h, int status, int events);

/* ---- the handshakes under way, the oldest first ---- */

static void hs_add(tcp_server_t *t, tcp_conn_t *c)
{
	c->tls.hs_next = NULL;
	c->tls.hs_prev = t->hs_tail;
	if (t->hs_tail)
		t->hs_tail->tls.hs_next = c;
	else
		t->hs_head = c;
	t->hs_tail = c;
	t->handshakes++;
	c->tls.handshaking = true;
}

static void hs_remove(tcp_server_t *t, tcp_conn_t *c)
{
	if (!c->tls.handshaking)
		return;
	if (c->tls.hs_prev)
		c->tls.hs_prev->tls.hs_next = c->tls.hs_next;
	else
		t->hs_head = c->tls.hs_next;
	if (c->tls.hs_next)
		c->tls.hs_next->tls.hs_prev = c->tls.hs_prev;
	else
		t->hs_tail = c->tls.hs_prev;
	c->tls.hs_prev = c->tls.hs_next = NULL;
	assert(t->handshakes > 0);
	t->handshakes--;
	c->tls.handshaking = false;
}

/* ---- the poll ---- */

/* Watch what the connection waits for now; the poll is changed only when that changes. */
static void tls_watch(tcp_conn_t *c)
{
	tls_conn_t *x = &c->tls;
	int ev = 0;
	if (x->handshaking) {
		ev = tls_wants_write(x->session) ? UV_WRITABLE : UV_READABLE;
	} else {
		if (c->reading)
			ev |= UV_READABLE;
		if (x->writing || x->shutting || x->recv_blocked)
			ev |= UV_WRITABLE;
	}
	if (ev == x->events)
		return;
	x->events = ev;
	if (ev)
		uv_poll_start(&c->handle.poll, ev, on_poll);
	else
		uv_poll_stop(&c->handle.poll);
}

/* ---- the handshake ---- */

static void on_handshake_timeout(uv_timer_t *timer)
{
	tcp_conn_t *c = timer->data;
	tcp_conn_close(c, &c->srv->tls_stats->handshake_timeouts);
}

/* The handshake failed (err): counted, said (within a limit), closed. */
static void handshake_failed(tcp_conn_t *c, int err)
{
	char peer[ADDR_TEXT_MAX];
	addr_text((const struct sockaddr *)&c->peer, peer, sizeof(peer));
	/* tls_error starts "handshake: ..."; a socket's error says so too */
	log_limited(&c->srv->tls_log, TLS_LOG_PER_S, LOG_LEVEL_INFO, "TLS from %s: %s%s", peer,
		    err == SHOAL_ETLS && c->tls.session ? "" : "handshake: ",
		    err == SHOAL_ETLS && c->tls.session ? tls_error(c->tls.session)
							: shoal_strerror(err));
	tcp_conn_close(c, &c->srv->tls_stats->handshake_failed);
}

/*
 * Done: what the client showed is kept for provide-xfr (RFC 9103 9.3.3:
 * its certificate, whose key the handshake proved it holds), and the
 * connection is served as a TCP one is.
 */
static void handshake_done(tcp_conn_t *c)
{
	tls_stats_t *st = c->srv->tls_stats;
	tls_session_t *s = c->tls.session;
	stats_add(&st->handshakes, 1);
	if (tls_resumed(s))
		stats_add(&st->resumed, 1);
	c->client.tls = true;
	c->client.cert = tls_peer_pin(s, c->client.pin);
	c->client.ca = c->client.cert && tls_peer_ca_verified(s);
	tcp_conn_open(c); /* the idle timer replaces the handshake's */
}

static void handshake_step(tcp_conn_t *c)
{
	int rc = tls_handshake(c->tls.session);
	if (rc == -EAGAIN)
		return;
	hs_remove(c->srv, c);
	if (rc < 0)
		handshake_failed(c, rc);
	else
		handshake_done(c);
}

/* ---- records ---- */

/* The write under way, as far as the socket takes it; its end to the connection. */
static void write_step(tcp_conn_t *c)
{
	tls_conn_t *x = &c->tls;
	int rc = 0;
	for (;;) {
		if (tls_unflushed(x->session) && (rc = tls_flush(x->session)) < 0)
			break;
		if (x->out_done == x->out_len)
			break;
		ssize_t n = tls_send(x->session, x->out + x->out_done, x->out_len - x->out_done);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		x->out_done += (size_t)n;
	}
	if (rc == -EAGAIN)
		return;
	x->writing = false;
	tcp_conn_written(c, rc);
}

/* close_notify after what was written, then our FIN (RFC 8446 6.1). */
static void shutdown_step(tcp_conn_t *c)
{
	tls_conn_t *x = &c->tls;
	if (x->writing)
		return;
	int rc = tls_flush(x->session);
	if (rc == 0)
		rc = tls_bye(x->session);
	if (rc == -EAGAIN)
		return;
	x->shutting = false;
	if (rc == 0 && shutdown(x->fd, SHUT_WR) < 0)
		rc = -errno;
	if (rc < 0)
		tcp_conn_shutdown_done(c, rc);
}

/* Read while the connection reads: decrypted into c->in, as TCP's reads come. */
static void read_step(tcp_conn_t *c)
{
	tls_conn_t *x = &c->tls;
	x->recv_blocked = false;
	for (int k = 0; c->reading && !c->closing; k++) {
		if (k >= TLS_READS_PER_WAKE && !tls_pending(x->session))
			break; /* what is on the socket wakes the poll again */
		uint8_t *buf = c->shut ? c->in : c->in + c->in_len;
		size_t room = c->shut ? c->in_cap : c->in_cap - c->in_len;
		if (room == 0)
			break;
		ssize_t n = tls_recv(x->session, buf, room);
		if (n == -EAGAIN) {
			/* a record the peer asked for (a key update) waits to be written */
			x->recv_blocked = tls_wants_write(x->session);
			break;
		}
		tcp_conn_received(c, n == 0 ? UV_EOF : n);
	}
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	tcp_conn_t *c = h->data;
	(void)events; /* each step tries, and the session says when it must wait */
	if (status < 0 && c->tls.handshaking) {
		/* a reset (libuv says EBADF for any POLLERR): a client that gave up is one */
		int err = 0;
		socklen_t len = sizeof(err);
		if (getsockopt(c->tls.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || !err)
			err = ECONNRESET;
		hs_remove(c->srv, c);
		handshake_failed(c, -err);
		return;
	}
	if (status < 0) {
		tcp_conn_close(c, NULL);
		return;
	}
	if (c->tls.handshaking)
		handshake_step(c);
	if (!c->closing && c->tls.writing)
		write_step(c);
	if (!c->closing && c->tls.shutting)
		shutdown_step(c);
	if (!c->closing && !c->tls.handshaking)
		read_step(c);
	if (!c->closing)
		tls_watch(c);
}

/* ---- the table ---- */

static void tls_open(tcp_conn_t *c, int fd)
{
	tcp_server_t *t = c->srv;
	c->tls = (tls_conn_t){ .fd = fd };
	int one = 1;
	/* each answer is a record; Nagle would hold the next one back for an ACK */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (uv_poll_init_socket(t->loop, &c->handle.poll, fd) < 0) {
		close(fd);
		tcp_conn_close(c, NULL);
		return;
	}
	c->io_open = true;
	c->handle.any.data = c;
	int rc = tls_session_server(t->tls, fd, &c->tls.session);
	if (rc < 0) {
		handshake_failed(c, rc);
		return;
	}
	/* a flood of clients that never finish: the one begun first gives way */
	if (t->handshakes >= t->lim.max_handshakes)
		tcp_conn_close(t->hs_head, &t->tls_stats->handshakes_evicted);
	hs_add(t, c);
	uv_timer_start(&c->timer, on_handshake_timeout, t->lim.handshake_timeout_ms, 0);
	tls_watch(c);
}

static void tls_set_reading(tcp_conn_t *c, bool want)
{
	c->reading = want;
	tls_watch(c);
}

static int tls_write(tcp_conn_t *c, const uint8_t *p, size_t len)
{
	tls_conn_t *x = &c->tls;
	assert(!x->writing && x->head_taken <= len);
	x->out = p;
	x->out_len = len;
	/* what a try_write left in the session is this write's start */
	x->out_done = x->head_taken;
	x->head_taken = 0;
	x->writing = true;
	/* the end comes on a later turn, as libuv's: when the socket takes the records */
	tls_watch(c);
	return 0;
}

static ssize_t tls_try_write(tcp_conn_t *c, const uint8_t *p, size_t len)
{
	tls_conn_t *x = &c->tls;
	assert(!x->writing && !x->head_taken);
	int rc = tls_flush(x->session);
	if (rc < 0)
		return rc == -EAGAIN ? 0 : rc;
	size_t done = 0;
	while (done < len) {
		ssize_t n = tls_send(x->session, p + done, len - done);
		if (n < 0)
			return n;
		if (tls_unflushed(x->session)) {
			/* held by the session: the write that follows starts with it */
			x->head_taken = (size_t)n;
			break;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int tls_shutdown_start(tcp_conn_t *c)
{
	c->tls.shutting = true;
	tls_watch(c);
	return 0;
}

static bool tls_has_input(tcp_conn_t *c)
{
	uint8_t b;
	return tls_pending(c->tls.session) > 0 ||
	       recv(c->tls.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static void tls_close(tcp_conn_t *c)
{
	tls_conn_t *x = &c->tls;
	hs_remove(c->srv, c);
	/* uv_close takes the socket out of epoll at once, so it may close now */
	uv_close(&c->handle.any, tcp_conn_handle_closed);
	close(x->fd);
	tls_session_free(x->session);
	*x = (tls_conn_t){ .fd = -1 };
}

const tcp_io_t tcp_io_tls = {
	.open = tls_open,
	.set_reading = tls_set_reading,
	.write = tls_write,
	.try_write = tls_try_write,
	.shutdown = tls_shutdown_start,
	.has_input = tls_has_input,
	.close = tls_close,
};
