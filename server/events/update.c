/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The update thread: UPDATEs queued by zone, checked, applied together, published, answered. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/query.h"
#include "proto/response.h"
#include "proto/update.h"
#include "server/common/log.h"
#include "server/common/thread.h"
#include "server/conf/conf.h"
#include "server/conf/update.h"
#include "server/events/requestor.h"
#include "server/events/update.h"
#include "server/events/update_forward.h"
#include "zone/apply.h"
#include "zone/journal.h"
#include "zone/sign_version.h"
#include "zone/update.h"
#include "zone/write.h"

/*
 * update-rate-per-key's counters: a table of senders (a hash of the key's
 * name or of the address) each with the second its count is for, looked
 * up in a short probe from the hash's slot.
 */
#define RATE_SLOTS 1024
#define RATE_PROBE 8

typedef struct rate_slot {
	uint64_t id; /* 0: free */
	int64_t second;
	uint32_t count;
} rate_slot_t;
/* Log lines of refusals and malformed updates a second. */
#define UPDATE_LOG_PER_S 10

/* A zone whose file is to be written: when (ms, CLOCK_MONOTONIC), its apex. */
typedef struct flush_due {
	struct flush_due *next;
	int64_t due;
	uint8_t apex[NAME_MAXLEN];
} flush_due_t;

