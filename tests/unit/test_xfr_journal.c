/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/changeset.c and zone/journal.c: the diff of two
 * versions applied (through ldns) to the old one gives the new one,
 * condensing, the journal's bounds and answers, its place in zonedb across
 * reloads, and readers on other threads.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/xfr_test.h"
#include "zone/changeset.h"
#include "zone/jfile.h"
#include "zone/journal.h"
#include "zone/zonedb.h"

static char tmpdir[] = "/tmp/shoal-journal-XXXXXX";

static const char *write_version(int v)
{
	return xt_write_version(tmpdir, v);
}

static zone_t *version(int v)
{
	return xt_load(write_version(v), "j.test.");
}

/* The records of a changeset side, SOA first. */
static ldns_rr_list *side_rrs(const xfr_part_t *p)
{
	ldns_rr_list *l = ldns_rr_list_new();
	size_t at = 0;
	xfr_run_t run;
	while (xfr_part_next(p, &at, &run))
		xt_push_set(l, run.owner, &run.set);
	return l;
}

/* Apply cs to a's records (through ldns) and compare with b's. */
static bool takes(const changeset_t *cs, const zone_t *a, const zone_t *b)
{
	ldns_rr_list *za = xt_zone_rrs(a), *zb = xt_zone_rrs(b);
	ldns_rr_list *del = side_rrs(&cs->del), *add = side_rrs(&cs->add);
	bool ok = true;
	for (size_t i = 0; i < ldns_rr_list_rr_count(del); i++)
		ok &= xt_remove(za, ldns_rr_list_rr(del, i));
	for (size_t i = 0; i < ldns_rr_list_rr_count(add); i++)
		ldns_rr_list_push_rr(za, ldns_rr_clone(ldns_rr_list_rr(add, i)));
	ok = ok && xt_same_rrs(za, zb);
	ldns_rr_list_deep_free(za);
	ldns_rr_list_deep_free(zb);
	ldns_rr_list_deep_free(del);
	ldns_rr_list_deep_free(add);
	return ok;
}

static void test_diff(void)
{
	zone_t *v1 = version(1), *v2 = version(2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v2);
	changeset_t *cs;
	CU_ASSERT_EQUAL_FATAL(changeset_diff(v1, v2, 0, &cs), 0);
	CU_ASSERT_EQUAL(cs->from, 1);
	CU_ASSERT_EQUAL(cs->to, 2);
	/* deleted: www A .80 (TTL), www A .81, gone.a.b A; added: the same two, MX, AAAA */
	CU_ASSERT_EQUAL(cs->del.rr_count, 1 + 3);
	CU_ASSERT_EQUAL(cs->add.rr_count, 1 + 4);
	size_t at = 0;
	xfr_run_t run;
	CU_ASSERT_TRUE(xfr_part_next(&cs->del, &at, &run));
	CU_ASSERT_EQUAL(run.set.type, DNS_TYPE_SOA);
	at = 0;
	CU_ASSERT_TRUE(xfr_part_next(&cs->add, &at, &run));
	CU_ASSERT_EQUAL(run.set.rr_count, 1);
	CU_ASSERT_EQUAL(wire_get_u16(xfr_part_soa(&cs->add)), DNS_TYPE_SOA);
	CU_ASSERT(cs->octets > 0);
	CU_ASSERT_TRUE(takes(cs, v1, v2));
	changeset_unref(cs);

	/* backwards works the same way */
	CU_ASSERT_EQUAL_FATAL(changeset_diff(v2, v1, 0, &cs), 0);
	CU_ASSERT_TRUE(takes(cs, v2, v1));
	changeset_unref(cs);

	/* a version against itself: the SOAs only */
	CU_ASSERT_EQUAL_FATAL(changeset_diff(v2, v2, 0, &cs), 0);
	CU_ASSERT_EQUAL(cs->del.rr_count, 1);
	CU_ASSERT_EQUAL(cs->add.rr_count, 1);
	changeset_unref(cs);
	zone_unref(v1);
	zone_unref(v2);
}

