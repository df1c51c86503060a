/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/catalog.c: a catalog zone's members read, each rule's skip, the version. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "proto/error.h"
#include "proto/name.h"
#include "unit.h"
#include "zone/catalog.h"
#include "zone/load.h"
#include "zone/zone.h"

#define HEAD                                                                             \
	"$ORIGIN catalog.invalid.\n$TTL 0\n@ SOA invalid. invalid. 1 3600 600 86400 0\n" \
	"@ NS invalid.\n"
#define V2 "version TXT \"2\"\n"

/* Version z of catalog.invalid. from text; NULL (with the loader's code in *rc) if none. */
static zone_t *load(const char *text, int *rc)
{
	char path[] = "/tmp/shoal-catalog.XXXXXX";
	uint8_t origin[NAME_MAXLEN];
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(unit_temp_file(path, text, strlen(text)), 0);
	name_from_text("catalog.invalid.", NULL, origin);
	*rc = zone_load(path, origin, NULL, NULL, NULL, &z);
	unlink(path);
	return z;
}

/* Read text as a catalog into *c; returns catalog_read's code (the error text in err). */
static int read_text(const char *text, catalog_t *c, char *err, size_t errlen)
{
	int rc;
	zone_t *z = load(text, &rc);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	rc = catalog_read(z, c, err, errlen);
	zone_unref(z); /* the catalog holds its own reference */
	return rc;
}

/* name's text ("a.example.") in a static buffer. */
static const char *text_of(const uint8_t *name)
{
	static char buf[NAME_TEXT_MAX];
	name_to_text(name, buf, sizeof(buf));
	return buf;
}

/* Whether c skipped a record owned by owner (text) for why. */
static bool skipped(const catalog_t *c, const char *owner, enum catalog_skip why)
{
	uint8_t wire[NAME_MAXLEN];
	name_from_text(owner, NULL, wire);
	for (size_t i = 0; i < c->skipped_count; i++)
		if (c->skipped[i].why == why && name_equal(c->skipped[i].owner, wire))
			return true;
	fprintf(stderr, "\n  not skipped: %s (%s)\n", owner, catalog_skip_text(why));
	return false;
}

/* The member with apex `text`, or NULL. */
static const catalog_member_t *member(const catalog_t *c, const char *text)
{
	uint8_t wire[NAME_MAXLEN];
	name_from_text(text, NULL, wire);
	return catalog_find(c, wire);
}

/* Members with their unique ids, groups and coo, in apex order; case is no matter. */
static void test_members(void)
{
	catalog_t c;
	char err[256] = "";
	int rc = read_text(HEAD V2 "zz.zones PTR b.example.\n"
				   "id1.zones PTR C.Example.\n"
				   "group.id1.zones TXT \"signed\"\n"
				   "id2.zones PTR a.example.\n"
				   "coo.id2.zones PTR other.catalog.\n"
				   "ext.id2.zones TXT \"custom\"\n",
			   &c, err, sizeof(err));
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL_FATAL(c.member_count, 3);
	CU_ASSERT_EQUAL(c.skipped_count, 0);
	CU_ASSERT_STRING_EQUAL(text_of(c.members[0].apex), "a.example.");
	CU_ASSERT_STRING_EQUAL(text_of(c.members[1].apex), "b.example.");
	CU_ASSERT_STRING_EQUAL(text_of(c.members[2].apex), "C.Example.");
	const catalog_member_t *a = member(&c, "A.EXAMPLE"), *cz = member(&c, "c.example");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cz);
	CU_ASSERT_PTR_NULL(member(&c, "d.example"));
	CU_ASSERT_STRING_EQUAL(text_of(a->node), "id2.zones.catalog.invalid.");
	CU_ASSERT_STRING_EQUAL(text_of(a->coo), "other.catalog.");
	CU_ASSERT_PTR_NULL(a->group);
	CU_ASSERT_PTR_NULL(cz->coo);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cz->group);
	CU_ASSERT(catalog_same_group(cz->group, (const uint8_t *)"\x06signed"));
	CU_ASSERT_FALSE(catalog_same_group(cz->group, (const uint8_t *)"\x06Signed"));
	CU_ASSERT_FALSE(catalog_same_group(cz->group, NULL));
	CU_ASSERT(catalog_same_group(NULL, NULL));
	CU_ASSERT(catalog_same_id(a, a));
	CU_ASSERT_FALSE(catalog_same_id(a, cz));
	catalog_clear(&c);
	CU_ASSERT_EQUAL(c.member_count, 0);
	CU_ASSERT_PTR_NULL(c.version);
}

