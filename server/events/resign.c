/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The re-sign event: signing zones' signatures refreshed in batches by one sign thread. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/thread.h"
#include "server/events/internal.h"
#include "zone/journal.h"
#include "zone/sign_version.h"
#include "zone/zone.h"

/*
 * One thread signs the batches, one zone after another, as the reload and
 * update threads change zones: under the zone set's writer lock
 * (reload_change_zone), so no reload, update or transfer comes between
 * reading the version served and publishing the next. A batch is bounded
 * (SIGN_REFRESH_BATCH RRsets), so the lock is held a fifth of a second at
 * most; more threads would share the two CPUs with the transfers.
 *
 * A batch takes the RRSIGs whose refresh point falls within the next
 * jitter/16 seconds: rrsig-jitter spreads a zone's expirations, so its
 * refresh comes in about 16 batches spread over the jitter (more when the
 * cap cuts one), each a serial and one IXFR's worth of signatures, never
 * the whole zone at once, nor a serial per second.
 */
#define RESIGN_WINDOW_PARTS 16

/* A batch that failed is tried again this long after (s), or rrsig-refresh/8 when shorter. */
#define RESIGN_RETRY_S 3600

/* One batch under the writer lock: the zone, and what became of it. */
typedef struct resign_run {
	char name[NAME_TEXT_MAX];
	int64_t next_ms;
	int rc;
	uint32_t from, to;
	bool logged; /* an error was said through on_msg */
} resign_run_t;

static void on_msg(void *arg, bool is_error, const char *msg)
{
	resign_run_t *r = arg;
	r->logged |= is_error;
	log_msg(is_error ? LOG_LEVEL_ERROR : LOG_LEVEL_INFO, "zone %s: re-sign: %s", r->name, msg);
}

/* The batch's window: the refresh points in the next jitter/16 seconds, one at least. */
static int64_t batch_window(const zone_sign_spec_t *sign)
{
	int64_t w = sign->rrsig_jitter / RESIGN_WINDOW_PARTS;
	return w > 0 ? w : 1;
}

/*
 * reload_change_zone's step: one batch of zone i's signatures, journalled
 * (before publication, as a transfer's), its version the next served.
 */
static int resign_change(void *arg, const zonedb_t *db, size_t i, zone_t **next)
{
	resign_run_t *r = arg;
	const conf_t *cfg = zonedb_owner(db);
	const zone_t *z = zonedb_zone(db, i);
	int64_t now = time(NULL);
	if (!cfg || i >= cfg->zone_count || !conf_zone_spec(cfg, i)->sign ||
	    conf_zone_is_secondary(cfg, i) || !z || z->denial == ZONE_DENIAL_NONE)
		return 0; /* not signed (yet): a reload or the next adopt tells */
	const zone_spec_t *spec = conf_zone_spec(cfg, i);
	int64_t retry = spec->sign->rrsig_refresh / 8 + 1;
	r->next_ms = (now + (retry < RESIGN_RETRY_S ? retry : RESIGN_RETRY_S)) * 1000;
	changeset_t *cs = NULL;
	zone_t *out = NULL;
	int64_t next_at;
	r->rc = sign_version_refresh(z, spec->sign, now, batch_window(spec->sign), &spec->limits,
				     on_msg, r, &cs, &out, &next_at);
	if (r->rc < 0)
		return 0;
	r->next_ms = next_at * 1000;
	if (!cs)
		return 0;
	journal_t *j = zonedb_journal_make(db, i, (size_t)spec->limits.max_journal);
	const changeset_t *sets[1] = { cs };
	if (j)
		journal_report(j, journal_add_all(j, sets, 1), on_msg, r);
	changeset_unref(cs);
	r->from = z->serial;
	r->to = out->serial;
	*next = out;
	return 0;
}

