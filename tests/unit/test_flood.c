/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for shoal-flood's histogram, answer reader and pacing (tools/flood/flood_hist.c,
 * tools/flood/flood_answer.c, tools/flood/flood_pace.c). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "proto/wire.h"
#include "tests/unit/unit.h"
#include "tools/flood/flood.h"

static void test_hist_buckets_are_monotonic_and_tight(void)
{
	unsigned prev = 0;
	for (uint64_t v = 0; v < 5000000; v += 1 + v / 50) {
		unsigned b = flood_hist_bucket(v);
		CU_ASSERT(b >= prev);
		CU_ASSERT(b < FLOOD_HIST_BUCKETS);
		prev = b;
		/* The bucket's representative value is within ~3% of the sample. */
		double mid = (double)flood_hist_value(b);
		CU_ASSERT(mid >= (double)v * 0.96 - 1 && mid <= (double)v * 1.04 + 1);
	}
	CU_ASSERT(flood_hist_bucket(UINT64_MAX) < FLOOD_HIST_BUCKETS);
	CU_ASSERT_EQUAL(flood_hist_bucket(31), 31);
	CU_ASSERT_EQUAL(flood_hist_bucket(32), 32);
	CU_ASSERT_EQUAL(flood_hist_bucket(64), 64);
}

static void test_hist_quantiles(void)
{
	static uint64_t hist[FLOOD_HIST_BUCKETS];
	memset(hist, 0, sizeof(hist));
	CU_ASSERT_EQUAL(flood_hist_quantile(hist, 0.5), 0);
	/* 99 samples at 100 us and one at 10 ms: p50 and p99 are 100 us, max-ish is 10 ms. */
	hist[flood_hist_bucket(100000)] = 99;
	hist[flood_hist_bucket(10000000)] = 1;
	uint64_t p50 = flood_hist_quantile(hist, 0.5);
	uint64_t p99 = flood_hist_quantile(hist, 0.99);
	uint64_t p999 = flood_hist_quantile(hist, 0.999);
	CU_ASSERT(p50 > 97000 && p50 < 103000);
	CU_ASSERT_EQUAL(p99, p50);
	CU_ASSERT(p999 > 9700000 && p999 < 10300000);
}

/* An answer: header, question "a.", one A record, and an OPT with the given NSID. */
static size_t make_answer(uint8_t *buf, size_t cap, uint16_t flags, const char *nsid)
{
	wire_t w;
	wire_init_write(&w, buf, cap);
	wire_write_u16(&w, 0xbeef);
	wire_write_u16(&w, flags);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, nsid ? 1 : 0);
	wire_write_bytes(&w, "\001a\000", 3);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 1);
	wire_write_bytes(&w, "\xc0\x0c", 2); /* compressed owner */
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 1);
	wire_write_u32(&w, 3600);
	wire_write_u16(&w, 4);
	wire_write_bytes(&w, "\x7f\x00\x00\x01", 4);
	if (nsid) {
		size_t n = strlen(nsid);
		wire_write_u8(&w, 0);
		wire_write_u16(&w, 41);
		wire_write_u16(&w, 1232);
		wire_write_u32(&w, 0);
		wire_write_u16(&w, (uint16_t)(4 + n));
		wire_write_u16(&w, 3);
		wire_write_u16(&w, (uint16_t)n);
		wire_write_bytes(&w, nsid, n);
	}
	CU_ASSERT_EQUAL(w.err, 0);
	return w.pos;
}

static void test_answer_header_fields(void)
{
	uint8_t buf[512];
	size_t len = make_answer(buf, sizeof(buf), 0x8000 | 0x0400 | 0x0200 | 3, NULL);
	flood_answer_t a;
	CU_ASSERT_EQUAL(flood_answer_parse(&a, buf, len, false), 0);
	CU_ASSERT_EQUAL(a.id, 0xbeef);
	CU_ASSERT_EQUAL(a.rcode, 3);
	CU_ASSERT(a.truncated);
	CU_ASSERT_EQUAL(flood_answer_parse(&a, buf, 11, false), SHOAL_EMALFORMED);
}

static void test_answer_nsid_thread(void)
{
	uint8_t buf[512];
	flood_answer_t a;
	size_t len = make_answer(buf, sizeof(buf), 0x8400, "shoal-1/3");
	CU_ASSERT_EQUAL(flood_answer_parse(&a, buf, len, true), 0);
	CU_ASSERT(a.has_nsid);
	CU_ASSERT_EQUAL(a.nsid_thread, 3);
	CU_ASSERT_EQUAL(a.nsid_len, 9);
	len = make_answer(buf, sizeof(buf), 0x8400, "ns1");
	CU_ASSERT_EQUAL(flood_answer_parse(&a, buf, len, true), 0);
	CU_ASSERT(a.has_nsid);
	CU_ASSERT_EQUAL(a.nsid_thread, -1);
	len = make_answer(buf, sizeof(buf), 0x8400, "/12");
	CU_ASSERT_EQUAL(flood_answer_parse(&a, buf, len, true), 0);
	CU_ASSERT_EQUAL(a.nsid_thread, -1); /* no identity before the slash */
}

