/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Blocking DNS-over-TCP client I/O shared by the tests (unit and integration). */
#include "tests/tcpio.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

void tcpio_deadline(int fd, int wait_s)
{
	struct timeval tv = { .tv_sec = wait_s };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

int tcpio_connect(const char *addr, uint16_t port, int wait_s)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		sl = sizeof(*s6);
	} else {
		return -2;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	tcpio_deadline(fd, wait_s);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

bool tcpio_send_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t r = send(fd, p, len, MSG_NOSIGNAL);
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

bool tcpio_recv_all(int fd, uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t r = recv(fd, p, len, 0);
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

ssize_t tcpio_recv_msg(int fd, uint8_t *msg, size_t cap)
{
	uint8_t pre[2];
	if (!tcpio_recv_all(fd, pre, sizeof(pre)))
		return -1;
	size_t len = (size_t)(pre[0] << 8 | pre[1]);
	if (len > cap || !tcpio_recv_all(fd, msg, len))
		return -1;
	return (ssize_t)len;
}
