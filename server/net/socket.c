/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Listening sockets made by hand: options set before bind, never SO_REUSEADDR on UDP. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/addr.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/net/socket.h"

/* Linux 5.3 (include/uapi/asm-generic/socket.h); older headers lack the name */
#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF 68
#endif

const char *const socket_kind_names[] = { "udp", "tcp", "tls", NULL };

struct socket_set {
	enum socket_mode mode;
	unsigned workers;
	size_t addresses;     /* listen's: a UDP socket and a TCP listener each */
	size_t tls_addresses; /* listen-tls's: a TLS listener each */
	listen_addr_t *addrs; /* [address]: as configured, for descriptions and messages */
	listen_addr_t *tls_addrs;
	/* [kind][worker * its addresses + address]; shared mode's UDP: one fd repeated */
	int *fds[SOCKET_KINDS];
	bool *handed[SOCKET_KINDS]; /* [kind][worker]: its server closes them (TCP, TLS), not the
				       set */
	/* [kind][address]: sockets in the kernel's group, the set's first (more while a giver
	 * drains) */
	unsigned *members[SOCKET_KINDS];
	bool cpu_steer; /* UDP groups steered by the receiving CPU (socket_set_steer_cpu) */
};

/* How many addresses sockets of kind have in s: listen's, or listen-tls's. */
static size_t kind_addresses(const socket_set_t *s, int kind)
{
	return kind == SOCKET_TLS ? s->tls_addresses : s->addresses;
}

/* Address a of the sockets of kind. */
static const listen_addr_t *kind_addr(const socket_set_t *s, int kind, size_t a)
{
	assert(a < kind_addresses(s, kind));
	return kind == SOCKET_TLS ? &s->tls_addrs[a] : &s->addrs[a];
}

/* Where worker w's socket of kind for address a is kept. */
static int *kind_fd(const socket_set_t *s, int kind, unsigned w, size_t a)
{
	assert(w < s->workers && a < kind_addresses(s, kind));
	return &s->fds[kind][(size_t)w * kind_addresses(s, kind) + a];
}

/*
 * Best effort: a bigger buffer rides out bursts. SO_*BUFFORCE (root, before
 * the privilege drop) passes net.core.rmem_max/wmem_max; otherwise the
 * kernel caps the size at those. Returns what the kernel gave for receive
 * and send: it doubles what is asked, for its own bookkeeping (socket(7)).
 */
static void set_buffers(int fd, int receive, int send, int *got_receive, int *got_send)
{
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &receive, sizeof(receive)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive, sizeof(receive));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &send, sizeof(send)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send, sizeof(send));
	socklen_t len = sizeof(*got_receive);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, got_receive, &len) < 0)
		*got_receive = 0;
	len = sizeof(*got_send);
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, got_send, &len) < 0)
		*got_send = 0;
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
	int got_receive, got_send;
	if (fd >= 0)
		set_buffers(fd, SOCKET_UDP_BUFFER_DEFAULT, SOCKET_UDP_BUFFER_DEFAULT, &got_receive,
			    &got_send);
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
static int open_udp(socket_set_t *s, unsigned w, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->addresses; i++) {
		int *fd = kind_fd(s, SOCKET_UDP, w, i);
		if (s->mode == SOCKET_MODE_SHARED && w > 0) {
			*fd = *kind_fd(s, SOCKET_UDP, 0, i);
			continue;
		}
		/* shared: no SO_REUSEPORT, one socket per address, read by every worker */
		bool reuseport = s->mode != SOCKET_MODE_SHARED;
		*fd = udp_socket_open(&s->addrs[i], reuseport, err, errlen);
		if (*fd < 0) {
			if (reuseport)
				log_error("worker %u: UDP %s", w, err);
			else
				log_error("UDP %s", err);
			snprintf(err, errlen, "cannot open the UDP sockets (see above)");
			return *fd;
		}
	}
	return 0;
}

/* Worker w's listeners of kind (TCP, TLS), one per address of the kind. */
static int open_listeners(socket_set_t *s, int kind, unsigned w, char *err, size_t errlen)
{
	for (size_t i = 0; i < kind_addresses(s, kind); i++) {
		int *fd = kind_fd(s, kind, w, i);
		*fd = tcp_socket_open(kind_addr(s, kind, i), err, errlen);
		if (*fd < 0)
			return *fd;
	}
	return 0;
}

