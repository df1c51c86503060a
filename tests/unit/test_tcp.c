/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/net/tcp.c: a real loop in a thread, plain blocking sockets as clients. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/waker.h"
#include "server/net/acceptor.h"
#include "server/net/tcp.h"
#include "tests/tcpio.h"
#include "tests/unit/unit.h"

/* A query with this ID is answered with a 65535-octet message. */
#define BIG_ID    0xffff
#define QUERY_LEN 17
/* The generous deadline for anything the server should do: a client read
 * that waits longer counts as "did not happen". */
#define DEADLINE_S 5

/* One server on its own loop thread, as a worker would run it. */
typedef struct fixture {
	uv_loop_t loop;
	uv_async_t stop_async;
	pthread_t thread;
	sem_t ready;
	tcp_server_t *srv;
	tcp_limits_t lim;
	tcp_stats_t stats;
	int lfd;
	uint16_t port;
	int start_err;
	int done_calls;
	waker_t *waker; /* rung by a test thread: the server's waiting streams are asked again */
} fixture_t;

/* Echo the query with QR set; drop anything shorter than a header. */
static size_t echo_answer(void *arg, const struct sockaddr *peer, const uint8_t *q, size_t len,
			  uint8_t *out, size_t cap)
{
	(void)arg;
	(void)peer;
	if (len < 12)
		return 0;
	if ((q[0] << 8 | q[1]) == BIG_ID) {
		memcpy(out, q, 12);
		for (size_t i = 12; i < cap; i++)
			out[i] = (uint8_t)i;
		out[2] |= 0x80;
		return cap;
	}
	memcpy(out, q, len);
	out[2] |= 0x80;
	return len;
}

/*
 * Streams: a query with STREAM_ID is answered with STREAM_MESSAGES messages
 * of STREAM_LEN octets, message i filled with the octet i, through a
 * tcp_stream_t; the special function sees the peer's address. Counters
 * are written on the loop thread and read by the test with atomics.
 */
#define STREAM_ID       0x5353
#define STREAM_MESSAGES 120
#define STREAM_LEN      60000

typedef struct test_stream {
	tcp_stream_t base;
	uint8_t id[2];
	int sent;
} test_stream_t;

static int streams_complete, streams_cut, special_calls, special_peer_ok;

/* A query with WAIT_ID: a stream that waits on another thread (test_stream_waits_for_a_ring). */
#define WAIT_ID 0x5757
static int wait_next(tcp_stream_t *base, uint8_t *out, size_t cap);

static int stream_next(tcp_stream_t *base, uint8_t *out, size_t cap)
{
	test_stream_t *s = (test_stream_t *)base;
	if (s->sent == STREAM_MESSAGES)
		return 0;
	memset(out, s->sent, STREAM_LEN < cap ? STREAM_LEN : cap);
	out[0] = s->id[0];
	out[1] = s->id[1];
	out[2] = 0x80;
	s->sent++;
	return STREAM_LEN;
}

static void stream_end(tcp_stream_t *base, bool complete)
{
	__atomic_add_fetch(complete ? &streams_complete : &streams_cut, 1, __ATOMIC_SEQ_CST);
	free(base);
}

