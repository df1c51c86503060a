/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench-echo: the least a UDP server can do, the benchmark's floor: per
 * thread one SO_REUSEPORT socket read with blocking recvmmsg, every
 * datagram sent back with QR set by sendmmsg. No event loop, no DNS.
 *
 * Usage: bench-echo ADDR PORT THREADS. Runs until a signal ends it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ECHO_BATCH       32
#define ECHO_DATAGRAM    4096
#define ECHO_THREADS_MAX 64
/* as shoald asks for its own sockets, so both ride out the same bursts */
#define ECHO_BUFFER (4 * 1024 * 1024)

struct echo_thread {
	pthread_t thread;
	int fd;
	struct mmsghdr msgs[ECHO_BATCH];
	struct iovec iov[ECHO_BATCH];
	struct sockaddr_storage peer[ECHO_BATCH];
	unsigned char buf[ECHO_BATCH][ECHO_DATAGRAM];
};

static void *echo_main(void *arg)
{
	struct echo_thread *t = arg;
	for (;;) {
		for (unsigned i = 0; i < ECHO_BATCH; i++) {
			t->iov[i] = (struct iovec){ t->buf[i], ECHO_DATAGRAM };
			t->msgs[i].msg_hdr = (struct msghdr){
				.msg_name = &t->peer[i],
				.msg_namelen = sizeof(t->peer[i]),
				.msg_iov = &t->iov[i],
				.msg_iovlen = 1,
			};
		}
		/* blocks for the first datagram, then takes what is queued */
		int n = recvmmsg(t->fd, t->msgs, ECHO_BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("bench-echo: recvmmsg");
			exit(1);
		}
		for (int i = 0; i < n; i++) {
			t->iov[i].iov_len = t->msgs[i].msg_len;
			if (t->msgs[i].msg_len > 2)
				t->buf[i][2] |= 0x80; /* QR */
		}
		int off = 0;
		while (off < n) {
			int sent = sendmmsg(t->fd, t->msgs + off, (unsigned)(n - off), 0);
			if (sent < 0 && errno == EINTR)
				continue;
			off += sent > 0 ? sent : 1; /* a refused datagram is skipped */
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bench-echo ADDR PORT THREADS\n");
		return 2;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)atoi(argv[2])) };
	int threads = atoi(argv[3]);
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 || threads < 1 ||
	    threads > ECHO_THREADS_MAX) {
		fprintf(stderr, "bench-echo: bad address or thread count\n");
		return 2;
	}
	static struct echo_thread t[ECHO_THREADS_MAX];
	int one = 1, size = ECHO_BUFFER;
	for (int i = 0; i < threads; i++) {
		t[i].fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (t[i].fd < 0 ||
		    setsockopt(t[i].fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
			perror("bench-echo: socket");
			return 1;
		}
		if (setsockopt(t[i].fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
			(void)setsockopt(t[i].fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
		if (setsockopt(t[i].fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
			(void)setsockopt(t[i].fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		if (bind(t[i].fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("bench-echo: bind");
			return 1;
		}
	}
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&t[i].thread, NULL, echo_main, &t[i]) != 0) {
			fprintf(stderr, "bench-echo: cannot start thread %d\n", i);
			return 1;
		}
	}
	pthread_join(t[0].thread, NULL);
	return 0;
}
