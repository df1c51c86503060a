/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dnstap: queries and responses sampled into a file or a collector's socket, off the answer path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fstrm.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "server/common/addr.h"
#include "server/common/stats.h"
#include "server/query/dnstap.h"
#include "server/query/dnstap.pb-c.h"

/* The Frame Streams content type of dnstap: what readers check the stream is. */
#define DNSTAP_CONTENT_TYPE "protobuf:dnstap.Dnstap"
/*
 * Buffers per producer, and the size of its fstrm input queue (a power of
 * two): a sampled query takes two. 64 of 16 KiB: 1 MiB per producer, made
 * only when dnstap is on. A message larger than a buffer (a TCP answer of
 * more than about 16000 octets) is dropped and counted.
 */
#define DNSTAP_SLOTS     64
#define DNSTAP_SLOT_SIZE 16384
/*
 * A collector's socket that takes nothing for this long is cut off (and
 * connected to again later): fstrm's own unix writer blocks for ever, which
 * would keep the I/O thread, and so shoald's stop, waiting on a stalled
 * collector.
 */
#define DNSTAP_SOCKET_TIMEOUT_S 2

struct dnstap_producer {
	const dnstap_t *tap;
	struct fstrm_iothr_queue *queue;
	uint8_t *slots;             /* DNSTAP_SLOTS buffers of DNSTAP_SLOT_SIZE */
	bool busy[DNSTAP_SLOTS];    /* atomic: set here, cleared by the I/O thread's free */
	uint32_t next;              /* the buffer to take next */
	uint32_t seen;              /* queries since the last one logged */
	uint32_t sample;            /* log one in `sample` */
	uint64_t *queued, *dropped; /* the caller's counters */
} __attribute__((aligned(64)));

struct dnstap {
	struct fstrm_iothr *iothr;
	dnstap_producer_t *producers;
	unsigned count;
	char *identity, *version;
};

/* The collector's socket: fstrm's reader and writer over it, with timeouts. */
typedef struct dnstap_socket {
	struct sockaddr_un sa;
	int fd; /* -1 when closed */
} dnstap_socket_t;

static fstrm_res socket_open(void *obj)
{
	dnstap_socket_t *s = obj;
	if (s->fd >= 0)
		return fstrm_res_success;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fstrm_res_failure;
	struct timeval tv = { .tv_sec = DNSTAP_SOCKET_TIMEOUT_S };
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (const struct sockaddr *)&s->sa, sizeof(s->sa)) < 0) {
		close(fd);
		return fstrm_res_failure;
	}
	s->fd = fd;
	return fstrm_res_success;
}

static fstrm_res socket_close(void *obj)
{
	dnstap_socket_t *s = obj;
	if (s->fd < 0)
		return fstrm_res_failure;
	close(s->fd);
	s->fd = -1;
	return fstrm_res_success;
}