static int stream_special(void *arg, const acl_client_t *client, const uint8_t *q, size_t len,
			  uint8_t *out, size_t cap, tcp_stream_t **stream)
{
	(void)arg;
	(void)out;
	(void)cap;
	__atomic_add_fetch(&special_calls, 1, __ATOMIC_SEQ_CST);
	const struct sockaddr *peer = client->addr;
	const struct sockaddr_in *in = (const struct sockaddr_in *)peer;
	if (!client->tls && peer->sa_family == AF_INET &&
	    in->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
		__atomic_add_fetch(&special_peer_ok, 1, __ATOMIC_SEQ_CST);
	int id = len < 12 ? -1 : q[0] << 8 | q[1];
	if (id != STREAM_ID && id != WAIT_ID)
		return TCP_SPECIAL_PASS;
	test_stream_t *s = calloc(1, sizeof(*s));
	if (!s)
		return 0;
	s->base.next = id == STREAM_ID ? stream_next : wait_next;
	s->base.end = stream_end;
	memcpy(s->id, q, 2);
	*stream = &s->base;
	return 0;
}

/* Set before fx_start: the special function the next fixture's server asks first. */
static tcp_special_fn fx_special;

static void on_server_done(void *arg)
{
	fixture_t *fx = arg;
	fx->done_calls++;
	uv_close((uv_handle_t *)&fx->stop_async, NULL);
}

static void on_stop_async(uv_async_t *a)
{
	fixture_t *fx = a->data;
	waker_close(fx->waker);
	tcp_server_stop(fx->srv, on_server_done, fx);
}

static void on_fx_wake(void *arg)
{
	fixture_t *fx = arg;
	tcp_server_resume(fx->srv);
}

static void *loop_thread(void *arg)
{
	fixture_t *fx = arg;
	fx->start_err = tcp_server_start(&fx->loop, &fx->lfd, 1, &fx->lim, echo_answer, NULL,
					 &fx->stats, NULL, &fx->srv);
	fx->waker = waker_new(&fx->loop, on_fx_wake, fx);
	if (!fx->waker)
		fx->start_err = SHOAL_ENOMEM;
	else if (fx->start_err)
		waker_close(fx->waker);
	if (fx->start_err == 0 && fx_special)
		tcp_server_set_special(fx->srv, fx_special);
	if (fx->start_err)
		uv_close((uv_handle_t *)&fx->stop_async, NULL);
	sem_post(&fx->ready);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	return NULL;
}

/*
 * A loopback listener on a free port (bind to port 0, read it back). A
 * sndbuf > 0 fixes the send buffer of the connections it accepts, so big
 * answers do not fit and must queue (autotuning would grow it to megabytes).
 */
static int listen_loopback(uint16_t *port, int sndbuf)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	if (sndbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		perror("listen_loopback");
		exit(99);
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static void fx_start_sndbuf(fixture_t *fx, const tcp_limits_t *lim, int sndbuf)
{
	memset(fx, 0, sizeof(*fx));
	fx->lim = *lim;
	fx->lfd = listen_loopback(&fx->port, sndbuf);
	sem_init(&fx->ready, 0, 0);
	uv_loop_init(&fx->loop);
	uv_async_init(&fx->loop, &fx->stop_async, on_stop_async);
	fx->stop_async.data = fx;
	pthread_create(&fx->thread, NULL, loop_thread, fx);
	sem_wait(&fx->ready);
	CU_ASSERT_EQUAL_FATAL(fx->start_err, 0);
}

static void fx_start(fixture_t *fx, const tcp_limits_t *lim)
{
	fx_start_sndbuf(fx, lim, 0);
}

/* Stop the server, wait for its loop to run dry; every handle must be closed. */
static void fx_stop(fixture_t *fx)
{
	uv_async_send(&fx->stop_async);
	pthread_join(fx->thread, NULL);
	CU_ASSERT_EQUAL(fx->done_calls, 1);
	CU_ASSERT_EQUAL(uv_loop_close(&fx->loop), 0);
	sem_destroy(&fx->ready);
}

/* A loopback client whose reads give up after the deadline. */
static int client_connect(uint16_t port)
{
	return tcpio_connect("127.0.0.1", port, DEADLINE_S);
}

static void send_all(int fd, const uint8_t *p, size_t len)
{
	if (!tcpio_send_all(fd, p, len))
		CU_FAIL("send failed");
}

/* A framed query (length prefix + header + root question) with this ID. */
static size_t frame_query(uint8_t *p, uint16_t id)
{
	static const uint8_t tmpl[2 + QUERY_LEN] = { 0, QUERY_LEN, 0, 0, 0x01, 0, 0, 1, 0, 0,
						     0, 0,         0, 0, 0,    0, 6, 0, 1 };
	memcpy(p, tmpl, sizeof(tmpl));
	p[2] = (uint8_t)(id >> 8);
	p[3] = (uint8_t)id;
	return sizeof(tmpl);
}

/* Read one framed answer into msg (65535 octets); returns its ID, or -1 when none came. */
static int read_answer(int fd, uint8_t *msg, size_t *len)
{
	ssize_t n = tcpio_recv_msg(fd, msg, 65535);
	*len = n > 0 ? (size_t)n : 0;
	if (n < 12 || !(msg[2] & 0x80))
		return -1;
	return msg[0] << 8 | msg[1];
}

/* Frame `count` queries with IDs first, first + 1, ... at p; returns the octets. */
static size_t frame_queries(uint8_t *p, uint16_t first, int count)
{
	size_t n = 0;
	for (int i = 0; i < count; i++)
		n += frame_query(p + n, (uint16_t)(first + i));
	return n;
}

/* Frame `count` queries that ask for 65535-octet answers; returns the octets. */
static size_t frame_big(uint8_t *p, int count)
{
	size_t n = 0;
	for (int i = 0; i < count; i++)
		n += frame_query(p + n, BIG_ID);
	return n;
}

/* Read `count` answers; returns how many carried the expected ID in order. */
static int answers_in_order(int fd, int first, int count)
{
	static uint8_t a[65536];
	size_t len;
	int good = 0;
	for (int i = 0; i < count; i++)
		good += read_answer(fd, a, &len) == first + i;
	return good;
}

/* True when the server closed the connection before the deadline. */
static bool wait_closed(int fd)
{
	uint8_t b[4096];
	for (;;) {
		ssize_t r = recv(fd, b, sizeof(b), 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return true;
		if (r < 0)
			return false; /* deadline */
	}
}

/* Wait up to the deadline for a counter of the loop thread to reach `want`. */
static bool wait_counter(const uint64_t *counter, uint64_t want)
{
	for (int i = 0; i < DEADLINE_S * 100; i++) {
		if (__atomic_load_n(counter, __ATOMIC_RELAXED) >= want)
			return true;
		usleep(10000);
	}
	return false;
}

static const tcp_limits_t default_limits = TCP_LIMITS_DEFAULT;

static void test_one_byte_at_a_time(void)
{
	fixture_t fx;
	uint8_t q[64], a[65536];
	size_t len;
	fx_start(&fx, &default_limits);
	int fd = client_connect(fx.port);
	size_t n = frame_query(q, 0x1234);
	for (size_t i = 0; i < n; i++) {
		send_all(fd, q + i, 1);
		usleep(2000);
	}
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 0x1234);
	CU_ASSERT_EQUAL(len, QUERY_LEN);
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.queries, 1);
	CU_ASSERT_EQUAL(fx.stats.answers, 1);
	CU_ASSERT_EQUAL(fx.stats.bytes_in, n);
	CU_ASSERT_EQUAL(fx.stats.bytes_out, n);
}

static void test_pipelined_100_in_order(void)
{
	fixture_t fx;
	uint8_t q[100 * (2 + QUERY_LEN)];
	fx_start(&fx, &default_limits);
	int fd = client_connect(fx.port);
	send_all(fd, q, frame_queries(q, 1000, 100));
	CU_ASSERT_EQUAL(answers_in_order(fd, 1000, 100), 100);
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.answers, 100);
}

