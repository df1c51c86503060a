/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/net/socket.c: the socket set's layout, errors, takeover and steering. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/daemon/fdbudget.h"
#include "server/net/socket.h"
#include "tests/unit/loopback.h"
#include "unit.h"

/* Reuseport: each worker its own UDP socket and TCP listener per address. */
static void test_reuseport_layout(void)
{
	listen_addr_t addrs[2] = { unit_loopback(0), unit_loopback(0) };
	int64_t open_before = fdbudget_count_open();
	socket_set_t *s = NULL;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(addrs, 2, NULL, 0, 3, SOCKET_MODE_REUSEPORT, &s, err, sizeof(err)),
		0);
	CU_ASSERT_EQUAL(socket_set_mode(s), SOCKET_MODE_REUSEPORT);
	CU_ASSERT_EQUAL(socket_set_addresses(s), 2);
	/* 3 workers x 2 addresses x (UDP + TCP), every one its own */
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before + 12);
	for (unsigned w = 0; w < 3; w++)
		for (size_t a = 0; a < 2; a++) {
			CU_ASSERT_TRUE(socket_set_udp(s, w, a) >= 0);
			CU_ASSERT_TRUE(socket_set_tcp(s, w, a) >= 0);
			if (w > 0)
				CU_ASSERT_NOT_EQUAL(socket_set_udp(s, w, a),
						    socket_set_udp(s, 0, a));
		}
	socket_set_close(s);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
}

/* Shared: one UDP socket per address, the same for every worker; TCP stays per worker. */
static void test_shared_layout(void)
{
	listen_addr_t addrs[1] = { unit_loopback(0) };
	int64_t open_before = fdbudget_count_open();
	socket_set_t *s = NULL;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(addrs, 1, NULL, 0, 3, SOCKET_MODE_SHARED, &s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before + 1 + 3);
	CU_ASSERT_EQUAL(socket_set_udp(s, 1, 0), socket_set_udp(s, 0, 0));
	CU_ASSERT_EQUAL(socket_set_udp(s, 2, 0), socket_set_udp(s, 0, 0));
	CU_ASSERT_NOT_EQUAL(socket_set_tcp(s, 1, 0), socket_set_tcp(s, 0, 0));
	socket_set_close(s);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
}

/*
 * A port held by a socket without SO_REUSEPORT: the set cannot join it,
 * returns the bind's errno as the error, and leaves nothing open.
 */
static void test_busy_port_keeps_errno(void)
{
	int held = socket(AF_INET, SOCK_DGRAM, 0);
	CU_ASSERT_FATAL(held >= 0);
	listen_addr_t a = unit_loopback(0);
	CU_ASSERT_EQUAL_FATAL(bind(held, (struct sockaddr *)&a.addr, a.addr_len), 0);
	socklen_t len = a.addr_len;
	CU_ASSERT_EQUAL_FATAL(getsockname(held, (struct sockaddr *)&a.addr, &len), 0);
	snprintf(a.text, sizeof(a.text), "127.0.0.1@%u",
		 (unsigned)ntohs(((struct sockaddr_in *)&a.addr)->sin_port));
	int64_t open_before = fdbudget_count_open();
	socket_set_t *s = NULL;
	char err[256] = "";
	int rc = socket_set_open(&a, 1, NULL, 0, 2, SOCKET_MODE_REUSEPORT, &s, err, sizeof(err));
	CU_ASSERT_EQUAL(rc, -EADDRINUSE);
	CU_ASSERT_TRUE(shoal_error_is_system(rc));
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_NOT_EQUAL(err[0], '\0');
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
	close(held);
}

/*
 * 127.0.0.1 and a port free for UDP and TCP right now (bound once and
 * closed: another program may take it meanwhile, which only fails the
 * test, never passes it).
 */
