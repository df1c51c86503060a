/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/response.c: layout, compression, rollback, truncation, OPT. */
#include <ldns/ldns.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "proto/response.h"
#include "tests/unit/unit.h"

static uint8_t qbuf[512];
static query_t query;

/* Parse a query for NAME/TYPE made by ldns, with EDNS when edns != 0. */
static void make_query(const char *name, ldns_rr_type type, uint16_t edns)
{
	ldns_pkt *p = NULL;
	CU_ASSERT_FATAL(ldns_pkt_query_new_frm_str(&p, name, type, LDNS_RR_CLASS_IN, LDNS_RD) ==
			LDNS_STATUS_OK);
	ldns_pkt_set_id(p, 4242);
	if (edns)
		ldns_pkt_set_edns_udp_size(p, edns);
	uint8_t *wire = NULL;
	size_t len = 0;
	CU_ASSERT_FATAL(ldns_pkt2wire(&wire, p, &len) == LDNS_STATUS_OK);
	memcpy(qbuf, wire, len);
	free(wire);
	ldns_pkt_free(p);
	CU_ASSERT_FATAL(query_parse(&query, qbuf, len) == QUERY_OK);
}

/* One RRset of `n` RRs of `type` with the given RDATA. */
typedef struct test_set {
	uint8_t data[2048];
	uint16_t names[16];
	rrset_wire_t set;
} test_set_t;

static void set_init(test_set_t *s, uint16_t type)
{
	memset(s, 0, sizeof(*s));
	s->set.type = type;
	s->set.data = s->data;
	s->set.names = s->names;
}

static void set_add(test_set_t *s, uint32_t ttl, const uint8_t *rdata, uint16_t rdlen)
{
	wire_t w;
	wire_init_write(&w, s->data + s->set.data_len, sizeof(s->data) - s->set.data_len);
	wire_write_u16(&w, s->set.type);
	wire_write_u16(&w, DNS_CLASS_IN);
	wire_write_u32(&w, ttl);
	wire_write_u16(&w, rdlen);
	wire_write_bytes(&w, rdata, rdlen);
	CU_ASSERT_FATAL(w.err == 0);
	uint16_t offs[4];
	int n = rrtype_rdata_names(s->set.type, rdata, rdlen, offs, 4);
	CU_ASSERT_FATAL(n >= 0);
	for (int i = 0; i < n; i++)
		s->names[s->set.name_count++] = (uint16_t)(s->set.data_len + 10 + offs[i]);
	s->set.data_len += (uint32_t)w.pos;
	s->set.rr_count++;
}

static ldns_pkt *parse(const uint8_t *buf, int len)
{
	ldns_pkt *p = NULL;
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_FATAL(ldns_wire2pkt(&p, buf, (size_t)len) == LDNS_STATUS_OK);
	return p;
}

static void test_header_and_question(void)
{
	make_query("WwW.ExAmple.com.", LDNS_RR_TYPE_A, 0);
	uint8_t out[512];
	response_t r;
	CU_ASSERT_EQUAL(response_init(&r, &query, out, sizeof(out), 512, 0), 0);
	response_set_flags(&r, DNS_FLAG_AA);
	response_set_rcode(&r, DNS_RCODE_NXDOMAIN);
	int len = response_finish(&r, NULL);
	CU_ASSERT_EQUAL(len, 33);
	/* the question comes back byte for byte: 0x20 case survives */
	CU_ASSERT_EQUAL(memcmp(out + 12, qbuf + 12, 21), 0);
	CU_ASSERT_EQUAL(out[0], 4242 >> 8);
	CU_ASSERT_EQUAL(out[1], 4242 & 0xff);
	uint16_t flags = wire_get_u16(out + 2);
	CU_ASSERT_EQUAL(flags, DNS_FLAG_QR | DNS_FLAG_AA | DNS_FLAG_RD | DNS_RCODE_NXDOMAIN);
	CU_ASSERT_EQUAL(wire_get_u16(out + 4), 1);
	/* CD is not copied into the answer, as NSD and Knot answer */
	qbuf[3] |= 0x10;
	CU_ASSERT_FATAL(query_parse(&query, qbuf, 33) == QUERY_OK);
	response_init(&r, &query, out, sizeof(out), 512, 0);
	CU_ASSERT_EQUAL(response_finish(&r, NULL), 33);
	CU_ASSERT_EQUAL(wire_get_u16(out + 2) & DNS_FLAG_CD, 0);
}