/* A copy of list[0..n) (room for one at least), or NULL. */
static void *copy_of(const void *list, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (p && n)
		memcpy(p, list, n * size);
	return p;
}

/* An empty set for these addresses and `workers` workers, every descriptor -1. */
static socket_set_t *set_new(const listen_addr_t *addrs, size_t n_addrs,
			     const listen_addr_t *tls_addrs, size_t n_tls, unsigned workers,
			     enum socket_mode mode)
{
	socket_set_t *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->mode = mode;
	s->addresses = n_addrs;
	s->tls_addresses = n_tls;
	s->addrs = copy_of(addrs, n_addrs, sizeof(*addrs));
	s->tls_addrs = copy_of(tls_addrs, n_tls, sizeof(*tls_addrs));
	bool ok = s->addrs && s->tls_addrs;
	for (int kind = 0; kind < SOCKET_KINDS; kind++) {
		size_t addresses = kind_addresses(s, kind), n = (size_t)workers * addresses;
		s->fds[kind] = malloc((n ? n : 1) * sizeof(int));
		s->handed[kind] = calloc(workers ? workers : 1, sizeof(bool));
		s->members[kind] = calloc(addresses ? addresses : 1, sizeof(unsigned));
		ok = ok && s->fds[kind] && s->handed[kind] && s->members[kind];
		for (size_t i = 0; ok && i < n; i++)
			s->fds[kind][i] = -1;
		for (size_t a = 0; ok && a < addresses; a++)
			s->members[kind][a] = workers;
	}
	if (!ok) {
		socket_set_close(s);
		return NULL;
	}
	return s;
}

/* The message when a set's memory is short. */
static int set_no_memory(unsigned workers, size_t n_addrs, size_t n_tls, char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory for %zu sockets",
		 (size_t)workers * (2 * n_addrs + n_tls));
	return SHOAL_ENOMEM;
}

