/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which thread is the main one, and the check behind the "Main thread" of header comments. */
#ifndef SHOAL_SERVER_COMMON_MAINTHREAD_H
#define SHOAL_SERVER_COMMON_MAINTHREAD_H

#include <assert.h>
#include <stdbool.h>

/*
 * Make the calling thread the main thread: the one that runs the main
 * loop, starts the other threads and stops them (server_run calls it
 * first). Call it before any other thread starts, or again from a child
 * after fork. Until it is called, every thread counts as the main one:
 * unit tests call main-thread functions without a daemon.
 */
void main_thread_set(void);

/* True when the caller is the main thread, or none is set. Any thread. */
bool main_thread_is_current(void);

/*
 * At the top of a function whose header comment says "Main thread": an
 * assert that fails (abort, naming the file, the line and the function)
 * when another thread calls it. Compiled out with NDEBUG, as assert is;
 * Shoal's builds do not define it (doc/design.md, "Layers").
 */
#define MAIN_THREAD_ONLY() assert(main_thread_is_current() && "main thread only")

#endif
