/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Packet-in, packet-out tests of zone/answer.c. Most cases are rows of
 * tests/unit/test_zone_answer.txt, one a line (its head says how to read
 * and add one), each group of rows one unit case; tests/unit/answer_table.c
 * asks and checks them. Here in code are the cases a row cannot say: raw
 * and mutated packets, and stored RDATA cut short.
 */
#include "config.h"

/* before ldns, whose common.h would otherwise make bool a signed char */
#include <stdbool.h>

#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "tests/unit/alloc_guard.h"
#include "tests/unit/answer_table.h"
#include "tests/unit/unit.h"
#include "zone/answer.h"
#include "zone/journal.h"
#include "zone/zone.h"
#include "zone/zonedb.h"

#define TABLE "tests/unit/test_zone_answer.txt"

static zonedb_t *db_parent; /* example.com only: sub.example.com is a referral */
static zonedb_t *db_both;   /* example.com and its child sub.example.com */
static zonedb_t *db_broken; /* example.com and a child that does not load */

/* Answer raw octets from db_parent; returns the parsed answer (caller frees) or NULL. */
static ldns_pkt *ask_raw(const uint8_t *q, size_t qlen, answer_info_t *info)
{
	static uint8_t out[DNS_TCP_MAX];
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT };
	size_t len = answer_query(db_parent, q, qlen, out, sizeof(out), &ctx, info);
	ldns_pkt *p = NULL;
	if (len > 0)
		CU_ASSERT_EQUAL_FATAL(ldns_wire2pkt(&p, out, len), LDNS_STATUS_OK);
	return p;
}

static void test_malformed(void)
{
	answer_info_t info;
	/* shorter than a header: no answer */
	static const uint8_t shortq[] = { 0x42, 0x42, 0, 0, 0, 1 };
	CU_ASSERT_PTR_NULL(ask_raw(shortq, sizeof(shortq), &info));
	CU_ASSERT_TRUE(info.dropped);
	CU_ASSERT_TRUE(info.malformed);
	/* QR set: no answer */
	static const uint8_t resp[] = {
		0x42, 0x42, 0x80, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1
	};
	CU_ASSERT_PTR_NULL(ask_raw(resp, sizeof(resp), &info));
	CU_ASSERT_TRUE(info.dropped);
	CU_ASSERT_FALSE(info.malformed);
	/* QDCOUNT 2: FORMERR */
	static const uint8_t two[] = { 0x42, 0x42, 0, 0, 0, 2, 0, 0, 0, 0, 0,
				       0,    0,    0, 1, 0, 1, 0, 0, 1, 0, 1 };
	ldns_pkt *p = ask_raw(two, sizeof(two), &info);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_FORMERR);
	CU_ASSERT_TRUE(info.malformed);
	ldns_pkt_free(p);
	/* truncated question: FORMERR or nothing, never a crash */
	static const uint8_t cut[] = { 0x42, 0x42, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w', 'w' };
	p = ask_raw(cut, sizeof(cut), &info);
	if (p)
		CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_FORMERR);
	ldns_pkt_free(p);
	/* trailing bytes after the question do not matter: answered as the query alone is */
	static const uint8_t trail[] = { 0x42, 0x42, 0,   0,   0,   1,   0,    0,   0,
					 0,    0,    0,   3,   'w', 'w', 'w',  7,   'e',
					 'x',  'a',  'm', 'p', 'l', 'e', 3,    'c', 'o',
					 'm',  0,    0,   1,   0,   1,   0xde, 0xad };
	char want[] = "www.example.com. A -> NOERROR qr aa an=2 ns=0 ar=0";
	answer_table_check_wire(__FILE__, __LINE__, want, trail, sizeof(trail));
}

/*
 * Mutated queries (bit flips, cuts, random counts) never crash, and an
 * answer sent over UDP never passes the server's EDNS size. Bounded:
 * a fixed seed and a fixed count.
 */