/* One batch of e's zone: signed, published, NOTIFY asked; e->next_ms set. The sign thread. */
static void resign_one(sched_t *s, resign_zone_t *e)
{
	resign_run_t r = { .next_ms = sched_now_ms() + RESIGN_RETRY_S * 1000 };
	if (name_to_text(e->apex, r.name, sizeof(r.name)) < 0)
		strcpy(r.name, "?");
	int rc = reload_change_zone(s->reload, e->apex, resign_change, &r, &s->stop);
	if (rc == 0)
		rc = r.rc;
	/* a stop (ETIMEOUT) or the zone gone meanwhile (ENOTFOUND) is no failure */
	if (rc < 0 && !r.logged && rc != SHOAL_ETIMEOUT && rc != SHOAL_ENOTFOUND)
		log_error("zone %s: signatures not refreshed: %s", r.name, shoal_strerror(rc));
	else if (rc == 0 && r.to != r.from) {
		log_info("zone %s: signatures refreshed, serial %u -> %u", r.name, (unsigned)r.from,
			 (unsigned)r.to);
		if (s->published)
			s->published(s->published_arg); /* NOTIFY out follows */
	}
	e->next_ms = r.next_ms;
}

static void *sign_main(void *arg)
{
	sched_t *s = arg;
	rcu_register_thread();
	pthread_mutex_lock(&s->sign_lock);
	for (;;) {
		while (!s->sign_head && !s->sign_stop)
			pthread_cond_wait(&s->sign_cond, &s->sign_lock);
		if (s->sign_stop)
			break;
		resign_zone_t *e = s->sign_head;
		s->sign_head = e->next;
		if (!s->sign_head)
			s->sign_tail = NULL;
		pthread_mutex_unlock(&s->sign_lock);
		resign_one(s, e);
		pthread_mutex_lock(&s->sign_lock);
		e->next = s->sign_done;
		s->sign_done = e;
		sem_post(&s->wake);
	}
	pthread_mutex_unlock(&s->sign_lock);
	rcu_unregister_thread();
	return NULL;
}

int sched_sign_start(sched_t *s)
{
	int e = thread_start(&s->sign_thread, NULL, sign_main, s, "shoald-sign");
	s->sign_started = e == 0;
	return e;
}

/* ---- the scheduler's side ---- */

static int cmp_apex(const void *key, const void *elem)
{
	return name_compare(key, (*(resign_zone_t *const *)elem)->apex);
}

/* The place apex has, or would have, in the sorted list; *found whether it is there. */
static size_t sign_pos(const sched_t *s, const uint8_t *apex, bool *found)
{
	size_t lo = 0, hi = s->signing_count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_apex(apex, &s->signing[mid]);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*found = false;
	return lo;
}

/* e off the timers, freed unless the sign thread holds it (then once back). */
static void retire(sched_t *s, resign_zone_t *e)
{
	heap_remove(&s->resign, &e->due);
	e->retired = true;
	if (!e->running)
		free(e);
}

/* Zone apex signs: an entry for it, due now, unless it has one. False when out of memory. */
static bool sign_add(sched_t *s, const uint8_t *apex, int64_t now)
{
	bool found;
	size_t at = sign_pos(s, apex, &found);
	if (found)
		return true;
	size_t len = name_length(apex);
	resign_zone_t *e = calloc(1, sizeof(*e) + len);
	if (e && s->signing_count == s->signing_cap) {
		size_t cap = s->signing_cap ? 2 * s->signing_cap : 16;
		resign_zone_t **grown = realloc(s->signing, cap * sizeof(*grown));
		if (grown) {
			s->signing = grown;
			s->signing_cap = cap;
		}
	}
	if (!e || s->signing_count == s->signing_cap) {
		free(e);
		return false;
	}
	memcpy(e->apex, apex, len);
	name_lower(e->apex);
	e->apex_len = (uint8_t)len;
	memmove(&s->signing[at + 1], &s->signing[at],
		(s->signing_count - at) * sizeof(*s->signing));
	s->signing[at] = e;
	s->signing_count++;
	return heap_set(&s->resign, &e->due, (uint64_t)now) == 0;
}

/* Zone apex no longer signs: its entry retired. */
static void sign_drop(sched_t *s, const uint8_t *apex)
{
	bool found;
	size_t at = sign_pos(s, apex, &found);
	if (!found)
		return;
	retire(s, s->signing[at]);
	memmove(&s->signing[at], &s->signing[at + 1],
		(s->signing_count - at - 1) * sizeof(*s->signing));
	s->signing_count--;
}

/*
 * The apex of cfg's zone i when its signatures are refreshed in batches,
 * into apex; false otherwise. A secondary's are not: its transfer in is
 * signed against the version it started from and journalled before it is
 * published, outside the writer's step a batch takes, so a batch beside it
 * would be replaced and leave the journal two changes from one serial.
 * A transfer past the refresh point signs a secondary anew (`retransfer`).
 */
