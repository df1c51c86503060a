/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Waking a libuv loop from another thread: an async handle behind a reference count and a lock. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "server/common/waker.h"

struct waker {
	uv_async_t async;
	void (*fn)(void *arg);
	void *arg;
	pthread_mutex_t lock; /* open against waker_close: no send on a handle closing */
	bool open;
	int refs; /* atomic */
};

static void on_async(uv_async_t *a)
{
	waker_t *w = a->data;
	w->fn(w->arg);
}

waker_t *waker_new(uv_loop_t *loop, void (*fn)(void *arg), void *arg)
{
	waker_t *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (uv_async_init(loop, &w->async, on_async) != 0) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	w->async.data = w;
	w->fn = fn;
	w->arg = arg;
	w->open = true;
	w->refs = 1;
	return w;
}

waker_t *waker_ref(waker_t *w)
{
	__atomic_add_fetch(&w->refs, 1, __ATOMIC_RELAXED);
	return w;
}

void waker_unref(waker_t *w)
{
	if (!w || __atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void waker_wake(waker_t *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->open)
		uv_async_send(&w->async);
	pthread_mutex_unlock(&w->lock);
}

static void on_closed(uv_handle_t *h)
{
	waker_unref(h->data);
}

void waker_close(waker_t *w)
{
	pthread_mutex_lock(&w->lock);
	w->open = false;
	pthread_mutex_unlock(&w->lock);
	uv_close((uv_handle_t *)&w->async, on_closed);
}
