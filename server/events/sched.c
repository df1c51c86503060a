/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The zone-event scheduler: due times in heaps, one thread that fires them, a pool that refreshes.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "proto/serial.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/thread.h"
#include "server/common/timestamp.h"
#include "server/events/internal.h"
#include "zone/sign_version.h"
#include "zone/zone.h"

/*
 * ThreadSanitizer does not see the ordering liburcu's grace period gives
 * (see zone/zonedb.c): under TSan each read section of the table shown
 * ends with a release that adopt acquires after its grace period, before
 * it frees a table or an entry. Nothing of this is in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define SCHED_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SCHED_TSAN 1
#endif
#endif
#ifdef SCHED_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* The longest the scheduler sleeps: it looks at its stop flag this often. */
#define SCHED_TICK_MS 500
/* A zone is refreshed for NOTIFYs at most this often (a flood of them makes one refresh a second).
 */
#define SCHED_NOTIFY_GAP_MS 1000
/* The state is saved at most this often, and less often when a save takes long. */
#define SCHED_SAVE_MIN_MS 10000

int64_t sched_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

pthread_mutex_t *sched_pub_lock(sched_t *s, const sec_zone_t *z)
{
	return &s->pub_locks[(size_t)name_hash(z->apex, s->key) % SCHED_PUB_LOCKS];
}

/* ---- the inbox: zones handed to the scheduler by any thread ---- */

void sched_kick(sched_t *s, sec_zone_t *z)
{
	if (__atomic_exchange_n(&z->queued, 1, __ATOMIC_ACQ_REL))
		return; /* in the inbox already: the scheduler reads its flags when it takes it */
	sec_zone_t *head = __atomic_load_n(&s->inbox, __ATOMIC_ACQUIRE);
	do
		z->inbox_next = head;
	while (!__atomic_compare_exchange_n(&s->inbox, &head, z, true, __ATOMIC_RELEASE,
					    __ATOMIC_ACQUIRE));
	sem_post(&s->wake);
}

/* When a refresh z wants by its flags may start: now, or a NOTIFY's gap after its last. */
static int64_t wanted_at(const sec_zone_t *z, unsigned want, int64_t now)
{
	if (want & (SEC_WANT_REFRESH | SEC_WANT_RETRANSFER))
		return now;
	int64_t gap = z->started_at + SCHED_NOTIFY_GAP_MS;
	return gap > now ? gap : now;
}

/* z's refresh due at `at` when that is sooner than its timer's. The scheduler. */
static void due_by(sched_t *s, sec_zone_t *z, int64_t at)
{
	if (!heap_has(&z->due) || (int64_t)z->due.key > at)
		heap_set(&s->due, &z->due, (uint64_t)at);
}

/* The zones handed over: those that want a refresh are due for it. The scheduler. */
static void take_inbox(sched_t *s)
{
	sec_zone_t *z = __atomic_exchange_n(&s->inbox, NULL, __ATOMIC_ACQ_REL);
	int64_t now = sched_now_ms();
	while (z) {
		sec_zone_t *next = z->inbox_next;
		__atomic_store_n(&z->queued, 0, __ATOMIC_RELEASE);
		unsigned want = __atomic_load_n(&z->want, __ATOMIC_ACQUIRE);
		/* a running one is seen to when it ends; a fresh one when adopted */
		if (want && !z->running && !z->retired && !z->fresh)
			due_by(s, z, wanted_at(z, want, now));
		if (__atomic_exchange_n(&z->flush_wanted, 0, __ATOMIC_ACQ_REL) && !z->retired &&
		    !z->fresh && s->work)
			sched_flush_plan(s, z, now);
		z = next;
	}
}

/* ---- timers ---- */

/* What zone-status shows of z's timers. The scheduler. */
static void show_timers(sec_zone_t *z)
{
	__atomic_store_n(&z->shown_next, z->refresh_at / 1000, __ATOMIC_RELAXED);
	__atomic_store_n(&z->shown_expires, z->t.have ? z->expire_at / 1000 : 0, __ATOMIC_RELAXED);
}

/* z's timers into the state kept across restarts. The scheduler. */
static void keep_timers(sched_t *s, sec_zone_t *z)
{
	state_zone_t st = { .timers = true,
			    .have = z->t.have,
			    .serial = z->t.serial,
			    .refresh_at = z->refresh_at / 1000,
			    .expire_at = z->expire_at / 1000 };
	state_set_timers(s->state, z->apex, &st);
	show_timers(z);
}

