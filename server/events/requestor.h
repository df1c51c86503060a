/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The one requestor: outgoing DNS requests over UDP and TCP, deadlines, TSIG, answers matched. */
#ifndef SHOAL_SERVER_EVENTS_REQUESTOR_H
#define SHOAL_SERVER_EVENTS_REQUESTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "proto/name.h"
#include "proto/tsig.h"
#include "server/common/tls.h"

/*
 * One exchange: a request sent to one peer, and its answer of one message
 * (UDP, TCP) or of many (a zone transfer over TCP, RFC 7766 framing). The
 * core below is a state machine that does the non-blocking socket calls
 * and never waits: it says which descriptor and events to wait for and
 * until when, and is stepped again when they come. Two drivers wait for
 * it: requestor_run blocks in poll() (a transfer thread), requestor_uv_*
 * runs on a libuv loop (NOTIFY out on the main loop). Sockets, framing,
 * matching and TSIG are done here only; what an answer means is the
 * caller's (on_response).
 *
 * An answer is a message from the peer's address and port (a connected
 * socket: the kernel drops datagrams from any other), with QR set, the
 * request's ID and opcode, and its question or none (RFC 5936 2.2.1:
 * messages after the first may have none). Any other message is ignored,
 * not an error: counted in result.ignored, the exchange goes on.
 */

enum requestor_transport {
	REQUESTOR_UDP,
	REQUESTOR_TCP,
	REQUESTOR_TLS, /* TCP's framing inside TLS (RFC 7858, RFC 9103): tls_ctx, tls_auth */
};

/* Where an exchange was when it ended with an error (result.stage). */
enum requestor_stage {
	REQUESTOR_CONNECT, /* making the socket, connecting (TCP), the TLS handshake */
	REQUESTOR_SEND,    /* sending the request */
	REQUESTOR_RECEIVE, /* waiting for, reading or checking a response message */
	REQUESTOR_END,     /* after the last message: its TSIG (RFC 8945 5.3.1) */
};

/* requestor_step's answer: wait for r->fd, r->events, until r->deadline_ms. */
#define REQUESTOR_WAIT 1
/* How long a blocking driver waits at most before it asks whether to give up, in ms. */
#define REQUESTOR_TICK_MS 500
/*
 * The longest label kept for log lines ("NOTIFY example.org. to 192.0.2.1@53"):
 * a name as text, and an address with its port and some words.
 */
#define REQUESTOR_LABEL_MAX (NAME_TEXT_MAX + 400)

/*
 * A response message that matched, msg[0..len), its TSIG verified (or
 * accepted unsigned within RFC 8945 5.3.1's allowance). Only messages
 * with RCODE NOERROR come here: an error answer ends the exchange
 * (result.rcode). Returns 0 when more messages are due (TCP only), 1 when
 * the answer is complete, or a negative error, which ends the exchange
 * with that error. Over UDP the one answer ends it whatever is returned
 * but an error. On the driver's thread.
 */
typedef int (*requestor_response_fn)(void *arg, const uint8_t *msg, size_t len);

/* What to ask, whom, and how long to wait. Read by requestor_init only: nothing is kept. */
typedef struct requestor_params {
	const struct sockaddr *peer; /* address and port (an IPv6 scope id is kept) */
	socklen_t peer_len;
	/* the request, unsigned, with one question; its ID is replaced by a random one */
	const uint8_t *query;
	size_t query_len;
	const tsig_key_t *key; /* NULL: unsigned; else copied, and every response verified */
	enum requestor_transport transport;
	bool tcp_on_tc; /* an answer over UDP with TC: ask again over TCP (RFC 7766 5) */
	/*
	 * REQUESTOR_TLS: the context sessions start from (kept: it must
	 * outlive the exchange; Shoal's certificate is shown when the peer
	 * asks), and how the peer is checked (copied).
	 */
	tls_ctx_t *tls_ctx;
	const tls_auth_t *tls_auth;
	/*
	 * Deadlines in ms: to connect (TCP); to send the request and for each
	 * whole response message; for the whole exchange (0: none). With
	 * progress, message_ms runs from the last octet received instead, so
	 * an answer keeps going while octets arrive (total_ms still bounds it).
	 */
	unsigned connect_ms, message_ms, total_ms;
	bool progress;
	requestor_response_fn on_response; /* NULL: the first answer ends the exchange */
	void *arg;
	const char *label; /* names the exchange in log lines; NULL: the peer unnamed */
} requestor_params_t;