static listen_addr_t loopback_free(void)
{
	for (int tries = 0; tries < 50; tries++) {
		listen_addr_t a = unit_loopback(0);
		int u = socket(AF_INET, SOCK_DGRAM, 0), t = socket(AF_INET, SOCK_STREAM, 0);
		socklen_t len = a.addr_len;
		bool ok = u >= 0 && t >= 0 &&
			  bind(u, (struct sockaddr *)&a.addr, a.addr_len) == 0 &&
			  getsockname(u, (struct sockaddr *)&a.addr, &len) == 0 &&
			  bind(t, (struct sockaddr *)&a.addr, a.addr_len) == 0;
		close(u);
		close(t);
		if (ok) {
			snprintf(a.text, sizeof(a.text), "127.0.0.1@%u",
				 (unsigned)ntohs(((struct sockaddr_in *)&a.addr)->sin_port));
			return a;
		}
	}
	CU_FAIL_FATAL("no free port");
	return unit_loopback(0);
}

/* Every socket of s, as another process receives them: a descriptor of its own for each. */
static size_t hand_over(const socket_set_t *s, socket_given_t *given, size_t cap)
{
	socket_entry_t e;
	size_t n = 0;
	for (size_t i = 0; socket_set_entry(s, i, &e) && n < cap; i++)
		given[n++] = (socket_given_t){
			.kind = e.kind, .worker = e.worker, .addr = *e.addr, .fd = dup(e.fd)
		};
	return n;
}

/* The socket behind fd, to tell whether two descriptors reach the same one. */
static ino_t socket_inode(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/*
 * A giver with `from` workers on a free port (*a), and its sockets taken
 * over by a set of `to` workers (*s); *opened is how many descriptors the
 * adoption left open beyond those it was given. Both sets are the caller's.
 */
static void open_adopt(unsigned from, unsigned to, listen_addr_t *a, socket_set_t **old,
		       socket_set_t **s, int64_t *opened)
{
	char err[256] = "";
	*a = loopback_free();
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(a, 1, NULL, 0, from, SOCKET_MODE_REUSEPORT, old, err, sizeof(err)),
		0);
	socket_given_t given[16];
	int64_t open_before = fdbudget_count_open();
	size_t n = hand_over(*old, given, 16);
	CU_ASSERT_EQUAL(n, 2 * from);
	CU_ASSERT_EQUAL_FATAL(socket_set_adopt(a, 1, NULL, 0, to, SOCKET_MODE_REUSEPORT, given, n,
					       s, err, sizeof(err)),
			      0);
	*opened = fdbudget_count_open() - open_before;
}

/* Per address: UDP sockets, then TCP listeners, each in group order. */
static void test_entries_in_group_order(void)
{
	listen_addr_t addrs[2] = { unit_loopback(0), unit_loopback(0) };
	socket_set_t *s = NULL;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(addrs, 2, NULL, 0, 3, SOCKET_MODE_REUSEPORT, &s, err, sizeof(err)),
		0);
	socket_entry_t e;
	size_t n = 0;
	for (; socket_set_entry(s, n, &e); n++) {
		CU_ASSERT_EQUAL(e.address, n / 6);
		CU_ASSERT_EQUAL(e.kind, n % 6 < 3 ? SOCKET_UDP : SOCKET_TCP);
		CU_ASSERT_EQUAL(e.worker, n % 3);
		CU_ASSERT_EQUAL(e.fd, e.kind == SOCKET_UDP
					      ? socket_set_udp(s, e.worker, e.address)
					      : socket_set_tcp(s, e.worker, e.address));
	}
	CU_ASSERT_EQUAL(n, 12);
	socket_set_close(s);
	/* shared: the one UDP socket per address is listed once */
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(addrs, 1, NULL, 0, 3, SOCKET_MODE_SHARED, &s, err, sizeof(err)), 0);
	for (n = 0; socket_set_entry(s, n, &e); n++)
		CU_ASSERT_EQUAL(e.kind, n == 0 ? SOCKET_UDP : SOCKET_TCP);
	CU_ASSERT_EQUAL(n, 4);
	socket_set_close(s);
}

