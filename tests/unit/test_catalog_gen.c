/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/catalog_gen.c, a producer's catalog zone: members
 * made with ids, the file a zone the loader takes, read back the same,
 * ids kept while a member stays and new when it comes back, the serial
 * moved only by a change.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "tests/unit/unit.h"
#include "zone/apply.h"
#include "zone/catalog_gen.h"
#include "zone/changeset.h"
#include "zone/load.h"
#include "zone/zone.h"

static char tmpdir[] = "/tmp/shoal-catgen-XXXXXX";
static char path[512];

/* The member called name in c, or NULL. */
static const catgen_member_t *find(const catgen_t *c, const char *name)
{
	for (size_t i = 0; i < c->count; i++)
		if (!strcmp(c->members[i].name, name))
			return &c->members[i];
	return NULL;
}

/* c written and loaded as the zone cat.test. (NULL: it did not load). */
static zone_t *load(const catgen_t *c)
{
	CU_ASSERT_EQUAL_FATAL(catgen_write(c, path), 0);
	uint8_t apex[NAME_MAXLEN];
	name_from_text("cat.test.", NULL, apex);
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	zone_t *z = NULL;
	if (zone_load(path, apex, &limits, NULL, NULL, &z) < 0)
		return NULL;
	CU_ASSERT_EQUAL(z->serial, c->serial);
	return z;
}

/* c written and loaded: its record count (0: it did not load). */
static size_t load_count(const catgen_t *c)
{
	zone_t *z = load(c);
	size_t n = z ? z->rr_count : 0;
	if (z)
		zone_unref(z);
	return n;
}

/*
 * *z with the changes of catgen_change applied (zone_apply) is the zone
 * c's file gives: the same serial, no record more or less. *z replaced.
 */
static void apply_same(zone_t **z, const catgen_t *c, changeset_t *cs)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	zone_t *next = NULL, *whole = load(c);
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t o = { .label = "catalog" };
	CU_ASSERT_EQUAL_FATAL(zone_apply(*z, sets, 1, &o, &next), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
	CU_ASSERT_EQUAL(next->serial, whole->serial);
	CU_ASSERT_EQUAL(next->rr_count, whole->rr_count);
	changeset_t *d = NULL;
	CU_ASSERT_EQUAL(changeset_diff(next, whole, 0, &d), 0);
	CU_ASSERT_EQUAL(d->del.rr_count, 1); /* the SOAs alone */
	CU_ASSERT_EQUAL(d->add.rr_count, 1);
	changeset_unref(d);
	changeset_unref(cs);
	zone_unref(whole);
	zone_unref(*z);
	*z = next;
}

