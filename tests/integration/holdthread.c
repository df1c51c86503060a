/* SPDX-License-Identifier: GPL-3.0-or-later */
/* holdthread: stop the next thread a process creates in its first open(), as if the file system
 * never answered. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Is t stopped entering open() or openat()? */
static int entering_open(pid_t t)
{
	struct __ptrace_syscall_info info;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t, (void *)sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return 0;
#ifdef SYS_open
	if (info.entry.nr == SYS_open)
		return 1;
#endif
	return info.entry.nr == SYS_openat;
}

/*
 * Usage: holdthread PID
 * Traces PID's main thread (ptrace, PTRACE_O_TRACECLONE) and prints
 * "attached". The first thread the main thread creates afterwards runs
 * until it enters open() or openat(), and stays stopped there ("held TID"
 * is printed) as long as this program lives, which it does until PID
 * exits: a thread blocked opening a file on a file system that no longer
 * answers. (It is not held at birth: ThreadSanitizer's pthread_create
 * waits for the new thread to start.) Signals to the traced threads are
 * passed on; later new threads run freely. shoald_files.sh uses it to
 * make a stuck reload. Exit 0 when PID has exited, 77 when PID cannot be
 * traced here (no permission), 2 on a usage error.
 */
int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: holdthread PID\n");
		return 2;
	}
	pid_t pid = (pid_t)atoi(argv[1]);
	long options = PTRACE_O_TRACECLONE | PTRACE_O_TRACESYSGOOD;
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)options) < 0) {
		fprintf(stderr, "holdthread: cannot trace %d: %s\n", (int)pid, strerror(errno));
		return 77;
	}
	printf("attached\n");
	fflush(stdout);
	pid_t watched = 0; /* the first new thread, followed from syscall to syscall */
	int held = 0;
	for (;;) {
		int st;
		pid_t t = waitpid(-1, &st, __WALL);
		if (t < 0 && errno == EINTR)
			continue;
		if (t < 0)
			break; /* nothing traced is left */
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (t == pid)
				break;
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), event = st >> 16;
		if (t != pid && watched == 0)
			watched = t; /* its first stop may come before the clone event */
		if (t == watched) {
			if (held)
				continue;
			if (sig == (SIGTRAP | 0x80) && entering_open(t)) {
				held = 1;
				printf("held %d\n", (int)t);
				fflush(stdout);
				continue; /* never resumed */
			}
			int pass = event == 0 && sig != (SIGTRAP | 0x80) ? sig : 0;
			ptrace(PTRACE_SYSCALL, t, NULL, (void *)(long)pass);
			continue;
		}
		/* clone events and other stops go on; a signal is delivered as sent */
		int pass = event == 0 && sig != (SIGTRAP | 0x80) ? sig : 0;
		ptrace(PTRACE_CONT, t, NULL, (void *)(long)pass);
	}
	return 0;
}
