/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * DNSSEC answers of zone/answer.c, packet in and packet out, over
 * the signed zones of tests/diff/dnssec (secure.test with NSEC, secure3.test
 * with NSEC3 and opt-out, the signed child signed.secure.test). Every
 * signature served is verified with ldns against the zone's DNSKEY, and
 * every denial is checked with ldns's own NSEC and NSEC3 denial checks, so
 * the tests do not restate the answer logic.
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
#include "zone/internal.h"
#include "zone/zonedb.h"

/*
 * ldns 1.8.3's NSEC3 denial check loses the hashed names it builds
 * (ldns_nsec3_hash_name in ldns_dnssec_verify_denial_nsec3_match). The leak
 * is ldns's, not Shoal's: LeakSanitizer is told to ignore what that one call
 * allocates, and everything else stays checked.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHOAL_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SHOAL_LSAN 1
#endif
#ifdef SHOAL_LSAN
#include <sanitizer/lsan_interface.h>
#define LDNS_LEAKS_BEGIN() __lsan_disable()
#define LDNS_LEAKS_END()   __lsan_enable()
#else
#define LDNS_LEAKS_BEGIN() ((void)0)
#define LDNS_LEAKS_END()   ((void)0)
#endif

/* A time inside the test signatures' validity (2026-01-01 to 2036-12-31). */
#define CHECK_TIME ((time_t)1893456000) /* 2030-01-01 */

static zonedb_t *db;
static ldns_rr_list *keys; /* the DNSKEYs of the three zones, as served */

typedef struct ask {
	bool do_bit;
	bool no_edns;
	uint16_t edns; /* 0: 1232 */
	bool tcp;
} ask_t;

static answer_info_t info;
static size_t last_len;

static ldns_pkt *ask(const char *name, uint16_t type, ask_t o)
{
	static uint8_t out[DNS_TCP_MAX];
	ldns_pkt *q = ldns_pkt_query_new(ldns_dname_new_frm_str(name), (ldns_rr_type)type,
					 LDNS_RR_CLASS_IN, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	ldns_pkt_set_id(q, 7);
	if (!o.no_edns) {
		ldns_pkt_set_edns_udp_size(q, o.edns ? o.edns : 1232);
		ldns_pkt_set_edns_do(q, o.do_bit);
	}
	uint8_t *wire = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL_FATAL(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
	ldns_pkt_free(q);
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT, .tcp = o.tcp };
	size_t n = answer_query(db, wire, len, out, o.tcp ? sizeof(out) : 1232, &ctx, &info);
	free(wire);
	last_len = n;
	CU_ASSERT_FATAL(n > 0);
	ldns_pkt *p = NULL;
	CU_ASSERT_EQUAL_FATAL(ldns_wire2pkt(&p, out, n), LDNS_STATUS_OK);
	return p;
}

static ldns_pkt *ask_do(const char *name, uint16_t type)
{
	return ask(name, type, (ask_t){ .do_bit = true });
}

static size_t count_type(const ldns_rr_list *l, ldns_rr_type t)
{
	size_t n = 0;
	for (size_t i = 0; i < ldns_rr_list_rr_count(l); i++)
		n += ldns_rr_get_type(ldns_rr_list_rr(l, i)) == t;
	return n;
}

static size_t dnssec_records(const ldns_pkt *p)
{
	size_t n = 0;
	const ldns_rr_list *secs[] = { ldns_pkt_answer(p), ldns_pkt_authority(p),
				       ldns_pkt_additional(p) };
	for (int s = 0; s < 3; s++)
		n += count_type(secs[s], LDNS_RR_TYPE_RRSIG) +
		     count_type(secs[s], LDNS_RR_TYPE_NSEC) +
		     count_type(secs[s], LDNS_RR_TYPE_NSEC3);
	return n;
}

/*
 * Every RRset of the section, but those of type `unsigned_type` (NS of a
 * referral, CNAME synthesised from a DNAME), carries RRSIGs that verify
 * with the zone keys. Returns the number of RRsets verified.
 */
static int verify_section(const ldns_rr_list *sec, ldns_rr_type unsigned_type)
{
	int verified = 0;
	for (size_t i = 0; i < ldns_rr_list_rr_count(sec); i++) {
		ldns_rr *rr = ldns_rr_list_rr(sec, i);
		ldns_rr_type t = ldns_rr_get_type(rr);
		if (t == LDNS_RR_TYPE_RRSIG || t == unsigned_type)
			continue;
		/* the first RR of each RRset collects the set and its signatures */
		bool first = true;
		for (size_t k = 0; k < i && first; k++) {
			ldns_rr *o = ldns_rr_list_rr(sec, k);
			first = !(ldns_rr_get_type(o) == t &&
				  ldns_dname_compare(ldns_rr_owner(o), ldns_rr_owner(rr)) == 0);
		}
		if (!first)
			continue;
		ldns_rr_list *set = ldns_rr_list_new(), *sigs = ldns_rr_list_new();
		for (size_t k = 0; k < ldns_rr_list_rr_count(sec); k++) {
			ldns_rr *o = ldns_rr_list_rr(sec, k);
			if (ldns_dname_compare(ldns_rr_owner(o), ldns_rr_owner(rr)) != 0)
				continue;
			if (ldns_rr_get_type(o) == t)
				ldns_rr_list_push_rr(set, o);
			else if (ldns_rr_get_type(o) == LDNS_RR_TYPE_RRSIG &&
				 ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(o)) == t)
				ldns_rr_list_push_rr(sigs, o);
		}
		ldns_status st = ldns_verify_time(set, sigs, keys, CHECK_TIME, NULL);
		if (st != LDNS_STATUS_OK) {
			char *s = ldns_rr2str(rr);
			fprintf(stderr, "not verified (%s): %s", ldns_get_errorstr_by_id(st), s);
			free(s);
		}
		CU_ASSERT_EQUAL(st, LDNS_STATUS_OK);
		verified += st == LDNS_STATUS_OK;
		ldns_rr_list_free(set);
		ldns_rr_list_free(sigs);
	}
	return verified;
}

