/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's TCP sender: N queries per connection (RFC 7766 6.2.1 pipelining), connect to close.
 */
#include "config.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/wire.h"
#include "tools/flood/flood.h"

#define IN_MAX     (2 + 16384) /* answers above this are counted, not kept */
#define QUERY_ROOM (2 + 300)   /* a length prefix and a query (< 300 octets) */

enum conn_state { CONN_IDLE, CONN_CONNECTING, CONN_READING };

/*
 * One connection slot: reused for connection after connection. Queries on
 * one connection carry IDs 0..N-1, so an answer is matched by connection and
 * ID, and `seen` catches a duplicate.
 */
typedef struct tconn {
	int fd;
	enum conn_state state;
	uint64_t start_ns; /* connect() was called: latency counts from here */
	unsigned expected, got;
	uint64_t seen[4]; /* bit per query ID answered */
	size_t out_len;
	size_t in_len; /* bytes buffered in `in` */
	size_t skip;   /* bytes still to discard of an oversize answer */
	uint8_t *out;  /* pipeline * QUERY_ROOM octets */
	uint8_t in[IN_MAX];
} tconn_t;

typedef struct tworker {
	flood_thread_t *t;
	const flood_opts_t *o;
	tconn_t *conns;
	unsigned nconns;
	size_t next_query;
	uint64_t timeout_ns;
	unsigned active;
	int epfd;
	struct epoll_event *events;
} tworker_t;

static void conn_close(tworker_t *w, tconn_t *c, bool count_lost)
{
	if (count_lost && c->got < c->expected)
		flood_add(&w->t->stats.lost, c->expected - c->got);
	if (c->fd >= 0)
		close(c->fd); /* the epoll registration goes with the descriptor */
	c->fd = -1;
	c->state = CONN_IDLE;
	w->active--;
}

/* Length-prefixed queries (RFC 1035 4.2.2), IDs 0..n-1, written into c->out. */
static void fill_queries(tworker_t *w, tconn_t *c, unsigned n)
{
	const flood_queries_t *qs = w->t->queries;
	size_t pos = 0;
	for (unsigned i = 0; i < n; i++) {
		const flood_query_t *q = &qs->q[w->next_query];
		if (++w->next_query == qs->count)
			w->next_query = 0;
		c->out[pos] = (uint8_t)(q->len >> 8);
		c->out[pos + 1] = (uint8_t)q->len;
		memcpy(c->out + pos + 2, q->pkt, q->len);
		c->out[pos + 2] = (uint8_t)(i >> 8);
		c->out[pos + 3] = (uint8_t)i;
		pos += 2u + q->len;
	}
	c->out_len = pos;
	c->expected = n;
	c->got = 0;
	memset(c->seen, 0, sizeof(c->seen));
	c->in_len = 0;
	c->skip = 0;
}

/* Open one connection carrying n queries; returns n when it is under way, else 0. */
static unsigned conn_open(tworker_t *w, tconn_t *c, unsigned n, uint64_t now)
{
	const flood_opts_t *o = w->o;
	c->fd = socket(o->server.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto done;
	int one = 1;
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)&o->server, o->server_len) < 0 &&
	    errno != EINPROGRESS)
		goto done;
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		goto done;
	fill_queries(w, c, n);
	c->state = CONN_CONNECTING;
	c->start_ns = now;
	w->active++;
	return n;
done:
	if (errno == ECONNREFUSED)
		flood_add(&w->t->stats.refused_icmp, 1);
	else
		flood_add(&w->t->stats.send_errors, 1);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	return 0;
}

/* Connected: send every query in one write (they fit the socket buffer). */
static void conn_write(tworker_t *w, tconn_t *c)
{
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
		flood_add(err == ECONNREFUSED ? &w->t->stats.refused_icmp
					      : &w->t->stats.send_errors,
			  1);
		c->expected = 0; /* nothing was sent: nothing is lost */
		conn_close(w, c, false);
		return;
	}
	ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
	if (n != (ssize_t)c->out_len) {
		flood_add(&w->t->stats.send_errors, 1);
		c->expected = 0;
		conn_close(w, c, false);
		return;
	}
	flood_add(&w->t->stats.sent, c->expected);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	(void)epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	c->state = CONN_READING;
}

static void conn_answer(tworker_t *w, tconn_t *c, const uint8_t *msg, size_t len, uint64_t now)
{
	flood_answer_t a;
	if (flood_answer_parse(&a, msg, len, w->o->nsid) < 0 || a.id >= c->expected ||
	    (c->seen[a.id / 64] >> (a.id % 64) & 1)) {
		flood_add(&w->t->stats.unexpected, 1);
		return;
	}
	c->seen[a.id / 64] |= (uint64_t)1 << (a.id % 64);
	c->got++;
	flood_count_answer(w->t, &a, now - c->start_ns, now);
}

