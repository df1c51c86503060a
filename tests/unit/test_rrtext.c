/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for proto/rrtext.c: the line of each kind of record, and the
 * RDATA that falls back to RFC 3597's generic form. That both zone file
 * readers read every line back is tests/unit/test_xfr_write.c's.
 */
#include <string.h>

#include "proto/dns.h"
#include "proto/rrtext.h"
#include "tests/unit/unit.h"

static char line[RRTEXT_MAX + 1];

/* The line of a record of `type` at owner (text), TTL 300, with rdata[0..len). */
static const char *text_of(const char *owner, uint16_t type, const void *rdata, size_t len)
{
	uint8_t name[NAME_MAXLEN], rec[10 + 2048];
	CU_ASSERT_FATAL(name_from_text(owner, NULL, name) > 0);
	CU_ASSERT_FATAL(len <= 2048);
	wire_t w;
	wire_init_write(&w, rec, sizeof(rec));
	wire_write_u16(&w, type);
	wire_write_u16(&w, DNS_CLASS_IN);
	wire_write_u32(&w, 300);
	wire_write_u16(&w, (uint16_t)len);
	wire_write_bytes(&w, rdata, len);
	int n = rrtext_write(line, name, rec);
	line[n > 0 ? n : 0] = '\0';
	return line;
}

#define CHECK_LINE(want, ...) CU_ASSERT_STRING_EQUAL(text_of(__VA_ARGS__), want)

/* The common types field by field, names and strings escaped. */
static void test_presentation(void)
{
	CHECK_LINE("a\\,b.test.\t300\tIN\tA\t192.0.2.1\n", "a\\,b.test.", DNS_TYPE_A, "\300\0\2\1",
		   4);
	CHECK_LINE("x.test.\t300\tIN\tAAAA\t2001:db8::1\n", "x.test.", DNS_TYPE_AAAA,
		   "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\1", 16);
	CHECK_LINE("x.test.\t300\tIN\tMX\t10 Mail\\.x.\\@.\n", "x.test.", DNS_TYPE_MX,
		   "\0\12\6Mail.x\1@", 12);
	CHECK_LINE("x.test.\t300\tIN\tTXT\t\"a \\\"q\\\" \\\\ ;\\000\\255\" \"\"\n", "x.test.",
		   DNS_TYPE_TXT, "\13a \"q\" \\ ;\0\377\0", 13);
	CHECK_LINE("x.test.\t300\tIN\tSOA\tns. hm. 1 2 3 4 4294967295\n", "x.test.", DNS_TYPE_SOA,
		   "\2ns\0\2hm\0\0\0\0\1\0\0\0\2\0\0\0\3\0\0\0\4\377\377\377\377", 28);
	CHECK_LINE("*.test.\t300\tIN\tSRV\t0 5 5060 sip.\n", "*.test.", DNS_TYPE_SRV,
		   "\0\0\0\5\23\304\3sip", 11);
}

/* DNSSEC's: digests in hex, keys and signatures in base64, dates, type bit maps, base32hex. */
static void test_dnssec(void)
{
	CHECK_LINE("x.\t300\tIN\tDS\t12345 8 2 abcd\n", "x.", DNS_TYPE_DS, "\x30\x39\10\2\xab\xcd",
		   6);
	CHECK_LINE("x.\t300\tIN\tDNSKEY\t257 3 8 AQID\n", "x.", DNS_TYPE_DNSKEY, "\1\1\3\10\1\2\3",
		   7);
	CHECK_LINE("x.\t300\tIN\tRRSIG\tSOA 8 1 300 20270101000000 19700101000000 1 x. AQID\n",
		   "x.", DNS_TYPE_RRSIG,
		   "\0\6\10\1\0\0\1\54\x6b\x36\xec\x80\0\0\0\0\0\1\1x\0\1\2\3", 24);
	/* window 0: A, RRSIG, NSEC; window 255: TYPE65535 (a type no reader names) */
	CHECK_LINE("x.\t300\tIN\tNSEC\ty. A RRSIG NSEC TYPE65535\n", "x.", DNS_TYPE_NSEC,
		   "\1y\0\0\6\100\0\0\0\0\3\377\40"
		   "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1",
		   3 + 2 + 6 + 2 + 32);
	/* no salt; a 5-octet hash is 8 base32hex digits */
	CHECK_LINE("x.\t300\tIN\tNSEC3\t1 1 0 - 00000000 A\n", "x.", DNS_TYPE_NSEC3,
		   "\1\1\0\0\0\5\0\0\0\0\0\0\1\100", 14);
	CHECK_LINE("x.\t300\tIN\tNSEC3PARAM\t1 0 10 aabb\n", "x.", DNS_TYPE_NSEC3PARAM,
		   "\1\0\0\12\2\xaa\xbb", 7);
}

/* What no form here reads back the same: RFC 3597's generic form, TYPEnnn for unnamed types. */
static void test_generic(void)
{
	/* a type the scanner does not name (EID); no RDATA at all */
	CHECK_LINE("x.\t300\tIN\tTYPE31\t\\# 4 03313030\n", "x.", 31, "\003100", 4);
	CHECK_LINE("x.\t300\tIN\tTYPE10\t\\# 0\n", "x.", DNS_TYPE_NULL, "", 0);
	/* named, but no field form here (SvcParams): the name and the generic form */
	CHECK_LINE("x.\t300\tIN\tHTTPS\t\\# 3 000100\n", "x.", DNS_TYPE_HTTPS, "\0\1\0", 3);
	/* a DS without its digest: readers want one */
	CHECK_LINE("x.\t300\tIN\tDS\t\\# 4 00010802\n", "x.", DNS_TYPE_DS, "\0\1\10\2", 4);
	/* a bit map window ending in a zero octet would be read back shorter */
	CHECK_LINE("x.\t300\tIN\tNSEC\t\\# 7 01790000024000\n", "x.", DNS_TYPE_NSEC,
		   "\1y\0\0\2\100\0", 7);
	/* an NSEC3 hash of 4 octets: the scanner reads base32 in groups of 5 */
	CHECK_LINE("x.\t300\tIN\tNSEC3\t\\# 13 010000000004aabbccdd000140\n", "x.", DNS_TYPE_NSEC3,
		   "\1\0\0\0\0\4\xaa\xbb\xcc\xdd\0\1\100", 13);
	/* a blank every 32 octets */
	uint8_t big[40];
	memset(big, 0xab, sizeof(big));
	const char *t = text_of("x.", 65280, big, sizeof(big));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\tTYPE65280\t\\# 40 abababab"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "abab abababab"));
	/* RDATA that does not fit its type's layout is refused */
	uint8_t name[] = "\1x", rec[14] = { 0, 1, 0, 1, 0, 0, 1, 44, 0, 3, 1, 2, 3 };
	CU_ASSERT_EQUAL(rrtext_write(line, name, rec), SHOAL_EMALFORMED);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_presentation),
		UNIT_TEST(test_dnssec),
		UNIT_TEST(test_generic),
		UNIT_END,
	};
	return unit_run(argc, argv, "rrtext", tests);
}