/* The NSEC or NSEC3 records of the authority section, and all its RRSIGs. */
static void denial_records(const ldns_pkt *p, ldns_rr_type t, ldns_rr_list **nsecs,
			   ldns_rr_list **sigs)
{
	*nsecs = ldns_rr_list_new();
	*sigs = ldns_rr_list_new();
	const ldns_rr_list *au = ldns_pkt_authority(p);
	for (size_t i = 0; i < ldns_rr_list_rr_count(au); i++) {
		ldns_rr *rr = ldns_rr_list_rr(au, i);
		if (ldns_rr_get_type(rr) == t)
			ldns_rr_list_push_rr(*nsecs, rr);
		else if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_RRSIG)
			ldns_rr_list_push_rr(*sigs, rr);
	}
}

/* The empty non-terminals of the test zones. */
static bool is_ent(const char *name)
{
	return strncmp(name, "ent.", 4) == 0 || strncmp(name, "b.ent.", 6) == 0;
}

/*
 * The negative answer p to (name, type) is proven: SOA and proofs signed,
 * and ldns's denial check accepts the NSEC or NSEC3 records given.
 */
static void check_denial(ldns_pkt *p, const char *name, uint16_t type, bool nsec3)
{
	verify_section(ldns_pkt_authority(p), 0);
	CU_ASSERT_EQUAL(count_type(ldns_pkt_authority(p), LDNS_RR_TYPE_SOA), 1);
	ldns_rr *q = ldns_rr_new();
	ldns_rr_set_owner(q, ldns_dname_new_frm_str(name));
	ldns_rr_set_type(q, (ldns_rr_type)type);
	ldns_rr_list *nsecs, *sigs;
	denial_records(p, nsec3 ? LDNS_RR_TYPE_NSEC3 : LDNS_RR_TYPE_NSEC, &nsecs, &sigs);
	CU_ASSERT(ldns_rr_list_rr_count(nsecs) > 0);
	if (!nsec3 && is_ent(name)) {
		/*
		 * An empty non-terminal (RFC 4035 3.1.3.2): one NSEC covers the
		 * name and its next name lies below it. ldns's check takes any
		 * covering NSEC for NXDOMAIN and asks for a wildcard proof.
		 */
		CU_ASSERT_EQUAL(ldns_rr_list_rr_count(nsecs), 1);
		ldns_rr *n = ldns_rr_list_rr(nsecs, 0);
		CU_ASSERT_TRUE(ldns_nsec_covers_name(n, ldns_rr_owner(q)));
		CU_ASSERT_TRUE(ldns_dname_is_subdomain(ldns_rr_rdf(n, 0), ldns_rr_owner(q)));
		goto done;
	}
	LDNS_LEAKS_BEGIN();
	ldns_status st = nsec3 ? ldns_dnssec_verify_denial_nsec3(
					 q, nsecs, sigs, ldns_pkt_get_rcode(p), (ldns_rr_type)type,
					 ldns_rr_list_rr_count(ldns_pkt_answer(p)) == 0)
			       : ldns_dnssec_verify_denial(q, nsecs, sigs);
	LDNS_LEAKS_END();
	if (st != LDNS_STATUS_OK)
		fprintf(stderr, "denial of %s type %u not proven: %s\n", name, type,
			ldns_get_errorstr_by_id(st));
	CU_ASSERT_EQUAL(st, LDNS_STATUS_OK);
done:
	ldns_rr_list_free(nsecs);
	ldns_rr_list_free(sigs);
	ldns_rr_free(q);
}

