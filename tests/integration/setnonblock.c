/* SPDX-License-Identifier: GPL-3.0-or-later */
/* setnonblock: set O_NONBLOCK on another process's socket, as a process sharing it could. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Usage: setnonblock PID FD
 * Takes a copy of PID's descriptor FD (pidfd_getfd: the same open file)
 * and sets O_NONBLOCK on it, which PID then sees too: what an older
 * shoald taking the socket over does when libuv polls it. Exit 0 when
 * set, 77 when the kernel or our rights do not allow it (the caller
 * skips), 1 on another failure, 2 on a usage error.
 */
int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: setnonblock PID FD\n");
		return 2;
	}
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	int pidfd = (int)syscall(SYS_pidfd_open, atoi(argv[1]), 0);
	int fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, atoi(argv[2]), 0);
	if (fd < 0) {
		fprintf(stderr, "setnonblock: %s\n", strerror(errno));
		return errno == ENOSYS || errno == EPERM ? 77 : 1;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		fprintf(stderr, "setnonblock: fcntl: %s\n", strerror(errno));
		return 1;
	}
	return 0;
#else
	fprintf(stderr, "setnonblock: no pidfd_getfd here\n");
	return 77;
#endif
}
