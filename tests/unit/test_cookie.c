/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/cookie.c: RFC 9018 test vectors, the time window, secrets, lengths. */
#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "proto/cookie.h"
#include "proto/error.h"
#include "tests/unit/unit.h"

/* Decode hex into out; returns the octet count. */
static size_t unhex(uint8_t *out, size_t cap, const char *hex)
{
	size_t n = 0;
	if (sodium_hex2bin(out, cap, hex, strlen(hex), NULL, &n, NULL) != 0)
		return 0;
	return n;
}

static const uint8_t ip_a1[4] = { 198, 51, 100, 100 };
static const uint8_t ip_a3[4] = { 203, 0, 113, 203 };
/* 2001:db8:220:1:59de:d0f4:8769:82b8 */
static const uint8_t ip_a4[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x02, 0x20, 0x00, 0x01,
				   0x59, 0xde, 0xd0, 0xf4, 0x87, 0x69, 0x82, 0xb8 };

/* Parse a COOKIE option given in hex into c, over storage buf. */
static void option(cookie_t *c, uint8_t *buf, const char *hex)
{
	size_t n = unhex(buf, 40, hex);
	CU_ASSERT_EQUAL_FATAL(cookie_parse(c, buf, n), 0);
}

/* cookie_make's answer for client at ip and now under secret equals want (hex). */
static void assert_made(const uint8_t *client, const uint8_t *ip, size_t ip_len, uint32_t now,
			const uint8_t *secret, const char *want)
{
	uint8_t server[COOKIE_SERVER_LEN], expect[COOKIE_SERVER_LEN];
	CU_ASSERT_EQUAL(unhex(expect, sizeof(expect), want), COOKIE_SERVER_LEN);
	CU_ASSERT_EQUAL(cookie_make(server, client, ip, ip_len, now, secret), 0);
	CU_ASSERT_EQUAL(memcmp(server, expect, COOKIE_SERVER_LEN), 0);
}

/* RFC 9018 Appendix A, each exchange: what the server finds, and the cookie it sends back. */
static void test_rfc9018_vectors(void)
{
	cookie_secrets_t s = { .has_staging = false };
	uint8_t buf[40];
	cookie_t c;
	CU_ASSERT_EQUAL(unhex(s.current, 16, "e5e973e5a6b2a43f48e7dc849e37bfcf"), 16);

	/* A.1: a client cookie alone gets a server cookie */
	option(&c, buf, "2464c4abcf10c957");
	CU_ASSERT_PTR_NULL(c.server);
	CU_ASSERT_EQUAL(cookie_check(&c, ip_a1, 4, 1559731985, &s), COOKIE_INVALID);
	assert_made(c.client, ip_a1, 4, 1559731985, s.current, "010000005cf79f111f8130c3eee29480");

	/* A.2: 40 minutes later that cookie is still valid, and renewed */
	option(&c, buf, "2464c4abcf10c957010000005cf79f111f8130c3eee29480");
	CU_ASSERT_EQUAL(cookie_check(&c, ip_a1, 4, 1559734385, &s), COOKIE_RENEW);
	assert_made(c.client, ip_a1, 4, 1559734385, s.current, "010000005cf7a871d4a564a1442aca77");

	/*
	 * A.3: a cookie another server made with Reserved octets set: the hash
	 * covers them as they came. It was made at 1559727985; the example's
	 * answer comes 1 h 52 min later, past the hour, so then it is expired
	 * and the client gets a fresh one.
	 */
	option(&c, buf, "fc93fc62807ddb8601abcdef5cf78f71a314227b6679ebf5");
	CU_ASSERT_EQUAL(cookie_check(&c, ip_a3, 4, 1559727985, &s), COOKIE_VALID);
	CU_ASSERT_EQUAL(cookie_check(&c, ip_a3, 4, 1559734700, &s), COOKIE_INVALID);
	assert_made(c.client, ip_a3, 4, 1559734700, s.current, "010000005cf7a9acf73a7810aca2381e");

	/* A.4: IPv6, the secret rolled over: the old one (now staging) still checks */
	uint8_t old_secret[16];
	CU_ASSERT_EQUAL(unhex(old_secret, 16, "dd3bdf9344b678b185a6f5cb60fca715"), 16);
	option(&c, buf, "22681ab97d52c298");
	assert_made(c.client, ip_a4, 16, 1559741817, old_secret,
		    "010000005cf7c57926556bd0934c72f8");
	option(&c, buf, "22681ab97d52c298010000005cf7c57926556bd0934c72f8");
	CU_ASSERT_EQUAL(unhex(s.current, 16, "445536bcd2513298075a5d379663c962"), 16);
	memcpy(s.staging, old_secret, 16);
	s.has_staging = true;
	CU_ASSERT_EQUAL(cookie_check(&c, ip_a4, 16, 1559741961, &s), COOKIE_RENEW);
	assert_made(c.client, ip_a4, 16, 1559741961, s.current, "010000005cf7c609a6bb79d16625507a");
	/* without the staging secret the old cookie is not ours any more */
	s.has_staging = false;
	CU_ASSERT_EQUAL(cookie_check(&c, ip_a4, 16, 1559741961, &s), COOKIE_INVALID);
}