int socket_set_open(const listen_addr_t *addrs, size_t n_addrs, const listen_addr_t *tls_addrs,
		    size_t n_tls, unsigned workers, enum socket_mode mode, socket_set_t **out,
		    char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	socket_set_t *s = set_new(addrs, n_addrs, tls_addrs, n_tls, workers, mode);
	if (!s)
		return set_no_memory(workers, n_addrs, n_tls, err, errlen);
	/* worker by worker, UDP, TCP, TLS: each socket's place in its SO_REUSEPORT group */
	int rc = 0;
	for (unsigned w = 0; w < workers && rc == 0; w++) {
		s->workers = w + 1;
		rc = open_udp(s, w, err, errlen);
		if (rc == 0)
			rc = open_listeners(s, SOCKET_TCP, w, err, errlen);
		if (rc == 0)
			rc = open_listeners(s, SOCKET_TLS, w, err, errlen);
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

size_t socket_set_tls_addresses(const socket_set_t *s)
{
	return s->tls_addresses;
}

int socket_set_udp(const socket_set_t *s, unsigned w, size_t a)
{
	return *kind_fd(s, SOCKET_UDP, w, a);
}

int socket_set_tcp(const socket_set_t *s, unsigned w, size_t a)
{
	return *kind_fd(s, SOCKET_TCP, w, a);
}

int socket_set_tls(const socket_set_t *s, unsigned w, size_t a)
{
	return *kind_fd(s, SOCKET_TLS, w, a);
}

void socket_set_handed(socket_set_t *s, enum socket_kind kind, unsigned w)
{
	assert(w < s->workers && kind != SOCKET_UDP);
	s->handed[kind][w] = true;
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

const listen_addr_t *socket_set_address(const socket_set_t *s, size_t a)
{
	return kind_addr(s, SOCKET_UDP, a);
}

const listen_addr_t *socket_set_tls_address(const socket_set_t *s, size_t a)
{
	return kind_addr(s, SOCKET_TLS, a);
}

bool socket_set_entry(const socket_set_t *s, size_t i, socket_entry_t *e)
{
	MAIN_THREAD_ONLY();
	/* per address: the UDP sockets (one in shared mode), then the TCP listeners */
	size_t udp_per = s->mode == SOCKET_MODE_SHARED ? 1 : s->workers;
	size_t per_address = udp_per + s->workers;
	size_t plain = s->addresses * per_address;
	if (s->workers == 0 || i >= plain + s->tls_addresses * s->workers)
		return false;
	if (i >= plain) {
		/* then per listen-tls address, its TLS listeners */
		e->kind = SOCKET_TLS;
		e->address = (i - plain) / s->workers;
		e->worker = (unsigned)((i - plain) % s->workers);
	} else {
		size_t k = i % per_address;
		e->address = i / per_address;
		e->kind = k < udp_per ? SOCKET_UDP : SOCKET_TCP;
		e->worker = (unsigned)(k < udp_per ? k : k - udp_per);
	}
	e->fd = *kind_fd(s, e->kind, e->worker, e->address);
	e->addr = kind_addr(s, e->kind, e->address);
	return true;
}

/* The same address, port and IPv6 scope (addr_same). */
static bool listen_same(const listen_addr_t *x, const listen_addr_t *y)
{
	return addr_same((const struct sockaddr *)&x->addr, (const struct sockaddr *)&y->addr);
}

/* An int socket option of fd, or -1 when it cannot be read. */
static int sockopt_int(int fd, int name)
{
	int v = 0;
	socklen_t len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, name, &v, &len) < 0 ? -1 : v;
}

/*
 * A handed-over socket is what its giver says and what mode wants: checked
 * on the socket itself, since a descriptor of anything can be sent.
 */
static int given_check(const socket_given_t *g, enum socket_mode mode, char *err, size_t errlen)
{
	bool tcp = g->kind != SOCKET_UDP; /* a TLS listener is a TCP one */
	bool shared_udp = mode == SOCKET_MODE_SHARED && !tcp;
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	int type = sockopt_int(g->fd, SO_TYPE);
	int reuseport = sockopt_int(g->fd, SO_REUSEPORT);
	const char *why = NULL;
	if (type < 0)
		why = "not a socket";
	else if (type != (tcp ? SOCK_STREAM : SOCK_DGRAM))
		why = "not of that type";
	else if (sockopt_int(g->fd, SO_DOMAIN) != g->addr.addr.ss_family)
		why = "not of that address family";
	else if (getsockname(g->fd, (struct sockaddr *)&bound, &blen) < 0 ||
		 !addr_same((const struct sockaddr *)&bound,
			    (const struct sockaddr *)&g->addr.addr))
		why = "not bound to that address";
	else if (shared_udp && reuseport != 0)
		why = "has SO_REUSEPORT, which socket-mode shared does not use";
	else if (!shared_udp && reuseport != 1)
		why = "has no SO_REUSEPORT (socket-mode shared?)";
	else if (tcp && sockopt_int(g->fd, SO_ACCEPTCONN) != 1)
		why = "not listening";
	if (!why)
		return 0;
	snprintf(err, errlen, "handed-over socket %s %u %s: %s", socket_kind_names[g->kind],
		 g->worker, g->addr.text, why);
	return SHOAL_ECONFIG;
}

/* Close what is still open of given[0..n). */
static void given_close(socket_given_t *given, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (given[i].fd >= 0)
			close(given[i].fd);
		given[i].fd = -1;
	}
}

/*
 * The given socket of kind for address a and group place w, or NULL. Two
 * for one place, or places with a gap, are refused: the group order would
 * be unknown.
 */
static socket_given_t *given_find(socket_given_t *given, size_t n, enum socket_kind kind,
				  const listen_addr_t *a, unsigned w)
{
	for (size_t i = 0; i < n; i++)
		if (given[i].fd >= 0 && given[i].kind == kind && given[i].worker == w &&
		    listen_same(&given[i].addr, a))
			return &given[i];
	return NULL;
}

/* How many of kind for a: places 0..count-1, each once. Returns the count, or -1. */
static int given_count(socket_given_t *given, size_t n, enum socket_kind kind,
		       const listen_addr_t *a)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (given[i].fd >= 0 && given[i].kind == kind && listen_same(&given[i].addr, a))
			total++;
	for (unsigned w = 0; w < total; w++) {
		socket_given_t *g = given_find(given, n, kind, a, w);
		for (size_t i = 0; g && i < n; i++)
			if (&given[i] != g && given[i].fd >= 0 && given[i].kind == kind &&
			    given[i].worker == w && listen_same(&given[i].addr, a))
				g = NULL;
		if (!g)
			return -1;
	}
	return (int)total;
}

