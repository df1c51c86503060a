/* SPDX-License-Identifier: GPL-3.0-or-later */
/* NOTIFY out: one job per zone and secondary, sent over UDP by the requestor and repeated with
 * back-off until answered. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/request.h"
#include "proto/tsig.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/events/notify_out.h"
#include "server/events/requestor.h"
#include "zone/zone.h"

/* How often the timer looks for sends due. */
#define NOTIFY_TICK_MS 100
/*
 * Sends started in one tick at most, first sends and retries: a reload that
 * changes many zones tells their secondaries at 320 a second, not all at
 * once, whatever the answers' speed (BIND paces with notify-rate).
 */
#define NOTIFY_PER_TICK NOTIFY_OUT_PARALLEL
/* The first wait for an answer; each retry waits twice as long (RFC 1996 3.6). */
#define NOTIFY_WAIT_MS 1000

/* Telling one secondary of one zone's serial. */
typedef struct job {
	notify_out_t *owner;
	size_t zone, target;
	bool active;
	bool listed; /* in notify_out.active */
	uint32_t serial;
	unsigned sent;
	uint64_t due;       /* uv_now of the next send */
	requestor_uv_t *ex; /* the send whose answer is awaited, or NULL */
	/* an answer discarded: its TSIG did not verify (RFC 8945 5.3), for the last word */
	char discarded[TSIG_ANSWER_TEXT_MAX];
	uint8_t msg[REQUEST_MAX]; /* unsigned: the requestor gives each send its ID and TSIG */
	size_t len;
	char zone_name[NAME_TEXT_MAX];
} job_t;

struct notify_out {
	uv_loop_t *loop;
	const conf_t *cfg;
	zonedb_ref_t *zones;
	uv_timer_t timer;
	bool timer_on;
	job_t **jobs; /* one per zone and target that was ever notified */
	size_t count, cap;
	/* the jobs the timer looks at: active, or answered since its last look */
	job_t **active;
	size_t active_count, active_cap;
	unsigned tick_sends; /* sends started since the timer's last look */
	uint32_t *seen;      /* per zone: the serial last seen, when seen_set */
	bool *seen_set;
	size_t *told; /* the zones with a notify list, ascending: what a publication looks at */
	size_t told_count;
	state_t *state;     /* where the serials told are kept across restarts, or NULL */
	bool started;       /* the first set was recorded */
	unsigned in_flight; /* jobs with a send awaiting its answer: NOTIFY_OUT_PARALLEL at most */
	unsigned closes_pending;
	bool closed;
	stats_notify_out_t *stats; /* the caller's */
};

/*
 * The zones of cfg with a notify list, ascending, into *out (freed by the
 * caller): found in every zone (change ZONEDB_REBUILD), or from n's list
 * as one zone added (cfg's last) or removed (`removed`) moves them, at
 * the cost of that list. Returns how many, or SHOAL_ENOMEM.
 */
static long told_list(const notify_out_t *n, const conf_t *cfg, enum zonedb_change change,
		      size_t removed, size_t **out)
{
	size_t cap = change == ZONEDB_REBUILD ? cfg->zone_count : n->told_count + 1, count = 0;
	size_t *told = calloc(cap ? cap : 1, sizeof(*told));
	if (!told)
		return SHOAL_ENOMEM;
	for (size_t k = 0; change != ZONEDB_REBUILD && k < n->told_count; k++)
		if (change != ZONEDB_REMOVED || n->told[k] != removed)
			told[count++] =
				n->told[k] - (change == ZONEDB_REMOVED && n->told[k] > removed);
	if (change == ZONEDB_ADDED && conf_zone_xfr(cfg, cfg->zone_count - 1)->notify.count)
		told[count++] = cfg->zone_count - 1;
	for (size_t i = 0; change == ZONEDB_REBUILD && i < cfg->zone_count; i++)
		if (conf_zone_xfr(cfg, i)->notify.count)
			told[count++] = i;
	*out = told;
	return (long)count;
}

int notify_out_new(uv_loop_t *loop, const conf_t *cfg, zonedb_ref_t *zones, state_t *st,
		   stats_notify_out_t *counters, notify_out_t **out)
{
	MAIN_THREAD_ONLY();
	notify_out_t *n = calloc(1, sizeof(*n));
	if (!n)
		return SHOAL_ENOMEM;
	n->seen = calloc(cfg->zone_count ? cfg->zone_count : 1, sizeof(*n->seen));
	n->seen_set = calloc(cfg->zone_count ? cfg->zone_count : 1, sizeof(*n->seen_set));
	long told = told_list(n, cfg, ZONEDB_REBUILD, 0, &n->told);
	if (!n->seen || !n->seen_set || told < 0) {
		free(n->seen);
		free(n->seen_set);
		free(told < 0 ? NULL : n->told);
		free(n);
		return SHOAL_ENOMEM;
	}
	n->told_count = (size_t)told;
	n->stats = counters;
	n->state = st;
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
	return &conf_zone_xfr(n->cfg, j->zone)->notify.entries[j->target];
}