/* Every option length from 0 to 64: 8, and 16 to 40, parse; the rest are FORMERR. */
static void test_parse_lengths(void)
{
	uint8_t data[64];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	for (size_t len = 0; len <= sizeof(data); len++) {
		cookie_t c;
		int ret = cookie_parse(&c, data, len);
		if (len == 8) {
			CU_ASSERT_EQUAL(ret, 0);
			CU_ASSERT_PTR_EQUAL(c.client, data);
			CU_ASSERT_PTR_NULL(c.server);
			CU_ASSERT_EQUAL(c.server_len, 0);
		} else if (len >= 16 && len <= 40) {
			CU_ASSERT_EQUAL(ret, 0);
			CU_ASSERT_PTR_EQUAL(c.client, data);
			CU_ASSERT_PTR_EQUAL(c.server, data + 8);
			CU_ASSERT_EQUAL(c.server_len, len - 8);
		} else {
			CU_ASSERT_EQUAL(ret, SHOAL_EMALFORMED);
			CU_ASSERT_PTR_NULL(c.client);
		}
	}
}

/* A secret made at random, as shoald makes one without configuration. */
static void random_secrets(cookie_secrets_t *s)
{
	randombytes_buf(s->current, sizeof(s->current));
	randombytes_buf(s->staging, sizeof(s->staging));
	s->has_staging = false;
}

/* Make a cookie for client at ip and now into opt (client | server) and parse it into c. */
static void made(cookie_t *c, uint8_t opt[24], const uint8_t *client, const uint8_t *ip,
		 size_t ip_len, uint32_t now, const uint8_t *secret)
{
	memcpy(opt, client, 8);
	CU_ASSERT_EQUAL_FATAL(cookie_make(opt + 8, client, ip, ip_len, now, secret), 0);
	CU_ASSERT_EQUAL_FATAL(cookie_parse(c, opt, 24), 0);
}