/*
 * New sockets join a group only with the effective uid of the sockets in
 * it (the uid that made them, which fstat shows as the socket's owner):
 * say so plainly rather than report the bind's EADDRINUSE.
 */
static int join_check(const socket_given_t *first, unsigned have, unsigned want, char *err,
		      size_t errlen)
{
	struct stat st;
	if (fstat(first->fd, &st) < 0 || st.st_uid == geteuid())
		return 0;
	snprintf(err, errlen,
		 "%s: %u workers need %u more sockets in each of its SO_REUSEPORT groups, and the "
		 "kernel admits only sockets of the group's uid (%u, who made the running "
		 "server's sockets); this process runs as uid %u: take over as uid %u, or keep "
		 "threads at %u or fewer",
		 first->addr.text, want, want - have, (unsigned)st.st_uid, (unsigned)geteuid(),
		 (unsigned)st.st_uid, have);
	return SHOAL_ECONFIG;
}

/*
 * Sockets of kind for address a of s: the given ones, their count checked;
 * *have is how many were given, and the group's members are noted.
 */
static int adopt_count(socket_set_t *s, int kind, size_t a, socket_given_t *given, size_t n_given,
		       unsigned *have, char *err, size_t errlen)
{
	const listen_addr_t *addr = kind_addr(s, kind, a);
	bool shared_udp = kind == SOCKET_UDP && s->mode == SOCKET_MODE_SHARED;
	int n = given_count(given, n_given, kind, addr);
	if (n < 0) {
		snprintf(err, errlen, "%s: the handed-over %s sockets do not number 0 to N",
			 addr->text, socket_kind_names[kind]);
		return SHOAL_ECONFIG;
	}
	*have = (unsigned)n;
	if (shared_udp && *have > 1) {
		snprintf(err, errlen, "%s: more than one shared UDP socket handed over",
			 addr->text);
		return SHOAL_ECONFIG;
	}
	unsigned want = shared_udp ? 1 : s->workers;
	if (*have > 0 && *have < want) {
		int rc = join_check(given_find(given, n_given, kind, addr, 0), *have, want, err,
				    errlen);
		if (rc < 0)
			return rc;
	}
	if (!shared_udp)
		s->members[kind][a] = *have > want ? *have : want;
	return 0;
}

/* Worker w's socket of kind for address a: the given one, or a new one joining after them. */
static int adopt_one(socket_set_t *s, int kind, size_t a, unsigned w, socket_given_t *given,
		     size_t n_given, char *err, size_t errlen)
{
	const listen_addr_t *addr = kind_addr(s, kind, a);
	bool shared_udp = kind == SOCKET_UDP && s->mode == SOCKET_MODE_SHARED;
	int *fd = kind_fd(s, kind, w, a);
	socket_given_t *g;
	if (shared_udp && w > 0) {
		*fd = *kind_fd(s, kind, 0, a);
	} else if ((g = given_find(given, n_given, kind, addr, w)) != NULL) {
		*fd = g->fd;
		g->fd = -1;
	} else {
		*fd = kind == SOCKET_UDP ? udp_socket_open(addr, !shared_udp, err, errlen)
					 : tcp_socket_open(addr, err, errlen);
	}
	return *fd < 0 ? *fd : 0;
}

/*
 * Fill address a of kinds first..last (UDP and TCP for listen's, TLS for
 * listen-tls's) of s (workers s->workers) from the given sockets, opening
 * what is missing.
 */