static void test_compression(void)
{
	make_query("www.example.com.", LDNS_RR_TYPE_MX, 0);
	uint8_t out[512];
	response_t r;
	response_init(&r, &query, out, sizeof(out), 512, 0);
	test_set_t mx;
	set_init(&mx, DNS_TYPE_MX);
	uint8_t rd[300] = { 0, 10 };
	int n = name_from_text("mail.example.com.", NULL, rd + 2);
	set_add(&mx, 300, rd, (uint16_t)(n + 2));
	n = name_from_text("mail.example.net.", NULL, rd + 2);
	set_add(&mx, 300, rd, (uint16_t)(n + 2));
	uint8_t owner[NAME_MAXLEN];
	name_from_text("www.example.com.", NULL, owner);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ANSWER, owner, &mx.set), 0);
	int len = response_finish(&r, NULL);
	/* owner: pointer to 12; first MX: "mail" + pointer to example.com */
	CU_ASSERT_EQUAL(out[33], 0xc0);
	CU_ASSERT_EQUAL(out[34], 12);
	CU_ASSERT_EQUAL(wire_get_u16(out + 43), 2 + 5 + 2);
	ldns_pkt *p = parse(out, len);
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p), 2);
	ldns_rr *rr = ldns_rr_list_rr(ldns_pkt_answer(p), 0);
	char *s = ldns_rr2str(rr);
	CU_ASSERT_STRING_EQUAL(s, "www.example.com.\t300\tIN\tMX\t10 mail.example.com.\n");
	free(s);
	s = ldns_rr2str(ldns_rr_list_rr(ldns_pkt_answer(p), 1));
	CU_ASSERT_STRING_EQUAL(s, "www.example.com.\t300\tIN\tMX\t10 mail.example.net.\n");
	free(s);
	ldns_pkt_free(p);
}

/*
 * An owner that is the question's own octets (the client's case, as the
 * answer path passes it) is a pointer to the question, and reads back in
 * that case; the same name from elsewhere is compressed the same way.
 */
static void test_owner_is_question(void)
{
	make_query("WwW.ExAmple.com.", LDNS_RR_TYPE_A, 0);
	uint8_t out[512];
	response_t r;
	response_init(&r, &query, out, sizeof(out), 512, 0);
	test_set_t a;
	set_init(&a, DNS_TYPE_A);
	set_add(&a, 300, (const uint8_t *)"\xc0\x00\x02\x01", 4);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ANSWER, qbuf + 12, &a.set), 0);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ANSWER, query.qname, &a.set), 0);
	int len = response_finish(&r, NULL);
	CU_ASSERT_EQUAL(len, 33 + 2 * 16);
	CU_ASSERT_EQUAL(wire_get_u16(out + 33), 0xc000 | 12);
	CU_ASSERT_EQUAL(wire_get_u16(out + 49), 0xc000 | 12);
	ldns_pkt *p = parse(out, len);
	char *str = ldns_rr2str(ldns_rr_list_rr(ldns_pkt_answer(p), 0));
	CU_ASSERT_STRING_EQUAL(str, "WwW.ExAmple.com.\t300\tIN\tA\t192.0.2.1\n");
	free(str);
	ldns_pkt_free(p);
}