static void test_round_trip_and_replay(void)
{
	cookie_secrets_t s;
	random_secrets(&s);
	const uint8_t client[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const uint8_t other_client[8] = { 1, 2, 3, 4, 5, 6, 7, 9 };
	const uint8_t v4[4] = { 192, 0, 2, 1 }, v4_next[4] = { 192, 0, 2, 2 };
	uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8 }, v6_other[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	v6[15] = 1;
	v6_other[15] = 2;
	uint8_t opt[24];
	cookie_t c;

	made(&c, opt, client, v4, 4, 1000000, s.current);
	CU_ASSERT_EQUAL(cookie_check(&c, v4, 4, 1000000, &s), COOKIE_VALID);
	/* replayed from another address, or with another client cookie: not valid */
	CU_ASSERT_EQUAL(cookie_check(&c, v4_next, 4, 1000000, &s), COOKIE_INVALID);
	CU_ASSERT_EQUAL(cookie_check(&c, v6, 16, 1000000, &s), COOKIE_INVALID);
	memcpy(opt, other_client, 8);
	CU_ASSERT_EQUAL(cookie_check(&c, v4, 4, 1000000, &s), COOKIE_INVALID);

	made(&c, opt, client, v6, 16, 1000000, s.current);
	CU_ASSERT_EQUAL(cookie_check(&c, v6, 16, 1000000, &s), COOKIE_VALID);
	CU_ASSERT_EQUAL(cookie_check(&c, v6_other, 16, 1000000, &s), COOKIE_INVALID);
	/* another server of the set (same secret) accepts it; one with another secret does not */
	cookie_secrets_t peer = s, stranger;
	random_secrets(&stranger);
	CU_ASSERT_EQUAL(cookie_check(&c, v6, 16, 1000000, &peer), COOKIE_VALID);
	CU_ASSERT_EQUAL(cookie_check(&c, v6, 16, 1000000, &stranger), COOKIE_INVALID);

	/* an IPv4 client seen on an IPv6 socket (::ffff:192.0.2.1) is the same client */
	uint8_t mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1 };
	made(&c, opt, client, v4, 4, 1000000, s.current);
	CU_ASSERT_EQUAL(cookie_check(&c, mapped, 16, 1000000, &s), COOKIE_VALID);
	made(&c, opt, client, mapped, 16, 1000000, s.current);
	CU_ASSERT_EQUAL(cookie_check(&c, v4, 4, 1000000, &s), COOKIE_VALID);

	/* addresses of other lengths are refused, not read past */
	uint8_t server[16];
	CU_ASSERT_EQUAL(cookie_make(server, client, v6, 5, 1000000, s.current), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(cookie_check(&c, v6, 5, 1000000, &s), COOKIE_INVALID);
}

static void test_staging_secret(void)
{
	cookie_secrets_t before, during, after;
	random_secrets(&before);
	const uint8_t client[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	const uint8_t ip[4] = { 198, 51, 100, 7 };
	uint8_t opt[24];
	cookie_t c;
	made(&c, opt, client, ip, 4, 5000, before.current);

	/* rotation: a new current secret, the old one staging: valid, to be renewed */
	randombytes_buf(during.current, 16);
	memcpy(during.staging, before.current, 16);
	during.has_staging = true;
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 5000, &during), COOKIE_RENEW);
	/* the staging secret dropped: invalid */
	after = during;
	after.has_staging = false;
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 5000, &after), COOKIE_INVALID);
	/* the next secret announced as staging before the switch: ours still plain valid */
	cookie_secrets_t announced = before;
	memcpy(announced.staging, during.current, 16);
	announced.has_staging = true;
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 5000, &announced), COOKIE_VALID);
}

/* RFC 9018 4.3: up to an hour old, up to five minutes ahead, renewed past half an hour. */
static void test_time_window(void)
{
	cookie_secrets_t s;
	random_secrets(&s);
	const uint8_t client[8] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11 };
	const uint8_t ip[4] = { 203, 0, 113, 1 };
	uint8_t opt[24];
	cookie_t c;
	const uint32_t t = 1700000000;
	made(&c, opt, client, ip, 4, t, s.current);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t + 1800, &s), COOKIE_VALID);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t + 1801, &s), COOKIE_RENEW);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t + 3600, &s), COOKIE_RENEW);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t + 3601, &s), COOKIE_INVALID);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t + 86400 * 200, &s), COOKIE_INVALID);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t - 300, &s), COOKIE_VALID);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t - 301, &s), COOKIE_INVALID);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, t - 86400, &s), COOKIE_INVALID);

	/* the 32-bit timestamp wraps (2106): serial arithmetic keeps the window */
	made(&c, opt, client, ip, 4, 0xffffff00u, s.current);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 0x00000010u, &s), COOKIE_VALID);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 0xffffff00u + 3601u, &s), COOKIE_INVALID);
}