static void test_answer_truncated_records_are_safe(void)
{
	uint8_t buf[512];
	flood_answer_t a;
	size_t len = make_answer(buf, sizeof(buf), 0x8400, "x/1");
	/* Every shorter prefix parses without reading past its end (ASan checks). */
	for (size_t cut = 12; cut < len; cut++) {
		CU_ASSERT_EQUAL(flood_answer_parse(&a, buf, cut, true), 0);
		CU_ASSERT(!a.has_nsid);
	}
	/* An OPT length that runs past the message finds no NSID. */
	buf[len - 9] = 0xff;
	CU_ASSERT_EQUAL(flood_answer_parse(&a, buf, len, true), 0);
	CU_ASSERT(!a.has_nsid);
}

/* Simulated time: nothing here reads a clock or sleeps. */
#define PACE_START   1000000000000u /* an arbitrary start, in ns */
#define PACE_RATE    40000.0        /* queries a second, one thread: gaps of 25 us */
#define PACE_QUERIES 200000

/* A paced thread as main sets one up, without sockets. */
static void pace_thread(flood_thread_t *t, flood_arrivals_t arrivals, unsigned index,
			uint64_t count)
{
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->count = count;
	t->rate = PACE_RATE;
	t->arrivals = arrivals;
	t->start_ns = PACE_START;
	flood_pace_init(t);
}

/*
 * Drive flood_budget as a sender does, sending all it allows and sleeping
 * exactly the wait it gives, and record when each query left (ns after the
 * start) in at[0..count). Checks on the way that the budget never passes
 * what is left and that the wait is the time to the next due query: one
 * nanosecond earlier nothing is due, at the wait something is.
 */
static void pace_drive(flood_thread_t *t, uint64_t *at)
{
	uint64_t now = PACE_START, sent = 0;
	unsigned bad_budget = 0, bad_wait = 0;
	while (sent < t->count) {
		uint64_t wait = UINT64_MAX;
		uint64_t budget = flood_budget(t, sent, now, &wait);
		if (budget > t->count - sent)
			bad_budget++;
		for (uint64_t k = 0; k < budget && sent < t->count; k++)
			at[sent++] = now - PACE_START;
		if (sent == t->count)
			break;
		if (wait == UINT64_MAX || (budget == 0 && wait == 0)) {
			/* the even formula may call a query due a nanosecond late */
			now++;
			continue;
		}
		if (t->arrivals == FLOOD_ARRIVALS_RANDOM && wait > 0) {
			uint64_t early = UINT64_MAX;
			if (flood_budget(t, sent, now + wait - 1, &early) != 0 || early != 1)
				bad_wait++;
			uint64_t later = UINT64_MAX;
			if (flood_budget(t, sent, now + wait, &later) == 0)
				bad_wait++;
		}
		now += wait;
	}
	CU_ASSERT_EQUAL(bad_budget, 0);
	CU_ASSERT_EQUAL(bad_wait, 0);
}

/* Mean and coefficient of variation (standard deviation over mean) of the gaps. */
static void gap_stats(const uint64_t *at, size_t n, double *mean, double *cv)
{
	double sum = 0, sq = 0;
	for (size_t i = 1; i < n; i++) {
		double g = (double)(at[i] - at[i - 1]);
		sum += g;
		sq += g * g;
	}
	*mean = sum / (double)(n - 1);
	double var = sq / (double)(n - 1) - *mean * *mean;
	*cv = sqrt(var > 0 ? var : 0) / *mean;
}

/* One thread's PACE_QUERIES sending times into at[], and their gaps' mean and CV. */
static void pace_run(flood_arrivals_t arrivals, unsigned index, uint64_t *at, double *mean,
		     double *cv)
{
	static flood_thread_t t;
	pace_thread(&t, arrivals, index, PACE_QUERIES);
	pace_drive(&t, at);
	gap_stats(at, PACE_QUERIES, mean, cv);
	CU_ASSERT_EQUAL(at[0], 0); /* the first query leaves at the start */
}

static void test_pace_even_spacing(void)
{
	static uint64_t at[PACE_QUERIES];
	double mean, cv;
	pace_run(FLOOD_ARRIVALS_EVEN, 0, at, &mean, &cv);
	CU_ASSERT(fabs(mean - 1e9 / PACE_RATE) < 1e9 / PACE_RATE * 0.001);
	CU_ASSERT(cv < 0.001);
}

