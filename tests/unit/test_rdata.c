/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/rdata.c: the layout table against ldns, and RDATA that must be refused. */
#include <ldns/ldns.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "proto/rrset.h"
#include "tests/unit/unit.h"

/* Types ldns names that are not zone data with a layout: meta types, and SINK (a draft). */
static bool skipped(uint16_t type)
{
	return rdata_type_is_meta(type) || type == 40;
}

/* Every type ldns reads in its own syntax has one layout in the table, under the same name. */
static void test_table_covers_ldns(void)
{
	int known = 0;
	for (unsigned t = 0; t <= UINT16_MAX; t++) {
		const ldns_rr_descriptor *ld = ldns_rr_descript((uint16_t)t);
		if (!ld || !ld->_name || strncmp(ld->_name, "TYPE", 4) == 0 || skipped((uint16_t)t))
			continue;
		const rdata_desc_t *d = rdata_desc((uint16_t)t);
		if (!d) {
			fprintf(stderr, "  no layout for %s (%u)\n", ld->_name, t);
			CU_FAIL("a type ldns knows has no layout");
			continue;
		}
		CU_ASSERT_STRING_EQUAL(d->name, ld->_name);
		known++;
	}
	CU_ASSERT(known >= 60);
	CU_ASSERT_PTR_NULL(rdata_desc(41));  /* OPT */
	CU_ASSERT_PTR_NULL(rdata_desc(255)); /* ANY */
	CU_ASSERT_PTR_NULL(rdata_desc(65280));
	CU_ASSERT(rdata_type_is_meta(0) && rdata_type_is_meta(41) && rdata_type_is_meta(249) &&
		  rdata_type_is_meta(255) && !rdata_type_is_meta(248) && !rdata_type_is_meta(256));
}

/* RDATA of a record in text, as ldns writes it to wire; 0 octets when it does not parse. */
static size_t wire_of(const char *text, uint16_t *type, uint8_t *out, size_t cap)
{
	ldns_rr *rr = NULL;
	if (ldns_rr_new_frm_str(&rr, text, 3600, NULL, NULL) != LDNS_STATUS_OK) {
		fprintf(stderr, "  ldns does not read: %s\n", text);
		return 0;
	}
	ldns_buffer *b = ldns_buffer_new(1024);
	size_t n = 0;
	if (b && ldns_rr_rdata2buffer_wire(b, rr) == LDNS_STATUS_OK &&
	    ldns_buffer_position(b) <= cap) {
		n = ldns_buffer_position(b);
		memcpy(out, ldns_buffer_begin(b), n);
	}
	*type = (uint16_t)ldns_rr_get_type(rr);
	ldns_buffer_free(b);
	ldns_rr_free(rr);
	return n;
}

