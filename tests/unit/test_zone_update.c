/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/update.c: each prerequisite kind of RFC 2136 2.4
 * true and false, each update kind of 2.5 with 3.4.2's rules (apex SOA
 * and NS, CNAME beside other data, duplicates, absent data), the serial
 * policies, and the changeset applied with zone_apply to a version that
 * then answers for the change.
 */
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "tests/unit/unit.h"
#include "tests/unit/update_msg.h"
#include "zone/apply.h"
#include "zone/load.h"
#include "zone/update.h"

#define IN   DNS_CLASS_IN
#define ANY  DNS_CLASS_ANY
#define NONE DNS_CLASS_NONE

static const char base_text[] = "$ORIGIN example.com.\n"
				"$TTL 300\n"
				"@ SOA ns1 hostmaster 10 3600 600 86400 60\n"
				"@ NS ns1\n"
				"@ NS ns2\n"
				"ns1 A 192.0.2.1\n"
				"ns2 A 192.0.2.2\n"
				"www A 192.0.2.10\n"
				"www A 192.0.2.11\n"
				"www TXT \"hello\"\n"
				"alias CNAME www\n"
				"a.b TXT \"deep\"\n";

static uint8_t origin[NAME_MAXLEN];
static const uint8_t a10[4] = { 192, 0, 2, 10 }, a11[4] = { 192, 0, 2, 11 },
		     a99[4] = { 192, 0, 2, 99 };
static const uint8_t txt_hello[] = "\5hello";

static zone_t *load_base(void)
{
	char path[] = "/tmp/shoal-update.XXXXXX";
	CU_ASSERT_EQUAL_FATAL(unit_temp_file(path, base_text, sizeof(base_text) - 1), 0);
	name_from_text("example.com.", NULL, origin);
	zone_t *z = NULL;
	int rc = zone_load(path, origin, NULL, NULL, NULL, &z);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	return z;
}

/* The RDATA of a name (for NS, CNAME). */
static uint16_t name_rdata(const char *text, uint8_t *out)
{
	return (uint16_t)name_from_text(text, origin, out);
}

static void start(umsg_t *u)
{
	umsg_start(u, "example.com.", IN);
}

static int prereq(const zone_t *z, umsg_t *u)
{
	update_msg_t m;
	size_t len = umsg_end(u);
	static update_rr_t rr;
	const char *why = NULL;
	int rc = update_parse(&m, u->b, len, &rr, &why);
	if (rc)
		fprintf(stderr, "%s\n", why);
	CU_ASSERT_EQUAL_FATAL(rc, DNS_RCODE_NOERROR);
	return zone_update_prereq(z, &m);
}

/* One prerequisite record against the base zone; its rcode. */
static int one_prereq(const zone_t *z, const char *owner, uint16_t type, uint16_t rclass,
		      const void *rd, uint16_t rdlen)
{
	umsg_t u;
	start(&u);
	umsg_rr(&u, 1, owner, origin, type, rclass, 0, rd, rdlen);
	return prereq(z, &u);
}

