/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The main thread's identity, set once at start, for MAIN_THREAD_ONLY. */
#include "config.h"

#include <pthread.h>

#include "server/common/mainthread.h"

/*
 * A fact about the process, not state of a daemon: one per process, like
 * the thread list itself. Written before any other thread starts (or in
 * a child right after fork, where only the caller runs), so every later
 * reader sees it through pthread_create's ordering; `known` is atomic all
 * the same, for a check run before main_thread_set.
 */
static pthread_t main_id;
static bool known;

void main_thread_set(void)
{
	main_id = pthread_self();
	__atomic_store_n(&known, true, __ATOMIC_RELEASE);
}

bool main_thread_is_current(void)
{
	return !__atomic_load_n(&known, __ATOMIC_ACQUIRE) || pthread_equal(main_id, pthread_self());
}
