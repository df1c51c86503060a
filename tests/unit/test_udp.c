/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The UDP path against a real socket: a worker with its receiver on
 * loopback answers bursts of queries (with and without a DNS cookie, rate
 * limiting on), and while it does, Shoal's code allocates nothing, frees
 * nothing and takes no lock on any thread (tests/unit/alloc_guard.c). A
 * stop while the receiver waits in recvmmsg ends it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/dns.h"
#include "server/conf/conf.h"
#include "server/net/socket.h"
#include "server/net/worker.h"
#include "server/query/responder.h"
#include "tests/unit/alloc_guard.h"
#include "tests/unit/loopback.h"
#include "unit.h"
#include "zone/load.h"
#include "zone/zonedb.h"

#define BURSTS 50
#define BURST  40

static conf_t cfg;
static zonedb_ref_t zones;

/* A query for www.example.com A with EDNS, and a client cookie when asked; returns its length. */
static size_t make_query(uint8_t *q, uint16_t id, int cookie)
{
	static const uint8_t head[] = { 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1 };
	static const uint8_t qname[] = "\3www\7example\3com";
	size_t n = 0;
	memcpy(q, head, sizeof(head));
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	n = sizeof(head);
	memcpy(q + n, qname, sizeof(qname)); /* with its root octet */
	n += sizeof(qname);
	static const uint8_t tail[] = { 0, 1, 0,  1, /* A IN */
					0, 0, 41, 4, 0xd0, 0, 0, 0, 0 };
	memcpy(q + n, tail, sizeof(tail));
	n += sizeof(tail);
	if (cookie) {
		/* RFC 7873 4: option 10, an 8-octet client cookie */
		static const uint8_t opt[] = { 0, 12, 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8 };
		memcpy(q + n - 2, opt, sizeof(opt));
		n += sizeof(opt) - 2;
	}
	return n;
}

/* Answers read from fd until `want` or a 5 s silence. */
static int read_answers(int fd, int want)
{
	uint8_t buf[2048];
	int got = 0;
	while (got < want && recv(fd, buf, sizeof(buf), 0) > 0)
		got++;
	return got;
}

static void test_udp_batch_allocates_nothing(void)
{
	listen_addr_t a = unit_loopback(0);
	char err[256] = "";
	socket_set_t *s = NULL;
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(&a, 1, NULL, 0, 1, SOCKET_MODE_REUSEPORT, &s, err, sizeof(err)), 0);
	struct sockaddr_in at;
	socklen_t at_len = sizeof(at);
	CU_ASSERT_EQUAL_FATAL(getsockname(socket_set_udp(s, 0, 0), (struct sockaddr *)&at, &at_len),
			      0);
	workers_t ws;
	int rc = workers_create(&ws, &cfg, &responder_zones, &zones, s, err, sizeof(err));
	if (rc == 0)
		rc = workers_start(&ws, err, sizeof(err));
	CU_ASSERT_EQUAL(rc, 0);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct timeval five = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &five, sizeof(five));
	CU_ASSERT_EQUAL(connect(fd, (struct sockaddr *)&at, sizeof(at)), 0);
	uint8_t q[128];
	/* warm up: the first answers may touch what is made once */
	for (int i = 0; rc == 0 && i < 20; i++) {
		size_t n = make_query(q, (uint16_t)i, i & 1);
		CU_ASSERT_EQUAL(send(fd, q, n, 0), (ssize_t)n);
		CU_ASSERT_EQUAL(read_answers(fd, 1), 1);
	}
	alloc_guard_begin();
	int answered = 0;
	for (int b = 0; rc == 0 && b < BURSTS; b++) {
		for (int i = 0; i < BURST; i++) {
			size_t n = make_query(q, (uint16_t)(b * BURST + i), i & 1);
			if (send(fd, q, n, 0) != (ssize_t)n)
				break;
		}
		answered += read_answers(fd, BURST);
	}
	alloc_guard_counts_t c = alloc_guard_end();
	CU_ASSERT_EQUAL(answered, rc == 0 ? BURSTS * BURST : 0);
	CU_ASSERT_EQUAL(c.allocations, 0);
	CU_ASSERT_EQUAL(c.frees, 0);
	CU_ASSERT_EQUAL(c.locks, 0);
	if (c.allocations || c.frees || c.locks)
		fprintf(stderr, "UDP batches: %zu allocation(s), %zu free(s), %zu lock(s)\n",
			c.allocations, c.frees, c.locks);
	close(fd);
	/* the control: the guard sees this code's frees on any thread (the stop) */
	alloc_guard_begin();
	workers_stop(&ws);
	workers_destroy(&ws);
	c = alloc_guard_end();
	CU_ASSERT(c.frees > 0);
	socket_set_close(s);
}

int main(int argc, char **argv)
{
	char zone[4096];
	unit_src_path(zone, sizeof(zone), "tests/unit/zones/example.zone");
	rcu_register_thread();
	conf_init(&cfg);
	cfg.threads = 1;
	cfg.rrl.rate = 100000; /* counted, never limited: the rate limiter's path runs */
	zone_spec_t spec = { .name = "example.com", .file = zone, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db = NULL;
	if (zonedb_build(&spec, 1, NULL, NULL, NULL, NULL, &db) != 0) {
		fprintf(stderr, "test zone does not load\n");
		return 1;
	}
	memset(&zones, 0, sizeof(zones));
	zonedb_publish(&zones, db);
	static const unit_test_t tests[] = {
		UNIT_TEST(test_udp_batch_allocates_nothing),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "udp", tests);
	zonedb_publish(&zones, NULL);
	conf_clear(&cfg);
	rcu_unregister_thread();
	return rc;
}