static void test_prereq_kinds(void)
{
	zone_t *z = load_base();
	/* 2.4.1: an RRset exists */
	CU_ASSERT_EQUAL(one_prereq(z, "www", DNS_TYPE_A, ANY, NULL, 0), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(one_prereq(z, "www", DNS_TYPE_MX, ANY, NULL, 0), DNS_RCODE_NXRRSET);
	CU_ASSERT_EQUAL(one_prereq(z, "nothere", DNS_TYPE_A, ANY, NULL, 0), DNS_RCODE_NXRRSET);
	/* 2.4.3: an RRset does not exist */
	CU_ASSERT_EQUAL(one_prereq(z, "www", DNS_TYPE_MX, NONE, NULL, 0), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(one_prereq(z, "www", DNS_TYPE_TXT, NONE, NULL, 0), DNS_RCODE_YXRRSET);
	/* 2.4.4: a name is in use; an empty non-terminal is not */
	CU_ASSERT_EQUAL(one_prereq(z, "alias", DNS_TYPE_ANY, ANY, NULL, 0), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(one_prereq(z, "nothere", DNS_TYPE_ANY, ANY, NULL, 0), DNS_RCODE_NXDOMAIN);
	CU_ASSERT_EQUAL(one_prereq(z, "b", DNS_TYPE_ANY, ANY, NULL, 0), DNS_RCODE_NXDOMAIN);
	/* 2.4.5: a name is not in use */
	CU_ASSERT_EQUAL(one_prereq(z, "b", DNS_TYPE_ANY, NONE, NULL, 0), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(one_prereq(z, "www", DNS_TYPE_ANY, NONE, NULL, 0), DNS_RCODE_YXDOMAIN);
	/* 2.4.2: value dependent: exactly the RRset, as a set */
	CU_ASSERT_EQUAL(one_prereq(z, "www", DNS_TYPE_TXT, IN, txt_hello, 6), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(one_prereq(z, "www", DNS_TYPE_A, IN, a10, 4), DNS_RCODE_NXRRSET);
	CU_ASSERT_EQUAL(one_prereq(z, "ns1", DNS_TYPE_TXT, IN, txt_hello, 6), DNS_RCODE_NXRRSET);
	umsg_t u;
	start(&u);
	umsg_rr(&u, 1, "www", origin, DNS_TYPE_A, IN, 0, a11, 4);
	umsg_rr(&u, 1, "www", origin, DNS_TYPE_TXT, IN, 0, txt_hello, 6);
	umsg_rr(&u, 1, "www", origin, DNS_TYPE_A, IN, 0, a10, 4);
	umsg_rr(&u, 1, "www", origin, DNS_TYPE_A, IN, 0, a10, 4); /* a duplicate counts once */
	CU_ASSERT_EQUAL(prereq(z, &u), DNS_RCODE_NOERROR);
	umsg_rr(&u, 1, "www", origin, DNS_TYPE_A, IN, 0, a99, 4); /* one more than the zone's */
	CU_ASSERT_EQUAL(prereq(z, &u), DNS_RCODE_NXRRSET);
	/* the first false one decides, in order; value dependent ones after the others */
	start(&u);
	umsg_rr(&u, 1, "www", origin, DNS_TYPE_A, IN, 0, a99, 4);
	umsg_rr(&u, 1, "nothere", origin, DNS_TYPE_ANY, ANY, 0, NULL, 0);
	umsg_rr(&u, 1, "www", origin, DNS_TYPE_ANY, NONE, 0, NULL, 0);
	CU_ASSERT_EQUAL(prereq(z, &u), DNS_RCODE_NXDOMAIN);
	zone_free(z);
}

/* The version after u's updates on z (z itself, referenced, when nothing changes). */
static zone_t *update(const zone_t *z, umsg_t *u, enum zone_serial_policy p, time_t now)
{
	update_msg_t m;
	size_t len = umsg_end(u);
	static update_rr_t rr;
	CU_ASSERT_EQUAL_FATAL(update_parse(&m, u->b, len, &rr, NULL), DNS_RCODE_NOERROR);
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_update_changes(z, &m, p, now, &cs), 0);
	if (!cs)
		return (zone_t *)zone_ref(z);
	zone_apply_opts_t o = { .label = "test" };
	zone_t *out = NULL;
	const changeset_t *sets[1] = { cs };
	int rc = zone_apply(z, sets, 1, &o, &out);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(cs->from, z->serial);
	CU_ASSERT_EQUAL(cs->to, out ? out->serial : 0);
	changeset_unref(cs);
	return out;
}

/* Records of owner (relative) and type in z; ttl of the first into *ttl. */
static int count(const zone_t *z, const char *owner, uint16_t type, uint32_t *ttl)
{
	uint8_t name[NAME_MAXLEN];
	name_from_text(owner, origin, name);
	const znode_t *n = zone_lookup(z, name);
	const zrrset_t *s = n ? znode_rrset(n, type) : NULL;
	if (s && ttl)
		*ttl = wire_get_u32(s->set.data + 4);
	return s ? s->set.rr_count : 0;
}

static void test_add(void)
{
	zone_t *z = load_base();
	umsg_t u;
	start(&u);
	umsg_rr(&u, 2, "new", origin, DNS_TYPE_A, IN, 60, a99, 4);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_A, IN, 120, a99, 4);
	zone_t *v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	uint32_t ttl = 0;
	CU_ASSERT_EQUAL(count(v, "new", DNS_TYPE_A, &ttl), 1);
	CU_ASSERT_EQUAL(ttl, 60);
	/* RFC 2181 5.2: the added record's TTL is the RRset's */
	CU_ASSERT_EQUAL(count(v, "www", DNS_TYPE_A, &ttl), 3);
	CU_ASSERT_EQUAL(ttl, 120);
	CU_ASSERT_EQUAL(v->serial, 11);
	CU_ASSERT_EQUAL(count(z, "new", DNS_TYPE_A, NULL), 0); /* the base is as it was */
	/* adding what is there, with its TTL, changes nothing: no new version */
	start(&u);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_TXT, IN, 300, txt_hello, 6);
	zone_t *same = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_EQUAL(same, z);
	zone_unref(same);
	zone_unref(v);
	zone_free(z);
}

static void test_delete(void)
{
	zone_t *z = load_base();
	umsg_t u;
	start(&u);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_A, NONE, 0, a10, 4);     /* one RR */
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_TXT, ANY, 0, NULL, 0);   /* an RRset */
	umsg_rr(&u, 2, "alias", origin, DNS_TYPE_ANY, ANY, 0, NULL, 0); /* a name */
	umsg_rr(&u, 2, "nothere", origin, DNS_TYPE_A, ANY, 0, NULL, 0); /* absent: ignored */
	umsg_rr(&u, 2, "ns1", origin, DNS_TYPE_A, NONE, 0, a99, 4);     /* absent: ignored */
	zone_t *v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(count(v, "www", DNS_TYPE_A, NULL), 1);
	CU_ASSERT_EQUAL(count(v, "www", DNS_TYPE_TXT, NULL), 0);
	CU_ASSERT_EQUAL(count(v, "alias", DNS_TYPE_CNAME, NULL), 0);
	CU_ASSERT_EQUAL(count(v, "ns1", DNS_TYPE_A, NULL), 1);
	zone_unref(v);
	/* deletions of absent data alone change nothing */
	start(&u);
	umsg_rr(&u, 2, "nothere", origin, DNS_TYPE_ANY, ANY, 0, NULL, 0);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_MX, ANY, 0, NULL, 0);
	v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_EQUAL(v, z);
	zone_unref(v);
	zone_free(z);
}