static const char *zones[2] = { "secure.test.", "secure3.test." };

/* "<label>.<zone>" for zone k. */
static const char *at(const char *label, int k)
{
	static char buf[4][256];
	static int i;
	char *b = buf[i++ & 3];
	if (*label)
		snprintf(b, 256, "%s.%s", label, zones[k]);
	else
		snprintf(b, 256, "%s", zones[k]);
	return b;
}

static void test_no_do_no_dnssec(void)
{
	const char *names[] = { "www",   "nothere",    "a.b.ent", "foo.wild",
				"alias", "x.insecure", "x.signed" };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			ldns_pkt *p = ask(at(names[i], k), DNS_TYPE_A, (ask_t){ 0 });
			CU_ASSERT_EQUAL(dnssec_records(p), 0);
			ldns_pkt_free(p);
			p = ask(at(names[i], k), DNS_TYPE_A, (ask_t){ .no_edns = true });
			CU_ASSERT_EQUAL(dnssec_records(p), 0);
			ldns_pkt_free(p);
		}
		/* asked for by type, DNSSEC records come without DO */
		ldns_pkt *p = ask(at("", k), DNS_TYPE_DNSKEY, (ask_t){ 0 });
		CU_ASSERT_EQUAL(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_DNSKEY), 2);
		CU_ASSERT_EQUAL(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_RRSIG), 0);
		ldns_pkt_free(p);
		p = ask(at("www", k), DNS_TYPE_RRSIG, (ask_t){ 0 });
		CU_ASSERT(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_RRSIG) > 0);
		ldns_pkt_free(p);
	}
}

static void test_positive_signed(void)
{
	const char *names[] = { "", "www", "mail", "ns1", "explicit.wild", "txt", "big" };
	const uint16_t types[] = { DNS_TYPE_A, DNS_TYPE_MX, DNS_TYPE_TXT, DNS_TYPE_AAAA };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
				ldns_pkt *p = ask_do(at(names[i], k), types[t]);
				CU_ASSERT_TRUE(ldns_pkt_edns_do(p));
				CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
				if (ldns_rr_list_rr_count(ldns_pkt_answer(p))) {
					CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), 0), 1);
				} else {
					check_denial(p, at(names[i], k), types[t], k == 1);
				}
				verify_section(ldns_pkt_additional(p), 0);
				ldns_pkt_free(p);
			}
		}
		ldns_pkt *p = ask_do(at("", k), DNS_TYPE_DNSKEY);
		CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), 0), 1);
		ldns_pkt_free(p);
	}
}

static void test_nxdomain_proven(void)
{
	const char *names[] = { "nothere",    "a.b.c.nothere",   "zzzz", "0", "nx.www",
				"nx.a.b.ent", "nx.explicit.wild" };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			ldns_pkt *p = ask_do(at(names[i], k), DNS_TYPE_A);
			CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), LDNS_RCODE_NXDOMAIN);
			CU_ASSERT_TRUE(ldns_pkt_aa(p));
			check_denial(p, at(names[i], k), DNS_TYPE_A, k == 1);
			/* NSEC: covering + wildcard; NSEC3: encloser, next closer, wildcard */
			size_t proofs = count_type(ldns_pkt_authority(p),
						   k ? LDNS_RR_TYPE_NSEC3 : LDNS_RR_TYPE_NSEC);
			CU_ASSERT(proofs >= 1 && proofs <= (k ? 3u : 2u));
			/* the SOA and its RRSIG carry the negative TTL (RFC 2308 3, RFC 4035 3.1.3)
			 */
			const ldns_rr_list *au = ldns_pkt_authority(p);
			for (size_t j = 0; j < ldns_rr_list_rr_count(au); j++) {
				ldns_rr *rr = ldns_rr_list_rr(au, j);
				if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA ||
				    (ldns_rr_get_type(rr) == LDNS_RR_TYPE_RRSIG &&
				     ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(rr)) ==
					     LDNS_RR_TYPE_SOA))
					CU_ASSERT_EQUAL(ldns_rr_ttl(rr), 300);
			}
			ldns_pkt_free(p);
		}
	}
}