/* Two versions of a zone of many names, with changes spread over it. */
static void test_diff_big(void)
{
	char p1[4200], p2[4200];
	snprintf(p1, sizeof(p1), "%s/big1.zone", tmpdir);
	snprintf(p2, sizeof(p2), "%s/big2.zone", tmpdir);
	FILE *f1 = fopen(p1, "w"), *f2 = fopen(p2, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f2);
	const char *head = "$ORIGIN big.test.\n@ 60 SOA ns hm %d 1 1 1 1\n@ 60 NS ns\n"
			   "ns 60 A 192.0.2.1\n";
	fprintf(f1, head, 10);
	fprintf(f2, head, 11);
	for (int i = 0; i < 3000; i++) {
		fprintf(f1, "h%d.s%d 60 A 10.0.%d.%d\n", i, i % 17, i / 256, i % 256);
		if (i % 97 != 0) /* some names go */
			fprintf(f2, "h%d.s%d 60 A 10.0.%d.%d\n", i, i % 17, i / 256, i % 256);
		if (i % 89 == 0) /* some come */
			fprintf(f2, "n%d 60 TXT \"new %d\"\n", i, i);
		if (i % 5 == 0) /* some change */
			fprintf(f2, "h%d.s%d 60 A 10.1.%d.%d\n", i, i % 17, i / 256, i % 256);
	}
	fclose(f1);
	fclose(f2);
	zone_t *a = xt_load(p1, "big.test."), *b = xt_load(p2, "big.test.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	changeset_t *cs;
	/* bounded: a change too big for the journal is not built whole */
	CU_ASSERT_EQUAL(changeset_diff(a, b, 4096, &cs), SHOAL_ESPACE);
	/* a reload abandoned (its loads cancelled) stops comparing */
	bool cancel = true;
	CU_ASSERT_EQUAL(changeset_diff_watch(a, b, 0, &cancel, &cs), SHOAL_ETIMEOUT);
	CU_ASSERT_EQUAL_FATAL(changeset_diff(a, b, 0, &cs), 0);
	CU_ASSERT(cs->octets > 4096);
	CU_ASSERT_EQUAL(cs->del.rr_count, 1 + 31);
	CU_ASSERT_EQUAL(cs->add.rr_count, 1 + 34 + 600);
	CU_ASSERT_TRUE(takes(cs, a, b));
	changeset_unref(cs);
	zone_unref(a);
	zone_unref(b);
}

static void test_condense(void)
{
	zone_t *v1 = version(1), *v2 = version(2), *v3 = version(3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v3);
	changeset_t *c12, *c23, *c13;
	CU_ASSERT_EQUAL_FATAL(changeset_diff(v1, v2, 0, &c12), 0);
	CU_ASSERT_EQUAL_FATAL(changeset_diff(v2, v3, 0, &c23), 0);
	const changeset_t *both[] = { c12, c23 };
	CU_ASSERT_EQUAL_FATAL(changeset_condense(both, 2, &c13), 0);
	CU_ASSERT_EQUAL(c13->from, 1);
	CU_ASSERT_EQUAL(c13->to, 3);
	CU_ASSERT_TRUE(takes(c13, v1, v3));
	/* gone.a.b went and came back, MX and AAAA came and went: none of it is sent */
	changeset_t *direct;
	CU_ASSERT_EQUAL_FATAL(changeset_diff(v1, v3, 0, &direct), 0);
	CU_ASSERT_EQUAL(c13->del.rr_count, direct->del.rr_count);
	CU_ASSERT_EQUAL(c13->add.rr_count, direct->add.rr_count);
	CU_ASSERT_EQUAL(c13->del.rr_count, 1 + 3);
	/* sets that do not follow each other */
	const changeset_t *gap[] = { c23, c12 };
	CU_ASSERT_EQUAL(changeset_condense(gap, 2, &direct), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(changeset_condense(gap, 0, &direct), SHOAL_EINVAL);
	changeset_unref(direct);
	changeset_unref(c12);
	changeset_unref(c23);
	changeset_unref(c13);
	zone_unref(v1);
	zone_unref(v2);
	zone_unref(v3);
}

static void test_changeset_build_rules(void)
{
	changeset_t *cs = changeset_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	uint8_t owner[NAME_MAXLEN], soa[64];
	name_from_text("Www.J.Test.", NULL, owner);
	static const uint8_t a[4] = { 192, 0, 2, 1 };
	/* the SOA must come first */
	CU_ASSERT_EQUAL(changeset_add(cs, false, owner, DNS_TYPE_A, 60, a, 4), SHOAL_EINVAL);
	memset(soa, 0, sizeof(soa));
	soa[5] = 9; /* ". . 9 0 0 0 0" */
	soa[2] = 0;
	CU_ASSERT_EQUAL(changeset_add(cs, false, owner, DNS_TYPE_SOA, 60, soa, 22), 0);
	CU_ASSERT_EQUAL(changeset_add(cs, false, owner, DNS_TYPE_SOA, 60, soa, 22), SHOAL_EINVAL);
	/* RDATA that does not fit its type */
	CU_ASSERT_EQUAL(changeset_add(cs, false, owner, DNS_TYPE_A, 60, a, 3), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(changeset_add(cs, false, owner, DNS_TYPE_A, 60, a, 4), 0);
	CU_ASSERT_EQUAL(changeset_seal(cs), SHOAL_EINVAL); /* no SOA among the additions */
	soa[5] = 10;
	CU_ASSERT_EQUAL(changeset_add(cs, true, owner, DNS_TYPE_SOA, 60, soa, 22), 0);
	CU_ASSERT_EQUAL(changeset_seal(cs), 0);
	CU_ASSERT_EQUAL(cs->from, 9);
	CU_ASSERT_EQUAL(cs->to, 10);
	size_t at = 0;
	xfr_run_t run;
	CU_ASSERT_TRUE(xfr_part_next(&cs->del, &at, &run)); /* the SOA */
	CU_ASSERT_TRUE(xfr_part_next(&cs->del, &at, &run));
	CU_ASSERT_EQUAL(run.owner[1], 'w'); /* owners are lowercased */
	CU_ASSERT_EQUAL(changeset_add(cs, true, owner, DNS_TYPE_A, 60, a, 4), SHOAL_EINVAL);
	changeset_unref(changeset_ref(cs));
	changeset_unref(cs);
}

/*
 * The sorted operations of a changeset hold its records' owner keys at
 * their length, not room for the longest name each: 2,000 records of
 * 1,000 names take tens of kilobytes, not a megabyte and more.
 */
static void test_ops_size(void)
{
	changeset_t *cs = changeset_new();
	uint8_t apex[NAME_MAXLEN], owner[NAME_MAXLEN], soa[22] = { 0 };
	name_from_text("j.test.", NULL, apex);
	soa[5] = 1;
	CU_ASSERT_EQUAL(changeset_add(cs, false, apex, DNS_TYPE_SOA, 60, soa, 22), 0);
	soa[5] = 2;
	CU_ASSERT_EQUAL(changeset_add(cs, true, apex, DNS_TYPE_SOA, 60, soa, 22), 0);
	size_t names = 0;
	for (int add = 0; add < 2; add++)
		for (unsigned i = 0; i < 1000; i++) {
			char text[64];
			snprintf(text, sizeof(text), "h%u.j.test.", i);
			name_from_text(text, NULL, owner);
			const uint8_t a[4] = { 192, 0, (uint8_t)(i >> 8), (uint8_t)(add + i) };
			CU_ASSERT_EQUAL(changeset_add(cs, add, owner, DNS_TYPE_A, 60, a, 4), 0);
			names += name_length(owner);
		}
	CU_ASSERT_EQUAL_FATAL(changeset_seal(cs), 0);
	const changeset_t *sets[] = { cs };
	xfr_ops_t ops;
	CU_ASSERT_EQUAL_FATAL(xfr_ops_collect(sets, 1, &ops), 0);
	CU_ASSERT_EQUAL(ops.count, 2000);
	/* a key is at most a name's length here: no octet 0 or 1 in these labels */
	CU_ASSERT(ops.octets <= ops.count * sizeof(xfr_op_t) + names);
	/* each op's key is its owner's */
	for (size_t i = 0; i < ops.count; i++) {
		uint8_t key[ZONE_KEY_MAX];
		size_t klen = zone_name_key(ops.ops[i].owner, key);
		CU_ASSERT(klen == ops.ops[i].key_len && memcmp(key, ops.ops[i].key, klen) == 0);
	}
	xfr_ops_clear(&ops);
	changeset_unref(cs);
}

/*
 * A sealed changeset counts (and holds) its records, not the room its
 * growth left: 1,100 records of 33 to 37 octets, 37 kB, held in 64 kB
 * before, which a journal counted against its size.
 */
static void test_changeset_octets(void)
{
	changeset_t *cs = changeset_new();
	uint8_t apex[NAME_MAXLEN], owner[NAME_MAXLEN], soa[22] = { 0 };
	name_from_text("j.test.", NULL, apex);
	CU_ASSERT_EQUAL(changeset_add(cs, false, apex, DNS_TYPE_SOA, 60, soa, 22), 0);
	soa[5] = 1;
	CU_ASSERT_EQUAL(changeset_add(cs, true, apex, DNS_TYPE_SOA, 60, soa, 22), 0);
	size_t records = 2 * (9 + 10 + 22);
	for (unsigned i = 0; i < 1100; i++) {
		char text[64];
		snprintf(text, sizeof(text), "h%u.j.test.", i);
		name_from_text(text, NULL, owner);
		const uint8_t a[4] = { 192, 0, (uint8_t)(i >> 8), (uint8_t)i };
		CU_ASSERT_EQUAL(changeset_add(cs, true, owner, DNS_TYPE_A, 60, a, 4), 0);
		records += name_length(owner) + 10 + 4;
	}
	CU_ASSERT_EQUAL_FATAL(changeset_seal(cs), 0);
	/* a run of one record costs its owner, its wire and 6 or 7 octets, no pointers */
	size_t runs = (cs->del.run_count + cs->add.run_count) * 7;
	CU_ASSERT(cs->octets <= records + runs + 1024);
	if (cs->octets > records + runs + 1024)
		fprintf(stderr, "  %zu octets for %zu of records and %zu runs ", cs->octets,
			records, cs->del.run_count + cs->add.run_count);
	changeset_unref(cs);
}

/* A changeset from..to with one TXT record of `size` octets added. */
static changeset_t *make_cs(uint32_t from, uint32_t to, size_t size)
{
	changeset_t *cs = changeset_new();
	uint8_t apex[NAME_MAXLEN], soa[22] = { 0 }, txt[256];
	name_from_text("j.test.", NULL, apex);
	soa[2] = (uint8_t)(from >> 24), soa[3] = (uint8_t)(from >> 16);
	soa[4] = (uint8_t)(from >> 8), soa[5] = (uint8_t)from;
	changeset_add(cs, false, apex, DNS_TYPE_SOA, 60, soa, 22);
	soa[2] = (uint8_t)(to >> 24), soa[3] = (uint8_t)(to >> 16);
	soa[4] = (uint8_t)(to >> 8), soa[5] = (uint8_t)to;
	changeset_add(cs, true, apex, DNS_TYPE_SOA, 60, soa, 22);
	memset(txt, 'x', sizeof(txt));
	for (size_t done = 0; done < size; done += 200) {
		txt[0] = 199;
		txt[1] = (uint8_t)(done / 200); /* each record different */
		changeset_add(cs, true, apex, DNS_TYPE_TXT, 60, txt, 200);
	}
	changeset_seal(cs);
	return cs;
}

/* A start: *j (unreffed) replaced by a new journal on path, not restored yet. */
static void reopen(journal_t **j, const char *path)
{
	journal_unref(*j);
	*j = journal_new(1 << 20);
	journal_set_file(*j, path, NULL);
}

/* A start: *j (unreffed) replaced by a new journal on path, restored at serial; restore's result.
 */
static int restart(journal_t **j, const char *path, uint32_t serial, journal_restored_t *r)
{
	reopen(j, path);
	return journal_restore(*j, serial, r);
}

/* A journal with a file: each change written, read back by a new journal, cleared with it. */
static void test_journal_file(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/j.test.journal", tmpdir);
	journal_t *j = journal_new(1 << 20);
	CU_ASSERT_EQUAL_FATAL(journal_set_file(j, path, NULL), 0);
	CU_ASSERT_STRING_EQUAL(journal_file(j), path);
	for (uint32_t s = 1; s <= 4; s++)
		CU_ASSERT_EQUAL(journal_add(j, make_cs(s, s + 1, 400)), 0);
	CU_ASSERT_EQUAL(access(path, F_OK), 0);

	/* a stop (the file stays), a start at serial 5: the history to it comes back */
	journal_restored_t r;
	CU_ASSERT_EQUAL(restart(&j, path, 5, &r), 0);
	CU_ASSERT_EQUAL(r.found, 4);
	CU_ASSERT_EQUAL(r.ahead, 0);
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 4);
	CU_ASSERT_EQUAL(info.oldest, 1);
	CU_ASSERT_EQUAL(info.newest, 5);
	/* and goes on: the next change follows in the file */
	CU_ASSERT_EQUAL(journal_add(j, make_cs(5, 6, 400)), 0);

	/* a start at serial 4 (a secondary's zone saved before its last two changes) */
	CU_ASSERT_EQUAL(restart(&j, path, 4, &r), 0);
	CU_ASSERT_EQUAL(r.found, 5);
	CU_ASSERT_EQUAL(r.ahead, 2);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.newest, 4);
	CU_ASSERT_EQUAL(restart(&j, path, 4, &r), 0);
	CU_ASSERT_EQUAL(r.found, 3); /* the file was cut there */

	/* a history that does not follow starts the file again */
	CU_ASSERT_EQUAL(journal_add(j, make_cs(40, 41, 400)), 0);
	CU_ASSERT_EQUAL(restart(&j, path, 41, &r), 0);
	CU_ASSERT_EQUAL(r.found, 1);
	/* a serial the history does not lead to: the file goes */
	CU_ASSERT_EQUAL(restart(&j, path, 99, &r), 1);
	CU_ASSERT_EQUAL(r.newest, 41);
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0);
	/* no file: nothing, and no error */
	CU_ASSERT_EQUAL(journal_restore(j, 99, &r), 0);
	CU_ASSERT_EQUAL(r.found, 0);

	/* clear, and a bound of 0, remove the file */
	journal_add(j, make_cs(99, 100, 400));
	CU_ASSERT_EQUAL(access(path, F_OK), 0);
	journal_clear(j);
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
	journal_add(j, make_cs(100, 101, 400));
	journal_set_max(j, 0);
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
	/* a change bigger than the bound is not kept, on disk either */
	journal_set_max(j, 8000);
	journal_add(j, make_cs(101, 102, 400));
	CU_ASSERT_EQUAL(access(path, F_OK), 0);
	journal_add(j, make_cs(102, 103, 20000));
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
	journal_unref(j);
}

