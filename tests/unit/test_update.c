/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/update.c: each prerequisite and update kind, and malformed UPDATEs. */
#include <string.h>

#include "proto/dns.h"
#include "proto/update.h"
#include "tests/unit/unit.h"
#include "tests/unit/update_msg.h"

static update_rr_t scratch;

#define IN   DNS_CLASS_IN
#define ANY  DNS_CLASS_ANY
#define NONE DNS_CLASS_NONE

static const uint8_t a_rdata[4] = { 192, 0, 2, 1 };

/* Parse u; the rcode. */
static int parse(umsg_t *u, update_msg_t *m)
{
	size_t len = umsg_end(u);
	const char *why = NULL;
	int rc = update_parse(m, u->b, len, &scratch, &why);
	CU_ASSERT((rc == DNS_RCODE_NOERROR) == (why == NULL));
	return rc;
}

/* The ops of section s in order into ops; their count. */
static int ops_of(const update_msg_t *m, enum update_section s, int *ops, int max)
{
	update_iter_t it;
	update_iter_init(&it, m, s);
	int n = 0, rc;
	while ((rc = update_iter_next(&it, &scratch, NULL)) > 0 && n < max)
		ops[n++] = scratch.op;
	CU_ASSERT_EQUAL(rc, 0);
	return n;
}

