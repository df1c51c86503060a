/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/query/rrl.c: prefixes, the counting arithmetic, classes, exemptions,
 * threads. */
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "proto/error.h"
#include "server/query/rrl.h"
#include "tests/unit/unit.h"

static const uint8_t ip1[4] = { 192, 0, 2, 1 };
static const uint8_t ip1b[4] = { 192, 0, 2, 200 }; /* the same /24 */
static const uint8_t ip2[4] = { 198, 51, 100, 1 };
static const uint8_t ip6a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t ip6b[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0xff, 9, 9, 9, 9, 9, 9, 9, 9 };
/* ip6b's /48 is ip6a's, its /56 is not */
static const uint8_t ip6c[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 1, 0x01, 0, 0, 0, 0, 0, 0, 0, 1 };

/* An answer of kind for name (text of labels "www.example" made wire) and qtype. */
static answer_info_t answer(enum answer_kind kind, const char *name, uint16_t qtype)
{
	answer_info_t a;
	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.qtype = qtype;
	size_t n = 0;
	for (const char *p = name; *p;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		a.name[n++] = (uint8_t)l;
		memcpy(a.name + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	a.name[n++] = 0;
	a.name_len = (uint8_t)n;
	return a;
}

static rrl_t *make(uint32_t rate, uint32_t slip)
{
	rrl_limits_t l = RRL_LIMITS_DEFAULT;
	l.rate = rate;
	l.slip = slip;
	l.size = 4096;
	rrl_t *r = NULL;
	CU_ASSERT_EQUAL_FATAL(rrl_new(&l, &r), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	return r;
}

/* n answers at second now: how many were sent, slipped and dropped. */
typedef struct tally {
	unsigned send, slip, drop;
} tally_t;

static tally_t run(rrl_t *r, rrl_worker_t *wk, const uint8_t *ip, size_t ip_len,
		   const answer_info_t *a, uint32_t now, unsigned n)
{
	tally_t t = { 0 };
	for (unsigned i = 0; i < n; i++) {
		switch (rrl_check(r, wk, ip, ip_len, a, now)) {
		case RRL_SEND:
			t.send++;
			break;
		case RRL_SLIP:
			t.slip++;
			break;
		case RRL_DROP:
			t.drop++;
			break;
		}
	}
	return t;
}

static void test_prefix(void)
{
	addr_prefix_t p;
	CU_ASSERT_EQUAL(addr_prefix_parse("192.0.2.77/24", &p), 0);
	CU_ASSERT_EQUAL(p.len, 4);
	CU_ASSERT_EQUAL(p.bits, 24);
	CU_ASSERT_EQUAL(p.addr[3], 0); /* cleared past the prefix */
	CU_ASSERT(addr_prefix_match(&p, ip1, 4));
	CU_ASSERT(addr_prefix_match(&p, ip1b, 4));
	CU_ASSERT_FALSE(addr_prefix_match(&p, ip2, 4));
	CU_ASSERT_FALSE(addr_prefix_match(&p, ip6a, 16));
	/* an IPv4-mapped IPv6 address is its IPv4 address */
	uint8_t mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 9 };
	CU_ASSERT(addr_prefix_match(&p, mapped, 16));
	CU_ASSERT_EQUAL(addr_prefix_parse("192.0.2.1", &p), 0);
	CU_ASSERT_EQUAL(p.bits, 32);
	CU_ASSERT(addr_prefix_match(&p, ip1, 4));
	CU_ASSERT_FALSE(addr_prefix_match(&p, ip1b, 4));
	CU_ASSERT_EQUAL(addr_prefix_parse("2001:db8::/45", &p), 0);
	CU_ASSERT(addr_prefix_match(&p, ip6a, 16));
	CU_ASSERT(addr_prefix_match(&p, ip6c, 16));
	CU_ASSERT_EQUAL(addr_prefix_parse("0.0.0.0/0", &p), 0);
	CU_ASSERT(addr_prefix_match(&p, ip2, 4));
	/* written as IPv4-mapped: the IPv4 prefix it maps, as peers are seen */
	CU_ASSERT_EQUAL(addr_prefix_parse("::ffff:192.0.2.0/120", &p), 0);
	CU_ASSERT_EQUAL(p.len, 4);
	CU_ASSERT_EQUAL(p.bits, 24);
	CU_ASSERT(addr_prefix_match(&p, ip1b, 4));
	CU_ASSERT(addr_prefix_match(&p, mapped, 16));
	CU_ASSERT_FALSE(addr_prefix_match(&p, ip2, 4));
	CU_ASSERT_EQUAL(addr_prefix_parse("::ffff:192.0.2.1", &p), 0);
	CU_ASSERT(addr_prefix_match(&p, ip1, 4));
	CU_ASSERT_FALSE(addr_prefix_match(&p, ip1b, 4));
	static const char *const bad[] = { "",        "/24",        "192.0.2.0/33", "192.0.2/24",
					   "::/129",  "192.0.2.0/", "192.0.2.0/-1", "192.0.2.0/2x",
					   "example", "1.2.3.4/+8" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(addr_prefix_parse(bad[i], &p), SHOAL_EINVAL);
}

/*
 * The arithmetic the integration test relies on: a class may have `rate`
 * answers in each second of the clock; of the answers over it every
 * slip-th is sent truncated and the others are dropped. 1000 answers in
 * one second at rate 10 and slip 2: 10 sent, 495 slipped, 495 dropped;
 * the next second 10 more are sent.
 */
static void test_counting(void)
{
	rrl_t *r = make(10, 2);
	rrl_worker_t wk = { 0 };
	answer_info_t a = answer(ANSWER_POSITIVE, "www.example", 1);
	tally_t t = run(r, &wk, ip1, 4, &a, 1000, 1000);
	CU_ASSERT_EQUAL(t.send, 10);
	CU_ASSERT_EQUAL(t.slip, 495);
	CU_ASSERT_EQUAL(t.drop, 495);
	t = run(r, &wk, ip1, 4, &a, 1001, 20);
	CU_ASSERT_EQUAL(t.send, 10);
	CU_ASSERT_EQUAL(t.slip + t.drop, 10);
	/* the clock's 16 low bits wrap: still a new second */
	t = run(r, &wk, ip1, 4, &a, 65535, 15);
	CU_ASSERT_EQUAL(t.send, 10);
	t = run(r, &wk, ip1, 4, &a, 65536, 15);
	CU_ASSERT_EQUAL(t.send, 10);
	/* a worker whose clock reading is a second behind counts into the newer window */
	t = run(r, &wk, ip1, 4, &a, 65535, 5);
	CU_ASSERT_EQUAL(t.send, 0);
	/* a counter left alone for hours starts afresh, whatever its 16 bits say */
	t = run(r, &wk, ip1, 4, &a, 65536 + 40000, 15);
	CU_ASSERT_EQUAL(t.send, 10);
	rrl_free(r);

	/* slip 1: every limited answer truncated; slip 0: all dropped */
	r = make(10, 1);
	t = run(r, &wk, ip1, 4, &a, 7, 100);
	CU_ASSERT(t.send == 10 && t.slip == 90 && t.drop == 0);
	rrl_free(r);
	r = make(10, 0);
	t = run(r, &wk, ip1, 4, &a, 7, 100);
	CU_ASSERT(t.send == 10 && t.slip == 0 && t.drop == 90);
	rrl_free(r);
}

/* A class is the network, the kind, the name and (but for NXDOMAIN and errors) the type. */
static void test_classes(void)
{
	rrl_t *r = make(5, 2);
	rrl_worker_t wk = { 0 };
	answer_info_t www = answer(ANSWER_POSITIVE, "www.example", 1);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &www, 50, 100).send, 5);
	/* the same /24: the same class, already over */
	CU_ASSERT_EQUAL(run(r, &wk, ip1b, 4, &www, 50, 10).send, 0);
	/* another network, another name, another type, another kind: each its own */
	CU_ASSERT_EQUAL(run(r, &wk, ip2, 4, &www, 50, 10).send, 5);
	answer_info_t ftp = answer(ANSWER_POSITIVE, "ftp.example", 1);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &ftp, 50, 10).send, 5);
	answer_info_t aaaa = answer(ANSWER_POSITIVE, "www.example", 28);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &aaaa, 50, 10).send, 5);
	answer_info_t nodata = answer(ANSWER_NODATA, "www.example", 1);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &nodata, 50, 10).send, 5);
	/* NXDOMAIN: one class for every type asked */
	answer_info_t nx1 = answer(ANSWER_NXDOMAIN, "example", 1);
	answer_info_t nx2 = answer(ANSWER_NXDOMAIN, "example", 16);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &nx1, 50, 3).send, 3);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &nx2, 50, 10).send, 2);
	/* IPv6: the /56 */
	CU_ASSERT_EQUAL(run(r, &wk, ip6a, 16, &www, 50, 10).send, 5);
	CU_ASSERT_EQUAL(run(r, &wk, ip6b, 16, &www, 50, 10).send, 0);
	CU_ASSERT_EQUAL(run(r, &wk, ip6c, 16, &www, 50, 10).send, 5);
	rrl_free(r);
}