/* Whether two changesets hold the same records, side by side. */
static bool same_changes(const changeset_t *a, const changeset_t *b)
{
	ldns_rr_list *ad = side_rrs(&a->del), *bd = side_rrs(&b->del);
	ldns_rr_list *aa = side_rrs(&a->add), *ba = side_rrs(&b->add);
	bool same =
		a->from == b->from && a->to == b->to && xt_same_rrs(ad, bd) && xt_same_rrs(aa, ba);
	ldns_rr_list_deep_free(ad);
	ldns_rr_list_deep_free(bd);
	ldns_rr_list_deep_free(aa);
	ldns_rr_list_deep_free(ba);
	return same;
}

/*
 * With a file, the journal keeps where each change lies in it, not the
 * change: once journal_add returns, the caller's reference is the
 * changeset's last, and an IXFR reads it back, the same records. A record
 * that went bad in the file answers SHOAL_EIO (the caller sends the whole
 * zone, RFC 1995 4). Without a file the journal holds the changeset.
 */
static void test_journal_file_keeps_places(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/places.journal", tmpdir);
	journal_t *j = journal_new(1 << 20);
	CU_ASSERT_EQUAL_FATAL(journal_set_file(j, path, NULL), 0);
	changeset_t *one = make_cs(1, 2, 2000), *two = make_cs(2, 3, 600);
	CU_ASSERT_EQUAL(journal_add(j, changeset_ref(one)), 0);
	CU_ASSERT_EQUAL(journal_add(j, changeset_ref(two)), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&one->refs, __ATOMIC_RELAXED), 1);
	CU_ASSERT_EQUAL(__atomic_load_n(&two->refs, __ATOMIC_RELAXED), 1);
	xfr_changes_t c;
	CU_ASSERT_EQUAL_FATAL(journal_changes(j, 1, 3, false, &c), 0);
	CU_ASSERT_EQUAL_FATAL(c.count, 2);
	CU_ASSERT_TRUE(same_changes(c.sets[0], one));
	CU_ASSERT_TRUE(same_changes(c.sets[1], two));
	xfr_changes_clear(&c);
	/* an octet of the first record's body flipped: its hash fails */
	int fd = open(path, O_RDWR);
	uint8_t x = 0;
	CU_ASSERT_FATAL(fd >= 0 && pread(fd, &x, 1, 60) == 1);
	x ^= 0x55;
	CU_ASSERT(pwrite(fd, &x, 1, 60) == 1);
	close(fd);
	CU_ASSERT_EQUAL(journal_changes(j, 1, 3, false, &c), SHOAL_EIO);
	CU_ASSERT_EQUAL(c.count, 0);
	CU_ASSERT_EQUAL(journal_changes(j, 2, 3, false, &c), 0); /* the second is whole */
	xfr_changes_clear(&c);
	journal_unref(j);
	/* no file: the memory holds the change */
	j = journal_new(1 << 20);
	CU_ASSERT_EQUAL(journal_add(j, changeset_ref(one)), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&one->refs, __ATOMIC_RELAXED), 2);
	journal_unref(j);
	changeset_unref(one);
	changeset_unref(two);
	unlink(path);
}