/* A record of each kind of layout, in the syntax ldns reads, is accepted whole. */
static void test_examples_accepted(void)
{
	static const char *const examples[] = {
		"x. IN A 192.0.2.1",
		"x. IN NS ns.example.",
		"x. IN CNAME target.example.",
		"x. IN SOA ns.example. host.example. 1 2 3 4 5",
		"x. IN PTR ptr.example.",
		"x. IN HINFO \"cpu\" \"os\"",
		"x. IN MINFO a.example. b.example.",
		"x. IN MX 10 mail.example.",
		"x. IN TXT \"a\" \"\" \"c\"",
		"x. IN RP mbox.example. txt.example.",
		"x. IN AFSDB 1 afs.example.",
		"x. IN X25 \"311061700956\"",
		"x. IN ISDN \"150862028003217\" \"004\"",
		"x. IN RT 10 relay.example.",
		"x. IN AAAA 2001:db8::1",
		"x. IN LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m",
		"x. IN SRV 0 5 5060 sip.example.",
		"x. IN NAPTR 100 10 \"U\" \"E2U+sip\" \"!^.*$!sip:a@example!\" .",
		"x. IN KX 10 kx.example.",
		"x. IN CERT 1 0 0 AQID",
		"x. IN DNAME target.example.",
		"x. IN APL 1:192.0.2.0/24 !2:2001:db8::/32",
		"x. IN DS 12345 8 2 49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE5E2DC18A2E1A0D44F3BBD1D4",
		"x. IN SSHFP 1 1 123456789abcdef67890123456789abcdef67890",
		"x. IN IPSECKEY 10 1 2 192.0.2.38 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==",
		"x. IN IPSECKEY 10 3 2 gw.example. AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==",
		"x. IN RRSIG A 8 2 3600 20270101000000 20261201000000 12345 example. AQID",
		"x. IN NSEC next.example. A NS SOA RRSIG NSEC DNSKEY TYPE65280",
		"x. IN DNSKEY 257 3 8 AwEAAag=",
		"x. IN DHCID AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA=",
		"x. IN NSEC3 1 1 12 aabbccdd 2vptu5timamqttgl4luu9kg21e0aor3s A RRSIG",
		"x. IN NSEC3 1 0 0 - 2vptu5timamqttgl4luu9kg21e0aor3s",
		"x. IN NSEC3PARAM 1 0 12 aabbccdd",
		"x. IN TLSA 3 1 1 0C72AC70B745AC19998811B131D662C9AC69DBDBE7CB23E5B514B56664C5D3D6",
		"x. IN CDS 0 0 0 00",
		"x. IN OPENPGPKEY AQID",
		"x. IN CSYNC 66 3 A NS AAAA",
		("x. IN ZONEMD 2026120301 1 1 0123456789abcdef0123456789abcdef"
		 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
		"x. IN SVCB 1 svc.example. alpn=h2,h3 port=8443",
		"x. IN HTTPS 0 alias.example.",
		"x. IN SPF \"v=spf1 -all\"",
		"x. IN NID 10 0014:4fff:ff20:ee64",
		"x. IN L32 10 10.1.2.0",
		"x. IN L64 10 2001:0db8:1140:1000",
		"x. IN LP 10 l64-subnet1.example.",
		"x. IN EUI48 00-00-5e-00-53-2a",
		"x. IN EUI64 00-00-5e-ef-10-00-00-2a",
		"x. IN URI 10 1 \"ftp://ftp1.example.com/public\"",
		"x. IN CAA 0 issue \"ca.example.net\"",
		"x. IN DLV 12345 8 2 49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE5E2DC18A2E1A0D44F3BBD1D4",
		"x. IN TYPE65280 \\# 3 010203",
	};
	uint8_t rd[4096];
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		uint16_t type = 0;
		size_t n = wire_of(examples[i], &type, rd, sizeof(rd));
		CU_ASSERT(n > 0);
		const char *why = NULL;
		int rc = rdata_walk(type, rd, n, NULL, 0, &why);
		if (rc < 0)
			fprintf(stderr, "  refused: %s: %s\n", examples[i], why);
		CU_ASSERT(rc >= 0);
	}
}

/* Generic-form RDATA that NSD and Knot also refuse: fixed fields short, names cut, octets over. */
static void test_malformed_refused(void)
{
	static const struct {
		uint16_t type;
		const char *hex; /* the RDATA in hex */
	} bad[] = {
		{ 1, "" },           /* A: no address */
		{ 1, "c00002" },     /* A: 3 octets */
		{ 1, "c0000201ff" }, /* A: 5 octets */
		{ 2, "" },           /* NS: no name */
		{ 2, "026e7300"
		     "00" },       /* NS: an octet after the name */
		{ 2, "036e73" },   /* NS: the root label missing */
		{ 2, "c00c" },     /* NS: a compression pointer */
		{ 2, "446e7300" }, /* NS: label type 01 */
		{ 5, "" },         /* CNAME: no name */
		{ 39, "" },        /* DNAME: no name */
		{ 6, "0000"
		     "00000001" }, /* SOA: numbers short */
		{ 15, "000a" },    /* MX: no exchange */
		{ 15, "000a"
		      "03616263" },     /* MX: the exchange cut */
		{ 16, "" },             /* TXT: no string */
		{ 16, "0561" },         /* TXT: a string longer than what is left */
		{ 28, "20010db8" },     /* AAAA: 4 octets */
		{ 33, "0000000013c4" }, /* SRV: no target */
		{ 43, "3039"
		      "08" }, /* DS: no digest type */
		{ 46, "" },   /* RRSIG: empty */
		{ 46, "0001"
		      "0802" }, /* RRSIG: cut in the fixed fields */
		{ 47, "0000" }, /* NSEC: empty bitmap window */
		{ 47, "00"
		      "0021"
		      "0102030405060708091011121314151617181920212223242526272829303132"
		      "3334" }, /* NSEC: a window of 33 octets */
		{ 47, "00"
		      "0001"
		      "40"
		      "0001"
		      "40" }, /* NSEC: windows out of order */
		{ 50, "0101000c"
		      "00"
		      "00" }, /* NSEC3: empty next hash */
		{ 51, "0100000c"
		      "04aabb" }, /* NSEC3PARAM: salt cut */
		{ 64, "0001"
		      "00"
		      "0001"
		      "0002"
		      "6832"
		      "0001"
		      "0000" }, /* SVCB: keys out of order */
		{ 64, "0001"
		      "00"
		      "0003"
		      "0002"
		      "01" }, /* SVCB: value cut */
		{ 45, "0a"
		      "04"
		      "02" }, /* IPSECKEY: unknown gateway type */
		{ 257, "00"
		       "05"
		       "697373" },  /* CAA: tag cut */
		{ 29, "00121616" }, /* LOC: 4 of 16 octets */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t rd[256];
		size_t n = strlen(bad[i].hex) / 2;
		for (size_t k = 0; k < n; k++)
			sscanf(bad[i].hex + 2 * k, "%2hhx", &rd[k]);
		const char *why = NULL;
		int rc = rdata_walk(bad[i].type, rd, n, NULL, 0, &why);
		if (rc != SHOAL_EMALFORMED)
			fprintf(stderr, "  accepted: type %u, %s\n", bad[i].type, bad[i].hex);
		CU_ASSERT_EQUAL(rc, SHOAL_EMALFORMED);
		CU_ASSERT_PTR_NOT_NULL(why);
	}
	/* an unknown type is opaque: anything goes */
	CU_ASSERT_EQUAL(rdata_walk(65280, (const uint8_t *)"\xc0", 1, NULL, 0, NULL), 0);
}

