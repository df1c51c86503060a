/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/daemon/fdbudget.c: sharing RLIMIT_NOFILE out among TCP connections. */
#include "config.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/conf/conf.h"
#include "server/daemon/fdbudget.h"
#include "unit.h"

/* A tight limit: RLIMIT_NOFILE 128, 2 threads, one address, a control socket. */
static void test_small_limit(void)
{
	fdbudget_in_t in = { .limit = 160,
			     .open = 5,
			     .threads = 2,
			     .addresses = 1,
			     .control = true,
			     .max_connections = 256,
			     .transfers_in = 10 };
	fdbudget_t b;
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), 0);
	/* 2 UDP, 2 listeners, 2 held, 2 x 5 + 7 loop, 2 + 8 + 1 control, 32 + 10 requests (NOTIFY
	 * out, refreshes), 32 reserve */
	CU_ASSERT_EQUAL(b.fixed, 5 + 2 + 2 + 2 + 17 + 11 + 42 + 32);
	CU_ASSERT_EQUAL(b.per_worker, (160 - b.fixed) / 2);
	CU_ASSERT_TRUE(b.fixed + 2 * b.per_worker <= 160);
}

/*
 * listen-tls: its listeners (and one held each) count first, and the rest
 * is shared between each worker's TCP and TLS servers.
 */
static void test_tls_servers(void)
{
	fdbudget_in_t in = { .limit = 160,
			     .open = 5,
			     .threads = 2,
			     .addresses = 1,
			     .tls_addresses = 1,
			     .control = true,
			     .max_connections = 256,
			     .transfers_in = 10 };
	fdbudget_t b;
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), 0);
	/* as test_small_limit, with 2 TLS listeners and 2 held more */
	CU_ASSERT_EQUAL(b.fixed, 5 + 2 + 4 + 4 + 17 + 11 + 42 + 32);
	CU_ASSERT_EQUAL(b.per_worker, (160 - b.fixed) / 4);
	CU_ASSERT_TRUE(b.fixed + 2 * 2 * b.per_worker <= 160);
}

/* Debian's default soft limit with 4 CPUs and two addresses: 256 each cannot fit. */
static void test_default_soft_limit(void)
{
	fdbudget_in_t in = {
		.limit = 1024, .open = 4, .threads = 4, .addresses = 2, .max_connections = 256
	};
	fdbudget_t b;
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), 0);
	CU_ASSERT_TRUE(b.per_worker < 256);
	CU_ASSERT_TRUE(b.fixed + 4 * b.per_worker <= 1024);
	in.limit = 524288; /* systemd's default hard limit */
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), 0);
	CU_ASSERT_EQUAL(b.per_worker, 256); /* the configured bound */
}

static void test_cannot_fit(void)
{
	fdbudget_in_t in = {
		.limit = 40, .open = 4, .threads = 8, .addresses = 1, .max_connections = 256
	};
	fdbudget_t b;
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), SHOAL_ECONFIG);
	CU_ASSERT_EQUAL(b.per_worker_room, 0);
	/* room for 5 per worker: too few for 256, enough for an explicit 4 */
	in.limit = 0;
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), SHOAL_ECONFIG);
	in.limit = b.fixed + 8 * 5;
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), SHOAL_ECONFIG);
	in.max_connections = 4;
	CU_ASSERT_EQUAL(fdbudget_plan(&in, &b), 0);
	CU_ASSERT_EQUAL(b.per_worker, 4);
}

/* Whatever the input, an accepted plan fits the limit and the configured bound. */
static void test_plan_always_fits(void)
{
	srand(18);
	for (int i = 0; i < 100000; i++) {
		fdbudget_in_t in = {
			.limit = (uint64_t)(rand() % 70000),
			.open = (uint64_t)(rand() % 100),
			.threads = 1 + (unsigned)(rand() % CONF_THREADS_MAX),
			.addresses = 1 + (size_t)(rand() % CONF_LISTEN_MAX),
			.shared_udp = rand() % 2,
			.control = rand() % 2,
			.max_connections = 1 + (uint32_t)(rand() % 65536),
		};
		fdbudget_t b;
		if (fdbudget_plan(&in, &b) != 0)
			continue;
		if (b.fixed + (uint64_t)in.threads * b.per_worker > in.limit ||
		    b.per_worker > in.max_connections || b.per_worker == 0) {
			CU_FAIL("a plan that does not fit");
			return;
		}
	}
	CU_PASS("plans fit");
}

static void test_raise_and_count(void)
{
	struct rlimit old, rl;
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &old), 0);
	if (old.rlim_max > 64) {
		rl = old;
		rl.rlim_cur = 64;
		CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	uint64_t before, now;
	CU_ASSERT_EQUAL(fdbudget_raise(&before, &now), 0);
	CU_ASSERT_EQUAL(now, old.rlim_max);
	CU_ASSERT_TRUE(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur == rl.rlim_max);
	setrlimit(RLIMIT_NOFILE, &old);
	int64_t n = fdbudget_count_open();
	CU_ASSERT_TRUE(n >= 3);
	int fd = dup(0);
	CU_ASSERT_EQUAL(fdbudget_count_open(), n + 1);
	close(fd);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_small_limit),
		UNIT_TEST(test_tls_servers),
		UNIT_TEST(test_default_soft_limit),
		UNIT_TEST(test_cannot_fit),
		UNIT_TEST(test_plan_always_fits),
		UNIT_TEST(test_raise_and_count),
		UNIT_END,
	};
	return unit_run(argc, argv, "fdbudget", tests);
}