/*
 * A secondary's file written zonefile-sync after its journal: a start at
 * the file's older serial keeps the changes past it (journal_restore_ahead),
 * in memory and in the file, to be applied onto it; also when the first
 * change leaves that serial (the zone came whole, then changed). A history
 * that neither leads to it nor leaves it still goes.
 */
static void test_journal_restore_ahead(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/a.test.journal", tmpdir);
	journal_t *j = journal_new(1 << 20);
	CU_ASSERT_EQUAL_FATAL(journal_set_file(j, path, NULL), 0);
	for (uint32_t s = 1; s <= 4; s++)
		CU_ASSERT_EQUAL(journal_add(j, make_cs(s, s + 1, 400)), 0);
	journal_restored_t r;
	reopen(&j, path);
	CU_ASSERT_EQUAL(journal_restore_ahead(j, 3, &r), 0);
	CU_ASSERT_EQUAL(r.found, 4);
	CU_ASSERT_EQUAL(r.ahead, 2);
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 4);
	CU_ASSERT_EQUAL(info.newest, 5);
	xfr_changes_t c;
	CU_ASSERT_EQUAL(journal_changes(j, 3, 5, false, &c), 0);
	CU_ASSERT_EQUAL(c.count, 2);
	xfr_changes_clear(&c);
	/* the file kept them all: a start at the newest finds the four */
	CU_ASSERT_EQUAL(restart(&j, path, 5, &r), 0);
	CU_ASSERT_EQUAL(r.found, 4);
	/* the first change leaves the serial loaded */
	reopen(&j, path);
	CU_ASSERT_EQUAL(journal_restore_ahead(j, 1, &r), 0);
	CU_ASSERT_EQUAL(r.ahead, 4);
	/* neither: removed, as by journal_restore */
	reopen(&j, path);
	CU_ASSERT_EQUAL(journal_restore_ahead(j, 77, &r), 1);
	CU_ASSERT_EQUAL(r.ahead, 0);
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
	journal_unref(j);
}

