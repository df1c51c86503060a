/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Waking a libuv loop from another thread: work that loop waits on is done. */
#ifndef SHOAL_SERVER_COMMON_WAKER_H
#define SHOAL_SERVER_COMMON_WAKER_H

#include <uv.h>

/*
 * A loop's door bell: a thread that finished work the loop waits on (an
 * UPDATE's answer, an IXFR's changes read from the journal file) rings
 * it, and the loop runs fn(arg) soon after, once for any number of rings
 * since the last run (uv_async_send coalesces them). The ringer names no
 * connection: fn asks the loop's own waiting connections again, so a
 * connection closed meanwhile is never touched from another thread.
 * Reference counted: the loop holds one from waker_new to waker_close,
 * and each piece of work holds one until it rang, so a ring after the
 * loop closed it is harmless (nothing runs).
 */
typedef struct waker waker_t;

/*
 * Made on loop's thread; fn(arg) runs there. Returns the waker with the
 * loop's reference, or NULL (out of memory, libuv's error).
 */
waker_t *waker_new(uv_loop_t *loop, void (*fn)(void *arg), void *arg);

/* Take a reference; returns w. Any thread that holds one. */
waker_t *waker_ref(waker_t *w);

/* Drop a reference; the last frees w. Any thread; NULL is fine. */
void waker_unref(waker_t *w);

/* Have fn run on the loop soon, unless it was closed. Any thread that holds a reference; NULL is
 * fine. Takes a lock for the moment of the send: not on the query path. */
void waker_wake(waker_t *w);

/* No more runs of fn: close the loop's handle, then drop the loop's reference. Loop's thread. */
void waker_close(waker_t *w);

#endif