static void test_mutated_packets(void)
{
	static const char *names[] = { "www.example.com.",    "x.sub.example.com.",
				       "big.example.com.",    "a.old.example.com.",
				       "manymx.example.com.", "foo.wild.example.com." };
	static const uint16_t types[] = { DNS_TYPE_A, DNS_TYPE_TXT, DNS_TYPE_MX, DNS_TYPE_ANY };
	static uint8_t out[DNS_TCP_MAX];
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT,
			     .nsid = (const uint8_t *)ANSWER_TABLE_NSID,
			     .nsid_len = sizeof(ANSWER_TABLE_NSID) - 1 };
	unsigned seed = 12345, answered = 0;
	for (int i = 0; i < 20000; i++) {
		ldns_pkt *q = ldns_pkt_query_new(ldns_dname_new_frm_str(names[i % 6]),
						 (ldns_rr_type)types[i % 4], LDNS_RR_CLASS_IN, 0);
		if (i & 1)
			ldns_pkt_set_edns_udp_size(q, (uint16_t)rand_r(&seed));
		uint8_t *wire = NULL;
		size_t len = 0;
		CU_ASSERT_EQUAL_FATAL(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
		ldns_pkt_free(q);
		int flips = rand_r(&seed) % 4;
		for (int f = 0; f < flips; f++)
			wire[(size_t)rand_r(&seed) % len] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
		if (rand_r(&seed) % 4 == 0)
			len = (size_t)rand_r(&seed) % len;
		answer_info_t info;
		size_t n = answer_query(db_parent, wire, len, out, sizeof(out), &ctx, &info);
		CU_ASSERT(n <= DNS_EDNS_DEFAULT);
		CU_ASSERT((n == 0) == info.dropped);
		answered += n > 0;
		free(wire);
	}
	CU_ASSERT(answered > 10000);
}

static void on_msg(void *arg, bool is_error, const char *msg)
{
	if (is_error)
		fprintf(stderr, "%s\n", msg);
}

/*
 * Every walk over a stored name stays inside its record's RDATA, even where
 * the load checks were somehow passed: a zone whose stored RDATA lengths
 * are cut short afterwards (here by hand) is answered without reading past
 * them. Before, the DNAME substitution, the CNAME chain, the additional
 * section and the response writer each read the name to its end.
 */
static void cut_rdlen(const zone_t *z, const char *owner, uint16_t type, uint16_t rdlen)
{
	uint8_t name[NAME_MAXLEN];
	CU_ASSERT_FATAL(name_from_text(owner, NULL, name) > 0);
	const znode_t *n = zone_lookup(z, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	const zrrset_t *rs = znode_rrset(n, type);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
	uint8_t *d = (uint8_t *)rs->set.data;
	d[8] = (uint8_t)(rdlen >> 8);
	d[9] = (uint8_t)rdlen;
}

/* The answer's header counts after asking db for name/type over UDP. */
static void ask_counts(const zonedb_t *db, const char *name, uint16_t type, uint16_t counts[4],
		       bool *tc)
{
	uint8_t q[512], out[DNS_EDNS_DEFAULT], wire[NAME_MAXLEN];
	int len = name_from_text(name, NULL, wire);
	CU_ASSERT_FATAL(len > 0);
	memcpy(q, "\x42\x42\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", DNS_HEADER_SIZE);
	memcpy(q + DNS_HEADER_SIZE, wire, (size_t)len);
	uint8_t *p = q + DNS_HEADER_SIZE + len;
	*p++ = (uint8_t)(type >> 8);
	*p++ = (uint8_t)type;
	*p++ = 0;
	*p++ = DNS_CLASS_IN;
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT };
	answer_info_t info;
	size_t n = answer_query(db, q, (size_t)(p - q), out, sizeof(out), &ctx, &info);
	CU_ASSERT_FATAL(n >= DNS_HEADER_SIZE);
	for (int i = 0; i < 4; i++)
		counts[i] = wire_get_u16(out + 4 + 2 * i);
	*tc = (out[2] & (DNS_FLAG_TC >> 8)) != 0;
}

