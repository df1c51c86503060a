/* SPDX-License-Identifier: GPL-3.0-or-later */
/* notifylisten: stand in for systemd's notification socket; print each datagram as one line. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * Usage: notifylisten PATH SECONDS
 * Bind a unix datagram socket at PATH (removed at the end) and print every
 * datagram that arrives as one line, its newlines turned into spaces,
 * until SIGTERM or SECONDS have passed. Exit 0, or 2 on a usage error and
 * 1 when PATH cannot be bound. Used by shoald_notify.sh as NOTIFY_SOCKET.
 */
int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: notifylisten PATH SECONDS\n");
		return 2;
	}
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(argv[1]) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "notifylisten: path too long\n");
		return 2;
	}
	strcpy(sun.sun_path, argv[1]);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "notifylisten: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	signal(SIGTERM, on_term);
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	time_t end = time(NULL) + atoi(argv[2]);
	char buf[4096];
	while (!stop && time(NULL) < end) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = ' ';
		printf("%s\n", buf);
		fflush(stdout);
	}
	close(fd);
	unlink(argv[1]);
	return 0;
}