/* How an exchange ended. */
typedef struct requestor_result {
	/*
	 * 0: an answer came (rcode says which); else its cause, negative:
	 * -errno from a socket call (-ECONNREFUSED...), SHOAL_ETIMEOUT (a
	 * deadline), SHOAL_EMALFORMED (the peer closed before the answer's
	 * end, or framed a message shorter than a header), SHOAL_ETSIG (a
	 * response's TSIG; tsig_error says which), SHOAL_ENOMEM, -ECANCELED
	 * (given up by the caller), or on_response's error.
	 */
	int error;
	enum requestor_stage stage; /* where the error came */
	bool total_timeout;         /* SHOAL_ETIMEOUT came from total_ms, not a step's deadline */
	int rcode;                  /* the answer's RCODE; -1 before any answer */
	bool tc;                    /* the answer taken over UDP had TC (no tcp_on_tc) */
	bool tcp;                   /* the exchange went over TCP (asked so, or after TC) */
	/* SHOAL_ETLS: why the TLS session failed ("the server's key (pin ...) is none of ...") */
	char tls_why[TLS_HOSTNAME_MAX + 200];
	uint16_t tsig_error; /* after SHOAL_ETSIG, or with a NOTAUTH answer: the TSIG error */
	bool tsig_peer;      /* ... told by the peer's TSIG RR, not found by our check */
	char tsig_why[DNS_RCODE_TEXT_MAX]; /* ... its name ("BADSIG"), or "malformed" */
	/* an answer with an error: "REFUSED", "NOTAUTH, TSIG error BADSIG" (tsig_answer_text) */
	char answer[TSIG_ANSWER_TEXT_MAX];
	/* over UDP, the last answer discarded because its TSIG did not verify ("NOERROR") */
	char discarded[TSIG_ANSWER_TEXT_MAX];
	unsigned ignored;  /* messages that were not the answer: another ID, question... */
	unsigned messages; /* response messages taken */
	uint64_t octets;   /* octets received, ignored messages and TCP framing included */
} requestor_result_t;

/*
 * One exchange, in caller memory: requestor_init, requestor_step until it
 * returns 0, requestor_clear. One thread at a time. The fields above
 * `result` are for the driver, result for the caller; the rest is private.
 */
typedef struct requestor {
	int fd;               /* after REQUESTOR_WAIT: wait for this descriptor */
	short events;         /* to be ready for these (POLLIN or POLLOUT) */
	uint64_t deadline_ms; /* or until then (requestor_now_ms's clock) */
	/* ... or step again at once: decrypted octets wait, which no socket event says */
	bool ready;
	requestor_result_t result;

	/* private */
	int state;
	requestor_params_t p; /* a copy, pointing to the copies below */
	struct sockaddr_storage peer;
	enum requestor_transport transport; /* p's, or TCP after TC */
	tls_auth_t tls_auth;                /* p's, copied */
	tls_session_t *tls;                 /* REQUESTOR_TLS, once connected */
	bool tls_write;                     /* the session waits to write */
	uint64_t total_deadline;            /* 0: none, or not started */
	uint16_t id;
	uint8_t opcode;
	uint8_t qname[NAME_MAXLEN]; /* the question, lowercased: every answer's, if it has one */
	uint16_t qtype, qclass;
	char label[REQUESTOR_LABEL_MAX];
	tsig_key_t key;
	tsig_ctx_t tsig;
	uint8_t *query; /* the request unsigned (in the block of buf) */
	size_t query_len;
	uint8_t *buf;         /* 2 + DNS_TCP_MAX: the request to send, then each message */
	size_t out_len, done; /* sending: octets to send, sent */
	size_t need, have;    /* receiving over TCP: octets wanted (length first), read */
} requestor_t;

