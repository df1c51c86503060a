/* SPDX-License-Identifier: GPL-3.0-or-later */
/* systemd's readiness notifications: one datagram per state change to NOTIFY_SOCKET. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/systemd.h"

int systemd_send(const char *state)
{
	const char *where = getenv("NOTIFY_SOCKET");
	if (!where || !where[0])
		return 0;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(where);
	if ((where[0] != '/' && where[0] != '@') || len >= sizeof(sun.sun_path))
		return SHOAL_EINVAL;
	memcpy(sun.sun_path, where, len);
	if (where[0] == '@')
		sun.sun_path[0] = '\0'; /* the abstract namespace: the name is not NUL-terminated */
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
				     (where[0] == '/' ? 1 : 0));
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun, alen) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int systemd_ready(size_t zones, size_t threads)
{
	char state[128];
	snprintf(state, sizeof(state), "READY=1\nSTATUS=serving %zu zone(s) with %zu thread(s)",
		 zones, threads);
	return systemd_send(state);
}

int systemd_reloading(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	char state[96];
	snprintf(state, sizeof(state), "RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ull +
			 (unsigned long long)ts.tv_nsec / 1000);
	return systemd_send(state);
}

int systemd_stopping(void)
{
	return systemd_send("STOPPING=1\nSTATUS=stopping");
}