/* Two messages in one segment, then one split inside its length prefix. */
static void test_two_in_one_segment_and_split_prefix(void)
{
	fixture_t fx;
	uint8_t q[128], a[65536];
	size_t len;
	fx_start(&fx, &default_limits);
	int fd = client_connect(fx.port);
	size_t n = frame_query(q, 1);
	n += frame_query(q + n, 2);
	send_all(fd, q, n);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 1);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 2);
	n = frame_query(q, 3);
	send_all(fd, q, 1);
	usleep(20000);
	send_all(fd, q + 1, n - 1);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 3);
	close(fd);
	fx_stop(&fx);
}

/* 200 messages cut at random points into random-size writes: all answered in order. */
static void test_random_segmentation(void)
{
	enum { N = 200 };
	fixture_t fx;
	uint8_t q[N * (2 + QUERY_LEN)];
	fx_start(&fx, &default_limits);
	int fd = client_connect(fx.port);
	size_t n = frame_queries(q, 2000, N);
	unsigned seed = 7;
	for (size_t off = 0; off < n;) {
		size_t chunk = 1 + (size_t)(rand_r(&seed) % 60);
		if (chunk > n - off)
			chunk = n - off;
		send_all(fd, q + off, chunk);
		off += chunk;
		if (rand_r(&seed) % 8 == 0)
			usleep(1000); /* let some pieces arrive alone */
	}
	CU_ASSERT_EQUAL(answers_in_order(fd, 2000, N), N);
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.bytes_in, n);
}

/* A message shorter than a header gets no answer; the connection stays. */
static void test_no_answer_keeps_connection(void)
{
	fixture_t fx;
	uint8_t q[64] = { 0, 3, 'a', 'b', 'c' }, a[65536];
	size_t len;
	fx_start(&fx, &default_limits);
	int fd = client_connect(fx.port);
	size_t n = 5 + frame_query(q + 5, 7);
	send_all(fd, q, n);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 7);
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.queries, 2);
	CU_ASSERT_EQUAL(fx.stats.answers, 1);
}

static void test_answer_65535_whole(void)
{
	fixture_t fx;
	static uint8_t a[65536];
	uint8_t q[64];
	size_t len = 0;
	fx_start_sndbuf(&fx, &default_limits, 16384); /* it cannot go out in one write */
	int fd = client_connect(fx.port);
	send_all(fd, q, frame_query(q, BIG_ID));
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), BIG_ID);
	CU_ASSERT_EQUAL(len, 65535);
	size_t good = 0;
	for (size_t i = 12; i < len; i++)
		good += a[i] == (uint8_t)i;
	CU_ASSERT_EQUAL(good, 65535 - 12);
	close(fd);
	fx_stop(&fx);
}

