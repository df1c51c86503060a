/* SPDX-License-Identifier: GPL-3.0-or-later */
/* NOTIFY out: one job per zone and secondary, sent over UDP and repeated with back-off until
 * answered. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/request.h"
#include "proto/tsig.h"
#include "proto/wire.h"
#include "server/common/log.h"
#include "server/events/notify_out.h"
#include "zone/zone.h"

/* A NOTIFY with its SOA, names of 255 octets at most, then a TSIG RR (key name, MAC). */
#define NOTIFY_MSG_MAX (REQUEST_MAX + TSIG_RR_MAX)
/* How often the timer looks for sends due. */
#define NOTIFY_TICK_MS 100
/* The first wait for an answer; each retry waits twice as long (RFC 1996 3.6). */
#define NOTIFY_WAIT_MS 1000

/* Telling one secondary of one zone's serial. */
typedef struct job {
	size_t zone, target;
	bool active;
	uint16_t id;
	uint32_t serial;
	unsigned sent;
	uint64_t due; /* uv_now of the next send */
	tsig_ctx_t tsig;
	/* an answer discarded: its TSIG did not verify (RFC 8945 5.3), for the last word */
	char discarded[TSIG_ANSWER_TEXT_MAX];
	uint8_t msg[REQUEST_MAX]; /* unsigned: each send signs a copy */
	size_t len;
	char zone_name[NAME_TEXT_MAX];
} job_t;

struct notify_out {
	uv_loop_t *loop;
	const conf_t *cfg;
	zonedb_ref_t *zones;
	uv_udp_t sock[2]; /* IPv4, IPv6: opened when first needed */
	bool sock_open[2];
	uv_timer_t timer;
	bool timer_on;
	job_t **jobs; /* one per zone and target that was ever notified */
	size_t count, cap;
	uint32_t *seen; /* per zone: the serial last seen, when seen_set */
	bool *seen_set;
	bool started; /* the first set was recorded */
	unsigned closes_pending;
	bool closed;
	notify_out_stats_t stats;
	uint8_t rbuf[DNS_TCP_MAX]; /* any datagram whole: a cut answer would not verify */
};