/* Exempt networks and answers to a valid cookie are neither limited nor counted. */
static void test_exempt_and_cookie(void)
{
	rrl_limits_t l = RRL_LIMITS_DEFAULT;
	l.rate = 5;
	l.size = 1024;
	CU_ASSERT_EQUAL(addr_prefix_parse("192.0.2.0/25", &l.exempt.items[0]), 0);
	l.exempt.count = 1;
	rrl_t *r = NULL;
	CU_ASSERT_EQUAL_FATAL(rrl_new(&l, &r), 0);
	rrl_worker_t wk = { 0 };
	answer_info_t a = answer(ANSWER_POSITIVE, "www.example", 1);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &a, 9, 100).send, 100);
	/* ip1b is past the /25: limited, and ip1's answers did not count for it */
	CU_ASSERT_EQUAL(run(r, &wk, ip1b, 4, &a, 9, 100).send, 5);
	answer_info_t proven = a;
	proven.cookie = ANSWER_COOKIE_VALID;
	CU_ASSERT_EQUAL(run(r, &wk, ip1b, 4, &proven, 9, 100).send, 100);
	/* a client cookie alone proves nothing */
	answer_info_t client = a;
	client.cookie = ANSWER_COOKIE_CLIENT;
	CU_ASSERT_EQUAL(run(r, &wk, ip2, 4, &client, 9, 100).send, 5);
	CU_ASSERT_EQUAL(run(r, &wk, ip2, 4, &proven, 9, 100).send, 100);
	rrl_free(r);
}

