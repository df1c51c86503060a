/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's UDP sender: connected sockets, sendmmsg/recvmmsg batches, paced sends, timeouts. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "tools/flood/flood.h"

/* One outstanding query: when it left and the ID it carries. */
typedef struct slot {
	uint64_t sent_ns;
	uint16_t id;
	bool busy;
} slot_t;

/*
 * One client socket: its own 4-tuple (so the server's SO_REUSEPORT hash sees
 * a distinct client), and a table of outstanding queries indexed by the low
 * bits of the query ID, so an answer is matched in O(1) by socket and ID.
 * The high ID bits are a per-socket sequence, so a late answer to a slot's
 * previous query is told apart from the current one.
 */
typedef struct usock {
	int fd;
	unsigned id_bits; /* log2 of the table size */
	uint32_t nfree;
	uint32_t *free; /* stack of free slot indexes */
	slot_t *slots;
	uint16_t seq;
	int nsid_thread; /* server thread of the first answer, or -1 */
	bool nsid_mixed; /* answers came from more than one server thread */
} usock_t;

/* Everything one thread needs, allocated once before the first send. */
typedef struct uworker {
	flood_thread_t *t;
	const flood_opts_t *o;
	usock_t *socks;
	unsigned nsocks;
	unsigned rr; /* next socket to send on */
	size_t next_query;
	uint64_t inflight;
	uint64_t timeout_ns;
	bool refill;          /* unpaced: refill a socket as soon as it is read */
	uint64_t refill_left; /* queries left to send this loop */
	int epfd;
	struct mmsghdr *smsg, *rmsg;
	struct iovec *siov, *riov;
	uint8_t (*sid)[2];
	uint8_t *rbuf;
	size_t rbuf_size;
	struct epoll_event *events;
} uworker_t;

static void release(usock_t *s, uint32_t slot)
{
	s->slots[slot].busy = false;
	s->free[s->nfree++] = slot;
}

static int open_socket(uworker_t *w, usock_t *s, unsigned limit)
{
	const flood_opts_t *o = w->o;
	s->fd = socket(o->server.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	/* Room for a whole window of answers; the kernel caps it at rmem_max. */
	int rcvbuf = 1 << 20;
	(void)setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* connect(): the kernel picks the source port, filters other senders, and
	 * sendmmsg needs no address per message. */
	if (connect(s->fd, (const struct sockaddr *)&o->server, o->server_len) < 0)
		return -errno;
	unsigned bits = 0;
	while ((1u << bits) < limit)
		bits++;
	s->id_bits = bits;
	s->slots = calloc((size_t)1 << bits, sizeof(*s->slots));
	s->free = calloc(limit, sizeof(*s->free));
	if (!s->slots || !s->free)
		return -ENOMEM;
	for (uint32_t i = 0; i < limit; i++)
		s->free[i] = limit - 1 - i;
	s->nfree = limit;
	s->seq = (uint16_t)random();
	s->nsid_thread = -1;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0)
		return -errno;
	return 0;
}

static int setup(uworker_t *w, flood_thread_t *t)
{
	const flood_opts_t *o = t->opts;
	memset(w, 0, sizeof(*w));
	w->epfd = -1;
	w->t = t;
	w->o = o;
	w->nsocks = o->sockets;
	w->timeout_ns = (uint64_t)(o->timeout * 1e9);
	w->next_query = t->queries->count * t->index / (o->threads ? o->threads : 1);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		return -errno;
	unsigned b = o->batch;
	w->rbuf_size = o->edns > 4096 ? o->edns : 4096;
	w->socks = calloc(w->nsocks, sizeof(*w->socks));
	w->smsg = calloc(b, sizeof(*w->smsg));
	w->rmsg = calloc(b, sizeof(*w->rmsg));
	w->siov = calloc(2 * (size_t)b, sizeof(*w->siov));
	w->riov = calloc(b, sizeof(*w->riov));
	w->sid = calloc(b, sizeof(*w->sid));
	w->rbuf = malloc(b * w->rbuf_size);
	w->events = calloc(w->nsocks, sizeof(*w->events));
	if (!w->socks || !w->smsg || !w->rmsg || !w->siov || !w->riov || !w->sid || !w->rbuf ||
	    !w->events)
		return -ENOMEM;
	for (unsigned i = 0; i < w->nsocks; i++)
		w->socks[i].fd = -1;
	for (unsigned i = 0; i < w->nsocks; i++) {
		int rc = open_socket(w, &w->socks[i], t->inflight);
		if (rc)
			return rc;
	}
	for (unsigned i = 0; i < b; i++) {
		w->riov[i].iov_base = w->rbuf + i * w->rbuf_size;
		w->riov[i].iov_len = w->rbuf_size;
		w->rmsg[i].msg_hdr.msg_iov = &w->riov[i];
		w->rmsg[i].msg_hdr.msg_iovlen = 1;
		/* The ID goes in its own two bytes; the rest of the message is sent
		 * from the pre-built query as it is, never copied. */
		w->siov[2 * i].iov_base = w->sid[i];
		w->siov[2 * i].iov_len = 2;
		w->smsg[i].msg_hdr.msg_iov = &w->siov[2 * i];
		w->smsg[i].msg_hdr.msg_iovlen = 2;
	}
	return 0;
}