/* Updates apply in order: a delete then an add of one RRset is a replace. */
static void test_replace_in_order(void)
{
	zone_t *z = load_base();
	umsg_t u;
	start(&u);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_A, ANY, 0, NULL, 0);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_A, IN, 300, a99, 4);
	zone_t *v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(count(v, "www", DNS_TYPE_A, NULL), 1);
	zone_unref(v);
	/* add then delete: nothing */
	start(&u);
	umsg_rr(&u, 2, "new", origin, DNS_TYPE_A, IN, 300, a99, 4);
	umsg_rr(&u, 2, "new", origin, DNS_TYPE_ANY, ANY, 0, NULL, 0);
	v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_EQUAL(v, z);
	zone_unref(v);
	zone_free(z);
}

/* 3.4.2.3, 3.4.2.4: the apex SOA and NS are never deleted whole, nor the last NS. */
static void test_apex_rules(void)
{
	zone_t *z = load_base();
	umsg_t u;
	uint8_t ns1[NAME_MAXLEN], ns2[NAME_MAXLEN];
	uint16_t l1 = name_rdata("ns1", ns1), l2 = name_rdata("ns2", ns2);
	start(&u);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_ANY, ANY, 0, NULL, 0);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_NS, ANY, 0, NULL, 0);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_SOA, ANY, 0, NULL, 0);
	zone_t *v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_EQUAL(v, z);
	zone_unref(v);
	start(&u);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_NS, NONE, 0, ns1, l1);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_NS, NONE, 0, ns2, l2); /* the last: kept */
	v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(count(v, "@", DNS_TYPE_NS, NULL), 1);
	CU_ASSERT_EQUAL(count(v, "@", DNS_TYPE_SOA, NULL), 1);
	zone_unref(v);
	zone_free(z);
}