static int adopt_address(socket_set_t *s, int first, int last, size_t a, socket_given_t *given,
			 size_t n_given, char *err, size_t errlen)
{
	unsigned have;
	for (int kind = first; kind <= last; kind++) {
		int rc = adopt_count(s, kind, a, given, n_given, &have, err, errlen);
		if (rc < 0)
			return rc;
	}
	/*
	 * Given sockets first, in group order, then new ones, worker by
	 * worker: a new socket joins its group after the ones in it, so the
	 * set's order stays the group's.
	 */
	for (unsigned w = 0; w < s->workers; w++)
		for (int kind = first; kind <= last; kind++) {
			int rc = adopt_one(s, kind, a, w, given, n_given, err, errlen);
			if (rc < 0)
				return rc;
		}
	return 0;
}

/* Whether a given socket is for an address of addrs[0..n). */
static bool given_listed(const socket_given_t *g, const listen_addr_t *addrs, size_t n)
{
	for (size_t a = 0; a < n; a++)
		if (listen_same(&g->addr, &addrs[a]))
			return true;
	return false;
}

int socket_set_adopt(const listen_addr_t *addrs, size_t n_addrs, const listen_addr_t *tls_addrs,
		     size_t n_tls, unsigned workers, enum socket_mode mode, socket_given_t *given,
		     size_t n_given, socket_set_t **out, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	int rc = 0;
	socket_set_t *s = NULL;
	for (size_t i = 0; i < n_given && rc == 0; i++)
		rc = given_check(&given[i], mode, err, errlen);
	if (rc < 0)
		goto done;
	size_t common = 0;
	for (size_t i = 0; i < n_given; i++)
		common += given_listed(&given[i], addrs, n_addrs) ||
			  given_listed(&given[i], tls_addrs, n_tls);
	if (common == 0) {
		snprintf(err, errlen,
			 "nothing to take over: the running server listens on %s, this "
			 "configuration on %s%s",
			 n_given ? given[0].addr.text : "nothing",
			 n_addrs ? addrs[0].text : "nothing", n_addrs > 1 ? " and others" : "");
		rc = SHOAL_ECONFIG;
		goto done;
	}
	if (!(s = set_new(addrs, n_addrs, tls_addrs, n_tls, workers, mode))) {
		rc = set_no_memory(workers, n_addrs, n_tls, err, errlen);
		goto done;
	}
	/* every descriptor is -1 until filled: the set may be closed at any point */
	s->workers = workers;
	for (size_t a = 0; a < n_addrs && rc == 0; a++)
		rc = adopt_address(s, SOCKET_UDP, SOCKET_TCP, a, given, n_given, err, errlen);
	for (size_t a = 0; a < n_tls && rc == 0; a++)
		rc = adopt_address(s, SOCKET_TLS, SOCKET_TLS, a, given, n_given, err, errlen);
done:
	/* past the workers, or an address no longer listed: the giver retires them */
	given_close(given, n_given);
	if (rc < 0) {
		socket_set_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* Whether sockets of kind are in SO_REUSEPORT groups (all but shared mode's UDP). */
static bool kind_grouped(const socket_set_t *s, int kind)
{
	return !(kind == SOCKET_UDP && s->mode == SOCKET_MODE_SHARED);
}

unsigned socket_set_retiring(const socket_set_t *s)
{
	unsigned n = 0;
	for (int kind = 0; kind < SOCKET_KINDS; kind++)
		for (size_t a = 0; a < kind_addresses(s, kind) && kind_grouped(s, kind); a++) {
			/* a group holds the set's own sockets at least (set_new, adopt_count) */
			assert(s->members[kind][a] >= s->workers);
			n += s->members[kind][a] - s->workers;
		}
	return n;
}

/* Attach code[0..n) as fd's group's program (it replaces the one before). */
static int group_program(int fd, struct sock_filter *code, size_t n)
{
	struct sock_fprog prog = { (unsigned short)n, code };
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		return -errno;
	return 0;
}

/*
 * A classic BPF program for a SO_REUSEPORT group: the index (the group
 * place) of the socket that takes a datagram or connection, here the
 * client's source port modulo `among`, so that only places 0..among-1 are
 * chosen. It runs with the packet's data at the transport payload; the
 * source port is read relative to the network header: right after a
 * 20-octet IPv4 header (a header with options gives another but still
 * valid index) or the 40-octet IPv6 one. An index past the group makes
 * the kernel fall back to its hash, so a wrong one cannot lose a packet.
 */
static int group_attach(int fd, int family, unsigned among)
{
	assert(among > 0); /* BPF_MOD by 0 */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS,
			 (uint32_t)SKF_NET_OFF + (family == AF_INET6 ? 40u : 20u)),
		BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, among),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	return group_program(fd, code, sizeof(code) / sizeof(code[0]));
}

/*
 * The CPU program: the index of the socket of the CPU the packet came in
 * on (the kernel's SKF_AD_CPU, the CPU running the receive), modulo
 * `among`, so that worker i (pinned to the CPUs whose number modulo
 * `among` is i) answers what its CPUs received; places past `among` are
 * never chosen, which steers away from retiring sockets as group_attach
 * does.
 */
static int group_attach_cpu(int fd, unsigned among)
{
	assert(among > 0); /* BPF_MOD by 0 */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_AD_OFF + SKF_AD_CPU),
		BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, among),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	return group_program(fd, code, sizeof(code) / sizeof(code[0]));
}