/*
 * Messages longer than the input buffer's first size, up to 65535 octets,
 * are read whole, pipelined behind short ones and in front of them (the
 * buffer grows to the message, then shrinks back when idle).
 */
static void test_long_queries_whole(void)
{
	enum { LONG = 65535 };
	fixture_t fx;
	static uint8_t q[3 * (2 + LONG)], a[65536];
	size_t len, n = 0;
	fx_start(&fx, &default_limits);
	int fd = client_connect(fx.port);
	n += frame_query(q + n, 1);
	for (uint16_t id = 2; id <= 3; id++) {
		size_t at = n;
		n += frame_query(q + n, id);
		q[at] = (uint8_t)(LONG >> 8); /* the same query, padded to 65535 octets */
		q[at + 1] = (uint8_t)LONG;
		memset(q + n, 0, LONG - QUERY_LEN);
		n += LONG - QUERY_LEN;
	}
	send_all(fd, q, n);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 1);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 2);
	CU_ASSERT_EQUAL(len, LONG);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 3);
	CU_ASSERT_EQUAL(len, LONG);
	send_all(fd, q, frame_query(q, 4));
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 4);
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.answers, 4);
}

static void test_idle_timeout_closes(void)
{
	fixture_t fx;
	tcp_limits_t lim = default_limits;
	lim.idle_timeout_ms = 200;
	fx_start(&fx, &lim);
	int fd = client_connect(fx.port);
	CU_ASSERT_TRUE(wait_closed(fd));
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.closed_idle, 1);
}

/* Half a message, then silence: the message timeout closes it as slow. */
static void test_message_timeout_closes(void)
{
	fixture_t fx;
	uint8_t q[64];
	tcp_limits_t lim = default_limits;
	lim.message_timeout_ms = 200;
	fx_start(&fx, &lim);
	int fd = client_connect(fx.port);
	send_all(fd, q, frame_query(q, 9) / 2);
	CU_ASSERT_TRUE(wait_closed(fd));
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.closed_slow, 1);
	CU_ASSERT_EQUAL(fx.stats.queries, 0);
}

static void test_max_connections_new_client_served(void)
{
	enum { MAX = 4, EXTRA = 5 };
	fixture_t fx;
	uint8_t q[64], a[65536];
	size_t len;
	int fds[MAX + EXTRA];
	tcp_limits_t lim = default_limits;
	lim.max_connections = MAX;
	fx_start(&fx, &lim);
	for (int i = 0; i < MAX + EXTRA; i++)
		fds[i] = client_connect(fx.port);
	int fd = client_connect(fx.port);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	send_all(fd, q, frame_query(q, 42));
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 42);
	/* the oldest ones made room */
	CU_ASSERT_TRUE(wait_closed(fds[0]));
	close(fd);
	for (int i = 0; i < MAX + EXTRA; i++)
		close(fds[i]);
	fx_stop(&fx);
	CU_ASSERT_TRUE(fx.stats.closed_limit >= EXTRA + 1);
	CU_ASSERT_EQUAL(fx.stats.accepted, MAX + EXTRA + 1);
}

/* At the limit the idle connection goes, not the older one mid-message. */
static void test_max_connections_prefers_idle(void)
{
	fixture_t fx;
	uint8_t q[64], a[65536];
	size_t len, n = frame_query(q, 77);
	tcp_limits_t lim = default_limits;
	lim.max_connections = 2;
	fx_start(&fx, &lim);
	int busy = client_connect(fx.port);
	send_all(busy, q, n / 2);
	int idle = client_connect(fx.port);
	/* both accepted, the half message read */
	CU_ASSERT_TRUE(wait_counter(&fx.stats.accepted, 2));
	CU_ASSERT_TRUE(wait_counter(&fx.stats.bytes_in, n / 2));
	int fresh = client_connect(fx.port);
	send_all(fresh, q, n);
	CU_ASSERT_EQUAL(read_answer(fresh, a, &len), 77);
	CU_ASSERT_TRUE(wait_closed(idle));
	send_all(busy, q + n / 2, n - n / 2);
	CU_ASSERT_EQUAL(read_answer(busy, a, &len), 77);
	close(busy);
	close(idle);
	close(fresh);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.closed_limit, 1);
}

