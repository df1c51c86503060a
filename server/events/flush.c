/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The flush thread: secondary zones' files written off the transfer threads, in queue order. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/thread.h"
#include "server/events/internal.h"
#include "zone/write.h"
#include "zone/zone.h"

/*
 * One thread writes every zone's file, one after another: a write is
 * disk-bound (the file is written, read back, synced), so more threads
 * would share the same disk and the host's two CPUs with the transfers;
 * one thread keeps the transfers-in slots for transfers (a transfer of a
 * zone never waits for another's file) and needs no lock between writes
 * of the same zone.
 */

/* What a write tells: its first error, for zone-status. */
typedef struct flush_msgs {
	const char *name;
	char err[400];
} flush_msgs_t;

static void on_msg(void *arg, bool is_error, const char *msg)
{
	flush_msgs_t *m = arg;
	if (is_error && !m->err[0])
		snprintf(m->err, sizeof(m->err), "%s", msg);
	else if (!is_error)
		log_info("zone %s: %s", m->name, msg);
}

/* A job for z by t: NULL when out of memory. */
static sec_flush_job_t *job_new(sched_t *s, const sec_zone_t *z, const zone_spec_t *spec)
{
	sec_flush_job_t *job = calloc(1, sizeof(*job) + z->apex_len);
	if (!job)
		return NULL;
	memcpy(job->apex, z->apex, z->apex_len);
	job->limits = spec->limits;
	job->file = strdup(spec->file);
	job->name = strdup(spec->name);
	pthread_mutex_lock(&s->status_lock);
	snprintf(job->comment, sizeof(job->comment), "transferred from %.150s",
		 z->source && !strncmp(z->source, "primary ", 8) ? z->source + 8 : "a primary");
	pthread_mutex_unlock(&s->status_lock);
	if (!job->file || !job->name) {
		free(job->file);
		free(job->name);
		free(job);
		return NULL;
	}
	return job;
}

static void job_free(sec_flush_job_t *job)
{
	free(job->file);
	free(job->name);
	free(job);
}

int64_t sched_flush_due(int64_t planned, int64_t now, uint32_t sync)
{
	return planned >= 0 ? planned : now + (int64_t)sync * 1000;
}

void sched_want_flush(sched_t *s, sec_zone_t *z)
{
	__atomic_store_n(&z->flush_wanted, 1, __ATOMIC_RELEASE);
	sched_kick(s, z);
}

void sched_flush_plan(sched_t *s, sec_zone_t *z, int64_t now)
{
	if (heap_has(&z->flush))
		return;
	uint32_t sync = conf_zone_sync(&s->work->cfg, z->index);
	heap_set(&s->flush, &z->flush, (uint64_t)sched_flush_due(-1, now, sync));
}

int64_t sched_flush_due_now(sched_t *s, int64_t now)
{
	heap_node_t *top;
	while ((top = heap_top(&s->flush)) && (int64_t)top->key <= now) {
		heap_remove(&s->flush, top);
		sched_flush_post(s, ZONE_OF(top, flush), s->work);
	}
	return top ? (int64_t)top->key : SCHED_NEVER;
}

void sched_flush_post(sched_t *s, sec_zone_t *z, const sec_table_t *t)
{
	const zone_spec_t *spec = conf_zone_spec(&t->cfg, z->index);
	if (!spec->file || !*spec->file) {
		sec_set_saved(s, z, true, NULL);
		return;
	}
	if (__atomic_exchange_n(&z->flush_queued, 1, __ATOMIC_ACQ_REL))
		return; /* queued, not started: it takes the newest version */
	sec_flush_job_t *job = job_new(s, z, spec);
	if (!job) {
		__atomic_store_n(&z->flush_queued, 0, __ATOMIC_RELEASE);
		sec_set_saved(s, z, false, "cannot save: out of memory");
		return;
	}
	pthread_mutex_lock(&s->flush_lock);
	if (s->flush_tail)
		s->flush_tail->next = job;
	else
		s->flush_head = job;
	s->flush_tail = job;
	pthread_cond_signal(&s->flush_cond);
	pthread_mutex_unlock(&s->flush_lock);
}

/* The tests' hold on writes: at most this long (ms). */
#define FLUSH_HOLD_MAX_MS 60000

/*
 * For the tests only: while the file SHOAL_TEST_FLUSH_HOLD names exists
 * (a minute at most), a write waits, as one of a big zone on a slow disk
 * would: tests/xfr/flush_big.sh shows other zones' transfers go on.
 */