/* Read what arrived, split it into length-prefixed answers; close when all are in. */
static void conn_read(tworker_t *w, tconn_t *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->in_len, IN_MAX - c->in_len, MSG_DONTWAIT);
		if (n <= 0) {
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return;
			conn_close(w, c, true); /* closed or reset before every answer came */
			return;
		}
		uint64_t now = flood_now_ns();
		size_t have = c->in_len + (size_t)n, pos = 0;
		if (c->skip) { /* the tail of an answer too big to keep */
			size_t k = c->skip < have ? c->skip : have;
			c->skip -= k;
			pos = k;
		}
		while (have - pos >= 2) {
			size_t mlen = wire_get_u16(c->in + pos);
			if (have - pos >= 2 + mlen) {
				conn_answer(w, c, c->in + pos + 2, mlen, now);
				pos += 2 + mlen;
			} else if (pos == 0 && have == IN_MAX) {
				/* Bigger than the buffer: the header is all we read. */
				conn_answer(w, c, c->in + 2, have - 2, now);
				c->skip = 2 + mlen - have;
				pos = have;
			} else {
				break;
			}
		}
		memmove(c->in, c->in + pos, have - pos);
		c->in_len = have - pos;
		if (c->got == c->expected) {
			conn_close(w, c, false);
			return;
		}
	}
}

static int setup(tworker_t *w, flood_thread_t *t)
{
	memset(w, 0, sizeof(*w));
	w->t = t;
	w->o = t->opts;
	w->nconns = w->o->sockets;
	w->timeout_ns = (uint64_t)(w->o->timeout * 1e9);
	w->next_query = t->queries->count * t->index / w->o->threads;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		return -errno;
	w->conns = calloc(w->nconns, sizeof(*w->conns));
	w->events = calloc(w->nconns, sizeof(*w->events));
	if (!w->conns || !w->events)
		return -ENOMEM;
	for (unsigned i = 0; i < w->nconns; i++) {
		w->conns[i].fd = -1;
		w->conns[i].out = malloc((size_t)w->o->tcp_pipeline * QUERY_ROOM);
		if (!w->conns[i].out)
			return -ENOMEM;
	}
	return 0;
}

static void run(tworker_t *w)
{
	flood_thread_t *t = w->t;
	unsigned per_conn = w->o->tcp_pipeline;
	uint64_t sent = 0, drain_end = 0;
	bool sending = true;
	unsigned rr = 0;
	for (;;) {
		uint64_t now = flood_now_ns();
		if (sending && !flood_keep_sending(t, sent, now)) {
			sending = false;
			drain_end = now + w->timeout_ns;
		}
		uint64_t wait_ns = 10000000u; /* timeouts are checked at least this often */
		if (sending) {
			uint64_t budget = flood_budget(t, sent, now, &wait_ns);
			for (unsigned k = 0; k < w->nconns && budget > 0; k++) {
				tconn_t *c = &w->conns[rr];
				rr = rr + 1 == w->nconns ? 0 : rr + 1;
				if (c->state != CONN_IDLE)
					continue;
				uint64_t n =
					t->count - sent < per_conn ? t->count - sent : per_conn;
				unsigned opened = conn_open(w, c, (unsigned)n, now);
				if (!opened)
					break;
				sent += opened;
				budget = budget > opened ? budget - opened : 0;
			}
		} else if (w->active == 0 || now >= drain_end) {
			break;
		}
		struct timespec ts = flood_timespec(wait_ns);
		int n = epoll_pwait2(w->epfd, w->events, (int)w->nconns, &ts, NULL);
		for (int i = 0; i < n; i++) {
			tconn_t *c = w->events[i].data.ptr;
			if (c->state == CONN_CONNECTING)
				conn_write(w, c);
			else if (c->state == CONN_READING)
				conn_read(w, c);
		}
		now = flood_now_ns();
		for (unsigned i = 0; i < w->nconns; i++) {
			tconn_t *c = &w->conns[i];
			if (c->state != CONN_IDLE && now - c->start_ns >= w->timeout_ns)
				conn_close(w, c, c->state == CONN_READING);
		}
	}
	for (unsigned i = 0; i < w->nconns; i++)
		if (w->conns[i].state != CONN_IDLE)
			conn_close(w, &w->conns[i], w->conns[i].state == CONN_READING);
}

void *flood_tcp_thread(void *arg)
{
	flood_thread_t *t = arg;
	tworker_t w;
	t->error = setup(&w, t);
	if (flood_thread_ready(t) == 0)
		run(&w);
	if (w.epfd >= 0)
		close(w.epfd);
	for (unsigned i = 0; w.conns && i < w.nconns; i++)
		free(w.conns[i].out);
	free(w.conns);
	free(w.events);
	return NULL;
}
