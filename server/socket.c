/* Listening sockets made by hand: options set before bind, never SO_REUSEADDR on UDP. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/socket.h"

/* Receive and send buffer size asked for each UDP socket. */
#define SOCKET_BUFFER_SIZE (4 * 1024 * 1024)

/*
 * Best effort: a bigger buffer rides out bursts. SO_*BUFFORCE (root, before
 * the privilege drop) passes net.core.rmem_max/wmem_max; otherwise the
 * kernel caps the size at those.
 */
static void set_buffers(int fd)
{
	int size = SOCKET_BUFFER_SIZE;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

static int open_bound(const listen_addr_t *a, int type, bool reuseport, bool reuseaddr, char *err,
		      size_t errlen)
{
	int one = 1;
	int fd = socket(a->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s: socket: %s", a->text, strerror(errno));
		return SHOAL_ESYSTEM;
	}
	/*
	 * SO_REUSEPORT before bind: each worker's socket joins the port's group
	 * and the kernel spreads clients over them by 4-tuple hash. The group
	 * only admits sockets of the same effective uid, which is why all are
	 * made before privileges drop.
	 */
	if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)
		goto fail;
	if (reuseaddr && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	/* v6 sockets answer v6 only; 0.0.0.0 has its own socket */
	if (a->addr.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		goto fail;
	if (bind(fd, (const struct sockaddr *)&a->addr, a->addr_len) < 0)
		goto fail;
	return fd;
fail:
	snprintf(err, errlen, "%s: %s", a->text, strerror(errno));
	close(fd);
	return SHOAL_ESYSTEM;
}

int udp_socket_open(const listen_addr_t *a, bool reuseport, char *err, size_t errlen)
{
	/*
	 * Never SO_REUSEADDR on UDP: measured on Linux 6.18, another user's
	 * socket with SO_REUSEADDR binds beside it and receives all datagrams.
	 */
	int fd = open_bound(a, SOCK_DGRAM, reuseport, false, err, errlen);
	if (fd >= 0)
		set_buffers(fd);
	return fd;
}

int tcp_socket_open(const listen_addr_t *a, char *err, size_t errlen)
{
	/*
	 * SO_REUSEADDR is safe on a TCP listener (Linux refuses a second bind
	 * over a listening socket) and lets a restart bind past TIME_WAIT.
	 */
	int fd = open_bound(a, SOCK_STREAM, true, true, err, errlen);
	if (fd < 0)
		return fd;
	if (listen(fd, 1024) < 0) {
		snprintf(err, errlen, "%s: listen: %s", a->text, strerror(errno));
		close(fd);
		return SHOAL_ESYSTEM;
	}
	return fd;
}