/* The octets of the file at path (0: none). */
static size_t octets_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* An IXFR's changesets at once: one write for them all, read back as they were. */
static void test_journal_add_all(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/all.journal", tmpdir);
	journal_t *j = journal_new(1 << 20);
	journal_set_file(j, path, NULL);
	const changeset_t *sets[3];
	for (uint32_t s = 0; s < 3; s++)
		sets[s] = make_cs(7 + s, 8 + s, 400);
	CU_ASSERT_EQUAL(journal_add_all(j, sets, 3), 0);
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 3);
	CU_ASSERT_EQUAL(info.file_octets, 3 * jfile_record_size(sets[0]));
	for (size_t i = 0; i < 3; i++)
		changeset_unref(sets[i]); /* the journal holds its own */
	CU_ASSERT_EQUAL(journal_add_all(j, sets, 0), 0);
	journal_restored_t r;
	CU_ASSERT_EQUAL(restart(&j, path, 10, &r), 0);
	CU_ASSERT_EQUAL(r.found, 3);
	/* one too big to keep in the middle: the list and the file keep those after it */
	journal_set_max(j, 8000);
	const changeset_t *mixed[3] = { make_cs(10, 11, 400), make_cs(11, 12, 20000),
					make_cs(12, 13, 400) };
	journal_add_all(j, mixed, 3);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 1);
	CU_ASSERT_EQUAL(info.oldest, 12);
	CU_ASSERT_EQUAL(info.file_octets, jfile_record_size(mixed[2]));
	for (size_t i = 0; i < 3; i++)
		changeset_unref(mixed[i]);
	journal_clear(j);
	journal_unref(j);
}

