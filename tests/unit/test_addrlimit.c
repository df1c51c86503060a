/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/net/addrlimit.c: the bound per address, what counts as one address. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <string.h>

#include "proto/error.h"
#include "server/net/addrlimit.h"
#include "tests/unit/unit.h"

static struct sockaddr_storage addr(const char *text)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
	} else {
		CU_ASSERT_EQUAL(inet_pton(AF_INET6, text, &v6->sin6_addr), 1);
		v6->sin6_family = AF_INET6;
	}
	return ss;
}

#define SA(ss) ((const struct sockaddr *)&(ss))

/* limit connections from one address, not one more; one given back makes room for one. */
static void test_bound(void)
{
	addrlimit_t *a = NULL;
	CU_ASSERT_EQUAL_FATAL(addrlimit_new(3, &a), 0);
	struct sockaddr_storage one = addr("192.0.2.1"), other = addr("192.0.2.2");
	for (int i = 0; i < 3; i++)
		CU_ASSERT(addrlimit_take(a, SA(one)));
	CU_ASSERT_FALSE(addrlimit_take(a, SA(one)));
	CU_ASSERT_FALSE(addrlimit_take(a, SA(one))); /* a refusal counts nothing */
	CU_ASSERT(addrlimit_take(a, SA(other)));     /* another address is not held up */
	addrlimit_give(a, SA(one));
	CU_ASSERT(addrlimit_take(a, SA(one)));
	CU_ASSERT_FALSE(addrlimit_take(a, SA(one)));
	addrlimit_free(a);

	/* 0 is no limit: no table at all */
	CU_ASSERT_EQUAL(addrlimit_new(0, &a), 0);
	CU_ASSERT_PTR_NULL(a);
}

/*
 * An IPv6 client counts by its /64, so new interface identifiers do not
 * step around the limit; an IPv4-mapped address counts as its IPv4 address.
 */
static void test_what_is_one_address(void)
{
	addrlimit_t *a = NULL;
	CU_ASSERT_EQUAL_FATAL(addrlimit_new(2, &a), 0);
	struct sockaddr_storage x1 = addr("2001:db8:1:2::1"), x2 = addr("2001:db8:1:2:ffff::9");
	struct sockaddr_storage y = addr("2001:db8:1:3::1");
	CU_ASSERT(addrlimit_take(a, SA(x1)));
	CU_ASSERT(addrlimit_take(a, SA(x2)));
	CU_ASSERT_FALSE(addrlimit_take(a, SA(x1)));
	CU_ASSERT(addrlimit_take(a, SA(y)));

	struct sockaddr_storage v4 = addr("198.51.100.7"), mapped = addr("::ffff:198.51.100.7");
	CU_ASSERT(addrlimit_take(a, SA(v4)));
	CU_ASSERT(addrlimit_take(a, SA(mapped)));
	CU_ASSERT_FALSE(addrlimit_take(a, SA(v4)));
	addrlimit_give(a, SA(mapped));
	CU_ASSERT(addrlimit_take(a, SA(v4)));

	/* not an internet address: not counted, never refused */
	struct sockaddr_storage unix_peer;
	memset(&unix_peer, 0, sizeof(unix_peer));
	unix_peer.ss_family = AF_UNIX;
	for (int i = 0; i < 5; i++)
		CU_ASSERT(addrlimit_take(a, SA(unix_peer)));
	addrlimit_free(a);
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0)
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_bound),
		UNIT_TEST(test_what_is_one_address),
		UNIT_END,
	};
	return unit_run(argc, argv, "addrlimit", tests);
}
