/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Loops of a zone's build run on several threads, each over its own range. */
#include "config.h"

#include <pthread.h>

#include "zone/internal.h"

#define PARALLEL_MIN 4096 /* fewer items per thread are not worth a thread */

typedef struct range {
	void (*fn)(void *arg, size_t from, size_t to);
	void *arg;
	size_t from, to;
	pthread_t thread;
	bool started;
} range_t;

static void *run_range(void *p)
{
	range_t *r = p;
	r->fn(r->arg, r->from, r->to);
	return NULL;
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
	range_t r[LOAD_THREADS_MAX];
	size_t threads = zone_parallel_ranges(n);
	for (size_t k = 0; k < threads; k++) {
		r[k] = (range_t){
			.fn = fn, .arg = arg, .from = n * k / threads, .to = n * (k + 1) / threads
		};
		/* the caller's thread takes the first range, after starting the others */
		if (k > 0)
			r[k].started = pthread_create(&r[k].thread, NULL, run_range, &r[k]) == 0;
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