static void test_no_compression_for_new_types(void)
{
	make_query("example.com.", LDNS_RR_TYPE_SRV, 0);
	uint8_t out[512];
	response_t r;
	response_init(&r, &query, out, sizeof(out), 512, 0);
	test_set_t srv;
	set_init(&srv, DNS_TYPE_SRV);
	uint8_t rd[300] = { 0, 1, 0, 2, 0, 3 };
	int n = name_from_text("example.com.", NULL, rd + 6);
	set_add(&srv, 60, rd, (uint16_t)(n + 6));
	CU_ASSERT_EQUAL(srv.set.name_count, 0);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ANSWER, query.qname, &srv.set), 0);
	int len = response_finish(&r, NULL);
	/* RFC 3597 4: the target is written whole */
	CU_ASSERT_EQUAL(memcmp(out + len - 13, "\7example\3com\0", 13), 0);
}

static void test_rollback_on_space(void)
{
	make_query("example.com.", LDNS_RR_TYPE_TXT, 0);
	uint8_t out[512];
	response_t r;
	response_init(&r, &query, out, sizeof(out), 200, 0);
	test_set_t txt;
	set_init(&txt, DNS_TYPE_TXT);
	uint8_t rd[101];
	rd[0] = 100;
	memset(rd + 1, 'x', 100);
	set_add(&txt, 60, rd, sizeof(rd));
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ANSWER, query.qname, &txt.set), 0);
	uint8_t copy[512];
	memcpy(copy, out, sizeof(copy));
	response_mark_t before = response_mark(&r);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_AUTHORITY, query.qname, &txt.set),
			SHOAL_ESPACE);
	response_mark_t after = response_mark(&r);
	CU_ASSERT_EQUAL(before.pos, after.pos);
	CU_ASSERT_EQUAL(memcmp(before.counts, after.counts, sizeof(before.counts)), 0);
	CU_ASSERT_EQUAL(r.w.err, 0);
	int len = response_finish(&r, NULL);
	CU_ASSERT_EQUAL(memcmp(out + 12, copy + 12, (size_t)len - 12), 0);
	CU_ASSERT_EQUAL(wire_get_u16(out + 6), 1);
	CU_ASSERT_EQUAL(wire_get_u16(out + 8), 0);
	response_truncate(&r);
	len = response_finish(&r, NULL);
	CU_ASSERT_EQUAL(len, 29);
	CU_ASSERT(wire_get_u16(out + 2) & DNS_FLAG_TC);
	CU_ASSERT_EQUAL(wire_get_u16(out + 6), 0);
}

/* The text of record i of the answer section, in ldns's presentation. */
static bool answer_is(ldns_pkt *p, size_t i, const char *text)
{
	char *s = ldns_rr2str(ldns_rr_list_rr(ldns_pkt_answer(p), i));
	bool same = s && strcmp(s, text) == 0;
	if (!same)
		fprintf(stderr, "  record %zu: %s  not %s", i, s, text);
	free(s);
	return same;
}

/*
 * Add the records of `type` with RDATA rd[k][0..len[k]) for k below n to
 * owner (text), compressed by path. Owners and RRsets stay in place
 * until the message is finished, as the path asks: names[*used] and sets
 * the caller keeps.
 */
static int add_path(response_t *r, response_path_t *path, const char *owner, uint16_t type,
		    const uint8_t *const *rd, const size_t *len, int n,
		    uint8_t names[][NAME_MAXLEN], test_set_t *sets, int *used)
{
	test_set_t *s = &sets[*used];
	set_init(s, type);
	for (int k = 0; k < n; k++)
		set_add(s, 60, rd[k], (uint16_t)len[k]);
	uint8_t *o = names[(*used)++];
	CU_ASSERT_FATAL(name_from_text(owner, NULL, o) > 0);
	rrset_pos_t pos = { 0 };
	return response_add_rrs(r, path, DNS_SECTION_ANSWER, o, &s->set, &pos);
}

/* add_path of one record. */
static int add_one(response_t *r, response_path_t *path, const char *owner, uint16_t type,
		   const uint8_t *rd, size_t len, uint8_t names[][NAME_MAXLEN], test_set_t *sets,
		   int *used)
{
	return add_path(r, path, owner, type, &rd, &len, 1, names, sets, used);
}