static void test_nodata_proven(void)
{
	const char *names[] = { "www",   "mail",          "",     "a.b.ent", "ent",
				"b.ent", "explicit.wild", "alias" };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			uint16_t type =
				strcmp(names[i], "alias") == 0 ? DNS_TYPE_NSEC3PARAM : DNS_TYPE_SRV;
			ldns_pkt *p = ask_do(at(names[i], k), type);
			CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
			if (strcmp(names[i], "alias") == 0) {
				/* a CNAME answers, signed; its target has no such type */
				CU_ASSERT(verify_section(ldns_pkt_answer(p), 0) >= 1);
				CU_ASSERT_EQUAL(count_type(ldns_pkt_authority(p), LDNS_RR_TYPE_SOA),
						1);
			} else {
				CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_answer(p)), 0);
				check_denial(p, at(names[i], k), type, k == 1);
			}
			ldns_pkt_free(p);
		}
	}
}

/*
 * The answer p for `name`, synthesised from the wildcard below `parent`
 * in zone k, proves that name itself does not exist (RFC 4035 3.1.3.3,
 * RFC 5155 7.2.6): one NSEC covering it, or one NSEC3 covering the next
 * closer name, signed.
 */
static void check_wildcard_proof(ldns_pkt *p, const char *name, const char *parent, int k)
{
	ldns_rr_list *nsecs, *sigs;
	denial_records(p, k ? LDNS_RR_TYPE_NSEC3 : LDNS_RR_TYPE_NSEC, &nsecs, &sigs);
	CU_ASSERT_EQUAL(ldns_rr_list_rr_count(nsecs), 1);
	verify_section(ldns_pkt_authority(p), 0);
	ldns_rdf *qn = ldns_dname_new_frm_str(name);
	if (ldns_rr_list_rr_count(nsecs) == 0) {
		/* nothing to check further */
	} else if (k == 0) {
		CU_ASSERT_TRUE(ldns_nsec_covers_name(ldns_rr_list_rr(nsecs, 0), qn));
	} else {
		/* the next closer name: one label below the wildcard's parent */
		ldns_rdf *wild = ldns_dname_new_frm_str(parent);
		ldns_rdf *next = ldns_dname_clone_from(
			qn, ldns_dname_label_count(qn) - ldns_dname_label_count(wild) - 1);
		ldns_rr *n3 = ldns_rr_list_rr(nsecs, 0);
		ldns_rdf *h = ldns_nsec3_hash_name_frm_nsec3(n3, next);
		ldns_rdf *zone = ldns_dname_new_frm_str(zones[k]);
		CU_ASSERT_EQUAL(ldns_dname_cat(h, zone), LDNS_STATUS_OK);
		CU_ASSERT_TRUE(ldns_nsec_covers_name(n3, h));
		ldns_rdf_deep_free(wild);
		ldns_rdf_deep_free(next);
		ldns_rdf_deep_free(h);
		ldns_rdf_deep_free(zone);
	}
	ldns_rdf_deep_free(qn);
	ldns_rr_list_free(nsecs);
	ldns_rr_list_free(sigs);
}

static void test_wildcard_proven(void)
{
	for (int k = 0; k < 2; k++) {
		/* the synthesised answer verifies (RRSIG labels < owner labels) */
		const char *names[] = { "foo.wild", "a.b.wild", "x.wcname" };
		for (int i = 0; i < 3; i++) {
			ldns_pkt *p = ask_do(at(names[i], k), DNS_TYPE_A);
			CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
			CU_ASSERT(verify_section(ldns_pkt_answer(p), 0) >= 1);
			check_wildcard_proof(p, at(names[i], k), at(i == 2 ? "wcname" : "wild", k),
					     k);
			ldns_pkt_free(p);
		}
		/* wildcard NODATA (RFC 4035 3.1.3.4, RFC 5155 7.2.5) */
		ldns_pkt *p = ask_do(at("foo.wild", k), DNS_TYPE_MX);
		CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_answer(p)), 0);
		check_denial(p, at("foo.wild", k), DNS_TYPE_MX, k == 1);
		CU_ASSERT_EQUAL(count_type(ldns_pkt_authority(p),
					   k ? LDNS_RR_TYPE_NSEC3 : LDNS_RR_TYPE_NSEC),
				k ? 3u : 2u);
		ldns_pkt_free(p);
	}
}

/*
 * RRSIG asked for at a name a wildcard synthesises: the signatures come
 * from the wildcard, so with DO the answer proves, as every other
 * wildcard answer does, that the name itself does not exist (RFC 4035
 * 3.1.3.3; Knot includes the proof too). Without DO, no proof.
 */