static void count(uint64_t *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

int notify_out_new(uv_loop_t *loop, const conf_t *cfg, zonedb_ref_t *zones, notify_out_t **out)
{
	notify_out_t *n = calloc(1, sizeof(*n));
	if (!n)
		return SHOAL_ENOMEM;
	n->seen = calloc(cfg->zone_count ? cfg->zone_count : 1, sizeof(*n->seen));
	n->seen_set = calloc(cfg->zone_count ? cfg->zone_count : 1, sizeof(*n->seen_set));
	if (!n->seen || !n->seen_set) {
		free(n->seen);
		free(n->seen_set);
		free(n);
		return SHOAL_ENOMEM;
	}
	n->loop = loop;
	n->cfg = cfg;
	n->zones = zones;
	uv_timer_init(loop, &n->timer);
	n->timer.data = n;
	*out = n;
	return 0;
}

static const acl_entry_t *target_of(const notify_out_t *n, const job_t *j)
{
	return &n->cfg->zone_xfr[j->zone].notify.entries[j->target];
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	notify_out_t *n = h->data;
	*buf = uv_buf_init((char *)n->rbuf, sizeof(n->rbuf));
}

/* Same address and port. */
static bool same_peer(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
	return x->sin6_port == y->sin6_port &&
	       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
}

/*
 * A signed job's answer whose TSIG does not verify is discarded, unless
 * its RCODE is NOTAUTH: a TSIG error, told in the TSIG RR's Error, left
 * unsigned for BADSIG and BADKEY (RFC 8945 5.3, 5.3.2). True when msg is
 * not the answer; said once per answer.
 */
static bool discard(job_t *j, const acl_entry_t *t, const uint8_t *msg, size_t len)
{
	if (t->key == ACL_NOKEY)
		return false;
	int rc = tsig_verify(&j->tsig, msg, len, NULL, (uint64_t)time(NULL));
	if (rc == 0)
		rc = tsig_verify_end(&j->tsig);
	if (rc == 0 || (msg[3] & DNS_RCODE_MASK) == DNS_RCODE_NOTAUTH)
		return false;
	char why[DNS_RCODE_TEXT_MAX];
	tsig_answer_text(msg, len, j->discarded);
	log_warning("NOTIFY %s to %s: an answer (%s) whose TSIG does not verify (%s): discarded, "
		    "waiting for another",
		    j->zone_name, t->text, j->discarded, tsig_verify_text(&j->tsig, rc, why));
	return true;
}

/* An answer: the job it belongs to (ID and address), checked and ended. */
static void on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *from,
		    unsigned flags)
{
	notify_out_t *n = h->data;
	const uint8_t *msg = (const uint8_t *)buf->base;
	if (nread < DNS_HEADER_SIZE || !from)
		return;
	uint16_t id = wire_get_u16(msg), hflags = wire_get_u16(msg + 2);
	if (!(hflags & DNS_FLAG_QR) ||
	    ((hflags & DNS_OPCODE_MASK) >> DNS_OPCODE_SHIFT) != DNS_OPCODE_NOTIFY)
		return;
	for (size_t k = 0; k < n->count; k++) {
		job_t *j = n->jobs[k];
		const acl_entry_t *t = target_of(n, j);
		if (!j->active || j->id != id ||
		    !same_peer(from, (const struct sockaddr *)&t->addr))
			continue;
		if (discard(j, t, msg, (size_t)nread))
			return;
		j->active = false;
		if ((hflags & DNS_RCODE_MASK) == DNS_RCODE_NOERROR) {
			count(&n->stats.answered);
			log_info("NOTIFY %s serial %u to %s: answered", j->zone_name,
				 (unsigned)j->serial, t->text);
		} else {
			/* an error is an answer: "NOTAUTH, TSIG error BADSIG" */
			char text[TSIG_ANSWER_TEXT_MAX];
			count(&n->stats.refused);
			log_warning("NOTIFY %s serial %u to %s: answered %s", j->zone_name,
				    (unsigned)j->serial, t->text,
				    tsig_answer_text(msg, (size_t)nread, text));
		}
		return;
	}
}

/* The socket for family af (AF_INET or AF_INET6), opened now if need be; NULL when it cannot be. */
static uv_udp_t *sock_for(notify_out_t *n, int af)
{
	int k = af == AF_INET6;
	if (n->sock_open[k])
		return &n->sock[k];
	struct sockaddr_storage any;
	memset(&any, 0, sizeof(any));
	any.ss_family = (sa_family_t)af;
	uv_udp_t *s = &n->sock[k];
	if (uv_udp_init(n->loop, s) < 0)
		return NULL;
	s->data = n;
	n->sock_open[k] = true;
	int e = uv_udp_bind(s, (const struct sockaddr *)&any, 0);
	if (e == 0)
		e = uv_udp_recv_start(s, on_alloc, on_recv);
	if (e < 0) {
		log_error("NOTIFY: cannot open a UDP socket for %s: %s",
			  af == AF_INET ? "IPv4" : "IPv6", uv_strerror(e));
		return NULL;
	}
	return s;
}

/* Send the job's NOTIFY once more (a new ID each time, freshly signed). */
static void job_send(notify_out_t *n, job_t *j)
{
	const acl_entry_t *t = target_of(n, j);
	uint8_t buf[NOTIFY_MSG_MAX];
	j->id = (uint16_t)randombytes_uniform(65536);
	memcpy(buf, j->msg, j->len);
	buf[0] = (uint8_t)(j->id >> 8);
	buf[1] = (uint8_t)j->id;
	int len = (int)j->len;
	if (t->key != ACL_NOKEY) {
		tsig_init(&j->tsig, &n->cfg->keys[t->key], TSIG_FUDGE_DEFAULT);
		len = tsig_sign(&j->tsig, buf, j->len, sizeof(buf), (uint64_t)time(NULL));
	}
	j->sent++;
	j->due = uv_now(n->loop) + ((uint64_t)NOTIFY_WAIT_MS << (j->sent - 1));
	uv_udp_t *s = len > 0 ? sock_for(n, t->addr.ss_family) : NULL;
	if (!s)
		return;
	uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
	int e = uv_udp_try_send(s, &b, 1, (const struct sockaddr *)&t->addr);
	if (e < 0 && e != UV_EAGAIN)
		log_warning("NOTIFY %s to %s: %s", j->zone_name, t->text, uv_strerror(e));
	else
		count(&n->stats.sent);
}