/* The compressible names come from the same table: SOA two, MX one after the preference, SRV none.
 */
static void test_names_from_table(void)
{
	uint8_t rd[512];
	uint16_t type, off[4];
	size_t n = wire_of("x. IN SOA ns.example. host.example. 1 2 3 4 5", &type, rd, sizeof(rd));
	CU_ASSERT_EQUAL(rrtype_rdata_names(type, rd, (uint16_t)n, off, 4), 2);
	CU_ASSERT_EQUAL(off[0], 0);
	CU_ASSERT_EQUAL(off[1], 12);
	n = wire_of("x. IN MX 10 mail.example.", &type, rd, sizeof(rd));
	CU_ASSERT_EQUAL(rrtype_rdata_names(type, rd, (uint16_t)n, off, 4), 1);
	CU_ASSERT_EQUAL(off[0], 2);
	CU_ASSERT_EQUAL(rrtype_rdata_names(type, rd, (uint16_t)n, off, 0), 0);
	n = wire_of("x. IN SRV 0 5 5060 sip.example.", &type, rd, sizeof(rd));
	CU_ASSERT_EQUAL(rrtype_rdata_names(type, rd, (uint16_t)n, off, 4), 0);
	CU_ASSERT(rrtype_compressible(2) && rrtype_compressible(15) && !rrtype_compressible(33) &&
		  !rrtype_compressible(39) && !rrtype_compressible(65280));
	/* a short RDATA is malformed here too */
	CU_ASSERT_EQUAL(rrtype_rdata_names(15, rd, 2, off, 4), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(rdata_name_length((const uint8_t *)"\3abc\0", 5, 0), 5);
	CU_ASSERT_EQUAL(rdata_name_length((const uint8_t *)"\3abc\0", 4, 0), -1);
	CU_ASSERT_EQUAL(rdata_name_length((const uint8_t *)"\0", 1, 1), -1);
}

/*
 * A message holding "example.com." at offset 12 and then RDATA at offset
 * 25: rdata_unpack of it, into out. Returns what rdata_unpack returned.
 */
static int unpack(uint16_t type, const uint8_t *rd, size_t rdlen, uint8_t *out, size_t cap)
{
	uint8_t msg[600] = { 0 };
	memcpy(msg + 12, "\7example\3com", 13);
	memcpy(msg + 25, rd, rdlen);
	wire_t w;
	wire_init_read(&w, msg, 25 + rdlen);
	w.pos = 25;
	const char *why = NULL;
	int n = rdata_unpack(type, &w, (uint16_t)rdlen, out, cap, &why);
	if (n >= 0 && w.pos != 25 + rdlen)
		return -100; /* w must end up past the RDATA */
	if (n < 0 && !why && n != SHOAL_ESPACE)
		return -101; /* a refusal says why */
	return n;
}

/* Received RDATA gets its names expanded, checked by the layout table. */
static void test_unpack_received(void)
{
	uint8_t out[600];
	/* MX 10 mail.<pointer to example.com.> */
	static const uint8_t mx[] = { 0, 10, 4, 'm', 'a', 'i', 'l', 0xc0, 12 };
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_MX, mx, sizeof(mx), out, sizeof(out)), 2 + 18);
	CU_ASSERT_EQUAL(memcmp(out, "\0\12\4mail\7example\3com", 19), 0);
	/* SOA with both names pointers, then the five numbers */
	uint8_t soa[24] = { 0xc0, 12, 0xc0, 12 };
	soa[7] = 42;
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_SOA, soa, sizeof(soa), out, sizeof(out)), 13 + 13 + 20);
	CU_ASSERT_EQUAL(out[13 + 13 + 3], 42);
	/* SRV's name: compressed by some senders, expanded as RFC 3597 4 asks */
	static const uint8_t srv[] = { 0, 1, 0, 2, 0, 3, 0xc0, 12 };
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_SRV, srv, sizeof(srv), out, sizeof(out)), 6 + 13);
	/* TXT and an unknown type: copied as they are */
	static const uint8_t txt[] = { 2, 0xc0, 12, 1, 'x' };
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_TXT, txt, sizeof(txt), out, sizeof(out)), 5);
	CU_ASSERT_EQUAL(memcmp(out, txt, 5), 0);
	CU_ASSERT_EQUAL(unpack(65280, txt, sizeof(txt), out, sizeof(out)), 5);
	/* RRSIG: the signer's name, then the signature copied whole */
	uint8_t sig[18 + 13 + 4] = { 0, 1, 13, 2 };
	memcpy(sig + 18, "\7example\3com", 13);
	memcpy(sig + 31, "\xc0\x0c\1\2", 4);
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_RRSIG, sig, sizeof(sig), out, sizeof(out)),
			(int)sizeof(sig));
	CU_ASSERT_EQUAL(memcmp(out, sig, sizeof(sig)), 0);

	/* refused: a forward pointer, a loop, a name running out of the RDATA */
	static const uint8_t fwd[] = { 0xc0, 40 };
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_NS, fwd, sizeof(fwd), out, sizeof(out)), SHOAL_EMALFORMED);
	static const uint8_t self[] = { 0xc0, 25 };
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_NS, self, sizeof(self), out, sizeof(out)),
			SHOAL_EMALFORMED);
	static const uint8_t open_name[] = { 3, 'a', 'b', 'c' };
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_CNAME, open_name, sizeof(open_name), out, sizeof(out)),
			SHOAL_EMALFORMED);
	/* the layout's own checks: an A of 3 octets, octets after an MX */
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_A, mx, 3, out, sizeof(out)), SHOAL_EMALFORMED);
	static const uint8_t mx_long[] = { 0, 10, 0xc0, 12, 7 };
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_MX, mx_long, sizeof(mx_long), out, sizeof(out)),
			SHOAL_EMALFORMED);
	/* no room to expand into */
	CU_ASSERT_EQUAL(unpack(DNS_TYPE_MX, mx, sizeof(mx), out, 10), SHOAL_ESPACE);
}

