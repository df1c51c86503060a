/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The UDP path: recvmmsg/sendmmsg batches answered by the worker's responder. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <urcu.h>

#include "proto/response.h"

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/hot.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/net/udp.h"
#include "server/net/worker.h"

/* a longer datagram is cut short (MSG_TRUNC) and dropped */
#define UDP_QUERY_MAX 4096
/* EAGAIN on sendmmsg: retry this often, then drop */
#define UDP_SEND_RETRIES 4

/*
 * At a moderate load each wake-up carries one datagram or a few and finds
 * the caches cold and, after the system call, the TLB empty: what entry 0
 * needs besides the kernel's arrays (the buffers' addresses and both of
 * its iovecs) is the batch's first line, and all it needs besides its
 * buffers (its two mmsghdr and its peer's address too) is the first page.
 */
struct udp_batch {
	_Alignas(4096) uint8_t *rx_buf; /* UDP_BATCH * UDP_QUERY_MAX */
	uint8_t *tx_buf;                /* UDP_BATCH * answer_cap */
	uint32_t answer_cap;
	unsigned used; /* rx entries the last recvmmsg filled */
	struct {
		struct iovec rx, tx;
	} iov[UDP_BATCH];
	struct mmsghdr rx[UDP_BATCH];
	struct sockaddr_in6 peer[UDP_BATCH]; /* the sockets are IPv4 or IPv6 */
	struct mmsghdr tx[UDP_BATCH];
};
_Static_assert(offsetof(struct udp_batch, iov[1]) <= 64, "entry 0 shares the first line");
_Static_assert(offsetof(struct udp_batch, tx[1]) <= 4096, "entry 0 lies in the first page");

/*
 * Make rx[i] ready for recvmmsg again: the kernel writes back the peer's
 * address length (and msg_len and msg_flags, outputs only).
 */
static void rx_reset(udp_batch_t *b, unsigned i)
{
	b->rx[i].msg_hdr = (struct msghdr){
		.msg_name = &b->peer[i],
		.msg_namelen = sizeof(b->peer[i]),
		.msg_iov = &b->iov[i].rx,
		.msg_iovlen = 1,
	};
}

udp_batch_t *udp_batch_new(size_t answer_cap)
{
	MAIN_THREAD_ONLY();
	udp_batch_t *b = aligned_alloc(_Alignof(udp_batch_t), sizeof(*b));
	if (!b)
		return NULL;
	memset(b, 0, sizeof(*b));
	b->answer_cap = (uint32_t)answer_cap;
	b->rx_buf = malloc((size_t)UDP_BATCH * UDP_QUERY_MAX);
	b->tx_buf = malloc((size_t)UDP_BATCH * answer_cap);
	if (!b->rx_buf || !b->tx_buf) {
		udp_batch_free(b);
		return NULL;
	}
	for (size_t i = 0; i < UDP_BATCH; i++) {
		b->iov[i].rx = (struct iovec){ b->rx_buf + i * UDP_QUERY_MAX, UDP_QUERY_MAX };
		b->iov[i].tx = (struct iovec){ b->tx_buf + i * answer_cap, 0 };
		rx_reset(b, (unsigned)i);
	}
	return b;
}

void udp_batch_free(udp_batch_t *b)
{
	if (!b)
		return;
	free(b->rx_buf);
	free(b->tx_buf);
	free(b);
}

/*
 * Send tx[0..n): sendmmsg may stop short (a full socket buffer, or one
 * message the kernel refuses). EAGAIN is retried a bounded number of times
 * after waiting briefly for room; a message refused for another reason is
 * skipped. What is not sent is counted as dropped.
 */
static void send_batch(udp_receiver_t *r, unsigned n)
{
	udp_batch_t *b = r->batch;
	int fd = r->fd;
	unsigned off = 0, retries = 0;
	while (off < n) {
		int sent = sendmmsg(fd, b->tx + off, n - off, MSG_DONTWAIT);
		if (sent > 0) {
			for (unsigned i = off; i < off + (unsigned)sent; i++)
				stats_add(&r->stats->bytes_out, b->tx[i].msg_hdr.msg_iov->iov_len);
			off += (unsigned)sent;
			continue;
		}
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    retries++ < UDP_SEND_RETRIES) {
			struct pollfd p = { fd, POLLOUT, 0 };
			(void)poll(&p, 1, 1);
			continue;
		}
		/* give up on this message: the first in line was refused */
		stats_add(&r->stats->dropped, 1);
		off++;
		retries = 0;
	}
}

/* Log one sampled query and what was sent (alen 0: nothing) to dnstap. */
static void udp_tap(udp_receiver_t *r, dnstap_query_t *tap, const struct sockaddr *peer,
		    const uint8_t *q, size_t len, const uint8_t *a, size_t alen)
{
	tap->peer = peer;
	tap->tcp = false;
	tap->query = q;
	tap->query_len = len;
	tap->response = a;
	tap->response_len = alen;
	dnstap_log(r->tap, tap);
}

/*
 * Response rate limiting of one answer abuf[0..alen): returns the length
 * to send, 0 for none; a slipped answer is truncated in place.
 */
static size_t udp_rate_limit(udp_receiver_t *r, uint8_t *abuf, size_t alen, answer_info_t *info)
{
	const answer_ctx_t *ctx = &r->ctx;
	switch (rrl_check(r->w->all->rrl, &r->rrl, ctx->client_ip, ctx->client_ip_len, info,
			  ctx->now)) {
	case RRL_SEND:
		return alen;
	case RRL_SLIP: {
		int n = response_strip(abuf, alen);
		if (n > 0) {
			stats_add(&r->stats->rrl_slipped, 1);
			info->truncated = true;
			return (size_t)n;
		}
		break; /* our own answer does not parse: send nothing */
	}
	case RRL_DROP:
		break;
	}
	stats_add(&r->stats->rrl_dropped, 1);
	return 0;
}

