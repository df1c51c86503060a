/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/events/requestor.c: both drivers against a scripted peer on loopback. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "proto/request.h"
#include "proto/tsig.h"
#include "proto/wire.h"
#include "server/common/log.h"
#include "server/common/tls.h"
#include "server/events/requestor.h"
#include "unit.h"

/* How long the peer waits for any one thing: generous, never reached when all goes well. */
#define PEER_WAIT_MS 10000
/* The requestor's deadline for each message in the cases that wait it out. */
#define SHORT_MS 300
/* The trickle: one octet every TRICKLE_GAP_MS; an answer takes over a second that way. */
#define TRICKLE_GAP_MS 40
#define TRICKLE_MS     1000

/* How the peer answers (the question's first label names nothing: the case does). */
enum script {
	S_ANSWER,         /* UDP: the answer */
	S_WRONG_ID,       /* UDP: an answer with another ID, then the answer */
	S_WRONG_PEER,     /* UDP: REFUSED from another port first, then the answer */
	S_WRONG_QUESTION, /* UDP: an answer to another type, then the answer */
	S_TC,             /* UDP: TC; then over TCP, the answer */
	S_SILENCE,        /* UDP: reads the request, answers nothing */
	S_TCP_SILENCE,    /* TCP: the same */
	S_WRONG_ID_TCP,   /* TCP: a message with another ID, then the answer */
	S_TRICKLE,        /* TCP: the answer one octet at a time */
	S_STREAM,         /* TCP: four messages, signed first and last, the middle two not */
	S_BAD_MAC,        /* TCP: the first message's MAC damaged */
	S_BAD_MAC_UDP,    /* UDP: an answer with a damaged MAC, then the answer */
	S_NOTAUTH,        /* UDP: NOTAUTH with an unsigned TSIG RR saying BADSIG (RFC 8945 5.3.2) */
	S_REFUSED_TCP,    /* TCP: REFUSED */
	S_CUT,            /* TCP: the first of two messages, then the connection closed */
	S_TLS_STREAM,     /* TLS: S_STREAM's four messages unsigned, in two records */
};

#define STREAM_MESSAGES 4
/* Room for any message the peer writes. */
#define ANSWER_MAX 1024

/* A peer on 127.0.0.1: UDP and TCP on one port, and a stranger's UDP socket on another. */
typedef struct peer {
	enum script script;
	int udp, tcp, stranger, quit[2];
	struct sockaddr_in addr;
	tsig_key_t key;
	pthread_t thread;
	tls_ctx_t *tls; /* S_TLS_STREAM: the server's credentials (the test's own pair) */
	int requests;   /* requests read, UDP and TCP */
	int errors;     /* its own checks that failed: asserted once it is joined */
} peer_t;

static int bind_loopback(int type, uint16_t port, struct sockaddr_in *out)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons(port) };
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&in, len) < 0 ||
	    getsockname(fd, (struct sockaddr *)&in, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (out)
		*out = in;
	return fd;
}

static void test_key(tsig_key_t *key)
{
	CU_ASSERT_EQUAL_FATAL(tsig_key_init(key, "xfr-key", "hmac-sha256",
					    "c2hvYWwgcmVxdWVzdG9yIHRlc3Qga2V5IDAxMjM0NTY3"),
			      0);
}

/* Wait until fd is readable (or the quit pipe is): true for fd. */
static bool peer_wait(peer_t *p, int fd)
{
	struct pollfd pf[2] = { { .fd = fd, .events = POLLIN },
				{ .fd = p->quit[0], .events = POLLIN } };
	return poll(pf, 2, PEER_WAIT_MS) > 0 && (pf[0].revents & POLLIN);
}

