/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bindtest: try to bind a UDP socket the way a hijacker would; print OK or the errno name. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * Usage: bindtest ADDR PORT reuseport|reuseaddr|both
 * Exit 0 when the bind succeeded, 1 when it failed (the errno name is
 * printed either way), 2 on a usage error. Used by shoald_user.sh to show
 * that another user cannot join shoald's port.
 */
int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bindtest ADDR PORT reuseport|reuseaddr|both\n");
		return 2;
	}
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	int port = atoi(argv[2]);
	if (inet_pton(AF_INET, argv[1], &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, argv[1], &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		len = sizeof(*in6);
	} else {
		fprintf(stderr, "bindtest: bad address %s\n", argv[1]);
		return 2;
	}
	int reuseport = !strcmp(argv[3], "reuseport") || !strcmp(argv[3], "both");
	int reuseaddr = !strcmp(argv[3], "reuseaddr") || !strcmp(argv[3], "both");
	if (!reuseport && !reuseaddr) {
		fprintf(stderr, "bindtest: mode must be reuseport, reuseaddr or both\n");
		return 2;
	}
	int one = 1;
	int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0 ||
	    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
	    (reuseaddr && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0) {
		const char *name = strerrorname_np(errno);
		printf("%s\n", name ? name : "unknown");
		return 1;
	}
	printf("OK\n");
	close(fd);
	return 0;
}
