/* The UDP path: recvmmsg/sendmmsg batches answered by the worker's responder. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "server/udp.h"
#include "server/worker.h"

/* a longer datagram is cut short (MSG_TRUNC) and dropped */
#define UDP_QUERY_MAX 4096
/* then back to the loop, so a stop and the other sockets get a turn */
#define UDP_BATCHES_PER_WAKEUP 8
/* EAGAIN on sendmmsg: retry this often, then drop */
#define UDP_SEND_RETRIES 4

struct udp_batch {
	struct mmsghdr rx[UDP_BATCH];
	struct mmsghdr tx[UDP_BATCH];
	struct iovec rx_iov[UDP_BATCH];
	struct iovec tx_iov[UDP_BATCH];
	struct sockaddr_storage peer[UDP_BATCH];
	uint8_t *rx_buf; /* UDP_BATCH * UDP_QUERY_MAX */
	uint8_t *tx_buf; /* UDP_BATCH * answer_cap */
	size_t answer_cap;
};

udp_batch_t *udp_batch_new(size_t answer_cap)
{
	udp_batch_t *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->answer_cap = answer_cap;
	b->rx_buf = malloc((size_t)UDP_BATCH * UDP_QUERY_MAX);
	b->tx_buf = malloc((size_t)UDP_BATCH * answer_cap);
	if (!b->rx_buf || !b->tx_buf) {
		udp_batch_free(b);
		return NULL;
	}
	for (size_t i = 0; i < UDP_BATCH; i++) {
		b->rx_iov[i] = (struct iovec){ b->rx_buf + i * UDP_QUERY_MAX, UDP_QUERY_MAX };
		b->tx_iov[i] = (struct iovec){ b->tx_buf + i * answer_cap, 0 };
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
static void send_batch(worker_t *w, int fd, unsigned n)
{
	udp_batch_t *b = w->batch;
	unsigned off = 0, retries = 0;
	while (off < n) {
		int sent = sendmmsg(fd, b->tx + off, n - off, MSG_DONTWAIT);
		if (sent > 0) {
			for (unsigned i = off; i < off + (unsigned)sent; i++)
				stats_add(&w->stats->bytes_out, b->tx[i].msg_hdr.msg_iov->iov_len);
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
		stats_add(&w->stats->dropped, 1);
		off++;
		retries = 0;
	}
}

/* One batch: receive, answer under one RCU read section, send. Returns datagrams read. */
static int udp_batch_once(worker_t *w, int fd)
{
	udp_batch_t *b = w->batch;
	for (unsigned i = 0; i < UDP_BATCH; i++) {
		b->rx[i].msg_hdr = (struct msghdr){
			.msg_name = &b->peer[i],
			.msg_namelen = sizeof(b->peer[i]),
			.msg_iov = &b->rx_iov[i],
			.msg_iovlen = 1,
		};
	}
	int n = recvmmsg(fd, b->rx, UDP_BATCH, MSG_DONTWAIT, NULL);
	if (n <= 0)
		return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR ? -1 : 0;
	unsigned out = 0;
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(w->zones);
	for (int i = 0; i < n; i++) {
		size_t len = b->rx[i].msg_len;
		answer_info_t info = { 0 };
		size_t alen = 0;
		uint8_t *abuf = b->tx_buf + (size_t)out * b->answer_cap;
		if (b->rx[i].msg_hdr.msg_flags & MSG_TRUNC) {
			info.malformed = true; /* longer than any query we answer */
		} else {
			alen = w->responder->answer(db, b->rx_iov[i].iov_base, len, abuf,
						    b->answer_cap, &w->ctx_udp, &info);
		}
		stats_count_udp(w->stats, len, alen > 0, &info);
		stats_count_zone(w->zone_stats, WORKER_ZONE_SLOTS, alen > 0, &info);
		if (alen == 0)
			continue;
		b->tx_iov[out].iov_len = alen;
		b->tx[out].msg_hdr = (struct msghdr){
			.msg_name = &b->peer[i],
			.msg_namelen = b->rx[i].msg_hdr.msg_namelen,
			.msg_iov = &b->tx_iov[out],
			.msg_iovlen = 1,
		};
		out++;
	}
	zonedb_read_unlock(w->zones);
	if (out)
		send_batch(w, fd, out);
	return n;
}

void udp_on_readable(uv_poll_t *handle, int status, int events)
{
	worker_t *w = handle->data;
	int fd = w->udp_fds[handle - w->udp_polls];
	if (status < 0)
		return;
	for (int round = 0; round < UDP_BATCHES_PER_WAKEUP; round++) {
		int n = udp_batch_once(w, fd);
		if (n < UDP_BATCH)
			break;
	}
}
