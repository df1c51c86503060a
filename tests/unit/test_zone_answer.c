/* Packet-in, packet-out tests of zone/answer.c: queries built with ldns, answers parsed with ldns.
 */
#include "config.h"

#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "tests/unit/unit.h"
#include "zone/answer.h"
#include "zone/zone.h"
#include "zone/zonedb.h"

static zonedb_t *db_parent; /* example.com only: sub.example.com is a referral */
static zonedb_t *db_both;   /* example.com and its child sub.example.com */
static zonedb_t *db_broken; /* example.com and a child that does not load */

/* How to ask. Zero means: class IN, no EDNS, UDP. */
typedef struct ask {
	uint16_t qclass;
	uint16_t edns; /* EDNS payload size, 0 for no OPT */
	bool do_bit;
	bool nsid;
	uint8_t version;
	bool tcp;
	const zonedb_t *db;
	const char *identity;     /* CHAOS id.server text (NULL: "ns1.test") */
	const char *version_text; /* CHAOS version.server text (NULL: hidden) */
	bool no_identity;         /* no id.server text at all */
} ask_t;

static answer_info_t last_info;
static size_t last_len;

static const uint8_t nsid_value[] = "shoal-test";

/* Answer raw bytes; returns the parsed answer or NULL (no answer). */
static ldns_pkt *ask_raw(const uint8_t *q, size_t qlen, const ask_t *o)
{
	static uint8_t out[DNS_TCP_MAX];
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT,
			     .tcp = o && o->tcp,
			     .nsid = nsid_value,
			     .nsid_len = sizeof(nsid_value) - 1 };
	const char *id = o && o->identity ? o->identity : "ns1.test";
	if (!(o && o->no_identity)) {
		ctx.identity = (const uint8_t *)id;
		ctx.identity_len = (uint8_t)strlen(id);
	}
	if (o && o->version_text) {
		ctx.version = (const uint8_t *)o->version_text;
		ctx.version_len = (uint8_t)strlen(o->version_text);
	}
	const zonedb_t *db = o && o->db ? o->db : db_parent;
	last_len = answer_query(db, q, qlen, out, sizeof(out), &ctx, &last_info);
	if (last_len == 0)
		return NULL;
	ldns_pkt *p = NULL;
	CU_ASSERT_EQUAL_FATAL(ldns_wire2pkt(&p, out, last_len), LDNS_STATUS_OK);
	return p;
}

static ldns_pkt *ask(const char *name, uint16_t type, const ask_t *o)
{
	ask_t none = { 0 };
	if (!o)
		o = &none;
	ldns_rdf *qname = ldns_dname_new_frm_str(name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qname);
	ldns_pkt *q = ldns_pkt_query_new(qname, (ldns_rr_type)type,
					 (ldns_rr_class)(o->qclass ? o->qclass : DNS_CLASS_IN), 0);
	ldns_pkt_set_id(q, 0x4242);
	if (o->edns) {
		ldns_pkt_set_edns_udp_size(q, o->edns);
		ldns_pkt_set_edns_do(q, o->do_bit);
		ldns_pkt_set_edns_version(q, o->version);
		if (o->nsid)
			ldns_pkt_set_edns_data(
				q, ldns_rdf_new_frm_data(LDNS_RDF_TYPE_UNKNOWN, 4, "\0\x03\0\0"));
	}
	uint8_t *wire = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL_FATAL(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
	ldns_pkt_free(q);
	ldns_pkt *p = ask_raw(wire, len, o);
	free(wire);
	return p;
}

/* Does some RR of the list print as text containing `needle` (tabs as spaces)? */
static bool has_rr(const ldns_rr_list *l, const char *needle)
{
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

#define AN(p)    ldns_pkt_answer(p)
#define NS(p)    ldns_pkt_authority(p)
#define AR(p)    ldns_pkt_additional(p)
#define COUNT(l) ldns_rr_list_rr_count(l)

/* Rcode, AA and the three section counts in one line. */
static void check(ldns_pkt *p, int rcode, bool aa, size_t an, size_t ns, size_t ar)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), rcode);
	CU_ASSERT_EQUAL(ldns_pkt_aa(p), aa);
	CU_ASSERT_TRUE(ldns_pkt_qr(p));
	CU_ASSERT_FALSE(ldns_pkt_tc(p));
	CU_ASSERT_EQUAL(COUNT(AN(p)), an);
	CU_ASSERT_EQUAL(COUNT(NS(p)), ns);
	CU_ASSERT_EQUAL(COUNT(AR(p)), ar);
	CU_ASSERT_EQUAL(ldns_pkt_id(p), 0x4242);
}