/* Read exactly len octets from a TCP connection. */
static bool read_all(peer_t *p, int fd, uint8_t *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = peer_wait(p, fd) ? read(fd, buf + got, len - got) : -1;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* The TCP request: accepted, read whole. Returns the connection or -1. */
static int tcp_request(peer_t *p, uint8_t *q, size_t *qlen)
{
	int c = peer_wait(p, p->tcp) ? accept4(p->tcp, NULL, NULL, SOCK_CLOEXEC) : -1;
	uint8_t len[2];
	if (c < 0 || !read_all(p, c, len, 2) || !read_all(p, c, q, wire_get_u16(len))) {
		if (c >= 0)
			close(c);
		return -1;
	}
	*qlen = wire_get_u16(len);
	p->requests++;
	return c;
}

/* The answer to q: its header with QR and rcode (and flags), its question or none. */
static size_t answer(const uint8_t *q, size_t qlen, uint8_t *out, uint16_t flags, int rcode,
		     bool question)
{
	wire_t w;
	wire_init_read(&w, q, qlen);
	wire_skip(&w, DNS_HEADER_SIZE);
	name_skip(&w);
	wire_skip(&w, 4);
	size_t len = question ? w.pos : DNS_HEADER_SIZE;
	memcpy(out, q, len);
	memset(out + 4, 0, 8);
	out[5] = question ? 1 : 0;
	uint16_t f = (uint16_t)((wire_get_u16(q + 2) & DNS_OPCODE_MASK) | DNS_FLAG_QR | flags |
				(rcode & DNS_RCODE_MASK));
	out[2] = (uint8_t)(f >> 8);
	out[3] = (uint8_t)f;
	return len;
}

/* Sign msg as the answer's next message when the request was signed. */
static size_t sign(peer_t *p, tsig_ctx_t *t, bool signed_, uint8_t *msg, size_t len)
{
	if (!signed_)
		return len;
	int n = tsig_sign(t, msg, len, ANSWER_MAX, (uint64_t)time(NULL));
	p->errors += n <= 0;
	return n > 0 ? (size_t)n : len;
}

/* Verify a request: whether it was signed (with the peer's key). */
static bool verify_request(peer_t *p, tsig_ctx_t *t, const uint8_t *q, size_t len)
{
	tsig_rr_t rr;
	tsig_init(t, &p->key, TSIG_FUDGE_DEFAULT);
	if (tsig_find(q, len, &rr) < 0)
		return false;
	p->errors += tsig_verify(t, q, len, &rr, (uint64_t)time(NULL)) != 0;
	return true;
}

static void send_tcp(int c, const uint8_t *msg, size_t len)
{
	uint8_t frame[2] = { (uint8_t)(len >> 8), (uint8_t)len };
	(void)!send(c, frame, 2, MSG_NOSIGNAL);
	(void)!send(c, msg, len, MSG_NOSIGNAL);
}

/* The answer, framed, one octet every TRICKLE_GAP_MS until sent or the client went. */
static void trickle(int c, const uint8_t *msg, size_t len)
{
	uint8_t frame[2 + 512] = { (uint8_t)(len >> 8), (uint8_t)len };
	memcpy(frame + 2, msg, len);
	for (size_t k = 0; k < len + 2; k++) {
		if (send(c, frame + k, 1, MSG_NOSIGNAL) != 1)
			return;
		nanosleep(&(struct timespec){ .tv_nsec = TRICKLE_GAP_MS * 1000000L }, NULL);
	}
}

/* S_STREAM: signed, two unsigned in the digest (RFC 8945 5.3.1), signed; no question after one. */
static void stream(peer_t *p, tsig_ctx_t *t, bool signed_, int c, const uint8_t *q, size_t qlen)
{
	uint8_t m[ANSWER_MAX];
	for (int k = 0; k < STREAM_MESSAGES; k++) {
		size_t len = answer(q, qlen, m, DNS_FLAG_AA, DNS_RCODE_NOERROR, k == 0);
		if (k == 0 || k == STREAM_MESSAGES - 1)
			len = sign(p, t, signed_, m, len);
		else if (signed_)
			hmac_sha256_update(&t->running.sha256, len, m); /* the key is hmac-sha256 */
		send_tcp(c, m, len);
	}
}

/* The TCP scripts, on connection c with request q. */
static void tcp_script(peer_t *p, int c, const uint8_t *q, size_t qlen)
{
	tsig_ctx_t t;
	bool signed_ = verify_request(p, &t, q, qlen);
	uint8_t m[ANSWER_MAX];
	size_t len =
		answer(q, qlen, m, DNS_FLAG_AA,
		       p->script == S_REFUSED_TCP ? DNS_RCODE_REFUSED : DNS_RCODE_NOERROR, true);
	if (p->script == S_STREAM) {
		stream(p, &t, signed_, c, q, qlen);
		return;
	}
	if (p->script == S_WRONG_ID_TCP) {
		m[1] ^= 1;
		send_tcp(c, m, len);
		m[1] ^= 1;
	}
	len = sign(p, &t, signed_, m, len);
	if (p->script == S_BAD_MAC)
		m[len - 10] ^= 0x55; /* in the MAC: Original ID, Error, Other Len follow it */
	if (p->script == S_TRICKLE)
		trickle(c, m, len);
	else if (p->script != S_TCP_SILENCE)
		send_tcp(c, m, len);
	if (p->script == S_CUT)
		shutdown(c, SHUT_WR);
}

/* A datagram to the client from socket fd. */
static void to_client(int fd, const uint8_t *m, size_t len, const struct sockaddr_in *client)
{
	(void)!sendto(fd, m, len, 0, (const struct sockaddr *)client, sizeof(*client));
}

/* The UDP scripts: the decoys first, then the answer (S_TC: over TCP). */
static void udp_script(peer_t *p, const uint8_t *q, size_t qlen, const struct sockaddr_in *client)
{
	tsig_ctx_t t;
	bool signed_ = verify_request(p, &t, q, qlen);
	uint8_t m[ANSWER_MAX];
	size_t len = answer(q, qlen, m, DNS_FLAG_AA, DNS_RCODE_REFUSED, true);
	if (p->script == S_WRONG_PEER) {
		tsig_ctx_t copy = t;
		to_client(p->stranger, m, sign(p, &copy, signed_, m, len), client);
	}
	len = answer(q, qlen, m, DNS_FLAG_AA, DNS_RCODE_NOERROR, true);
	if (p->script == S_WRONG_ID) {
		m[1] ^= 1;
		to_client(p->udp, m, len, client);
		m[1] ^= 1;
	}
	if (p->script == S_WRONG_QUESTION) {
		m[len - 3] ^= 1; /* the question's type */
		to_client(p->udp, m, len, client);
		m[len - 3] ^= 1;
	}
	if (p->script == S_BAD_MAC_UDP) {
		tsig_ctx_t copy = t;
		size_t n = sign(p, &copy, signed_, m, len);
		m[n - 10] ^= 0x55;
		to_client(p->udp, m, n, client);
		len = answer(q, qlen, m, DNS_FLAG_AA, DNS_RCODE_NOERROR, true);
	}
	if (p->script == S_NOTAUTH) {
		len = answer(q, qlen, m, DNS_FLAG_AA, DNS_RCODE_NOTAUTH, true);
		t.error = DNS_TSIG_BADSIG; /* as a peer whose secret differs: unsigned, BADSIG */
	}
	if (p->script == S_TC)
		len = answer(q, qlen, m, DNS_FLAG_TC, DNS_RCODE_NOERROR, true);
	to_client(p->udp, m, sign(p, &t, signed_, m, len), client);
}

/* Wait until session s on c can go on (the way it asked); false at the deadline or quit. */
static bool tls_wait(peer_t *p, tls_session_t *s, int c)
{
	struct pollfd pf[2] = { { .fd = c, .events = tls_wants_write(s) ? POLLOUT : POLLIN },
				{ .fd = p->quit[0], .events = POLLIN } };
	return poll(pf, 2, PEER_WAIT_MS) > 0 && pf[0].revents;
}

/* Read exactly len octets of s's application data. */
static bool tls_read_all(peer_t *p, tls_session_t *s, int c, uint8_t *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = tls_recv(s, buf + got, len - got);
		if (n == -EAGAIN && tls_wait(p, s, c))
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/*
 * S_TLS_STREAM: the handshake, the request, then the first message in a
 * record (the server's session ticket beside it), and the other three in
 * one more, so that once the client has read the second it finds the last
 * two decrypted already, and no socket event will say so.
 */
static void tls_peer(peer_t *p)
{
	int c = peer_wait(p, p->tcp) ? accept4(p->tcp, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)
				     : -1;
	tls_session_t *s = NULL;
	if (c < 0 || tls_session_server(p->tls, c, &s) < 0)
		goto done;
	int rc;
	while ((rc = tls_handshake(s)) == -EAGAIN && tls_wait(p, s, c))
		;
	uint8_t len[2], q[DNS_TCP_MAX], out[STREAM_MESSAGES * (ANSWER_MAX + 2)];
	if (rc < 0 || !tls_read_all(p, s, c, len, 2) ||
	    !tls_read_all(p, s, c, q, wire_get_u16(len)))
		goto done;
	p->requests++;
	size_t n = 0;
	for (int k = 0; k < STREAM_MESSAGES; k++) {
		size_t m = answer(q, wire_get_u16(len), out + n + 2, DNS_FLAG_AA, DNS_RCODE_NOERROR,
				  k == 0);
		out[n] = (uint8_t)(m >> 8);
		out[n + 1] = (uint8_t)m;
		n += m + 2;
	}
	/* the first message alone (the session ticket goes with it), then the rest in one */
	size_t first = 2u + (size_t)(out[0] << 8 | out[1]);
	for (int k = 0; k < 2; k++) {
		const uint8_t *from = k ? out + first : out;
		size_t part = k ? n - first : first;
		p->errors += tls_send(s, from, part) != (ssize_t)part;
		while ((rc = tls_flush(s)) == -EAGAIN && tls_wait(p, s, c))
			;
		p->errors += rc != 0;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000000L }, NULL);
	}
	peer_wait(p, p->quit[0]);
done:
	tls_session_free(s);
	if (c >= 0)
		close(c);
}

