/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/jfile.c, the journal's file: records appended and
 * read back, a torn last record cut at every offset, damaged octets,
 * serials that do not follow, compaction keeping the newest, file names.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "tests/unit/unit.h"
#include "zone/jfile.h"

static char tmpdir[] = "/tmp/shoal-jfile-XXXXXX";
static char path[512];

/* A changeset from -> to adding n TXT records (each different). */
static changeset_t *make_cs(uint32_t from, uint32_t to, unsigned n)
{
	changeset_t *cs = changeset_new();
	uint8_t apex[NAME_MAXLEN], www[NAME_MAXLEN], soa[22] = { 0 }, txt[64];
	name_from_text("j.test.", NULL, apex);
	name_from_text("www.j.test.", NULL, www);
	soa[2] = (uint8_t)(from >> 24), soa[3] = (uint8_t)(from >> 16);
	soa[4] = (uint8_t)(from >> 8), soa[5] = (uint8_t)from;
	changeset_add(cs, false, apex, DNS_TYPE_SOA, 60, soa, 22);
	changeset_add(cs, false, www, DNS_TYPE_TXT, 60, (const uint8_t *)"\003old", 4);
	soa[2] = (uint8_t)(to >> 24), soa[3] = (uint8_t)(to >> 16);
	soa[4] = (uint8_t)(to >> 8), soa[5] = (uint8_t)to;
	changeset_add(cs, true, apex, DNS_TYPE_SOA, 60, soa, 22);
	for (unsigned i = 0; i < n; i++) {
		int len = snprintf((char *)txt + 1, sizeof(txt) - 1, "r%u-%u", to, i);
		txt[0] = (uint8_t)len;
		changeset_add(cs, true, www, DNS_TYPE_TXT, 300, txt, (uint16_t)(len + 1));
	}
	changeset_seal(cs);
	return cs;
}

static size_t file_size(void)
{
	struct stat st;
	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* Append serials first..last-1 -> +1 with max octets; each must succeed. */
static void append_range(uint32_t first, uint32_t last, size_t max)
{
	for (uint32_t s = first; s < last; s++) {
		changeset_t *cs = make_cs(s, s + 1, 3);
		size_t size = 0;
		const changeset_t *one[1] = { cs };
		CU_ASSERT_EQUAL(jfile_append(path, one, 1, max, &size), 0);
		CU_ASSERT_EQUAL(size, file_size());
		changeset_unref(cs);
	}
}

/* The file's octets into buf (cap), returning the length. */
static size_t file_copy(uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap, f) : 0;
	if (f)
		fclose(f);
	return n;
}