/* At the limit with no idle connection, the least recently active one goes. */
static void test_max_connections_none_idle(void)
{
	fixture_t fx;
	uint8_t q[64], a[65536];
	size_t len, n = frame_query(q, 78);
	tcp_limits_t lim = default_limits;
	lim.max_connections = 2;
	fx_start(&fx, &lim);
	int first = client_connect(fx.port);
	send_all(first, q, n / 2);
	int second = client_connect(fx.port);
	send_all(second, q, n / 2);
	/* both accepted, both mid-message */
	CU_ASSERT_TRUE(wait_counter(&fx.stats.accepted, 2));
	CU_ASSERT_TRUE(wait_counter(&fx.stats.bytes_in, 2 * (n / 2)));
	int fresh = client_connect(fx.port);
	send_all(fresh, q, n);
	CU_ASSERT_EQUAL(read_answer(fresh, a, &len), 78);
	CU_ASSERT_TRUE(wait_closed(first));
	send_all(second, q + n / 2, n - n / 2);
	CU_ASSERT_EQUAL(read_answer(second, a, &len), 78);
	close(first);
	close(second);
	close(fresh);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.closed_limit, 1);
}

/*
 * max_pipelined 2, a small send buffer and a client that reads late: answers
 * queue, reading stops and resumes as writes complete, and all 20 big answers
 * arrive whole and in order.
 */
static void test_pipeline_limit_resumes(void)
{
	enum { N = 20 };
	fixture_t fx;
	static uint8_t a[65536];
	uint8_t q[N * (2 + QUERY_LEN)];
	size_t n = 0, len;
	tcp_limits_t lim = default_limits;
	lim.max_pipelined = 2;
	fx_start_sndbuf(&fx, &lim, 16384);
	int fd = client_connect(fx.port);
	n += frame_big(q + n, N);
	send_all(fd, q, n);
	usleep(200000); /* the server fills the socket and stops reading */
	int got = 0;
	for (int i = 0; i < N; i++)
		got += read_answer(fd, a, &len) == BIG_ID && len == 65535;
	CU_ASSERT_EQUAL(got, N);
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.closed_slow, 0);
	CU_ASSERT_EQUAL(fx.stats.answers, N);
}

/* A reader that never reads: past max_output queued octets it is dropped.
 * 200 answers of 64 KiB are more than loopback socket buffers hold. */
static void test_output_cap_closes_non_reader(void)
{
	enum { N = 200 };
	fixture_t fx;
	uint8_t q[N * (2 + QUERY_LEN)];
	size_t n = 0;
	tcp_limits_t lim = default_limits;
	lim.max_output = 65537;
	fx_start_sndbuf(&fx, &lim, 16384);
	int fd = client_connect(fx.port);
	n += frame_big(q + n, N);
	send_all(fd, q, n);
	sleep(1); /* not reading; then drain and expect the close */
	CU_ASSERT_TRUE(wait_closed(fd));
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.closed_slow, 1);
}

/*
 * Stop: the listener closes at once; answers already produced and queries
 * already received are delivered, then the server closes the connection. A
 * connection that has not sent its first query yet gets a moment to do so.
 */
static void test_stop_delivers_pending(void)
{
	fixture_t fx;
	static uint8_t a[65536];
	uint8_t q[64 * (2 + QUERY_LEN)];
	size_t n = 0, len;
	fx_start_sndbuf(&fx, &default_limits, 16384);
	int idle = client_connect(fx.port);
	int fd = client_connect(fx.port);
	n += frame_big(q + n, 3);
	n += frame_queries(q + n, 100, 50);
	send_all(fd, q, n);
	/* the first answer shows the server has read the queries (one segment): stop then */
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	CU_ASSERT_EQUAL(poll(&pfd, 1, 30000), 1);
	uv_async_send(&fx.stop_async);
	int got = 0;
	for (int i = 0; i < 3; i++)
		got += read_answer(fd, a, &len) == BIG_ID && len == 65535;
	CU_ASSERT_EQUAL(got, 3);
	CU_ASSERT_EQUAL(answers_in_order(fd, 100, 50), 50);
	CU_ASSERT_TRUE(wait_closed(fd));
	/* accepted before the stop, first query after it: still answered */
	send_all(idle, q, frame_queries(q, 300, 1));
	CU_ASSERT_EQUAL(answers_in_order(idle, 300, 1), 1);
	CU_ASSERT_TRUE(wait_closed(idle));
	close(fd);
	close(idle);
	pthread_join(fx.thread, NULL);
	CU_ASSERT_EQUAL(fx.done_calls, 1);
	CU_ASSERT_EQUAL(uv_loop_close(&fx.loop), 0);
	/* the listener is gone */
	int late = client_connect(fx.port);
	CU_ASSERT_EQUAL(late, -1);
	if (late >= 0)
		close(late);
	sem_destroy(&fx.ready);
}