/* Sends due: retries, or giving up after notify-retry of them. */
static void on_tick(uv_timer_t *timer)
{
	notify_out_t *n = timer->data;
	uint64_t now = uv_now(n->loop);
	bool any = false;
	for (size_t k = 0; k < n->count; k++) {
		job_t *j = n->jobs[k];
		if (!j->active)
			continue;
		if (j->due <= now && j->sent >= n->cfg->notify_retry) {
			j->active = false;
			count(&n->stats.unanswered);
			log_warning("NOTIFY %s serial %u to %s: no answer%s after %u tries%s%s%s",
				    j->zone_name, (unsigned)j->serial, target_of(n, j)->text,
				    j->discarded[0] ? " that verifies" : "", j->sent,
				    j->discarded[0] ? " (the last one discarded: " : "",
				    j->discarded, j->discarded[0] ? ")" : "");
			continue;
		}
		if (j->due <= now)
			job_send(n, j);
		any = true;
	}
	if (!any) {
		uv_timer_stop(&n->timer);
		n->timer_on = false;
	}
}

/* The job of zone i and target t, made when first needed. */
static job_t *job_get(notify_out_t *n, size_t i, size_t t)
{
	for (size_t k = 0; k < n->count; k++)
		if (n->jobs[k]->zone == i && n->jobs[k]->target == t)
			return n->jobs[k];
	if (n->count == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 16;
		job_t **p = realloc(n->jobs, cap * sizeof(*p));
		if (!p)
			return NULL;
		n->jobs = p;
		n->cap = cap;
	}
	job_t *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->zone = i;
	j->target = t;
	n->jobs[n->count++] = j;
	return j;
}

/* NOTIFY zone i's secondaries of z's serial (inside the read section z is from). */
static int notify_zone(notify_out_t *n, size_t i, const zone_t *z)
{
	const acl_t *targets = &n->cfg->zone_xfr[i].notify;
	const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
	int told = 0;
	for (size_t t = 0; t < targets->count; t++) {
		job_t *j = job_get(n, i, t);
		if (!j) {
			log_error("NOTIFY: out of memory");
			break;
		}
		/* REQUEST_MAX: never too small, whatever the zone's SOA */
		int len = request_write(j->msg, sizeof(j->msg), 0, DNS_OPCODE_NOTIFY, DNS_FLAG_AA,
					znode_name(z->apex), DNS_TYPE_SOA, DNS_SECTION_ANSWER,
					soa->set.data);
		if (len < 0)
			continue;
		j->len = (size_t)len;
		j->serial = z->serial;
		j->sent = 0;
		j->discarded[0] = '\0';
		j->active = true;
		if (name_to_text(znode_name(z->apex), j->zone_name, sizeof(j->zone_name)) < 0)
			strcpy(j->zone_name, "?");
		job_send(n, j);
		told++;
	}
	if (told && !n->timer_on) {
		uv_timer_start(&n->timer, on_tick, NOTIFY_TICK_MS, NOTIFY_TICK_MS);
		n->timer_on = true;
	}
	return told;
}

void notify_out_published(notify_out_t *n)
{
	if (n->closed)
		return;
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(n->zones);
	if (zonedb_owner(db) && zonedb_owner(db) != n->cfg) {
		/* a reconfig published a set of another configuration: it calls again */
		zonedb_read_unlock(n->zones);
		return;
	}
	for (size_t i = 0; i < n->cfg->zone_count; i++) {
		if (!n->cfg->zone_xfr[i].notify.count)
			continue;
		const zone_t *z = zonedb_zone(db, i);
		if (!z)
			continue;
		bool changed = n->started && (!n->seen_set[i] || n->seen[i] != z->serial);
		n->seen[i] = z->serial;
		n->seen_set[i] = true;
		if (changed) {
			log_info("zone %s: serial %u: notifying %zu secondaries",
				 n->cfg->zones[i].name, (unsigned)z->serial,
				 n->cfg->zone_xfr[i].notify.count);
			notify_zone(n, i, z);
		}
	}
	n->started = true;
	zonedb_read_unlock(n->zones);
}