/* A server cookie with anything changed, or not of our making, is not valid. */
static void test_not_ours(void)
{
	cookie_secrets_t s;
	random_secrets(&s);
	const uint8_t client[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	const uint8_t ip[4] = { 192, 0, 2, 53 };
	uint8_t opt[40];
	cookie_t c;
	made(&c, opt, client, ip, 4, 4242, s.current);
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 4242, &s), COOKIE_VALID);
	/* each octet of client and server cookie changed in turn */
	for (size_t i = 0; i < 24; i++) {
		opt[i] ^= 0x01;
		CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 4242, &s), COOKIE_INVALID);
		opt[i] ^= 0x01;
	}
	CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 4242, &s), COOKIE_VALID);
	/* a valid prefix with more octets (RFC 7873 allows 8 to 32) is not an RFC 9018 cookie */
	memset(opt + 24, 0, 16);
	for (size_t len = 16; len <= 40; len++) {
		CU_ASSERT_EQUAL_FATAL(cookie_parse(&c, opt, len), 0);
		CU_ASSERT_EQUAL(cookie_check(&c, ip, 4, 4242, &s),
				len == 24 ? COOKIE_VALID : COOKIE_INVALID);
	}
}

static void test_secret_from_hex(void)
{
	uint8_t secret[16];
	CU_ASSERT_EQUAL(cookie_secret_from_hex(secret, "E5E973E5A6B2A43F48E7DC849E37BFCF"), 0);
	CU_ASSERT_EQUAL(secret[0], 0xe5);
	CU_ASSERT_EQUAL(secret[15], 0xcf);
	const char *bad[] = { "", "e5e973e5a6b2a43f48e7dc849e37bfc",
			      "e5e973e5a6b2a43f48e7dc849e37bfcf0",
			      "e5e973e5a6b2a43f48e7dc849e37bfcg",
			      "e5e973e5a6b2a43f 8e7dc849e37bfcf" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(secret, 0x55, sizeof(secret));
		CU_ASSERT_EQUAL(cookie_secret_from_hex(secret, bad[i]), SHOAL_ESYNTAX);
		CU_ASSERT_EQUAL(secret[0] | secret[15], 0);
	}
}

static cookie_secrets_t shared_secrets;

/* Make and check cookies under secrets every thread shares; returns how many were valid. */
static void *check_many(void *arg)
{
	uint8_t client[8] = { (uint8_t)(uintptr_t)arg };
	uint8_t ip[4] = { 10, 0, 0, (uint8_t)(uintptr_t)arg };
	uintptr_t valid = 0;
	for (uint32_t i = 0; i < 2000; i++) {
		uint8_t opt[24];
		cookie_t c;
		memcpy(client + 4, &i, 4);
		memcpy(opt, client, 8);
		if (cookie_make(opt + 8, client, ip, 4, 1000 + i, shared_secrets.current) != 0 ||
		    cookie_parse(&c, opt, sizeof(opt)) != 0)
			continue;
		valid += cookie_check(&c, ip, 4, 1000 + i, &shared_secrets) == COOKIE_VALID;
	}
	return (void *)valid;
}

/* Workers share the secrets read only: no lock, and TSan finds nothing. */
static void test_threads(void)
{
	random_secrets(&shared_secrets);
	shared_secrets.has_staging = true;
	pthread_t threads[4];
	for (uintptr_t t = 0; t < 4; t++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[t], NULL, check_many, (void *)t), 0);
	for (int t = 0; t < 4; t++) {
		void *valid = NULL;
		pthread_join(threads[t], &valid);
		CU_ASSERT_EQUAL((uintptr_t)valid, 2000);
	}
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0)
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_rfc9018_vectors),
		UNIT_TEST(test_parse_lengths),
		UNIT_TEST(test_round_trip_and_replay),
		UNIT_TEST(test_staging_secret),
		UNIT_TEST(test_time_window),
		UNIT_TEST(test_not_ours),
		UNIT_TEST(test_secret_from_hex),
		UNIT_TEST(test_threads),
		UNIT_END,
	};
	return unit_run(argc, argv, "cookie", tests);
}