/* A stop is bounded: a peer that never reads is closed after the message timeout. */
static void test_stop_bounded_by_non_reader(void)
{
	enum { N = 3 }; /* queued output stays under max_output */
	fixture_t fx;
	uint8_t q[N * (2 + QUERY_LEN)];
	size_t n = 0;
	tcp_limits_t lim = default_limits;
	lim.message_timeout_ms = 300;
	fx_start_sndbuf(&fx, &lim, 16384);
	int fd = client_connect(fx.port);
	n += frame_big(q + n, N);
	send_all(fd, q, n);
	usleep(100000);
	fx_stop(&fx); /* returns only once the server is gone */
	CU_ASSERT_TRUE(wait_closed(fd));
	close(fd);
	CU_ASSERT_EQUAL(fx.stats.closed_slow, 0); /* the stop closed it, not a limit */
}

/* A client that sends its queries and half-closes still gets every answer. */
static void test_half_close_answered(void)
{
	fixture_t fx;
	uint8_t q[10 * (2 + QUERY_LEN)];
	fx_start(&fx, &default_limits);
	int fd = client_connect(fx.port);
	send_all(fd, q, frame_queries(q, 500, 10));
	shutdown(fd, SHUT_WR);
	CU_ASSERT_EQUAL(answers_in_order(fd, 500, 10), 10);
	CU_ASSERT_TRUE(wait_closed(fd));
	close(fd);
	fx_stop(&fx);
}

/*
 * accept fails with EMFILE: the listener rests (counted) and does not drop
 * the connection; once descriptors are back, the waiting client is served.
 * (libuv's own accept loop closed the queued connection here, or spun.)
 */
static void test_accept_emfile_pauses_then_serves(void)
{
	enum { FILL_MAX = 4096 };
	static int fill[FILL_MAX];
	fixture_t fx;
	uint8_t q[64], a[65536];
	size_t len;
	int nfill = 0;
	fx_start(&fx, &default_limits);
	int fd = socket(AF_INET, SOCK_STREAM, 0); /* made before the descriptors run out */
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(fx.port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	tcpio_deadline(fd, DEADLINE_S);
	struct rlimit old, low;
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 256;
	CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < FILL_MAX && (fill[nfill] = dup(fd)) >= 0)
		nfill++;
	CU_ASSERT_EQUAL(errno, EMFILE);

	CU_ASSERT_EQUAL_FATAL(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	send_all(fd, q, frame_query(q, 4242));
	CU_ASSERT_TRUE(wait_counter(&fx.stats.accept_paused, 1));
	usleep(3 * ACCEPTOR_PAUSE_MS * 1000); /* a few more tries, all failing */
	uint8_t b;
	CU_ASSERT_EQUAL(recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK), -1); /* not closed */
	CU_ASSERT_EQUAL(fx.stats.accepted, 0);

	for (int i = 0; i < nfill; i++)
		close(fill[i]);
	setrlimit(RLIMIT_NOFILE, &old);
	CU_ASSERT_EQUAL(read_answer(fd, a, &len), 4242);
	close(fd);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(fx.stats.accepted, 1);
}

typedef struct stopper {
	fixture_t *fx;
	sem_t done;
} stopper_t;

static void *stop_thread(void *arg)
{
	stopper_t *st = arg;
	fx_stop(st->fx);
	sem_post(&st->done);
	return NULL;
}

/*
 * However long the timeouts are, a stop waits at most TCP_STOP_MAX_MS for
 * a peer that never reads (before, it waited the message timeout: an hour
 * here).
 */
static void test_stop_bounded_with_long_message_timeout(void)
{
	enum { N = 3 };
	fixture_t fx;
	uint8_t q[N * (2 + QUERY_LEN)];
	tcp_limits_t lim = default_limits;
	lim.message_timeout_ms = 3600000;
	lim.idle_timeout_ms = 3600000;
	fx_start_sndbuf(&fx, &lim, 16384);
	int fd = client_connect(fx.port);
	send_all(fd, q, frame_big(q, N));
	usleep(100000);
	static stopper_t st;
	pthread_t stopper;
	st.fx = &fx;
	sem_init(&st.done, 0, 0);
	pthread_create(&stopper, NULL, stop_thread, &st);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60; /* generous against 5 s, short against an hour */
	if (sem_timedwait(&st.done, &until) != 0) {
		CU_FAIL("the stop still waits for a peer that never reads");
		fprintf(stderr, "test_stop_bounded_with_long_message_timeout: stop hangs\n");
		_exit(1); /* the loop thread would hold the process for an hour */
	}
	pthread_join(stopper, NULL);
	sem_destroy(&st.done);
	CU_ASSERT_TRUE(wait_closed(fd));
	close(fd);
}

static int atomic_get(int *v)
{
	return __atomic_load_n(v, __ATOMIC_SEQ_CST);
}