/* A message for the path tests: the AXFR of example.com., limit octets. */
static void path_message(response_t *r, response_path_t *path, uint8_t *out, size_t limit)
{
	make_query("example.com.", LDNS_RR_TYPE_AXFR, 0);
	response_init(r, &query, out, limit, limit, 0);
	response_path_init(path);
}

/*
 * Compression by path (zone transfers): owners in canonical order point
 * to their parent's octets; a name in RDATA points to the owner's suffix
 * or to a name in RDATA before it; case is kept, octet for octet.
 */
static void test_path_compression(void)
{
	static uint8_t names[16][NAME_MAXLEN];
	static test_set_t sets[16];
	int used = 0;
	uint8_t out[1024], mx[300] = { 0, 10 }, ns[NAME_MAXLEN];
	response_t r;
	response_path_t path;
	path_message(&r, &path, out, sizeof(out));
	const uint8_t a[4] = { 192, 0, 2, 1 };
	CU_ASSERT_EQUAL(add_one(&r, &path, "example.com.", DNS_TYPE_A, a, 4, names, sets, &used),
			0);
	size_t apex = 12 + 17; /* after the question, written whole */
	CU_ASSERT_EQUAL(add_one(&r, &path, "a.example.com.", DNS_TYPE_A, a, 4, names, sets, &used),
			0);
	size_t at_a = apex + 13 + 14;
	CU_ASSERT_EQUAL(memcmp(out + at_a, "\1a", 2), 0);
	CU_ASSERT_EQUAL(wire_get_u16(out + at_a + 2), 0xc000 | apex);
	CU_ASSERT_EQUAL(
		add_one(&r, &path, "b.a.example.com.", DNS_TYPE_A, a, 4, names, sets, &used), 0);
	size_t at_b = at_a + 4 + 14;
	CU_ASSERT_EQUAL(memcmp(out + at_b, "\1b", 2), 0);
	CU_ASSERT_EQUAL(wire_get_u16(out + at_b + 2), 0xc000 | at_a);
	/* MX under c: "mail" and the apex's octets */
	int n = name_from_text("mail.example.com.", NULL, mx + 2);
	CU_ASSERT_EQUAL(add_one(&r, &path, "c.example.com.", DNS_TYPE_MX, mx, (size_t)n + 2, names,
				sets, &used),
			0);
	size_t at_c = at_b + 4 + 14;
	CU_ASSERT_EQUAL(wire_get_u16(out + at_c + 4 + 8), 2 + 5 + 2);
	CU_ASSERT_EQUAL(wire_get_u16(out + at_c + 4 + 10 + 2 + 5), 0xc000 | apex);
	/* NS elsewhere, twice: the second points to the first's other.net */
	n = name_from_text("ns1.other.net.", NULL, ns);
	CU_ASSERT_EQUAL(add_one(&r, &path, "d.example.com.", DNS_TYPE_NS, ns, (size_t)n, names,
				sets, &used),
			0);
	size_t at_ns1 = at_c + 4 + 10 + 9 + 4 + 10;
	n = name_from_text("ns2.other.net.", NULL, ns);
	CU_ASSERT_EQUAL(add_one(&r, &path, "e.example.com.", DNS_TYPE_NS, ns, (size_t)n, names,
				sets, &used),
			0);
	size_t at_ns2 = at_ns1 + 15 + 4 + 10;
	CU_ASSERT_EQUAL(wire_get_u16(out + at_ns2 - 2), 4 + 2);
	CU_ASSERT_EQUAL(wire_get_u16(out + at_ns2 + 4), 0xc000 | (at_ns1 + 4));
	/* a name in another case is not the same octets: written whole, as it is */
	n = name_from_text("Mail.Example.COM.", NULL, mx + 2);
	CU_ASSERT_EQUAL(add_one(&r, &path, "f.example.com.", DNS_TYPE_MX, mx, (size_t)n + 2, names,
				sets, &used),
			0);
	int len = response_finish(&r, NULL);
	CU_ASSERT_EQUAL(len, (int)(at_ns2 + 6 + 4 + 10 + 2 + 18));
	ldns_pkt *p = parse(out, len);
	CU_ASSERT_TRUE(answer_is(p, 0, "example.com.\t60\tIN\tA\t192.0.2.1\n"));
	CU_ASSERT_TRUE(answer_is(p, 2, "b.a.example.com.\t60\tIN\tA\t192.0.2.1\n"));
	CU_ASSERT_TRUE(answer_is(p, 3, "c.example.com.\t60\tIN\tMX\t10 mail.example.com.\n"));
	CU_ASSERT_TRUE(answer_is(p, 5, "e.example.com.\t60\tIN\tNS\tns2.other.net.\n"));
	CU_ASSERT_TRUE(answer_is(p, 6, "f.example.com.\t60\tIN\tMX\t10 Mail.Example.COM.\n"));
	ldns_pkt_free(p);
}