static void teardown(uworker_t *w)
{
	for (unsigned i = 0; w->socks && i < w->nsocks; i++) {
		if (w->socks[i].fd >= 0)
			close(w->socks[i].fd);
		free(w->socks[i].slots);
		free(w->socks[i].free);
	}
	if (w->epfd >= 0)
		close(w->epfd);
	free(w->socks);
	free(w->smsg);
	free(w->rmsg);
	free(w->siov);
	free(w->riov);
	free(w->sid);
	free(w->rbuf);
	free(w->events);
}

/* Send up to n queries on s in one sendmmsg; returns how many left. */
static unsigned send_batch(uworker_t *w, usock_t *s, unsigned n, uint64_t now)
{
	const flood_queries_t *qs = w->t->queries;
	uint32_t slot_of[n];
	for (unsigned i = 0; i < n; i++) {
		uint32_t slot = s->free[--s->nfree];
		uint16_t id = (uint16_t)(slot | ((uint32_t)s->seq++ << s->id_bits));
		slot_t *sl = &s->slots[slot];
		sl->busy = true;
		sl->id = id;
		sl->sent_ns = now;
		slot_of[i] = slot;
		const flood_query_t *q = &qs->q[w->next_query];
		if (++w->next_query == qs->count)
			w->next_query = 0;
		w->sid[i][0] = (uint8_t)(id >> 8);
		w->sid[i][1] = (uint8_t)id;
		w->siov[2 * i + 1].iov_base = q->pkt + 2;
		w->siov[2 * i + 1].iov_len = q->len - 2u;
	}
	int r = sendmmsg(s->fd, w->smsg, n, 0);
	unsigned sent = r > 0 ? (unsigned)r : 0;
	if (r < 0) {
		if (errno == ECONNREFUSED)
			flood_add(&w->t->stats.refused_icmp, 1);
		else if (errno != EAGAIN && errno != EINTR)
			flood_add(&w->t->stats.send_errors, 1);
	}
	for (unsigned i = sent; i < n; i++) /* not sent: the slots are free again */
		release(s, slot_of[i]);
	w->inflight += sent;
	flood_add(&w->t->stats.sent, sent);
	return sent;
}

/*
 * One pass of sending: `budget` queries spread round robin over the sockets
 * that have room, one sendmmsg per socket. Returns how many were sent.
 */
static uint64_t send_pass(uworker_t *w, uint64_t budget, uint64_t now)
{
	uint64_t total = 0;
	for (unsigned k = 0; k < w->nsocks && budget > 0; k++) {
		usock_t *s = &w->socks[w->rr];
		if (++w->rr == w->nsocks)
			w->rr = 0;
		uint64_t n = s->nfree;
		if (n > budget)
			n = budget;
		if (n > w->o->batch)
			n = w->o->batch;
		if (n == 0)
			continue;
		unsigned sent = send_batch(w, s, (unsigned)n, now);
		total += sent;
		budget -= sent;
	}
	return total;
}

static void on_answer(uworker_t *w, usock_t *s, const uint8_t *pkt, size_t len, uint64_t now)
{
	flood_answer_t a;
	if (flood_answer_parse(&a, pkt, len, w->o->nsid) < 0) {
		flood_add(&w->t->stats.unexpected, 1);
		return;
	}
	uint32_t slot = a.id & ((1u << s->id_bits) - 1);
	slot_t *sl = &s->slots[slot];
	if (!sl->busy || sl->id != a.id) {
		flood_add(&w->t->stats.unexpected, 1);
		return;
	}
	release(s, slot);
	w->inflight--;
	flood_count_answer(w->t, &a, now - sl->sent_ns, now);
	if (a.nsid_thread >= 0) {
		if (s->nsid_thread < 0)
			s->nsid_thread = a.nsid_thread;
		else if (s->nsid_thread != a.nsid_thread)
			s->nsid_mixed = true;
	}
}

