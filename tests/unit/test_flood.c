/* Unit tests for shoal-flood's histogram and answer reader (tools/flood_hist.c,
 * tools/flood_answer.c). */
#include "config.h"

#include <string.h>

#include "proto/wire.h"
#include "tests/unit/unit.h"
#include "tools/flood.h"

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

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_hist_buckets_are_monotonic_and_tight),
		UNIT_TEST(test_hist_quantiles),
		UNIT_TEST(test_answer_header_fields),
		UNIT_TEST(test_answer_nsid_thread),
		UNIT_TEST(test_answer_truncated_records_are_safe),
		UNIT_END,
	};
	return unit_run(argc, argv, "flood", tests);
}