/* The same thread count: every worker gets the very socket the giver's worker had. */
static void test_adopt_same_sockets(void)
{
	listen_addr_t a;
	socket_set_t *old = NULL, *s = NULL;
	int64_t opened;
	open_adopt(2, 2, &a, &old, &s, &opened);
	CU_ASSERT_EQUAL(opened, 4); /* the given four, nothing more */
	for (unsigned w = 0; w < 2; w++) {
		CU_ASSERT_EQUAL(socket_inode(socket_set_udp(s, w, 0)),
				socket_inode(socket_set_udp(old, w, 0)));
		CU_ASSERT_EQUAL(socket_inode(socket_set_tcp(s, w, 0)),
				socket_inode(socket_set_tcp(old, w, 0)));
	}
	CU_ASSERT_EQUAL(socket_set_retiring(s), 0);
	socket_set_close(s);
	socket_set_close(old);
}

/* More workers: the given sockets first, new ones joining their groups after them. */
static void test_adopt_grows(void)
{
	listen_addr_t a;
	socket_set_t *old = NULL, *s = NULL;
	int64_t opened;
	open_adopt(2, 4, &a, &old, &s, &opened);
	CU_ASSERT_EQUAL(opened, 4 + 4); /* the given four, 2 UDP and 2 TCP new */
	CU_ASSERT_EQUAL(socket_inode(socket_set_udp(s, 1, 0)),
			socket_inode(socket_set_udp(old, 1, 0)));
	for (unsigned w = 2; w < 4; w++) {
		struct sockaddr_storage b;
		socklen_t len = sizeof(b);
		CU_ASSERT_EQUAL(getsockname(socket_set_udp(s, w, 0), (struct sockaddr *)&b, &len),
				0);
		CU_ASSERT_EQUAL(((struct sockaddr_in *)&b)->sin_port,
				((struct sockaddr_in *)&a.addr)->sin_port);
	}
	CU_ASSERT_EQUAL(socket_set_retiring(s), 0);
	socket_set_close(s);
	socket_set_close(old);
}

/* Fewer workers: the ones past them are closed here and counted as retiring. */
static void test_adopt_shrinks(void)
{
	listen_addr_t a;
	socket_set_t *old = NULL, *s = NULL;
	int64_t opened;
	char err[256] = "";
	open_adopt(3, 1, &a, &old, &s, &opened);
	CU_ASSERT_EQUAL(opened, 2);                 /* kept: one UDP, one TCP */
	CU_ASSERT_EQUAL(socket_set_retiring(s), 4); /* 2 UDP and 2 TCP the giver holds */
	CU_ASSERT_EQUAL(socket_set_steer(s, true, err, sizeof(err)), 0);
	socket_set_close(old);
	CU_ASSERT_EQUAL(socket_set_steer(s, false, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(socket_set_retiring(s), 0);
	socket_set_close(s);
}

/* adopt refuses with rc and a message containing want; every given descriptor is closed. */
static void adopt_refused(socket_given_t *given, size_t n, const listen_addr_t *addr,
			  enum socket_mode mode, const char *want)
{
	int64_t open_before = fdbudget_count_open();
	socket_set_t *s = NULL;
	char err[512] = "";
	CU_ASSERT_EQUAL(socket_set_adopt(addr, 1, NULL, 0, 2, mode, given, n, &s, err, sizeof(err)),
			SHOAL_ECONFIG);
	CU_ASSERT_PTR_NULL(s);
	if (!strstr(err, want))
		fprintf(stderr, "\n  message [%s] lacks [%s]\n", err, want);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before - (int64_t)n);
}

/* What does not fit is refused as a whole, and the giver's sockets are untouched. */
static void test_adopt_refuses_mismatch(void)
{
	listen_addr_t a = loopback_free(), other = loopback_free();
	socket_set_t *old = NULL;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(&a, 1, NULL, 0, 2, SOCKET_MODE_REUSEPORT, &old, err, sizeof(err)),
		0);
	socket_given_t given[8];
	size_t n = hand_over(old, given, 8);
	adopt_refused(given, n, &other, SOCKET_MODE_REUSEPORT, "nothing to take over");

	n = hand_over(old, given, 8);
	given[0].kind = SOCKET_TCP; /* a UDP socket said to be a listener */
	adopt_refused(given, n, &a, SOCKET_MODE_REUSEPORT, "not of that type");

	n = hand_over(old, given, 8);
	given[1].addr = other; /* said to listen elsewhere */
	adopt_refused(given, n, &a, SOCKET_MODE_REUSEPORT, "not bound to that address");

	n = hand_over(old, given, 8);
	adopt_refused(given, n, &a, SOCKET_MODE_SHARED, "SO_REUSEPORT");

	n = hand_over(old, given, 8);
	given[1].worker = 5; /* group places 0 and 5: the order is unknown */
	adopt_refused(given, n, &a, SOCKET_MODE_REUSEPORT, "do not number 0 to N");

	/* the giver still serves: its sockets are all open */
	for (unsigned w = 0; w < 2; w++)
		CU_ASSERT_NOT_EQUAL(socket_inode(socket_set_udp(old, w, 0)), 0);
	socket_set_close(old);
}