/*
 * Read what is queued on s, a few batches at most so no socket starves the
 * rest. Unpaced, the freed slots are refilled at once on the same socket:
 * the server gets the next queries while the other sockets are still being
 * read, instead of the whole window moving in lock-step. Returns how many
 * queries that sent.
 */
static uint64_t receive(uworker_t *w, usock_t *s)
{
	uint64_t sent = 0;
	for (int round = 0; round < 4; round++) {
		int r = recvmmsg(s->fd, w->rmsg, w->o->batch, MSG_DONTWAIT, NULL);
		if (r < 0) {
			if (errno == ECONNREFUSED) { /* ICMP port unreachable: try again */
				flood_add(&w->t->stats.refused_icmp, 1);
				continue;
			}
			break;
		}
		uint64_t now = flood_now_ns();
		for (int i = 0; i < r; i++)
			on_answer(w, s, w->riov[i].iov_base, w->rmsg[i].msg_len, now);
		if (w->refill && w->refill_left > 0 && s->nfree > 0) {
			uint64_t n = s->nfree < w->o->batch ? s->nfree : w->o->batch;
			if (n > w->refill_left)
				n = w->refill_left;
			unsigned k = send_batch(w, s, (unsigned)n, now);
			w->refill_left -= k;
			sent += k;
		}
		if ((unsigned)r < w->o->batch)
			break;
	}
	return sent;
}

/* Queries older than the timeout count as lost and free their slots. */
static void expire(uworker_t *w, uint64_t now, bool all)
{
	uint64_t lost = 0;
	for (unsigned i = 0; i < w->nsocks; i++) {
		usock_t *s = &w->socks[i];
		uint32_t size = 1u << s->id_bits;
		for (uint32_t j = 0; j < size; j++) {
			slot_t *sl = &s->slots[j];
			if (sl->busy && (all || now - sl->sent_ns >= w->timeout_ns)) {
				release(s, j);
				lost++;
			}
		}
	}
	w->inflight -= lost;
	flood_add(&w->t->stats.lost, lost);
}

static void run(uworker_t *w)
{
	flood_thread_t *t = w->t;
	uint64_t scan_every = w->timeout_ns / 8;
	if (scan_every < 1000000)
		scan_every = 1000000;
	if (scan_every > 100000000)
		scan_every = 100000000;
	uint64_t next_scan = t->start_ns + scan_every;
	uint64_t sent = 0, drain_end = 0;
	bool sending = true;
	for (;;) {
		uint64_t now = flood_now_ns();
		if (sending && !flood_keep_sending(t, sent, now)) {
			sending = false;
			drain_end = now + w->timeout_ns;
		}
		uint64_t wait_ns = next_scan > now ? next_scan - now : 0;
		if (sending) {
			sent += send_pass(w, flood_budget(t, sent, now, &wait_ns), now);
		} else if (w->inflight == 0 || now >= drain_end) {
			break;
		} else if (drain_end - now < wait_ns) {
			wait_ns = drain_end - now;
		}
		w->refill = sending && t->rate <= 0;
		w->refill_left = sending ? t->count - sent : 0;
		struct timespec ts = flood_timespec(wait_ns);
		int n = epoll_pwait2(w->epfd, w->events, (int)w->nsocks, &ts, NULL);
		for (int i = 0; i < n; i++)
			sent += receive(w, w->events[i].data.ptr);
		now = flood_now_ns();
		if (now >= next_scan) {
			expire(w, now, false);
			next_scan = now + scan_every;
		}
	}
	expire(w, 0, true); /* whatever is still outstanding at the end is lost */
	for (unsigned i = 0; i < w->nsocks; i++) {
		usock_t *s = &w->socks[i];
		if (s->nsid_thread >= 0) {
			t->stats.sockets_answered++;
			if (!s->nsid_mixed)
				t->stats.sockets_sticky++;
		}
	}
}

void *flood_udp_thread(void *arg)
{
	flood_thread_t *t = arg;
	uworker_t w;
	t->error = setup(&w, t);
	if (flood_thread_ready(t) == 0)
		run(&w);
	teardown(&w);
	return NULL;
}
