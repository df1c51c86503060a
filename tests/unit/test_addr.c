/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/addr.c: ADDR[@PORT][/BITS] parsed, compared, as octets, as text. */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/un.h>

#include "proto/error.h"
#include "server/common/addr.h"
#include "unit.h"

#define SA(x) ((const struct sockaddr *)&(x))

/* text parsed with flags; CUnit fails when it is refused. */
static addr_parsed_t parsed(const char *text, unsigned flags)
{
	addr_parsed_t a;
	char err[128] = "";
	int rc = addr_parse(text, flags, &a, err, sizeof(err));
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "\n  %s: refused: %s\n", text, err);
	return a;
}

/* text's parse as "ADDR@PORT" by addr_text, and its prefix length. */
static void expect(const char *text, unsigned flags, const char *want, unsigned bits)
{
	addr_parsed_t a = parsed(text, flags);
	char buf[ADDR_TEXT_MAX];
	CU_ASSERT_STRING_EQUAL(addr_text(SA(a.sa), buf, sizeof(buf)), want);
	CU_ASSERT_EQUAL(a.bits, bits);
	if (strcmp(buf, want) || a.bits != bits)
		fprintf(stderr, "\n  %s: got %s /%u\n", text, buf, a.bits);
	CU_ASSERT_EQUAL(a.len, a.sa.ss_family == AF_INET ? sizeof(struct sockaddr_in)
							 : sizeof(struct sockaddr_in6));
}

/* text is refused with flags, err naming why. */
static void refused(const char *text, unsigned flags, const char *why)
{
	addr_parsed_t a;
	char err[256] = "";
	CU_ASSERT_EQUAL(addr_parse(text, flags, &a, err, sizeof(err)), SHOAL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, why));
	if (!strstr(err, why))
		fprintf(stderr, "\n  %s: got \"%s\", not \"%s\"\n", text, err, why);
}

static void test_parse(void)
{
	expect("192.0.2.1", 0, "192.0.2.1@0", 32);
	expect("2001:db8::1", 0, "2001:db8::1@0", 128);
	/* a port: 53 unless written; IPv6 with or without brackets, as people write it */
	expect("192.0.2.1", ADDR_PORT, "192.0.2.1@53", 32);
	expect("192.0.2.1@5300", ADDR_PORT, "192.0.2.1@5300", 32);
	expect("[2001:db8::1]@5300", ADDR_PORT, "2001:db8::1@5300", 128);
	expect("2001:db8::1@5300", ADDR_PORT, "2001:db8::1@5300", 128);
	expect("[2001:db8::1]", ADDR_PORT, "2001:db8::1@53", 128);
	expect("[192.0.2.1]@1", ADDR_PORT, "192.0.2.1@1", 32);
	expect("::@65535", ADDR_PORT, "::@65535", 128);
	expect("192.0.2.1@053", ADDR_PORT, "192.0.2.1@53", 32);
	/* a prefix: the network's address, host bits cleared unless refused */
	expect("192.0.2.0/24", ADDR_BITS, "192.0.2.0@0", 24);
	expect("192.0.2.77/24", ADDR_BITS, "192.0.2.0@0", 24);
	expect("2001:db8:80::/41", ADDR_BITS | ADDR_NETWORK, "2001:db8:80::@0", 41);
	expect("[2001:db8::]/32", ADDR_BITS, "2001:db8::@0", 32);
	expect("0.0.0.0/0", ADDR_BITS | ADDR_NETWORK, "0.0.0.0@0", 0);
	expect("::/0", ADDR_BITS, "::@0", 0);
	expect("192.0.2.1", ADDR_BITS, "192.0.2.1@0", 32);
	expect("192.0.2.1@5300/32", ADDR_PORT | ADDR_BITS, "192.0.2.1@5300", 32);
}

