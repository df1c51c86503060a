/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal reader: a thread, its bounded queue of IXFR reads, each done ringing its worker. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/common/log.h"
#include "server/common/thread.h"
#include "server/events/jread.h"

struct jread_job {
	jread_job_t *next;
	journal_t *j;
	uint32_t from, to;
	waker_t *waker;
	xfr_changes_t changes; /* the reader's until done, then the worker's */
	int rc;
	int done; /* atomic: rc and changes are set */
	int refs; /* atomic */
};

struct jread {
	pthread_t thread;
	pthread_mutex_t lock; /* the queue and stop */
	pthread_cond_t cond;
	jread_job_t *head, *tail;
	size_t queued, max;
	bool stop;
};

void jread_job_unref(jread_job_t *job)
{
	if (!job || __atomic_sub_fetch(&job->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	xfr_changes_clear(&job->changes);
	journal_unref(job->j);
	waker_unref(job->waker);
	free(job);
}

/* Hand the result over: the worker may take it as soon as done is seen. */
static void job_finish(jread_job_t *job, int rc)
{
	job->rc = rc;
	__atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
	waker_wake(job->waker);
	jread_job_unref(job);
}

static jread_job_t *take(jread_t *r)
{
	pthread_mutex_lock(&r->lock);
	while (!r->head && !r->stop)
		pthread_cond_wait(&r->cond, &r->lock);
	jread_job_t *job = r->stop ? NULL : r->head;
	if (job) {
		r->head = job->next;
		if (!r->head)
			r->tail = NULL;
		r->queued--;
	}
	pthread_mutex_unlock(&r->lock);
	return job;
}

static void *reader_main(void *arg)
{
	jread_t *r = arg;
	jread_job_t *job;
	while ((job = take(r))) {
		/* done once the worker sees it: the changes are its from then on */
		int rc = journal_changes(job->j, job->from, job->to, true, &job->changes);
		job_finish(job, rc);
	}
	return NULL;
}

jread_t *jread_start(size_t max)
{
	jread_t *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->max = max ? max : 1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	int rc = thread_start(&r->thread, NULL, reader_main, r, "shoald-jread");
	if (rc < 0) {
		log_error("the journal reader: %s", shoal_strerror(rc));
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		free(r);
		return NULL;
	}
	return r;
}

void jread_stop(jread_t *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	for (jread_job_t *job = r->head, *next; job; job = next) {
		next = job->next;
		job_finish(job, SHOAL_ETIMEOUT);
	}
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

jread_job_t *jread_post(jread_t *r, journal_t *j, uint32_t from, uint32_t to, waker_t *waker,
			int *err)
{
	jread_job_t *job = calloc(1, sizeof(*job));
	if (!job) {
		*err = SHOAL_ENOMEM;
		return NULL;
	}
	job->j = journal_ref(j);
	job->from = from;
	job->to = to;
	job->waker = waker ? waker_ref(waker) : NULL;
	job->refs = 2;
	pthread_mutex_lock(&r->lock);
	bool room = r->queued < r->max && !r->stop;
	if (room) {
		if (r->tail)
			r->tail->next = job;
		else
			r->head = job;
		r->tail = job;
		r->queued++;
		pthread_cond_signal(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	if (room)
		return job;
	job->refs = 1;
	jread_job_unref(job);
	*err = SHOAL_ESPACE;
	return NULL;
}

bool jread_done(jread_job_t *job, int *rc, xfr_changes_t *out)
{
	if (!__atomic_load_n(&job->done, __ATOMIC_ACQUIRE))
		return false;
	*rc = job->rc;
	*out = job->changes;
	memset(&job->changes, 0, sizeof(job->changes));
	return true;
}