static void *peer_main(void *arg)
{
	peer_t *p = arg;
	if (p->script == S_TLS_STREAM) {
		tls_peer(p);
		return NULL;
	}
	uint8_t q[DNS_TCP_MAX];
	size_t qlen = 0;
	bool tcp =
		p->script >= S_TCP_SILENCE && p->script != S_BAD_MAC_UDP && p->script != S_NOTAUTH;
	int c = -1;
	if (!tcp) {
		struct sockaddr_in client;
		socklen_t clen = sizeof(client);
		ssize_t n = peer_wait(p, p->udp) ? recvfrom(p->udp, q, sizeof(q), 0,
							    (struct sockaddr *)&client, &clen)
						 : -1;
		if (n <= 0)
			return NULL;
		p->requests++;
		if (p->script != S_SILENCE)
			udp_script(p, q, (size_t)n, &client);
	}
	if (tcp || p->script == S_TC) {
		c = tcp_request(p, q, &qlen);
		if (c >= 0)
			tcp_script(p, c, q, qlen);
	}
	peer_wait(p, p->quit[0]); /* the connection stays until the case is over */
	if (c >= 0)
		close(c);
	return NULL;
}

static int peer_start(peer_t *p, enum script script)
{
	memset(p, 0, sizeof(*p));
	p->script = script;
	test_key(&p->key);
	/* a port free for both: the one UDP picks may be a TCP client's (TIME_WAIT) */
	p->tcp = -1;
	for (int k = 0; k < 100 && p->tcp < 0; k++) {
		if (k)
			close(p->udp);
		p->udp = bind_loopback(SOCK_DGRAM, 0, &p->addr);
		p->tcp = bind_loopback(SOCK_STREAM, ntohs(p->addr.sin_port), NULL);
	}
	p->stranger = bind_loopback(SOCK_DGRAM, 0, NULL);
	if (p->udp < 0 || p->tcp < 0 || p->stranger < 0 || listen(p->tcp, 4) < 0 ||
	    pipe(p->quit) < 0)
		return -1;
	return pthread_create(&p->thread, NULL, peer_main, p) == 0 ? 0 : -1;
}