static void test_rrsig_at_wildcard_proven(void)
{
	for (int k = 0; k < 2; k++) {
		ldns_pkt *p = ask_do(at("foo.wild", k), DNS_TYPE_RRSIG);
		CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
		CU_ASSERT(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_RRSIG) > 0);
		check_wildcard_proof(p, at("foo.wild", k), at("wild", k), k);
		ldns_pkt_free(p);
		p = ask(at("foo.wild", k), DNS_TYPE_RRSIG, (ask_t){ 0 });
		CU_ASSERT(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_RRSIG) > 0);
		CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_authority(p)), 0);
		ldns_pkt_free(p);
	}
}

/*
 * ANY at a name whose only data is of a type numbered above NSEC: the
 * data, not the NSEC (RFC 8482 4.2 allows any one RRset; NSD answers the
 * data, which is what an ANY user wants), signed with DO.
 */
static void test_any_prefers_data(void)
{
	for (int k = 0; k < 2; k++) {
		ask_t opts[2] = { { 0 }, { .do_bit = true } };
		for (int d = 0; d < 2; d++) {
			ldns_pkt *p = ask(at("unk-only", k), DNS_TYPE_ANY, opts[d]);
			CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
			CU_ASSERT_EQUAL(count_type(ldns_pkt_answer(p), (ldns_rr_type)65281), 1);
			CU_ASSERT_EQUAL(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_NSEC), 0);
			CU_ASSERT_EQUAL(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_RRSIG),
					(size_t)d);
			if (d)
				CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), 0), 1);
			ldns_pkt_free(p);
		}
	}
}

static void test_cname_dname_signed(void)
{
	for (int k = 0; k < 2; k++) {
		ldns_pkt *p = ask_do(at("chain", k), DNS_TYPE_A);
		/* chain -> alias -> www: three RRsets, each signed */
		CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), 0), 3);
		ldns_pkt_free(p);
		/* CNAME to a name that does not exist: NXDOMAIN for the target, proven */
		p = ask_do(at("tonx", k), DNS_TYPE_A);
		CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p), LDNS_RCODE_NXDOMAIN);
		CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), 0), 1);
		check_denial(p, at("nothere", k), DNS_TYPE_A, k == 1);
		ldns_pkt_free(p);
		/* DNAME signed; the synthesised CNAME is not (RFC 6672 5.3.1) */
		p = ask_do(at("host.dname-in", k), DNS_TYPE_A);
		CU_ASSERT_EQUAL(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_CNAME), 1);
		CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), LDNS_RR_TYPE_CNAME), 2);
		ldns_pkt_free(p);
	}
}

static void test_referrals(void)
{
	/* signed child: the DS and its RRSIG beside the NS (RFC 4035 3.1.4) */
	ldns_pkt *p = ask_do("www.signed.secure3.test.", DNS_TYPE_A);
	CU_ASSERT_FALSE(ldns_pkt_aa(p));
	CU_ASSERT_EQUAL(count_type(ldns_pkt_authority(p), LDNS_RR_TYPE_DS), 1);
	CU_ASSERT_EQUAL(verify_section(ldns_pkt_authority(p), LDNS_RR_TYPE_NS), 1);
	ldns_pkt_free(p);
	p = ask("www.signed.secure3.test.", DNS_TYPE_A, (ask_t){ 0 });
	CU_ASSERT_EQUAL(count_type(ldns_pkt_authority(p), LDNS_RR_TYPE_DS), 0);
	ldns_pkt_free(p);
	/* unsigned child: proof that there is no DS (NSEC; NSEC3 opt-out) */
	for (int k = 0; k < 2; k++) {
		p = ask_do(at("x.insecure", k), DNS_TYPE_A);
		CU_ASSERT_FALSE(ldns_pkt_aa(p));
		CU_ASSERT_EQUAL(count_type(ldns_pkt_authority(p), LDNS_RR_TYPE_DS), 0);
		CU_ASSERT_EQUAL(count_type(ldns_pkt_authority(p), LDNS_RR_TYPE_NS), 1);
		size_t proofs = count_type(ldns_pkt_authority(p),
					   k ? LDNS_RR_TYPE_NSEC3 : LDNS_RR_TYPE_NSEC);
		CU_ASSERT(proofs >= 1);
		CU_ASSERT_EQUAL((size_t)verify_section(ldns_pkt_authority(p), LDNS_RR_TYPE_NS),
				proofs);
		if (k == 0) {
			ldns_rr_list *nsecs, *sigs;
			denial_records(p, LDNS_RR_TYPE_NSEC, &nsecs, &sigs);
			ldns_rr *n = ldns_rr_list_rr(nsecs, 0);
			CU_ASSERT_TRUE(ldns_nsec_bitmap_covers_type(ldns_nsec_get_bitmap(n),
								    LDNS_RR_TYPE_NS));
			CU_ASSERT_FALSE(ldns_nsec_bitmap_covers_type(ldns_nsec_get_bitmap(n),
								     LDNS_RR_TYPE_DS));
			ldns_rr_list_free(nsecs);
			ldns_rr_list_free(sigs);
		}
		ldns_pkt_free(p);
		/* a DS query at the cut is answered by the parent: NODATA, proven */
		p = ask_do(at("insecure", k), DNS_TYPE_DS);
		CU_ASSERT_TRUE(ldns_pkt_aa(p));
		CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_answer(p)), 0);
		check_denial(p, at("insecure", k), DNS_TYPE_DS, k == 1);
		ldns_pkt_free(p);
	}
	/* DS of a served child comes from the parent zone, signed by the parent */
	p = ask_do("signed.secure.test.", DNS_TYPE_DS);
	CU_ASSERT_TRUE(ldns_pkt_aa(p));
	CU_ASSERT_EQUAL(count_type(ldns_pkt_answer(p), LDNS_RR_TYPE_DS), 1);
	CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), 0), 1);
	ldns_pkt_free(p);
}