/* The job's send in flight, if any, given up: its answer no longer counts. */
static void job_cancel(notify_out_t *n, job_t *j)
{
	if (!j->ex)
		return;
	requestor_uv_cancel(j->ex);
	j->ex = NULL;
	n->in_flight--;
}

/*
 * A send ended: answered (an error is an answer too: "NOTAUTH, TSIG error
 * BADSIG"), or not within its wait, and the next send goes when due.
 */
static void on_answer(requestor_uv_t *ex, const requestor_result_t *res, void *arg)
{
	job_t *j = arg;
	notify_out_t *n = j->owner;
	(void)ex;
	j->ex = NULL;
	n->in_flight--;
	if (res->discarded[0])
		snprintf(j->discarded, sizeof(j->discarded), "%s", res->discarded);
	if (res->error < 0)
		return;
	const acl_entry_t *t = target_of(n, j);
	j->active = false;
	if (res->rcode == DNS_RCODE_NOERROR) {
		stats_add(&n->stats->answered, 1);
		log_info("NOTIFY %s serial %u to %s: answered", j->zone_name, (unsigned)j->serial,
			 t->text);
	} else {
		stats_add(&n->stats->refused, 1);
		log_warning("NOTIFY %s serial %u to %s: answered %s", j->zone_name,
			    (unsigned)j->serial, t->text, res->answer);
	}
}

/*
 * Send the job's NOTIFY once more, as a new exchange (a new ID, signed
 * afresh, from a port of its own), whose answer is awaited until the next
 * send is due.
 */
static void job_send(notify_out_t *n, job_t *j)
{
	const acl_entry_t *t = target_of(n, j);
	unsigned wait = NOTIFY_WAIT_MS << j->sent; /* RFC 1996 3.6: each wait twice the last */
	char label[REQUESTOR_LABEL_MAX], why[256];
	j->sent++;
	j->due = uv_now(n->loop) + wait;
	snprintf(label, sizeof(label), "NOTIFY %s to %s", j->zone_name, t->text);
	requestor_params_t p = {
		.peer = (const struct sockaddr *)&t->addr,
		.peer_len = t->addr_len,
		.query = j->msg,
		.query_len = j->len,
		.key = t->key != ACL_NOKEY ? &n->cfg->keys[t->key] : NULL,
		.transport = REQUESTOR_UDP,
		.message_ms = wait,
		.label = label,
	};
	requestor_result_t res;
	if (requestor_uv_start(n->loop, &p, on_answer, j, &j->ex, &res) < 0) {
		log_warning("NOTIFY %s to %s: %s", j->zone_name, t->text,
			    requestor_result_text(&res, why, sizeof(why)));
		return;
	}
	n->in_flight++;
	n->tick_sends++;
	stats_add(&n->stats->sent, 1);
}

/* Whether one more send may start now: NOTIFY_OUT_PARALLEL in flight, NOTIFY_PER_TICK a tick. */
static bool may_send(const notify_out_t *n)
{
	return n->in_flight < NOTIFY_OUT_PARALLEL && n->tick_sends < NOTIFY_PER_TICK;
}

/* j on the timer's list (it is active). False when out of memory (it is not). */
static bool job_list(notify_out_t *n, job_t *j)
{
	if (j->listed)
		return true;
	if (n->active_count == n->active_cap) {
		size_t cap = n->active_cap ? 2 * n->active_cap : 16;
		job_t **a = realloc(n->active, cap * sizeof(*a));
		if (!a)
			return false;
		n->active = a;
		n->active_cap = cap;
	}
	n->active[n->active_count++] = j;
	j->listed = true;
	return true;
}

/*
 * Sends due: first sends held back by the pace, retries, or giving up
 * after notify-retry of them. Only the jobs listed are looked at: those
 * done leave the list, so a tick costs the jobs under way, not every zone
 * ever notified.
 */