static int group_detach(int fd)
{
	int unused = 0;
	/* ENOENT: no program was attached */
	if (setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &unused, sizeof(unused)) < 0 &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

/* The group of kind for address a: steered as socket_set_steer says. */
static int steer_group(socket_set_t *s, int kind, size_t a, bool away, char *err, size_t errlen)
{
	const listen_addr_t *addr = kind_addr(s, kind, a);
	unsigned *members = &s->members[kind][a];
	int fd = *kind_fd(s, kind, 0, a);
	int rc = 0;
	if (kind == SOCKET_UDP && s->cpu_steer)
		rc = group_attach_cpu(fd, s->workers); /* away, and after */
	else if (away && *members > s->workers)
		rc = group_attach(fd, addr->addr.ss_family, s->workers);
	else if (!away)
		rc = group_detach(fd);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s steering: %s", addr->text, socket_kind_names[kind],
			 shoal_strerror(rc));
		return rc;
	}
	if (!away)
		*members = s->workers;
	return 0;
}

int socket_set_steer(socket_set_t *s, bool away, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	for (int kind = 0; kind < SOCKET_KINDS && s->workers > 0; kind++) {
		if (!kind_grouped(s, kind))
			continue; /* one socket, no group */
		for (size_t a = 0; a < kind_addresses(s, kind); a++) {
			int rc = steer_group(s, kind, a, away, err, errlen);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

void socket_set_steer_cpu(socket_set_t *s)
{
	MAIN_THREAD_ONLY();
	s->cpu_steer = true;
}

void socket_set_close(socket_set_t *s)
{
	MAIN_THREAD_ONLY();
	if (!s)
		return;
	for (int kind = 0; kind < SOCKET_KINDS; kind++) {
		for (unsigned w = 0; s->fds[kind] && w < s->workers; w++) {
			/* shared mode: worker 0's entries own the UDP sockets */
			if ((s->handed[kind] && s->handed[kind][w]) ||
			    (!kind_grouped(s, kind) && w > 0))
				continue;
			for (size_t i = 0; i < kind_addresses(s, kind); i++)
				if (*kind_fd(s, kind, w, i) >= 0)
					close(*kind_fd(s, kind, w, i));
		}
		free(s->fds[kind]);
		free(s->handed[kind]);
		free(s->members[kind]);
	}
	free(s->addrs);
	free(s->tls_addrs);
	free(s);
}

void socket_set_udp_buffers(const socket_set_t *s, uint32_t receive, uint32_t send)
{
	MAIN_THREAD_ONLY();
	int got_receive = 0, got_send = 0;
	size_t n = s->mode == SOCKET_MODE_SHARED ? 1 : s->workers;
	for (size_t i = 0; i < n * s->addresses; i++)
		set_buffers(s->fds[SOCKET_UDP][i], (int)receive, (int)send, &got_receive,
			    &got_send);
	/* doubled by the kernel when granted whole */
	if ((uint64_t)got_receive < 2 * (uint64_t)receive ||
	    (uint64_t)got_send < 2 * (uint64_t)send)
		log_warning("UDP buffers: %u and %u octets asked, the kernel gave %d and %d "
			    "(raise net.core.rmem_max and wmem_max, or start as root)",
			    receive, send, got_receive / 2, got_send / 2);
}