static void test_pace_random_is_exponential(void)
{
	static uint64_t at[PACE_QUERIES];
	double mean, cv;
	pace_run(FLOOD_ARRIVALS_RANDOM, 3, at, &mean, &cv);
	/* a Poisson process at the asked rate: exponential gaps, whose standard
	 * deviation equals their mean */
	CU_ASSERT(fabs(mean - 1e9 / PACE_RATE) < 1e9 / PACE_RATE * 0.01);
	CU_ASSERT(cv > 0.95 && cv < 1.05);
	/* and memoryless: as many gaps below the median ln 2 / rate as above */
	size_t below = 0;
	for (size_t i = 1; i < PACE_QUERIES; i++)
		below += (double)(at[i] - at[i - 1]) < log(2) * 1e9 / PACE_RATE;
	CU_ASSERT(fabs((double)below / (PACE_QUERIES - 1) - 0.5) < 0.01);
}

static void test_pace_random_is_repeatable(void)
{
	static uint64_t first[PACE_QUERIES], again[PACE_QUERIES];
	double mean, cv;
	pace_run(FLOOD_ARRIVALS_RANDOM, 1, first, &mean, &cv);
	pace_run(FLOOD_ARRIVALS_RANDOM, 1, again, &mean, &cv);
	CU_ASSERT(memcmp(first, again, sizeof(first)) == 0);
	/* another thread draws other gaps */
	pace_run(FLOOD_ARRIVALS_RANDOM, 2, again, &mean, &cv);
	size_t same = 0;
	for (size_t i = 1; i < PACE_QUERIES; i++)
		same += again[i] - again[i - 1] == first[i] - first[i - 1];
	CU_ASSERT(same < PACE_QUERIES / 100);
}

/* After a stall the queries due by now go at once, never more than is left,
 * and a call stays short however long the stall. */
static void test_pace_random_catches_up_within_bounds(void)
{
	static flood_thread_t t;
	pace_thread(&t, FLOOD_ARRIVALS_RANDOM, 0, 1000);
	uint64_t wait = UINT64_MAX;
	CU_ASSERT_EQUAL(flood_budget(&t, 0, PACE_START, &wait), 1);
	/* 10 ms late: about 400 due, all of them at once */
	wait = UINT64_MAX;
	uint64_t budget = flood_budget(&t, 1, PACE_START + 10000000u, &wait);
	CU_ASSERT(budget > 300 && budget < 500);
	CU_ASSERT(wait > 0 && wait != UINT64_MAX);
	/* a second late: all 999 left are due, and no more */
	wait = 7;
	CU_ASSERT_EQUAL(flood_budget(&t, 1, PACE_START + 1000000000u, &wait), 999);
	CU_ASSERT_EQUAL(wait, 7); /* nothing is left to wait for */
	CU_ASSERT_EQUAL(flood_budget(&t, 1000, PACE_START + 2000000000u, &wait), 0);

	/* No count (a run by time), an hour late: one call draws a bounded
	 * number, says the next is due already, and the next call goes on. */
	pace_thread(&t, FLOOD_ARRIVALS_RANDOM, 0, UINT64_MAX);
	uint64_t late = PACE_START + 3600000000000u;
	wait = UINT64_MAX;
	budget = flood_budget(&t, 0, late, &wait);
	CU_ASSERT(budget > 0 && budget <= 65536);
	CU_ASSERT_EQUAL(wait, 0);
	wait = UINT64_MAX;
	CU_ASSERT_EQUAL(flood_budget(&t, budget, late, &wait), budget);
	/* unsent queries stay due: not sending them does not skip them */
	wait = UINT64_MAX;
	CU_ASSERT_EQUAL(flood_budget(&t, budget, late, &wait), budget);
}

static void test_pace_unpaced_and_names(void)
{
	static flood_thread_t t;
	pace_thread(&t, FLOOD_ARRIVALS_RANDOM, 0, 500);
	t.rate = 0;
	uint64_t wait = 9;
	CU_ASSERT_EQUAL(flood_budget(&t, 100, PACE_START, &wait), 400);
	CU_ASSERT_EQUAL(wait, 9);
	CU_ASSERT_EQUAL(flood_arrivals_parse("even"), FLOOD_ARRIVALS_EVEN);
	CU_ASSERT_EQUAL(flood_arrivals_parse("random"), FLOOD_ARRIVALS_RANDOM);
	CU_ASSERT_EQUAL(flood_arrivals_parse("poisson"), -1);
	CU_ASSERT_STRING_EQUAL(flood_arrivals_name(FLOOD_ARRIVALS_RANDOM), "random");
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_hist_buckets_are_monotonic_and_tight),
		UNIT_TEST(test_hist_quantiles),
		UNIT_TEST(test_answer_header_fields),
		UNIT_TEST(test_answer_nsid_thread),
		UNIT_TEST(test_answer_truncated_records_are_safe),
		UNIT_TEST(test_pace_even_spacing),
		UNIT_TEST(test_pace_random_is_exponential),
		UNIT_TEST(test_pace_random_is_repeatable),
		UNIT_TEST(test_pace_random_catches_up_within_bounds),
		UNIT_TEST(test_pace_unpaced_and_names),
		UNIT_END,
	};
	return unit_run(argc, argv, "flood", tests);
}