static void test_truncation_with_signatures(void)
{
	for (int k = 0; k < 2; k++) {
		/* a UDP size between the answer's size without and with signatures */
		ldns_pkt_free(ask(at("big", k), DNS_TYPE_TXT, (ask_t){ .edns = 4096 }));
		size_t plain = last_len;
		ldns_pkt_free(
			ask(at("big", k), DNS_TYPE_TXT, (ask_t){ .edns = 4096, .do_bit = true }));
		size_t signed_len = last_len;
		CU_ASSERT_FATAL(signed_len > plain && plain >= 512);
		uint16_t size = (uint16_t)((plain + signed_len) / 2);
		/* fits without DO, not with the signatures: TC, question only */
		ldns_pkt *p = ask(at("big", k), DNS_TYPE_TXT, (ask_t){ .edns = size });
		CU_ASSERT_FALSE(ldns_pkt_tc(p));
		CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_answer(p)), 6);
		ldns_pkt_free(p);
		p = ask(at("big", k), DNS_TYPE_TXT, (ask_t){ .edns = size, .do_bit = true });
		CU_ASSERT_TRUE(ldns_pkt_tc(p));
		CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_answer(p)), 0);
		CU_ASSERT_TRUE(info.truncated);
		ldns_pkt_free(p);
		/* over TCP the whole signed answer */
		p = ask(at("big", k), DNS_TYPE_TXT,
			(ask_t){ .edns = size, .do_bit = true, .tcp = true });
		CU_ASSERT_FALSE(ldns_pkt_tc(p));
		CU_ASSERT_EQUAL(verify_section(ldns_pkt_answer(p), 0), 1);
		ldns_pkt_free(p);
		/* a negative answer with its proofs is whole or truncated, never cut short */
		p = ask(at("a.b.c.nothere", k), DNS_TYPE_A, (ask_t){ .edns = 512, .do_bit = true });
		if (!ldns_pkt_tc(p))
			check_denial(p, at("a.b.c.nothere", k), DNS_TYPE_A, k == 1);
		else
			CU_ASSERT_EQUAL(ldns_rr_list_rr_count(ldns_pkt_authority(p)), 0);
		ldns_pkt_free(p);
	}
}

