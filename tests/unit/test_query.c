/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/query.c: every verdict and the EDNS corner cases. */
#include <string.h>

#include "proto/dns.h"
#include "proto/query.h"
#include "tests/unit/unit.h"

/* Build a query for www.Example.com/A; returns its length. */
static size_t make_query(uint8_t *b, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ar)
{
	memset(b, 0, 12);
	b[0] = 0xab;
	b[1] = 0xcd;
	b[2] = (uint8_t)(flags >> 8);
	b[3] = (uint8_t)flags;
	b[5] = (uint8_t)qd;
	b[7] = (uint8_t)an;
	b[11] = (uint8_t)ar;
	memcpy(b + 12, "\3www\7Example\3com\0\0\1\0\1", 21);
	return 33;
}

/* Append an OPT record; returns the new length. */
static size_t add_opt(uint8_t *b, size_t len, uint16_t size, uint8_t version, bool dobit,
		      const uint8_t *opts, uint16_t optlen)
{
	uint8_t *p = b + len;
	p[0] = 0;
	p[1] = 0;
	p[2] = 41;
	p[3] = (uint8_t)(size >> 8);
	p[4] = (uint8_t)size;
	p[5] = 0;
	p[6] = version;
	p[7] = dobit ? 0x80 : 0;
	p[8] = 0;
	p[9] = (uint8_t)(optlen >> 8);
	p[10] = (uint8_t)optlen;
	if (optlen)
		memcpy(p + 11, opts, optlen);
	return len + 11 + optlen;
}

static void test_plain_query(void)
{
	uint8_t b[512];
	query_t q;
	size_t len = make_query(b, DNS_FLAG_RD, 1, 0, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_OK);
	CU_ASSERT_EQUAL(q.id, 0xabcd);
	CU_ASSERT(q.has_question);
	CU_ASSERT_EQUAL(q.qname_len, 17);
	CU_ASSERT_EQUAL(memcmp(q.qname, "\3www\7example\3com", 17), 0);
	CU_ASSERT_EQUAL(q.qtype, DNS_TYPE_A);
	CU_ASSERT_EQUAL(q.qclass, DNS_CLASS_IN);
	CU_ASSERT_EQUAL(q.question_end, 33);
	CU_ASSERT_FALSE(q.edns);
	CU_ASSERT_EQUAL(query_udp_limit(&q, 1232), 512);
	/* trailing bytes after the question are ignored */
	memset(b + len, 0xff, 7);
	CU_ASSERT_EQUAL(query_parse(&q, b, len + 7), QUERY_OK);
}

static void test_drop_and_notimp(void)
{
	uint8_t b[512];
	query_t q;
	size_t len = make_query(b, DNS_FLAG_QR, 1, 0, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_DROP);
	CU_ASSERT_EQUAL(query_parse(&q, b, 11), QUERY_DROP);
	len = make_query(b, DNS_OPCODE_NOTIFY << DNS_OPCODE_SHIFT, 1, 0, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_NOTIMP);
	CU_ASSERT(q.has_question);
	len = make_query(b, DNS_OPCODE_UPDATE << DNS_OPCODE_SHIFT, 1, 0, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_NOTIMP);
	/* the OPT is read for NOTIMP too, so the answer carries EDNS */
	len = add_opt(b, make_query(b, DNS_OPCODE_NOTIFY << DNS_OPCODE_SHIFT, 1, 0, 1), 1232, 0,
		      false, NULL, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_NOTIMP);
	CU_ASSERT(q.edns);
}

