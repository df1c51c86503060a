/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Threads started named and with every signal blocked, the one way the daemon starts them. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/common/thread.h"

/* What a new thread starts with, handed over to it. */
typedef struct start {
	void *(*fn)(void *);
	void *arg;
	char name[THREAD_NAME_MAX + 1];
} start_t;

/*
 * The thread names itself before its work, which may then read its name,
 * and before anything else: its first free() sets up its malloc arena,
 * which past 8 threads opens /sys/devices/system/cpu/online (glibc), and a
 * thread stuck there must already show its name.
 */
static void *named(void *p)
{
	pthread_setname_np(pthread_self(), ((start_t *)p)->name);
	start_t s = *(start_t *)p;
	free(p);
	return s.fn(s.arg);
}

int thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
		 const char *name_fmt, ...)
{
	start_t *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (start_t){ .fn = fn, .arg = arg };
	va_list ap;
	va_start(ap, name_fmt);
	vsnprintf(s->name, sizeof(s->name), name_fmt, ap);
	va_end(ap);
	/* the new thread's mask is its maker's: all blocked for the moment it is made */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int e = pthread_create(t, attr, named, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		free(s);
	return -e;
}
