/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/request.c: requests parse back as written. */
#include <string.h>

#include "proto/error.h"
#include "proto/query.h"
#include "proto/request.h"
#include "proto/wire.h"
#include "unit.h"

/* An SOA record after its owner: type, class, TTL, RDLENGTH, RDATA (serial 2026). */
static size_t soa_record(uint8_t *p)
{
	static const uint8_t rdata[] = { 3,  'n',  's',  '1', 0,    2,    'h', 'm', 0, 0,
					 0,  0x07, 0xea, 0,   0,    0,    60,  0,   0, 0,
					 10, 0,    0,    0,   0x02, 0x58, 0,   0,   0, 60 };
	wire_t w;
	wire_init_write(&w, p, 64);
	wire_write_u16(&w, DNS_TYPE_SOA);
	wire_write_u16(&w, DNS_CLASS_IN);
	wire_write_u32(&w, 300);
	wire_write_u16(&w, sizeof(rdata));
	wire_write_bytes(&w, rdata, sizeof(rdata));
	return w.pos;
}

static void test_notify_and_ixfr(void)
{
	const uint8_t apex[] = "\7example\3com";
	uint8_t soa[64], buf[512];
	size_t soa_len = soa_record(soa);
	int n = request_write(buf, sizeof(buf), 0x1234, DNS_OPCODE_NOTIFY, DNS_FLAG_AA, apex,
			      DNS_TYPE_SOA, DNS_SECTION_ANSWER, soa);
	CU_ASSERT_EQUAL_FATAL(n, 12 + 13 + 4 + 2 + (int)soa_len);
	query_t q;
	CU_ASSERT_EQUAL(query_parse(&q, buf, (size_t)n), QUERY_NOTIMP); /* not a QUERY */
	CU_ASSERT_EQUAL(q.opcode, DNS_OPCODE_NOTIFY);
	CU_ASSERT_TRUE(q.flags & DNS_FLAG_AA);
	CU_ASSERT_EQUAL(q.id, 0x1234);
	CU_ASSERT_TRUE(q.has_question);
	CU_ASSERT_EQUAL(q.qtype, DNS_TYPE_SOA);
	CU_ASSERT_EQUAL(q.ancount, 1);
	CU_ASSERT_EQUAL(q.nscount, 0);
	/* the owner points at the question */
	CU_ASSERT_EQUAL(wire_get_u16(buf + q.question_end), 0xc00c);
	CU_ASSERT_EQUAL(memcmp(buf + q.question_end + 2, soa, soa_len), 0);

	n = request_write(buf, sizeof(buf), 7, DNS_OPCODE_QUERY, 0, apex, DNS_TYPE_IXFR,
			  DNS_SECTION_AUTHORITY, soa);
	CU_ASSERT_EQUAL(query_parse(&q, buf, (size_t)n), QUERY_OK);
	CU_ASSERT_EQUAL(q.qtype, DNS_TYPE_IXFR);
	CU_ASSERT_EQUAL(q.ancount, 0);
	CU_ASSERT_EQUAL(q.nscount, 1);

	n = request_write(buf, sizeof(buf), 7, DNS_OPCODE_QUERY, 0, apex, DNS_TYPE_AXFR,
			  DNS_SECTION_ANSWER, NULL);
	CU_ASSERT_EQUAL(n, 12 + 13 + 4);
	CU_ASSERT_EQUAL(query_parse(&q, buf, (size_t)n), QUERY_OK);
	CU_ASSERT_EQUAL(q.ancount + q.nscount + q.arcount, 0);
	/* too small a buffer */
	CU_ASSERT_EQUAL(request_write(buf, 20, 7, DNS_OPCODE_QUERY, 0, apex, DNS_TYPE_AXFR,
				      DNS_SECTION_ANSWER, NULL),
			SHOAL_ESPACE);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_notify_and_ixfr),
		UNIT_END,
	};
	return unit_run(argc, argv, "request", tests);
}