/* z on its timers: the next refresh, and the expiry of the version served. The scheduler. */
static void arm(sched_t *s, sec_zone_t *z)
{
	unsigned want = __atomic_load_n(&z->want, __ATOMIC_ACQUIRE);
	int64_t at = z->refresh_at;
	if (want) {
		int64_t w = wanted_at(z, want, sched_now_ms());
		at = w < at ? w : at;
	}
	heap_set(&s->due, &z->due, (uint64_t)at);
	if (z->t.have)
		heap_set(&s->expiry, &z->expiry, (uint64_t)z->expire_at);
	else
		heap_remove(&s->expiry, &z->expiry);
	keep_timers(s, z);
}

/*
 * A zone new to the scheduler: its version from the set served, its
 * timers from the state kept when they are for that version (a restart
 * resumes them: RFC 1035 3.3.13's expiry counts from the last refresh, not
 * from the start), else due now and expiring its expire from now. Returns
 * whether its refresh is due now (to be spread). The scheduler.
 */
static bool zone_start(sched_t *s, sec_zone_t *z, const conf_t *cfg, const zonedb_t *db,
		       int64_t now)
{
	long at = zonedb_index(db, z->apex);
	const zone_t *v = at < 0 ? NULL : zonedb_zone(db, (size_t)at);
	sec_timers_from(cfg, v, &z->t);
	/* a signed version's serial is not the primary's: a NOTIFY is judged by the primary's */
	const zone_sign_spec_t *sign = conf_zone_spec(cfg, z->index)->sign;
	if (v && sign)
		sign_upstream(sign, z->apex, v->serial, &z->t.notify_from);
	sec_set_status(s, z, v ? "file" : "none", NULL);
	z->refresh_at = now;
	z->expire_at = now + (int64_t)z->t.expire * 1000;
	state_zone_t st;
	if (state_get(s->state, z->apex, &st) && st.timers && st.have == z->t.have &&
	    (!st.have || st.serial == z->t.serial)) {
		z->refresh_at = st.refresh_at * 1000;
		if (st.have)
			z->expire_at = st.expire_at * 1000;
	}
	return z->refresh_at <= now;
}

/*
 * Spread the refreshes of the zones `due` (count of them) over a window
 * that grows with their number: twice what serial-query-rate needs to ask
 * them all, so that a start with many zones does not ask every primary at
 * once, and leaves room for NOTIFYs. The scheduler.
 */
static void spread(sched_t *s, sec_zone_t **due, size_t count, int64_t now)
{
	uint32_t rate = s->work ? s->work->cfg.serial_query_rate : 1;
	uint64_t window = (uint64_t)count * 2000 / (rate ? rate : 1);
	for (size_t k = 0; k < count; k++) {
		uint32_t jitter =
			window ? randombytes_uniform(
					 (uint32_t)(window > UINT32_MAX ? UINT32_MAX : window))
			       : 0;
		due[k]->refresh_at = now + jitter;
		arm(s, due[k]);
	}
	if (count > 1)
		log_info("secondary zones: %zu refreshes due, spread over %llu s", count,
			 (unsigned long long)(window / 1000));
}

/* ---- the pool ---- */

static void *pool_main(void *arg);

/*
 * Pool threads for n zones: one a zone, transfers-in at most. The
 * scheduler, or main before start.
 */
static void pool_grow(sched_t *s, size_t n)
{
	unsigned want = n < s->pool_max ? (unsigned)n : s->pool_max;
	while (s->threads < want) {
		sec_job_t *job = &s->jobs[s->threads];
		job->s = s;
		job->number = s->threads;
		sem_init(&job->go, 0, 0);
		int e = thread_start(&job->thread, NULL, pool_main, job, "shoald-xfr-%u",
				     job->number);
		if (e) {
			sem_destroy(&job->go);
			log_error("secondary zones: cannot start transfer thread %u: %s",
				  job->number, shoal_strerror(e));
			return;
		}
		s->threads++;
		job->next = s->idle;
		s->idle = job;
	}
}

/* A pool thread: refresh the zone it is given, hand it back, wait for the next. */
static void *pool_main(void *arg)
{
	sec_job_t *job = arg;
	sched_t *s = job->s;
	rcu_register_thread();
	for (;;) {
		while (sem_wait(&job->go) < 0 && errno == EINTR)
			;
		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
			break;
		job->ok = sec_refresh(job);
		pthread_mutex_lock(&s->done_lock);
		job->next = s->done;
		s->done = job;
		pthread_mutex_unlock(&s->done_lock);
		sem_post(&s->wake);
	}
	rcu_unregister_thread();
	return NULL;
}

