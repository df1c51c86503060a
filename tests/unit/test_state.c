/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/events/state.c: the zones' timers written, read back, kept whole. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/events/state.h"
#include "tests/unit/conf_text.h"
#include "unit.h"

static char dir[] = "/tmp/shoal-test-state.XXXXXX";

static const uint8_t *apex(const char *text)
{
	static uint8_t buf[4][NAME_MAXLEN];
	static int next;
	uint8_t *b = buf[next++ % 4];
	CU_ASSERT_FATAL(name_from_text(text, NULL, b) > 0);
	return b;
}

/* dir/name written as text. */
static void write_file(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* How many entries dir has (the file, and no temporary one left beside it). */
static int entries(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void clean(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_FILE);
	unlink(path);
}

/* Timers and NOTIFY serials set, saved, read back by a new state: the same, by any case. */
static void test_saved_and_read_back(void)
{
	char err[512] = "";
	state_t *st;
	CU_ASSERT_EQUAL_FATAL(state_open(dir, &st, err, sizeof(err)), 0);
	state_zone_t a = { .timers = true,
			   .have = true,
			   .serial = 7,
			   .refresh_at = 1800000000,
			   .expire_at = 1800086400 };
	state_zone_t none = { .timers = true, .refresh_at = 1800000005 };
	state_set_timers(st, apex("a.test"), &a);
	state_set_timers(st, apex("none.test"), &none);
	state_set_notified(st, apex("p.test"), 42);
	state_set_notified(st, apex("a.test"), 7);
	/* a name with a space and a dot in a label: the text form escapes them */
	state_set_notified(st, apex("odd\\ name\\.x.test"), 1);
	CU_ASSERT_TRUE(state_dirty(st));
	CU_ASSERT_EQUAL(state_save(st, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(state_dirty(st));
	CU_ASSERT_EQUAL(entries(), 1); /* the temporary file renamed, none left */
	state_free(st);

	CU_ASSERT_EQUAL_FATAL(state_open(dir, &st, err, sizeof(err)), 0);
	state_zone_t got;
	CU_ASSERT_TRUE_FATAL(state_get(st, apex("A.Test"), &got));
	CU_ASSERT_TRUE(got.timers && got.have);
	CU_ASSERT_EQUAL(got.serial, 7);
	CU_ASSERT_EQUAL(got.refresh_at, 1800000000);
	CU_ASSERT_EQUAL(got.expire_at, 1800086400);
	CU_ASSERT_TRUE(got.notified_set);
	CU_ASSERT_EQUAL(got.notified, 7);
	CU_ASSERT_TRUE_FATAL(state_get(st, apex("none.test"), &got));
	CU_ASSERT_TRUE(got.timers);
	CU_ASSERT_FALSE(got.have);
	CU_ASSERT_EQUAL(got.refresh_at, 1800000005);
	CU_ASSERT_FALSE(got.notified_set);
	CU_ASSERT_TRUE_FATAL(state_get(st, apex("p.test"), &got));
	CU_ASSERT_FALSE(got.timers);
	CU_ASSERT_EQUAL(got.notified, 42);
	CU_ASSERT_TRUE(state_get(st, apex("odd\\ name\\.x.test"), &got));
	CU_ASSERT_FALSE(state_get(st, apex("other.test"), &got));
	CU_ASSERT_FALSE(state_dirty(st)); /* read, not changed */
	state_free(st);
	clean();
}

/* Lines that do not read are passed over; a file of another format is not read at all. */
static void test_bad_lines(void)
{
	char err[512] = "";
	state_t *st;
	write_file(STATE_FILE, "# a comment\n" STATE_FORMAT "\n"
			       "1 100 200 - good.test.\n"
			       "1 100 - - expire.missing.test.\n"
			       "x 100 200 - not.a.number.test.\n"
			       "1 100 200 -\n"
			       "- 100 - 5 no.version.test.\n");
	CU_ASSERT_EQUAL_FATAL(state_open(dir, &st, err, sizeof(err)), 0);
	state_zone_t got;
	CU_ASSERT_TRUE(state_get(st, apex("good.test"), &got));
	CU_ASSERT_FALSE(state_get(st, apex("expire.missing.test"), &got));
	CU_ASSERT_FALSE(state_get(st, apex("not.a.number.test"), &got));
	CU_ASSERT_TRUE(state_get(st, apex("no.version.test"), &got));
	CU_ASSERT_FALSE(got.have);
	CU_ASSERT_EQUAL(got.notified, 5);
	state_free(st);
	write_file(STATE_FILE, "shoal-state 2\n1 100 200 - good.test.\n");
	CU_ASSERT_EQUAL_FATAL(state_open(dir, &st, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(state_get(st, apex("good.test"), &got));
	state_free(st);
	clean();
}

/* state_retain forgets the zones a configuration no longer has. */
static void test_retain(void)
{
	char err[512] = "";
	state_t *st;
	conf_t c;
	static const char text[] = "zones:\n  - name: keep.test\n    file: /dev/null\n";
	CU_ASSERT_EQUAL_FATAL(unit_conf_text(&c, text, sizeof(text) - 1), 0);
	CU_ASSERT_EQUAL_FATAL(state_open(dir, &st, err, sizeof(err)), 0);
	for (int i = 0; i < 100; i++) {
		char name[64];
		snprintf(name, sizeof(name), "gone%d.test", i);
		state_set_notified(st, apex(name), (uint32_t)i);
	}
	state_set_notified(st, apex("keep.test"), 9);
	state_retain(st, &c);
	state_zone_t got;
	CU_ASSERT_TRUE(state_get(st, apex("keep.test"), &got));
	CU_ASSERT_EQUAL(got.notified, 9);
	CU_ASSERT_FALSE(state_get(st, apex("gone5.test"), &got));
	state_free(st);
	conf_clear(&c);
}

/*
 * state_forget drops one zone (zone-remove) and every other stays found,
 * those placed after it in the table among them.
 */
static void test_forget(void)
{
	char err[512] = "";
	state_t *st;
	CU_ASSERT_EQUAL_FATAL(state_open(dir, &st, err, sizeof(err)), 0);
	char name[64];
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "z%d.test", i);
		state_set_notified(st, apex(name), (uint32_t)i + 1);
	}
	for (int i = 1; i < 200; i += 2) {
		snprintf(name, sizeof(name), "Z%d.test.", i);
		state_forget(st, name);
	}
	state_forget(st, "never.test");
	int kept = 0, gone = 0;
	state_zone_t got;
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "z%d.test", i);
		bool found = state_get(st, apex(name), &got);
		kept += i % 2 == 0 && found && got.notified == (uint32_t)i + 1;
		gone += i % 2 == 1 && !found;
	}
	CU_ASSERT_EQUAL(kept, 100);
	CU_ASSERT_EQUAL(gone, 100);
	state_free(st);
	clean();
}

/* A save that cannot write says why and stays to be done; without a folder nothing is kept. */
static void test_save_fails_and_none(void)
{
	char err[512] = "";
	state_t *st;
	char gone[600];
	snprintf(gone, sizeof(gone), "%s/missing", dir);
	CU_ASSERT_EQUAL_FATAL(state_open(gone, &st, err, sizeof(err)), 0);
	state_set_notified(st, apex("a.test"), 1);
	CU_ASSERT(state_save(st, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "missing/" STATE_FILE));
	CU_ASSERT_TRUE(state_dirty(st));
	state_free(st);

	CU_ASSERT_EQUAL_FATAL(state_open(NULL, &st, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NULL(state_dir(st));
	state_set_notified(st, apex("a.test"), 1);
	state_zone_t got;
	CU_ASSERT_FALSE(state_get(st, apex("a.test"), &got));
	CU_ASSERT_FALSE(state_dirty(st));
	CU_ASSERT_EQUAL(state_save(st, err, sizeof(err)), 0);
	state_free(st);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(dir))
		return 1;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_saved_and_read_back),
		UNIT_TEST(test_bad_lines),
		UNIT_TEST(test_retain),
		UNIT_TEST(test_forget),
		UNIT_TEST(test_save_fails_and_none),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "state", tests);
	clean();
	rmdir(dir);
	return rc;
}