static void peer_stop(peer_t *p)
{
	(void)!write(p->quit[1], "q", 1);
	pthread_join(p->thread, NULL);
	close(p->udp);
	close(p->tcp);
	close(p->stranger);
	close(p->quit[0]);
	close(p->quit[1]);
}

/* ---- the requestor's side ---- */

enum driver { BLOCKING, LIBUV };
static const char *const driver_names[] = { "blocking", "libuv" };

/* A case: what to ask, and what came. */
typedef struct exchange {
	requestor_params_t p;
	uint8_t query[REQUEST_MAX];
	tsig_key_t key;
	unsigned responses; /* messages on_response got */
	requestor_result_t res;
	bool done;
	unsigned cancel_after_ms; /* give up after this long (0: never) */
	uint64_t started;
	uv_timer_t *cancel_timer; /* libuv: the give-up's timer while it is armed */
	requestor_uv_t *ex;       /* libuv: the exchange under way */
} exchange_t;

/* on_response: S_STREAM's answer is complete at its last message. */
static int count_response(void *arg, const uint8_t *msg, size_t len)
{
	exchange_t *e = arg;
	(void)msg;
	(void)len;
	e->responses++;
	return e->responses < STREAM_MESSAGES ? 0 : 1;
}

/* An SOA query for test.example (opcode, transport), for peer p, unsigned, within SHORT_MS. */
static void exchange_init(exchange_t *e, const peer_t *p, enum requestor_transport transport)
{
	memset(e, 0, sizeof(*e));
	uint8_t apex[NAME_MAXLEN];
	name_from_text("test.example", NULL, apex);
	int len = request_write(e->query, sizeof(e->query), 0, DNS_OPCODE_QUERY, 0, apex,
				DNS_TYPE_SOA, DNS_SECTION_ANSWER, NULL);
	CU_ASSERT_FATAL(len > 0);
	e->p = (requestor_params_t){ .peer = (const struct sockaddr *)&p->addr,
				     .peer_len = sizeof(p->addr),
				     .query = e->query,
				     .query_len = (size_t)len,
				     .transport = transport,
				     .connect_ms = SHORT_MS,
				     .message_ms = SHORT_MS,
				     .total_ms = 10 * PEER_WAIT_MS,
				     .label = "test" };
}

/* Sign the request with the test key (a copy the exchange keeps till the end). */
static void exchange_sign(exchange_t *e)
{
	test_key(&e->key);
	e->p.key = &e->key;
}