/* rate-limit-nxdomain and rate-limit-errors: their own rates, 0 not limited, default as rate. */
static void test_kind_rates(void)
{
	rrl_limits_t l = RRL_LIMITS_DEFAULT;
	l.rate = 5;
	l.nxdomain_rate = 0;
	l.error_rate = 2;
	l.size = 1024;
	rrl_t *r = NULL;
	CU_ASSERT_EQUAL_FATAL(rrl_new(&l, &r), 0);
	rrl_worker_t wk = { 0 };
	answer_info_t nx = answer(ANSWER_NXDOMAIN, "example", 1);
	answer_info_t err = answer(ANSWER_ERROR, "", 0);
	err.name_len = 0;
	answer_info_t ref = answer(ANSWER_REFERRAL, "sub.example", 1);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &nx, 3, 100).send, 100);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &err, 3, 100).send, 2);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &ref, 3, 100).send, 5);
	rrl_free(r);
	l.nxdomain_rate = l.error_rate = RRL_RATE_AS_RATE;
	CU_ASSERT_EQUAL_FATAL(rrl_new(&l, &r), 0);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &nx, 3, 100).send, 5);
	CU_ASSERT_EQUAL(run(r, &wk, ip1, 4, &err, 3, 100).send, 5);
	rrl_free(r);
}

/*
 * One log line when a class starts being limited and one when it is next
 * answered after a whole second under the limit; at most
 * RRL_LOG_PER_SECOND per worker and second, the rest counted.
 */
/* Lines the worker logged in second now. */
static unsigned lines(const rrl_worker_t *wk, uint32_t now)
{
	return wk->log_second == now ? wk->log_lines : 0;
}