/* IPv4-mapped addresses (RFC 4291 2.5.5.2) are the IPv4 ones they map, prefix less 96. */
static void test_parse_mapped(void)
{
	expect("::ffff:192.0.2.1", 0, "192.0.2.1@0", 32);
	expect("[::ffff:192.0.2.53]@5300", ADDR_PORT, "192.0.2.53@5300", 32);
	expect("::ffff:192.0.2.0/120", ADDR_BITS, "192.0.2.0@0", 24);
	expect("::ffff:10.1.0.0/112", ADDR_BITS | ADDR_NETWORK, "10.1.0.0@0", 16);
	expect("::ffff:0.0.0.0/96", ADDR_BITS | ADDR_NETWORK, "0.0.0.0@0", 0);
	addr_parsed_t a = parsed("::ffff:127.0.0.1@5353", ADDR_PORT);
	CU_ASSERT_EQUAL(a.sa.ss_family, AF_INET);
	CU_ASSERT_EQUAL(a.len, sizeof(struct sockaddr_in));
	/* a prefix shorter than 96 is no IPv4 network: IPv6, the mapped part cleared */
	expect("::ffff:192.0.2.0/95", ADDR_BITS, "::fffe:0:0@0", 95);
	refused("::ffff:192.0.2.0/95 ", ADDR_BITS, "out of range");
	refused("::ffff:192.0.2.0/95", ADDR_BITS | ADDR_NETWORK, "bits set past the /95 prefix");
}

static void test_parse_refused(void)
{
	static const char not_addr[] = "is not an IPv4 or IPv6 address";
	refused("", ADDR_PORT, not_addr);
	refused("example.com", 0, "\"example.com\" is not an IPv4 or IPv6 address");
	refused("example.com@53", ADDR_PORT, "\"example.com\" is not");
	refused("192.0.2", 0, not_addr);
	refused("192.0.2.1.5", 0, not_addr);
	refused("[]@53", ADDR_PORT, not_addr);
	refused("[::1@53", ADDR_PORT, not_addr);
	refused("::1]@53", ADDR_PORT, not_addr);
	refused("[::1]x@53", ADDR_PORT, not_addr);
	refused("@53", ADDR_PORT, not_addr);
	refused("/24", ADDR_BITS, not_addr);
	refused(" 192.0.2.1", 0, not_addr);
	/* no IPv6 scope in the configuration, with or without brackets */
	refused("fe80::1%lo", 0, not_addr);
	refused("fe80::1%1", ADDR_PORT, not_addr);
	refused("[fe80::1%lo]@53", ADDR_PORT, not_addr);
	/* a part the caller does not take is no part: the address is wrong */
	refused("192.0.2.1@53", 0, not_addr);
	refused("192.0.2.1@53", ADDR_BITS, not_addr);
	refused("192.0.2.0/24", ADDR_PORT, not_addr);
	/* ports: decimal digits, 1 to 65535 */
	refused("192.0.2.1@0", ADDR_PORT, "\"192.0.2.1@0\": port \"0\" out of range");
	refused("192.0.2.1@65536", ADDR_PORT, "port \"65536\" out of range");
	refused("192.0.2.1@99999999999999999999999", ADDR_PORT, "out of range");
	refused("192.0.2.1@", ADDR_PORT, "port \"\" out of range");
	refused("192.0.2.1@+53", ADDR_PORT, "out of range");
	refused("192.0.2.1@-1", ADDR_PORT, "out of range");
	refused("192.0.2.1@ 53", ADDR_PORT, "out of range");
	refused("192.0.2.1@5x", ADDR_PORT, "out of range");
	refused("[::1]@0x35", ADDR_PORT, "out of range");
	/* prefixes: decimal digits, at most the address's bits */
	refused("192.0.2.0/33", ADDR_BITS, "\"192.0.2.0/33\": prefix \"33\" out of range");
	refused("::/129", ADDR_BITS, "prefix \"129\" out of range");
	refused("192.0.2.0/", ADDR_BITS, "prefix \"\" out of range");
	refused("192.0.2.0/-1", ADDR_BITS, "out of range");
	refused("1.2.3.4/+8", ADDR_BITS, "out of range");
	refused("192.0.2.0/2x", ADDR_BITS, "out of range");
	refused("192.0.2.1/24", ADDR_BITS | ADDR_NETWORK,
		"\"192.0.2.1/24\": the address has bits set past the /24 prefix");
	/* longer than any address */
	char longer[200];
	memset(longer, '1', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	refused(longer, ADDR_PORT | ADDR_BITS, not_addr);
	/* no reason wanted */
	addr_parsed_t a;
	CU_ASSERT_EQUAL(addr_parse("nope", 0, &a, NULL, 0), SHOAL_EINVAL);
}

/* An IPv6 socket address with a scope, as the kernel gives a link-local peer. */
static struct sockaddr_in6 v6(const char *text, uint16_t port, uint32_t scope)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	CU_ASSERT_EQUAL(inet_pton(AF_INET6, text, &s.sin6_addr), 1);
	s.sin6_scope_id = scope;
	return s;
}

