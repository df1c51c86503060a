/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Forwarding a secondary's dynamic updates to its primaries (RFC 2136 6) through the requestor. */
#include "config.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/events/requestor.h"
#include "server/events/update_forward.h"

/*
 * RFC 2136 6, update-forward: the primaries a secondary's updates go to,
 * and how long each may take to answer one, so a primary that does not
 * answer holds the update thread a bounded time.
 */
#define FORWARD_PRIMARIES_MAX 8
#define FORWARD_MESSAGE_MS    3000
#define FORWARD_TOTAL_MS      5000

/* A primary an update is forwarded to: copied from the configuration under the writer's lock. */
typedef struct forward_to {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool has_key;
	bool failed; /* did not answer with this plan: not asked again */
	tsig_key_t key;
	char text[ACL_TEXT_MAX];
} forward_to_t;

struct forward_plan {
	size_t count;
	forward_to_t to[FORWARD_PRIMARIES_MAX];
};

forward_plan_t *forward_plan_new(const conf_t *cfg, size_t i)
{
	forward_plan_t *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	const conf_zone_xfr_t *zx = conf_zone_xfr(cfg, i);
	for (size_t k = 0; k < zx->primaries.count; k++) {
		const acl_entry_t *e = &zx->primaries.entries[k];
		/* over TLS: the update thread holds no TLS context, so not forwarded to */
		if (e->tls || p->count == FORWARD_PRIMARIES_MAX)
			continue;
		forward_to_t *t = &p->to[p->count++];
		memcpy(&t->addr, &e->addr, e->addr_len);
		t->addr_len = e->addr_len;
		t->has_key = e->key != ACL_NOKEY;
		if (t->has_key)
			t->key = cfg->keys[e->key];
		snprintf(t->text, sizeof(t->text), "%s", e->text);
	}
	return p;
}

void forward_plan_free(forward_plan_t *p)
{
	if (!p)
		return;
	sodium_memzero(p, sizeof(*p));
	free(p);
}

/*
 * Ask primary t to apply msg[0..len): the primary's rcode, or -1 when it
 * did not answer (why says so).
 */
static int forward_to(const forward_to_t *t, const uint8_t *msg, size_t len, bool (*stop)(void *),
		      void *stop_arg, char *why, size_t cap)
{
	requestor_params_t p = {
		.peer = (const struct sockaddr *)&t->addr,
		.peer_len = t->addr_len,
		.query = msg,
		.query_len = len,
		.key = t->has_key ? &t->key : NULL,
		.transport = REQUESTOR_UDP,
		.tcp_on_tc = true, /* RFC 7766 5: a truncated answer, asked again over TCP */
		.connect_ms = FORWARD_MESSAGE_MS,
		.message_ms = FORWARD_MESSAGE_MS,
		.total_ms = FORWARD_TOTAL_MS,
		.label = t->text,
	};
	requestor_t req;
	int rc = requestor_init(&req, &p);
	if (rc < 0) {
		snprintf(why, cap, "%s", shoal_strerror(rc));
		return -1;
	}
	rc = requestor_run(&req, stop, stop_arg);
	if (rc < 0)
		requestor_result_text(&req.result, why, cap);
	int rcode = rc == 0 ? req.result.rcode : -1;
	requestor_clear(&req);
	return rcode;
}

int forward_update(forward_plan_t *p, const update_req_t *r, bool (*stop)(void *), void *stop_arg,
		   char *why, size_t cap)
{
	size_t len = r->len;
	tsig_rr_t rr;
	if (r->is_signed && tsig_find(r->pkt, r->len, &rr) == 0)
		len = rr.offset;
	uint8_t *msg = malloc(len);
	if (!msg) {
		snprintf(why, cap, "out of memory to forward it");
		return -1;
	}
	memcpy(msg, r->pkt, len);
	if (len < r->len) { /* the TSIG RR taken off: one record less in ARCOUNT (RFC 1035 4.1.1) */
		uint16_t ar = (uint16_t)(((msg[10] << 8) | msg[11]) - 1);
		msg[10] = (uint8_t)(ar >> 8);
		msg[11] = (uint8_t)ar;
	}
	snprintf(why, cap, "its primaries are over TLS, which forwarding does not use");
	int rcode = -1;
	for (size_t k = 0; rcode < 0 && k < p->count; k++) {
		forward_to_t *t = &p->to[k];
		if (!t->failed && (rcode = forward_to(t, msg, len, stop, stop_arg, why, cap)) < 0)
			t->failed = true;
	}
	free(msg);
	return rcode;
}
