/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/conf/acl.c: entries parsed, peers matched by address, prefix and key. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/conf/acl.h"
#include "unit.h"
#include "zone/answer.h"

static struct sockaddr_storage peer(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
	} else {
		CU_ASSERT_EQUAL(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
	}
	return ss;
}

#define SA(ss) ((const struct sockaddr *)&(ss))

static void test_parse(void)
{
	acl_entry_t e;
	char key[64], err[256];
	CU_ASSERT_EQUAL(acl_entry_parse("127.0.0.0/8 xfr-key", ACL_MATCH, &e, key, sizeof(key), err,
					sizeof(err)),
			0);
	CU_ASSERT_EQUAL(e.net.bits, 8);
	CU_ASSERT_STRING_EQUAL(key, "xfr-key");
	CU_ASSERT_STRING_EQUAL(e.text, "127.0.0.0/8");
	CU_ASSERT_EQUAL(
		acl_entry_parse("::1 NOKEY", ACL_MATCH, &e, key, sizeof(key), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(e.net.bits, 128);
	CU_ASSERT_STRING_EQUAL(key, "");
	CU_ASSERT_EQUAL(e.key, ACL_NOKEY);
	CU_ASSERT_EQUAL(acl_entry_parse("192.0.2.1@5300 nokey", ACL_TARGET, &e, key, sizeof(key),
					err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(ntohs(((struct sockaddr_in *)&e.addr)->sin_port), 5300);
	CU_ASSERT_STRING_EQUAL(key, "");
	CU_ASSERT_EQUAL(acl_entry_parse("[2001:db8::1]@53 k", ACL_TARGET, &e, key, sizeof(key), err,
					sizeof(err)),
			0);
	CU_ASSERT_EQUAL(e.addr.ss_family, AF_INET6);
	CU_ASSERT_EQUAL(
		acl_entry_parse("192.0.2.1 k", ACL_TARGET, &e, key, sizeof(key), err, sizeof(err)),
		0);
	CU_ASSERT_STRING_EQUAL(e.text, "192.0.2.1@53");
	/* brackets and no port: the text as written, the port added (it lost its "]") */
	CU_ASSERT_EQUAL(acl_entry_parse("[2001:db8::1] k", ACL_TARGET, &e, key, sizeof(key), err,
					sizeof(err)),
			0);
	CU_ASSERT_STRING_EQUAL(e.text, "[2001:db8::1]@53");

	/* what stops start-up, each with its reason */
	static const struct {
		const char *text;
		enum acl_kind kind;
		const char *why;
	} bad[] = {
		{ "primary.example.com k", ACL_TARGET, "not an IPv4 or IPv6 address" },
		{ "192.0.2.1", ACL_TARGET, "followed by a key name" },
		{ "192.0.2.1 k extra", ACL_TARGET, "unexpected words" },
		{ "192.0.2.1@0 k", ACL_TARGET, "out of range" },
		{ "192.0.2.1@65536 k", ACL_TARGET, "out of range" },
		{ "192.0.2.0/33 k", ACL_MATCH, "out of range" },
		{ "192.0.2.1/24 k", ACL_MATCH, "bits set past" },
		{ "192.0.2.0/x k", ACL_MATCH, "out of range" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(acl_entry_parse(bad[i].text, bad[i].kind, &e, key, sizeof(key), err,
						sizeof(err)),
				SHOAL_ESYNTAX);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].why));
		if (!strstr(err, bad[i].why))
			fprintf(stderr, "\n  %s: got \"%s\"\n", bad[i].text, err);
	}
}

static void test_match(void)
{
	acl_t a = { 0 };
	acl_entry_t e;
	char key[64], err[256];
	CU_ASSERT_EQUAL(
		acl_entry_parse("10.1.0.0/16 k", ACL_MATCH, &e, key, sizeof(key), err, sizeof(err)),
		0);
	e.key = 0;
	CU_ASSERT_EQUAL(acl_add(&a, &e), 0);
	CU_ASSERT_EQUAL(acl_entry_parse("10.1.2.3 NOKEY", ACL_MATCH, &e, key, sizeof(key), err,
					sizeof(err)),
			0);
	CU_ASSERT_EQUAL(acl_add(&a, &e), 0);
	CU_ASSERT_EQUAL(acl_entry_parse("2001:db8:80::/41 k", ACL_MATCH, &e, key, sizeof(key), err,
					sizeof(err)),
			0);
	e.key = 0;
	CU_ASSERT_EQUAL(acl_add(&a, &e), 0);

	struct sockaddr_storage in = peer("10.1.200.9", 40000), host = peer("10.1.2.3", 1);
	struct sockaddr_storage out = peer("10.2.0.1", 1), mapped = peer("::ffff:10.1.0.1", 1);
	struct sockaddr_storage v6in = peer("2001:db8:ff::1", 1), v6out = peer("2001:db8:7f::1", 1);
	/* signed with key 0: the /16 */
	CU_ASSERT_PTR_EQUAL(acl_find(&a, SA(in), 0), &a.entries[0]);
	CU_ASSERT_PTR_EQUAL(acl_find(&a, SA(mapped), 0), &a.entries[0]);
	/* unsigned: only the NOKEY host */
	CU_ASSERT_PTR_NULL(acl_find(&a, SA(in), ACL_NOKEY));
	CU_ASSERT_PTR_EQUAL(acl_find(&a, SA(host), ACL_NOKEY), &a.entries[1]);
	/* another key, or outside every block */
	CU_ASSERT_PTR_NULL(acl_find(&a, SA(in), 1));
	CU_ASSERT_PTR_NULL(acl_find(&a, SA(out), 0));
	/* a prefix that is not a multiple of 8 */
	CU_ASSERT_PTR_EQUAL(acl_find(&a, SA(v6in), 0), &a.entries[2]);
	CU_ASSERT_PTR_NULL(acl_find(&a, SA(v6out), 0));
	acl_clear(&a);
	CU_ASSERT_EQUAL(a.count, 0);
}

/* peer as a struct of its family's exact size on the heap, so that a read past it shows (ASan) */
static struct sockaddr *exact_peer(const char *addr)
{
	struct sockaddr_storage ss = peer(addr, 53);
	size_t len =
		ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	struct sockaddr *sa = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sa);
	memcpy(sa, &ss, len);
	return sa;
}

/* Whether the entry written as text (ACL_MATCH) matches the peer at addr. */
static bool text_matches(const char *text, const char *addr)
{
	acl_entry_t e;
	char key[64], err[256];
	CU_ASSERT_EQUAL_FATAL(
		acl_entry_parse(text, ACL_MATCH, &e, key, sizeof(key), err, sizeof(err)), 0);
	struct sockaddr *sa = exact_peer(addr);
	bool m = acl_entry_matches(&e, sa);
	free(sa);
	return m;
}

/*
 * Entries written as IPv4-mapped addresses (RFC 4291 2.5.5.2) are the IPv4
 * block they map, prefix less 96: they hold IPv4 peers, mapped or not, and
 * the compare stays within the 4 octets of the address.
 */
static void test_mapped(void)
{
	CU_ASSERT_TRUE(text_matches("::ffff:127.0.0.0/104 NOKEY", "127.0.0.1"));
	CU_ASSERT_TRUE(text_matches("::ffff:127.0.0.0/104 NOKEY", "::ffff:127.200.0.1"));
	CU_ASSERT_FALSE(text_matches("::ffff:127.0.0.0/104 NOKEY", "10.0.0.1"));
	CU_ASSERT_FALSE(text_matches("::ffff:127.0.0.0/104 NOKEY", "::1"));
	CU_ASSERT_TRUE(text_matches("::ffff:192.0.2.1 NOKEY", "192.0.2.1"));
	CU_ASSERT_FALSE(text_matches("::ffff:192.0.2.1 NOKEY", "192.0.2.2"));
	CU_ASSERT_TRUE(text_matches("::ffff:192.0.2.128/121 NOKEY", "192.0.2.200"));
	CU_ASSERT_FALSE(text_matches("::ffff:192.0.2.128/121 NOKEY", "192.0.2.100"));
	CU_ASSERT_TRUE(text_matches("::ffff:0.0.0.0/96 NOKEY", "198.51.100.1"));
	/* and the other way: an IPv4 entry holds the mapped form of its peers */
	CU_ASSERT_TRUE(text_matches("192.0.2.0/24 NOKEY", "::ffff:192.0.2.7"));

	/* the entry is kept as IPv4, as written for the logs */
	acl_entry_t e;
	char key[64], err[256];
	CU_ASSERT_EQUAL(acl_entry_parse("::ffff:10.1.0.0/112 NOKEY", ACL_MATCH, &e, key,
					sizeof(key), err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(e.addr.ss_family, AF_INET);
	CU_ASSERT_EQUAL(e.addr_len, sizeof(struct sockaddr_in));
	CU_ASSERT_EQUAL(e.net.bits, 16);
	CU_ASSERT_STRING_EQUAL(e.text, "::ffff:10.1.0.0/112");
	/* a server to talk to, likewise: IPv4 with its port */
	CU_ASSERT_EQUAL(acl_entry_parse("[::ffff:192.0.2.53]@5300 NOKEY", ACL_TARGET, &e, key,
					sizeof(key), err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(e.addr.ss_family, AF_INET);
	CU_ASSERT_EQUAL(ntohs(((struct sockaddr_in *)&e.addr)->sin_port), 5300);
	CU_ASSERT_EQUAL(e.net.bits, 32);
}

/*
 * Entries that ask for TLS (provide-xfr): a connection without TLS is not
 * let in by them, and is told why; with TLS, "tls" lets it in, "tls PIN"
 * only with a certificate of that key, "tls ca" only with one the CA
 * signed. The first entry the connection meets wins.
 */
static void test_tls(void)
{
	static const char pin_text[] = "h+GEhW/K8cy1BN3I1y2WliBBbkqqPJVHHl/qPSo+Qtw=";
	acl_t a = { 0 };
	acl_entry_t e;
	char key[64], err[256], text[128];
	snprintf(text, sizeof(text), "10.0.0.0/8 NOKEY tls %s", pin_text);
	CU_ASSERT_EQUAL(acl_entry_parse(text, ACL_MATCH, &e, key, sizeof(key), err, sizeof(err)),
			0);
	acl_add(&a, &e);
	CU_ASSERT_EQUAL(acl_entry_parse("10.1.0.0/16 NOKEY tls ca", ACL_MATCH, &e, key, sizeof(key),
					err, sizeof(err)),
			0);
	acl_add(&a, &e);
	CU_ASSERT_EQUAL(acl_entry_parse("10.1.2.0/24 NOKEY tls", ACL_MATCH, &e, key, sizeof(key),
					err, sizeof(err)),
			0);
	acl_add(&a, &e);
	struct sockaddr_storage p = peer("10.1.2.3", 0), q = peer("10.9.9.9", 0);
	acl_client_t c = { .addr = SA(p) };
	const acl_entry_t *unmet;
	CU_ASSERT_PTR_NULL(acl_find(&a, SA(p), ACL_NOKEY));
	CU_ASSERT_PTR_NULL(acl_find_client(&a, &c, ACL_NOKEY, &unmet));
	CU_ASSERT_PTR_EQUAL(unmet, &a.entries[0]);
	CU_ASSERT_STRING_EQUAL(acl_tls_unmet(unmet, &c), "TLS");
	c.tls = true; /* no certificate: the third entry */
	CU_ASSERT_PTR_EQUAL(acl_find_client(&a, &c, ACL_NOKEY, &unmet), &a.entries[2]);
	CU_ASSERT_PTR_NOT_NULL(strstr(acl_tls_unmet(&a.entries[0], &c), "none was shown"));
	c.cert = true; /* another key, not signed by the CA: still the third */
	CU_ASSERT_PTR_EQUAL(acl_find_client(&a, &c, ACL_NOKEY, &unmet), &a.entries[2]);
	CU_ASSERT_PTR_NOT_NULL(strstr(acl_tls_unmet(&a.entries[1], &c), "it is not"));
	c.ca = true;
	CU_ASSERT_PTR_EQUAL(acl_find_client(&a, &c, ACL_NOKEY, &unmet), &a.entries[1]);
	CU_ASSERT_EQUAL(tls_pin_parse(pin_text, c.pin), 0);
	CU_ASSERT_PTR_EQUAL(acl_find_client(&a, &c, ACL_NOKEY, &unmet), &a.entries[0]);
	/* an address only the first entry has: its pin or nothing */
	c.addr = SA(q);
	CU_ASSERT_PTR_EQUAL(acl_find_client(&a, &c, ACL_NOKEY, &unmet), &a.entries[0]);
	c.pin[0] ^= 1;
	CU_ASSERT_PTR_NULL(acl_find_client(&a, &c, ACL_NOKEY, &unmet));
	CU_ASSERT_PTR_EQUAL(unmet, &a.entries[0]);
	acl_clear(&a);
}

/*
 * allow-query: the client's address octets (as the answer context has
 * them) and the key its query was verified with, matched as acl_find.
 */
static void test_allow_query(void)
{
	acl_t a = { 0 };
	acl_entry_t e;
	char key[64], err[256];
	CU_ASSERT_EQUAL(acl_entry_parse("127.0.0.1 NOKEY", ACL_MATCH, &e, key, sizeof(key), err,
					sizeof(err)),
			0);
	CU_ASSERT_EQUAL(acl_add(&a, &e), 0);
	CU_ASSERT_EQUAL(
		acl_entry_parse("10.0.0.0/8 k", ACL_MATCH, &e, key, sizeof(key), err, sizeof(err)),
		0);
	e.key = 3;
	CU_ASSERT_EQUAL(acl_add(&a, &e), 0);
	const uint8_t loop1[4] = { 127, 0, 0, 1 }, loop2[4] = { 127, 0, 0, 2 };
	const uint8_t ten[4] = { 10, 1, 2, 3 }, v6[16] = { [15] = 1 };
	answer_ctx_t ctx = { .client_ip = loop1, .client_ip_len = 4, .tsig_key = ACL_NOKEY };
	CU_ASSERT_TRUE(acl_allow_query(&a, &ctx));
	ctx.client_ip = loop2;
	CU_ASSERT_FALSE(acl_allow_query(&a, &ctx));
	ctx.client_ip = v6;
	ctx.client_ip_len = 16;
	CU_ASSERT_FALSE(acl_allow_query(&a, &ctx));
	/* the 10/8 entry wants key 3: unsigned or another key is refused */
	ctx.client_ip = ten;
	ctx.client_ip_len = 4;
	CU_ASSERT_FALSE(acl_allow_query(&a, &ctx));
	ctx.tsig_key = 2;
	CU_ASSERT_FALSE(acl_allow_query(&a, &ctx));
	ctx.tsig_key = 3;
	CU_ASSERT_TRUE(acl_allow_query(&a, &ctx));
	/* an empty list admits no one */
	acl_t none = { 0 };
	CU_ASSERT_FALSE(acl_allow_query(&none, &ctx));
	acl_clear(&a);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_parse), UNIT_TEST(test_match),       UNIT_TEST(test_mapped),
		UNIT_TEST(test_tls),   UNIT_TEST(test_allow_query), UNIT_END,
	};
	return unit_run(argc, argv, "acl", tests);
}
