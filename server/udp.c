/* The UDP path: recvmmsg/sendmmsg batches, the per-worker path tables. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "server/internal.h"
#include "server/log.h"

int udp_batch_new(worker_t *w, size_t answer_cap)
{
	udp_batch_t *b = calloc(1, sizeof(*b));
	if (!b)
		return SHOAL_ENOMEM;
	b->answer_cap = answer_cap;
	b->rx_buf = malloc((size_t)UDP_BATCH * UDP_QUERY_MAX);
	b->tx_buf = malloc((size_t)UDP_BATCH * answer_cap);
	if (!b->rx_buf || !b->tx_buf) {
		free(b->rx_buf);
		free(b->tx_buf);
		free(b);
		return SHOAL_ENOMEM;
	}
	for (size_t i = 0; i < UDP_BATCH; i++) {
		b->rx_iov[i] = (struct iovec){ b->rx_buf + i * UDP_QUERY_MAX, UDP_QUERY_MAX };
		b->tx_iov[i] = (struct iovec){ b->tx_buf + i * answer_cap, 0 };
	}
	w->batch = b;
	return 0;
}

void udp_batch_free(worker_t *w)
{
	if (!w->batch)
		return;
	free(w->batch->rx_buf);
	free(w->batch->tx_buf);
	free(w->batch);
	w->batch = NULL;
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
	const zonedb_t *db = zonedb_current(&w->srv->zones);
	for (int i = 0; i < n; i++) {
		size_t len = b->rx[i].msg_len;
		answer_info_t info = { 0 };
		size_t alen = 0;
		uint8_t *abuf = b->tx_buf + (size_t)out * b->answer_cap;
		if (b->rx[i].msg_hdr.msg_flags & MSG_TRUNC) {
			info.malformed = true; /* longer than any query we answer */
		} else {
			alen = w->path->answer(w, db, b->rx_iov[i].iov_base, len, abuf,
					       b->answer_cap, &w->ctx_udp, &info);
		}
		stats_count_udp(w->stats, len, alen > 0, &info);
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
	zonedb_read_unlock(&w->srv->zones);
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

uint64_t udp_rcvbuf_drops(const worker_t *w)
{
	uint64_t drops = 0;
	/* shared mode: the sockets are every worker's; count them once, on worker 0 */
	if (w->path == &udp_path_shared && w->index != 0)
		return 0;
	for (size_t i = 0; i < w->udp_count; i++) {
		uint32_t mem[SK_MEMINFO_VARS];
		socklen_t len = sizeof(mem);
		if (getsockopt(w->udp_fds[i], SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
		    len > SK_MEMINFO_DROPS * sizeof(mem[0]))
			drops += mem[SK_MEMINFO_DROPS];
	}
	return drops;
}

/* Paths */

static int reuseport_open(server_t *srv, worker_t *w)
{
	char err[256];
	for (size_t i = 0; i < srv->cfg->listen_count; i++) {
		int fd = udp_socket_open(&srv->cfg->listen[i], true, err, sizeof(err));
		if (fd < 0) {
			log_error("worker %u: UDP %s", w->index, err);
			return fd;
		}
		w->udp_fds[w->udp_count++] = fd;
	}
	return 0;
}

static void reuseport_close(server_t *srv, worker_t *w)
{
	for (size_t i = 0; i < w->udp_count; i++)
		close(w->udp_fds[i]);
	w->udp_count = 0;
}

static int shared_open(server_t *srv, worker_t *w)
{
	char err[256];
	for (size_t i = 0; i < srv->cfg->listen_count; i++) {
		if (srv->shared_fds[i] < 0) {
			/* no SO_REUSEPORT: one socket per address, read by every worker */
			int fd = udp_socket_open(&srv->cfg->listen[i], false, err, sizeof(err));
			if (fd < 0) {
				log_error("UDP %s", err);
				return fd;
			}
			srv->shared_fds[i] = fd;
		}
		w->udp_fds[w->udp_count++] = srv->shared_fds[i];
	}
	return 0;
}

static void shared_close(server_t *srv, worker_t *w)
{
	w->udp_count = 0;
	if (w->index != 0)
		return;
	for (size_t i = 0; i < CONF_LISTEN_MAX; i++) {
		if (srv->shared_fds[i] >= 0)
			close(srv->shared_fds[i]);
		srv->shared_fds[i] = -1;
	}
}

static size_t zone_answer(worker_t *w, const zonedb_t *db, const uint8_t *q, size_t len,
			  uint8_t *out, size_t cap, const answer_ctx_t *ctx, answer_info_t *info)
{
	return answer_query(db, q, len, out, cap, ctx, info);
}

/*
 * The kernel ceiling responder for benchmarks: the query comes back with QR
 * set and nothing looked up, so the cost measured is the socket path alone.
 */
static size_t ceiling_answer(worker_t *w, const zonedb_t *db, const uint8_t *q, size_t len,
			     uint8_t *out, size_t cap, const answer_ctx_t *ctx, answer_info_t *info)
{
	if (len < DNS_HEADER_SIZE || len > cap || (q[2] & 0x80)) {
		info->dropped = true;
		info->malformed = len < DNS_HEADER_SIZE;
		return 0;
	}
	memcpy(out, q, len);
	out[2] |= 0x80;
	info->rcode = DNS_RCODE_NOERROR;
	return len;
}

const udp_path_t udp_path_reuseport = { "reuseport", reuseport_open, reuseport_close, zone_answer };
const udp_path_t udp_path_shared = { "shared", shared_open, shared_close, zone_answer };
const udp_path_t udp_path_ceiling = { "ceiling", reuseport_open, reuseport_close, ceiling_answer };