/* Every rule of RFC 9432 4 broken once: each record skipped with its reason, the rest read. */
static void test_skips(void)
{
	catalog_t c;
	char err[256] = "";
	int rc = read_text(HEAD V2 "@ PTR apex.example.\n"
				   "zones PTR zones.example.\n"
				   "elsewhere PTR elsewhere.example.\n"
				   "deep.deeper.id0.zones PTR deep.example.\n"
				   "ok.zones PTR ok.example.\n"
				   "ext.ok.zones PTR custom.example.\n"
				   "two.zones PTR two1.example.\n"
				   "two.zones PTR two2.example.\n"
				   "group.two.zones TXT \"lost with its member\"\n"
				   "self.zones PTR CATALOG.invalid.\n"
				   "first.zones PTR dup.example.\n"
				   "second.zones PTR Dup.Example.\n"
				   "coo.first.zones PTR new1.catalog.\n"
				   "coo.first.zones PTR new2.catalog.\n"
				   "g.zones PTR g.example.\n"
				   "group.g.zones TXT \"one\"\n"
				   "group.g.zones TXT \"two\"\n"
				   "group.nobody.zones TXT \"orphan\"\n"
				   "coo.nobody2.zones PTR orphan.catalog.\n",
			   &c, err, sizeof(err));
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT(skipped(&c, "catalog.invalid.", CATALOG_SKIP_OUTSIDE));
	CU_ASSERT(skipped(&c, "zones.catalog.invalid.", CATALOG_SKIP_OUTSIDE));
	CU_ASSERT(skipped(&c, "elsewhere.catalog.invalid.", CATALOG_SKIP_OUTSIDE));
	CU_ASSERT(skipped(&c, "deep.deeper.id0.zones.catalog.invalid.", CATALOG_SKIP_DEEP));
	CU_ASSERT(skipped(&c, "ext.ok.zones.catalog.invalid.", CATALOG_SKIP_DEEP));
	CU_ASSERT(skipped(&c, "two.zones.catalog.invalid.", CATALOG_SKIP_PTRS));
	CU_ASSERT(skipped(&c, "self.zones.catalog.invalid.", CATALOG_SKIP_SELF));
	/* canonical order: "first" sorts before "second", so the first id keeps the member */
	CU_ASSERT(skipped(&c, "second.zones.catalog.invalid.", CATALOG_SKIP_TWICE));
	CU_ASSERT(skipped(&c, "coo.first.zones.catalog.invalid.", CATALOG_SKIP_COO));
	CU_ASSERT(skipped(&c, "group.g.zones.catalog.invalid.", CATALOG_SKIP_GROUP));
	CU_ASSERT(skipped(&c, "group.nobody.zones.catalog.invalid.", CATALOG_SKIP_ORPHAN));
	CU_ASSERT(skipped(&c, "coo.nobody2.zones.catalog.invalid.", CATALOG_SKIP_ORPHAN));
	CU_ASSERT_EQUAL(c.skipped_count, 12); /* the group of "two" goes with it, unsaid */
	CU_ASSERT_EQUAL_FATAL(c.member_count, 3);
	CU_ASSERT_STRING_EQUAL(text_of(c.members[0].apex), "dup.example.");
	CU_ASSERT_STRING_EQUAL(text_of(c.members[0].node), "first.zones.catalog.invalid.");
	CU_ASSERT_PTR_NULL(c.members[0].coo);
	CU_ASSERT_STRING_EQUAL(text_of(c.members[1].apex), "g.example.");
	CU_ASSERT(catalog_same_group(c.members[1].group, (const uint8_t *)"\x03one"));
	CU_ASSERT_STRING_EQUAL(text_of(c.members[2].apex), "ok.example.");
	for (int i = 0; i < CATALOG_SKIP_COUNT; i++)
		CU_ASSERT(strlen(catalog_skip_text((enum catalog_skip)i)) > 10);
	CU_ASSERT_STRING_EQUAL(catalog_skip_text(CATALOG_SKIP_COUNT), "?");
	catalog_clear(&c);
}