/* Every prerequisite kind of RFC 2136 2.4 and every update kind of 2.5. */
static void test_all_kinds(void)
{
	umsg_t u;
	umsg_start(&u, "Example.com.", IN);
	umsg_rr(&u, 1, "www.example.com.", NULL, DNS_TYPE_A, ANY, 0, NULL, 0);
	umsg_rr(&u, 1, "www.example.com.", NULL, DNS_TYPE_A, IN, 0, a_rdata, 4);
	umsg_rr(&u, 1, "new.example.com.", NULL, DNS_TYPE_A, NONE, 0, NULL, 0);
	umsg_rr(&u, 1, "www.example.com.", NULL, DNS_TYPE_ANY, ANY, 0, NULL, 0);
	umsg_rr(&u, 1, "new.example.com.", NULL, DNS_TYPE_ANY, NONE, 0, NULL, 0);
	umsg_rr(&u, 2, "new.EXAMPLE.com.", NULL, DNS_TYPE_A, IN, 300, a_rdata, 4);
	umsg_rr(&u, 2, "www.example.com.", NULL, DNS_TYPE_TXT, ANY, 0, NULL, 0);
	umsg_rr(&u, 2, "old.example.com.", NULL, DNS_TYPE_ANY, ANY, 0, NULL, 0);
	umsg_rr(&u, 2, "www.example.com.", NULL, DNS_TYPE_A, NONE, 0, a_rdata, 4);
	update_msg_t m;
	CU_ASSERT_EQUAL_FATAL(parse(&u, &m), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(m.zone_len, 13);
	CU_ASSERT_EQUAL(memcmp(m.zone, "\7example\3com", 13), 0);
	CU_ASSERT_EQUAL(m.zclass, IN);
	CU_ASSERT_EQUAL(m.prcount, 5);
	CU_ASSERT_EQUAL(m.upcount, 4);
	int ops[8];
	CU_ASSERT_EQUAL_FATAL(ops_of(&m, UPDATE_SECTION_PREREQ, ops, 8), 5);
	CU_ASSERT_EQUAL(ops[0], UPDATE_PREREQ_YXRRSET);
	CU_ASSERT_EQUAL(ops[1], UPDATE_PREREQ_YXRRSET_RDATA);
	CU_ASSERT_EQUAL(ops[2], UPDATE_PREREQ_NXRRSET);
	CU_ASSERT_EQUAL(ops[3], UPDATE_PREREQ_YXDOMAIN);
	CU_ASSERT_EQUAL(ops[4], UPDATE_PREREQ_NXDOMAIN);
	CU_ASSERT_EQUAL_FATAL(ops_of(&m, UPDATE_SECTION_UPDATE, ops, 8), 4);
	CU_ASSERT_EQUAL(ops[0], UPDATE_ADD);
	CU_ASSERT_EQUAL(ops[1], UPDATE_DEL_RRSET);
	CU_ASSERT_EQUAL(ops[2], UPDATE_DEL_NAME);
	CU_ASSERT_EQUAL(ops[3], UPDATE_DEL_RR);
	/* the owner comes back lowercase, the TTL and RDATA as sent */
	update_iter_t it;
	update_iter_init(&it, &m, UPDATE_SECTION_UPDATE);
	CU_ASSERT_EQUAL(update_iter_next(&it, &scratch, NULL), 1);
	CU_ASSERT_EQUAL(memcmp(scratch.owner, "\3new\7example\3com", 17), 0);
	CU_ASSERT_EQUAL(scratch.ttl, 300);
	CU_ASSERT_EQUAL(scratch.rdlen, 4);
	CU_ASSERT_EQUAL(memcmp(scratch.rdata, a_rdata, 4), 0);
	CU_ASSERT_STRING_EQUAL(update_op_name(UPDATE_DEL_RR), "delete RR");
}

/* A compressed owner and a compressed name in RDATA are read uncompressed. */
static void test_compression(void)
{
	umsg_t u;
	umsg_start(&u, "example.com.", IN);
	/* owner www + pointer to the zone name at 12; MX 10 mail + pointer */
	static const uint8_t owner[] = { 3, 'w', 'w', 'w', 0xc0, 12 };
	wire_write_bytes(&u.w, owner, sizeof(owner));
	wire_write_u16(&u.w, DNS_TYPE_MX);
	wire_write_u16(&u.w, IN);
	wire_write_u32(&u.w, 60);
	static const uint8_t mx[] = { 0, 10, 4, 'm', 'a', 'i', 'l', 0xc0, 12 };
	wire_write_u16(&u.w, sizeof(mx));
	wire_write_bytes(&u.w, mx, sizeof(mx));
	u.count[2] = 1;
	update_msg_t m;
	CU_ASSERT_EQUAL_FATAL(parse(&u, &m), DNS_RCODE_NOERROR);
	update_iter_t it;
	update_iter_init(&it, &m, UPDATE_SECTION_UPDATE);
	CU_ASSERT_EQUAL_FATAL(update_iter_next(&it, &scratch, NULL), 1);
	CU_ASSERT_EQUAL(memcmp(scratch.owner, "\3www\7example\3com", 17), 0);
	CU_ASSERT_EQUAL(scratch.rdlen, 2 + 18);
	CU_ASSERT_EQUAL(memcmp(scratch.rdata + 2, "\4mail\7example\3com", 18), 0);
}

/* The zone section: one zone of type SOA in a data class (RFC 2136 3.1.1). */
static void test_zone_section(void)
{
	umsg_t u;
	update_msg_t m;
	umsg_start(&u, "example.com.", IN);
	u.count[0] = 0;
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	umsg_start(&u, "example.com.", IN);
	u.count[0] = 2;
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	umsg_start(&u, "example.com.", ANY);
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	umsg_start(&u, "example.com.", IN);
	wire_put_u16_at(&u.w, u.w.pos - 4, DNS_TYPE_A); /* ZTYPE */
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	/* a response, or another opcode, is not an UPDATE */
	umsg_start(&u, "example.com.", IN);
	wire_put_u16_at(&u.w, 2, DNS_FLAG_QR | DNS_OPCODE_UPDATE << DNS_OPCODE_SHIFT);
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	umsg_start(&u, "example.com.", IN);
	wire_put_u16_at(&u.w, 2, 0);
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	/* shorter than a header, or than its zone */
	const char *why = NULL;
	CU_ASSERT_EQUAL(update_parse(&m, u.b, 7, &scratch, &why), DNS_RCODE_FORMERR);
	CU_ASSERT_PTR_NOT_NULL(why);
	umsg_start(&u, "example.com.", IN);
	size_t len = umsg_end(&u);
	CU_ASSERT_EQUAL(update_parse(&m, u.b, len - 1, &scratch, NULL), DNS_RCODE_FORMERR);
	CU_ASSERT_EQUAL(update_parse(&m, u.b, len, &scratch, NULL), DNS_RCODE_NOERROR);
}

/* One record that makes the whole message FORMERR or NOTZONE. */
typedef struct bad_rr {
	int section;
	const char *owner;
	uint16_t type, rclass;
	uint32_t ttl;
	uint16_t rdlen; /* of a_rdata (3: malformed A) */
	int rcode;
} bad_rr_t;

static void test_bad_records(void)
{
	static const bad_rr_t bad[] = {
		/* RFC 2136 3.2.1: a prerequisite has TTL 0, class ANY/NONE no RDATA */
		{ 1, "www.example.com.", DNS_TYPE_A, ANY, 1, 0, DNS_RCODE_FORMERR },
		{ 1, "www.example.com.", DNS_TYPE_A, ANY, 0, 4, DNS_RCODE_FORMERR },
		{ 1, "www.example.com.", DNS_TYPE_ANY, NONE, 0, 4, DNS_RCODE_FORMERR },
		{ 1, "www.example.com.", DNS_TYPE_ANY, IN, 0, 0, DNS_RCODE_FORMERR },
		{ 1, "www.example.com.", DNS_TYPE_AXFR, ANY, 0, 0, DNS_RCODE_FORMERR },
		{ 1, "www.example.com.", DNS_TYPE_A, DNS_CLASS_CH, 0, 4, DNS_RCODE_FORMERR },
		{ 1, "www.example.org.", DNS_TYPE_A, ANY, 0, 0, DNS_RCODE_NOTZONE },
		/* RFC 2136 3.4.1.3 */
		{ 2, "www.example.com.", DNS_TYPE_ANY, IN, 0, 0, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_AXFR, IN, 0, 0, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_MAILA, ANY, 0, 0, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_A, ANY, 300, 0, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_A, ANY, 0, 4, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_A, NONE, 300, 4, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_ANY, NONE, 0, 0, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_A, DNS_CLASS_CH, 0, 4, DNS_RCODE_FORMERR },
		{ 2, "www.example.com.", DNS_TYPE_A, IN, 300, 3, DNS_RCODE_FORMERR },
		{ 2, "com.", DNS_TYPE_A, IN, 300, 4, DNS_RCODE_NOTZONE },
		{ 2, "wwwexample.com.", DNS_TYPE_A, ANY, 0, 0, DNS_RCODE_NOTZONE },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const bad_rr_t *b = &bad[i];
		umsg_t u;
		update_msg_t m;
		umsg_start(&u, "example.com.", IN);
		/* a good record before the bad one, in the other section too */
		umsg_rr(&u, 1, "www.example.com.", NULL, DNS_TYPE_A, ANY, 0, NULL, 0);
		if (b->section == 2)
			umsg_rr(&u, 2, "x.example.com.", NULL, DNS_TYPE_A, IN, 9, a_rdata, 4);
		umsg_rr(&u, b->section, b->owner, NULL, b->type, b->rclass, b->ttl, a_rdata,
			b->rdlen);
		if (b->section == 1)
			umsg_rr(&u, 2, "x.example.com.", NULL, DNS_TYPE_A, IN, 9, a_rdata, 4);
		int rc = parse(&u, &m);
		if (rc != b->rcode)
			fprintf(stderr, "case %zu: rcode %d, want %d\n", i, rc, b->rcode);
		CU_ASSERT_EQUAL(rc, b->rcode);
	}
}

/* Counts that promise more records than the message holds; a record cut short. */
static void test_truncated(void)
{
	umsg_t u;
	update_msg_t m;
	umsg_start(&u, "example.com.", IN);
	umsg_rr(&u, 2, "x.example.com.", NULL, DNS_TYPE_A, IN, 9, a_rdata, 4);
	u.count[2] = 2;
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	umsg_start(&u, "example.com.", IN);
	umsg_rr(&u, 1, "x.example.com.", NULL, DNS_TYPE_A, ANY, 0, NULL, 0);
	u.count[1] = 3;
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
	umsg_start(&u, "example.com.", IN);
	umsg_rr(&u, 2, "x.example.com.", NULL, DNS_TYPE_A, IN, 9, a_rdata, 4);
	size_t len = umsg_end(&u);
	for (size_t cut = 1; cut < 4 + 14 + 10; cut++)
		CU_ASSERT_EQUAL(update_parse(&m, u.b, len - cut, &scratch, NULL),
				DNS_RCODE_FORMERR);
	/* an RDLENGTH past the end */
	wire_put_u16_at(&u.w, len - 6, 200);
	CU_ASSERT_EQUAL(update_parse(&m, u.b, len, &scratch, NULL), DNS_RCODE_FORMERR);
	/* an owner whose pointer loops */
	umsg_start(&u, "example.com.", IN);
	size_t at = u.w.pos;
	static const uint8_t loop[] = { 0xc0, 0 };
	wire_write_bytes(&u.w, loop, 2);
	wire_put_u16_at(&u.w, at, (uint16_t)(0xc000 | at));
	wire_write_u16(&u.w, DNS_TYPE_A);
	wire_write_u16(&u.w, ANY);
	wire_write_u32(&u.w, 0);
	wire_write_u16(&u.w, 0);
	u.count[2] = 1;
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_FORMERR);
}

/* An empty UPDATE (no prerequisite, no update) is well formed. */
static void test_empty(void)
{
	umsg_t u;
	update_msg_t m;
	umsg_start(&u, "example.com.", IN);
	CU_ASSERT_EQUAL(parse(&u, &m), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(m.prcount + m.upcount, 0);
	int ops[1];
	CU_ASSERT_EQUAL(ops_of(&m, UPDATE_SECTION_UPDATE, ops, 1), 0);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_all_kinds),
		UNIT_TEST(test_compression),
		UNIT_TEST(test_zone_section),
		UNIT_TEST(test_bad_records),
		UNIT_TEST(test_truncated),
		UNIT_TEST(test_empty),
		UNIT_END,
	};
	return unit_run(argc, argv, "update", tests);
}