static void on_tick(uv_timer_t *timer)
{
	notify_out_t *n = timer->data;
	uint64_t now = uv_now(n->loop);
	size_t kept = 0;
	n->tick_sends = 0;
	for (size_t k = 0; k < n->active_count; k++) {
		job_t *j = n->active[k];
		if (!j->active) {
			j->listed = false;
			continue;
		}
		n->active[kept++] = j;
		if (j->ex || j->due > now)
			continue; /* its answer awaited, or its next send not due */
		if (j->sent >= n->cfg->notify_retry) {
			j->active = false;
			stats_add(&n->stats->unanswered, 1);
			log_warning("NOTIFY %s serial %u to %s: no answer%s after %u tries%s%s%s",
				    j->zone_name, (unsigned)j->serial, target_of(n, j)->text,
				    j->discarded[0] ? " that verifies" : "", j->sent,
				    j->discarded[0] ? " (the last one discarded: " : "",
				    j->discarded, j->discarded[0] ? ")" : "");
			continue;
		}
		if (may_send(n))
			job_send(n, j);
	}
	n->active_count = kept;
	if (!kept) {
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
	j->owner = n;
	j->zone = i;
	j->target = t;
	n->jobs[n->count++] = j;
	return j;
}

/* NOTIFY zone i's secondaries of z's serial (inside the read section z is from). */
static int notify_zone(notify_out_t *n, size_t i, const zone_t *z)
{
	const acl_t *targets = &conf_zone_xfr(n->cfg, i)->notify;
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
		if (!job_list(n, j)) {
			log_error("NOTIFY: out of memory");
			break;
		}
		job_cancel(n, j); /* a send of the serial before: its answer is not awaited */
		j->len = (size_t)len;
		j->serial = z->serial;
		j->sent = 0;
		j->due = 0;
		j->discarded[0] = '\0';
		j->active = true;
		if (name_to_text(znode_name(z->apex), j->zone_name, sizeof(j->zone_name)) < 0)
			strcpy(j->zone_name, "?");
		/* beyond the cap in flight or the pace, the timer sends it when its turn comes */
		if (may_send(n))
			job_send(n, j);
		told++;
	}
	if (told && !n->timer_on) {
		uv_timer_start(&n->timer, on_tick, NOTIFY_TICK_MS, NOTIFY_TICK_MS);
		n->timer_on = true;
	}
	return told;
}

/*
 * At start: whether z's serial differs from the one its secondaries were
 * last told of before a restart (none kept: nothing to tell, as ever).
 */
static bool changed_while_down(notify_out_t *n, const zone_t *z)
{
	state_zone_t st;
	return state_get(n->state, znode_name(z->apex), &st) && st.notified_set &&
	       st.notified != z->serial;
}

void notify_out_published(notify_out_t *n)
{
	MAIN_THREAD_ONLY();
	if (n->closed)
		return;
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(n->zones);
	if (zonedb_owner(db) && zonedb_owner(db) != n->cfg) {
		/* a reconfig published a set of another configuration: it calls again */
		zonedb_read_unlock(n->zones);
		return;
	}
	for (size_t k = 0; k < n->told_count; k++) {
		size_t i = n->told[k];
		const zone_t *z = zonedb_zone(db, i);
		if (!z)
			continue;
		bool changed = n->started ? !n->seen_set[i] || n->seen[i] != z->serial
					  : changed_while_down(n, z);
		if (changed || !n->seen_set[i])
			state_set_notified(n->state, znode_name(z->apex), z->serial);
		n->seen[i] = z->serial;
		n->seen_set[i] = true;
		if (changed) {
			log_info("zone %s: serial %u: notifying %zu secondaries",
				 conf_zone_spec(n->cfg, i)->name, (unsigned)z->serial,
				 conf_zone_xfr(n->cfg, i)->notify.count);
			notify_zone(n, i, z);
		}
	}
	n->started = true;
	zonedb_read_unlock(n->zones);
}

int notify_out_zone(notify_out_t *n, size_t i)
{
	MAIN_THREAD_ONLY();
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(n->zones);
	/* i indexes n->cfg, and the set is built from it (the main thread swaps both) */
	bool same = !zonedb_owner(db) || zonedb_owner(db) == n->cfg;
	const zone_t *z = same ? zonedb_zone(db, i) : NULL;
	int rc = z ? notify_zone(n, i, z) : SHOAL_ENOTFOUND;
	zonedb_read_unlock(n->zones);
	return rc;
}

/*
 * The serials seen of cfg's zones from n's: by name (change
 * ZONEDB_REBUILD), or moved as one zone added (the last) or removed
 * (`removed`) moves them: two copies, no name read. A zone new to cfg has
 * none. Returns 0 or SHOAL_ENOMEM (n as it was). Main thread.
 */