static void test_nsec3_chain_hidden(void)
{
	/* an NSEC3 owner is not a name of the zone (as in Knot): NXDOMAIN, proven */
	ldns_pkt *p = ask_do("secure3.test.", DNS_TYPE_NSEC3PARAM);
	ldns_rr *param = ldns_rr_list_rr(ldns_pkt_answer(p), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(param);
	ldns_rdf *www = ldns_dname_new_frm_str("www.secure3.test.");
	ldns_rdf *h = ldns_nsec3_hash_name_frm_nsec3(param, www);
	ldns_rdf *zone = ldns_dname_new_frm_str("secure3.test.");
	ldns_dname_cat(h, zone);
	char *owner = ldns_rdf2str(h);
	ldns_pkt *q = ask_do(owner, DNS_TYPE_NSEC3);
	CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(q), LDNS_RCODE_NXDOMAIN);
	check_denial(q, owner, DNS_TYPE_NSEC3, true);
	/* and the NSEC3 of www, found by the hash computed at load, proves NODATA */
	ldns_pkt *r = ask_do("www.secure3.test.", DNS_TYPE_SRV);
	ldns_rr_list *nsecs, *sigs;
	denial_records(r, LDNS_RR_TYPE_NSEC3, &nsecs, &sigs);
	CU_ASSERT_EQUAL_FATAL(ldns_rr_list_rr_count(nsecs), 1);
	CU_ASSERT_EQUAL(ldns_dname_compare(ldns_rr_owner(ldns_rr_list_rr(nsecs, 0)), h), 0);
	ldns_rr_list_free(nsecs);
	ldns_rr_list_free(sigs);
	free(owner);
	ldns_rdf_deep_free(www);
	ldns_rdf_deep_free(h);
	ldns_rdf_deep_free(zone);
	ldns_pkt_free(p);
	ldns_pkt_free(q);
	ldns_pkt_free(r);
}

static void on_msg(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s: %s\n", is_error ? "error" : "warning", msg);
}

/*
 * A big NSEC3 zone matches its names to their NSEC3 nodes on several
 * threads (each a range of nodes): the same table as on one thread. 12,000
 * names, an NSEC3PARAM (no salt, no extra iteration) and the NSEC3 of
 * every tenth name, owned by that name's hash.
 */
static void test_nsec3_match_threads(void)
{
	char path[] = "/tmp/shoal-nsec3.XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	FILE *f = fdopen(fd, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "$ORIGIN big3.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\n"
		   "ns1 A 192.0.2.1\n@ NSEC3PARAM 1 0 0 -\n");
	LDNS_LEAKS_BEGIN();
	for (int i = 0; i < 12000; i++) {
		fprintf(f, "h%d A 192.0.2.%d\n", i, i % 250);
		if (i % 10)
			continue;
		char text[64];
		snprintf(text, sizeof(text), "h%d.big3.test.", i);
		ldns_rdf *name = ldns_dname_new_frm_str(text);
		ldns_rdf *hashed = ldns_nsec3_hash_name(name, 1, 0, 0, NULL);
		char *label = ldns_rdf2str(hashed);
		/* the hashed name is "<base32>." : the label, then the zone */
		label[strlen(label) - 1] = '\0';
		fprintf(f, "%s NSEC3 1 0 0 - %s A RRSIG\n", label, label);
		free(label);
		ldns_rdf_deep_free(hashed);
		ldns_rdf_deep_free(name);
	}
	LDNS_LEAKS_END();
	fclose(f);
	uint8_t origin[NAME_MAXLEN];
	name_from_text("big3.test.", NULL, origin);
	zone_t *one = NULL, *many = NULL;
	zone_load_set_threads(1, 0);
	int r1 = zone_load(path, origin, NULL, NULL, NULL, &one);
	zone_load_set_threads(3, 0);
	int r2 = zone_load(path, origin, NULL, NULL, NULL, &many);
	zone_load_set_threads(0, 0);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(r1, 0);
	CU_ASSERT_EQUAL_FATAL(r2, 0);
	CU_ASSERT_EQUAL_FATAL(one->denial, ZONE_DENIAL_NSEC3);
	CU_ASSERT_EQUAL_FATAL(one->node_count, many->node_count);
	size_t matched = 0;
	zone_iter_t io, im;
	for (const znode_t *x = zone_first(one, &io), *y = zone_first(many, &im); x && y;
	     x = zone_next(&io), y = zone_next(&im)) {
		const znode_t *a = zone_nsec3_match(one, x);
		const znode_t *b = zone_nsec3_match(many, y);
		CU_ASSERT_EQUAL(a != NULL, b != NULL);
		if (a && b)
			CU_ASSERT(name_equal(znode_name(a), znode_name(b)));
		matched += a != NULL;
	}
	CU_ASSERT_EQUAL(matched, 1200); /* h0, h10, ... h11990 */
	zone_free(one);
	zone_free(many);
}

/* The messages a load gives, joined. */
static void keep_msg(void *arg, bool is_error, const char *text)
{
	(void)is_error;
	strncat(arg, text, 511 - strlen(arg));
}

/*
 * NSEC3 iterations are bounded at load: every negative answer hashes its
 * names that many times, so a zone file (or transfer) asking for 65535
 * would cost each NXDOMAIN tens of milliseconds. Above the limit the zone
 * is refused with a message that names the option; at the limit it loads.
 */