struct updater {
	updater_env_t env;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	update_req_t *head, *tail; /* lock */
	size_t queued;             /* lock */
	/* lock: the batch being applied, counted as in flight for its zone, its retry_ids */
	uint8_t busy_apex[NAME_MAXLEN];
	size_t busy;
	uint64_t busy_ids[UPDATE_BATCH_MAX];
	int stop;             /* atomic; lock to wait on */
	flush_due_t *flushes; /* the thread's own */
	log_limit_t refusals; /* the thread's own */
	update_rr_t rr;       /* scratch for the walks */
	/* lock: update-rate-per-key's counters, their hash's secret key */
	rate_slot_t rates[RATE_SLOTS];
	uint8_t rate_key[crypto_shorthash_KEYBYTES];
	uint8_t retry_key[crypto_shorthash_KEYBYTES]; /* retry_id's: set once, read-only */
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- requests ---- */

update_req_t *update_req_new(const uint8_t *pkt, size_t len, const uint8_t *apex,
			     const struct sockaddr *peer, const tsig_ctx_t *tsig, uint16_t limit,
			     uint16_t edns_size, update_reply_t *reply)
{
	update_req_t *r = calloc(1, sizeof(*r) + len);
	if (!r)
		return NULL;
	r->reply = reply;
	memcpy(&r->peer, peer,
	       peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					   : sizeof(struct sockaddr_in));
	addr_text(peer, r->peer_text, sizeof(r->peer_text));
	if (tsig) {
		r->is_signed = true;
		r->tsig = *tsig;
		if (tsig->key) {
			r->key = *tsig->key;
			r->tsig.key = &r->key;
		}
	}
	r->limit = limit;
	r->edns_size = edns_size;
	memcpy(r->apex, apex, name_length(apex));
	r->len = len;
	memcpy(r->pkt, pkt, len);
	return r;
}

void update_req_free(update_req_t *r)
{
	if (!r)
		return;
	sodium_memzero(&r->key, sizeof(r->key));
	sodium_memzero(&r->tsig, sizeof(r->tsig));
	free(r);
}

/* The answer to r with rcode: the zone section echoed, signed when r was (RFC 8945 5.3). */
static size_t answer_build(update_req_t *r, uint16_t rcode, uint8_t *out, size_t cap)
{
	query_t q;
	query_parse(&q, r->pkt, r->len);
	response_edns_t e = { 0 };
	if (q.edns) {
		e.present = true;
		e.udp_size = r->edns_size;
	}
	size_t limit = r->limit < cap ? r->limit : cap;
	size_t reserve = r->is_signed ? tsig_space(&r->tsig) : 0;
	response_t resp;
	int n = SHOAL_ESPACE;
	if (reserve < limit &&
	    response_init(&resp, &q, out, cap, limit - reserve, response_opt_size(&e)) == 0) {
		response_set_rcode(&resp, rcode);
		n = response_finish(&resp, &e);
	}
	if (n > 0 && r->is_signed)
		n = tsig_sign(&r->tsig, out, (size_t)n, limit, (uint64_t)time(NULL));
	return n > 0 ? (size_t)n : 0;
}

/* Answer r with rcode and free it. */
static void answer(update_req_t *r, uint16_t rcode)
{
	uint8_t out[UPDATE_ANSWER_MAX];
	size_t n = answer_build(r, rcode, out, sizeof(out));
	r->reply->send(r->reply, out, n);
	update_req_free(r);
}

/* ---- the queue ---- */

/* Updates in flight for zone apex: queued, or in the batch being applied. Under lock. */
static size_t queued_for(const updater_t *u, const uint8_t *apex)
{
	size_t n = u->busy && name_equal(u->busy_apex, apex) ? u->busy : 0;
	for (const update_req_t *r = u->head; r; r = r->next)
		n += name_equal(r->apex, apex);
	return n;
}

/*
 * r's sender and message as one keyed hash: a client's retransmit (RFC
 * 2136 does not forbid one) has the same, a forged one cannot aim at it.
 */
static uint64_t retry_id(const updater_t *u, const update_req_t *r)
{
	/* the message's hash, the port, the address */
	uint8_t what[sizeof(uint64_t) + 2 + 16];
	crypto_shorthash(what, r->pkt, r->len, u->retry_key);
	uint16_t port = addr_port((const struct sockaddr *)&r->peer);
	what[8] = (uint8_t)(port >> 8);
	what[9] = (uint8_t)port;
	const uint8_t *ip;
	size_t ip_len = addr_octets((const struct sockaddr *)&r->peer, &ip);
	memcpy(what + 10, ip, ip_len);
	uint64_t id;
	crypto_shorthash((unsigned char *)&id, what, 10 + ip_len, u->retry_key);
	return id ? id : 1;
}

/* Whether a request with retry_id id is queued or being applied. Under lock. */
static bool in_flight(const updater_t *u, uint64_t id)
{
	for (size_t k = 0; k < u->busy; k++)
		if (u->busy_ids[k] == id)
			return true;
	for (const update_req_t *r = u->head; r; r = r->next)
		if (r->retry_id == id)
			return true;
	return false;
}

int updater_post(updater_t *u, update_req_t *r, size_t zone_max, size_t total_max)
{
	if (!u)
		return SHOAL_ESPACE;
	r->retry_id = r->udp ? retry_id(u, r) : 0;
	int rc = SHOAL_ESPACE;
	pthread_mutex_lock(&u->lock);
	if (r->retry_id && in_flight(u, r->retry_id)) {
		rc = SHOAL_EEXIST;
	} else if (u->queued + u->busy < total_max && queued_for(u, r->apex) < zone_max) {
		r->next = NULL;
		if (u->tail)
			u->tail->next = r;
		else
			u->head = r;
		u->tail = r;
		u->queued++;
		pthread_cond_signal(&u->cond);
		rc = 0;
	}
	pthread_mutex_unlock(&u->lock);
	return rc;
}

/*
 * The sender of r (and r's zone when per_zone) as a rate counter's id,
 * keyed so a client cannot aim at another's slot.
 */
static uint64_t rate_id(const updater_t *u, const update_req_t *r, bool per_zone)
{
	uint8_t what[1 + 2 * NAME_MAXLEN];
	size_t len = 1;
	what[0] = (uint8_t)(r->is_signed | per_zone << 1);
	if (per_zone) {
		memcpy(what + len, r->apex, name_length(r->apex));
		len += name_length(r->apex);
	}
	if (r->is_signed) {
		memcpy(what + len, r->key.name, r->key.name_len);
		len += r->key.name_len;
	} else if (r->peer.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&r->peer;
		memcpy(what + len, &a->sin6_addr, sizeof(a->sin6_addr));
		len += sizeof(a->sin6_addr);
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&r->peer;
		memcpy(what + len, &a->sin_addr, sizeof(a->sin_addr));
		len += sizeof(a->sin_addr);
	}
	uint64_t id;
	crypto_shorthash((unsigned char *)&id, what, len, u->rate_key);
	return id ? id : 1;
}

/*
 * id's counter for second now: its own, else one not counting this second,
 * else (more senders this second than the probe holds) the first probed,
 * whose sender starts again from 0: the bound gives way before a sender
 * is refused for another's updates.
 */
static rate_slot_t *rate_slot(updater_t *u, uint64_t id, int64_t now)
{
	rate_slot_t *free_slot = NULL;
	for (size_t k = 0; k < RATE_PROBE; k++) {
		rate_slot_t *s = &u->rates[(id + k) % RATE_SLOTS];
		if (s->id == id)
			return s;
		if (!free_slot && s->second != now)
			free_slot = s;
	}
	rate_slot_t *s = free_slot ? free_slot : &u->rates[id % RATE_SLOTS];
	*s = (rate_slot_t){ .id = id, .second = now };
	return s;
}

bool updater_rate_ok(updater_t *u, const update_req_t *r, uint32_t rate, bool per_zone)
{
	if (!u || !rate)
		return true;
	uint64_t id = rate_id(u, r, per_zone);
	int64_t now = now_ms() / 1000;
	pthread_mutex_lock(&u->lock);
	rate_slot_t *s = rate_slot(u, id, now);
	if (s->second != now) {
		s->second = now;
		s->count = 0;
	}
	bool ok = s->count < rate;
	if (ok)
		s->count++;
	pthread_mutex_unlock(&u->lock);
	return ok;
}

/* Take the first request's zone's requests out of the queue, in order, into batch. */
static size_t take_batch(updater_t *u, update_req_t **batch)
{
	uint8_t apex[NAME_MAXLEN];
	memcpy(apex, u->head->apex, name_length(u->head->apex));
	size_t n = 0;
	update_req_t **at = &u->head;
	u->tail = NULL;
	while (*at) {
		update_req_t *r = *at;
		if (n < UPDATE_BATCH_MAX && name_equal(r->apex, apex)) {
			*at = r->next;
			u->busy_ids[n] = r->retry_id;
			batch[n++] = r;
			continue;
		}
		u->tail = r;
		at = &r->next;
	}
	u->queued -= n;
	memcpy(u->busy_apex, apex, name_length(apex));
	u->busy = n;
	return n;
}

/* ---- one update ---- */

/* A batch: its requests, the rcode of each, the changesets made. */
typedef struct batch {
	updater_t *u;
	update_req_t **reqs;
	uint16_t *rcodes;
	size_t n;
	uint32_t from, to;   /* serials before and after, when changed */
	size_t changes;      /* updates that changed the zone */
	bool journal_lost;   /* a change too big for the journal: the history starts again */
	uint32_t sync;       /* the zone's zonefile-sync */
	forward_plan_t *fwd; /* a secondary's batch: where its updates go (update-forward) */
	char zone[NAME_TEXT_MAX];
} batch_t;

/* A refusal or error, logged within the thread's bound; returns rcode. */
static uint16_t refuse(batch_t *b, const update_req_t *r, uint16_t rcode, const char *why)
{
	char rt[DNS_RCODE_TEXT_MAX];
	log_limited(&b->u->refusals, UPDATE_LOG_PER_S, LOG_LEVEL_NOTICE,
		    "zone %s: update from %s%s: %s: %s", b->zone, r->peer_text,
		    r->is_signed ? "" : " without TSIG", why, dns_rcode_name(rcode, rt));
	return rcode;
}

/* The rule of zone i that lets r in, re-checked against the configuration of now. */
static const update_rule_t *rule_of(const conf_t *cfg, size_t i, const update_req_t *r)
{
	int key = ACL_NOKEY;
	if (r->is_signed) {
		const tsig_key_t *k = tsig_key_find(cfg->keys, cfg->key_count, r->key.name);
		if (!k)
			return NULL; /* a reconfig took the key away */
		key = (int)(k - cfg->keys);
	}
	return conf_update_rule(conf_zone_xfr(cfg, i)->update, (const struct sockaddr *)&r->peer,
				key);
}

/*
 * Every record of the update section within rule, and none of the
 * signer's types when the zone signs (sign: its dnssec-policy, else
 * NULL): REFUSED for the first outside. A name deleted whole (RFC 2136
 * 2.5.3) is not the signer's: its signatures and NSEC go with it.
 */
static uint16_t check_policy(batch_t *b, const update_req_t *r, const update_msg_t *m,
			     const update_rule_t *rule, const zone_sign_spec_t *sign)
{
	update_iter_t it;
	update_iter_init(&it, m, UPDATE_SECTION_UPDATE);
	update_rr_t *rr = &b->u->rr;
	while (update_iter_next(&it, rr, NULL) > 0) {
		uint16_t type = rr->op == UPDATE_DEL_NAME ? DNS_TYPE_ANY : rr->type;
		bool signers = sign && rr->op != UPDATE_DEL_NAME && sign_spec_owns(sign, type);
		if (signers || !conf_update_allows(rule, m->zone, rr->owner, type)) {
			char name[NAME_TEXT_MAX], why[NAME_TEXT_MAX + 96];
			if (name_to_text(rr->owner, name, sizeof(name)) < 0)
				strcpy(name, "?");
			snprintf(why, sizeof(why), "%s of %s type %u %s",
				 update_op_name((enum update_op)rr->op), name, (unsigned)type,
				 signers ? "refused: the signer's records (dnssec-policy)"
					 : "not allowed by allow-update");
			return refuse(b, r, DNS_RCODE_REFUSED, why);
		}
	}
	return DNS_RCODE_NOERROR;
}

/* r of zone i, as far as needs no zone: its rule, the message into *m, its size, its records. */
static uint16_t admit(batch_t *b, const conf_t *cfg, size_t i, const update_req_t *r,
		      update_msg_t *m)
{
	const update_rule_t *rule = rule_of(cfg, i, r);
	if (!rule)
		return refuse(b, r, DNS_RCODE_REFUSED, "no allow-update rule for it");
	const char *why = NULL;
	int rcode = update_parse(m, r->pkt, r->len, &b->u->rr, &why);
	if (rcode != DNS_RCODE_NOERROR)
		return refuse(b, r, (uint16_t)rcode, why ? why : "malformed");
	if (m->upcount > conf_zone_update_max_records(cfg, i))
		return refuse(b, r, DNS_RCODE_REFUSED, "more records than update-max-records");
	return check_policy(b, r, m, rule, conf_zone_spec(cfg, i)->sign);
}

/*
 * RFC 2136 3: r against version cur of zone i: the policy, the message,
 * the prerequisites, the changes. Returns the rcode, and *cs when the
 * update changes the zone.
 */
static uint16_t evaluate(batch_t *b, const conf_t *cfg, size_t i, const zone_t *cur,
			 update_req_t *r, changeset_t **cs)
{
	*cs = NULL;
	update_msg_t m;
	int rcode = admit(b, cfg, i, r, &m);
	if (rcode != DNS_RCODE_NOERROR)
		return (uint16_t)rcode;
	rcode = zone_update_prereq(cur, &m);
	if (rcode < 0)
		return DNS_RCODE_SERVFAIL;
	if (rcode != DNS_RCODE_NOERROR)
		return (uint16_t)
			rcode; /* a prerequisite not met: the client's business, not logged */
	const conf_update_t *u = conf_zone_xfr(cfg, i)->update;
	int rc = zone_update_changes(cur, &m, (enum zone_serial_policy)u->serial_policy, time(NULL),
				     cs);
	return rc < 0 ? DNS_RCODE_SERVFAIL : DNS_RCODE_NOERROR;
}

static void on_apply_msg(void *arg, bool is_error, const char *msg)
{
	batch_t *b = arg;
	if (is_error)
		log_limited(&b->u->refusals, UPDATE_LOG_PER_S, LOG_LEVEL_NOTICE, "%s", msg);
}

/*
 * cs (taken over) signed as the zone's policy says (sign_update): the
 * next version into *next, the signed change for the journal into *cs
 * (NULL: too big for it).
 */
static int sign_step(batch_t *b, const zone_spec_t *spec, size_t journal_max, const zone_t *cur,
		     changeset_t **cs, zone_t **next)
{
	changeset_t *signed_cs = NULL;
	int rc = sign_update(cur, *cs, spec->sign, "update", &spec->limits, journal_max,
			     on_apply_msg, b, next, &signed_cs);
	changeset_unref(*cs);
	*cs = signed_cs;
	return rc;
}

/*
 * Apply cs to *cur (the version so far), signed first when the zone
 * signs: on success *cur is the next one and sets gets the change
 * journalled. Returns the rcode: REFUSED when the change fails a check a
 * load makes (the zone's limits, CNAME, records in the zone).
 */
static uint16_t step(batch_t *b, const conf_t *cfg, size_t i, const zone_t **cur, changeset_t *cs,
		     const changeset_t **sets, size_t *count)
{
	const zone_spec_t *spec = conf_zone_spec(cfg, i);
	zone_apply_opts_t o = {
		.label = "update", .limits = &spec->limits, .msg = on_apply_msg, .msg_arg = b
	};
	zone_t *next = NULL;
	int rc = spec->sign ? sign_step(b, spec, (size_t)spec->limits.max_journal, *cur, &cs, &next)
			    : zone_apply(*cur, (const changeset_t *const *)&cs, 1, &o, &next);
	if (rc < 0) {
		changeset_unref(cs);
		return rc == SHOAL_EZONE ? DNS_RCODE_REFUSED : DNS_RCODE_SERVFAIL;
	}
	zone_unref(*cur);
	*cur = next;
	b->changes++;
	if (!cs) {
		/* the history before no longer leads to what follows */
		for (; *count > 0; --*count)
			changeset_unref(sets[*count - 1]);
		b->journal_lost = true;
		return DNS_RCODE_NOERROR;
	}
	sets[(*count)++] = cs;
	return DNS_RCODE_NOERROR;
}

/*
 * A secondary's batch: each request checked as a primary's would be up to
 * its prerequisites (which are the primary's to judge), the primaries
 * copied for forward_all, which asks them once the writer's lock is let
 * go. NOTAUTH for all when update-forward was turned off meanwhile.
 */
static int forward_take(batch_t *b, const conf_t *cfg, size_t i)
{
	const conf_zone_xfr_t *zx = conf_zone_xfr(cfg, i);
	b->fwd = zx->update->forward ? forward_plan_new(cfg, i) : NULL;
	for (size_t k = 0; k < b->n; k++) {
		update_msg_t m;
		if (b->fwd)
			b->rcodes[k] = admit(b, cfg, i, b->reqs[k], &m);
		else
			b->rcodes[k] = zx->update->forward ? DNS_RCODE_SERVFAIL : DNS_RCODE_NOTAUTH;
	}
	return 0;
}

/*
 * reload_change_zone's step for a batch: each update against the version
 * the ones before it made, the changes journalled (before publication,
 * as a transfer's), the last version published.
 */
static int batch_change(void *arg, const zonedb_t *db, size_t i, zone_t **next)
{
	batch_t *b = arg;
	const conf_t *cfg = zonedb_owner(db);
	const zone_t *base = zonedb_zone(db, i);
	const changeset_t *sets[UPDATE_BATCH_MAX];
	size_t count = 0;
	if (!cfg || i >= cfg->zone_count || !conf_zone_xfr(cfg, i)->update || !base) {
		for (size_t k = 0; k < b->n; k++)
			b->rcodes[k] = base ? DNS_RCODE_REFUSED : DNS_RCODE_SERVFAIL;
		return 0;
	}
	if (conf_zone_xfr(cfg, i)->primaries.count)
		return forward_take(b, cfg, i);
	const zone_t *cur = zone_ref(base);
	for (size_t k = 0; k < b->n; k++) {
		changeset_t *cs;
		b->rcodes[k] = evaluate(b, cfg, i, cur, b->reqs[k], &cs);
		if (cs)
			b->rcodes[k] = step(b, cfg, i, &cur, cs, sets, &count);
	}
	if (b->changes > 0) {
		journal_t *j = zonedb_journal_make(
			db, i, (size_t)conf_zone_spec(cfg, i)->limits.max_journal);
		if (j && b->journal_lost)
			journal_clear(j);
		if (j && count > 0)
			journal_report(j, journal_add_all(j, sets, count), on_apply_msg, b);
		b->from = base->serial;
		b->to = cur->serial;
		b->sync = conf_zone_sync(cfg, i);
		*next = (zone_t *)cur;
	} else {
		zone_unref(cur);
	}
	for (size_t k = 0; k < count; k++)
		changeset_unref(sets[k]);
	return 0;
}

/* ---- zone files ---- */

/* Plan zone apex's file write zonefile-sync from now, unless one is planned. */
static void flush_plan(updater_t *u, const uint8_t *apex, uint32_t sync)
{
	for (flush_due_t *f = u->flushes; f; f = f->next)
		if (name_equal(f->apex, apex))
			return;
	flush_due_t *f = calloc(1, sizeof(*f));
	if (!f) {
		log_error("dynamic update: out of memory: the zone file is not written");
		return;
	}
	f->due = now_ms() + (int64_t)sync * 1000;
	memcpy(f->apex, apex, name_length(apex));
	f->next = u->flushes;
	u->flushes = f;
}

/* What a file write needs of the zone, taken under the writer's lock. */
typedef struct flush_take {
	const zone_t *z;
	char *file, *name;
	zone_limits_t limits;
	uint32_t sync;
	bool signs;            /* the zone has a dnssec-policy: */
	zone_sign_spec_t sign; /* its types, for the unsigned data (keys_dir not kept) */
} flush_take_t;

static int take_for_flush(void *arg, const zonedb_t *db, size_t i, zone_t **next)
{
	flush_take_t *t = arg;
	const conf_t *cfg = zonedb_owner(db);
	const zone_t *z = zonedb_zone(db, i);
	(void)next;
	if (!cfg || i >= cfg->zone_count || !z || !conf_zone_spec(cfg, i)->file ||
	    !*conf_zone_spec(cfg, i)->file)
		return 0;
	t->file = strdup(conf_zone_spec(cfg, i)->file);
	t->name = strdup(conf_zone_spec(cfg, i)->name);
	t->limits = conf_zone_spec(cfg, i)->limits;
	t->sync = conf_zone_sync(cfg, i);
	if (conf_zone_spec(cfg, i)->sign) {
		t->signs = true;
		t->sign = *conf_zone_spec(cfg, i)->sign;
		t->sign.keys_dir = NULL; /* the configuration's: not read past its lock */
	}
	if (t->file && t->name)
		t->z = zone_ref(z);
	return 0;
}

static void on_write_msg(void *arg, bool is_error, const char *msg)
{
	log_msg(is_error ? LOG_LEVEL_ERROR : LOG_LEVEL_INFO, "zone %s: %s", (const char *)arg, msg);
}

/*
 * What the file of a zone t takes holds: the version served, or for a
 * zone that signs its unsigned data, which a reload reads back as the same
 * version (sign_version) and would refuse with the signer's records in it.
 */
static int file_version(const flush_take_t *t, const zone_t **out)
{
	zone_t *bare = NULL;
	int rc = t->signs ? sign_unsigned(t->z, &t->sign, t->file, &t->limits, on_write_msg,
					  t->name, &bare)
			  : 0;
	*out = t->signs ? bare : zone_ref(t->z);
	return rc;
}

/* Write the file of the zone apex from the version served now. */
static void flush_one(updater_t *u, const uint8_t *apex)
{
	flush_take_t t = { 0 };
	reload_change_zone(u->env.reload, apex, take_for_flush, &t, &u->stop);
	const zone_t *data = NULL;
	if (t.z && file_version(&t, &data) < 0)
		log_error("zone %s: cannot leave the signatures out of %s: not written", t.name,
			  t.file);
	if (data) {
		int rc = zone_write(data, t.file, "written by shoald after dynamic updates",
				    &t.limits, on_write_msg, t.name);
		if (rc < 0)
			log_error("zone %s: cannot write %s after dynamic updates: %s", t.name,
				  t.file, shoal_strerror(rc));
		else
			log_info("zone %s: serial %u written to %s", t.name, (unsigned)t.z->serial,
				 t.file);
		zone_unref(data);
	}
	zone_unref(t.z);
	free(t.file);
	free(t.name);
}

/* Write the files due (all of them when all); the time the next one is due, or -1. */
static int64_t flush_due(updater_t *u, bool all)
{
	int64_t now = now_ms(), next = -1;
	for (flush_due_t **at = &u->flushes; *at;) {
		flush_due_t *f = *at;
		if (all || f->due <= now) {
			*at = f->next;
			flush_one(u, f->apex);
			free(f);
			continue;
		}
		next = next < 0 || f->due < next ? f->due : next;
		at = &f->next;
	}
	return next;
}

/* ---- forwarding (RFC 2136 6): server/events/update_forward.c ---- */

static bool stopping(void *arg)
{
	return __atomic_load_n(&((updater_t *)arg)->stop, __ATOMIC_ACQUIRE);
}

/*
 * Forward r (forward_update); the first primary's rcode, or SERVFAIL when
 * none answers, logged.
 */
static uint16_t forward_one(updater_t *u, batch_t *b, const update_req_t *r)
{
	char why[REQUESTOR_LABEL_MAX];
	int rcode = forward_update(b->fwd, r, stopping, u, why, sizeof(why));
	if (rcode < 0) {
		char text[REQUESTOR_LABEL_MAX + 32];
		snprintf(text, sizeof(text), "not forwarded: %s", why);
		return refuse(b, r, DNS_RCODE_SERVFAIL, text);
	}
	char rt[DNS_RCODE_TEXT_MAX];
	log_limited(&u->refusals, UPDATE_LOG_PER_S, LOG_LEVEL_INFO,
		    "zone %s: update from %s forwarded to a primary: %s", b->zone, r->peer_text,
		    dns_rcode_name((uint16_t)rcode, rt));
	return (uint16_t)rcode;
}

/* The batch's requests that passed admit, forwarded; the plan wiped (keys) and freed. */
static void forward_all(updater_t *u, batch_t *b)
{
	for (size_t k = 0; k < b->n; k++)
		if (b->rcodes[k] == DNS_RCODE_NOERROR)
			b->rcodes[k] = forward_one(u, b, b->reqs[k]);
	forward_plan_free(b->fwd);
	b->fwd = NULL;
}

/* ---- the thread ---- */

static void run_batch(updater_t *u, update_req_t **reqs, size_t n)
{
	uint16_t rcodes[UPDATE_BATCH_MAX];
	batch_t b = { .u = u, .reqs = reqs, .rcodes = rcodes, .n = n };
	if (name_to_text(reqs[0]->apex, b.zone, sizeof(b.zone)) < 0)
		strcpy(b.zone, "?");
	int rc = reload_change_zone(u->env.reload, reqs[0]->apex, batch_change, &b, &u->stop);
	if (b.fwd) {
		forward_all(u, &b);
	} else if (rc < 0) {
		log_error("zone %s: dynamic update not applied: %s", b.zone, shoal_strerror(rc));
		for (size_t k = 0; k < n; k++)
			rcodes[k] = rc == SHOAL_ENOTFOUND ? DNS_RCODE_NOTAUTH : DNS_RCODE_SERVFAIL;
	} else if (b.changes > 0) {
		log_info("zone %s: %zu dynamic update%s applied, serial %u -> %u", b.zone,
			 b.changes, b.changes == 1 ? "" : "s", (unsigned)b.from, (unsigned)b.to);
		if (u->env.published)
			u->env.published(u->env.published_arg);
		flush_plan(u, reqs[0]->apex, b.sync);
	}
	/* RFC 2136 3.8: the answer once the change is made, here once it is served */
	for (size_t k = 0; k < n; k++)
		answer(reqs[k], rcodes[k]);
}

/* Wait for requests or the next file write; false once stopping. */
static bool wait_work(updater_t *u, int64_t next_flush)
{
	pthread_mutex_lock(&u->lock);
	while (!u->head && !__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		if (next_flush < 0) {
			pthread_cond_wait(&u->cond, &u->lock);
			continue;
		}
		int64_t wait = next_flush - now_ms();
		if (wait <= 0)
			break;
		struct timespec d;
		clock_gettime(CLOCK_MONOTONIC, &d);
		d.tv_sec += wait / 1000;
		d.tv_nsec += (wait % 1000) * 1000000L;
		d.tv_sec += d.tv_nsec / 1000000000L;
		d.tv_nsec %= 1000000000L;
		if (pthread_cond_timedwait(&u->cond, &u->lock, &d) == ETIMEDOUT)
			break;
	}
	bool go = !__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&u->lock);
	return go;
}