static void test_stored_names_bounded(void)
{
	char path[] = "/tmp/shoal-cut.XXXXXX";
	static const char text[] = "$ORIGIN cut.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n"
				   "@ NS ns1\nns1 A 192.0.2.1\n"
				   "d DNAME target.example.\n"
				   "c CNAME ns1.cut.test.\n"
				   "srv SRV 0 0 1 host.cut.test.\nhost A 192.0.2.2\n";
	CU_ASSERT_EQUAL_FATAL(unit_temp_file(path, text, sizeof(text) - 1), 0);
	zone_spec_t spec = { .name = "cut.test", .file = path, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&spec, 1, NULL, NULL, on_msg, NULL, &db), 0);
	unlink(path);
	uint16_t c[4];
	bool tc;
	/* as loaded: DNAME and its CNAME; CNAME and its target; SRV and its target's address */
	ask_counts(db, "x.d.cut.test.", DNS_TYPE_A, c, &tc);
	CU_ASSERT(c[1] == 2 && !tc);
	ask_counts(db, "c.cut.test.", DNS_TYPE_A, c, &tc);
	CU_ASSERT(c[1] == 2 && !tc);
	ask_counts(db, "srv.cut.test.", DNS_TYPE_SRV, c, &tc);
	CU_ASSERT(c[1] == 1 && c[3] == 1 && !tc);

	const zone_t *z = zonedb_find(db, (const uint8_t *)"\3cut\4test");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	cut_rdlen(z, "d.cut.test.", DNS_TYPE_DNAME, 3); /* "\6ta": no name */
	cut_rdlen(z, "c.cut.test.", DNS_TYPE_CNAME, 2); /* "\3n" */
	cut_rdlen(z, "srv.cut.test.", DNS_TYPE_SRV, 9); /* priority, weight, port, "\4ho" */
	/* no CNAME made up from the octets after the DNAME's three */
	ask_counts(db, "x.d.cut.test.", DNS_TYPE_A, c, &tc);
	CU_ASSERT_EQUAL(c[1], 1);
	/* the CNAME whose name runs past its RDATA is not written: TC, nothing sent */
	ask_counts(db, "c.cut.test.", DNS_TYPE_A, c, &tc);
	CU_ASSERT(c[1] == 0 && tc);
	/* no address looked up for an SRV target that is not inside the RDATA */
	ask_counts(db, "srv.cut.test.", DNS_TYPE_SRV, c, &tc);
	CU_ASSERT(c[1] == 1 && c[3] == 0);
	zonedb_free(db);
}

/* How ask() asks: class IN, no EDNS, UDP, db_parent, no CHAOS texts when zero. */
typedef struct ask {
	const zonedb_t *db;
	uint16_t qclass;
	uint16_t edns; /* EDNS payload size, 0 for no OPT */
	bool do_bit;
	const char *identity; /* CHAOS id.server text, or NULL */
	const char *version;  /* CHAOS version.server text, or NULL */
} ask_t;

static answer_info_t last_info;
static size_t last_len;

/* Ask name/type as o says; the parsed answer (caller frees), info in last_info. */
static ldns_pkt *ask(const char *name, uint16_t type, const ask_t *o)
{
	static uint8_t out[DNS_TCP_MAX];
	ldns_pkt *q = ldns_pkt_query_new(ldns_dname_new_frm_str(name), (ldns_rr_type)type,
					 (ldns_rr_class)(o->qclass ? o->qclass : DNS_CLASS_IN), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	ldns_pkt_set_id(q, 0x4242);
	if (o->edns) {
		ldns_pkt_set_edns_udp_size(q, o->edns);
		ldns_pkt_set_edns_do(q, o->do_bit);
	}
	uint8_t *wire = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL_FATAL(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
	ldns_pkt_free(q);
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT };
	if (o->identity) {
		ctx.identity = (const uint8_t *)o->identity;
		ctx.identity_len = (uint8_t)strlen(o->identity);
	}
	if (o->version) {
		ctx.version = (const uint8_t *)o->version;
		ctx.version_len = (uint8_t)strlen(o->version);
	}
	last_len = answer_query(o->db ? o->db : db_parent, wire, len, out, sizeof(out), &ctx,
				&last_info);
	free(wire);
	ldns_pkt *p = NULL;
	CU_ASSERT_FATAL(last_len > 0);
	CU_ASSERT_EQUAL_FATAL(ldns_wire2pkt(&p, out, last_len), LDNS_STATUS_OK);
	return p;
}

/* Does some record of the answer section print (tabs as spaces) with needle in it? */
static bool answer_has(const ldns_pkt *p, const char *needle)
{
	const ldns_rr_list *l = ldns_pkt_answer(p);
	for (size_t i = 0; i < ldns_rr_list_rr_count(l); i++) {
		char *t = ldns_rr2str(ldns_rr_list_rr(l, i));
		for (char *c = t; *c; c++)
			if (*c == '\t')
				*c = ' ';
		bool hit = strstr(t, needle) != NULL;
		free(t);
		if (hit)
			return true;
	}
	return false;
}

/* Rcode, AA and the answer count of p, then p freed. */
static void check_free(ldns_pkt *p, int rcode, bool aa, size_t an)
{
	CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), rcode);
	CU_ASSERT_EQUAL(ldns_pkt_aa(p), aa);
	CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_answer(p)), an);
	CU_ASSERT_EQUAL(ldns_pkt_id(p), 0x4242);
	ldns_pkt_free(p);
}

/*
 * What the statistics are told, which no answer shows: the answering
 * zone's slot (the child for its names, the parent for the DS at the
 * child's apex, none for a name of no zone or a zone not loaded), and
 * EDNS with DO.
 */