/* Start z's refresh on an idle pool thread. The scheduler. */
static void job_start(sched_t *s, sec_zone_t *z, unsigned want)
{
	sec_job_t *job = s->idle;
	s->idle = job->next;
	pthread_mutex_lock(&s->flight_lock);
	job->z = z;
	job->table = s->work;
	job->index = z->index;
	job->forced = want & SEC_WANT_RETRANSFER;
	__atomic_store_n(&job->give_up, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->flight_lock);
	s->work->refs++;
	z->running = true;
	z->started_at = sched_now_ms();
	heap_remove(&s->due, &z->due);
	s->running++;
	stats_set(&s->counters->running, s->running);
	stats_add_shared(&s->counters->refreshes, 1);
	sem_post(&job->go);
}

/* A refresh ended: its zone back on its timers (or freed, gone meanwhile). The scheduler. */
static void job_done(sched_t *s, sec_job_t *job)
{
	sec_zone_t *z = job->z;
	const sec_table_t *t = job->table;
	pthread_mutex_lock(&s->flight_lock);
	job->z = NULL;
	job->table = NULL;
	pthread_mutex_unlock(&s->flight_lock);
	sched_table_unref((sec_table_t *)t);
	job->next = s->idle;
	s->idle = job;
	s->running--;
	stats_set(&s->counters->running, s->running);
	z->running = false;
	if (z->retired) {
		sched_entry_free(s, z); /* in no table shown, in no inbox (sched_adopt) */
		return;
	}
	/* RFC 1035 3.3.13: refresh after success, retry after failure; the timers of its version */
	sec_bound_timers(&s->work->cfg, &z->t);
	int64_t now = sched_now_ms();
	z->refresh_at = now + (int64_t)(job->ok ? z->t.refresh : z->t.retry) * 1000;
	arm(s, z);
}

/* The refreshes the pool finished. The scheduler. */
static void take_done(sched_t *s)
{
	pthread_mutex_lock(&s->done_lock);
	sec_job_t *job = s->done;
	s->done = NULL;
	pthread_mutex_unlock(&s->done_lock);
	/* what these refreshes handed over (a write of their file) before a retired entry goes */
	take_inbox(s);
	while (job) {
		sec_job_t *next = job->next;
		job_done(s, job);
		job = next;
	}
}

/*
 * Whether z, due, is to be refreshed now: its timer says so, or a flag
 * does; a NOTIFY whose serial is not newer than the one served by now
 * (a refresh since took it) does not. Takes the flags. The scheduler.
 */
static bool refresh_wanted(sec_zone_t *z, int64_t now, unsigned *want)
{
	*want = __atomic_exchange_n(&z->want, 0, __ATOMIC_ACQ_REL);
	if (now >= z->refresh_at || (*want & ~SEC_WANT_NOTIFY))
		return true;
	uint32_t serial = __atomic_load_n(&z->notify_serial, __ATOMIC_ACQUIRE);
	return (*want & SEC_WANT_NOTIFY) && (!z->t.have || serial_gt(serial, z->t.notify_from));
}

/* ---- serial-query-rate: a token bucket ---- */

/*
 * Take a token for one refresh (its SOA query): true, or false with *next
 * set to when one will be there. The bucket holds a tenth of a second's
 * worth, so no second sees more than 1.1 x the rate. The scheduler.
 */
static bool rate_take(sched_t *s, int64_t now, int64_t *next)
{
	int64_t rate = s->work->cfg.serial_query_rate;
	int64_t cap = (rate / 10 + 1) * 1000;
	s->tokens += (now - s->tokens_at) * rate;
	s->tokens_at = now;
	if (s->tokens > cap)
		s->tokens = cap;
	if (s->tokens >= 1000) {
		s->tokens -= 1000;
		return true;
	}
	*next = now + (1000 - s->tokens + rate - 1) / rate;
	return false;
}

/*
 * Start the refreshes due, as pool threads and tokens allow. Returns when
 * to look again (SCHED_NEVER: when something wakes it). The scheduler.
 */