/*
 * A process of another uid cannot add sockets to the groups: adopt says
 * so before binding. Needs root (to make the sockets, then be another uid).
 */
static void test_adopt_grow_needs_uid(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "\n  skipped: needs root\n");
		return;
	}
	listen_addr_t a = loopback_free();
	socket_set_t *old = NULL;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(&a, 1, NULL, 0, 2, SOCKET_MODE_REUSEPORT, &old, err, sizeof(err)),
		0);
	pid_t child = fork();
	if (child == 0) {
		socket_given_t given[8];
		size_t n = hand_over(old, given, 8);
		socket_set_t *s = NULL;
		char msg[512] = "";
		if (setresuid(65534, 65534, 65534) < 0)
			_exit(3);
		int rc = socket_set_adopt(&a, 1, NULL, 0, 3, SOCKET_MODE_REUSEPORT, given, n, &s,
					  msg, sizeof(msg));
		_exit(rc == SHOAL_ECONFIG && strstr(msg, "uid 0") ? 0 : 1);
	}
	int status = -1;
	CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	socket_set_close(old);
}

/* Send one datagram from each of n fresh client sockets (n source ports) to a. */
static void send_from_many(const listen_addr_t *a, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_DGRAM, 0);
		CU_ASSERT_FATAL(c >= 0);
		CU_ASSERT_EQUAL(
			sendto(c, "q", 1, 0, (const struct sockaddr *)&a->addr, a->addr_len), 1);
		close(c);
	}
}

/* Datagrams waiting on fd, read until it is empty. */
static unsigned read_empty(int fd)
{
	unsigned n = 0;
	char b[16];
	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		n++;
	return n;
}

/* The kernel's receive-queue octets (SK_MEMINFO_RMEM_ALLOC) and drop count of fd. */
static void meminfo(int fd, uint32_t *queued, uint32_t *drops)
{
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mem);
	CU_ASSERT_EQUAL(getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len), 0);
	*queued = mem[SK_MEMINFO_RMEM_ALLOC];
	*drops = mem[SK_MEMINFO_DROPS];
}

/*
 * Going from 4 workers to 1: the old set drains its 3 retiring UDP
 * sockets, traffic goes on, then it closes them. `steer` chooses whether
 * the new set turns traffic away from them first. Returns the datagrams
 * lost (sent, less read from any socket); *queued_at_close is what the
 * kernel held on the retiring sockets when they closed, *drops its drop
 * counters on them.
 */