static void test_info_for_statistics(void)
{
	ask_t o = { .db = db_both, .edns = 1232, .do_bit = true };
	ldns_pkt_free(ask("www.example.com.", DNS_TYPE_A, &o));
	CU_ASSERT_EQUAL(last_info.zone_slot, 1);
	CU_ASSERT_TRUE(last_info.edns);
	CU_ASSERT_TRUE(last_info.dnssec_ok);
	o.do_bit = false;
	ldns_pkt_free(ask("nothere.sub.example.com.", DNS_TYPE_A, &o));
	CU_ASSERT_EQUAL(last_info.zone_slot, 2);
	CU_ASSERT_EQUAL(last_info.rcode, DNS_RCODE_NXDOMAIN);
	CU_ASSERT_FALSE(last_info.dnssec_ok);
	ldns_pkt_free(ask("sub.example.com.", DNS_TYPE_DS, &o));
	CU_ASSERT_EQUAL(last_info.zone_slot, 1);
	ldns_pkt_free(ask("www.example.org.", DNS_TYPE_A, &o));
	CU_ASSERT_EQUAL(last_info.zone_slot, 0);
	ask_t broken = { .db = db_broken };
	ldns_pkt_free(ask("host.sub.example.com.", DNS_TYPE_A, &broken));
	CU_ASSERT_EQUAL(last_info.rcode, DNS_RCODE_SERVFAIL);
	CU_ASSERT_EQUAL(last_info.zone_slot, 0); /* configured, not loaded: no zone answered */
}

/*
 * CHAOS TXT as NSD and Knot answer it, from texts the server is given (so
 * not rows of the table): id.server and hostname.bind give the identity,
 * version.server and version.bind the version when one is set; TTL 0,
 * class CH, no AA; any other CH name or type is REFUSED.
 */
static void test_chaos(void)
{
	ask_t ch = { .qclass = DNS_CLASS_CH, .identity = "ns1.test" };
	static const char *const id_names[] = { "id.server.", "hostname.bind.", "ID.Server." };
	for (size_t i = 0; i < sizeof(id_names) / sizeof(id_names[0]); i++) {
		ldns_pkt *p = ask(id_names[i], DNS_TYPE_TXT, &ch);
		CU_ASSERT_TRUE(answer_has(p, " 0 CH TXT \"ns1.test\""));
		check_free(p, LDNS_RCODE_NOERROR, false, 1);
		CU_ASSERT_EQUAL(last_info.rcode, DNS_RCODE_NOERROR);
		CU_ASSERT_EQUAL(last_info.zone_slot, 0);
	}
	/* the version is hidden unless set */
	check_free(ask("version.server.", DNS_TYPE_TXT, &ch), LDNS_RCODE_REFUSED, false, 0);
	ask_t ver = { .qclass = DNS_CLASS_CH, .version = "Shoal 1.2", .edns = 1232 };
	ldns_pkt *p = ask("version.bind.", DNS_TYPE_TXT, &ver);
	CU_ASSERT_TRUE(answer_has(p, "version.bind. 0 CH TXT \"Shoal 1.2\""));
	CU_ASSERT_EQUAL(ldns_pkt_edns_udp_size(p), DNS_EDNS_DEFAULT);
	check_free(p, LDNS_RCODE_NOERROR, false, 1);
	check_free(ask("version.server.", DNS_TYPE_TXT, &ver), LDNS_RCODE_NOERROR, false, 1);
	/* other names, other types, class IN, no identity: REFUSED */
	static const struct {
		const char *name;
		uint16_t type;
		uint16_t qclass;
	} refused[] = {
		{ "authors.bind.", DNS_TYPE_TXT, DNS_CLASS_CH },
		{ "server.", DNS_TYPE_TXT, DNS_CLASS_CH },
		{ "x.id.server.", DNS_TYPE_TXT, DNS_CLASS_CH },
		{ "id.server.", DNS_TYPE_A, DNS_CLASS_CH },
		{ "id.server.", DNS_TYPE_ANY, DNS_CLASS_CH },
		{ "id.server.", DNS_TYPE_TXT, DNS_CLASS_IN },
		{ "example.com.", DNS_TYPE_SOA, DNS_CLASS_CH },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ask_t o = { .qclass = refused[i].qclass, .identity = "ns1.test", .version = "1.2" };
		check_free(ask(refused[i].name, refused[i].type, &o), LDNS_RCODE_REFUSED, false, 0);
	}
	ask_t none = { .qclass = DNS_CLASS_CH };
	check_free(ask("id.server.", DNS_TYPE_TXT, &none), LDNS_RCODE_REFUSED, false, 0);
	/* the longest text (255 octets, RDLENGTH 256) fits 512 octets */
	char longest[256], quoted[260];
	memset(longest, 'x', 255);
	longest[255] = '\0';
	snprintf(quoted, sizeof(quoted), "\"%s\"", longest);
	ask_t big = { .qclass = DNS_CLASS_CH, .identity = longest };
	p = ask("hostname.bind.", DNS_TYPE_TXT, &big);
	CU_ASSERT_TRUE(last_len <= DNS_UDP_MIN);
	CU_ASSERT_TRUE(answer_has(p, quoted));
	check_free(p, LDNS_RCODE_NOERROR, false, 1);
}