static int64_t dispatch(sched_t *s, int64_t now)
{
	heap_node_t *top;
	while ((top = heap_top(&s->due))) {
		sec_zone_t *z = ZONE_OF(top, due);
		if ((int64_t)top->key > now)
			return (int64_t)top->key;
		if (!s->idle)
			return SCHED_NEVER; /* a refresh that ends wakes it */
		int64_t next;
		if (!rate_take(s, now, &next)) {
			if (!s->waiting_rate)
				stats_add_shared(&s->counters->rate_limited, 1);
			s->waiting_rate = true;
			return next;
		}
		s->waiting_rate = false;
		unsigned want;
		if (refresh_wanted(z, now, &want)) {
			job_start(s, z, want);
			continue;
		}
		s->tokens += 1000; /* not asked: the token is given back */
		heap_set(&s->due, &z->due, (uint64_t)z->refresh_at);
	}
	return SCHED_NEVER;
}

/* Expire the zones due. Returns when the next is due. The scheduler. */
static int64_t expire(sched_t *s, int64_t now)
{
	heap_node_t *top;
	while ((top = heap_top(&s->expiry)) && (int64_t)top->key <= now) {
		sec_zone_t *z = ZONE_OF(top, expiry);
		heap_remove(&s->expiry, top);
		/* the table worked on names it: a zone gone is in no heap */
		int64_t again =
			sec_expire(s, z, conf_zone_spec(&s->work->cfg, z->index)->name, now);
		if (z->running)
			continue; /* its refresh's end arms it */
		if (again)
			heap_set(&s->expiry, &z->expiry, (uint64_t)again);
		else
			due_by(s, z, now); /* nothing served: a version is wanted now */
		keep_timers(s, z);
	}
	return top ? (int64_t)top->key : SCHED_NEVER;
}

/* Save the state when it changed, no more often than a save's cost allows. The scheduler. */
static int64_t save(sched_t *s, int64_t now)
{
	if (!state_dirty(s->state))
		return SCHED_NEVER;
	if (now < s->save_at)
		return s->save_at;
	char err[512];
	int64_t t0 = sched_now_ms();
	if (state_save(s->state, err, sizeof(err)) < 0) {
		stats_add_shared(&s->counters->state_save_errors, 1);
		log_error("state-dir: cannot save the zones' timers: %s", err);
	} else {
		stats_add_shared(&s->counters->state_saves, 1);
	}
	/* a save that takes long (a million zones) comes less often: 5% of the time at most */
	int64_t took = sched_now_ms() - t0;
	s->save_gap_ms = 20 * took > SCHED_SAVE_MIN_MS ? 20 * took : SCHED_SAVE_MIN_MS;
	s->save_at = now + s->save_gap_ms;
	return s->save_at;
}

/* ---- reconfig ---- */

/*
 * Take the table a reconfig posted, if any: zones it keeps with the same
 * data and primaries keep their timers (the timers' new bounds apply from
 * their next refresh); zones added are started (their timers resumed from
 * the state); zones whose primaries changed are refreshed soon; zones
 * gone are retired. The scheduler, between two events.
 */
static void adopt(sched_t *s);

/* Zone z, gone from the configuration: off the timers, freed unless running. The scheduler. */
static void retire(sched_t *s, sec_zone_t *z)
{
	heap_remove(&s->due, &z->due);
	heap_remove(&s->expiry, &z->expiry);
	heap_remove(&s->flush, &z->flush); /* its file is no longer the zone's */
	z->retired = true;
	if (!z->running)
		sched_entry_free(s, z);
	stats_add_shared(&s->counters->zones_taken, 1);
}

/* Zones of old that t does not have: retired. The scheduler. */
static void retire_gone(sched_t *s, sec_table_t *old, const sec_table_t *t)
{
	for (size_t k = 0; old && k < old->count; k++)
		if (sched_table_find(s, t, old->zones[k]->apex) != old->zones[k])
			retire(s, old->zones[k]);
}

/*
 * A reconfig gave kept zone z the file `now` where it had `was`: the new
 * file does not hold the version db serves, if any (its refresh writes it),
 * and no file has nothing to hold. The scheduler, in a read section of db.
 */
static void file_moved(sched_t *s, sec_zone_t *z, const zonedb_t *db, const char *was,
		       const char *now)
{
	was = was ? was : "";
	now = now ? now : "";
	long at = zonedb_index(db, z->apex);
	bool served = at >= 0 && zonedb_zone(db, (size_t)at);
	if (!*now)
		sec_set_saved(s, z, true, NULL);
	else if (strcmp(was, now) && served)
		sec_set_saved(s, z, false, NULL);
}

/*
 * Zone z, new to the scheduler as cfg's zone i: started; to due[] when its
 * refresh is due now (to be spread), else armed. The scheduler, in a read
 * section of db.
 */