/* ixfr-journal-total: a zone past it loses its own oldest changes on disk, never another's. */
static void test_journal_total(void)
{
	char pa[256], pb[256];
	snprintf(pa, sizeof(pa), "%s/a.journal", tmpdir);
	snprintf(pb, sizeof(pb), "%s/b.journal", tmpdir);
	changeset_t *probe = make_cs(1, 2, 400);
	size_t rec = jfile_record_size(probe);
	changeset_unref(probe);
	journal_budget_t budget = { .max = 3 * rec + rec / 2 };
	journal_t *a = journal_new(1 << 20), *b = journal_new(1 << 20);
	journal_set_file(a, pa, &budget);
	journal_set_file(b, pb, &budget);
	for (uint32_t s = 1; s <= 2; s++)
		CU_ASSERT_EQUAL(journal_add(a, make_cs(s, s + 1, 400)), 0);
	for (uint32_t s = 1; s <= 3; s++)
		CU_ASSERT_EQUAL(journal_add(b, make_cs(s, s + 1, 400)), 0);
	/* b's third change fits only without its first; a keeps both of its own */
	CU_ASSERT_EQUAL(octets_of(pa), 2 * rec);
	CU_ASSERT_EQUAL(octets_of(pb), rec);
	CU_ASSERT_EQUAL(budget.used, 3 * rec);
	/* b's history is what its file holds: memory keeps only where those lie */
	journal_info_t info;
	journal_get_info(b, &info);
	CU_ASSERT_EQUAL(info.depth, 1);
	CU_ASSERT_EQUAL(info.oldest, 3);
	/* a change bigger than the room left: b's file goes, a's stays */
	CU_ASSERT_EQUAL(journal_add(b, make_cs(4, 5, 4000)), SHOAL_ESPACE);
	CU_ASSERT_EQUAL(octets_of(pb), 0);
	CU_ASSERT_EQUAL(octets_of(pa), 2 * rec);
	CU_ASSERT_EQUAL(budget.used, 2 * rec);
	/* the next change that fits starts b's history on disk again */
	CU_ASSERT_EQUAL(journal_add(b, make_cs(5, 6, 400)), 0);
	CU_ASSERT_EQUAL(octets_of(pb), rec);
	CU_ASSERT_EQUAL(budget.used, 3 * rec);
	/* a zone removed: its file and its count go */
	journal_drop_file(a);
	CU_ASSERT_EQUAL(octets_of(pa), 0);
	/* its name stays, for a writer that names it in a message at the same time */
	CU_ASSERT_PTR_NOT_NULL(journal_file(a));
	CU_ASSERT_EQUAL(budget.used, rec);
	CU_ASSERT_EQUAL(journal_add(a, make_cs(3, 4, 400)), 0);
	CU_ASSERT_EQUAL(octets_of(pa), 0); /* no file any more */
	/* a restart counts what it reads back */
	journal_unref(b);
	budget.used = 0;
	b = journal_new(1 << 20);
	journal_set_file(b, pb, &budget);
	journal_restored_t r;
	CU_ASSERT_EQUAL(journal_restore(b, 6, &r), 0);
	CU_ASSERT_EQUAL(budget.used, rec);
	journal_clear(b);
	CU_ASSERT_EQUAL(budget.used, 0);
	journal_unref(a);
	journal_unref(b);
}

static void test_journal_bounds(void)
{
	journal_t *j = journal_new(0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	changeset_t *probe = make_cs(1, 2, 2000);
	size_t each = probe->octets;
	changeset_unref(probe);
	journal_set_max(j, 3 * each + each / 2); /* room for three */
	for (uint32_t s = 1; s <= 5; s++)
		journal_add(j, make_cs(s, s + 1, 2000));
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 3);
	CU_ASSERT_EQUAL(info.oldest, 3);
	CU_ASSERT_EQUAL(info.newest, 6);
	CU_ASSERT(info.octets <= info.max_octets);
	xfr_changes_t c;
	/* dropped: the history does not reach back to 1 or 2 */
	CU_ASSERT_EQUAL(journal_changes(j, 1, 6, false, &c), SHOAL_ENOTFOUND);
	CU_ASSERT_EQUAL(journal_changes(j, 2, 6, false, &c), SHOAL_ENOTFOUND);
	CU_ASSERT_EQUAL(c.count, 0);
	CU_ASSERT_EQUAL_FATAL(journal_changes(j, 3, 6, false, &c), 0);
	CU_ASSERT_EQUAL(c.count, 3);
	CU_ASSERT_EQUAL(c.sets[0]->from, 3);
	CU_ASSERT_EQUAL(c.sets[2]->to, 6);
	xfr_changes_clear(&c);
	/* up to a version older than the newest (a reload not yet published) */
	CU_ASSERT_EQUAL_FATAL(journal_changes(j, 3, 5, false, &c), 0);
	CU_ASSERT_EQUAL(c.count, 2);
	xfr_changes_clear(&c);
	CU_ASSERT_EQUAL_FATAL(journal_changes(j, 3, 6, true, &c), 0);
	CU_ASSERT_EQUAL(c.count, 1);
	CU_ASSERT_EQUAL(c.sets[0]->from, 3);
	CU_ASSERT_EQUAL(c.sets[0]->to, 6);
	xfr_changes_clear(&c);
	CU_ASSERT_EQUAL(journal_changes(j, 6, 6, false, &c), SHOAL_ENOTFOUND);
	CU_ASSERT_EQUAL(journal_changes(j, 7, 9, false, &c), SHOAL_ENOTFOUND);

	/* the bound shrinks: the oldest go */
	journal_set_max(j, each + each / 2);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 1);
	CU_ASSERT_EQUAL(info.oldest, 5);

	/* a changeset that does not follow the last starts the history again */
	journal_add(j, make_cs(100, 101, 10));
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 1);
	CU_ASSERT_EQUAL(info.oldest, 100);

	/* one bigger than the whole bound is not kept, and nothing before it */
	journal_add(j, make_cs(101, 102, 20000));
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0);
	CU_ASSERT_EQUAL(info.octets, 0);
	CU_ASSERT_EQUAL(journal_changes(j, 101, 102, false, &c), SHOAL_ENOTFOUND);

	/* serials wrap (RFC 1982): the history follows them */
	journal_add(j, make_cs(0xffffffff, 0, 10));
	journal_add(j, make_cs(0, 1, 10));
	CU_ASSERT_EQUAL_FATAL(journal_changes(j, 0xffffffff, 1, true, &c), 0);
	CU_ASSERT_EQUAL(c.sets[0]->to, 1);
	xfr_changes_clear(&c);
	journal_clear(j);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0);
	journal_unref(j);
}