/*
 * The guard that every answer_query call here runs under sees what it
 * guards against: an allocation and a lock made by Shoal's code between
 * its marks (a journal: calloc, then its mutex), and it ran for an answer.
 */
static void test_alloc_guard_sees(void)
{
	size_t before = alloc_guard_answers();
	answer_info_t info;
	static const uint8_t q[] = { 0x42, 0x42, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 1 };
	ldns_pkt_free(ask_raw(q, sizeof(q), &info));
	CU_ASSERT_EQUAL(alloc_guard_answers(), before + 1);
	alloc_guard_begin();
	journal_t *j = journal_new(1024);
	journal_info_t ji;
	if (j)
		journal_get_info(j, &ji);
	alloc_guard_counts_t c = alloc_guard_end();
	journal_unref(j);
	CU_ASSERT_PTR_NOT_NULL(j);
	CU_ASSERT(c.allocations >= 1);
	CU_ASSERT(c.locks >= 1);
}

/* The unit case of one group of the table: CUnit runs it under the group's name. */
static void test_table_group(void)
{
	answer_table_run(CU_get_current_test()->pName);
}

int main(int argc, char **argv)
{
	char parent[4096], child[4096], broken[4096], table[4096];
	unit_src_path(parent, sizeof(parent), "tests/unit/zones/example.zone");
	unit_src_path(child, sizeof(child), "tests/unit/zones/child.zone");
	unit_src_path(broken, sizeof(broken), "tests/unit/zones/nosoa.zone");
	unit_src_path(table, sizeof(table), TABLE);
	zone_spec_t specs[] = {
		{ .name = "example.com", .file = parent, .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "sub.example.com.", .file = child, .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "example.com", .file = parent, .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "sub.example.com", .file = broken, .limits = ZONE_LIMITS_DEFAULT }
	};
	if (zonedb_build(specs, 1, NULL, NULL, on_msg, NULL, &db_parent) != 0 ||
	    zonedb_build(specs, 2, NULL, NULL, on_msg, NULL, &db_both) != 0 ||
	    zonedb_build(specs + 2, 2, NULL, NULL, NULL, NULL, &db_broken) != SHOAL_EZONE) {
		fprintf(stderr, "test zones do not load\n");
		return 1;
	}
	const answer_zones_t sets[] = { { "@parent", db_parent },
					{ "@both", db_both },
					{ "@broken", db_broken },
					{ "@none", NULL } };
	int rc = 1;
	if (answer_table_load(table, TABLE, sets, sizeof(sets) / sizeof(sets[0])) == 0) {
		static unit_test_t tests[ANSWER_TABLE_GROUPS_MAX + 7];
		size_t k = 0;
		for (const char *g; k < ANSWER_TABLE_GROUPS_MAX && (g = answer_table_group(k));)
			tests[k++] = (unit_test_t){ g, test_table_group };
		tests[k++] = (unit_test_t)UNIT_TEST(test_malformed);
		tests[k++] = (unit_test_t)UNIT_TEST(test_mutated_packets);
		tests[k++] = (unit_test_t)UNIT_TEST(test_stored_names_bounded);
		tests[k++] = (unit_test_t)UNIT_TEST(test_info_for_statistics);
		tests[k++] = (unit_test_t)UNIT_TEST(test_chaos);
		tests[k++] = (unit_test_t)UNIT_TEST(test_alloc_guard_sees);
		tests[k] = (unit_test_t)UNIT_END;
		rc = unit_run(argc, argv, "zone_answer", tests);
	}
	answer_table_free();
	zonedb_free(db_parent);
	zonedb_free(db_both);
	zonedb_free(db_broken);
	return rc;
}