static void file_put(const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* A new file of three records 1..4 into buf: its length, and the octets of the first two in *two.
 */
static size_t three_records(uint8_t *buf, size_t cap, size_t *two)
{
	jfile_remove(path, true);
	append_range(1, 3, 1 << 20);
	*two = file_size();
	append_range(3, 4, 1 << 20);
	return file_copy(buf, cap);
}

static void test_append_read(void)
{
	jfile_remove(path, true);
	append_range(10, 13, 1 << 20);
	xfr_changes_t c;
	size_t cut;
	CU_ASSERT_EQUAL_FATAL(jfile_read(path, &c, &cut), 0);
	CU_ASSERT_EQUAL(cut, 0);
	CU_ASSERT_EQUAL_FATAL(c.count, 3);
	CU_ASSERT_EQUAL(c.sets[0]->from, 10);
	CU_ASSERT_EQUAL(c.sets[2]->to, 13);
	/* what was read is what was written, record for record */
	changeset_t *want = make_cs(11, 12, 3);
	CU_ASSERT_EQUAL(c.sets[1]->del.rr_count, want->del.rr_count);
	CU_ASSERT_EQUAL(c.sets[1]->add.rr_count, want->add.rr_count);
	CU_ASSERT_EQUAL(jfile_record_size(c.sets[1]), jfile_record_size(want));
	xfr_run_t ra, rb;
	size_t at_a = 0, at_b = 0;
	for (int k = 0; k < 2; k++) /* the SOA, then the TXT */
		CU_ASSERT_FATAL(xfr_part_next(&c.sets[1]->add, &at_a, &ra) &&
				xfr_part_next(&want->add, &at_b, &rb));
	const rrset_wire_t *a = &ra.set, *b = &rb.set;
	CU_ASSERT_EQUAL_FATAL(a->data_len, b->data_len);
	CU_ASSERT_EQUAL(memcmp(a->data, b->data, a->data_len), 0);
	CU_ASSERT_EQUAL(a->type, DNS_TYPE_TXT);
	changeset_unref(want);
	xfr_changes_clear(&c);
	/* no file: no history */
	jfile_remove(path, true);
	CU_ASSERT_EQUAL(jfile_read(path, &c, &cut), -ENOENT);
	CU_ASSERT_EQUAL(jfile_remove(path, true), 0);
}

/* A crash tears the last record at any octet: the ones before it stay, the tail is cut. */
static void test_torn_every_offset(void)
{
	static uint8_t whole[1 << 16];
	size_t two, len = three_records(whole, sizeof(whole), &two);
	CU_ASSERT_FATAL(len > two);
	for (size_t at = two; at < len; at++) {
		file_put(whole, at);
		xfr_changes_t c;
		size_t cut;
		CU_ASSERT_EQUAL_FATAL(jfile_read(path, &c, &cut), 0);
		CU_ASSERT_EQUAL(c.count, 2);
		CU_ASSERT_EQUAL(cut, at - two);
		CU_ASSERT_EQUAL(file_size(), two);
		xfr_changes_clear(&c);
		/* the next record follows the last good one */
		append_range(3, 4, 1 << 20);
		CU_ASSERT_EQUAL(file_size(), len);
	}
	/* any torn prefix of the first record leaves nothing, and no crash */
	for (size_t at = 0; at < 40; at++) {
		xfr_changes_t c;
		size_t good;
		CU_ASSERT_EQUAL(jfile_parse(whole, at, &c, &good), 0);
		CU_ASSERT_EQUAL(c.count, 0);
		CU_ASSERT_EQUAL(good, 0);
	}
}

/* A damaged octet anywhere in a record ends the history before that record. */
static void test_damaged(void)
{
	static uint8_t whole[1 << 16];
	size_t two, len = three_records(whole, sizeof(whole), &two);
	for (size_t at = 0; at < len; at++) {
		whole[at] ^= 0x41;
		xfr_changes_t c;
		size_t good;
		CU_ASSERT_EQUAL_FATAL(jfile_parse(whole, len, &c, &good), 0);
		size_t first = two / 2; /* the two first records are of one size */
		size_t want = at < first ? 0 : at < two ? 1 : 2;
		CU_ASSERT_EQUAL(c.count, want);
		CU_ASSERT_EQUAL(good, want * first);
		xfr_changes_clear(&c);
		whole[at] ^= 0x41;
	}
}

/* A record whose serials do not follow the one before is not history of the same zone. */
static void test_gap(void)
{
	jfile_remove(path, true);
	append_range(1, 3, 1 << 20);
	size_t two = file_size();
	append_range(7, 8, 1 << 20);
	xfr_changes_t c;
	size_t cut;
	CU_ASSERT_EQUAL_FATAL(jfile_read(path, &c, &cut), 0);
	CU_ASSERT_EQUAL(c.count, 2);
	CU_ASSERT_EQUAL(c.sets[1]->to, 3);
	CU_ASSERT_EQUAL(file_size(), two);
	xfr_changes_clear(&c);
}

/* Past its bound the file keeps its newest records; the newest one always. */
static void test_compact(void)
{
	jfile_remove(path, true);
	changeset_t *probe =
		make_cs(101, 102, 3); /* serials of three digits: records of one size */
	size_t each = jfile_record_size(probe);
	changeset_unref(probe);
	/* room for four: past it, down to three (three quarters of the bound) */
	append_range(101, 105, 4 * each);
	CU_ASSERT_EQUAL(file_size(), 4 * each);
	append_range(105, 106, 4 * each);
	CU_ASSERT_EQUAL(file_size(), 3 * each);
	append_range(106, 111, 4 * each);
	CU_ASSERT_EQUAL(file_size(), 4 * each); /* 3, 4, 3, 4, 3, 4 */
	xfr_changes_t c;
	size_t cut;
	CU_ASSERT_EQUAL_FATAL(jfile_read(path, &c, &cut), 0);
	CU_ASSERT_EQUAL_FATAL(c.count, 4);
	CU_ASSERT_EQUAL(c.sets[0]->from, 107);
	CU_ASSERT_EQUAL(c.sets[3]->to, 111);
	xfr_changes_clear(&c);
	/* a bound smaller than one record: the newest stays */
	append_range(111, 113, each / 2);
	CU_ASSERT_EQUAL_FATAL(jfile_read(path, &c, &cut), 0);
	CU_ASSERT_EQUAL_FATAL(c.count, 1);
	CU_ASSERT_EQUAL(c.sets[0]->to, 113);
	xfr_changes_clear(&c);
	/* no temporary file is left beside it */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) -eq 1", tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_path(void)
{
	uint8_t apex[NAME_MAXLEN];
	char out[128];
	name_from_text("Example.COM.", NULL, apex);
	name_lower(apex);
	CU_ASSERT_EQUAL(jfile_path("/d", apex, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/d/example.com.journal");
	name_from_text("a\\/b\\.c.test.", NULL, apex);
	CU_ASSERT_EQUAL(jfile_path("/d", apex, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/d/a%2Fb%2Ec.test.journal");
	name_from_text(".", NULL, apex);
	CU_ASSERT_EQUAL(jfile_path("/d", apex, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/d/.journal");
	CU_ASSERT_EQUAL(jfile_path("/d", apex, out, 8), SHOAL_ESPACE);
}

/* File names back to apexes: every name jfile_path makes, and nothing else. */
static void test_apex(void)
{
	static const char *const names[] = { ".", "example.com.", "a\\/b\\.c.test.",
					     "\\000\\255%.x.", "a-b_c.d." };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint8_t apex[NAME_MAXLEN], back[NAME_MAXLEN];
		char out[1100];
		CU_ASSERT_FATAL(name_from_text(names[i], NULL, apex) > 0);
		CU_ASSERT_EQUAL_FATAL(jfile_path("/d", apex, out, sizeof(out)), 0);
		CU_ASSERT_EQUAL(jfile_apex(out + 3, back), (int)name_length(apex));
		CU_ASSERT_TRUE(name_equal(apex, back));
	}
	/* the longest name, 255 octets */
	uint8_t apex[NAME_MAXLEN], back[NAME_MAXLEN];
	char out[1100];
	for (int i = 0; i < 3; i++) {
		apex[i * 64] = 63;
		memset(apex + i * 64 + 1, 'a', 63);
	}
	apex[192] = 61; /* 3 x 64 + 62 + the root's 1 = 255 */
	memset(apex + 193, 'b', 61);
	apex[192 + 1 + 61] = 0;
	CU_ASSERT_EQUAL(name_length(apex), NAME_MAXLEN);
	CU_ASSERT_EQUAL_FATAL(jfile_path("", apex, out, sizeof(out)), 0);
	CU_ASSERT_EQUAL(jfile_apex(out + 1, back), NAME_MAXLEN);
	static const char *const bad[] = { "x.journal.1a2b3c4d", "x.journa",   "a..b.journal",
					   "a..journal",         "%4.journal", "%GG.journal",
					   ".a.journal",         "",           "a.journal.tmp" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(jfile_apex(bad[i], back), SHOAL_ENAME);
	/* a label of 64 octets, a name of 256 */
	memset(out, 'a', 64);
	strcpy(out + 64, ".journal");
	CU_ASSERT_EQUAL(jfile_apex(out, back), SHOAL_ENAME);
	for (int i = 0; i < 4; i++) {
		memset(out + i * 64, 'a', 63);
		out[i * 64 + 63] = '.';
	}
	strcpy(out + 255, "journal");
	CU_ASSERT_EQUAL(jfile_apex(out, back), SHOAL_ENAME); /* 4 x 64 + 1 octets */
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	snprintf(path, sizeof(path), "%s/j.test.journal", tmpdir);
	static const unit_test_t tests[] = {
		UNIT_TEST(test_append_read), UNIT_TEST(test_torn_every_offset),
		UNIT_TEST(test_damaged),     UNIT_TEST(test_gap),
		UNIT_TEST(test_compact),     UNIT_TEST(test_path),
		UNIT_TEST(test_apex),        UNIT_END,
	};
	int rc = unit_run(argc, argv, "jfile", tests);
	jfile_remove(path, true);
	rmdir(tmpdir);
	return rc;
}