static void take_fresh(sched_t *s, sec_zone_t *z, size_t i, const conf_t *cfg, const zonedb_t *db,
		       sec_zone_t **due, size_t *due_count)
{
	z->fresh = false;
	z->index = i;
	if (zone_start(s, z, cfg, db, sched_now_ms()) && due)
		due[(*due_count)++] = z;
	else
		arm(s, z);
}

/*
 * t, derived from the table worked on by one zone added or removed
 * (sched_table_new): every other zone has the settings it had, so it keeps
 * its timers untouched and only its index moves (past a removed zone);
 * the zone added is started, the one removed retired. So a zone-add or a
 * catalog's one member costs one zone here, not a pass over 100,000
 * (each kept zone's primaries compared, timers re-armed and saved).
 * Returns how many were kept. The scheduler.
 */
static size_t take_one(sched_t *s, sec_table_t *t, sec_zone_t **due, size_t *due_count)
{
	for (size_t k = 0; t->change == ZONEDB_REMOVED && k < t->count; k++)
		t->zones[k]->index = t->index[k];
	sec_zone_t *z = t->count ? t->zones[t->count - 1] : NULL;
	if (t->change == ZONEDB_ADDED && z && z->fresh) {
		zonedb_read_lock();
		take_fresh(s, z, t->index[t->count - 1], &t->cfg, zonedb_current(s->zones), due,
			   due_count);
		zonedb_read_unlock(s->zones);
		stats_add_shared(&s->counters->zones_taken, 1);
		return t->count - 1;
	}
	if (t->gone)
		retire(s, t->gone);
	return t->count;
}

/*
 * The zones of t, fresh or kept: started, moved to their new index. The
 * fresh ones due now go to due[] to be spread (due NULL: armed at once).
 * Returns how many were kept with their timers. The scheduler.
 */
static size_t take_zones(sched_t *s, const sec_table_t *old, sec_table_t *t, sec_zone_t **due,
			 size_t *due_count)
{
	size_t kept = 0;
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(s->zones);
	stats_add_shared(&s->counters->zones_taken, t->count);
	for (size_t k = 0; k < t->count; k++) {
		sec_zone_t *z = t->zones[k];
		size_t i = t->index[k];
		if (z->fresh) {
			take_fresh(s, z, i, &t->cfg, db, due, due_count);
			continue;
		}
		bool same = old && conf_zone_same_primaries(&old->cfg, z->index, &t->cfg, i);
		if (old)
			file_moved(s, z, db, conf_zone_spec(&old->cfg, z->index)->file,
				   conf_zone_spec(&t->cfg, i)->file);
		z->index = i;
		/* a save that failed is tried again now: the reconfig may have fixed its path */
		if (!same || __atomic_load_n(&z->unsaved, __ATOMIC_ACQUIRE))
			__atomic_fetch_or(&z->want, SEC_WANT_REFRESH, __ATOMIC_ACQ_REL);
		kept += same;
		if (z->running)
			continue; /* its timers are the refresh's: taken when it ends */
		sec_bound_timers(&t->cfg, &z->t);
		arm(s, z);
	}
	zonedb_read_unlock(s->zones);
	return kept;
}

static void adopt(sched_t *s)
{
	sec_table_t *t = __atomic_exchange_n(&s->pending, NULL, __ATOMIC_ACQ_REL);
	if (!t)
		return;
	sec_table_t *old = s->work;
	/* no reader holds a table shown before t after this: none finds a zone t drops */
	synchronize_rcu();
#ifdef SCHED_TSAN
	__tsan_acquire(&s->tsan_sections);
#endif
	/* and what they handed over is in the inbox: taken before any entry is freed */
	take_inbox(s);
	/* the zones of both tables for a moment: those gone are taken out after the new are in */
	size_t most = t->count + (old ? old->count : 0);
	if (heap_reserve(&s->due, most) < 0 || heap_reserve(&s->expiry, most) < 0)
		log_error("secondary zones: out of memory for the timers: some zones may not be "
			  "refreshed");
	bool one = old && t->base == old; /* one zone added or removed: take_one */
	sec_zone_t **due = malloc((t->count && !one ? t->count : 1) * sizeof(*due));
	size_t due_count = 0;
	s->work = t;
	t->refs++;
	/*
	 * The tables posted in between and never taken: the entries made for
	 * them that t does not keep, each once, while old's entries (which
	 * they hold too) are still there to be looked at.
	 */
	sched_table_drop_fresh(s, t->skipped, t);
	for (sec_table_t *k = t->skipped, *next; k; k = next) {
		next = k->skipped;
		sched_table_free(k);
	}
	t->skipped = NULL;
	size_t kept;
	if (one) {
		kept = take_one(s, t, due, &due_count);
	} else {
		kept = take_zones(s, old, t, due, &due_count);
		retire_gone(s, old, t);
	}
	spread(s, due, due_count, sched_now_ms());
	free(due);
	sched_sign_adopt(s, old, t);
	if (old)
		sched_table_unref(old);
	stats_set(&s->counters->zones, t->count);
	pool_grow(s, t->count);
	if (old)
		log_info("secondary zones: %zu kept with their timers, %zu checked anew", kept,
			 t->count - kept);
}

