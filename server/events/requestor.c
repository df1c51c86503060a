/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The one requestor: an exchange's state machine over non-blocking sockets, and its two drivers. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "proto/wire.h"
#include "server/common/log.h"
#include "server/events/requestor.h"

/*
 * Where an exchange is: its socket made, connected (over TLS: its
 * handshake done), the request sent, the answer read.
 */
enum { ST_OPEN, ST_CONNECTING, ST_HANDSHAKE, ST_SENDING, ST_RECEIVING, ST_DONE };

/* A state's step that must wait (for the socket, or between two messages). */
#define AGAIN 1
/* What a socket call came to besides octets: wait for the socket; the exchange ended. */
#define IO_WAIT  (-1)
#define IO_ENDED (-2)
/* Datagrams read in one step at most: a peer that floods ignored ones does not hold a loop. */
#define UDP_BATCH 64

uint64_t requestor_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* now + ms, never past the whole exchange's deadline. */
static uint64_t deadline_in(const requestor_t *r, unsigned ms)
{
	uint64_t d = requestor_now_ms() + ms;
	return r->total_deadline && r->total_deadline < d ? r->total_deadline : d;
}

/* TCP and TLS: a stream of framed messages (RFC 1035 4.2.2), not datagrams. */
static bool stream_transport(const requestor_t *r)
{
	return r->transport != REQUESTOR_UDP;
}

/* The stage a failure in state is told as. */
static enum requestor_stage stage_of(int state)
{
	if (state <= ST_HANDSHAKE)
		return REQUESTOR_CONNECT;
	return state == ST_SENDING ? REQUESTOR_SEND : REQUESTOR_RECEIVE;
}

/* The exchange is over: the socket goes at once (a descriptor is not held by a finished one). */
static int finish(requestor_t *r)
{
	tls_session_free(r->tls);
	r->tls = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->state = ST_DONE;
	return 0;
}

static int fail(requestor_t *r, enum requestor_stage stage, int err)
{
	r->result.error = err;
	r->result.stage = stage;
	return finish(r);
}

/* The request's question (exactly one) into r: what every answer must echo, if it has one. */
static int read_question(requestor_t *r, const uint8_t *q, size_t len)
{
	if (len < DNS_HEADER_SIZE || wire_get_u16(q + 4) != 1)
		return SHOAL_EINVAL;
	wire_t w;
	wire_init_read(&w, q, len);
	wire_skip(&w, DNS_HEADER_SIZE);
	if (name_unpack(&w, r->qname, true) < 0)
		return SHOAL_EINVAL;
	r->qtype = wire_read_u16(&w);
	r->qclass = wire_read_u16(&w);
	r->opcode = (uint8_t)((wire_get_u16(q + 2) & DNS_OPCODE_MASK) >> DNS_OPCODE_SHIFT);
	return w.err ? SHOAL_EINVAL : 0;
}

int requestor_init(requestor_t *r, const requestor_params_t *p)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->result.rcode = -1;
	int af = p->peer ? p->peer->sa_family : AF_UNSPEC;
	if ((af != AF_INET && af != AF_INET6) || p->peer_len > sizeof(r->peer) ||
	    read_question(r, p->query, p->query_len) < 0 ||
	    (p->transport == REQUESTOR_TLS && !p->tls_ctx))
		return SHOAL_EINVAL;
	if (p->query_len + (p->key ? TSIG_RR_MAX : 0) > DNS_TCP_MAX)
		return SHOAL_ESPACE;
	r->buf = malloc(2 + DNS_TCP_MAX + p->query_len);
	if (!r->buf)
		return SHOAL_ENOMEM;
	r->query = r->buf + 2 + DNS_TCP_MAX;
	r->query_len = p->query_len;
	memcpy(r->query, p->query, p->query_len);
	/* RFC 5452 9.2: an unpredictable ID (the source port is the kernel's, random too) */
	r->id = (uint16_t)randombytes_uniform(65536);
	r->query[0] = (uint8_t)(r->id >> 8);
	r->query[1] = (uint8_t)r->id;
	/* what p points to is copied too: the caller's may go while an answer is awaited */
	r->p = *p;
	memcpy(&r->peer, p->peer, p->peer_len);
	r->p.peer = (const struct sockaddr *)&r->peer;
	r->p.query = r->query;
	if (p->key) {
		r->key = *p->key;
		r->p.key = &r->key;
	}
	snprintf(r->label, sizeof(r->label), "%s", p->label ? p->label : "request");
	r->p.label = r->label;
	/* no checks given: opportunistic (RFC 9103 9.3.1) */
	r->tls_auth = p->tls_auth ? *p->tls_auth : (tls_auth_t){ .mode = TLS_AUTH_OPPORTUNISTIC };
	r->p.tls_auth = &r->tls_auth;
	r->transport = p->transport;
	r->result.tcp = stream_transport(r);
	return 0;
}