/*
 * A record that does not fit is taken back, and with it the suffixes it
 * wrote, of its owner and of names in its RDATA: the next names may not
 * point into octets written over since.
 */
static void test_path_rollback(void)
{
	static uint8_t names[8][NAME_MAXLEN];
	static test_set_t sets[8];
	int used = 0;
	uint8_t out[512], txt[101] = { 100 }, ns[NAME_MAXLEN];
	memset(txt + 1, 'x', 100);
	response_t r;
	response_path_t path;
	/* an owner: v.w.x.y written for a TXT that does not fit, then t.v.w.x.y */
	path_message(&r, &path, out, 150);
	const uint8_t a[4] = { 192, 0, 2, 1 };
	CU_ASSERT_EQUAL(add_one(&r, &path, "example.com.", DNS_TYPE_A, a, 4, names, sets, &used),
			0);
	CU_ASSERT_EQUAL(
		add_one(&r, &path, "w.x.y.example.com.", DNS_TYPE_A, a, 4, names, sets, &used), 0);
	CU_ASSERT_EQUAL(add_one(&r, &path, "v.w.x.y.example.com.", DNS_TYPE_TXT, txt, sizeof(txt),
				names, sets, &used),
			SHOAL_ESPACE);
	CU_ASSERT_EQUAL(
		add_one(&r, &path, "t.v.w.x.y.example.com.", DNS_TYPE_A, a, 4, names, sets, &used),
		0);
	ldns_pkt *p = parse(out, response_finish(&r, NULL));
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p), 3);
	CU_ASSERT_TRUE(answer_is(p, 2, "t.v.w.x.y.example.com.\t60\tIN\tA\t192.0.2.1\n"));
	ldns_pkt_free(p);

	/*
	 * A name in RDATA: the second MX of a set does not fit, and the name
	 * it wrote, mx2.<60 octets>.elsewhere.org, is not there to point to.
	 */
	used = 0;
	uint8_t mx1[2 + NAME_MAXLEN] = { 0, 10 }, mx2[2 + NAME_MAXLEN] = { 0, 20 };
	char text[128];
	snprintf(text, sizeof(text), "mx2.%060d.elsewhere.org.", 0);
	int n2 = name_from_text(text, NULL, mx2 + 2);
	int n1 = name_from_text("mx1.elsewhere.org.", NULL, mx1 + 2);
	int n = name_from_text(text + 4, NULL, ns);
	/* header, question, the apex's A, "m" and a pointer, the first MX, and 78 octets */
	path_message(&r, &path, out, 29 + 27 + 4 + 10 + 2 + (size_t)n1 + 78);
	CU_ASSERT_EQUAL(add_one(&r, &path, "example.com.", DNS_TYPE_A, a, 4, names, sets, &used),
			0);
	const uint8_t *mx[2] = { mx1, mx2 };
	size_t mx_len[2] = { (size_t)n1 + 2, (size_t)n2 + 2 };
	CU_ASSERT_EQUAL(add_path(&r, &path, "m.example.com.", DNS_TYPE_MX, mx, mx_len, 2, names,
				 sets, &used),
			SHOAL_ESPACE);
	/* 75 octets: a pointer, 10, the 60-octet label and a pointer to elsewhere.org */
	CU_ASSERT_EQUAL(add_one(&r, &path, "m.example.com.", DNS_TYPE_NS, ns, (size_t)n, names,
				sets, &used),
			0);
	p = parse(out, response_finish(&r, NULL));
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p), 3);
	snprintf(text, sizeof(text), "m.example.com.\t60\tIN\tNS\t%060d.elsewhere.org.\n", 0);
	CU_ASSERT_TRUE(answer_is(p, 2, text));
	ldns_pkt_free(p);
}

