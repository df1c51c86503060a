/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The daemon's threads: each started named, with the main loop's signals blocked. */
#ifndef SHOAL_SERVER_COMMON_THREAD_H
#define SHOAL_SERVER_COMMON_THREAD_H

#include <pthread.h>

/* The longest thread name the kernel keeps (TASK_COMM_LEN less its NUL); longer is cut. */
#define THREAD_NAME_MAX 15

/*
 * Start fn(arg) on a new thread *t (attr NULL: the defaults), named as
 * name_fmt and its arguments say, cut to THREAD_NAME_MAX characters, so
 * that ps -L, top -H and /proc/PID/task/TID/comm tell the threads apart
 * ("shoald-udp-0-1"); the thread names itself before fn runs. Every
 * signal is blocked in it: signals are the main loop's, and a thread that
 * took one would see its blocking calls fail with EINTR; a thread that
 * needs one unblocks it itself (the UDP receivers' UDP_WAKE_SIGNAL). The
 * caller's mask is left as it was. Returns 0 or -errno (pthread_create's,
 * -ENOMEM). Any thread.
 */
int thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
		 const char *name_fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
