/* SPDX-License-Identifier: GPL-3.0-or-later */
/* An UPDATE's answer from the update thread: sent on the worker's UDP socket, or its TCP stream. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "server/query/update.h"

/* ---- UDP: the worker's socket, from the update thread (sendto is one system call) ---- */

typedef struct udp_reply {
	update_reply_t base;
	int fd;
	struct sockaddr_storage peer;
	socklen_t peer_len;
} udp_reply_t;

static void udp_send(update_reply_t *base, const uint8_t *msg, size_t len)
{
	udp_reply_t *r = (udp_reply_t *)base;
	/* non-blocking: a full socket buffer drops it, as any answer, and the client asks again */
	if (len)
		(void)sendto(r->fd, msg, len, MSG_DONTWAIT, (const struct sockaddr *)&r->peer,
			     r->peer_len);
	free(r);
}

update_reply_t *update_reply_udp(int fd, const struct sockaddr *peer)
{
	udp_reply_t *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->base.send = udp_send;
	r->fd = fd;
	r->peer_len = peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						  : sizeof(struct sockaddr_in);
	memcpy(&r->peer, peer, r->peer_len);
	return &r->base;
}

/* ---- TCP: a stream the connection waits on until the update thread rings its loop ---- */

enum tcp_reply_state {
	TCP_REPLY_WAITING = 0, /* the update thread has it */
	TCP_REPLY_READY = 1,   /* msg holds the answer (len 0: none) */
	TCP_REPLY_SENT = 2,    /* the connection took it */
};

typedef struct tcp_reply {
	update_reply_t base;
	tcp_stream_t stream;
	int state;      /* atomic: enum tcp_reply_state */
	int refs;       /* atomic: the update thread's and the connection's */
	waker_t *waker; /* the connection's loop's, referenced: rung once the answer is in msg */
	size_t len;
	uint8_t msg[UPDATE_ANSWER_MAX];
} tcp_reply_t;

static tcp_reply_t *of_stream(tcp_stream_t *s)
{
	return (tcp_reply_t *)(void *)((char *)s - offsetof(tcp_reply_t, stream));
}

static void tcp_reply_unref(tcp_reply_t *r)
{
	if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(r);
}

static void tcp_send(update_reply_t *base, const uint8_t *msg, size_t len)
{
	tcp_reply_t *r = (tcp_reply_t *)base;
	r->len = msg && len <= sizeof(r->msg) ? len : 0;
	if (r->len) /* none: the connection is told there is no answer (msg may be NULL) */
		memcpy(r->msg, msg, r->len);
	__atomic_store_n(&r->state, TCP_REPLY_READY, __ATOMIC_RELEASE);
	waker_t *w = r->waker;
	r->waker = NULL;
	waker_wake(w);
	waker_unref(w);
	tcp_reply_unref(r);
}

static int tcp_next(tcp_stream_t *s, uint8_t *out, size_t cap)
{
	tcp_reply_t *r = of_stream(s);
	int state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	if (state == TCP_REPLY_WAITING)
		return TCP_STREAM_WAIT;
	if (state == TCP_REPLY_SENT || r->len == 0 || r->len > cap)
		return 0;
	memcpy(out, r->msg, r->len);
	__atomic_store_n(&r->state, TCP_REPLY_SENT, __ATOMIC_RELAXED);
	return (int)r->len;
}

static void tcp_end(tcp_stream_t *s, bool complete)
{
	(void)complete;
	tcp_reply_unref(of_stream(s));
}

update_reply_t *update_reply_tcp(tcp_stream_t **stream, waker_t *waker)
{
	tcp_reply_t *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->base.send = tcp_send;
	r->stream = (tcp_stream_t){ .next = tcp_next, .end = tcp_end };
	r->refs = 2;
	r->waker = waker ? waker_ref(waker) : NULL;
	*stream = &r->stream;
	return &r->base;
}