static void test_octets(void)
{
	const uint8_t *ip;
	addr_parsed_t a = parsed("192.0.2.9", 0);
	CU_ASSERT_EQUAL(addr_octets(SA(a.sa), &ip), 4);
	CU_ASSERT_EQUAL(memcmp(ip, "\xc0\x00\x02\x09", 4), 0);
	a = parsed("2001:db8::1", 0);
	CU_ASSERT_EQUAL(addr_octets(SA(a.sa), &ip), 16);
	CU_ASSERT_EQUAL(ip[0], 0x20);
	CU_ASSERT_EQUAL(ip[15], 1);
	/* seen mapped (a socket without IPV6_V6ONLY): the IPv4 octets */
	struct sockaddr_in6 m = v6("::ffff:192.0.2.9", 53, 0);
	CU_ASSERT_EQUAL(addr_octets(SA(m), &ip), 4);
	CU_ASSERT_EQUAL(memcmp(ip, "\xc0\x00\x02\x09", 4), 0);
	CU_ASSERT_PTR_EQUAL(ip, m.sin6_addr.s6_addr + 12);
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	CU_ASSERT_EQUAL(addr_octets(SA(un), &ip), 0);
	CU_ASSERT_EQUAL(addr_port(SA(un)), 0);
	addr_set_port((struct sockaddr *)&un, 53); /* left alone */
	CU_ASSERT_EQUAL(un.sun_path[0], 0);
}

static void test_same(void)
{
	addr_parsed_t a = parsed("192.0.2.1@53", ADDR_PORT), b = parsed("192.0.2.1", ADDR_PORT);
	CU_ASSERT_TRUE(addr_same(SA(a.sa), SA(b.sa)));
	b = parsed("192.0.2.1@54", ADDR_PORT);
	CU_ASSERT_FALSE(addr_same(SA(a.sa), SA(b.sa)));
	b = parsed("192.0.2.2@53", ADDR_PORT);
	CU_ASSERT_FALSE(addr_same(SA(a.sa), SA(b.sa)));
	/* an IPv4 peer seen mapped is the same peer */
	struct sockaddr_in6 m = v6("::ffff:192.0.2.1", 53, 0);
	CU_ASSERT_TRUE(addr_same(SA(a.sa), SA(m)));
	CU_ASSERT_TRUE(addr_same(SA(m), SA(a.sa)));
	/* the IPv6 scope counts: fe80::1 on two links are two hosts */
	struct sockaddr_in6 x = v6("fe80::1", 53, 2), y = v6("fe80::1", 53, 3);
	CU_ASSERT_FALSE(addr_same(SA(x), SA(y)));
	y.sin6_scope_id = 2;
	CU_ASSERT_TRUE(addr_same(SA(x), SA(y)));
	y = v6("fe80::2", 53, 2);
	CU_ASSERT_FALSE(addr_same(SA(x), SA(y)));
	/* no IPv6 address is an IPv4 one */
	b = parsed("::c000:201@53", ADDR_PORT);
	CU_ASSERT_FALSE(addr_same(SA(a.sa), SA(b.sa)));
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	CU_ASSERT_FALSE(addr_same(SA(un), SA(un)));
}