/* ---- the scheduler thread ---- */

/* Sleep until `until` (ms), a wake-up or SCHED_TICK_MS, whichever comes first. */
static void sleep_until(sched_t *s, int64_t until)
{
	int64_t now = sched_now_ms();
	int64_t ms = until - now;
	if (ms > SCHED_TICK_MS)
		ms = SCHED_TICK_MS;
	if (ms < 1)
		ms = 1;
	struct timespec d;
	clock_gettime(CLOCK_REALTIME, &d);
	d.tv_nsec += (long)(ms % 1000) * 1000000L;
	d.tv_sec += ms / 1000 + d.tv_nsec / 1000000000L;
	d.tv_nsec %= 1000000000L;
	while (sem_timedwait(&s->wake, &d) < 0 && errno == EINTR)
		;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static void *sched_main(void *arg)
{
	sched_t *s = arg;
	rcu_register_thread();
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		adopt(s);
		take_done(s);
		take_inbox(s);
		int64_t now = sched_now_ms();
		int64_t next = expire(s, now);
		next = min64(next, dispatch(s, now));
		next = min64(next, sched_flush_due_now(s, now));
		next = min64(next, sched_sign_due_now(s, now));
		next = min64(next, save(s, now));
		sleep_until(s, next);
	}
	rcu_unregister_thread();
	return NULL;
}

/* ---- the API ---- */

bool sched_wanted(const conf_t *cfg)
{
	if (conf_secondary_count(cfg))
		return true;
	for (size_t i = 0; i < cfg->zone_count; i++)
		if (conf_zone_spec(cfg, i)->sign)
			return true;
	return false;
}

int sched_new(const conf_t *cfg, const sched_env_t *env, sched_t **out)
{
	MAIN_THREAD_ONLY();
	*out = NULL;
	if (!sched_wanted(cfg))
		return 0;
	sched_t *s = calloc(1, sizeof(*s));
	if (!s)
		return SHOAL_ENOMEM;
	randombytes_buf(s->key, sizeof(s->key));
	pthread_mutex_init(&s->all_lock, NULL);
	pthread_mutex_init(&s->status_lock, NULL);
	pthread_mutex_init(&s->done_lock, NULL);
	pthread_mutex_init(&s->flight_lock, NULL);
	for (size_t k = 0; k < SCHED_PUB_LOCKS; k++)
		pthread_mutex_init(&s->pub_locks[k], NULL);
	sem_init(&s->wake, 0, 0);
	heap_init(&s->due);
	heap_init(&s->expiry);
	heap_init(&s->flush);
	heap_init(&s->resign);
	pthread_mutex_init(&s->sign_lock, NULL);
	pthread_cond_init(&s->sign_cond, NULL);
	pthread_mutex_init(&s->flush_lock, NULL);
	pthread_cond_init(&s->flush_cond, NULL);
	s->zones = env->zones;
	s->reload = env->reload;
	s->state = env->state;
	s->published = env->published;
	s->published_arg = env->published_arg;
	s->xfr_in = env->xfr_in;
	s->counters = env->counters;
	s->tls = env->tls;
	s->pool_max = env->transfers_in < SCHED_POOL_MAX ? env->transfers_in : SCHED_POOL_MAX;
	s->tokens_at = sched_now_ms();
	sec_table_t *t = sched_table_new(s, cfg, NULL, ZONEDB_REBUILD, 0);
	if (!t) {
		sched_free(s);
		return SHOAL_ENOMEM;
	}
	/* the first table is adopted as a reconfig's, by the thread at its start */
	s->shown = s->pending = t;
	*out = s;
	return 0;
}

int sched_start(sched_t *s)
{
	if (!s)
		return 0;
	/* the pool first, so the zones due at start find its threads */
	pool_grow(s, s->pending->count);
	int e = sched_flush_start(s);
	if (e == 0)
		e = sched_sign_start(s);
	if (e)
		return e;
	/* ps -L and top -H show it so; so do the tests that see it stop */
	e = thread_start(&s->thread, NULL, sched_main, s, "shoald-sched");
	if (e)
		return e;
	s->started = true;
	return 0;
}