/* One member added and one removed by a changeset: what the file made whole gives. */
static void test_change_one(void)
{
	catgen_t c;
	CU_ASSERT_EQUAL_FATAL(catgen_init(&c, "cat.test."), 0);
	catgen_want_t want[] = { { "a.test.", "blue" }, { "c.test.", NULL } };
	bool changed;
	CU_ASSERT_EQUAL(catgen_update(&c, want, 2, 1000, &changed), 0);
	zone_t *z = load(&c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL(catgen_change(&c, "b.test.", "red", true, 10, &cs), 0);
	CU_ASSERT_EQUAL(c.serial, 1001);
	CU_ASSERT_EQUAL_FATAL(c.count, 3);
	CU_ASSERT_STRING_EQUAL(c.members[1].name, "b.test."); /* in its place */
	CU_ASSERT_EQUAL(cs->add.rr_count, 3);                 /* SOA, PTR, group TXT */
	apply_same(&z, &c, cs);
	CU_ASSERT_EQUAL(catgen_change(&c, "a.test.", NULL, false, 10, &cs), 0);
	CU_ASSERT_EQUAL(cs->del.rr_count, 3);
	CU_ASSERT_EQUAL(c.count, 2);
	apply_same(&z, &c, cs);
	CU_ASSERT_EQUAL(catgen_change(&c, "c.test.", NULL, true, 10, &cs), SHOAL_EEXIST);
	CU_ASSERT_EQUAL(catgen_change(&c, "a.test.", NULL, false, 10, &cs), SHOAL_ENOTFOUND);
	CU_ASSERT_PTR_NULL(cs);
	CU_ASSERT_EQUAL(c.serial, 1002);
	zone_unref(z);
	catgen_clear(&c);
}

static void test_make_read_back(void)
{
	catgen_t c, back;
	CU_ASSERT_EQUAL_FATAL(catgen_init(&c, "cat.test."), 0);
	catgen_want_t want[] = { { "b.test.", NULL }, { "a.test.", "blue" }, { "c.test.", NULL } };
	bool changed = false;
	CU_ASSERT_EQUAL(catgen_update(&c, want, 3, 1000, &changed), 0);
	CU_ASSERT(changed);
	CU_ASSERT_EQUAL(c.serial, 1000); /* unixtime when ahead */
	CU_ASSERT_EQUAL_FATAL(c.count, 3);
	CU_ASSERT_STRING_EQUAL(c.members[0].name, "a.test.");
	CU_ASSERT_STRING_EQUAL(c.members[0].group, "blue");
	CU_ASSERT_EQUAL(strlen(c.members[1].id), CATGEN_ID_LEN);
	CU_ASSERT(strcmp(c.members[0].id, c.members[1].id) &&
		  strcmp(c.members[1].id, c.members[2].id));
	/* SOA, NS, version TXT, three PTRs, one group TXT (RFC 9432 4) */
	CU_ASSERT_EQUAL(load_count(&c), 7);
	CU_ASSERT_EQUAL_FATAL(catgen_init(&back, "cat.test."), 0);
	CU_ASSERT_EQUAL(catgen_read(&back, path), 0);
	CU_ASSERT_EQUAL(back.serial, 1000);
	CU_ASSERT_EQUAL_FATAL(back.count, 3);
	for (size_t i = 0; i < 3; i++) {
		CU_ASSERT_STRING_EQUAL(back.members[i].name, c.members[i].name);
		CU_ASSERT_STRING_EQUAL(back.members[i].id, c.members[i].id);
	}
	CU_ASSERT_STRING_EQUAL(back.members[0].group, "blue");
	CU_ASSERT_PTR_NULL(back.members[1].group);
	/* the same members in another order, read back after a restart: nothing changes */
	catgen_want_t same[] = { { "c.test.", NULL }, { "a.test.", "blue" }, { "b.test.", NULL } };
	CU_ASSERT_EQUAL(catgen_update(&back, same, 3, 5000, &changed), 0);
	CU_ASSERT_FALSE(changed);
	CU_ASSERT_EQUAL(back.serial, 1000);
	catgen_clear(&back);
	catgen_clear(&c);
}

static void test_changes(void)
{
	catgen_t c;
	CU_ASSERT_EQUAL_FATAL(catgen_init(&c, "cat.test."), 0);
	catgen_want_t want[] = { { "a.test.", NULL }, { "b.test.", NULL }, { "c.test.", NULL } };
	bool changed;
	CU_ASSERT_EQUAL(catgen_update(&c, want, 3, 1000, &changed), 0);
	char a_id[CATGEN_ID_LEN + 1], b_id[CATGEN_ID_LEN + 1];
	snprintf(a_id, sizeof(a_id), "%s", find(&c, "a.test.")->id);
	snprintf(b_id, sizeof(b_id), "%s", find(&c, "b.test.")->id);
	/* b goes, d comes; the clock behind the serial: one more */
	catgen_want_t next[] = { { "d.test.", NULL }, { "a.test.", NULL }, { "c.test.", NULL } };
	CU_ASSERT_EQUAL(catgen_update(&c, next, 3, 10, &changed), 0);
	CU_ASSERT(changed);
	CU_ASSERT_EQUAL(c.serial, 1001);
	CU_ASSERT_PTR_NULL(find(&c, "b.test."));
	CU_ASSERT_STRING_EQUAL(find(&c, "a.test.")->id, a_id);
	CU_ASSERT_PTR_NOT_NULL(find(&c, "d.test."));
	/* b back: a new id (RFC 9432 5.4: its consumers start it afresh) */
	catgen_want_t back[] = { { "a.test.", NULL },
				 { "b.test.", NULL },
				 { "c.test.", NULL },
				 { "d.test.", NULL },
				 { "b.test.", NULL } };
	CU_ASSERT_EQUAL(catgen_update(&c, back, 5, 10, &changed), 0);
	CU_ASSERT(changed);
	CU_ASSERT_EQUAL(c.count, 4); /* named twice, listed once */
	CU_ASSERT_STRING_NOT_EQUAL(find(&c, "b.test.")->id, b_id);
	CU_ASSERT_STRING_EQUAL(find(&c, "a.test.")->id, a_id);
	/* a group set is a change; so is every member gone */
	back[0].group = "red";
	CU_ASSERT_EQUAL(catgen_update(&c, back, 5, 10, &changed), 0);
	CU_ASSERT(changed);
	CU_ASSERT_EQUAL(c.serial, 1003);
	CU_ASSERT_STRING_EQUAL(find(&c, "a.test.")->group, "red");
	CU_ASSERT_EQUAL(catgen_update(&c, NULL, 0, 10, &changed), 0);
	CU_ASSERT(changed);
	CU_ASSERT_EQUAL(c.count, 0);
	CU_ASSERT_EQUAL(load_count(&c), 3);
	catgen_clear(&c);
}

/* A file that is not there is an empty catalog; lines of other shapes are passed over. */
static void test_read_missing_and_foreign(void)
{
	catgen_t c;
	CU_ASSERT_EQUAL_FATAL(catgen_init(&c, "cat.test."), 0);
	char missing[600];
	snprintf(missing, sizeof(missing), "%s/none.zone", tmpdir);
	CU_ASSERT_EQUAL(catgen_read(&c, missing), 0);
	CU_ASSERT_EQUAL(c.count, 0);
	CU_ASSERT_EQUAL(c.serial, 0);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("; hand-made\n@ 0 IN SOA invalid. invalid. 7 3600 600 2147483646 0\n"
	      "zz.zones 0 IN PTR short-id.test.\n"
	      "0123456789abcdef.zones 0 IN PTR m.test.\n"
	      "group.0123456789abcdef.zones 0 IN TXT \"g\"\n",
	      f);
	fclose(f);
	CU_ASSERT_EQUAL(catgen_read(&c, path), 0);
	CU_ASSERT_EQUAL(c.serial, 7);
	CU_ASSERT_EQUAL_FATAL(c.count, 1);
	CU_ASSERT_STRING_EQUAL(c.members[0].id, "0123456789abcdef");
	CU_ASSERT_STRING_EQUAL(c.members[0].group, "g");
	catgen_clear(&c);
}

/* 100,000 members, then one more: the others keep their ids, the serial moves once. */
static void test_many(void)
{
	enum { N = 100000 };
	catgen_t c;
	CU_ASSERT_EQUAL_FATAL(catgen_init(&c, "cat.test."), 0);
	catgen_want_t *want = calloc(N + 1, sizeof(*want));
	char(*names)[32] = calloc(N + 1, sizeof(*names));
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_PTR_NOT_NULL_FATAL(names);
	for (size_t i = 0; i <= N; i++) {
		snprintf(names[i], sizeof(names[i]), "m%zu.test.", i);
		want[i].name = names[i];
	}
	bool changed;
	CU_ASSERT_EQUAL(catgen_update(&c, want, N, 1000, &changed), 0);
	CU_ASSERT_EQUAL(c.count, N);
	char first[CATGEN_ID_LEN + 1];
	snprintf(first, sizeof(first), "%s", find(&c, "m7.test.")->id);
	CU_ASSERT_EQUAL(catgen_update(&c, want, N + 1, 1000, &changed), 0);
	CU_ASSERT(changed);
	CU_ASSERT_EQUAL(c.count, N + 1);
	CU_ASSERT_EQUAL(c.serial, 1001);
	CU_ASSERT_STRING_EQUAL(find(&c, "m7.test.")->id, first);
	CU_ASSERT_EQUAL(load_count(&c), N + 4);
	free(names);
	free(want);
	catgen_clear(&c);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(path, sizeof(path), "%s/catalog.zone", tmpdir);
	unit_test_t tests[] = {
		UNIT_TEST(test_make_read_back),
		UNIT_TEST(test_changes),
		UNIT_TEST(test_read_missing_and_foreign),
		UNIT_TEST(test_change_one),
		UNIT_TEST(test_many),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "catalog_gen", tests);
	unlink(path);
	rmdir(tmpdir);
	return rc;
}
