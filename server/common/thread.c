/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Threads started named and with every signal blocked, the one way the daemon starts them. */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "server/common/thread.h"

int thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
		 const char *name_fmt, ...)
{
	char name[THREAD_NAME_MAX + 1];
	va_list ap;
	va_start(ap, name_fmt);
	vsnprintf(name, sizeof(name), name_fmt, ap);
	va_end(ap);
	/* the new thread takes the mask of its maker: all blocked for the moment it is made */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int e = pthread_create(t, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		return -e;
	/* named by its maker: the name is there when thread_start returns */
	pthread_setname_np(*t, name);
	return 0;
}
