/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/request.c: requests parse back as written. */
#include <string.h>

#include "proto/error.h"
#include "proto/name.h"
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

/*
 * REQUEST_MAX holds the longest request: a question of 255 octets and an
 * SOA whose MNAME and RNAME take 255 octets each (a secondary's IXFR was
 * built in 512 octets, and failed past about 440 octets of SOA names).
 */
static void test_longest(void)
{
	uint8_t qname[NAME_MAXLEN], soa[10 + 2 * NAME_MAXLEN + 20], buf[REQUEST_MAX + 1];
	for (size_t i = 0; i < 3; i++) /* three labels of 63 octets, one of 61, the root */
		memcpy(qname + 64 * i, "\77", 1), memset(qname + 64 * i + 1, 'q', 63);
	qname[192] = 61;
	memset(qname + 193, 'q', 61);
	qname[254] = 0;
	CU_ASSERT_EQUAL_FATAL(name_length(qname), NAME_MAXLEN);
	wire_t w;
	wire_init_write(&w, soa, sizeof(soa));
	wire_write_u16(&w, DNS_TYPE_SOA);
	wire_write_u16(&w, DNS_CLASS_IN);
	wire_write_u32(&w, 300);
	wire_write_u16(&w, 2 * NAME_MAXLEN + 20);
	wire_write_bytes(&w, qname, NAME_MAXLEN); /* MNAME */
	wire_write_bytes(&w, qname, NAME_MAXLEN); /* RNAME */
	for (int i = 0; i < 5; i++)
		wire_write_u32(&w, 7);
	CU_ASSERT_EQUAL_FATAL(w.err, 0);
	int n = request_write(buf, REQUEST_MAX, 1, DNS_OPCODE_QUERY, 0, qname, DNS_TYPE_IXFR,
			      DNS_SECTION_AUTHORITY, soa);
	CU_ASSERT_EQUAL(n, REQUEST_MAX);
	query_t q;
	CU_ASSERT_EQUAL(query_parse(&q, buf, (size_t)n), QUERY_OK);
	CU_ASSERT_EQUAL(q.nscount, 1);
	CU_ASSERT_EQUAL(request_write(buf, REQUEST_MAX - 1, 1, DNS_OPCODE_QUERY, 0, qname,
				      DNS_TYPE_IXFR, DNS_SECTION_AUTHORITY, soa),
			SHOAL_ESPACE);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_notify_and_ixfr),
		UNIT_TEST(test_longest),
		UNIT_END,
	};
	return unit_run(argc, argv, "request", tests);
}