static unsigned shrink_run(bool steer, uint32_t *queued_at_close, uint32_t *drops)
{
	enum { BEFORE = 200, AFTER = 200 };
	listen_addr_t a;
	socket_set_t *old = NULL, *s = NULL;
	int64_t opened;
	char err[256] = "";
	open_adopt(4, 1, &a, &old, &s, &opened);
	send_from_many(&a, BEFORE); /* spread over the 4 by the kernel's hash */
	if (steer)
		CU_ASSERT_EQUAL(socket_set_steer(s, true, err, sizeof(err)), 0);
	unsigned got = 0;
	for (unsigned w = 1; w < 4; w++) /* the old process drains what it holds */
		got += read_empty(socket_set_udp(old, w, 0));
	send_from_many(&a, AFTER); /* the traffic goes on */
	*queued_at_close = *drops = 0;
	for (unsigned w = 1; w < 4; w++) {
		uint32_t q, d;
		meminfo(socket_set_udp(old, w, 0), &q, &d);
		*queued_at_close += q;
		*drops += d;
	}
	socket_set_close(old); /* the last descriptors of the retiring sockets */
	got += read_empty(socket_set_udp(s, 0, 0));
	CU_ASSERT_EQUAL(socket_set_steer(s, false, err, sizeof(err)), 0);
	socket_set_close(s);
	return BEFORE + AFTER - got;
}

/*
 * Steer, drain, close: nothing lost, and the kernel held nothing on the
 * retiring sockets when they closed. Drain and close without steering: the
 * datagrams the kernel queued on them after the drain die with them,
 * and the kernel counts them nowhere (its drop counters stay 0): the
 * queue it held at the close is the only witness.
 */
static void test_shrink_steering_order(void)
{
	uint32_t queued, drops;
	unsigned lost = shrink_run(true, &queued, &drops);
	CU_ASSERT_EQUAL(lost, 0);
	CU_ASSERT_EQUAL(queued, 0);
	CU_ASSERT_EQUAL(drops, 0);
	fprintf(stderr, "\n  steered: lost %u, queued at close %u octets, drops %u\n", lost, queued,
		drops);
	lost = shrink_run(false, &queued, &drops);
	/* about 3/4 of 200 go to the retiring sockets by hash */
	CU_ASSERT_TRUE(lost > 50);
	CU_ASSERT_TRUE(queued > 0);
	CU_ASSERT_EQUAL(drops, 0);
	fprintf(stderr, "  not steered: lost %u, queued at close %u octets, drops %u\n", lost,
		queued, drops);
}

/* Steering covers TCP: connections go to the kept listener's queue only. */
static void test_steer_tcp(void)
{
	listen_addr_t a;
	socket_set_t *old = NULL, *s = NULL;
	int64_t opened;
	char err[256] = "";
	open_adopt(2, 1, &a, &old, &s, &opened);
	CU_ASSERT_EQUAL_FATAL(socket_set_steer(s, true, err, sizeof(err)), 0);
	int clients[40];
	for (unsigned i = 0; i < 40; i++) {
		clients[i] = socket(AF_INET, SOCK_STREAM, 0);
		CU_ASSERT_EQUAL(connect(clients[i], (struct sockaddr *)&a.addr, a.addr_len), 0);
	}
	unsigned kept = 0, retiring = 0;
	int c;
	/* the listeners do not block: accept until the queue is empty */
	while ((c = accept(socket_set_tcp(s, 0, 0), NULL, NULL)) >= 0) {
		kept++;
		close(c);
	}
	while ((c = accept(socket_set_tcp(old, 1, 0), NULL, NULL)) >= 0) {
		retiring++;
		close(c);
	}
	CU_ASSERT_EQUAL(kept, 40);
	CU_ASSERT_EQUAL(retiring, 0);
	for (unsigned i = 0; i < 40; i++)
		close(clients[i]);
	socket_set_close(old);
	socket_set_close(s);
}

/*
 * TLS listeners (listen-tls): per worker and TLS address, after the
 * others, handed over and taken back in group order; a taker with more
 * workers joins the TLS groups after the given ones, one with fewer
 * counts the rest as retiring and steers away from them; a TLS address
 * the taker no longer has is closed, the others taken.
 */