/* All count octets (the collector's control frames), or a failure: a timeout closes. */
static fstrm_res socket_read(void *obj, void *data, size_t count)
{
	dnstap_socket_t *s = obj;
	for (size_t got = 0; got < count;) {
		ssize_t n = s->fd < 0 ? -1 : read(s->fd, (uint8_t *)data + got, count - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fstrm_res_failure;
		got += (size_t)n;
	}
	return fstrm_res_success;
}

/* All of iov, or a failure: a collector that takes nothing for the timeout is cut off. */
static fstrm_res socket_write(void *obj, const struct iovec *iov, int iovcnt)
{
	dnstap_socket_t *s = obj;
	struct iovec v[IOV_MAX];
	if (s->fd < 0 || iovcnt > IOV_MAX)
		return fstrm_res_failure;
	memcpy(v, iov, (size_t)iovcnt * sizeof(*iov));
	struct msghdr m = { .msg_iov = v, .msg_iovlen = (size_t)iovcnt };
	while (m.msg_iovlen > 0) {
		ssize_t n = sendmsg(s->fd, &m, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fstrm_res_failure; /* EAGAIN: the send timeout passed */
		size_t left = (size_t)n;
		while (m.msg_iovlen > 0 && left >= m.msg_iov->iov_len) {
			left -= m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen > 0) {
			m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + left;
			m.msg_iov->iov_len -= left;
		}
	}
	return fstrm_res_success;
}

static fstrm_res socket_destroy(void *obj)
{
	socket_close(obj);
	free(obj);
	return fstrm_res_success;
}

/* A bidirectional fstrm writer (READY, ACCEPT, START: what collectors expect) to path. */
static struct fstrm_writer *socket_writer(const char *path, const struct fstrm_writer_options *wo)
{
	dnstap_socket_t *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fd = -1;
	s->sa.sun_family = AF_UNIX;
	snprintf(s->sa.sun_path, sizeof(s->sa.sun_path), "%s", path);
	struct fstrm_rdwr *rw = fstrm_rdwr_init(s);
	fstrm_rdwr_set_destroy(rw, socket_destroy);
	fstrm_rdwr_set_open(rw, socket_open);
	fstrm_rdwr_set_close(rw, socket_close);
	fstrm_rdwr_set_read(rw, socket_read);
	fstrm_rdwr_set_write(rw, socket_write);
	return fstrm_writer_init(wo, &rw);
}

/* The writer c asks for: to its file, or to its collector. */
static struct fstrm_writer *make_writer(const dnstap_conf_t *c)
{
	struct fstrm_writer_options *wo = fstrm_writer_options_init();
	fstrm_writer_options_add_content_type(wo, DNSTAP_CONTENT_TYPE,
					      sizeof(DNSTAP_CONTENT_TYPE) - 1);
	struct fstrm_writer *w = NULL;
	if (c->file) {
		struct fstrm_file_options *fo = fstrm_file_options_init();
		fstrm_file_options_set_file_path(fo, c->file);
		w = fstrm_file_writer_init(fo, wo);
		fstrm_file_options_destroy(&fo);
	} else {
		w = socket_writer(c->socket, wo);
	}
	fstrm_writer_options_destroy(&wo);
	return w;
}

/* The I/O thread, its queues and its output; t->count set. */
static int start_thread(dnstap_t *t, const dnstap_conf_t *c, char *err, size_t errlen)
{
	struct fstrm_writer *w = make_writer(c);
	if (!w) {
		snprintf(err, errlen, "dnstap: cannot set up the writer for %s",
			 c->file ? c->file : c->socket);
		return SHOAL_EINVAL;
	}
	struct fstrm_iothr_options *o = fstrm_iothr_options_init();
	fstrm_iothr_options_set_num_input_queues(o, c->producers);
	fstrm_iothr_options_set_input_queue_size(o, DNSTAP_SLOTS);
	fstrm_iothr_options_set_queue_model(o, FSTRM_IOTHR_QUEUE_MODEL_SPSC);
	/*
	 * fstrm starts the thread itself: it inherits the name and the signal
	 * mask of its maker, so both are the daemon's rule for its threads
	 * (server/common/thread.h) while it is made.
	 */
	char name[16] = "";
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	prctl(PR_GET_NAME, name);
	prctl(PR_SET_NAME, "shoald-dnstap");
	t->iothr = fstrm_iothr_init(o, &w);
	prctl(PR_SET_NAME, name);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fstrm_iothr_options_destroy(&o);
	if (!t->iothr) {
		if (w)
			fstrm_writer_destroy(&w);
		snprintf(err, errlen, "dnstap: cannot start the writer thread");
		return SHOAL_ENOMEM;
	}
	return 0;
}

int dnstap_new(const dnstap_conf_t *c, dnstap_t **out, char *err, size_t errlen)
{
	*out = NULL;
	err[0] = '\0';
	if (!c->file == !c->socket || c->producers == 0 || c->sample == 0) {
		snprintf(err, errlen, "dnstap: one of dnstap-file and dnstap-socket, please");
		return SHOAL_EINVAL;
	}
	if (c->socket && strlen(c->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "dnstap-socket: %s is too long for a unix socket", c->socket);
		return SHOAL_EINVAL;
	}
	/* fstrm would drop every message without a word: a file it cannot make stops the start */
	int fd = c->file ? open(c->file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -2;
	if (fd == -1) {
		snprintf(err, errlen, "dnstap-file: cannot write %s: %s", c->file, strerror(errno));
		return SHOAL_EINVAL;
	}
	if (fd >= 0)
		close(fd);
	dnstap_t *t = calloc(1, sizeof(*t));
	int rc = SHOAL_ENOMEM;
	if (!t)
		goto done;
	t->identity = strdup(c->identity ? c->identity : "");
	t->version = strdup(c->version ? c->version : "");
	t->producers = aligned_alloc(64, c->producers * sizeof(*t->producers));
	if (!t->identity || !t->version || !t->producers)
		goto done;
	memset(t->producers, 0, c->producers * sizeof(*t->producers));
	for (unsigned i = 0; i < c->producers; i++) {
		dnstap_producer_t *p = &t->producers[i];
		t->count = i + 1; /* freed with the rest from here */
		p->tap = t;
		p->sample = c->sample;
		if (!(p->slots = malloc((size_t)DNSTAP_SLOTS * DNSTAP_SLOT_SIZE)))
			goto done;
	}
	rc = start_thread(t, c, err, errlen);
	for (unsigned i = 0; rc == 0 && i < t->count; i++)
		if (!(t->producers[i].queue = fstrm_iothr_get_input_queue_idx(t->iothr, i)))
			rc = SHOAL_ENOMEM;
done:
	if (rc == SHOAL_ENOMEM && !err[0])
		snprintf(err, errlen, "dnstap: out of memory");
	if (rc < 0)
		dnstap_free(t);
	else
		*out = t;
	return rc;
}

dnstap_producer_t *dnstap_producer(dnstap_t *t, unsigned i, uint64_t *queued, uint64_t *dropped)
{
	if (!t || i >= t->count)
		return NULL;
	t->producers[i].queued = queued;
	t->producers[i].dropped = dropped;
	return &t->producers[i];
}

void dnstap_free(dnstap_t *t)
{
	if (!t)
		return;
	/* writes what is queued, closes, joins: every buffer is handed back first */
	if (t->iothr)
		fstrm_iothr_destroy(&t->iothr);
	for (unsigned i = 0; t->producers && i < t->count; i++)
		free(t->producers[i].slots);
	free(t->producers);
	free(t->identity);
	free(t->version);
	free(t);
}

QUERY_PATH bool dnstap_sampled(dnstap_producer_t *p)
{
	if (++p->seen < p->sample)
		return false;
	p->seen = 0;
	return true;
}

/* fstrm's free callback, on the I/O thread: the buffer is p's again. */
static void slot_free(void *data, void *flag)
{
	(void)data;
	__atomic_store_n((bool *)flag, false, __ATOMIC_RELEASE);
}

/*
 * Serialise d into p's next buffer and queue it. The buffers are handed
 * back in the order they were queued (one queue, written in order), so
 * the next one is the oldest: busy, the ring is full.
 */
static void submit(dnstap_producer_t *p, const Dnstap__Dnstap *d)
{
	uint32_t i = p->next;
	size_t len = dnstap__dnstap__get_packed_size(d);
	if (__atomic_load_n(&p->busy[i], __ATOMIC_ACQUIRE) || len > DNSTAP_SLOT_SIZE) {
		stats_add(p->dropped, 1);
		return;
	}
	uint8_t *buf = p->slots + (size_t)i * DNSTAP_SLOT_SIZE;
	dnstap__dnstap__pack(d, buf);
	p->busy[i] = true;
	if (fstrm_iothr_submit(p->tap->iothr, p->queue, buf, len, slot_free, &p->busy[i]) !=
	    fstrm_res_success) {
		p->busy[i] = false; /* not taken: still ours */
		stats_add(p->dropped, 1);
		return;
	}
	p->next = (i + 1) % DNSTAP_SLOTS;
	stats_add(p->queued, 1);
}

QUERY_PATH void dnstap_log(dnstap_producer_t *p, const dnstap_query_t *q)
{
	const uint8_t *ip;
	size_t ip_len = addr_octets(q->peer, &ip);
	Dnstap__Message m = DNSTAP__MESSAGE__INIT;
	m.type = DNSTAP__MESSAGE__TYPE__AUTH_QUERY;
	m.has_socket_family = ip_len != 0;
	m.socket_family = ip_len == 16 ? DNSTAP__SOCKET_FAMILY__INET6 : DNSTAP__SOCKET_FAMILY__INET;
	m.has_socket_protocol = true;
	m.socket_protocol = q->tcp ? DNSTAP__SOCKET_PROTOCOL__TCP : DNSTAP__SOCKET_PROTOCOL__UDP;
	m.has_query_address = ip_len != 0;
	m.query_address = (ProtobufCBinaryData){ ip_len, (uint8_t *)ip };
	m.has_query_port = ip_len != 0;
	m.query_port = addr_port(q->peer);
	m.has_query_time_sec = m.has_query_time_nsec = true;
	m.query_time_sec = (uint64_t)q->query_time.tv_sec;
	m.query_time_nsec = (uint32_t)q->query_time.tv_nsec;
	m.has_query_message = true;
	m.query_message = (ProtobufCBinaryData){ q->query_len, (uint8_t *)q->query };
	Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
	d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
	d.message = &m;
	d.has_identity = d.has_version = true;
	d.identity = (ProtobufCBinaryData){ strlen(p->tap->identity), (uint8_t *)p->tap->identity };
	d.version = (ProtobufCBinaryData){ strlen(p->tap->version), (uint8_t *)p->tap->version };
	submit(p, &d);
	if (!q->response || !q->response_len)
		return;
	/* the response: the query's times and addresses, and its own message instead */
	m.type = DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE;
	m.has_query_message = false;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	m.has_response_time_sec = m.has_response_time_nsec = true;
	m.response_time_sec = (uint64_t)now.tv_sec;
	m.response_time_nsec = (uint32_t)now.tv_nsec;
	m.has_response_message = true;
	m.response_message = (ProtobufCBinaryData){ q->response_len, (uint8_t *)q->response };
	submit(p, &d);
}
