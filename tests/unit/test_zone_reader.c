/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The two zone file readers side by side: every zone file of the test
 * corpora loads the same with Knot's zone scanner (the default) as with
 * ldns (the reference): the same zone, the same messages at the same lines.
 * And every zone that loads, written back (zone_diff_write_back), reads
 * back as the same zone.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/zone_diff.h"
#include "tests/unit/unit.h"
#include "zone/internal.h"

/*
 * The zone a corpus file is for: the first $ORIGIN it sets, else the
 * folder's. Files loaded for another origin only add "outside the zone"
 * warnings, the same for both readers.
 */
static void file_origin(const char *path, const char *fallback, uint8_t wire[NAME_MAXLEN])
{
	char line[1024], name[NAME_TEXT_MAX] = "";
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "$ORIGIN %253s", name) == 1 && name[strlen(name) - 1] == '.')
			break;
		else
			name[0] = '\0';
	if (f)
		fclose(f);
	if (!name[0] || name_from_text(name, NULL, wire) < 0)
		CU_ASSERT_FATAL(name_from_text(fallback, NULL, wire) >= 0);
}

/*
 * Where the readers part, on purpose: files of the corpora that the
 * scanner refuses and ldns loads, or where after a first syntax error the
 * two resume at different places. Each is refused by the scanner with an
 * error at `line`; the test fails when a file here comes to load the same
 * (then it leaves the list).
 */
static const struct known_difference {
	const char *file;
	unsigned line;
	const char *why;
} known[] = {
	/* Knot refuses both; ldns takes the escaped line end into the TXT and the octets as
	   they are (NSD does too): names and strings are to be written in printable ASCII,
	   other octets escaped (RFC 1035 5.1) */
	{ "escaped_line_end", 11, "a backslash before a line end; octets over 0x7f in a name" },
	/* ldns reads a quote left open over 70 lines as one TXT string; RFC 1035 5.1 has no
	   line end inside a quoted string, and Knot and the scanner refuse it */
	{ "quote_over_lines", 11, "a quoted string over many lines" },
	/* "360)0": ldns closes the parentheses inside a number and reads on */
	{ "stray_paren", 3, "a ')' inside a number" },
	/* after "( unbalanced" ldns reads the rest of the file as one record, the scanner
	   resumes at the next directive and reports $BOGUS too */
	{ "syntax", 7, "after an unclosed '(' the readers resume at different places" },
	/* ldns takes "$TTL bad" without a word (the loader cannot tell it from a good $TTL) */
	{ "ttl_bad", 5, "a $TTL that is not a number" },
	/* found by fuzz_zone_diff: ldns reads the name after $ORIGIN and drops the rest of
	   the line, an unclosed '(' too; the scanner reads on to the end of the file */
	{ "origin_paren_unclosed", 1, "more after the name of an $ORIGIN" },
};

static const struct known_difference *known_for(const char *file)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(known[i].file, file) == 0)
			return &known[i];
	return NULL;
}

/* Messages of one load, searched for a FILE:LINE. */
typedef struct lines_seen {
	char at[32];
	bool seen;
} lines_seen_t;

static void find_line(void *arg, bool is_error, const char *msg)
{
	lines_seen_t *l = arg;
	l->seen |= is_error && strstr(msg, l->at);
}

/* The scanner still refuses a known difference, with an error at its line. */
static void still_different(const char *path, const uint8_t *origin,
			    const struct known_difference *k)
{
	static char why[1 << 16];
	lines_seen_t l = { .seen = false };
	snprintf(l.at, sizeof(l.at), ":%u: ", k->line);
	zone_t *z = NULL;
	zone_load_set_reader(ZONE_READER_ZSCANNER);
	CU_ASSERT(zone_load(path, origin, NULL, find_line, &l, &z) < 0);
	zone_free(z);
	if (!l.seen)
		fprintf(stderr, "%s: no error at line %u (%s)\n", path, k->line, k->why);
	CU_ASSERT(l.seen);
	CU_ASSERT(zone_diff_file(path, origin, why, sizeof(why)) != ZONE_DIFF_SAME);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/*
 * Every file of `folder` (under the source tree; only *.zone when
 * zone_files_only) loads the same with both readers.
 */
static void same_in_folder(const char *folder, const char *origin, bool zone_files_only)
{
	char dir[4096], path[4096 + 256];
	unit_src_path(dir, sizeof(dir), folder);
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name);
	CU_ASSERT_FATAL(n > 0);
	static char why[1 << 16];
	int files = 0;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		const char *dot = strrchr(names[i]->d_name, '.');
		if (names[i]->d_type == DT_REG &&
		    (!zone_files_only || (dot && !strcmp(dot, ".zone")))) {
			uint8_t wire[NAME_MAXLEN];
			file_origin(path, origin, wire);
			const struct known_difference *k = known_for(names[i]->d_name);
			if (k) {
				still_different(path, wire, k);
				files++;
				free(names[i]);
				continue;
			}
			bool same = zone_diff_file(path, wire, why, sizeof(why)) == ZONE_DIFF_SAME;
			if (!same)
				fprintf(stderr, "%s\n", why);
			CU_ASSERT(same);
			files++;
		}
		free(names[i]);
	}
	free(names);
	fprintf(stderr, "%s: %d files\n", folder, files);
	CU_ASSERT(files > 0);
}

/* The corpora, each with the zone its files are for unless they set one. */
static void test_corpora(void)
{
	static const struct {
		const char *folder, *origin;
		bool zone_files_only;
	} corpora[] = {
		{ "tests/unit/zones", "example.com.", true },
		{ "tests/integration/zones", "tcp.test.", true },
		{ "tests/integration/zones/rdata-reject", "bad.test.", true },
		{ "tests/diff/zones", "diff.test.", true },
		{ "tests/diff/dnssec", "secure.test.", true },
		{ "tests/fuzz/corpus/zone", "fuzz.test.", false },
		{ "tests/fuzz/corpus/zone_diff", "fuzz.test.", false },
	};
	for (size_t i = 0; i < sizeof(corpora) / sizeof(corpora[0]); i++)
		same_in_folder(corpora[i].folder, corpora[i].origin, corpora[i].zone_files_only);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_corpora),
		UNIT_END,
	};
	return unit_run(argc, argv, "zone_reader", tests);
}