/* 3.4.2.2: no CNAME beside other data, no other data beside a CNAME; a CNAME replaces one. */
static void test_cname_rules(void)
{
	zone_t *z = load_base();
	umsg_t u;
	uint8_t target[NAME_MAXLEN], other[NAME_MAXLEN];
	uint16_t tl = name_rdata("target.example.net.", target);
	uint16_t ol = name_rdata("other.example.net.", other);
	start(&u);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_CNAME, IN, 300, target, tl);  /* ignored */
	umsg_rr(&u, 2, "alias", origin, DNS_TYPE_A, IN, 300, a99, 4);        /* ignored */
	umsg_rr(&u, 2, "alias", origin, DNS_TYPE_CNAME, IN, 300, other, ol); /* replaces */
	zone_t *v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(count(v, "www", DNS_TYPE_CNAME, NULL), 0);
	CU_ASSERT_EQUAL(count(v, "alias", DNS_TYPE_A, NULL), 0);
	CU_ASSERT_EQUAL(count(v, "alias", DNS_TYPE_CNAME, NULL), 1);
	uint8_t name[NAME_MAXLEN];
	name_from_text("alias", origin, name);
	const zrrset_t *s = znode_rrset(zone_lookup(v, name), DNS_TYPE_CNAME);
	CU_ASSERT_EQUAL(memcmp(s->set.data + 10, other, ol), 0);
	zone_unref(v);
	/* a name emptied first takes a CNAME */
	start(&u);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_ANY, ANY, 0, NULL, 0);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_CNAME, IN, 300, target, tl);
	v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(count(v, "www", DNS_TYPE_CNAME, NULL), 1);
	CU_ASSERT_EQUAL(count(v, "www", DNS_TYPE_A, NULL), 0);
	zone_unref(v);
	zone_free(z);
}

/* The SOA RDATA of the base with serial s. */
static uint16_t soa_rdata(uint8_t *out, uint32_t s, uint32_t refresh)
{
	wire_t w;
	wire_init_write(&w, out, 600);
	uint8_t n[NAME_MAXLEN];
	wire_write_bytes(&w, n, name_rdata("ns1", n));
	wire_write_bytes(&w, n, name_rdata("hostmaster", n));
	wire_write_u32(&w, s);
	wire_write_u32(&w, refresh);
	wire_write_u32(&w, 600);
	wire_write_u32(&w, 86400);
	wire_write_u32(&w, 60);
	return (uint16_t)w.pos;
}

