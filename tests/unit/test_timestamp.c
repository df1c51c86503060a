/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/timestamp.c: RFC 3339 UTC text, to the millisecond or second. */
#include "config.h"

#include <string.h>
#include <time.h>

#include "server/common/timestamp.h"
#include "unit.h"

/* t (with ms) as timestamp_text writes it is want, its length returned. */
static void expect(time_t t, int ms, const char *want)
{
	char buf[TIMESTAMP_TEXT_MAX];
	size_t n = timestamp_text(t, ms, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, want);
	CU_ASSERT_EQUAL(n, strlen(want));
	if (strcmp(buf, want))
		fprintf(stderr, "\n  %lld %d: got %s\n", (long long)t, ms, buf);
}

static void test_text(void)
{
	/* as log lines are stamped */
	expect(1796475481, 822, "2026-12-05T12:58:01.822Z");
	expect(1796475481, 7, "2026-12-05T12:58:01.007Z");
	expect(0, 0, "1970-01-01T00:00:00.000Z");
	expect(1709251199, 999, "2024-02-29T23:59:59.999Z");
	/* a time kept to the second: no fraction claimed */
	expect(1796475481, -1, "2026-12-05T12:58:01Z");
	expect(1709251199, -1, "2024-02-29T23:59:59Z");
	/* past 9999 the year takes more digits, and the room allows for them */
	expect(253402300800, 0, "10000-01-01T00:00:00.000Z");
}

/* Too small a buffer gets what fits, always terminated. */
static void test_small(void)
{
	char buf[8];
	memset(buf, 'x', sizeof(buf));
	timestamp_text(1796475481, 822, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "2026-12");
	CU_ASSERT_EQUAL(timestamp_text(1796475481, 822, buf, 0), 0);
}

/* Now, with milliseconds, is between two readings of the clock. */
static void test_now(void)
{
	char before[TIMESTAMP_TEXT_MAX], now[TIMESTAMP_TEXT_MAX], after[TIMESTAMP_TEXT_MAX];
	time_t t0 = time(NULL);
	size_t n = timestamp_now(now, sizeof(now));
	time_t t1 = time(NULL);
	timestamp_text(t0, 0, before, sizeof(before));
	timestamp_text(t1, 999, after, sizeof(after));
	CU_ASSERT_EQUAL(n, strlen("2026-12-05T12:58:01.822Z"));
	CU_ASSERT(strcmp(before, now) <= 0);
	CU_ASSERT(strcmp(now, after) <= 0);
	CU_ASSERT_EQUAL(now[n - 1], 'Z');
	CU_ASSERT_EQUAL(now[19], '.');
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_text),
		UNIT_TEST(test_small),
		UNIT_TEST(test_now),
		UNIT_END,
	};
	return unit_run(argc, argv, "timestamp", tests);
}
