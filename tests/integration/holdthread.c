/* holdthread: keep the next thread a process creates stopped, as a thread blocked in the kernel would be. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Usage: holdthread PID
 * Traces PID's main thread (ptrace, PTRACE_O_TRACECLONE) and prints
 * "attached". The first thread PID's main thread creates afterwards never
 * runs ("held TID" is printed): it stays stopped as long as this program
 * lives, which it does until PID exits. Signals to the main thread are
 * passed on; other new threads run. shoald_files.sh uses it to make a
 * reload whose thread is stuck, the way one reading a file system that no
 * longer answers is. Exit 0 when PID has exited, 77 when PID cannot be
 * traced here (no permission), 2 on a usage error.
 */
int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: holdthread PID\n");
		return 2;
	}
	pid_t pid = (pid_t)atoi(argv[1]);
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)PTRACE_O_TRACECLONE) < 0) {
		fprintf(stderr, "holdthread: cannot trace %d: %s\n", (int)pid, strerror(errno));
		return 77;
	}
	printf("attached\n");
	fflush(stdout);
	pid_t held = 0;
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
		if (t != pid && (held == 0 || t == held)) {
			/* the new thread's first stop (it may come before the clone event): keep it */
			if (held == 0) {
				held = t;
				printf("held %d\n", (int)t);
				fflush(stdout);
			}
			continue;
		}
		/* clone events and other stops go on; a signal is delivered as sent */
		int pass = event == 0 ? sig : 0;
		ptrace(PTRACE_CONT, t, NULL, (void *)(long)pass);
	}
	return 0;
}