static bool cancelled(void *arg)
{
	exchange_t *e = arg;
	return e->cancel_after_ms && requestor_now_ms() >= e->started + e->cancel_after_ms;
}

static void run_blocking(exchange_t *e)
{
	requestor_t r;
	CU_ASSERT_EQUAL_FATAL(requestor_init(&r, &e->p), 0);
	/* the key is the requestor's own copy: the caller's may go at once */
	sodium_memzero(&e->key, sizeof(e->key));
	e->started = requestor_now_ms();
	requestor_run(&r, cancelled, e);
	e->res = r.result;
	e->done = true;
	requestor_clear(&r);
}

/* The give-up's timer goes once the exchange is over, whichever came first. */
static void cancel_timer_close(exchange_t *e)
{
	if (!e->cancel_timer)
		return;
	uv_close((uv_handle_t *)e->cancel_timer, NULL);
	e->cancel_timer = NULL;
}

static void on_done(requestor_uv_t *ex, const requestor_result_t *res, void *arg)
{
	exchange_t *e = arg;
	(void)ex;
	CU_ASSERT_FALSE(e->done); /* once */
	e->res = *res;
	e->done = true;
	cancel_timer_close(e);
}

static void on_cancel_timer(uv_timer_t *t)
{
	exchange_t *e = t->data;
	cancel_timer_close(e);
	requestor_uv_cancel(e->ex);
}

static void run_libuv(exchange_t *e)
{
	uv_loop_t loop;
	uv_timer_t cancel;
	requestor_uv_t *ex = NULL;
	requestor_result_t res;
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
	int rc = requestor_uv_start(&loop, &e->p, on_done, e, &ex, &res);
	sodium_memzero(&e->key, sizeof(e->key));
	CU_ASSERT_EQUAL(rc, 0);
	if (rc < 0) {
		e->res = res;
		e->done = true;
	} else if (e->cancel_after_ms && !e->done) {
		uv_timer_init(&loop, &cancel);
		cancel.data = e;
		e->ex = ex;
		e->cancel_timer = &cancel;
		uv_timer_start(&cancel, on_cancel_timer, e->cancel_after_ms, 0);
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	/* every handle closed and the exchange freed: the loop closes */
	CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

/* Run e on driver d against a peer answering as script says. */
static void run(exchange_t *e, enum driver d, peer_t *p)
{
	if (d == BLOCKING)
		run_blocking(e);
	else
		run_libuv(e);
	peer_stop(p);
	CU_ASSERT_EQUAL(p->errors, 0);
}

/* The case for driver d: the peer, the exchange (UDP or TCP) ready to run. */
static void start(peer_t *p, enum script s, exchange_t *e, enum requestor_transport t)
{
	CU_ASSERT_EQUAL_FATAL(peer_start(p, s), 0);
	exchange_init(e, p, t);
}

/* An answer came: NOERROR, over the transport expected, with `ignored` messages passed over. */
static void expect_answer(const exchange_t *e, enum driver d, bool tcp, unsigned ignored)
{
	char text[256];
	if (e->res.error)
		fprintf(stderr, "  %s: %s\n", driver_names[d],
			requestor_result_text(&e->res, text, sizeof(text)));
	CU_ASSERT_EQUAL(e->res.error, 0);
	CU_ASSERT_EQUAL(e->res.rcode, DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(e->res.tcp, tcp);
	CU_ASSERT_EQUAL(e->res.ignored, ignored);
	CU_ASSERT(e->res.octets > DNS_HEADER_SIZE);
}

/* A UDP case whose answer comes after `ignored` decoys, on both drivers, signed or not. */
static void udp_case(enum script s, unsigned ignored, bool signed_)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		start(&p, s, &e, REQUESTOR_UDP);
		if (signed_)
			exchange_sign(&e);
		run(&e, (enum driver)d, &p);
		expect_answer(&e, (enum driver)d, false, ignored);
		CU_ASSERT_EQUAL(p.requests, 1);
	}
}

static void test_answer(void)
{
	udp_case(S_ANSWER, 0, false);
	/* signed: the answer verifies with the requestor's copy of the key */
	udp_case(S_ANSWER, 0, true);
}

/* RFC 5452 9.1: a message with another ID is not the answer; the exchange goes on. */
static void test_wrong_id(void)
{
	udp_case(S_WRONG_ID, 1, false);
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		start(&p, S_WRONG_ID_TCP, &e, REQUESTOR_TCP);
		exchange_sign(&e); /* the stray message is not fed to the TSIG chain */
		run(&e, (enum driver)d, &p);
		expect_answer(&e, (enum driver)d, true, 1);
	}
}