static void test_opt_and_extended_rcode(void)
{
	make_query("example.com.", LDNS_RR_TYPE_A, 4096);
	uint8_t out[512];
	response_t r;
	response_edns_t e = { .present = true,
			      .udp_size = 1232,
			      .do_bit = true,
			      .nsid = (const uint8_t *)"ns/1",
			      .nsid_len = 4 };
	size_t opt = response_opt_size(&e);
	CU_ASSERT_EQUAL(opt, 19);
	response_init(&r, &query, out, sizeof(out), 512, opt);
	response_set_rcode(&r, DNS_RCODE_BADVERS);
	int len = response_finish(&r, &e);
	CU_ASSERT_EQUAL(len, 29 + 19);
	/* RFC 6891 6.1.3: BADVERS (16) is 0 in the header and 1 in the OPT TTL */
	CU_ASSERT_EQUAL(wire_get_u16(out + 2) & DNS_RCODE_MASK, 0);
	CU_ASSERT_EQUAL(wire_get_u16(out + 10), 1);
	const uint8_t *o = out + 29;
	CU_ASSERT_EQUAL(o[0], 0);
	CU_ASSERT_EQUAL(wire_get_u16(o + 1), DNS_TYPE_OPT);
	CU_ASSERT_EQUAL(wire_get_u16(o + 3), 1232);
	CU_ASSERT_EQUAL(wire_get_u32(o + 5), 0x01008000u);
	CU_ASSERT_EQUAL(wire_get_u16(o + 9), 8);
	CU_ASSERT_EQUAL(wire_get_u16(o + 11), DNS_EDNS_NSID);
	CU_ASSERT_EQUAL(memcmp(o + 15, "ns/1", 4), 0);
	ldns_pkt *p = parse(out, len);
	CU_ASSERT_EQUAL(ldns_pkt_edns_udp_size(p), 1232);
	CU_ASSERT(ldns_pkt_edns_do(p));
	ldns_pkt_free(p);
}

static void test_opt_reserve_always_fits(void)
{
	make_query("example.com.", LDNS_RR_TYPE_TXT, 512);
	uint8_t out[512];
	response_t r;
	response_edns_t e = { .present = true, .udp_size = 1232 };
	size_t opt = response_opt_size(&e);
	response_init(&r, &query, out, sizeof(out), 512, opt);
	test_set_t txt;
	set_init(&txt, DNS_TYPE_TXT);
	uint8_t rd[256];
	rd[0] = 255;
	memset(rd + 1, 'y', 255);
	set_add(&txt, 60, rd, sizeof(rd));
	int added = 0;
	while (response_add_rrset(&r, DNS_SECTION_ANSWER, query.qname, &txt.set) == 0)
		added++;
	CU_ASSERT_EQUAL(added, 1);
	int len = response_finish(&r, &e);
	CU_ASSERT(len > 0 && len <= 512);
	ldns_pkt *p = parse(out, len);
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p), 1);
	ldns_pkt_free(p);
}

