/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Dynamic updates (RFC 2136) on the update thread: queued by zone, applied, published, answered. */
#ifndef SHOAL_SERVER_EVENTS_UPDATE_H
#define SHOAL_SERVER_EVENTS_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/tsig.h"
#include "server/common/addr.h"
#include "server/events/reload.h"

/*
 * Updates to one zone applied in one step (one publication). The bounds an
 * operator sets are options: update-max-inflight, update-max-inflight-total,
 * update-max-records, update-rate-per-key (server/conf/conf.h).
 */
#define UPDATE_BATCH_MAX 64
/* The longest answer: header, zone, OPT and a TSIG RR with the longest names. */
#define UPDATE_ANSWER_MAX 2048

/*
 * Where an update's answer goes, made by the transport that received it
 * (UDP: the worker's socket; TCP: the connection, on the worker's loop).
 * send is called once, on the update thread, with the answer, or with
 * len 0 when there is none to send (the server stops); the reply is then
 * its maker's again.
 */
typedef struct update_reply update_reply_t;
struct update_reply {
	void (*send)(update_reply_t *r, const uint8_t *msg, size_t len);
};

/*
 * One UPDATE a worker let in (a zone of ours, a primary, a rule for its
 * key or address, its TSIG verified), with what its answer needs: a copy
 * of the message, of the key and of the TSIG state, so a reconfig may
 * free the configuration meanwhile.
 */
typedef struct update_req {
	struct update_req *next;
	update_reply_t *reply;
	struct sockaddr_storage peer;
	char peer_text[ADDR_TEXT_MAX + 16];
	bool is_signed;
	tsig_key_t key; /* the request's, when signed: tsig.key points here */
	tsig_ctx_t tsig;
	uint16_t limit;     /* the answer's largest size */
	uint16_t edns_size; /* the server's, for the answer's OPT */
	bool udp;           /* came over UDP, where a client retransmits: set by the caller */
	uint64_t retry_id;  /* udp: updater_post's keyed hash of peer and message; else 0 */
	uint8_t apex[NAME_MAXLEN];
	size_t len;
	uint8_t pkt[];
} update_req_t;

/*
 * A request for pkt[0..len) from peer for the zone apex (lowercase wire),
 * verified with tsig (NULL: unsigned; its key is copied), answered
 * through reply. NULL when out of memory. Any thread (a worker's:
 * an UPDATE is no query, and is bounded by the queue).
 */
update_req_t *update_req_new(const uint8_t *pkt, size_t len, const uint8_t *apex,
			     const struct sockaddr *peer, const tsig_ctx_t *tsig, uint16_t limit,
			     uint16_t edns_size, update_reply_t *reply);

/* Free r (its key wiped), without answering. */
void update_req_free(update_req_t *r);

typedef struct updater updater_t;

/* What the update thread works with, the caller's, kept until updater_free. */
typedef struct updater_env {
	reload_t *reload; /* where zones are changed and published (reload_change_zone) */
	/* after each publication, on the update thread (NOTIFY out follows); must not block */
	void (*published)(void *arg);
	void *published_arg;
} updater_env_t;

/*
 * Start the update thread (shoald-update). Returns 0 and *out, or
 * SHOAL_ENOMEM or -errno. Main thread.
 */
int updater_new(const updater_env_t *env, updater_t **out);

/*
 * Queue r for the update thread, which owns it from now on. Returns 0;
 * SHOAL_EEXIST when r came over UDP and the same message from the same
 * address and port is in flight (a client's retransmit: the answer to the
 * first goes to it, so the caller drops r without an answer); SHOAL_ESPACE
 * when total_max requests are in flight (queued or being applied), or
 * zone_max for r's zone (the caller answers and frees r). Any thread: a
 * short lock, no allocation. u may be NULL (SHOAL_ESPACE).
 */
int updater_post(updater_t *u, update_req_t *r, size_t zone_max, size_t total_max);

/*
 * Whether one more update from the sender of r (its TSIG key's name when
 * signed, else its address) stays within rate updates in this second of
 * CLOCK_MONOTONIC; counts it when it does. per_zone: counted apart for
 * r's zone (a zone's own update-rate-per-key), else with the sender's
 * updates to every zone without its own. rate 0: always. Any thread: a
 * short lock, no allocation. u may be NULL (true).
 */
bool updater_rate_ok(updater_t *u, const update_req_t *r, uint32_t rate, bool per_zone);

/*
 * Stop the thread, before the workers stop: the requests queued go
 * unanswered (their clients ask again), the zone files not written yet
 * are written now (each once the zone set's lock is had; a reload that
 * holds it past 200 ms leaves the file as it is). Then free. Main
 * thread; NULL is fine.
 */
void updater_free(updater_t *u);

#endif