/* Now on the clock of deadline_ms (CLOCK_MONOTONIC), in ms. Any thread. */
uint64_t requestor_now_ms(void);

/*
 * Prepare an exchange from p (copied: the query, the peer, the key, the
 * TLS checks; p may go once this returns). Nothing is sent before
 * requestor_step. Returns 0; SHOAL_EINVAL for a query without exactly one
 * question, a peer of another family than IPv4 or IPv6, or TLS without
 * tls_ctx; SHOAL_ESPACE when the query signed
 * would not fit a message; SHOAL_ENOMEM. On error r needs no
 * requestor_clear. libsodium must be initialised (the ID is random).
 */
int requestor_init(requestor_t *r, const requestor_params_t *p);

/* The request's ID, chosen by requestor_init: the one every response must carry. */
uint16_t requestor_id(const requestor_t *r);

/*
 * Go as far as the sockets allow without waiting: make the socket and
 * connect (over TLS: the handshake), send, read and check what has come.
 * Returns REQUESTOR_WAIT when it must wait (for r->fd to be ready for
 * r->events, or until r->deadline_ms; a call before either is harmless;
 * not at all when r->ready), or 0 when the exchange ended: see r->result.
 * After 0, further calls return 0.
 */
int requestor_step(requestor_t *r);

/* End the exchange now with err (-ECANCELED when given up); its socket is closed. */
void requestor_abort(requestor_t *r, int err);

/* Close the socket, wipe the key and TSIG state, free the buffers. A cleared r may be cleared
 * again. */
void requestor_clear(requestor_t *r);

/*
 * Why an exchange did not bring a NOERROR answer, in words for a log
 * line: "cannot connect: Connection refused", "no answer in time", "given
 * up", "a message's TSIG does not verify (BADSIG)", "answered REFUSED"...
 * Written into buf[0..cap); returns buf. Any thread.
 */
const char *requestor_result_text(const requestor_result_t *res, char *buf, size_t cap);

/*
 * The blocking driver: step r until it ends, waiting in poll() and asking
 * cancelled(arg) (NULL: never) at least every REQUESTOR_TICK_MS; a yes
 * ends it with -ECANCELED. Returns r->result.error. r is still to be
 * cleared. Any thread that may block (a transfer thread).
 */
int requestor_run(requestor_t *r, bool (*cancelled)(void *arg), void *arg);

/* The libuv driver: an exchange on a loop. */
typedef struct requestor_uv requestor_uv_t;

/*
 * Called once when the exchange ends (not after requestor_uv_cancel), on
 * the loop's thread; res is valid during the call. ex is freed after it
 * returns: the callback must not cancel it.
 */
typedef void (*requestor_uv_done_fn)(requestor_uv_t *ex, const requestor_result_t *res, void *arg);

/*
 * Start the exchange p on loop: the request is sent (UDP) or the
 * connection begun (TCP) before this returns. Returns 0 and *out, then
 * done(arg) comes once; or a negative error (as result.error, with
 * nothing in flight and no call to come), and then res_out, if not NULL,
 * gets the result that says why. The loop's thread.
 */
int requestor_uv_start(uv_loop_t *loop, const requestor_params_t *p, requestor_uv_done_fn done,
		       void *arg, requestor_uv_t **out, requestor_result_t *res_out);

/*
 * Give up ex: done is never called; its socket and handles are closed and
 * it is freed by the loop's close callbacks (the loop must run once
 * more). The loop's thread.
 */
void requestor_uv_cancel(requestor_uv_t *ex);

#endif