static int seen_carry(notify_out_t *n, const conf_t *cfg, enum zonedb_change change, size_t removed)
{
	size_t cap = cfg->zone_count ? cfg->zone_count : 1;
	uint32_t *seen = calloc(cap, sizeof(*seen));
	bool *seen_set = calloc(cap, sizeof(*seen_set));
	if (!seen || !seen_set) {
		free(seen);
		free(seen_set);
		return SHOAL_ENOMEM;
	}
	size_t before = change == ZONEDB_REMOVED ? removed : n->cfg->zone_count;
	if (change != ZONEDB_REBUILD) {
		memcpy(seen, n->seen, before * sizeof(*seen));
		memcpy(seen_set, n->seen_set, before * sizeof(*seen_set));
	}
	if (change == ZONEDB_REMOVED) {
		size_t after = cfg->zone_count - removed;
		memcpy(seen + removed, n->seen + removed + 1, after * sizeof(*seen));
		memcpy(seen_set + removed, n->seen_set + removed + 1, after * sizeof(*seen_set));
	}
	/* a zone kept keeps its serial seen; a new one is told at the next publication */
	for (size_t i = 0; change == ZONEDB_REBUILD && i < cfg->zone_count; i++) {
		long was = conf_zone_index(n->cfg, conf_zone_spec(cfg, i)->name);
		if (was >= 0) {
			seen[i] = n->seen[was];
			seen_set[i] = n->seen_set[was];
		}
	}
	free(n->seen);
	free(n->seen_set);
	n->seen = seen;
	n->seen_set = seen_set;
	return 0;
}

/*
 * Jobs name zones and targets by their index in the old configuration:
 * those of a zone kept alike, to a secondary still named with the same
 * key, move to their new indexes and go on (their retries, their answer
 * awaited); the others are given up. Main thread.
 */
static void jobs_carry(notify_out_t *n, const conf_t *cfg)
{
	size_t kept = 0;
	for (size_t k = 0; k < n->count; k++) {
		job_t *j = n->jobs[k];
		long i = conf_zone_index(cfg, conf_zone_spec(n->cfg, j->zone)->name);
		size_t t = 0;
		if (i >= 0 && conf_zone_same_data(n->cfg, j->zone, cfg, (size_t)i) &&
		    conf_acl_entry_find(n->cfg, target_of(n, j), cfg,
					&conf_zone_xfr(cfg, i)->notify, &t)) {
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
		job_cancel(n, j);
		free(j);
	}
	n->count = kept;
	/* the timer's list anew: the jobs kept that were on it (those given up are freed) */
	n->active_count = 0;
	for (size_t k = 0; k < kept; k++)
		if (n->jobs[k]->listed)
			n->active[n->active_count++] = n->jobs[k];
}

int notify_out_reconfig(notify_out_t *n, const conf_t *cfg)
{
	return notify_out_reconfig_one(n, cfg, ZONEDB_REBUILD, 0);
}

int notify_out_reconfig_one(notify_out_t *n, const conf_t *cfg, enum zonedb_change change,
			    size_t removed)
{
	MAIN_THREAD_ONLY();
	size_t *told = NULL;
	long told_count = told_list(n, cfg, change, removed, &told);
	int rc = told_count < 0 ? SHOAL_ENOMEM : seen_carry(n, cfg, change, removed);
	if (rc < 0) {
		free(told);
		return rc;
	}
	free(n->told);
	n->told = told;
	n->told_count = (size_t)told_count;
	jobs_carry(n, cfg);
	n->cfg = cfg;
	return 0;
}

static void on_closed(uv_handle_t *h)
{
	notify_out_t *n = h->data;
	n->closes_pending--;
}

void notify_out_close(notify_out_t *n)
{
	MAIN_THREAD_ONLY();
	if (!n || n->closed)
		return;
	n->closed = true;
	n->closes_pending++;
	uv_close((uv_handle_t *)&n->timer, on_closed);
	/* the sends in flight free themselves from the loop's close callbacks */
	for (size_t k = 0; k < n->count; k++)
		job_cancel(n, n->jobs[k]);
}

void notify_out_free(notify_out_t *n)
{
	if (!n)
		return;
	for (size_t k = 0; k < n->count; k++)
		free(n->jobs[k]);
	free(n->jobs);
	free(n->active);
	free(n->seen);
	free(n->seen_set);
	free(n->told);
	free(n);
}