/* 3.4.2.2: an SOA replaces one not newer; 3.6: else the serial per the policy. */
static void test_soa_and_serials(void)
{
	zone_t *z = load_base();
	umsg_t u;
	uint8_t soa[600];
	start(&u);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_SOA, IN, 300, soa, soa_rdata(soa, 50, 7200));
	zone_t *v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(v->serial, 50);
	zone_unref(v);
	/* an older serial: ignored */
	start(&u);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_SOA, IN, 300, soa, soa_rdata(soa, 5, 7200));
	v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_EQUAL(v, z);
	zone_unref(v);
	/* the same serial, other fields: the fields, and the serial by the policy */
	start(&u);
	umsg_rr(&u, 2, "@", origin, DNS_TYPE_SOA, IN, 300, soa, soa_rdata(soa, 10, 7200));
	v = update(z, &u, ZONE_SERIAL_INCREMENT, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	CU_ASSERT_EQUAL(v->serial, 11);
	zone_unref(v);
	/* a change under each policy (2026-12-05 12:00 UTC) */
	time_t now = 1796472000;
	start(&u);
	umsg_rr(&u, 2, "new", origin, DNS_TYPE_A, IN, 60, a99, 4);
	v = update(z, &u, ZONE_SERIAL_UNIXTIME, now);
	CU_ASSERT_EQUAL(v->serial, (uint32_t)now);
	zone_unref(v);
	v = update(z, &u, ZONE_SERIAL_DATESERIAL, now);
	CU_ASSERT_EQUAL(v->serial, 2026120500u);
	zone_unref(v);
	zone_free(z);
	CU_ASSERT_EQUAL(zone_serial_next(2026120500u, ZONE_SERIAL_DATESERIAL, now), 2026120501u);
	CU_ASSERT_EQUAL(zone_serial_next(2026120599u, ZONE_SERIAL_DATESERIAL, now), 2026120600u);
	CU_ASSERT_EQUAL(zone_serial_next((uint32_t)now + 5, ZONE_SERIAL_UNIXTIME, now),
			(uint32_t)now + 6);
	CU_ASSERT_EQUAL(zone_serial_next(UINT32_MAX, ZONE_SERIAL_INCREMENT, now), 0);
}

/* What 3.4.2.2 ignores never reaches zone_apply; what a load refuses, zone_apply refuses. */
static void test_apply_checks(void)
{
	zone_t *z = load_base();
	umsg_t u;
	start(&u);
	uint8_t t[NAME_MAXLEN];
	uint16_t tl = name_rdata("x.example.net.", t);
	umsg_rr(&u, 2, "alias", origin, DNS_TYPE_DNAME, IN, 60, t, tl);
	update_msg_t m;
	size_t len = umsg_end(&u);
	static update_rr_t rr;
	CU_ASSERT_EQUAL_FATAL(update_parse(&m, u.b, len, &rr, NULL), DNS_RCODE_NOERROR);
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL(zone_update_changes(z, &m, ZONE_SERIAL_INCREMENT, 0, &cs), 0);
	CU_ASSERT_PTR_NULL(cs); /* other data beside a CNAME: ignored */
	/* a third A at www past a limit of two records a type: the whole change refused */
	start(&u);
	umsg_rr(&u, 2, "new", origin, DNS_TYPE_A, IN, 60, a99, 4);
	umsg_rr(&u, 2, "www", origin, DNS_TYPE_A, IN, 60, a99, 4);
	len = umsg_end(&u);
	CU_ASSERT_EQUAL_FATAL(update_parse(&m, u.b, len, &rr, NULL), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL_FATAL(zone_update_changes(z, &m, ZONE_SERIAL_INCREMENT, 0, &cs), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	zone_limits_t limits = { .max_types_per_name = 100, .max_records_per_type = 2 };
	zone_apply_opts_t o = { .label = "test", .limits = &limits };
	zone_t *out = NULL;
	const changeset_t *sets[1] = { cs };
	CU_ASSERT_EQUAL(zone_apply(z, sets, 1, &o, &out), SHOAL_EZONE);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_EQUAL(count(z, "new", DNS_TYPE_A, NULL), 0);
	changeset_unref(cs);
	zone_free(z);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_prereq_kinds),
		UNIT_TEST(test_add),
		UNIT_TEST(test_delete),
		UNIT_TEST(test_replace_in_order),
		UNIT_TEST(test_apex_rules),
		UNIT_TEST(test_cname_rules),
		UNIT_TEST(test_soa_and_serials),
		UNIT_TEST(test_apply_checks),
		UNIT_END,
	};
	return unit_run(argc, argv, "zone_update", tests);
}