/* Expect the catalog text refused with rc and an error saying want; nothing read. */
static void expect_refused(const char *text, int want_rc, const char *want)
{
	catalog_t c;
	char err[256] = "";
	CU_ASSERT_EQUAL(read_text(text, &c, err, sizeof(err)), want_rc);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	if (!strstr(err, want))
		fprintf(stderr, "\n  got \"%s\", want \"%s\"\n", err, want);
	CU_ASSERT_EQUAL(c.member_count, 0);
	CU_ASSERT_PTR_NULL(c.members);
	CU_ASSERT_PTR_NULL(c.version);
	catalog_clear(&c); /* harmless on the empty catalog */
}

/* RFC 9432 4.2.1: only version "2", as one TXT record of one string; else nothing applies. */
static void test_version(void)
{
	const char *member = "m.zones PTR m.example.\n";
	char text[512];
	snprintf(text, sizeof(text), HEAD "version TXT \"1\"\n%s", member);
	expect_refused(text, SHOAL_EUNSUPPORTED, "version \"1\" is not 2");
	snprintf(text, sizeof(text), HEAD "%s", member);
	expect_refused(text, SHOAL_EZONE, "no version property");
	snprintf(text, sizeof(text), HEAD V2 "version TXT \"3\"\n%s", member);
	expect_refused(text, SHOAL_EZONE, "not one TXT record of one string");
	snprintf(text, sizeof(text), HEAD "version TXT \"2\" \"2\"\n%s", member);
	expect_refused(text, SHOAL_EZONE, "not one TXT record of one string");
	snprintf(text, sizeof(text), HEAD "version TXT \"22\"\n%s", member);
	expect_refused(text, SHOAL_EUNSUPPORTED, "version \"22\"");
	snprintf(text, sizeof(text), HEAD "version.zones TXT \"2\"\n%s", member);
	expect_refused(text, SHOAL_EZONE, "no version property");
}

/* A catalog of many members: all read, in order, each found. */
static void test_many(void)
{
	enum { N = 5000 };
	size_t cap = sizeof(HEAD V2) + (size_t)N * 64;
	char *text = malloc(cap);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	size_t len = (size_t)snprintf(text, cap, HEAD V2);
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(text + len, cap - len, "u%d.zones PTR m%d.example.\n", i,
					N - i);
	catalog_t c;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(read_text(text, &c, err, sizeof(err)), 0);
	free(text);
	CU_ASSERT_EQUAL_FATAL(c.member_count, N);
	for (size_t i = 1; i < c.member_count; i++)
		CU_ASSERT(name_compare(c.members[i - 1].apex, c.members[i].apex) < 0);
	const catalog_member_t *m = member(&c, "m1.example.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_STRING_EQUAL(text_of(m->node), "u4999.zones.catalog.invalid.");
	catalog_clear(&c);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_members),
		UNIT_TEST(test_skips),
		UNIT_TEST(test_version),
		UNIT_TEST(test_many),
		UNIT_END,
	};
	return unit_run(argc, argv, "zone_catalog", tests);
}