static void test_formerr_question(void)
{
	uint8_t b[512];
	query_t q;
	size_t len = make_query(b, 0, 0, 0, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	/* QDCOUNT 0 with an OPT right after the header: FORMERR with EDNS */
	len = add_opt(b, 12, 1232, 0, false, NULL, 0);
	b[5] = 0;
	b[11] = 1;
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	CU_ASSERT(q.edns);
	CU_ASSERT_FALSE(q.has_question);
	len = make_query(b, 0, 2, 0, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	len = make_query(b, 0, 1, 0, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len - 1), QUERY_FORMERR); /* class cut */
	CU_ASSERT_FALSE(q.has_question);
	b[12] = 0xc0; /* a pointer to itself */
	b[13] = 12;
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	/* an answer record counted but missing */
	len = make_query(b, 0, 1, 1, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
}

static void test_edns(void)
{
	uint8_t b[512];
	query_t q;
	const uint8_t nsid[] = { 0, 3, 0, 0, 0, 99, 0, 1, 7 }; /* NSID, unknown option 99 */
	size_t len = add_opt(b, make_query(b, 0, 1, 0, 1), 4096, 0, true, nsid, sizeof(nsid));
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_OK);
	CU_ASSERT(q.edns);
	CU_ASSERT(q.edns_do);
	CU_ASSERT(q.nsid_requested);
	CU_ASSERT_EQUAL(q.edns_udp_size, 4096);
	CU_ASSERT_EQUAL(query_udp_limit(&q, 1232), 1232);
	len = add_opt(b, make_query(b, 0, 1, 0, 1), 100, 0, false, NULL, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_OK);
	CU_ASSERT_FALSE(q.edns_do);
	CU_ASSERT_FALSE(q.nsid_requested);
	CU_ASSERT_EQUAL(query_udp_limit(&q, 1232), 512); /* never below 512 */
}

static void test_edns_errors(void)
{
	uint8_t b[512];
	query_t q;
	size_t len = add_opt(b, make_query(b, 0, 1, 0, 1), 1232, 1, false, NULL, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_BADVERS);
	CU_ASSERT(q.edns);
	/* two OPT records */
	len = add_opt(b, make_query(b, 0, 1, 0, 2), 1232, 0, false, NULL, 0);
	len = add_opt(b, len, 1232, 0, false, NULL, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	/* OPT in the answer section */
	len = add_opt(b, make_query(b, 0, 1, 1, 0), 1232, 0, false, NULL, 0);
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	/* an option longer than the RDATA */
	const uint8_t bad[] = { 0, 3, 0, 9, 1 };
	len = add_opt(b, make_query(b, 0, 1, 0, 1), 1232, 0, false, bad, sizeof(bad));
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	/* a cookie of a length RFC 7873 does not allow */
	const uint8_t cookie[] = { 0, 10, 0, 3, 1, 2, 3 };
	len = add_opt(b, make_query(b, 0, 1, 0, 1), 1232, 0, false, cookie, sizeof(cookie));
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	/* OPT not owned by the root */
	len = make_query(b, 0, 1, 0, 1);
	const uint8_t not_root[] = { 1, 'a', 0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0 };
	memcpy(b + len, not_root, sizeof(not_root));
	CU_ASSERT_EQUAL(query_parse(&q, b, len + sizeof(not_root)), QUERY_FORMERR);
}

/*
 * RFC 7873 5.2: of several COOKIE options only the first (the one closest
 * to the header) is considered and the others are ignored, malformed or not.
 */
static void test_cookie_first_only(void)
{
	uint8_t b[512];
	query_t q;
	const uint8_t good_bad[] = { 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 0, 3, 9, 9, 9 };
	size_t len =
		add_opt(b, make_query(b, 0, 1, 0, 1), 1232, 0, false, good_bad, sizeof(good_bad));
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_OK);
	CU_ASSERT_EQUAL(q.cookie_len, 8);
	CU_ASSERT(q.cookie && q.cookie[0] == 1);
	const uint8_t two_good[] = { 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8,
				     0, 10, 0, 8, 9, 9, 9, 9, 9, 9, 9, 9 };
	len = add_opt(b, make_query(b, 0, 1, 0, 1), 1232, 0, false, two_good, sizeof(two_good));
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_OK);
	CU_ASSERT(q.cookie && q.cookie[0] == 1);
	/* the first is what counts: a malformed first one is FORMERR (RFC 7873 5.2.2) */
	const uint8_t bad_good[] = { 0, 10, 0, 3, 9, 9, 9, 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8 };
	len = add_opt(b, make_query(b, 0, 1, 0, 1), 1232, 0, false, bad_good, sizeof(bad_good));
	CU_ASSERT_EQUAL(query_parse(&q, b, len), QUERY_FORMERR);
	/*
	 * The OPT record itself is well formed: the FORMERR carries EDNS (as
	 * Knot's does), without a cookie.
	 */
	CU_ASSERT(q.edns);
	CU_ASSERT_EQUAL(q.edns_udp_size, 1232);
	CU_ASSERT_PTR_NULL(q.cookie);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_plain_query),
		UNIT_TEST(test_drop_and_notimp),
		UNIT_TEST(test_formerr_question),
		UNIT_TEST(test_edns),
		UNIT_TEST(test_edns_errors),
		UNIT_TEST(test_cookie_first_only),
		UNIT_END,
	};
	return unit_run(argc, argv, "query", tests);
}
