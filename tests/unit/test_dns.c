/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/dns.c: the rcode name table. */
#include <stdint.h>

#include "proto/dns.h"
#include "tests/unit/unit.h"

static void test_rcode_names(void)
{
	char buf[DNS_RCODE_TEXT_MAX];
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(DNS_RCODE_NOERROR, buf), "NOERROR");
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(DNS_RCODE_NXRRSET, buf), "NXRRSET");
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(DNS_RCODE_NOTZONE, buf), "NOTZONE");
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(DNS_RCODE_BADVERS, buf), "BADVERS");
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(DNS_RCODE_BADCOOKIE, buf), "BADCOOKIE");
}

/* An rcode without a name is written out by number, into the caller's buffer. */
static void test_rcode_unnamed(void)
{
	char buf[DNS_RCODE_TEXT_MAX];
	CU_ASSERT_PTR_EQUAL(dns_rcode_name(11, buf), buf);
	CU_ASSERT_STRING_EQUAL(buf, "RCODE11");
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(DNS_RCODE_MAX, buf), "RCODE24");
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(4095, buf), "RCODE4095");
	CU_ASSERT_STRING_EQUAL(dns_rcode_name(UINT32_MAX, buf), "RCODE4294967295");
}

/* The TSIG Error field shares the RCODE space but for 16: BADSIG there (RFC 6895 2.3). */
static void test_tsig_error_names(void)
{
	char buf[DNS_RCODE_TEXT_MAX];
	CU_ASSERT_STRING_EQUAL(dns_tsig_error_name(DNS_TSIG_BADSIG, buf), "BADSIG");
	CU_ASSERT_STRING_EQUAL(dns_tsig_error_name(DNS_TSIG_BADKEY, buf), "BADKEY");
	CU_ASSERT_STRING_EQUAL(dns_tsig_error_name(DNS_TSIG_BADTIME, buf), "BADTIME");
	CU_ASSERT_STRING_EQUAL(dns_tsig_error_name(DNS_TSIG_BADTRUNC, buf), "BADTRUNC");
	CU_ASSERT_STRING_EQUAL(dns_tsig_error_name(DNS_TSIG_NOERROR, buf), "NOERROR");
	CU_ASSERT_STRING_EQUAL(dns_tsig_error_name(DNS_RCODE_NOTAUTH, buf), "NOTAUTH");
	CU_ASSERT_PTR_EQUAL(dns_tsig_error_name(19, buf), buf);
	CU_ASSERT_STRING_EQUAL(buf, "RCODE19");
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_rcode_names),
		UNIT_TEST(test_rcode_unnamed),
		UNIT_TEST(test_tsig_error_names),
		UNIT_END,
	};
	return unit_run(argc, argv, "dns", tests);
}