uint16_t requestor_id(const requestor_t *r)
{
	return r->id;
}

/* The request signed (afresh for each transport: a new TSIG transaction) and framed. */
static int sign_request(requestor_t *r)
{
	uint8_t *msg = r->buf + 2;
	int len = (int)r->query_len;
	memcpy(msg, r->query, r->query_len);
	if (r->p.key) {
		tsig_init(&r->tsig, &r->key, TSIG_FUDGE_DEFAULT);
		len = tsig_sign(&r->tsig, msg, r->query_len, DNS_TCP_MAX, (uint64_t)time(NULL));
		if (len < 0)
			return len;
	}
	r->buf[0] = (uint8_t)(len >> 8); /* TCP: the two-octet length (RFC 1035 4.2.2) */
	r->buf[1] = (uint8_t)len;
	r->out_len = (size_t)len + (stream_transport(r) ? 2 : 0);
	r->done = 0;
	return 0;
}

/* A TLS session failed (err): why, into the result; the exchange ends. */
static int tls_failed(requestor_t *r, enum requestor_stage stage, int err)
{
	if (err == SHOAL_ETLS)
		snprintf(r->result.tls_why, sizeof(r->result.tls_why), "%s", tls_error(r->tls));
	return fail(r, stage, err);
}

/*
 * Connected: over TLS the handshake comes first, within the connect
 * deadline; then the request, within the message deadline.
 */
static int to_sending(requestor_t *r)
{
	if (r->transport == REQUESTOR_TLS && !r->tls) {
		int rc = tls_session_client(r->p.tls_ctx, r->fd, &r->tls_auth, &r->tls);
		if (rc < 0)
			return fail(r, REQUESTOR_CONNECT, rc);
		r->state = ST_HANDSHAKE;
		r->deadline_ms = deadline_in(r, r->p.connect_ms);
		return 0;
	}
	r->state = ST_SENDING;
	r->deadline_ms = deadline_in(r, r->p.message_ms);
	return 0;
}

/* The TLS handshake: the server checked as tls_auth says (RFC 9103 9.3). */
static int handshaking(requestor_t *r)
{
	int rc = tls_handshake(r->tls);
	if (rc == -EAGAIN) {
		r->tls_write = tls_wants_write(r->tls);
		return AGAIN;
	}
	if (rc < 0)
		return tls_failed(r, REQUESTOR_CONNECT, rc);
	return to_sending(r);
}

/*
 * A socket of the transport, connected to the peer: for UDP that is what
 * drops datagrams from any other address or port, and what lets an ICMP
 * refusal come back as ECONNREFUSED.
 */
