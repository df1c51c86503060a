/* Listening sockets made by hand: options set before bind, never SO_REUSEADDR on UDP. */
#include "config.h"

#include <errno.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/log.h"
#include "server/socket.h"

const char *const socket_mode_names[] = { "reuseport", "shared", NULL };

struct socket_set {
	enum socket_mode mode;
	size_t addresses;
	unsigned workers;
	int *udp;         /* [worker * addresses + address]; shared mode: one fd repeated */
	int *tcp;         /* [worker * addresses + address] */
	bool *tcp_handed; /* [worker]: its TCP server closes them, not the set */
};

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
	int one = 1, e;
	int fd = socket(a->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "%s: socket: %s", a->text, shoal_strerror(e));
		return e;
	}
	/*
	 * SO_REUSEPORT before bind: each worker's socket joins the port's group
	 * and the kernel spreads clients over them by 4-tuple hash. The group
	 * only admits sockets of the same effective uid, which is why all are
	 * made before privileges drop.
	 */
	if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)
		goto done;
	if (reuseaddr && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto done;
	/* v6 sockets answer v6 only; 0.0.0.0 has its own socket */
	if (a->addr.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		goto done;
	if (bind(fd, (const struct sockaddr *)&a->addr, a->addr_len) < 0)
		goto done;
	return fd;
done:
	e = -errno;
	snprintf(err, errlen, "%s: %s", a->text, shoal_strerror(e));
	close(fd);
	return e;
}

static int udp_socket_open(const listen_addr_t *a, bool reuseport, char *err, size_t errlen)
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

static int tcp_socket_open(const listen_addr_t *a, char *err, size_t errlen)
{
	/*
	 * SO_REUSEADDR is safe on a TCP listener (Linux refuses a second bind
	 * over a listening socket) and lets a restart bind past TIME_WAIT.
	 */
	int fd = open_bound(a, SOCK_STREAM, true, true, err, errlen);
	if (fd < 0)
		return fd;
	if (listen(fd, 1024) < 0) {
		int e = -errno;
		snprintf(err, errlen, "%s: listen: %s", a->text, shoal_strerror(e));
		close(fd);
		return e;
	}
	return fd;
}

/* Worker w's UDP sockets: its own (reuseport), or the shared ones, made by the first worker. */
static int open_udp(socket_set_t *s, const listen_addr_t *addrs, unsigned w, char *err,
		    size_t errlen)
{
	int *fds = &s->udp[(size_t)w * s->addresses];
	for (size_t i = 0; i < s->addresses; i++) {
		if (s->mode == SOCKET_MODE_SHARED && w > 0) {
			fds[i] = s->udp[i];
			continue;
		}
		/* shared: no SO_REUSEPORT, one socket per address, read by every worker */
		bool reuseport = s->mode != SOCKET_MODE_SHARED;
		fds[i] = udp_socket_open(&addrs[i], reuseport, err, errlen);
		if (fds[i] < 0) {
			if (reuseport)
				log_error("worker %u: UDP %s", w, err);
			else
				log_error("UDP %s", err);
			snprintf(err, errlen, "cannot open the UDP sockets (see above)");
			return fds[i];
		}
	}
	return 0;
}

int socket_set_open(const listen_addr_t *addrs, size_t n_addrs, unsigned workers,
		    enum socket_mode mode, socket_set_t **out, char *err, size_t errlen)
{
	size_t n = (size_t)workers * n_addrs;
	socket_set_t *s = calloc(1, sizeof(*s));
	if (s) {
		s->udp = malloc((n ? n : 1) * sizeof(int));
		s->tcp = malloc((n ? n : 1) * sizeof(int));
		s->tcp_handed = calloc(workers ? workers : 1, sizeof(bool));
	}
	if (!s || !s->udp || !s->tcp || !s->tcp_handed) {
		socket_set_close(s);
		snprintf(err, errlen, "out of memory for %zu sockets", 2 * n);
		return SHOAL_ENOMEM;
	}
	s->mode = mode;
	s->addresses = n_addrs;
	for (size_t i = 0; i < n; i++)
		s->udp[i] = s->tcp[i] = -1;
	/* worker by worker, UDP then TCP: each socket's place in its SO_REUSEPORT group */
	int rc = 0;
	for (unsigned w = 0; w < workers && rc == 0; w++) {
		s->workers = w + 1;
		rc = open_udp(s, addrs, w, err, errlen);
		for (size_t i = 0; i < n_addrs && rc == 0; i++) {
			int fd = tcp_socket_open(&addrs[i], err, errlen);
			if (fd < 0)
				rc = fd;
			else
				s->tcp[(size_t)w * n_addrs + i] = fd;
		}
	}
	if (rc < 0) {
		socket_set_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

enum socket_mode socket_set_mode(const socket_set_t *s)
{
	return s->mode;
}

size_t socket_set_addresses(const socket_set_t *s)
{
	return s->addresses;
}

int socket_set_udp(const socket_set_t *s, unsigned w, size_t a)
{
	return s->udp[(size_t)w * s->addresses + a];
}

int socket_set_tcp(const socket_set_t *s, unsigned w, size_t a)
{
	return s->tcp[(size_t)w * s->addresses + a];
}

void socket_set_tcp_handed(socket_set_t *s, unsigned w)
{
	s->tcp_handed[w] = true;
}

uint64_t socket_set_udp_drops(const socket_set_t *s, unsigned w)
{
	uint64_t drops = 0;
	/* shared mode: the sockets are every worker's; count them once, on worker 0 */
	if (s->mode == SOCKET_MODE_SHARED && w != 0)
		return 0;
	for (size_t i = 0; i < s->addresses; i++) {
		uint32_t mem[SK_MEMINFO_VARS];
		socklen_t len = sizeof(mem);
		if (getsockopt(socket_set_udp(s, w, i), SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
		    len > SK_MEMINFO_DROPS * sizeof(mem[0]))
			drops += mem[SK_MEMINFO_DROPS];
	}
	return drops;
}

void socket_set_close(socket_set_t *s)
{
	if (!s)
		return;
	for (unsigned w = 0; w < s->workers; w++) {
		for (size_t i = 0; i < s->addresses; i++) {
			size_t k = (size_t)w * s->addresses + i;
			/* shared mode: worker 0's entries own the sockets */
			if (s->udp[k] >= 0 && (s->mode != SOCKET_MODE_SHARED || w == 0))
				close(s->udp[k]);
			if (s->tcp[k] >= 0 && !s->tcp_handed[w])
				close(s->tcp[k]);
		}
	}
	free(s->udp);
	free(s->tcp);
	free(s->tcp_handed);
	free(s);
}