/* Wait up to the deadline for *v to reach want. */
static bool wait_count(int *v, int want)
{
	for (int i = 0; i < DEADLINE_S * 100 && atomic_get(v) < want; i++)
		usleep(10000);
	return atomic_get(v) >= want;
}

/*
 * A stream of 120 messages of 60000 octets (7 MB) to a client that does
 * not read at first: the server waits (a small send buffer fills at
 * once), and meanwhile answers another client; the query pipelined behind
 * the stream is answered after it, in order. A client that leaves in the
 * middle of a stream gets it ended, not completed.
 */
static void test_stream_backpressure(void)
{
	fixture_t fx;
	streams_complete = streams_cut = special_calls = special_peer_ok = 0;
	fx_special = stream_special;
	fx_start_sndbuf(&fx, &default_limits, 16384);
	int a = client_connect(fx.port);
	CU_ASSERT_FATAL(a >= 0);
	uint8_t q[64];
	size_t n = frame_query(q, STREAM_ID);
	n += frame_query(q + n, 7);
	send_all(a, q, n);
	/* a does not read: b is answered meanwhile */
	int b = client_connect(fx.port);
	CU_ASSERT_FATAL(b >= 0);
	n = frame_query(q, 9);
	send_all(b, q, n);
	static uint8_t msg[65536];
	size_t len;
	CU_ASSERT_EQUAL(read_answer(b, msg, &len), 9);
	close(b);
	CU_ASSERT_EQUAL(atomic_get(&streams_complete), 0);
	int good = 0;
	for (int i = 0; i < STREAM_MESSAGES; i++) {
		int id = read_answer(a, msg, &len);
		good += id == STREAM_ID && len == STREAM_LEN && msg[100] == (uint8_t)i;
	}
	CU_ASSERT_EQUAL(good, STREAM_MESSAGES);
	CU_ASSERT_EQUAL(read_answer(a, msg, &len), 7);
	CU_ASSERT_TRUE(wait_count(&streams_complete, 1));
	/* every message went through the special function, which saw loopback */
	CU_ASSERT_EQUAL(atomic_get(&special_calls), 3);
	CU_ASSERT_EQUAL(atomic_get(&special_peer_ok), 3);

	/* a client that leaves in the middle */
	int c = client_connect(fx.port);
	CU_ASSERT_FATAL(c >= 0);
	n = frame_query(q, STREAM_ID);
	send_all(c, q, n);
	CU_ASSERT_EQUAL(read_answer(c, msg, &len), STREAM_ID);
	close(c);
	CU_ASSERT_TRUE(wait_count(&streams_cut, 1));
	CU_ASSERT_EQUAL(atomic_get(&streams_complete), 1);
	close(a);
	fx_stop(&fx);
	fx_special = NULL;
}

/*
 * Waiting streams: a query with WAIT_ID is answered (stream_special) by a
 * stream whose one message another thread readies (as the update thread readies an
 * UPDATE's answer): TCP_STREAM_WAIT until wait_ready, then the echo.
 * wait_asks counts the calls of next, on the loop thread.
 */
static int wait_ready, wait_asks;

static int wait_next(tcp_stream_t *base, uint8_t *out, size_t cap)
{
	test_stream_t *s = (test_stream_t *)base;
	__atomic_add_fetch(&wait_asks, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&wait_ready, __ATOMIC_ACQUIRE))
		return TCP_STREAM_WAIT;
	if (s->sent++ || cap < QUERY_LEN)
		return 0;
	uint8_t f[2 + QUERY_LEN];
	frame_query(f, (uint16_t)(s->id[0] << 8 | s->id[1]));
	memcpy(out, f + 2, QUERY_LEN);
	out[2] |= 0x80;
	return QUERY_LEN;
}

/*
 * A stream that waits on another thread is asked again when that thread
 * rings the loop's waker, not polled (it was every 2 ms: about 150 asks
 * in the 300 ms here); meanwhile another connection is answered; rung, its
 * message goes, and the query pipelined behind it is answered after it.
 */