static void *update_thread(void *arg)
{
	updater_t *u = arg;
	int64_t next_flush = -1;
	while (wait_work(u, next_flush)) {
		update_req_t *batch[UPDATE_BATCH_MAX];
		pthread_mutex_lock(&u->lock);
		size_t n = u->head ? take_batch(u, batch) : 0;
		pthread_mutex_unlock(&u->lock);
		if (n > 0) {
			run_batch(u, batch, n);
			pthread_mutex_lock(&u->lock);
			u->busy = 0;
			pthread_mutex_unlock(&u->lock);
		}
		next_flush = flush_due(u, false);
	}
	flush_due(u, true);
	return NULL;
}

int updater_new(const updater_env_t *env, updater_t **out)
{
	updater_t *u = calloc(1, sizeof(*u));
	if (!u)
		return SHOAL_ENOMEM;
	u->env = *env;
	randombytes_buf(u->rate_key, sizeof(u->rate_key));
	randombytes_buf(u->retry_key, sizeof(u->retry_key));
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, &ca);
	pthread_condattr_destroy(&ca);
	int rc = thread_start(&u->thread, NULL, update_thread, u, "shoald-update");
	if (rc < 0) {
		pthread_cond_destroy(&u->cond);
		pthread_mutex_destroy(&u->lock);
		free(u);
		return rc;
	}
	*out = u;
	return 0;
}

void updater_free(updater_t *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	__atomic_store_n(&u->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&u->cond);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
	for (update_req_t *r = u->head, *next; r; r = next) {
		next = r->next;
		r->reply->send(r->reply, NULL, 0);
		update_req_free(r);
	}
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->lock);
	free(u);
}