int notify_out_zone(notify_out_t *n, size_t i)
{
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(n->zones);
	/* i indexes n->cfg, and the set is built from it (the main thread swaps both) */
	bool same = !zonedb_owner(db) || zonedb_owner(db) == n->cfg;
	const zone_t *z = same ? zonedb_zone(db, i) : NULL;
	int rc = z ? notify_zone(n, i, z) : SHOAL_ENOTFOUND;
	zonedb_read_unlock(n->zones);
	return rc;
}

int notify_out_reconfig(notify_out_t *n, const conf_t *cfg)
{
	size_t cap = cfg->zone_count ? cfg->zone_count : 1;
	uint32_t *seen = calloc(cap, sizeof(*seen));
	bool *seen_set = calloc(cap, sizeof(*seen_set));
	if (!seen || !seen_set) {
		free(seen);
		free(seen_set);
		return SHOAL_ENOMEM;
	}
	/* a zone kept keeps its serial seen; a new one is told at the next publication */
	for (size_t i = 0; i < cfg->zone_count; i++) {
		long was = conf_zone_index(n->cfg, cfg->zones[i].name);
		if (was >= 0) {
			seen[i] = n->seen[was];
			seen_set[i] = n->seen_set[was];
		}
	}
	/*
	 * Jobs name zones and targets by their index in the old configuration:
	 * those of a zone kept alike, to a secondary still named with the same
	 * key, move to their new indexes and go on (their retries, their answer
	 * awaited); the others are given up.
	 */
	size_t kept = 0;
	for (size_t k = 0; k < n->count; k++) {
		job_t *j = n->jobs[k];
		long i = conf_zone_index(cfg, n->cfg->zones[j->zone].name);
		size_t t = 0;
		if (i >= 0 && conf_zone_same_data(n->cfg, j->zone, cfg, (size_t)i) &&
		    conf_acl_entry_find(n->cfg, target_of(n, j), cfg, &cfg->zone_xfr[i].notify,
					&t)) {
			j->zone = (size_t)i;
			j->target = t;
			n->jobs[kept++] = j;
			continue;
		}
		if (j->active)
			log_notice(
				"NOTIFY %s serial %u to %s: given up, a reconfig changed the zone "
				"or its notify list",
				j->zone_name, (unsigned)j->serial, target_of(n, j)->text);
		sodium_memzero(&j->tsig, sizeof(j->tsig));
		free(j);
	}
	n->count = kept;
	free(n->seen);
	free(n->seen_set);
	n->seen = seen;
	n->seen_set = seen_set;
	n->cfg = cfg;
	return 0;
}

void notify_out_stats(const notify_out_t *n, notify_out_stats_t *out)
{
#define NOTIFY_READ(name, help) out->name = __atomic_load_n(&n->stats.name, __ATOMIC_RELAXED);
	NOTIFY_STATS(NOTIFY_READ)
#undef NOTIFY_READ
}

static void on_closed(uv_handle_t *h)
{
	notify_out_t *n = h->data;
	n->closes_pending--;
}

void notify_out_close(notify_out_t *n)
{
	if (!n || n->closed)
		return;
	n->closed = true;
	n->closes_pending++;
	uv_close((uv_handle_t *)&n->timer, on_closed);
	for (int k = 0; k < 2; k++) {
		if (n->sock_open[k]) {
			n->closes_pending++;
			uv_close((uv_handle_t *)&n->sock[k], on_closed);
		}
	}
}

void notify_out_free(notify_out_t *n)
{
	if (!n)
		return;
	for (size_t k = 0; k < n->count; k++) {
		sodium_memzero(&n->jobs[k]->tsig, sizeof(n->jobs[k]->tsig));
		free(n->jobs[k]);
	}
	free(n->jobs);
	free(n->seen);
	free(n->seen_set);
	free(n);
}