static void quiet(void *arg, bool is_error, const char *msg)
{
	xt_msg(arg, is_error, msg);
}

/* The journal lives in zonedb: made by the first change a reload keeps, carried, filled. */
static void test_journal_in_zonedb(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/db.zone", tmpdir);
	uint8_t apex[NAME_MAXLEN];
	name_from_text("j.test.", NULL, apex);
	zone_spec_t s = { .name = "j.test", .file = path, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db[7] = { NULL };
	xt_msgs_t m = { 0 };
	for (int v = 1; v <= 3; v++) {
		char cmd[8500];
		snprintf(cmd, sizeof(cmd), "cp %s %s", write_version(v), path);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
		CU_ASSERT_EQUAL_FATAL(
			zonedb_build(&s, 1, v > 1 ? db[v - 1] : NULL, NULL, quiet, &m, &db[v]), 0);
	}
	journal_t *j = zonedb_journal(db[3], apex);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	/* made with the first change kept, then carried from set to set */
	CU_ASSERT_PTR_NULL(zonedb_journal(db[1], apex));
	CU_ASSERT_PTR_EQUAL(zonedb_journal(db[2], apex), j);
	CU_ASSERT_PTR_NULL(zonedb_journal(db[3], (const uint8_t *)"\4none\0"));
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 2);
	CU_ASSERT_EQUAL(info.max_octets, ZONE_JOURNAL_DEFAULT);
	xfr_changes_t c;
	CU_ASSERT_EQUAL_FATAL(journal_changes(j, 1, 3, false, &c), 0);
	CU_ASSERT_EQUAL(c.count, 2);
	xfr_changes_clear(&c);
	/* reloading the same version records nothing */
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, db[3], NULL, quiet, &m, &db[4]), 0);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 2);
	CU_ASSERT_EQUAL(m.warnings, 0);
	/* changed without a newer serial: the history no longer leads here */
	FILE *f = fopen(path, "a");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "extra A 192.0.2.99\n");
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, db[4], NULL, quiet, &m, &db[5]), 0);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0);
	CU_ASSERT_EQUAL(m.warnings, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "not forward"));
	/* changes bigger than the journal's bound (the zone's, set again by each build) */
	s.limits.max_journal = 200;
	char cmd[8500];
	snprintf(cmd, sizeof(cmd), "cp %s %s", write_version(4), path);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, db[5], NULL, quiet, &m, &db[6]), 0);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0);
	CU_ASSERT_EQUAL(m.warnings, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "more than the IXFR journal holds"));
	/* the sets go, in any order; the journal goes with the last */
	for (int v = 1; v <= 6; v++)
		zonedb_free(db[v]);
}

/* Readers on other threads ask while the journal grows and sheds. */
static journal_t *shared;
static int readers_stop;

static void *reader(void *arg)
{
	size_t *found = arg;
	while (!__atomic_load_n(&readers_stop, __ATOMIC_ACQUIRE)) {
		journal_info_t info;
		journal_get_info(shared, &info);
		xfr_changes_t c;
		if (info.depth &&
		    journal_changes(shared, info.oldest, info.newest, true, &c) == 0) {
			/* the changesets are the reader's now: read them whole */
			for (size_t i = 0; i < c.count; i++)
				*found +=
					c.sets[i]->add.rr_count + xfr_part_soa(&c.sets[i]->add)[0];
			xfr_changes_clear(&c);
		}
	}
	return NULL;
}