static void test_stream_waits_for_a_ring(void)
{
	fixture_t fx;
	streams_complete = streams_cut = wait_ready = wait_asks = 0;
	fx_special = stream_special;
	fx_start(&fx, &default_limits);
	int a = client_connect(fx.port);
	CU_ASSERT_FATAL(a >= 0);
	uint8_t q[64];
	size_t n = frame_query(q, WAIT_ID);
	n += frame_query(q + n, 7);
	send_all(a, q, n);
	int b = client_connect(fx.port);
	CU_ASSERT_FATAL(b >= 0);
	send_all(b, q, frame_query(q, 9));
	static uint8_t msg[65536];
	size_t len;
	CU_ASSERT_EQUAL(read_answer(b, msg, &len), 9);
	close(b);
	usleep(300000);
	CU_ASSERT_EQUAL(atomic_get(&wait_asks), 1);
	__atomic_store_n(&wait_ready, 1, __ATOMIC_RELEASE);
	waker_wake(fx.waker);
	CU_ASSERT_EQUAL(read_answer(a, msg, &len), WAIT_ID);
	CU_ASSERT_EQUAL(read_answer(a, msg, &len), 7);
	CU_ASSERT_TRUE(wait_count(&streams_complete, 1));
	CU_ASSERT_TRUE(atomic_get(&wait_asks) <= 3); /* the first, the one rung, its end */
	/* a stream still waiting when the server stops is cut */
	__atomic_store_n(&wait_ready, 0, __ATOMIC_RELEASE);
	send_all(a, q, frame_query(q, WAIT_ID));
	CU_ASSERT_TRUE(wait_count(&wait_asks, 4));
	fx_stop(&fx);
	CU_ASSERT_EQUAL(atomic_get(&streams_cut), 1);
	close(a);
	fx_special = NULL;
}

/* The server stops in the middle of a stream to a slow reader: the stream is cut, the stop ends. */
static void test_stream_cut_by_stop(void)
{
	fixture_t fx;
	tcp_limits_t lim = default_limits;
	lim.message_timeout_ms = 500; /* how long the stop waits for the slow reader */
	streams_complete = streams_cut = 0;
	fx_special = stream_special;
	fx_start_sndbuf(&fx, &lim, 16384);
	int a = client_connect(fx.port);
	CU_ASSERT_FATAL(a >= 0);
	uint8_t q[32];
	send_all(a, q, frame_query(q, STREAM_ID));
	static uint8_t msg[65536];
	size_t len;
	CU_ASSERT_EQUAL(read_answer(a, msg, &len), STREAM_ID);
	fx_stop(&fx);
	CU_ASSERT_EQUAL(atomic_get(&streams_cut), 1);
	CU_ASSERT_EQUAL(atomic_get(&streams_complete), 0);
	close(a);
	fx_special = NULL;
}

static void test_bad_arguments(void)
{
	uv_loop_t loop;
	tcp_server_t *srv = NULL;
	tcp_stats_t st = { 0 };
	tcp_limits_t lim = default_limits;
	int fd = socket(AF_INET, SOCK_STREAM, 0); /* not listening */
	uv_loop_init(&loop);
	CU_ASSERT_TRUE(tcp_server_start(&loop, &fd, 1, &lim, echo_answer, NULL, &st, NULL, &srv) <
		       0);
	lim.max_pipelined = 0;
	CU_ASSERT_TRUE(tcp_server_start(&loop, NULL, 0, &lim, echo_answer, NULL, &st, NULL, &srv) <
		       0);
	CU_ASSERT_PTR_NULL(srv);
	CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
	close(fd);
	int m = tcp_migrate_req_state();
	CU_ASSERT_TRUE(m == 0 || m == 1 || m == SHOAL_ENOTFOUND);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN); /* as shoald does: see tcp_server_start */
	static const unit_test_t tests[] = {
		UNIT_TEST(test_one_byte_at_a_time),
		UNIT_TEST(test_pipelined_100_in_order),
		UNIT_TEST(test_two_in_one_segment_and_split_prefix),
		UNIT_TEST(test_random_segmentation),
		UNIT_TEST(test_no_answer_keeps_connection),
		UNIT_TEST(test_answer_65535_whole),
		UNIT_TEST(test_long_queries_whole),
		UNIT_TEST(test_idle_timeout_closes),
		UNIT_TEST(test_message_timeout_closes),
		UNIT_TEST(test_max_connections_new_client_served),
		UNIT_TEST(test_max_connections_prefers_idle),
		UNIT_TEST(test_max_connections_none_idle),
		UNIT_TEST(test_pipeline_limit_resumes),
		UNIT_TEST(test_output_cap_closes_non_reader),
		UNIT_TEST(test_stop_delivers_pending),
		UNIT_TEST(test_stop_bounded_by_non_reader),
		UNIT_TEST(test_half_close_answered),
		UNIT_TEST(test_accept_emfile_pauses_then_serves),
		UNIT_TEST(test_stop_bounded_with_long_message_timeout),
		UNIT_TEST(test_stream_backpressure),
		UNIT_TEST(test_stream_cut_by_stop),
		UNIT_TEST(test_stream_waits_for_a_ring),
		UNIT_TEST(test_bad_arguments),
		UNIT_END,
	};
	return unit_run(argc, argv, "tcp", tests);
}