static void test_hold(void)
{
	const char *path = getenv("SHOAL_TEST_FLUSH_HOLD");
	struct timespec gap = { 0, 20 * 1000000L };
	for (int ms = 0; path && *path && ms < FLUSH_HOLD_MAX_MS && access(path, F_OK) == 0;
	     ms += 20)
		nanosleep(&gap, NULL);
}

/* The version of apex served now, referenced (NULL: none, it expired). */
static zone_t *served(sched_t *s, const uint8_t *apex)
{
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(s->zones);
	long at = zonedb_index(db, apex);
	const zone_t *v = at < 0 ? NULL : zonedb_zone(db, (size_t)at);
	zone_t *ref = v ? (zone_t *)zone_ref(v) : NULL;
	zonedb_read_unlock(s->zones);
	return ref;
}

/* The result of a write to the zone's entry, if it still has one: zone-status, the gauge. */
static void record(sched_t *s, const sec_flush_job_t *job, bool saved, const char *why)
{
	rcu_read_lock();
	sec_zone_t *z = sched_zone_of(s, job->apex);
	if (z)
		sec_set_saved(s, z, saved, why);
	sched_read_unlock(s);
}

/*
 * Write the version served now to job's file. A failure keeps its cause
 * (-errno: permission, read-only file system, no space) for zone-status,
 * the metrics and the log: a secondary served from memory alone is lost at
 * the next restart with its primary down (the journal replays only onto
 * the file).
 */
static void flush_one(sched_t *s, const sec_flush_job_t *job)
{
	rcu_read_lock();
	sec_zone_t *z = sched_zone_of(s, job->apex);
	/* before the version is taken: one published after it is queued again */
	if (z)
		__atomic_store_n(&z->flush_queued, 0, __ATOMIC_RELEASE);
	sched_read_unlock(s);
	test_hold();
	zone_t *v = served(s, job->apex);
	if (!v)
		return; /* expired: nothing served to keep */
	flush_msgs_t m = { .name = job->name };
	int rc = zone_write(v, job->file, job->comment, &job->limits, on_msg, &m);
	uint32_t serial = v->serial;
	zone_unref(v);
	if (rc == 0) {
		log_info("zone %s: serial %u written to %s", job->name, (unsigned)serial,
			 job->file);
		record(s, job, true, NULL);
		return;
	}
	char why[600];
	snprintf(why, sizeof(why), "cannot save to %s: %s", job->file,
		 m.err[0] ? m.err : shoal_strerror(rc));
	stats_add_shared(&s->xfr_in->save_failed, 1);
	record(s, job, false, why);
	log_error("zone %s: %s; the version served is not kept across a restart", job->name, why);
}

/* The next job, or NULL once stopped with none left. */
static sec_flush_job_t *next_job(sched_t *s)
{
	pthread_mutex_lock(&s->flush_lock);
	while (!s->flush_head && !s->flush_stop)
		pthread_cond_wait(&s->flush_cond, &s->flush_lock);
	sec_flush_job_t *job = s->flush_head;
	if (job && !(s->flush_head = job->next))
		s->flush_tail = NULL;
	pthread_mutex_unlock(&s->flush_lock);
	return job;
}

static void *flush_main(void *arg)
{
	sched_t *s = arg;
	rcu_register_thread();
	sec_flush_job_t *job;
	while ((job = next_job(s))) {
		flush_one(s, job);
		job_free(job);
	}
	rcu_unregister_thread();
	return NULL;
}

int sched_flush_start(sched_t *s)
{
	int e = thread_start(&s->flush_thread, NULL, flush_main, s, "shoald-flush");
	if (e == 0)
		s->flush_started = true;
	return e;
}

void sched_flush_stop(sched_t *s)
{
	if (s->work)
		sched_flush_due_now(s, SCHED_NEVER); /* every one planned is due now */
	pthread_mutex_lock(&s->flush_lock);
	s->flush_stop = true;
	pthread_cond_signal(&s->flush_cond);
	pthread_mutex_unlock(&s->flush_lock);
	if (s->flush_started) {
		pthread_join(s->flush_thread, NULL);
		s->flush_started = false;
	}
	for (sec_flush_job_t *job = s->flush_head, *next; job; job = next) {
		next = job->next; /* never started: nothing ran them */
		job_free(job);
	}
	s->flush_head = s->flush_tail = NULL;
}