/* Text as Shoal logs it, read back to the same address. */
static void test_text_round_trip(void)
{
	static const char *const texts[] = {
		"192.0.2.1@53",
		"0.0.0.0@53",
		"255.255.255.255@65535",
		"::@53",
		"::1@5300",
		"2001:db8::1@1",
		"2001:db8:0:1:1:1:1:1@53",
		"fe80::1:2@53",
		"::192.0.2.1@53",
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff@65535",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		addr_parsed_t a = parsed(texts[i], ADDR_PORT);
		char buf[ADDR_TEXT_MAX];
		CU_ASSERT_STRING_EQUAL(addr_text(SA(a.sa), buf, sizeof(buf)), texts[i]);
		addr_parsed_t b = parsed(buf, ADDR_PORT);
		CU_ASSERT_TRUE(addr_same(SA(a.sa), SA(b.sa)));
	}
	/* IPv6 shortest form (RFC 5952 4), as the kernel prints it too */
	expect("2001:0DB8:0000:0000:0000:0000:0000:0001@53", ADDR_PORT, "2001:db8::1@53", 128);
	/* the longest text fits ADDR_TEXT_MAX */
	struct sockaddr_in6 m = v6("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 65535, 0);
	char buf[ADDR_TEXT_MAX];
	addr_text(SA(m), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff@65535");
	struct sockaddr_in6 mapped = v6("::ffff:10.1.0.1", 1, 0);
	CU_ASSERT_STRING_EQUAL(addr_text(SA(mapped), buf, sizeof(buf)), "10.1.0.1@1");
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	CU_ASSERT_STRING_EQUAL(addr_text(SA(un), buf, sizeof(buf)), "?@0");
	/* octets alone */
	const uint8_t ip4[4] = { 198, 51, 100, 7 }, ip6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	CU_ASSERT_STRING_EQUAL(addr_ip_text(ip4, 4, buf, sizeof(buf)), "198.51.100.7");
	CU_ASSERT_STRING_EQUAL(addr_ip_text(ip6, 16, buf, sizeof(buf)), "2001:db8::");
	CU_ASSERT_STRING_EQUAL(addr_ip_text(ip6, 0, buf, sizeof(buf)), "?");
	/* prefixes likewise */
	addr_prefix_t p;
	CU_ASSERT_EQUAL(addr_prefix_parse("2001:db8:80::/41", &p), 0);
	addr_prefix_text(&p, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "2001:db8:80::/41");
	addr_prefix_t q;
	CU_ASSERT_EQUAL(addr_prefix_parse(buf, &q), 0);
	CU_ASSERT_EQUAL(memcmp(&p, &q, sizeof(p)), 0);
}

static void test_loopback(void)
{
	static const struct {
		const char *text;
		bool loopback;
	} cases[] = {
		{ "127.0.0.1", true },  { "127.255.0.9", true },
		{ "::1", true },        { "::ffff:127.0.0.2", true },
		{ "128.0.0.1", false }, { "126.255.255.255", false },
		{ "::2", false },       { "::", false },
		{ "0.0.0.0", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		addr_parsed_t a = parsed(cases[i].text, 0);
		CU_ASSERT_EQUAL(addr_is_loopback(SA(a.sa)), cases[i].loopback);
	}
}

/* The prefix of a socket address: its first bits, mapped seen as IPv4. */
static void test_prefix_of(void)
{
	addr_prefix_t p;
	struct sockaddr_in6 m = v6("::ffff:192.0.2.77", 53, 0);
	addr_prefix_of(&p, SA(m), 24);
	CU_ASSERT_EQUAL(p.len, 4);
	CU_ASSERT_EQUAL(p.bits, 24);
	CU_ASSERT_EQUAL(memcmp(p.addr, "\xc0\x00\x02\x00", 4), 0);
	addr_parsed_t a = parsed("2001:db8::1", 0);
	addr_prefix_of(&p, SA(a.sa), 200); /* never past the address */
	CU_ASSERT_EQUAL(p.len, 16);
	CU_ASSERT_EQUAL(p.bits, 128);
	const uint8_t *ip;
	size_t len = addr_octets(SA(a.sa), &ip);
	CU_ASSERT_TRUE(addr_prefix_match(&p, ip, len));
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_parse),
		UNIT_TEST(test_parse_mapped),
		UNIT_TEST(test_parse_refused),
		UNIT_TEST(test_octets),
		UNIT_TEST(test_same),
		UNIT_TEST(test_text_round_trip),
		UNIT_TEST(test_loopback),
		UNIT_TEST(test_prefix_of),
		UNIT_END,
	};
	return unit_run(argc, argv, "addr", tests);
}