static void test_nsec3_iterations_bounded(void)
{
	static const char *texts[] = {
		"$ORIGIN it.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\n"
		"ns1 A 192.0.2.1\n@ NSEC3PARAM 1 0 151 -\n",
		"$ORIGIN it.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\n"
		"ns1 A 192.0.2.1\n@ NSEC3PARAM 1 0 65535 -\n",
	};
	uint8_t origin[NAME_MAXLEN];
	name_from_text("it.test.", NULL, origin);
	for (size_t i = 0; i < 2; i++) {
		char path[] = "/tmp/shoal-nsec3it.XXXXXX";
		CU_ASSERT_FATAL(unit_temp_file(path, texts[i], strlen(texts[i])) == 0);
		char msgs[512] = "";
		zone_t *z = NULL;
		zone_limits_t limits = ZONE_LIMITS_DEFAULT;
		CU_ASSERT_EQUAL(zone_load(path, origin, &limits, keep_msg, msgs, &z), SHOAL_EZONE);
		CU_ASSERT_PTR_NULL(z);
		CU_ASSERT_PTR_NOT_NULL(strstr(msgs, "(max-nsec3-iterations)"));
		if (i == 0) { /* the bound is the operator's: raised, the same zone loads */
			limits.max_nsec3_iterations = 151;
			CU_ASSERT_EQUAL(zone_load(path, origin, &limits, keep_msg, msgs, &z), 0);
			CU_ASSERT_PTR_NOT_NULL(z);
			zone_free(z);
		}
		unlink(path);
	}
}

int main(int argc, char **argv)
{
	char paths[3][4096];
	unit_src_path(paths[0], sizeof(paths[0]), "tests/diff/dnssec/secure.test.zone");
	unit_src_path(paths[1], sizeof(paths[1]), "tests/diff/dnssec/secure3.test.zone");
	unit_src_path(paths[2], sizeof(paths[2]), "tests/diff/dnssec/signed.secure.test.zone");
	zone_spec_t specs[] = {
		{ .name = "secure.test", .file = paths[0], .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "secure3.test", .file = paths[1], .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "signed.secure.test", .file = paths[2], .limits = ZONE_LIMITS_DEFAULT }
	};
	if (zonedb_build(specs, 3, NULL, NULL, on_msg, NULL, &db) != 0) {
		fprintf(stderr, "signed test zones do not load\n");
		return 1;
	}
	keys = ldns_rr_list_new();
	const char *apexes[] = { "secure.test.", "secure3.test.", "signed.secure.test." };
	for (int i = 0; i < 3; i++) {
		uint8_t out[4096], *wire = NULL;
		size_t len = 0;
		ldns_pkt *q = ldns_pkt_query_new(ldns_dname_new_frm_str(apexes[i]),
						 LDNS_RR_TYPE_DNSKEY, LDNS_RR_CLASS_IN, 0);
		ldns_pkt2wire(&wire, q, &len);
		answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT, .tcp = true };
		size_t n = answer_query(db, wire, len, out, sizeof(out), &ctx, &info);
		ldns_pkt *p = NULL;
		if (n == 0 || ldns_wire2pkt(&p, out, n) != LDNS_STATUS_OK)
			return 1;
		ldns_rr_list *l =
			ldns_pkt_rr_list_by_type(p, LDNS_RR_TYPE_DNSKEY, LDNS_SECTION_ANSWER);
		for (size_t k = 0; l && k < ldns_rr_list_rr_count(l); k++)
			ldns_rr_list_push_rr(keys, ldns_rr_clone(ldns_rr_list_rr(l, k)));
		ldns_rr_list_deep_free(l);
		ldns_pkt_free(p);
		ldns_pkt_free(q);
		free(wire);
	}
	static const unit_test_t tests[] = {
		UNIT_TEST(test_no_do_no_dnssec),
		UNIT_TEST(test_positive_signed),
		UNIT_TEST(test_nxdomain_proven),
		UNIT_TEST(test_nodata_proven),
		UNIT_TEST(test_wildcard_proven),
		UNIT_TEST(test_rrsig_at_wildcard_proven),
		UNIT_TEST(test_any_prefers_data),
		UNIT_TEST(test_cname_dname_signed),
		UNIT_TEST(test_referrals),
		UNIT_TEST(test_truncation_with_signatures),
		UNIT_TEST(test_nsec3_chain_hidden),
		UNIT_TEST(test_nsec3_match_threads),
		UNIT_TEST(test_nsec3_iterations_bounded),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "zone_dnssec", tests);
	ldns_rr_list_deep_free(keys);
	zonedb_free(db);
	return rc;
}
