/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/daemon/instance.c: the lock per address, and sockets found on the port. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/path.h"
#include "server/conf/conf.h"
#include "server/daemon/instance.h"
#include "unit.h"

/* Can a socket of `type` bind the wildcard address of `family` on port? */
static bool port_free(int family, int type, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		len = sizeof(*in6);
	}
	int fd = socket(family, type, 0);
	bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&ss, len) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * A port no socket of this machine has, UDP or TCP, IPv4 or IPv6. Taken
 * below the kernel's ephemeral range (32768 up): a port the kernel gave and
 * took back was once chosen here, and the many queries of tests running
 * beside this one, whose source ports come from that range, took it again.
 */
static uint16_t unused_port(void)
{
	static unsigned seed;
	if (!seed)
		seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	for (int tries = 0; tries < 1000; tries++) {
		uint16_t port = (uint16_t)(10000 + rand_r(&seed) % 22000);
		if (port_free(AF_INET, SOCK_DGRAM, port) && port_free(AF_INET, SOCK_STREAM, port) &&
		    port_free(AF_INET6, SOCK_DGRAM, port) && port_free(AF_INET6, SOCK_STREAM, port))
			return port;
	}
	return 0;
}

static listen_addr_t addr(const char *host, uint16_t port)
{
	char text[80];
	listen_addr_t a;
	snprintf(text, sizeof(text), "%s@%u", host, (unsigned)port);
	CU_ASSERT_EQUAL(conf_parse_listen(text, &a), 0);
	return a;
}

/* A socket of `type` bound to host@port with SO_REUSEPORT, as another server would hold it. */
static int hold(const char *host, uint16_t port, int type)
{
	listen_addr_t a = addr(host, port);
	int one = 1;
	int fd = socket(a.addr.ss_family, type, 0);
	CU_ASSERT_FATAL(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&a.addr, a.addr_len), 0);
	if (type == SOCK_STREAM)
		CU_ASSERT_EQUAL(listen(fd, 1), 0);
	return fd;
}

/* The claim refuses and its message names this very process. */
static void expect_refused(const listen_addr_t *a, const char *what)
{
	instance_t *in = NULL;
	char err[512] = "", pid[64];
	CU_ASSERT_EQUAL(instance_claim(a, 1, NULL, 0, INSTANCE_EXCLUSIVE, &in, err, sizeof(err)),
			SHOAL_EEXIST);
	CU_ASSERT_PTR_NULL(in);
	snprintf(pid, sizeof(pid), "pid %ld (test_instance)", (long)getpid());
	CU_ASSERT_PTR_NOT_NULL(strstr(err, pid));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, what));
	if (!strstr(err, pid) || !strstr(err, what))
		fprintf(stderr, "  refusal: %s\n", err);
}

static void test_lock_is_exclusive(void)
{
	uint16_t port = unused_port();
	listen_addr_t a = addr("127.0.0.1", port);
	instance_t *first = NULL, *again = NULL;
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(
		instance_claim(&a, 1, NULL, 0, INSTANCE_EXCLUSIVE, &first, err, sizeof(err)), 0);
	/* a second claim on the address: the first holder is named */
	expect_refused(&a, "another shoald");
	/* written another way, the same address is the same lock */
	listen_addr_t v6 = addr("::1", port), v6_long = addr("0:0:0:0:0:0:0:1", port);
	instance_t *v6_claim = NULL;
	CU_ASSERT_EQUAL(
		instance_claim(&v6, 1, NULL, 0, INSTANCE_EXCLUSIVE, &v6_claim, err, sizeof(err)),
		0);
	expect_refused(&v6_long, "another shoald");
	instance_release(v6_claim);
	/* another address or port is another lock */
	listen_addr_t other = addr("127.0.0.2", port);
	CU_ASSERT_EQUAL(
		instance_claim(&other, 1, NULL, 0, INSTANCE_EXCLUSIVE, &again, err, sizeof(err)),
		0);
	instance_release(again);
	/* released, the address may be claimed again: nothing stale is left */
	instance_release(first);
	CU_ASSERT_EQUAL(
		instance_claim(&a, 1, NULL, 0, INSTANCE_EXCLUSIVE, &again, err, sizeof(err)), 0);
	instance_release(again);
}

/*
 * The lock has an owner: the abstract socket name that was the lock
 * before, which anyone could bind first, no longer keeps a server from its
 * address; the lock's file is gone once released.
 */