/* Another port's datagram never reaches the connected socket: REFUSED is never seen. */
static void test_wrong_peer(void)
{
	udp_case(S_WRONG_PEER, 0, false);
	udp_case(S_WRONG_PEER, 0, true);
}

static void test_wrong_question(void)
{
	udp_case(S_WRONG_QUESTION, 1, false);
}

/* TC: asked again over TCP where the caller allows; else the TC answer is the answer. */
static void test_tc_then_tcp(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		start(&p, S_TC, &e, REQUESTOR_UDP);
		e.p.tcp_on_tc = true;
		exchange_sign(&e);
		run(&e, (enum driver)d, &p);
		expect_answer(&e, (enum driver)d, true, 0);
		CU_ASSERT_FALSE(e.res.tc);
		CU_ASSERT_EQUAL(p.requests, 2);

		start(&p, S_TC, &e, REQUESTOR_UDP);
		run(&e, (enum driver)d, &p);
		expect_answer(&e, (enum driver)d, false, 0);
		CU_ASSERT_TRUE(e.res.tc);
		CU_ASSERT_EQUAL(p.requests, 1);
	}
}

/* The message deadline: silence is SHOAL_ETIMEOUT while receiving, over UDP and TCP. */
static void test_silence(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		for (int t = REQUESTOR_UDP; t <= REQUESTOR_TCP; t++) {
			peer_t p;
			exchange_t e;
			start(&p, t == REQUESTOR_UDP ? S_SILENCE : S_TCP_SILENCE, &e,
			      (enum requestor_transport)t);
			run(&e, (enum driver)d, &p);
			CU_ASSERT_EQUAL(e.res.error, SHOAL_ETIMEOUT);
			CU_ASSERT_EQUAL(e.res.stage, REQUESTOR_RECEIVE);
			CU_ASSERT_EQUAL(e.res.rcode, -1);
		}
	}
}

/*
 * A slow trickle: each whole message within message_ms cuts it off
 * (xfr-message-timeout); with progress, octets that keep coming keep it
 * going (issue 30: progress in octets, not messages).
 */
static void test_trickle(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		for (int progress = 0; progress <= 1; progress++) {
			peer_t p;
			exchange_t e;
			start(&p, S_TRICKLE, &e, REQUESTOR_TCP);
			e.p.message_ms = TRICKLE_MS;
			e.p.progress = progress;
			run(&e, (enum driver)d, &p);
			if (progress) {
				expect_answer(&e, (enum driver)d, true, 0);
			} else {
				CU_ASSERT_EQUAL(e.res.error, SHOAL_ETIMEOUT);
				CU_ASSERT_EQUAL(e.res.stage, REQUESTOR_RECEIVE);
				CU_ASSERT_FALSE(e.res.total_timeout); /* a message's deadline */
				CU_ASSERT(e.res.octets > 0); /* octets came, not the message */
			}
		}
		/* progress, but the whole exchange takes longer than total_ms: that ends it */
		peer_t p;
		exchange_t e;
		start(&p, S_TRICKLE, &e, REQUESTOR_TCP);
		e.p.message_ms = TRICKLE_MS;
		e.p.total_ms = 3 * TRICKLE_GAP_MS;
		e.p.progress = true;
		run(&e, (enum driver)d, &p);
		CU_ASSERT_EQUAL(e.res.error, SHOAL_ETIMEOUT);
		CU_ASSERT_TRUE(e.res.total_timeout);
		CU_ASSERT(e.res.octets > 0);
	}
}

/* A transfer-like stream: TSIG on the first and last, unsigned middles (RFC 8945 5.3.1). */
static void test_stream_tsig(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		for (int signed_ = 0; signed_ <= 1; signed_++) {
			peer_t p;
			exchange_t e;
			start(&p, S_STREAM, &e, REQUESTOR_TCP);
			e.p.on_response = count_response;
			e.p.arg = &e;
			if (signed_)
				exchange_sign(&e);
			run(&e, (enum driver)d, &p);
			expect_answer(&e, (enum driver)d, true, 0);
			CU_ASSERT_EQUAL(e.responses, STREAM_MESSAGES);
			CU_ASSERT_EQUAL(e.res.messages, STREAM_MESSAGES);
		}
	}
}