static void test_tls_listeners(void)
{
	listen_addr_t plain = loopback_free(), tls = loopback_free(), tls2 = loopback_free();
	listen_addr_t both[2] = { tls, tls2 };
	socket_set_t *old = NULL, *s = NULL;
	char err[256] = "";
	int64_t open_before = fdbudget_count_open();
	CU_ASSERT_EQUAL_FATAL(socket_set_open(&plain, 1, both, 2, 2, SOCKET_MODE_REUSEPORT, &old,
					      err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL(socket_set_tls_addresses(old), 2);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before + 2 * (2 + 2));
	CU_ASSERT_STRING_EQUAL(socket_set_tls_address(old, 1)->text, tls2.text);
	socket_entry_t e;
	size_t n = 0;
	for (; socket_set_entry(old, n, &e); n++) {
		if (n < 4)
			continue;
		CU_ASSERT_EQUAL(e.kind, SOCKET_TLS);
		CU_ASSERT_EQUAL(e.address, (n - 4) / 2);
		CU_ASSERT_EQUAL(e.worker, (n - 4) % 2);
		CU_ASSERT_EQUAL(e.fd, socket_set_tls(old, e.worker, e.address));
		CU_ASSERT_STRING_EQUAL(e.addr->text, both[e.address].text);
		int listening = 0;
		socklen_t len = sizeof(listening);
		getsockopt(e.fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
		CU_ASSERT_EQUAL(listening, 1);
	}
	CU_ASSERT_EQUAL(n, 8);

	/* three workers, the first TLS address kept: its groups grow, the other's closed */
	socket_given_t given[16];
	n = hand_over(old, given, 16);
	CU_ASSERT_EQUAL_FATAL(socket_set_adopt(&plain, 1, &tls, 1, 3, SOCKET_MODE_REUSEPORT, given,
					       n, &s, err, sizeof(err)),
			      0);
	for (unsigned w = 0; w < 2; w++)
		CU_ASSERT_EQUAL(socket_inode(socket_set_tls(s, w, 0)),
				socket_inode(socket_set_tls(old, w, 0)));
	CU_ASSERT_TRUE(socket_set_tls(s, 2, 0) >= 0);
	CU_ASSERT_EQUAL(socket_set_retiring(s), 0);
	socket_set_close(s);

	/* one worker: one TLS listener of the two retires */
	n = hand_over(old, given, 16);
	CU_ASSERT_EQUAL_FATAL(socket_set_adopt(&plain, 1, &tls, 1, 1, SOCKET_MODE_REUSEPORT, given,
					       n, &s, err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL(socket_set_retiring(s), 3); /* UDP, TCP and TLS of worker 1 */
	CU_ASSERT_EQUAL(socket_set_steer(s, true, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(socket_set_steer(s, false, err, sizeof(err)), 0);
	socket_set_close(s);
	/* a given TLS socket said to be a UDP one: refused */
	n = hand_over(old, given, 16);
	given[n - 1].kind = SOCKET_UDP;
	CU_ASSERT_EQUAL(socket_set_adopt(&plain, 1, both, 2, 2, SOCKET_MODE_REUSEPORT, given, n, &s,
					 err, sizeof(err)),
			SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not of that type"));
	socket_set_close(old);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_reuseport_layout),
		UNIT_TEST(test_shared_layout),
		UNIT_TEST(test_busy_port_keeps_errno),
		UNIT_TEST(test_entries_in_group_order),
		UNIT_TEST(test_adopt_same_sockets),
		UNIT_TEST(test_adopt_grows),
		UNIT_TEST(test_adopt_shrinks),
		UNIT_TEST(test_adopt_refuses_mismatch),
		UNIT_TEST(test_adopt_grow_needs_uid),
		UNIT_TEST(test_shrink_steering_order),
		UNIT_TEST(test_steer_tcp),
		UNIT_TEST(test_tls_listeners),
		UNIT_END,
	};
	return unit_run(argc, argv, "socket", tests);
}