/* The COOKIE option (RFC 7873 4) follows the NSID in the OPT, and counts in its size. */
static void test_opt_cookie(void)
{
	make_query("example.com.", LDNS_RR_TYPE_A, 1232);
	uint8_t out[512], cookie[24];
	for (size_t i = 0; i < sizeof(cookie); i++)
		cookie[i] = (uint8_t)(0xa0 + i);
	response_edns_t e = { .present = true,
			      .udp_size = 1232,
			      .nsid = (const uint8_t *)"ns",
			      .nsid_len = 2,
			      .cookie = cookie,
			      .cookie_len = sizeof(cookie) };
	size_t opt = response_opt_size(&e);
	CU_ASSERT_EQUAL(opt, 11 + 6 + 28);
	response_t r;
	CU_ASSERT_EQUAL(response_init(&r, &query, out, sizeof(out), 512, opt), 0);
	int len = response_finish(&r, &e);
	CU_ASSERT_EQUAL(len, 29 + (int)opt);
	const uint8_t *o = out + 29;
	CU_ASSERT_EQUAL(wire_get_u16(o + 9), 6 + 28);
	CU_ASSERT_EQUAL(wire_get_u16(o + 17), DNS_EDNS_COOKIE);
	CU_ASSERT_EQUAL(wire_get_u16(o + 19), sizeof(cookie));
	CU_ASSERT_EQUAL(memcmp(o + 21, cookie, sizeof(cookie)), 0);
	ldns_pkt_free(parse(out, len));
}

/* response_strip keeps the header (TC set), the question and the OPT with its cookie. */
static void test_strip(void)
{
	make_query("www.example.com.", LDNS_RR_TYPE_A, 1232);
	uint8_t out[512], cookie[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	response_edns_t e = {
		.present = true, .udp_size = 1232, .cookie = cookie, .cookie_len = 8
	};
	response_t r;
	response_init(&r, &query, out, sizeof(out), 512, response_opt_size(&e));
	test_set_t a;
	set_init(&a, DNS_TYPE_A);
	set_add(&a, 60, (const uint8_t *)"\xc0\0\2\1", 4);
	set_add(&a, 60, (const uint8_t *)"\xc0\0\2\2", 4);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ANSWER, query.qname, &a.set), 0);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ADDITIONAL, query.qname, &a.set), 0);
	response_set_flags(&r, DNS_FLAG_AA);
	int len = response_finish(&r, &e);
	int question_end = 12 + 17 + 4;
	int slim = response_strip(out, (size_t)len);
	CU_ASSERT_EQUAL(slim, question_end + (int)response_opt_size(&e));
	ldns_pkt *p = parse(out, slim);
	CU_ASSERT(ldns_pkt_tc(p));
	CU_ASSERT(ldns_pkt_aa(p));
	CU_ASSERT_EQUAL(ldns_pkt_id(p), 4242);
	CU_ASSERT_EQUAL(ldns_pkt_qdcount(p), 1);
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p) + ldns_pkt_nscount(p) + ldns_pkt_arcount(p), 0);
	CU_ASSERT(ldns_pkt_edns(p));
	ldns_pkt_free(p);
	CU_ASSERT_EQUAL(memcmp(out + slim - 8, cookie, 8), 0);

	/* without EDNS: header and question only */
	make_query("www.example.com.", LDNS_RR_TYPE_A, 0);
	response_init(&r, &query, out, sizeof(out), 512, 0);
	CU_ASSERT_EQUAL(response_add_rrset(&r, DNS_SECTION_ANSWER, query.qname, &a.set), 0);
	len = response_finish(&r, NULL);
	CU_ASSERT_EQUAL(response_strip(out, (size_t)len), question_end);
	CU_ASSERT_EQUAL(wire_get_u16(out + 10), 0);
	/* a message that does not parse is left alone */
	CU_ASSERT_EQUAL(response_strip(out, (size_t)question_end - 1), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(response_strip(out, 5), SHOAL_EMALFORMED);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_header_and_question),
		UNIT_TEST(test_compression),
		UNIT_TEST(test_owner_is_question),
		UNIT_TEST(test_no_compression_for_new_types),
		UNIT_TEST(test_rollback_on_space),
		UNIT_TEST(test_path_compression),
		UNIT_TEST(test_path_rollback),
		UNIT_TEST(test_opt_and_extended_rcode),
		UNIT_TEST(test_opt_reserve_always_fits),
		UNIT_TEST(test_opt_cookie),
		UNIT_TEST(test_strip),
		UNIT_END,
	};
	return unit_run(argc, argv, "response", tests);
}