/* A damaged MAC over TCP ends the exchange: SHOAL_ETSIG, BADSIG, our finding. */
static void test_bad_mac(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		char text[256];
		start(&p, S_BAD_MAC, &e, REQUESTOR_TCP);
		exchange_sign(&e);
		run(&e, (enum driver)d, &p);
		CU_ASSERT_EQUAL(e.res.error, SHOAL_ETSIG);
		CU_ASSERT_EQUAL(e.res.tsig_error, DNS_TSIG_BADSIG);
		CU_ASSERT_FALSE(e.res.tsig_peer);
		CU_ASSERT_STRING_EQUAL(requestor_result_text(&e.res, text, sizeof(text)),
				       "a message's TSIG does not verify (BADSIG)");
	}
}

/* Over UDP a damaged MAC is discarded (and named), and the real answer taken. */
static void test_bad_mac_udp(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		start(&p, S_BAD_MAC_UDP, &e, REQUESTOR_UDP);
		exchange_sign(&e);
		run(&e, (enum driver)d, &p);
		expect_answer(&e, (enum driver)d, false, 0);
		CU_ASSERT_STRING_EQUAL(e.res.discarded, "NOERROR");
	}
}

/* NOTAUTH with the peer's TSIG error is the answer, named as h28 names it. */
static void test_notauth(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		char text[256];
		start(&p, S_NOTAUTH, &e, REQUESTOR_UDP);
		exchange_sign(&e);
		run(&e, (enum driver)d, &p);
		CU_ASSERT_EQUAL(e.res.error, 0);
		CU_ASSERT_EQUAL(e.res.rcode, DNS_RCODE_NOTAUTH);
		CU_ASSERT_EQUAL(e.res.tsig_error, DNS_TSIG_BADSIG);
		CU_ASSERT_TRUE(e.res.tsig_peer);
		CU_ASSERT_STRING_EQUAL(requestor_result_text(&e.res, text, sizeof(text)),
				       "answered NOTAUTH, TSIG error BADSIG");
	}
}

/* An error RCODE over TCP ends the exchange with it; on_response never sees it. */
static void test_refused(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		start(&p, S_REFUSED_TCP, &e, REQUESTOR_TCP);
		e.p.on_response = count_response;
		e.p.arg = &e;
		run(&e, (enum driver)d, &p);
		CU_ASSERT_EQUAL(e.res.error, 0);
		CU_ASSERT_EQUAL(e.res.rcode, DNS_RCODE_REFUSED);
		CU_ASSERT_STRING_EQUAL(e.res.answer, "REFUSED");
		CU_ASSERT_EQUAL(e.responses, 0);
	}
}

/* The peer closes mid-answer: SHOAL_EMALFORMED, after the message that came. */
static void test_cut(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		start(&p, S_CUT, &e, REQUESTOR_TCP);
		e.p.on_response = count_response;
		e.p.arg = &e;
		run(&e, (enum driver)d, &p);
		CU_ASSERT_EQUAL(e.res.error, SHOAL_EMALFORMED);
		CU_ASSERT_EQUAL(e.res.stage, REQUESTOR_RECEIVE);
		CU_ASSERT_EQUAL(e.responses, 1);
	}
}

/* Nobody listens: the cause is kept (-ECONNREFUSED) and the stage says the peer was not reached. */
static void test_refused_connection(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		char text[256];
		start(&p, S_SILENCE, &e, REQUESTOR_TCP);
		close(p.tcp); /* the port has no listener now */
		p.tcp = bind_loopback(SOCK_STREAM, ntohs(p.addr.sin_port), NULL);
		run(&e, (enum driver)d, &p);
		CU_ASSERT_EQUAL(e.res.error, -ECONNREFUSED);
		CU_ASSERT_EQUAL(e.res.stage, REQUESTOR_CONNECT);
		CU_ASSERT_STRING_EQUAL(requestor_result_text(&e.res, text, sizeof(text)),
				       "cannot connect: Connection refused");
	}
}

/* Given up: the blocking driver asks cancelled(); the libuv one is cancelled, done never called. */
static void test_cancel(void)
{
	for (int d = BLOCKING; d <= LIBUV; d++) {
		peer_t p;
		exchange_t e;
		start(&p, S_SILENCE, &e, REQUESTOR_UDP);
		e.p.message_ms = 10 * PEER_WAIT_MS;
		e.cancel_after_ms = SHORT_MS;
		run(&e, (enum driver)d, &p);
		if (d == BLOCKING) {
			CU_ASSERT_EQUAL(e.res.error, -ECANCELED);
		} else {
			CU_ASSERT_FALSE(e.done);
		}
	}
}