/* The job running a zone a reconfig to t changes or removes: given up. Under flight_lock. */
static void give_up_changed(sched_t *s, const sec_table_t *t)
{
	for (unsigned k = 0; k < SCHED_POOL_MAX; k++) {
		sec_job_t *job = &s->jobs[k];
		if (!job->z)
			continue;
		long j = sched_table_pos(s, t, job->z->apex);
		if (j < 0 ||
		    !conf_zone_same_primaries(&job->table->cfg, job->index, &t->cfg, t->index[j]))
			__atomic_store_n(&job->give_up, 1, __ATOMIC_RELEASE);
	}
}

int sched_reconfig(sched_t *s, const conf_t *cfg)
{
	return sched_reconfig_one(s, cfg, ZONEDB_REBUILD, 0);
}

int sched_reconfig_one(sched_t *s, const conf_t *cfg, enum zonedb_change change, size_t removed)
{
	MAIN_THREAD_ONLY();
	sec_table_t *t = sched_table_new(s, cfg, __atomic_load_n(&s->shown, __ATOMIC_ACQUIRE),
					 change, removed);
	if (!t)
		return SHOAL_ENOMEM;
	pthread_mutex_lock(&s->flight_lock);
	give_up_changed(s, t);
	pthread_mutex_unlock(&s->flight_lock);
	/*
	 * Published as rcu_assign_pointer does, a release store, but one that
	 * ThreadSanitizer sees as atomic (liburcu's is a volatile store): the
	 * lookups' acquire loads pair with it.
	 */
	__atomic_store_n(&s->shown, t, __ATOMIC_RELEASE);
	/* one posted before and never adopted goes with it: the scheduler frees it, after readers
	 */
	sec_table_t *was = __atomic_load_n(&s->pending, __ATOMIC_ACQUIRE);
	do
		t->skipped = was;
	while (!__atomic_compare_exchange_n(&s->pending, &was, t, true, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE));
	sem_post(&s->wake);
	return 0;
}

sec_zone_t *sched_zone_of(sched_t *s, const uint8_t *apex)
{
	return s ? sched_table_find(s, __atomic_load_n(&s->shown, __ATOMIC_ACQUIRE), apex) : NULL;
}

void sched_read_lock(void)
{
	rcu_read_lock();
}

void sched_read_unlock(sched_t *s)
{
#ifdef SCHED_TSAN
	if (s)
		__tsan_release(&s->tsan_sections);
#else
	(void)s;
#endif
	rcu_read_unlock();
}