/*
 * One batch: wait for the first datagram, take what else is queued,
 * answer under one RCU read section, send. Returns datagrams read, 0 when
 * woken with none, -1 on another error.
 */
static int udp_batch_once(udp_receiver_t *r)
{
	worker_t *w = r->w;
	udp_batch_t *b = r->batch;
	/* only what the last batch used: a few entries at a moderate load, not all 32 */
	for (unsigned i = 0; i < b->used; i++)
		rx_reset(b, i);
	b->used = 0;
	int n = recvmmsg(r->fd, b->rx, UDP_BATCH, MSG_WAITFORONE, NULL);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		/*
		 * The file is non-blocking again: another process that shares it
		 * set the flag (an older shoald taking over polls it with libuv,
		 * which does). Wait for a datagram instead of spinning; the wake
		 * signal interrupts poll as it does recvmmsg.
		 */
		struct pollfd p = { r->fd, POLLIN, 0 };
		(void)poll(&p, 1, -1);
		return 0;
	}
	if (n <= 0)
		return n < 0 && errno != EINTR ? -1 : 0;
	b->used = (unsigned)n;
	unsigned out = 0;
	answer_ctx_t *ctx = &r->ctx;
	ctx->now = (uint32_t)time(NULL); /* for cookies and rate limiting: one reading a batch */
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(w->zones);
	ctx->cookies = cookies_read(&w->all->cookies);
	for (int i = 0; i < n; i++) {
		size_t len = b->rx[i].msg_len;
		answer_info_t info;
		answer_info_clear(&info); /* a responder need not set every field */
		size_t alen = 0;
		uint8_t *abuf = b->tx_buf + (size_t)out * b->answer_cap;
		if (b->rx[i].msg_hdr.msg_flags & MSG_TRUNC) {
			info.malformed = true; /* longer than any query we answer */
		} else {
			worker_client_ip(ctx, (const struct sockaddr *)&b->peer[i]);
			dnstap_query_t tap;
			bool tapped = r->tap && dnstap_sampled(r->tap);
			if (tapped)
				clock_gettime(CLOCK_REALTIME, &tap.query_time);
			alen = r->answer(db, b->iov[i].rx.iov_base, len, abuf, b->answer_cap, ctx,
					 &info);
			/* IXFR, NOTIFY and TSIG depend on who asks: answered again, rarely */
			if (r->zones && (info.qtype == DNS_TYPE_IXFR || info.tsig ||
					 info.rcode == DNS_RCODE_NOTIMP))
				alen = transfer_udp(&r->xfr, db, (struct sockaddr *)&b->peer[i],
						    b->iov[i].rx.iov_base, len, abuf, b->answer_cap,
						    alen, &info);
			if (alen && w->all->rrl)
				alen = udp_rate_limit(r, abuf, alen, &info);
			if (tapped)
				udp_tap(r, &tap, (const struct sockaddr *)&b->peer[i],
					b->iov[i].rx.iov_base, len, abuf, alen);
		}
		stats_count_udp(r->stats, len, alen > 0, &info);
		stats_count_zone(r->zone_stats, r->zone_slots, alen > 0, &info);
		if (alen == 0)
			continue;
		b->iov[out].tx.iov_len = alen;
		b->tx[out].msg_hdr = (struct msghdr){
			.msg_name = &b->peer[i],
			.msg_namelen = b->rx[i].msg_hdr.msg_namelen,
			.msg_iov = &b->iov[out].tx,
			.msg_iovlen = 1,
		};
		out++;
	}
	ctx->cookies = NULL;
	cookies_read_done(&w->all->cookies);
	zonedb_read_unlock(w->zones);
	if (out)
		send_batch(r, out);
	return n;
}

static void on_wake(int sig)
{
	(void)sig; /* only to interrupt recvmmsg */
}

int udp_wake_init(void)
{
	MAIN_THREAD_ONLY();
	struct sigaction sa = { .sa_handler = on_wake }; /* no SA_RESTART: EINTR */
	sigemptyset(&sa.sa_mask);
	return sigaction(UDP_WAKE_SIGNAL, &sa, NULL) < 0 ? -errno : 0;
}

QUERY_PATH void *udp_receiver_main(void *arg)
{
	udp_receiver_t *r = arg;
	/* once per thread, before any rcu_read_lock (liburcu memb flavour) */
	rcu_register_thread();
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, UDP_WAKE_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	/*
	 * Blocking reads: one system call per wake-up where a poll and a read
	 * took two, and no event loop between them.
	 */
	int flags = fcntl(r->fd, F_GETFL);
	if (flags >= 0 && (flags & O_NONBLOCK))
		(void)fcntl(r->fd, F_SETFL, flags & ~O_NONBLOCK);
	unsigned errors = 0;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (udp_batch_once(r) >= 0)
			continue;
		/* not one a datagram causes: say so once, and do not spin on it */
		if (errors++ == 0)
			log_error("worker %u: UDP recvmmsg: %s", r->w->index,
				  shoal_strerror(-errno));
		struct pollfd p = { r->fd, POLLIN, 0 };
		(void)poll(&p, 1, 100);
	}
	rcu_unregister_thread();
	return NULL;
}
