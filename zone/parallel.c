/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Loops of a zone's build run on several threads, each over its own range. */
#include "config.h"

#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "zone/internal.h"

#define PARALLEL_MIN 4096 /* fewer items per thread are not worth a thread */

typedef struct range {
	void (*fn)(void *arg, size_t from, size_t to);
	void *arg;
	size_t from, to;
	unsigned index; /* its place in the loop: helper thread `index` runs it */
	pthread_t thread;
	bool started;
} range_t;

bool zone_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread's mask is its maker's */
	bool started = pthread_create(t, NULL, fn, arg) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return started;
}

void zone_thread_name(unsigned n)
{
	char name[16]; /* the kernel keeps 15 characters */
	snprintf(name, sizeof(name), "zone-load-%u", n % 100000);
	pthread_setname_np(pthread_self(), name);
}

static void *run_range(void *p)
{
	range_t *r = p;
	r->fn(r->arg, r->from, r->to);
	return NULL;
}

/* A range on a helper thread of its own. */
static void *range_thread(void *p)
{
	range_t *r = p;
	zone_thread_name(r->index);
	return run_range(r);
}

size_t zone_parallel_ranges(size_t n)
{
	size_t threads = (size_t)zload_threads();
	if (threads > n / PARALLEL_MIN)
		threads = n / PARALLEL_MIN ? n / PARALLEL_MIN : 1;
	return threads;
}

size_t zone_parallel(size_t n, void (*fn)(void *arg, size_t from, size_t to), void *arg)
{
	return zone_parallel_n(n, zone_parallel_ranges(n), fn, arg);
}

size_t zone_parallel_n(size_t n, size_t threads, void (*fn)(void *arg, size_t from, size_t to),
		       void *arg)
{
	range_t r[ZONE_PARALLEL_MAX];
	assert(threads >= 1 && threads <= ZONE_PARALLEL_MAX); /* r's size */
	for (size_t k = 0; k < threads; k++) {
		r[k] = (range_t){
			.fn = fn,
			.arg = arg,
			.from = n * k / threads,
			.to = n * (k + 1) / threads,
			.index = (unsigned)k,
		};
		/* the caller's thread takes the first range, after starting the others */
		if (k > 0)
			r[k].started = zone_thread_start(&r[k].thread, range_thread, &r[k]);
	}
	run_range(&r[0]);
	for (size_t k = 1; k < threads; k++) {
		if (r[k].started)
			pthread_join(r[k].thread, NULL);
		else
			run_range(&r[k]); /* no thread to be had: run it here */
	}
	return threads;
}