/* Raise z's NOTIFY serial to serial when newer (RFC 1982). Any thread. */
static void notify_serial_raise(sec_zone_t *z, uint32_t serial)
{
	uint32_t cur = __atomic_load_n(&z->notify_serial, __ATOMIC_ACQUIRE);
	while (serial_gt(serial, cur) &&
	       !__atomic_compare_exchange_n(&z->notify_serial, &cur, serial, true, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
}

bool sched_notify(sched_t *s, const uint8_t *apex, bool has_serial, uint32_t serial)
{
	bool scheduled = false;
	sched_read_lock();
	sec_zone_t *z = sched_zone_of(s, apex);
	if (z) {
		unsigned bit = has_serial ? SEC_WANT_NOTIFY : SEC_WANT_NOTIFY_ANY;
		unsigned was = __atomic_fetch_or(&z->want, bit, __ATOMIC_ACQ_REL);
		if (has_serial && !(was & SEC_WANT_NOTIFY))
			__atomic_store_n(&z->notify_serial, serial, __ATOMIC_RELEASE);
		else if (has_serial)
			notify_serial_raise(z, serial);
		scheduled = !(was & (SEC_WANT_NOTIFY | SEC_WANT_NOTIFY_ANY));
		if (!scheduled)
			stats_add_shared(&s->counters->notify_coalesced, 1);
		sched_kick(s, z);
	}
	sched_read_unlock(s);
	return scheduled;
}

int sched_refresh(sched_t *s, const uint8_t *apex, bool retransfer)
{
	sched_read_lock();
	sec_zone_t *z = sched_zone_of(s, apex);
	if (z) {
		__atomic_fetch_or(&z->want, retransfer ? SEC_WANT_RETRANSFER : SEC_WANT_REFRESH,
				  __ATOMIC_ACQ_REL);
		sched_kick(s, z);
	}
	sched_read_unlock(s);
	return z ? 0 : SHOAL_ENOTFOUND;
}

/* z's times and whether its file holds the version served. Any thread, in a read section. */
static void zone_times(sched_t *s, const sec_zone_t *z, stats_secondary_t *g)
{
	g->next_refresh = (uint64_t)__atomic_load_n(&z->shown_next, __ATOMIC_RELAXED);
	g->expires = (uint64_t)__atomic_load_n(&z->shown_expires, __ATOMIC_RELAXED);
	g->unsaved = (uint64_t)__atomic_load_n(&z->unsaved, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&s->status_lock);
	g->last_refresh = (uint64_t)z->last_refresh;
	g->last_failure = (uint64_t)z->last_failure;
	pthread_mutex_unlock(&s->status_lock);
}

bool sched_state(sched_t *s, const uint8_t *apex, sched_state_t *out)
{
	sched_read_lock();
	sec_zone_t *z = sched_zone_of(s, apex);
	if (z) {
		stats_secondary_t g;
		zone_times(s, z, &g);
		out->next_refresh = (time_t)g.next_refresh;
		out->expires = (time_t)g.expires;
		out->last_refresh = (time_t)g.last_refresh;
		out->last_failure = (time_t)g.last_failure;
		pthread_mutex_lock(&s->status_lock);
		snprintf(out->source, sizeof(out->source), "%s", z->source ? z->source : "none");
		snprintf(out->last_error, sizeof(out->last_error), "%s",
			 z->last_error ? z->last_error : "");
		snprintf(out->save_error, sizeof(out->save_error), "%s",
			 z->save_error ? z->save_error : "");
		pthread_mutex_unlock(&s->status_lock);
	}
	sched_read_unlock(s);
	return z != NULL;
}

void sched_secondaries(const void *from, stats_secondary_fn each, void *arg)
{
	MAIN_THREAD_ONLY();
	sched_t *s = from ? *(sched_t *const *)from : NULL;
	if (!s)
		return;
	sched_read_lock();
	const sec_table_t *t = __atomic_load_n(&s->shown, __ATOMIC_ACQUIRE);
	for (size_t k = 0; t && k < t->count; k++) {
		stats_secondary_t g;
		zone_times(s, t->zones[k], &g);
		each(arg, t->zones[k]->apex, &g);
	}
	sched_read_unlock(s);
}

void sched_free(sched_t *s)
{
	MAIN_THREAD_ONLY();
	if (!s)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	if (s->started) {
		sem_post(&s->wake);
		pthread_join(s->thread, NULL);
	}
	for (unsigned k = 0; k < s->threads; k++) {
		sem_post(&s->jobs[k].go);
		pthread_join(s->jobs[k].thread, NULL);
		sem_destroy(&s->jobs[k].go);
	}
	sched_sign_stop(s);
	/* what the last transfers handed over; then the writes planned are done before exit */
	take_inbox(s);
	sched_flush_stop(s);
	/* the tables: posted (and those it skipped), worked on, kept by refreshes; readers are gone
	 */
	sec_table_t *pending = __atomic_exchange_n(&s->pending, NULL, __ATOMIC_ACQ_REL);
	for (sec_table_t *k = pending, *next; k; k = next) {
		next = k->skipped;
		sched_table_free(k);
	}
	for (unsigned k = 0; k < s->threads; k++) {
		sec_table_t *t = (sec_table_t *)s->jobs[k].table;
		for (unsigned j = k + 1; t && j < s->threads; j++)
			if (s->jobs[j].table == t)
				s->jobs[j].table = NULL; /* freed once */
		if (t && t != s->work)
			sched_table_free(t);
	}
	sched_table_free(s->work);
	heap_clear(&s->due); /* before the entries: it tells each node it is out */
	heap_clear(&s->expiry);
	heap_clear(&s->flush);
	while (s->all)
		sched_entry_free(s, s->all);
	sem_destroy(&s->wake);
	for (size_t k = 0; k < SCHED_PUB_LOCKS; k++)
		pthread_mutex_destroy(&s->pub_locks[k]);
	pthread_mutex_destroy(&s->flight_lock);
	pthread_mutex_destroy(&s->flush_lock);
	pthread_mutex_destroy(&s->sign_lock);
	pthread_cond_destroy(&s->sign_cond);
	pthread_cond_destroy(&s->flush_cond);
	pthread_mutex_destroy(&s->done_lock);
	pthread_mutex_destroy(&s->status_lock);
	pthread_mutex_destroy(&s->all_lock);
	free(s);
}