static void test_exact_match(void)
{
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	CU_ASSERT(has_rr(AN(p), "www.example.com. 3600 IN A 192.0.2.80"));
	CU_ASSERT(has_rr(AN(p), "www.example.com. 3600 IN A 192.0.2.81"));
	CU_ASSERT_FALSE(ldns_pkt_edns(p));
	CU_ASSERT_EQUAL(last_info.rcode, 0);
	CU_ASSERT_EQUAL(last_info.qtype, DNS_TYPE_A);
	ldns_pkt_free(p);
}

static void test_question_case_echoed(void)
{
	ldns_pkt *p = ask("WwW.ExAmPle.CoM.", DNS_TYPE_AAAA, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	char *q = ldns_rdf2str(ldns_rr_owner(ldns_rr_list_rr(ldns_pkt_question(p), 0)));
	CU_ASSERT_STRING_EQUAL(q, "WwW.ExAmPle.CoM.");
	free(q);
	/* NSD and Knot keep the client's case in the answer's owner too */
	CU_ASSERT(has_rr(AN(p), "WwW.ExAmPle.CoM. 3600 IN AAAA 2001:db8::80"));
	ldns_pkt_free(p);
}

static void test_nxdomain(void)
{
	ldns_pkt *p = ask("nothere.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NXDOMAIN, true, 0, 1, 0);
	/* RFC 2308 3: SOA in authority with TTL min(SOA TTL, MINIMUM) */
	CU_ASSERT(has_rr(
		NS(p),
		"example.com. 300 IN SOA ns1.example.com. hostmaster.example.com. 2026120301"));
	ldns_pkt_free(p);
	p = ask("x.y.nothere.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NXDOMAIN, true, 0, 1, 0);
	ldns_pkt_free(p);
}

static void test_nodata(void)
{
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_MX, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	CU_ASSERT(has_rr(NS(p), "example.com. 300 IN SOA"));
	ldns_pkt_free(p);
}

static void test_empty_non_terminal(void)
{
	/* RFC 4592 2.2.2: an ENT exists: NOERROR without data, not NXDOMAIN */
	ldns_pkt *p = ask("b.c.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	ldns_pkt_free(p);
	p = ask("c.example.com.", DNS_TYPE_TXT, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	ldns_pkt_free(p);
}

static void test_cname_chain(void)
{
	ldns_pkt *p = ask("alias.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 4, 0, 0);
	CU_ASSERT(has_rr(AN(p), "alias.example.com. 3600 IN CNAME ftp.example.com."));
	CU_ASSERT(has_rr(AN(p), "ftp.example.com. 3600 IN CNAME www.example.com."));
	CU_ASSERT(has_rr(AN(p), "www.example.com. 3600 IN A 192.0.2.80"));
	ldns_pkt_free(p);
	/* asking for the CNAME itself does not follow it */
	p = ask("alias.example.com.", DNS_TYPE_CNAME, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	ldns_pkt_free(p);
}

static void test_cname_out_of_zone(void)
{
	ldns_pkt *p = ask("out.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "CNAME www.example.net."));
	ldns_pkt_free(p);
}

static void test_cname_to_nothing(void)
{
	/* RFC 6604 3: the rcode is that of the last name in the chain */
	ldns_pkt *p = ask("dangling.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NXDOMAIN, true, 1, 1, 0);
	CU_ASSERT(has_rr(NS(p), "SOA"));
	ldns_pkt_free(p);
}

static void test_cname_loop(void)
{
	ldns_pkt *p = ask("loop1.example.com.", DNS_TYPE_A, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(COUNT(AN(p)), 2);
	ldns_pkt_free(p);
}

static void test_cname_chain_limit(void)
{
	/* like Knot: five CNAMEs at most; the last target is still looked up */
	ldns_pkt *p = ask("ch3.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 7, 0, 0);
	CU_ASSERT(has_rr(AN(p), "ch7.example.com. 3600 IN CNAME www.example.com."));
	CU_ASSERT(has_rr(AN(p), "www.example.com. 3600 IN A 192.0.2.80"));
	ldns_pkt_free(p);
	p = ask("ch1.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 5, 0, 0);
	CU_ASSERT_FALSE(has_rr(AN(p), "ch6.example.com. 3600 IN CNAME"));
	ldns_pkt_free(p);
	/* a wildcard CNAME onto a name the same wildcard covers: two, then stop */
	p = ask("a.wcloop.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	CU_ASSERT(has_rr(AN(p), "x.wcloop.example.com. 3600 IN CNAME x.wcloop.example.com."));
	ldns_pkt_free(p);
}

static void test_wildcard_ns(void)
{
	/* RFC 4592 4.2 leaves wildcard NS open; like Knot, a referral */
	ldns_pkt *p = ask("a.wdeleg.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, false, 0, 1, 0);
	CU_ASSERT(has_rr(NS(p), "*.wdeleg.example.com. 3600 IN NS ns.example.net."));
	ldns_pkt_free(p);
}

static void test_cname_into_cut(void)
{
	/* the chain ends in a referral: NS in authority, glue, AA stays */
	ldns_pkt *p = ask("tocut.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 2, 2);
	CU_ASSERT(has_rr(NS(p), "sub.example.com. 3600 IN NS ns1.sub.example.com."));
	ldns_pkt_free(p);
}

static void test_wildcard(void)
{
	ldns_pkt *p = ask("foo.wild.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	/* RFC 4592 3.3.1: the owner is the name asked for */
	CU_ASSERT(has_rr(AN(p), "foo.wild.example.com. 3600 IN A 192.0.2.200"));
	ldns_pkt_free(p);
	p = ask("a.b.wild.example.com.", DNS_TYPE_TXT, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "a.b.wild.example.com. 3600 IN TXT \"wildcard\""));
	ldns_pkt_free(p);
	p = ask("foo.wild.example.com.", DNS_TYPE_MX, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	ldns_pkt_free(p);
}

static void test_wildcard_blocked(void)
{
	/* RFC 4592 2.2.1: sub.wild exists, so x.sub.wild does not match *.wild */
	ldns_pkt *p = ask("x.sub.wild.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NXDOMAIN, true, 0, 1, 0);
	ldns_pkt_free(p);
	p = ask("sub.wild.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "192.0.2.201"));
	ldns_pkt_free(p);
	/* the wildcard itself asked for directly */
	p = ask("*.wild.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	ldns_pkt_free(p);
}

static void test_wildcard_cname(void)
{
	ldns_pkt *p = ask("x.cnamewild.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 3, 0, 0);
	CU_ASSERT(has_rr(AN(p), "x.cnamewild.example.com. 3600 IN CNAME www.example.com."));
	CU_ASSERT(has_rr(AN(p), "www.example.com. 3600 IN A 192.0.2.81"));
	ldns_pkt_free(p);
}

static void test_dname(void)
{
	ldns_pkt *p = ask("a.old.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	CU_ASSERT(has_rr(AN(p), "old.example.com. 3600 IN DNAME example.net."));
	CU_ASSERT(has_rr(AN(p), "a.old.example.com. 3600 IN CNAME a.example.net."));
	ldns_pkt_free(p);
	/* the DNAME owner itself is not redirected (RFC 6672 2.3) */
	p = ask("old.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	ldns_pkt_free(p);
	p = ask("old.example.com.", DNS_TYPE_DNAME, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	ldns_pkt_free(p);
}

static void test_dname_into_zone(void)
{
	ldns_pkt *p = ask("www.intozone.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 4, 0, 0);
	CU_ASSERT(has_rr(AN(p), "www.intozone.example.com. 3600 IN CNAME www.example.com."));
	CU_ASSERT(has_rr(AN(p), "www.example.com. 3600 IN A 192.0.2.80"));
	ldns_pkt_free(p);
	/* CNAME, then DNAME, then the data */
	p = ask("todname.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 5, 0, 0);
	CU_ASSERT(has_rr(AN(p), "todname.example.com. 3600 IN CNAME www.intozone.example.com."));
	CU_ASSERT(has_rr(AN(p), "www.intozone.example.com. 3600 IN CNAME www.example.com."));
	ldns_pkt_free(p);
}

static void test_dname_too_long(void)
{
	/* RFC 6672 2.2: the substituted name passes 255 octets */
	ldns_pkt *p = ask("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb."
			  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb."
			  "long.example.com.",
			  DNS_TYPE_A, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_YXDOMAIN);
	CU_ASSERT(has_rr(AN(p), "DNAME"));
	ldns_pkt_free(p);
	/* a DNAME that maps a name onto itself stops at once */
	p = ask("x.self.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	ldns_pkt_free(p);
}

static void test_referral(void)
{
	const char *names[] = { "x.sub.example.com.", "sub.example.com.", "ns1.sub.example.com.",
				"y.x.sub.example.com." };
	for (size_t i = 0; i < 4; i++) {
		ldns_pkt *p = ask(names[i], i == 1 ? DNS_TYPE_NS : DNS_TYPE_A, NULL);
		/* RFC 1034 4.3.2 3b: AA clear, NS in authority, glue in additional */
		check(p, LDNS_RCODE_NOERROR, false, 0, 2, 2);
		CU_ASSERT(has_rr(NS(p), "sub.example.com. 3600 IN NS ns.example.net."));
		CU_ASSERT(has_rr(AR(p), "ns1.sub.example.com. 3600 IN A 192.0.2.153"));
		CU_ASSERT(has_rr(AR(p), "ns1.sub.example.com. 3600 IN AAAA 2001:db8::153"));
		ldns_pkt_free(p);
	}
}

static void test_ds_at_cut(void)
{
	/* RFC 4035 3.1.4.1: DS is the parent's: NODATA here, not a referral */
	ldns_pkt *p = ask("sub.example.com.", DNS_TYPE_DS, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	CU_ASSERT(has_rr(NS(p), "SOA"));
	ldns_pkt_free(p);
	p = ask("signed.example.com.", DNS_TYPE_DS, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "IN DS 12345 8 2"));
	ldns_pkt_free(p);
	p = ask("x.signed.example.com.", DNS_TYPE_DS, NULL);
	check(p, LDNS_RCODE_NOERROR, false, 0, 1, 0);
	ldns_pkt_free(p);
}

/*
 * What the statistics are told: the answering zone's slot (the child
 * for its names, the parent for the DS at the child's apex, none for a
 * name of no zone), and EDNS with DO.
 */
static void test_info_for_statistics(void)
{
	ask_t o = { .db = db_both, .edns = 1232, .do_bit = true };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, &o);
	CU_ASSERT_EQUAL(last_info.zone_slot, 1);
	CU_ASSERT_TRUE(last_info.edns);
	CU_ASSERT_TRUE(last_info.dnssec_ok);
	ldns_pkt_free(p);
	o.do_bit = false;
	p = ask("nothere.sub.example.com.", DNS_TYPE_A, &o);
	CU_ASSERT_EQUAL(last_info.zone_slot, 2);
	CU_ASSERT_EQUAL(last_info.rcode, DNS_RCODE_NXDOMAIN);
	CU_ASSERT_FALSE(last_info.dnssec_ok);
	ldns_pkt_free(p);
	p = ask("sub.example.com.", DNS_TYPE_DS, &o);
	CU_ASSERT_EQUAL(last_info.zone_slot, 1);
	ldns_pkt_free(p);
	p = ask("www.example.org.", DNS_TYPE_A, &o);
	CU_ASSERT_EQUAL(last_info.zone_slot, 0);
	ldns_pkt_free(p);
	ask_t broken = { .db = db_broken };
	p = ask("host.sub.example.com.", DNS_TYPE_A, &broken);
	CU_ASSERT_EQUAL(last_info.rcode, DNS_RCODE_SERVFAIL);
	CU_ASSERT_EQUAL(last_info.zone_slot, 0); /* configured, not loaded: no zone answered */
	ldns_pkt_free(p);
}

static void test_longest_match(void)
{
	ask_t o = { .db = db_both };
	ldns_pkt *p = ask("host.sub.example.com.", DNS_TYPE_A, &o);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "host.sub.example.com. 600 IN A 192.0.2.155"));
	ldns_pkt_free(p);
	p = ask("nothere.sub.example.com.", DNS_TYPE_A, &o);
	check(p, LDNS_RCODE_NXDOMAIN, true, 0, 1, 0);
	CU_ASSERT(has_rr(NS(p), "sub.example.com. 60 IN SOA"));
	ldns_pkt_free(p);
	p = ask("www.example.com.", DNS_TYPE_A, &o);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	ldns_pkt_free(p);
	/* DS at the child apex comes from the parent (RFC 4035 3.1.4.1) */
	p = ask("sub.example.com.", DNS_TYPE_DS, &o);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	CU_ASSERT(has_rr(NS(p), "example.com. 300 IN SOA ns1.example.com."));
	ldns_pkt_free(p);
	p = ask("x.sub.example.com.", DNS_TYPE_DS, &o);
	check(p, LDNS_RCODE_NXDOMAIN, true, 0, 1, 0);
	CU_ASSERT(has_rr(NS(p), "sub.example.com. 60 IN SOA"));
	ldns_pkt_free(p);
	p = ask("sub.example.com.", DNS_TYPE_NS, &o);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 1);
	ldns_pkt_free(p);
}

static void test_refused(void)
{
	ldns_pkt *p = ask("www.example.org.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_REFUSED, false, 0, 0, 0);
	ldns_pkt_free(p);
	ask_t ch = { .qclass = DNS_CLASS_CH };
	p = ask("www.example.com.", DNS_TYPE_A, &ch);
	check(p, LDNS_RCODE_REFUSED, false, 0, 0, 0);
	ldns_pkt_free(p);
	/* no zones at all */
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT };
	uint8_t out[512];
	static const uint8_t q[] = { 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1 };
	size_t n = answer_query(NULL, q, sizeof(q), out, sizeof(out), &ctx, &last_info);
	CU_ASSERT_EQUAL(n, sizeof(q));
	CU_ASSERT_EQUAL(out[3] & 0xf, DNS_RCODE_REFUSED);
}

/*
 * CHAOS TXT as NSD and Knot answer it: id.server and hostname.bind give the
 * identity, version.server and version.bind the version when one is set;
 * TTL 0, class CH, no AA; any other CH name or type is REFUSED.
 */
static void test_chaos(void)
{
	ask_t ch = { .qclass = DNS_CLASS_CH };
	static const char *const id_names[] = { "id.server.", "hostname.bind.", "ID.Server." };
	for (size_t i = 0; i < sizeof(id_names) / sizeof(id_names[0]); i++) {
		ldns_pkt *p = ask(id_names[i], DNS_TYPE_TXT, &ch);
		check(p, LDNS_RCODE_NOERROR, false, 1, 0, 0);
		CU_ASSERT_TRUE(has_rr(AN(p), " 0 CH TXT \"ns1.test\""));
		CU_ASSERT_EQUAL(last_info.rcode, DNS_RCODE_NOERROR);
		CU_ASSERT_EQUAL(last_info.zone_slot, 0);
		ldns_pkt_free(p);
	}
	/* the version is hidden unless set */
	ldns_pkt *p = ask("version.server.", DNS_TYPE_TXT, &ch);
	check(p, LDNS_RCODE_REFUSED, false, 0, 0, 0);
	ldns_pkt_free(p);
	ask_t ver = { .qclass = DNS_CLASS_CH, .version_text = "Shoal 1.2", .edns = 1232 };
	p = ask("version.bind.", DNS_TYPE_TXT, &ver);
	check(p, LDNS_RCODE_NOERROR, false, 1, 0, 0);
	CU_ASSERT_TRUE(has_rr(AN(p), "version.bind. 0 CH TXT \"Shoal 1.2\""));
	CU_ASSERT_EQUAL(ldns_pkt_edns_udp_size(p), DNS_EDNS_DEFAULT);
	ldns_pkt_free(p);
	p = ask("version.server.", DNS_TYPE_TXT, &ver);
	check(p, LDNS_RCODE_NOERROR, false, 1, 0, 0);
	ldns_pkt_free(p);
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
		ask_t o = { .qclass = refused[i].qclass, .version_text = "Shoal 1.2" };
		p = ask(refused[i].name, refused[i].type, &o);
		check(p, LDNS_RCODE_REFUSED, false, 0, 0, 0);
		ldns_pkt_free(p);
	}
	ask_t none = { .qclass = DNS_CLASS_CH, .no_identity = true };
	p = ask("id.server.", DNS_TYPE_TXT, &none);
	check(p, LDNS_RCODE_REFUSED, false, 0, 0, 0);
	ldns_pkt_free(p);
	/* the longest text (255 octets) with a long name fits 512 octets */
	char longest[256];
	memset(longest, 'x', 255);
	longest[255] = '\0';
	ask_t big = { .qclass = DNS_CLASS_CH, .identity = longest };
	p = ask("hostname.bind.", DNS_TYPE_TXT, &big);
	check(p, LDNS_RCODE_NOERROR, false, 1, 0, 0);
	CU_ASSERT_TRUE(last_len <= DNS_UDP_MIN);
	char quoted[260];
	snprintf(quoted, sizeof(quoted), "\"%s\"", longest);
	CU_ASSERT_TRUE(has_rr(AN(p), quoted));
	ldns_pkt_free(p);
}

static void test_zone_not_loaded(void)
{
	/* NSD and Knot: SERVFAIL for a configured zone that did not load */
	ask_t o = { .db = db_broken };
	ldns_pkt *p = ask("host.sub.example.com.", DNS_TYPE_A, &o);
	check(p, LDNS_RCODE_SERVFAIL, false, 0, 0, 0);
	ldns_pkt_free(p);
	p = ask("www.example.com.", DNS_TYPE_A, &o);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	ldns_pkt_free(p);
}

static void test_class_any(void)
{
	ask_t any = { .qclass = DNS_CLASS_ANY };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, &any);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	ldns_pkt_free(p);
}

static void test_apex_queries(void)
{
	ldns_pkt *p = ask("example.com.", DNS_TYPE_NS, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 3);
	CU_ASSERT(has_rr(AR(p), "ns1.example.com. 3600 IN A 192.0.2.53"));
	CU_ASSERT(has_rr(AR(p), "ns1.example.com. 3600 IN AAAA 2001:db8::53"));
	CU_ASSERT(has_rr(AR(p), "ns2.example.com. 3600 IN A 198.51.100.53"));
	ldns_pkt_free(p);
	p = ask("example.com.", DNS_TYPE_SOA, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "example.com. 3600 IN SOA ns1.example.com."));
	ldns_pkt_free(p);
}

static void test_additional_mx_srv(void)
{
	ldns_pkt *p = ask("example.com.", DNS_TYPE_MX, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 1);
	CU_ASSERT(has_rr(AR(p), "mail.example.com. 3600 IN A 192.0.2.25"));
	ldns_pkt_free(p);
	p = ask("_sip._udp.example.com.", DNS_TYPE_SRV, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 1);
	CU_ASSERT(has_rr(AR(p), "sip.example.com. 3600 IN A 192.0.2.60"));
	ldns_pkt_free(p);
}

static void test_any(void)
{
	/* RFC 8482 4.2: one RRset; like Knot, the lowest type */
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_ANY, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	CU_ASSERT(has_rr(AN(p), "IN A 192.0.2.80"));
	ldns_pkt_free(p);
	p = ask("example.com.", DNS_TYPE_ANY, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "example.com. 3600 IN A 192.0.2.1"));
	ldns_pkt_free(p);
	p = ask("b.c.example.com.", DNS_TYPE_ANY, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 0, 1, 0);
	ldns_pkt_free(p);
}

static void test_unknown_type_and_text(void)
{
	ldns_pkt *p = ask("private.example.com.", 65280, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	ldns_pkt_free(p);
	p = ask("txt.example.com.", DNS_TYPE_TXT, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "\"first string\" \"second \\\"quoted\\\"\" \"semi;colon\""));
	ldns_pkt_free(p);
	p = ask("host.inc.example.com.", DNS_TYPE_A, NULL);
	check(p, LDNS_RCODE_NOERROR, true, 1, 0, 0);
	CU_ASSERT(has_rr(AN(p), "host.inc.example.com. 300 IN A 192.0.2.124"));
	ldns_pkt_free(p);
}

static void test_edns(void)
{
	ask_t o = { .edns = 4096, .do_bit = true };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, &o);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	CU_ASSERT_TRUE(ldns_pkt_edns(p));
	CU_ASSERT_EQUAL(ldns_pkt_edns_udp_size(p), DNS_EDNS_DEFAULT);
	CU_ASSERT_TRUE(ldns_pkt_edns_do(p));
	CU_ASSERT_TRUE(last_info.edns);
	ldns_pkt_free(p);
	ask_t nodo = { .edns = 1232 };
	p = ask("nothere.example.com.", DNS_TYPE_A, &nodo);
	check(p, LDNS_RCODE_NXDOMAIN, true, 0, 1, 0);
	CU_ASSERT_TRUE(ldns_pkt_edns(p));
	CU_ASSERT_FALSE(ldns_pkt_edns_do(p));
	ldns_pkt_free(p);
	/* OPT also on REFUSED */
	p = ask("www.example.org.", DNS_TYPE_A, &nodo);
	CU_ASSERT_TRUE(ldns_pkt_edns(p));
	ldns_pkt_free(p);
}

static void test_badvers(void)
{
	ask_t o = { .edns = 1232, .version = 1 };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_TRUE(ldns_pkt_edns(p));
	/* RFC 6891 6.1.3: BADVERS is 16: upper 8 bits 1 in the OPT, 0 in the header */
	CU_ASSERT_EQUAL(ldns_pkt_edns_extended_rcode(p), 1);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), 0);
	CU_ASSERT_EQUAL(COUNT(AN(p)), 0);
	CU_ASSERT_EQUAL(last_info.rcode, DNS_RCODE_BADVERS);
	ldns_pkt_free(p);
}

static void test_nsid(void)
{
	ask_t o = { .edns = 1232, .nsid = true };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	ldns_rdf *data = ldns_pkt_edns_data(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	const uint8_t *d = ldns_rdf_data(data);
	CU_ASSERT_EQUAL(wire_get_u16(d), DNS_EDNS_NSID);
	CU_ASSERT_EQUAL(wire_get_u16(d + 2), sizeof(nsid_value) - 1);
	CU_ASSERT_EQUAL(memcmp(d + 4, nsid_value, sizeof(nsid_value) - 1), 0);
	ldns_pkt_free(p);
	/* not asked: not sent */
	ask_t plain = { .edns = 1232 };
	p = ask("www.example.com.", DNS_TYPE_A, &plain);
	CU_ASSERT_PTR_NULL(ldns_pkt_edns_data(p));
	ldns_pkt_free(p);
}

static void test_truncation(void)
{
	/* 600 octets of TXT do not fit 512: TC with the question only */
	ldns_pkt *p = ask("big.example.com.", DNS_TYPE_TXT, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_TRUE(ldns_pkt_tc(p));
	CU_ASSERT_EQUAL(COUNT(AN(p)), 0);
	CU_ASSERT_EQUAL(COUNT(NS(p)), 0);
	CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_question(p)), 1);
	CU_ASSERT_TRUE(last_info.truncated);
	CU_ASSERT(last_len <= 512);
	ldns_pkt_free(p);
	/* they fit the EDNS size */
	ask_t e = { .edns = 1232 };
	p = ask("big.example.com.", DNS_TYPE_TXT, &e);
	check(p, LDNS_RCODE_NOERROR, true, 6, 0, 0);
	ldns_pkt_free(p);
	/* a requester size below 512 counts as 512 (RFC 6891 6.2.5) */
	ask_t small = { .edns = 100 };
	p = ask("big.example.com.", DNS_TYPE_TXT, &small);
	CU_ASSERT_TRUE(ldns_pkt_tc(p));
	ldns_pkt_free(p);
	/* and TCP takes anything */
	ask_t tcp = { .tcp = true };
	p = ask("big.example.com.", DNS_TYPE_TXT, &tcp);
	check(p, LDNS_RCODE_NOERROR, true, 6, 0, 0);
	ldns_pkt_free(p);
}

static void test_additional_dropped_not_truncated(void)
{
	/* 18 AAAA for six MX do not all fit 512: left out, no TC */
	ldns_pkt *p = ask("manymx.example.com.", DNS_TYPE_MX, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_FALSE(ldns_pkt_tc(p));
	CU_ASSERT_EQUAL(COUNT(AN(p)), 6);
	CU_ASSERT(COUNT(AR(p)) < 18);
	CU_ASSERT(COUNT(AR(p)) > 0);
	CU_ASSERT(last_len <= 512);
	ldns_pkt_free(p);
	ask_t tcp = { .tcp = true };
	p = ask("manymx.example.com.", DNS_TYPE_MX, &tcp);
	check(p, LDNS_RCODE_NOERROR, true, 6, 0, 18);
	ldns_pkt_free(p);
}

static void test_referral_glue_truncated(void)
{
	/* RFC 9471 3: in-domain glue that does not fit sets TC; like Knot,
	 * the referral and the glue that fit stay */
	ldns_pkt *p = ask("x.bigdeleg.example.com.", DNS_TYPE_A, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_TRUE(ldns_pkt_tc(p));
	CU_ASSERT_EQUAL(COUNT(NS(p)), 16);
	CU_ASSERT(COUNT(AR(p)) < 32);
	CU_ASSERT_TRUE(last_info.truncated);
	CU_ASSERT(last_len <= 512);
	ldns_pkt_free(p);
	ask_t tcp = { .tcp = true };
	p = ask("x.bigdeleg.example.com.", DNS_TYPE_A, &tcp);
	check(p, LDNS_RCODE_NOERROR, false, 0, 16, 32);
	ldns_pkt_free(p);
}

static void test_transfers(void)
{
	ldns_pkt *p = ask("example.com.", DNS_TYPE_AXFR, NULL);
	check(p, LDNS_RCODE_NOTIMPL, false, 0, 0, 0);
	ldns_pkt_free(p);
	ask_t tcp = { .tcp = true };
	p = ask("example.com.", DNS_TYPE_AXFR, &tcp);
	check(p, LDNS_RCODE_REFUSED, false, 0, 0, 0);
	ldns_pkt_free(p);
	p = ask("example.com.", DNS_TYPE_IXFR, NULL);
	check(p, LDNS_RCODE_REFUSED, false, 0, 0, 0);
	ldns_pkt_free(p);
}

static void test_malformed(void)
{
	/* shorter than a header: no answer */
	static const uint8_t shortq[] = { 0x42, 0x42, 0, 0, 0, 1 };
	CU_ASSERT_PTR_NULL(ask_raw(shortq, sizeof(shortq), NULL));
	CU_ASSERT_TRUE(last_info.dropped);
	CU_ASSERT_TRUE(last_info.malformed);
	/* QR set: no answer */
	static const uint8_t resp[] = {
		0x42, 0x42, 0x80, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1
	};
	CU_ASSERT_PTR_NULL(ask_raw(resp, sizeof(resp), NULL));
	CU_ASSERT_TRUE(last_info.dropped);
	CU_ASSERT_FALSE(last_info.malformed);
	/* QDCOUNT 2: FORMERR */
	static const uint8_t two[] = { 0x42, 0x42, 0, 0, 0, 2, 0, 0, 0, 0, 0,
				       0,    0,    0, 1, 0, 1, 0, 0, 1, 0, 1 };
	ldns_pkt *p = ask_raw(two, sizeof(two), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_FORMERR);
	CU_ASSERT_TRUE(last_info.malformed);
	ldns_pkt_free(p);
	/* truncated question: FORMERR or nothing, never a crash */
	static const uint8_t cut[] = { 0x42, 0x42, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w', 'w' };
	p = ask_raw(cut, sizeof(cut), NULL);
	if (p)
		CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_FORMERR);
	ldns_pkt_free(p);
	/* trailing bytes after the question do not matter */
	static const uint8_t trail[] = { 0x42, 0x42, 0,   0,   0,   1,   0,    0,   0,
					 0,    0,    0,   3,   'w', 'w', 'w',  7,   'e',
					 'x',  'a',  'm', 'p', 'l', 'e', 3,    'c', 'o',
					 'm',  0,    0,   1,   0,   1,   0xde, 0xad };
	p = ask_raw(trail, sizeof(trail), NULL);
	check(p, LDNS_RCODE_NOERROR, true, 2, 0, 0);
	ldns_pkt_free(p);
}

static void test_notimp(void)
{
	/* opcode UPDATE (5) */
	static const uint8_t upd[] = { 0x42, 0x42, 5 << 3, 0,   0,   1,   0,   0,   0,   0,
				       0,    0,    7,      'e', 'x', 'a', 'm', 'p', 'l', 'e',
				       3,    'c',  'o',    'm', 0,   0,   6,   0,   1 };
	ldns_pkt *p = ask_raw(upd, sizeof(upd), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_NOTIMPL);
	ldns_pkt_free(p);
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
			     .nsid = nsid_value,
			     .nsid_len = sizeof(nsid_value) - 1 };
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
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	static const char text[] = "$ORIGIN cut.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n"
				   "@ NS ns1\nns1 A 192.0.2.1\n"
				   "d DNAME target.example.\n"
				   "c CNAME ns1.cut.test.\n"
				   "srv SRV 0 0 1 host.cut.test.\nhost A 192.0.2.2\n";
	CU_ASSERT_EQUAL_FATAL(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
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

static char *path_of(const char *file)
{
	static char paths[2][4096];
	static int k;
	const char *src = getenv("SHOAL_SRCDIR");
	char *p = paths[k++ & 1];
	snprintf(p, 4096, "%s/tests/unit/zones/%s", src ? src : ".", file);
	return p;
}

int main(void)
{
	char parent[4096], child[4096];
	snprintf(parent, sizeof(parent), "%s", path_of("example.zone"));
	snprintf(child, sizeof(child), "%s", path_of("child.zone"));
	char broken[4096];
	snprintf(broken, sizeof(broken), "%s", path_of("nosoa.zone"));
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
	static const unit_test_t tests[] = {
		UNIT_TEST(test_exact_match),
		UNIT_TEST(test_info_for_statistics),
		UNIT_TEST(test_stored_names_bounded),
		UNIT_TEST(test_question_case_echoed),
		UNIT_TEST(test_nxdomain),
		UNIT_TEST(test_nodata),
		UNIT_TEST(test_empty_non_terminal),
		UNIT_TEST(test_cname_chain),
		UNIT_TEST(test_cname_out_of_zone),
		UNIT_TEST(test_cname_to_nothing),
		UNIT_TEST(test_cname_loop),
		UNIT_TEST(test_cname_chain_limit),
		UNIT_TEST(test_wildcard_ns),
		UNIT_TEST(test_cname_into_cut),
		UNIT_TEST(test_wildcard),
		UNIT_TEST(test_wildcard_blocked),
		UNIT_TEST(test_wildcard_cname),
		UNIT_TEST(test_dname),
		UNIT_TEST(test_dname_into_zone),
		UNIT_TEST(test_dname_too_long),
		UNIT_TEST(test_referral),
		UNIT_TEST(test_ds_at_cut),
		UNIT_TEST(test_longest_match),
		UNIT_TEST(test_refused),
		UNIT_TEST(test_chaos),
		UNIT_TEST(test_zone_not_loaded),
		UNIT_TEST(test_class_any),
		UNIT_TEST(test_apex_queries),
		UNIT_TEST(test_additional_mx_srv),
		UNIT_TEST(test_any),
		UNIT_TEST(test_unknown_type_and_text),
		UNIT_TEST(test_edns),
		UNIT_TEST(test_badvers),
		UNIT_TEST(test_nsid),
		UNIT_TEST(test_truncation),
		UNIT_TEST(test_additional_dropped_not_truncated),
		UNIT_TEST(test_referral_glue_truncated),
		UNIT_TEST(test_transfers),
		UNIT_TEST(test_malformed),
		UNIT_TEST(test_notimp),
		UNIT_TEST(test_mutated_packets),
		UNIT_END,
	};
	int rc = unit_run("zone_answer", tests);
	zonedb_free(db_parent);
	zonedb_free(db_both);
	zonedb_free(db_broken);
	return rc;
}