/* Bad requests are refused before anything is sent. */
static void test_bad_params(void)
{
	peer_t p;
	exchange_t e;
	requestor_t r;
	start(&p, S_SILENCE, &e, REQUESTOR_UDP);
	e.query[5] = 2; /* two questions */
	CU_ASSERT_EQUAL(requestor_init(&r, &e.p), SHOAL_EINVAL);
	e.query[5] = 1;
	struct sockaddr_storage unix_peer = { .ss_family = AF_UNIX };
	e.p.peer = (const struct sockaddr *)&unix_peer;
	CU_ASSERT_EQUAL(requestor_init(&r, &e.p), SHOAL_EINVAL);
	peer_stop(&p);
}

/* One context for both ends: its self-signed key is the one the pin names. */
static tls_ctx_t *tls_context(uint8_t pin[TLS_PIN_LEN])
{
	tls_creds_conf_t cf = { .common_name = "primary.test" };
	tls_creds_t *creds = NULL;
	tls_ctx_t *ctx = NULL;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &creds, err, sizeof(err)), 0);
	tls_creds_pin(creds, pin);
	CU_ASSERT_EQUAL_FATAL(tls_ctx_new(&ctx), 0);
	tls_ctx_set_creds(ctx, creds);
	return ctx;
}

/*
 * Over TLS (RFC 9103): the handshake, the server's key checked against a
 * pin, the request, and a stream of messages of which two wait decrypted
 * in the session (requestor_t.ready); a pin that is not the server's ends the exchange in the
 * handshake, saying which key the server showed.
 */
static void test_tls(void)
{
	uint8_t pin[TLS_PIN_LEN];
	tls_ctx_t *ctx = tls_context(pin);
	for (int d = BLOCKING; d <= LIBUV; d++) {
		for (int good = 0; good <= 1; good++) {
			peer_t p;
			exchange_t e;
			tls_auth_t auth = { .mode = TLS_AUTH_PIN, .pin_count = 1 };
			memcpy(auth.pins[0], pin, TLS_PIN_LEN);
			auth.pins[0][0] ^= good ? 0 : 1;
			CU_ASSERT_EQUAL_FATAL(peer_start(&p, S_TLS_STREAM), 0);
			p.tls = ctx;
			exchange_init(&e, &p, REQUESTOR_TLS);
			e.p.tls_ctx = ctx;
			e.p.tls_auth = &auth;
			/*
			 * Decrypted octets no socket event announces must not wait for a
			 * deadline: there is none before the cancel, which would end it.
			 */
			e.p.connect_ms = e.p.message_ms = 6 * PEER_WAIT_MS;
			e.cancel_after_ms = PEER_WAIT_MS / 2;
			e.p.on_response = count_response;
			e.p.arg = &e;
			run(&e, (enum driver)d, &p);
			if (good) {
				expect_answer(&e, (enum driver)d, true, 0);
				CU_ASSERT_EQUAL(e.res.messages, STREAM_MESSAGES);
				CU_ASSERT_EQUAL(p.requests, 1);
				continue;
			}
			char text[512], shown[TLS_PIN_TEXT_MAX];
			CU_ASSERT_EQUAL(e.res.error, SHOAL_ETLS);
			CU_ASSERT_EQUAL(e.res.stage, REQUESTOR_CONNECT);
			requestor_result_text(&e.res, text, sizeof(text));
			CU_ASSERT_PTR_NOT_NULL(strstr(text, "TLS handshake failed: "));
			CU_ASSERT_PTR_NOT_NULL(strstr(text, tls_pin_text(pin, shown)));
			CU_ASSERT_EQUAL(p.requests, 0);
		}
	}
	/* TLS without a context to start sessions from */
	peer_t p;
	exchange_t e;
	requestor_t r;
	start(&p, S_ANSWER, &e, REQUESTOR_TLS);
	CU_ASSERT_EQUAL(requestor_init(&r, &e.p), SHOAL_EINVAL);
	peer_stop(&p);
	tls_ctx_free(ctx);
}

static const unit_test_t tests[] = {
	UNIT_TEST(test_answer),      UNIT_TEST(test_wrong_id),
	UNIT_TEST(test_wrong_peer),  UNIT_TEST(test_wrong_question),
	UNIT_TEST(test_tc_then_tcp), UNIT_TEST(test_silence),
	UNIT_TEST(test_trickle),     UNIT_TEST(test_stream_tsig),
	UNIT_TEST(test_bad_mac),     UNIT_TEST(test_bad_mac_udp),
	UNIT_TEST(test_notauth),     UNIT_TEST(test_refused),
	UNIT_TEST(test_cut),         UNIT_TEST(test_refused_connection),
	UNIT_TEST(test_cancel),      UNIT_TEST(test_bad_params),
	UNIT_TEST(test_tls),         UNIT_END,
};

int main(int argc, char **argv)
{
	if (sodium_init() < 0)
		return 99;
	return unit_run(argc, argv, "requestor", tests);
}