static void test_abstract_name_is_not_the_lock(void)
{
	uint16_t port = unused_port();
	char name[80];
	int n = snprintf(name, sizeof(name), "shoald.instance:127.0.0.1@%u", (unsigned)port);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	memcpy(sun.sun_path + 1, name, (size_t)n);
	int squat = socket(AF_UNIX, SOCK_DGRAM, 0);
	CU_ASSERT_EQUAL_FATAL(
		bind(squat, (struct sockaddr *)&sun,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)),
		0);
	listen_addr_t a = addr("127.0.0.1", port);
	instance_t *in = NULL;
	char err[512] = "";
	CU_ASSERT_EQUAL(instance_claim(&a, 1, NULL, 0, INSTANCE_EXCLUSIVE, &in, err, sizeof(err)),
			0);
	if (err[0])
		fprintf(stderr, "  refusal: %s\n", err);
	/* the lock file is in this user's lock folder while held, and gone after */
	char folder[256], lock[512];
	CU_ASSERT_EQUAL_FATAL(path_lock_folder(folder, sizeof(folder), err, sizeof(err)), 0);
	struct stat st;
	CU_ASSERT_EQUAL_FATAL(stat("/proc/self/ns/net", &st), 0);
	snprintf(lock, sizeof(lock), "%s/shoald.instance.%lu.127.0.0.1@%u", folder,
		 (unsigned long)st.st_ino, (unsigned)port);
	CU_ASSERT_EQUAL(access(lock, F_OK), 0);
	instance_release(in);
	CU_ASSERT_EQUAL(access(lock, F_OK), -1);
	close(squat);
}

static void test_sockets_on_the_port(void)
{
	uint16_t port = unused_port();
	/* a UDP socket on the very address */
	int fd = hold("127.0.0.1", port, SOCK_DGRAM);
	listen_addr_t a = addr("127.0.0.1", port);
	expect_refused(&a, "the UDP port is taken by a socket on 127.0.0.1");
	close(fd);
	/* a TCP listener on the wildcard takes every address of the family */
	fd = hold("0.0.0.0", port, SOCK_STREAM);
	expect_refused(&a, "the TCP port is taken by a socket on 0.0.0.0");
	close(fd);
	/* and a wildcard claim overlaps a socket on one address */
	fd = hold("127.0.0.1", port, SOCK_DGRAM);
	listen_addr_t any = addr("0.0.0.0", port);
	expect_refused(&any, "UDP port is taken");
	/* no overlap: another address, another family */
	instance_t *in = NULL;
	char err[512] = "";
	listen_addr_t other = addr("127.0.0.2", port);
	CU_ASSERT_EQUAL(
		instance_claim(&other, 1, NULL, 0, INSTANCE_EXCLUSIVE, &in, err, sizeof(err)), 0);
	instance_release(in);
	listen_addr_t v6 = addr("::1", port);
	int rc = instance_claim(&v6, 1, NULL, 0, INSTANCE_EXCLUSIVE, &in, err, sizeof(err));
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0)
		instance_release(in);
	/* a takeover or --share-port joins the port on purpose: nothing is refused */
	in = NULL;
	CU_ASSERT_EQUAL(instance_claim(&a, 1, NULL, 0, INSTANCE_SHARE, &in, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(in);
	instance_release(in);
	close(fd);
	/* the port free again */
	CU_ASSERT_EQUAL(instance_claim(&a, 1, NULL, 0, INSTANCE_EXCLUSIVE, &in, err, sizeof(err)),
			0);
	instance_release(in);
}

/* A connected UDP socket on the port gets only its peer's datagrams: not a server. */
static void test_connected_udp_is_not_a_server(void)
{
	uint16_t port = unused_port();
	int fd = hold("127.0.0.1", port, SOCK_DGRAM);
	listen_addr_t peer = addr("127.0.0.1", 9);
	CU_ASSERT_EQUAL(connect(fd, (struct sockaddr *)&peer.addr, peer.addr_len), 0);
	listen_addr_t a = addr("127.0.0.1", port);
	instance_t *in = NULL;
	char err[512] = "";
	CU_ASSERT_EQUAL(instance_claim(&a, 1, NULL, 0, INSTANCE_EXCLUSIVE, &in, err, sizeof(err)),
			0);
	instance_release(in);
	close(fd);
}

static void test_find_holder(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	char link[64], target[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	CU_ASSERT_FATAL(n > 0);
	target[n] = '\0';
	unsigned long inode = 0;
	CU_ASSERT_EQUAL(sscanf(target, "socket:[%lu]", &inode), 1);
	instance_holder_t h;
	instance_find_holder(inode, &h);
	CU_ASSERT_EQUAL(h.pid, getpid());
	CU_ASSERT_STRING_EQUAL(h.comm, "test_instance");
	close(fd);
	instance_find_holder(inode, &h); /* closed: nobody has it */
	CU_ASSERT_EQUAL(h.pid, 0);
	CU_ASSERT_STRING_EQUAL(h.comm, "");
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_lock_is_exclusive),   UNIT_TEST(test_abstract_name_is_not_the_lock),
		UNIT_TEST(test_sockets_on_the_port), UNIT_TEST(test_connected_udp_is_not_a_server),
		UNIT_TEST(test_find_holder),         UNIT_END,
	};
	return unit_run(argc, argv, "instance", tests);
}
