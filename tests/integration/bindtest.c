/* bindtest: try to bind a UDP socket the way a hijacker would; print OK or the errno name. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: bindtest ADDR PORT reuseport|reuseaddr|both [SECONDS]
 * Exit 0 when the bind succeeded, 1 when it failed (the errno name is
 * printed either way), 2 on a usage error. Used by shoald_user.sh to show
 * that another user cannot join shoald's port. With SECONDS, a socket that
 * bound stays for that long (or until SIGTERM), reading what reaches it,
 * then prints "received N" (datagrams): shoald_instance.sh's witness of the
 * queries a socket that joins the port takes away from the server.
 */
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bindtest ADDR PORT reuseport|reuseaddr|both [SECONDS]\n");
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
	fflush(stdout);
	if (argc == 5) {
		struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		struct timespec start, now;
		clock_gettime(CLOCK_MONOTONIC, &start);
		double hold = atof(argv[4]);
		unsigned long received = 0;
		char buf[4096];
		signal(SIGTERM, on_term);
		do {
			if (recv(fd, buf, sizeof(buf), 0) >= 0)
				received++;
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while (!stop && (double)(now.tv_sec - start.tv_sec) +
						  (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
					  hold);
		printf("received %lu\n", received);
	}
	close(fd);
	return 0;
}