static void test_log_lines(void)
{
	rrl_t *r = make(5, 2);
	rrl_worker_t wk = { 0 };
	answer_info_t a = answer(ANSWER_POSITIVE, "www.example", 1);
	run(r, &wk, ip1, 4, &a, 100, 50);
	CU_ASSERT_EQUAL(lines(&wk, 100), 1); /* started */
	run(r, &wk, ip1, 4, &a, 101, 50);
	CU_ASSERT_EQUAL(lines(&wk, 101), 0); /* still limited: nothing new */
	run(r, &wk, ip1, 4, &a, 102, 3);
	CU_ASSERT_EQUAL(lines(&wk, 102), 0);
	run(r, &wk, ip1, 4, &a, 103, 1);
	CU_ASSERT_EQUAL(lines(&wk, 103), 1); /* a whole second under: stopped */
	run(r, &wk, ip1, 4, &a, 104, 6);
	CU_ASSERT_EQUAL(lines(&wk, 104), 1); /* started again */
	run(r, &wk, ip1, 4, &a, 110, 1);
	CU_ASSERT_EQUAL(lines(&wk, 110), 1); /* silent seconds between: stopped */
	/* 30 classes start in one second: 10 lines, 20 left out */
	for (unsigned i = 0; i < 30; i++) {
		uint8_t ip[4] = { 10, (uint8_t)i, 0, 1 };
		run(r, &wk, ip, 4, &a, 200, 6);
	}
	CU_ASSERT_EQUAL(lines(&wk, 200), RRL_LOG_PER_SECOND);
	CU_ASSERT_EQUAL(wk.log_suppressed, 30 - RRL_LOG_PER_SECOND);
	rrl_free(r);
}

static void test_limits_checked(void)
{
	rrl_limits_t l = RRL_LIMITS_DEFAULT;
	rrl_t *r = (rrl_t *)&l;
	CU_ASSERT_EQUAL(rrl_new(&l, &r), 0); /* rate 0: off */
	CU_ASSERT_PTR_NULL(r);
	l.rate = 10;
	l.size = 10;
	CU_ASSERT_EQUAL(rrl_new(&l, &r), SHOAL_EINVAL);
	l.size = 1u << 20;
	l.ipv4_prefix = 33;
	CU_ASSERT_EQUAL(rrl_new(&l, &r), SHOAL_EINVAL);
	l.ipv4_prefix = 24;
	l.ipv6_prefix = 129;
	CU_ASSERT_EQUAL(rrl_new(&l, &r), SHOAL_EINVAL);
	l.ipv6_prefix = 56;
	CU_ASSERT_EQUAL(rrl_new(&l, &r), 0);
	rrl_free(r);
	rrl_free(NULL);
}

/* Many classes in a small table: counters are taken over, nothing breaks. */
static void test_takeover(void)
{
	rrl_t *r = make(3, 2);
	rrl_worker_t wk = { 0 };
	answer_info_t a = answer(ANSWER_POSITIVE, "www.example", 1);
	unsigned sent = 0;
	for (unsigned i = 0; i < 100000; i++) {
		uint8_t ip[4] = { 10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), 0 };
		a.qtype = (uint16_t)i;
		sent += rrl_check(r, &wk, ip, 4, &a, 5) == RRL_SEND;
	}
	CU_ASSERT_EQUAL(sent, 100000); /* each class once: none over its limit */
	rrl_free(r);
}

/* Workers at once on one class: compare-and-swap loses no count. */
#define THREADS     4
#define PER_THREAD  20000
#define SHARED_RATE 5000

static rrl_t *shared;
static unsigned sent_by[THREADS];

static void *hammer(void *arg)
{
	unsigned i = (unsigned)(size_t)arg;
	rrl_worker_t wk = { 0 };
	answer_info_t a = answer(ANSWER_POSITIVE, "www.example", 1);
	sent_by[i] = run(shared, &wk, ip1, 4, &a, 77, PER_THREAD).send;
	return NULL;
}

static void test_threads(void)
{
	shared = make(SHARED_RATE, 2);
	pthread_t t[THREADS];
	for (size_t i = 0; i < THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, hammer, (void *)i), 0);
	unsigned total = 0;
	for (size_t i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		total += sent_by[i];
	}
	/*
	 * Exactly the rate, unless a counter was so contended that an answer
	 * went out after CAS_TRIES (then a few more): never fewer.
	 */
	CU_ASSERT(total >= SHARED_RATE && total <= SHARED_RATE + THREADS * PER_THREAD / 100);
	rrl_free(shared);
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0)
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_prefix),         UNIT_TEST(test_counting),
		UNIT_TEST(test_classes),        UNIT_TEST(test_exempt_and_cookie),
		UNIT_TEST(test_kind_rates),     UNIT_TEST(test_log_lines),
		UNIT_TEST(test_limits_checked), UNIT_TEST(test_takeover),
		UNIT_TEST(test_threads),        UNIT_END,
	};
	return unit_run(argc, argv, "rrl", tests);
}