/* rdata_canonical lowercases the names of the types RFC 4034 6.2 lists, and only those. */
static void test_canonical(void)
{
	uint8_t mx[] = "\0\12\4MAIL\7Example\3COM";
	CU_ASSERT_EQUAL(rdata_canonical(DNS_TYPE_MX, mx, sizeof(mx)), 0);
	CU_ASSERT(!memcmp(mx, "\0\12\4mail\7example\3com", sizeof(mx)));
	/* RFC 6840 5.1: an NSEC's next name keeps its case */
	uint8_t nsec[] = "\1B\7example\0\0\1\100";
	CU_ASSERT_EQUAL(rdata_canonical(DNS_TYPE_NSEC, nsec, sizeof(nsec) - 1), 0);
	CU_ASSERT_EQUAL(nsec[1], 'B');
	/* a type without names is left alone, a malformed RDATA refused as it was */
	uint8_t txt[] = "\2AB";
	CU_ASSERT_EQUAL(rdata_canonical(DNS_TYPE_TXT, txt, 3), 0);
	CU_ASSERT_EQUAL(txt[1], 'A');
	uint8_t bad[] = "\0\12\7MAIL";
	CU_ASSERT_EQUAL(rdata_canonical(DNS_TYPE_MX, bad, 7), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(bad[3], 'M');
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_table_covers_ldns),
		UNIT_TEST(test_examples_accepted),
		UNIT_TEST(test_malformed_refused),
		UNIT_TEST(test_names_from_table),
		UNIT_TEST(test_unpack_received),
		UNIT_TEST(test_canonical),
		UNIT_END,
	};
	return unit_run(argc, argv, "rdata", tests);
}