/* Build a set of spec s over old with journals in dir; the set, or NULL. */
static zonedb_t *build_in(const zone_spec_t *s, size_t n, const zonedb_t *old, const char *dir)
{
	xt_msgs_t m = { 0 };
	zonedb_build_t b = {
		.specs = s, .n = n, .old = old, .msg = quiet, .msg_arg = &m, .journal_dir = dir
	};
	zonedb_t *db = NULL;
	return zonedb_build_with(&b, &db) == 0 ? db : NULL;
}

/* A set with a journal folder: the file written at a reload, read back by a new set, swept. */
static void test_journal_dir_in_zonedb(void)
{
	char dir[300], zfile[300], jpath[400], cmd[1000];
	snprintf(dir, sizeof(dir), "%s/jdir", tmpdir);
	snprintf(zfile, sizeof(zfile), "%s/dir.zone", tmpdir);
	snprintf(jpath, sizeof(jpath), "%s/j.test.journal", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
	uint8_t apex[NAME_MAXLEN];
	name_from_text("j.test.", NULL, apex);
	zone_spec_t s = { .name = "j.test", .file = zfile, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db[4] = { NULL };
	for (int v = 1; v <= 2; v++) {
		snprintf(cmd, sizeof(cmd), "cp %s %s", write_version(v), zfile);
		CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
		db[v - 1] = build_in(&s, 1, v > 1 ? db[v - 2] : NULL, dir);
		CU_ASSERT_PTR_NOT_NULL_FATAL(db[v - 1]);
	}
	CU_ASSERT_EQUAL(access(jpath, F_OK), 0);
	/* a new set (a restart) reads it back: the history leads to version 2 */
	snprintf(cmd, sizeof(cmd), "touch %s/gone.test.journal %s.0badf00d", dir, jpath);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	db[2] = build_in(&s, 1, NULL, dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db[2]);
	journal_info_t info;
	CU_ASSERT_PTR_NOT_NULL_FATAL(zonedb_journal(db[2], apex));
	journal_get_info(zonedb_journal(db[2], apex), &info);
	CU_ASSERT_EQUAL(info.depth, 1);
	CU_ASSERT_EQUAL(info.newest, 2);
	CU_ASSERT(info.file_octets > 0);
	/* and swept a stray file and a temporary one, the zone's own kept */
	snprintf(cmd, sizeof(cmd), "test $(ls %s) = j.test.journal", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
	/* a set without the zone: its file goes */
	db[3] = build_in(NULL, 0, db[2], dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db[3]);
	zonedb_remove_journals(db[2], db[3]);
	CU_ASSERT_NOT_EQUAL(access(jpath, F_OK), 0);
	for (int i = 0; i < 4; i++)
		zonedb_free(db[i]);
	/* a folder whose paths do not fit: a secondary's journal is kept in memory only */
	char deep[4200];
	memset(deep, 'd', sizeof(deep) - 1);
	deep[0] = '/';
	deep[sizeof(deep) - 1] = '\0';
	zone_spec_t sec = { .name = "j.test", .limits = ZONE_LIMITS_DEFAULT, .secondary = true };
	zonedb_t *one = build_in(&sec, 1, NULL, deep);
	CU_ASSERT_PTR_NOT_NULL(one);
	CU_ASSERT_PTR_NOT_NULL(one ? zonedb_journal(one, apex) : NULL);
	zonedb_free(one);
	rmdir(dir);
}

static void test_journal_threads(void)
{
	changeset_t *probe = make_cs(1, 2, 1000);
	shared = journal_new(4 * probe->octets);
	changeset_unref(probe);
	/* with a file too: written (and synced) outside the lock the readers take */
	char path[256];
	snprintf(path, sizeof(path), "%s/threads.journal", tmpdir);
	journal_budget_t budget = { .max = 1 << 20 };
	CU_ASSERT_EQUAL_FATAL(journal_set_file(shared, path, &budget), 0);
	size_t found[2] = { 0, 0 };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, reader, &found[i]), 0);
	for (uint32_t s = 1; s <= 300; s++)
		journal_add(shared, make_cs(s, s + 1, 1000));
	__atomic_store_n(&readers_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	journal_info_t info;
	journal_get_info(shared, &info);
	CU_ASSERT_EQUAL(info.depth, 4);
	CU_ASSERT_EQUAL(info.newest, 301);
	CU_ASSERT_EQUAL(budget.used, octets_of(path));
	journal_drop_file(shared);
	CU_ASSERT_EQUAL(budget.used, 0);
	journal_unref(shared);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_diff),
		UNIT_TEST(test_diff_big),
		UNIT_TEST(test_condense),
		UNIT_TEST(test_changeset_build_rules),
		UNIT_TEST(test_ops_size),
		UNIT_TEST(test_changeset_octets),
		UNIT_TEST(test_journal_bounds),
		UNIT_TEST(test_journal_file),
		UNIT_TEST(test_journal_file_keeps_places),
		UNIT_TEST(test_journal_restore_ahead),
		UNIT_TEST(test_journal_total),
		UNIT_TEST(test_journal_add_all),
		UNIT_TEST(test_journal_in_zonedb),
		UNIT_TEST(test_journal_dir_in_zonedb),
		UNIT_TEST(test_journal_threads),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "xfr_journal", tests);
	return xt_remove_dir(tmpdir, rc);
}