static int open_socket(requestor_t *r)
{
	bool tcp = stream_transport(r);
	r->fd = socket(r->peer.ss_family,
		       (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (r->fd < 0)
		return fail(r, REQUESTOR_CONNECT, -errno);
	int rc = sign_request(r);
	if (rc < 0)
		return fail(r, REQUESTOR_SEND, rc);
	if (!r->total_deadline && r->p.total_ms)
		r->total_deadline = requestor_now_ms() + r->p.total_ms;
	if (connect(r->fd, (const struct sockaddr *)&r->peer, r->p.peer_len) == 0)
		return to_sending(r);
	if (!tcp || errno != EINPROGRESS)
		return fail(r, REQUESTOR_CONNECT, -errno);
	r->state = ST_CONNECTING;
	r->deadline_ms = deadline_in(r, r->p.connect_ms);
	return AGAIN;
}

/* connect again tells how the one in progress went (0 or EISCONN: connected). */
static int connecting(requestor_t *r)
{
	if (connect(r->fd, (const struct sockaddr *)&r->peer, r->p.peer_len) == 0 ||
	    errno == EISCONN)
		return to_sending(r);
	if (errno == EALREADY || errno == EINPROGRESS || errno == EINTR)
		return AGAIN;
	return fail(r, REQUESTOR_CONNECT, -errno);
}

/* Wait for the next message of the answer (TCP: its length first). */
static int next_message(requestor_t *r)
{
	r->state = ST_RECEIVING;
	r->need = 2;
	r->have = 0;
	r->deadline_ms = deadline_in(r, r->p.message_ms);
	return AGAIN;
}

/* move_octets over TLS: a record sent (the one before flushed first) or read. */
static ssize_t tls_move(requestor_t *r, uint8_t *p, size_t len, bool out)
{
	ssize_t n;
	if (out) {
		/* len 0: only what the session holds */
		int rc = tls_flush(r->tls);
		n = rc < 0 ? rc : len ? tls_send(r->tls, p, len) : 0;
	} else {
		n = tls_recv(r->tls, p, len);
	}
	if (n >= 0)
		return n;
	if (n == -EAGAIN) {
		r->tls_write = tls_wants_write(r->tls);
		return IO_WAIT;
	}
	tls_failed(r, out ? REQUESTOR_SEND : REQUESTOR_RECEIVE, (int)n);
	return IO_ENDED;
}

/*
 * One send (out) or recv on r's socket: the octets moved (0 from recv: the
 * peer closed, or an empty datagram), IO_WAIT, or IO_ENDED when it failed
 * (the exchange ended with the cause).
 */
static ssize_t move_octets(requestor_t *r, uint8_t *p, size_t len, bool out)
{
	if (r->tls)
		return tls_move(r, p, len, out);
	for (;;) {
		ssize_t n = out ? send(r->fd, p, len, MSG_NOSIGNAL) : recv(r->fd, p, len, 0);
		if (n >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return IO_WAIT;
		if (errno != EINTR) {
			fail(r, out ? REQUESTOR_SEND : REQUESTOR_RECEIVE, -errno);
			return IO_ENDED;
		}
	}
}

/* What a state's step returns after move_octets gave n < 0. */
static int moved_none(ssize_t n)
{
	return n == IO_WAIT ? AGAIN : 0;
}

static int sending(requestor_t *r)
{
	uint8_t *out = stream_transport(r) ? r->buf : r->buf + 2;
	while (r->done < r->out_len) {
		ssize_t n = move_octets(r, out + r->done, r->out_len - r->done, true);
		if (n < 0)
			return moved_none(n);
		r->done += (size_t)n;
	}
	/* TLS: the last record may still be the session's to write */
	ssize_t n = r->tls ? move_octets(r, NULL, 0, true) : 0;
	if (n < 0)
		return moved_none(n);
	next_message(r);
	return 0;
}

/* Whether msg echoes the request's question, or has none (RFC 5936 2.2.1). */
static bool same_question(const requestor_t *r, const uint8_t *msg, size_t len)
{
	uint16_t count = wire_get_u16(msg + 4);
	if (count != 1)
		return count == 0;
	wire_t w;
	uint8_t name[NAME_MAXLEN];
	wire_init_read(&w, msg, len);
	wire_skip(&w, DNS_HEADER_SIZE);
	if (name_unpack(&w, name, true) < 0)
		return false;
	uint16_t type = wire_read_u16(&w), class = wire_read_u16(&w);
	return !w.err && type == r->qtype && class == r->qclass && name_equal(name, r->qname);
}

/* Whether msg answers this request: QR, the ID, the opcode, the question (RFC 5452 9.1). */
static bool is_answer(const requestor_t *r, const uint8_t *msg, size_t len)
{
	if (len < DNS_HEADER_SIZE)
		return false;
	uint16_t flags = wire_get_u16(msg + 2);
	return wire_get_u16(msg) == r->id && (flags & DNS_FLAG_QR) &&
	       ((flags & DNS_OPCODE_MASK) >> DNS_OPCODE_SHIFT) == r->opcode &&
	       same_question(r, msg, len);
}

/* An answer with an error RCODE ends the exchange: the caller reads it in result. */
static int error_answer(requestor_t *r, const uint8_t *msg, size_t len)
{
	r->result.rcode = msg[3] & DNS_RCODE_MASK;
	r->result.messages++;
	tsig_answer_text(msg, len, r->result.answer);
	return finish(r);
}

/* What a TSIG check (err) found, into the result. */
static void tsig_outcome(requestor_t *r, const tsig_ctx_t *t, int err)
{
	char why[DNS_RCODE_TEXT_MAX];
	r->result.tsig_error = t->error;
	r->result.tsig_peer = t->peer_error;
	if (err < 0)
		snprintf(r->result.tsig_why, sizeof(r->result.tsig_why), "%s",
			 tsig_verify_text(t, err, why));
}

/* A TSIG check that failed (err) ends the exchange; result says why. */
static int tsig_failed(requestor_t *r, enum requestor_stage stage, int err)
{
	tsig_outcome(r, &r->tsig, err);
	return fail(r, stage, SHOAL_ETSIG);
}

/*
 * A message of the answer with RCODE NOERROR, its TSIG checked: to the
 * caller. The last one (the caller says so; over UDP, the one) must be
 * signed (RFC 8945 5.3.1).
 */
static int taken(requestor_t *r, const uint8_t *msg, size_t len)
{
	bool udp = !stream_transport(r);
	r->result.rcode = DNS_RCODE_NOERROR;
	r->result.messages++;
	int rc = r->p.on_response ? r->p.on_response(r->p.arg, msg, len) : 1;
	if (rc < 0)
		return fail(r, REQUESTOR_RECEIVE, rc);
	if (rc == 0 && !udp)
		return next_message(r);
	if (r->p.key && !udp && (rc = tsig_verify_end(&r->tsig)) < 0)
		return tsig_failed(r, REQUESTOR_END, rc);
	return finish(r);
}

/*
 * Over UDP a forged or damaged answer costs nothing to send, so one whose
 * TSIG does not verify is discarded and another awaited (RFC 8945 5.3),
 * said once per answer; but NOTAUTH is the answer: a peer tells a TSIG
 * failure so, unsigned for BADSIG and BADKEY (5.3.2). Checked on a copy of
 * the transaction, so a discarded answer leaves it as it was. True when
 * msg is the answer.
 */
static bool udp_tsig_ok(requestor_t *r, const uint8_t *msg, size_t len)
{
	tsig_ctx_t c = r->tsig;
	int rc = tsig_verify(&c, msg, len, NULL, (uint64_t)time(NULL));
	if (rc == 0)
		rc = tsig_verify_end(&c);
	bool taken_ = rc == 0 || (msg[3] & DNS_RCODE_MASK) == DNS_RCODE_NOTAUTH;
	if (taken_) {
		r->tsig = c;
		tsig_outcome(r, &c, rc);
	} else {
		char why[DNS_RCODE_TEXT_MAX];
		tsig_answer_text(msg, len, r->result.discarded);
		log_warning("%s: an answer (%s) whose TSIG does not verify (%s): discarded, "
			    "waiting for another",
			    r->label, r->result.discarded, tsig_verify_text(&c, rc, why));
	}
	sodium_memzero(&c, sizeof(c));
	return taken_;
}

/* TC over UDP where the caller allows: the same request again over TCP (RFC 7766 5). */
static int over_tcp(requestor_t *r)
{
	close(r->fd);
	r->fd = -1;
	r->transport = REQUESTOR_TCP;
	r->result.tcp = true;
	r->state = ST_OPEN;
	return 0;
}

/* One datagram: ignored, the answer, or TC that sends the request over TCP. */
static int datagram(requestor_t *r, const uint8_t *msg, size_t len)
{
	if (!is_answer(r, msg, len)) {
		r->result.ignored++;
		return AGAIN;
	}
	bool tc = wire_get_u16(msg + 2) & DNS_FLAG_TC;
	if (tc && r->p.tcp_on_tc)
		return over_tcp(r);
	if (r->p.key && !udp_tsig_ok(r, msg, len))
		return AGAIN;
	r->result.tc = tc;
	if ((msg[3] & DNS_RCODE_MASK) != DNS_RCODE_NOERROR)
		return error_answer(r, msg, len);
	return taken(r, msg, len);
}

static int receiving_udp(requestor_t *r)
{
	for (int k = 0; k < UDP_BATCH; k++) {
		ssize_t n = move_octets(r, r->buf, DNS_TCP_MAX, false);
		if (n < 0)
			return moved_none(n);
		r->result.octets += (uint64_t)n;
		int rc = datagram(r, r->buf, (size_t)n);
		if (rc != AGAIN)
			return rc;
	}
	return AGAIN;
}

/*
 * One whole TCP message. An error RCODE ends the exchange before any TSIG
 * check: a peer's refusal may come unsigned (RFC 8945 5.3.2). Otherwise a
 * TSIG that does not verify ends it: the connection is the peer's own.
 */
static int tcp_message(requestor_t *r, const uint8_t *msg, size_t len)
{
	if (!is_answer(r, msg, len)) {
		r->result.ignored++;
		return next_message(r);
	}
	if ((msg[3] & DNS_RCODE_MASK) != DNS_RCODE_NOERROR)
		return error_answer(r, msg, len);
	int rc = r->p.key ? tsig_verify(&r->tsig, msg, len, NULL, (uint64_t)time(NULL)) : 0;
	if (rc < 0)
		return tsig_failed(r, REQUESTOR_RECEIVE, rc);
	return taken(r, msg, len);
}

/*
 * Read the answer's messages, each two octets of length first (RFC 1035
 * 4.2.2). Returns AGAIN after each message, so a driver looks at its
 * clock and its cancel flag between two, however fast they come.
 */
static int receiving_tcp(requestor_t *r)
{
	for (;;) {
		ssize_t n = move_octets(r, r->buf + r->have, r->need - r->have, false);
		if (n < 0)
			return moved_none(n);
		if (n == 0) /* the peer closed before the answer's end */
			return fail(r, REQUESTOR_RECEIVE, SHOAL_EMALFORMED);
		r->have += (size_t)n;
		r->result.octets += (uint64_t)n;
		if (r->p.progress)
			r->deadline_ms = deadline_in(r, r->p.message_ms);
		if (r->have < r->need)
			continue;
		if (r->need > 2)
			return tcp_message(r, r->buf + 2, r->have - 2);
		r->need = 2 + (size_t)wire_get_u16(r->buf);
		if (r->need < 2 + DNS_HEADER_SIZE)
			return fail(r, REQUESTOR_RECEIVE, SHOAL_EMALFORMED);
	}
}

/* The state's next move: 0 when it changed, AGAIN when it must wait. */
static int advance(requestor_t *r)
{
	switch (r->state) {
	case ST_OPEN:
		return open_socket(r);
	case ST_CONNECTING:
		return connecting(r);
	case ST_HANDSHAKE:
		return handshaking(r);
	case ST_SENDING:
		return sending(r);
	default:
		assert(r->state == ST_RECEIVING);
		return stream_transport(r) ? receiving_tcp(r) : receiving_udp(r);
	}
}

int requestor_step(requestor_t *r)
{
	while (r->state != ST_DONE) {
		if (advance(r) != AGAIN)
			continue;
		if (r->state == ST_DONE)
			break;
		uint64_t now = requestor_now_ms();
		if (now >= r->deadline_ms) {
			r->result.total_timeout = r->total_deadline && now >= r->total_deadline;
			fail(r, stage_of(r->state), SHOAL_ETIMEOUT);
			break;
		}
		if (r->tls && r->state != ST_CONNECTING)
			r->events = r->tls_write ? POLLOUT : POLLIN;
		else
			r->events = r->state == ST_RECEIVING ? POLLIN : POLLOUT;
		/* the next message may be decrypted already: no socket event would come */
		r->ready = r->tls && tls_pending(r->tls) > 0;
		return REQUESTOR_WAIT;
	}
	return 0;
}

void requestor_abort(requestor_t *r, int err)
{
	if (r->state != ST_DONE)
		fail(r, stage_of(r->state), err);
}

void requestor_clear(requestor_t *r)
{
	tls_session_free(r->tls);
	r->tls = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->state = ST_DONE;
	sodium_memzero(&r->key, sizeof(r->key));
	sodium_memzero(&r->tsig, sizeof(r->tsig));
	free(r->buf);
	r->buf = NULL;
	r->query = NULL;
}

/* Why a response's TSIG failed: our finding, or what the peer's TSIG RR says. */
static void tsig_text(const requestor_result_t *res, char *buf, size_t cap)
{
	if (res->stage == REQUESTOR_END)
		snprintf(buf, cap, "the last message is not signed");
	else
		snprintf(buf, cap, "%s (%s)",
			 res->tsig_peer ? "a message's TSIG RR says an error"
					: "a message's TSIG does not verify",
			 res->tsig_why);
}

const char *requestor_result_text(const requestor_result_t *res, char *buf, size_t cap)
{
	const char *why = shoal_strerror(res->error);
	if (!res->error)
		snprintf(buf, cap, "answered %s", res->rcode > 0 ? res->answer : "NOERROR");
	else if (res->error == SHOAL_ETLS)
		snprintf(buf, cap, "TLS %s: %s",
			 res->stage == REQUESTOR_CONNECT ? "handshake failed" : "session failed",
			 res->tls_why);
	else if (res->stage == REQUESTOR_CONNECT)
		snprintf(buf, cap, "cannot connect: %s", why);
	else if (res->stage == REQUESTOR_SEND)
		snprintf(buf, cap, "cannot send the request: %s", why);
	else if (res->error == -ECANCELED)
		snprintf(buf, cap, "given up");
	else if (res->error == SHOAL_ETSIG)
		tsig_text(res, buf, cap);
	else if (res->error == SHOAL_ETIMEOUT)
		snprintf(buf, cap, "no answer in time");
	else if (res->error == SHOAL_EMALFORMED)
		snprintf(buf, cap, "the answer stopped before its end");
	else
		snprintf(buf, cap, "%s", why);
	return buf;
}

/* ---- the blocking driver ---- */

/* Wait until r's descriptor is ready or its deadline passed: 0, or -ECANCELED, or -errno. */
static int wait_ready(const requestor_t *r, bool (*cancelled)(void *arg), void *arg)
{
	for (;;) {
		if (cancelled && cancelled(arg))
			return -ECANCELED;
		if (r->ready)
			return 0;
		uint64_t now = requestor_now_ms();
		if (now >= r->deadline_ms)
			return 0; /* the step sees it */
		uint64_t ms = r->deadline_ms - now;
		struct pollfd p = { .fd = r->fd, .events = r->events };
		int n = poll(&p, 1, ms > REQUESTOR_TICK_MS ? REQUESTOR_TICK_MS : (int)ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

int requestor_run(requestor_t *r, bool (*cancelled)(void *arg), void *arg)
{
	while (requestor_step(r) == REQUESTOR_WAIT) {
		int rc = wait_ready(r, cancelled, arg);
		if (rc < 0)
			requestor_abort(r, rc);
	}
	return r->result.error;
}

/* ---- the libuv driver ---- */

struct requestor_uv {
	requestor_t core;
	uv_loop_t *loop;
	uv_poll_t poll[2]; /* one per socket: a TC answer moves the exchange to a second */
	int polls;         /* poll handles made */
	int watched;       /* the descriptor poll[polls - 1] watches */
	uv_timer_t timer;  /* the core's deadline */
	unsigned handles;  /* handles not closed yet: the last close frees */
	requestor_uv_done_fn done;
	void *arg;
};

static void uv_on_closed(uv_handle_t *h)
{
	requestor_uv_t *ex = h->data;
	if (--ex->handles == 0)
		free(ex);
}

/*
 * Close the handles, then the socket: uv_close takes the descriptor out of
 * epoll while it is still open, so a number reused at once is not touched.
 */
static void uv_release(requestor_uv_t *ex)
{
	for (int k = 0; k < ex->polls; k++)
		if (!uv_is_closing((uv_handle_t *)&ex->poll[k]))
			uv_close((uv_handle_t *)&ex->poll[k], uv_on_closed);
	uv_close((uv_handle_t *)&ex->timer, uv_on_closed);
	requestor_clear(&ex->core);
}

static void uv_continue(requestor_uv_t *ex);

static void uv_on_poll(uv_poll_t *h, int status, int events)
{
	(void)status; /* an error shows in the socket call the step makes */
	(void)events;
	uv_continue(h->data);
}

static void uv_on_timer(uv_timer_t *t)
{
	uv_continue(t->data);
}

/* Watch what the core waits for: a poll handle for its socket (a new one for a new socket). */
static int uv_arm(requestor_uv_t *ex)
{
	const requestor_t *r = &ex->core;
	if (r->fd != ex->watched) {
		/* stopped before the step; its socket, if closed, is out of epoll already */
		if (ex->polls)
			uv_close((uv_handle_t *)&ex->poll[ex->polls - 1], uv_on_closed);
		assert(ex->polls < 2);
		uv_poll_t *p = &ex->poll[ex->polls];
		int e = uv_poll_init(ex->loop, p, r->fd);
		if (e < 0)
			return e;
		p->data = ex;
		ex->polls++;
		ex->handles++;
		ex->watched = r->fd;
	}
	uint64_t now = requestor_now_ms();
	uint64_t wait = r->ready ? 0 : r->deadline_ms > now ? r->deadline_ms - now : 0;
	uv_timer_start(&ex->timer, uv_on_timer, wait, 0);
	return uv_poll_start(&ex->poll[ex->polls - 1],
			     r->events & POLLIN ? UV_READABLE : UV_WRITABLE, uv_on_poll);
}

/*
 * Step the core and wait again, or end: done, then the handles go. The
 * poll is stopped first: the step may close its socket (TC: over TCP).
 */
static void uv_continue(requestor_uv_t *ex)
{
	if (ex->polls)
		uv_poll_stop(&ex->poll[ex->polls - 1]);
	if (requestor_step(&ex->core) == REQUESTOR_WAIT) {
		int e = uv_arm(ex);
		if (e == 0)
			return;
		requestor_abort(&ex->core, e);
	}
	uv_timer_stop(&ex->timer);
	ex->done(ex, &ex->core.result, ex->arg);
	uv_release(ex);
}

/* The result of an exchange that did not start. */
static int uv_not_started(requestor_result_t *res_out, const requestor_result_t *res)
{
	if (res_out)
		*res_out = *res;
	return res->error;
}

int requestor_uv_start(uv_loop_t *loop, const requestor_params_t *p, requestor_uv_done_fn done,
		       void *arg, requestor_uv_t **out, requestor_result_t *res_out)
{
	*out = NULL;
	requestor_uv_t *ex = calloc(1, sizeof(*ex));
	requestor_result_t none = { .error = SHOAL_ENOMEM, .rcode = -1 };
	if (!ex)
		return uv_not_started(res_out, &none);
	int rc = requestor_init(&ex->core, p);
	if (rc < 0) {
		free(ex);
		none.error = rc;
		return uv_not_started(res_out, &none);
	}
	ex->loop = loop;
	ex->done = done;
	ex->arg = arg;
	ex->watched = -1;
	uv_timer_init(loop, &ex->timer);
	ex->timer.data = ex;
	ex->handles = 1;
	if (requestor_step(&ex->core) == REQUESTOR_WAIT) {
		rc = uv_arm(ex);
		if (rc < 0)
			requestor_abort(&ex->core, rc);
	} else if (!ex->core.result.error) {
		/* answered at once: done comes from the loop all the same, never from here */
		uv_timer_start(&ex->timer, uv_on_timer, 0, 0);
	}
	rc = ex->core.result.error;
	if (rc < 0) {
		uv_not_started(res_out, &ex->core.result);
		uv_release(ex);
		return rc;
	}
	*out = ex;
	return 0;
}

void requestor_uv_cancel(requestor_uv_t *ex)
{
	uv_timer_stop(&ex->timer);
	uv_release(ex);
}