static bool signing_apex(const conf_t *cfg, size_t i, uint8_t *apex)
{
	const zone_spec_t *spec = conf_zone_spec(cfg, i);
	if (!spec->sign || conf_zone_is_secondary(cfg, i) ||
	    name_from_text(spec->name, NULL, apex) < 0)
		return false;
	name_lower(apex);
	return true;
}

void sched_sign_adopt(sched_t *s, const sec_table_t *old, const sec_table_t *t)
{
	uint8_t apex[NAME_MAXLEN];
	int64_t now = sched_now_ms();
	bool ok = true;
	if (old && t->base == old) {
		/* one zone added (the last) or removed: that one alone */
		size_t i = t->change == ZONEDB_ADDED ? t->cfg.zone_count - 1 : t->removed;
		const conf_t *cfg = t->change == ZONEDB_ADDED ? &t->cfg : &old->cfg;
		if (i < cfg->zone_count && signing_apex(cfg, i, apex))
			ok = t->change == ZONEDB_ADDED ? sign_add(s, apex, now)
						       : (sign_drop(s, apex), true);
	} else {
		/* every zone: those that sign now are marked, the others dropped */
		for (size_t k = 0; k < s->signing_count; k++)
			s->signing[k]->listed = false;
		for (size_t i = 0; i < t->cfg.zone_count; i++) {
			bool found;
			if (!signing_apex(&t->cfg, i, apex))
				continue;
			size_t at = sign_pos(s, apex, &found);
			if (!found && !sign_add(s, apex, now))
				ok = false;
			if (!found)
				at = sign_pos(s, apex, &found);
			if (found)
				s->signing[at]->listed = true;
		}
		for (size_t k = s->signing_count; k-- > 0;)
			if (!s->signing[k]->listed)
				sign_drop(s, s->signing[k]->apex);
	}
	if (!ok)
		log_error("signing zones: out of memory: a zone's signatures are not refreshed");
}

/* The batches the sign thread finished: re-armed for their next, or freed when retired. */
static void take_signed(sched_t *s)
{
	pthread_mutex_lock(&s->sign_lock);
	resign_zone_t *e = s->sign_done;
	s->sign_done = NULL;
	pthread_mutex_unlock(&s->sign_lock);
	while (e) {
		resign_zone_t *next = e->next;
		e->running = false;
		if (e->retired)
			free(e);
		else if (heap_set(&s->resign, &e->due, (uint64_t)e->next_ms) < 0)
			log_error("signing zones: out of memory: a zone's signatures are not "
				  "refreshed");
		e = next;
	}
}

int64_t sched_sign_due_now(sched_t *s, int64_t now)
{
	take_signed(s);
	heap_node_t *top;
	while ((top = heap_top(&s->resign)) && (int64_t)top->key <= now) {
		resign_zone_t *e = (resign_zone_t *)((char *)top - offsetof(resign_zone_t, due));
		heap_remove(&s->resign, top);
		e->running = true;
		e->next = NULL;
		pthread_mutex_lock(&s->sign_lock);
		if (s->sign_tail)
			s->sign_tail->next = e;
		else
			s->sign_head = e;
		s->sign_tail = e;
		pthread_cond_signal(&s->sign_cond);
		pthread_mutex_unlock(&s->sign_lock);
	}
	return top ? (int64_t)top->key : SCHED_NEVER;
}

void sched_sign_stop(sched_t *s)
{
	if (s->sign_started) {
		pthread_mutex_lock(&s->sign_lock);
		s->sign_stop = true;
		pthread_cond_signal(&s->sign_cond);
		pthread_mutex_unlock(&s->sign_lock);
		pthread_join(s->sign_thread, NULL);
		s->sign_started = false;
	}
	/* queued or handed back: those retired are on no list but these */
	resign_zone_t *lists[2] = { s->sign_head, s->sign_done };
	for (int k = 0; k < 2; k++)
		for (resign_zone_t *e = lists[k], *next; e; e = next) {
			next = e->next;
			if (e->retired)
				free(e);
		}
	s->sign_head = s->sign_tail = s->sign_done = NULL;
	heap_clear(&s->resign);
	for (size_t k = 0; k < s->signing_count; k++)
		free(s->signing[k]);
	free(s->signing);
	s->signing = NULL;
	s->signing_count = 0;
}
