/* Unit tests for server/stats.c: counting, summing, the JSON of shoalctl stats. */
#include "config.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/stats.h"
#include "unit.h"
#include "zone/answer.h"

static void test_layout(void)
{
	/* each worker's counters start on their own cache line */
	CU_ASSERT_EQUAL(alignof(worker_stats_t), 64);
	CU_ASSERT_EQUAL(sizeof(worker_stats_t) % 64, 0);
}

static void test_count(void)
{
	worker_stats_t s;
	memset(&s, 0, sizeof(s));
	answer_info_t ok = { .rcode = 3, .truncated = true };
	answer_info_t bad = { .rcode = 1, .malformed = true };
	answer_info_t drop = { .dropped = true, .malformed = true };
	stats_count_udp(&s, 40, true, &ok);
	stats_count_udp(&s, 20, true, &bad);
	stats_count_udp(&s, 7, false, &drop);
	CU_ASSERT_EQUAL(s.queries, 3);
	CU_ASSERT_EQUAL(s.bytes_in, 67);
	CU_ASSERT_EQUAL(s.answers[3], 1);
	CU_ASSERT_EQUAL(s.answers[1], 1);
	CU_ASSERT_EQUAL(s.truncated, 1);
	CU_ASSERT_EQUAL(s.malformed, 2);
	CU_ASSERT_EQUAL(s.dropped, 1);
}

static void test_json(void)
{
	worker_stats_t *w = aligned_alloc(64, 2 * sizeof(*w));
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	memset(w, 0, 2 * sizeof(*w));
	w[0].queries = 5;
	w[0].answers[0] = 5;
	w[1].queries = 7;
	w[1].answers[0] = 6;
	w[1].answers[5] = 1;
	w[1].tcp.queries = 2;
	char buf[4096];
	int n = stats_json(w, 2, buf, sizeof(buf));
	CU_ASSERT(n > 0);
	CU_ASSERT_EQUAL((size_t)n, strlen(buf));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "{\"thread\": 0, \"queries\": 5, \"answers\": {\"NOERROR\": 5}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf,
		"{\"thread\": 1, \"queries\": 7, \"answers\": {\"NOERROR\": 6, \"REFUSED\": 1}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf,
		"\"total\": {\"queries\": 12, \"answers\": {\"NOERROR\": 11, \"REFUSED\": 1}"));
	CU_ASSERT_EQUAL(stats_json(w, 2, buf, 100), SHOAL_ESPACE);
	free(w);
}

/* Every counter of every worker at its largest. */
static worker_stats_t *stats_full(size_t n)
{
	worker_stats_t *w = aligned_alloc(64, n * sizeof(*w));
	if (w)
		memset(w, 0xff, n * sizeof(*w));
	return w;
}

/*
 * The reply buffer of shoalctl stats is sized by stats_json_cap: it holds
 * the largest JSON of any thread count up to CONF_THREADS_MAX (256), which
 * a fixed 64 KiB did not.
 */
static void test_json_cap_fits_any_thread_count(void)
{
	enum { THREADS_MAX = 256 };
	worker_stats_t *w = stats_full(THREADS_MAX);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	size_t cap = stats_json_cap(THREADS_MAX);
	char *buf = malloc(cap);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	int one = stats_json(w, 1, buf, cap);
	int two = stats_json(w, 2, buf, cap);
	CU_ASSERT_TRUE(one > 0 && two > one);
	CU_ASSERT_TRUE(two - one <= STATS_JSON_WORKER_MAX);              /* one worker's entry */
	CU_ASSERT_TRUE(one - (two - one) <= STATS_JSON_WORKER_MAX + 64); /* totals and frame */
	for (size_t n = 1; n <= THREADS_MAX; n *= 2) {
		int len = stats_json(w, n, buf, stats_json_cap(n));
		CU_ASSERT_TRUE(len > 0 && (size_t)len < stats_json_cap(n));
	}
	memset(w, 0, THREADS_MAX * sizeof(*w));
	CU_ASSERT_EQUAL(stats_json(w, THREADS_MAX, buf, 64 * 1024), SHOAL_ESPACE);
	CU_ASSERT_TRUE(stats_json(w, THREADS_MAX, buf, cap) > 64 * 1024);
	free(buf);
	free(w);
}

/*
 * The tables are the counters: every field of the structs is a line of
 * STATS_UDP or STATS_TCP, and each line is in the JSON with its name.
 */
static void test_table_is_every_counter(void)
{
#define UDP_COUNT(name, kind, help) +sizeof(((const worker_stats_t *)0)->name) / sizeof(uint64_t)
#define TCP_COUNT(name, kind, help) +sizeof(((const tcp_stats_t *)0)->name) / sizeof(uint64_t)
	size_t udp = 0 STATS_UDP(UDP_COUNT), tcp = 0 STATS_TCP(TCP_COUNT);
	CU_ASSERT_EQUAL(sizeof(tcp_stats_t), tcp * sizeof(uint64_t));
	size_t octets = (udp + tcp) * sizeof(uint64_t);
	CU_ASSERT_EQUAL(sizeof(worker_stats_t), (octets + 63) / 64 * 64);
	worker_stats_t *w = stats_full(1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	char buf[STATS_JSON_WORKER_MAX * 2 + 64];
	CU_ASSERT_FATAL(stats_json(w, 1, buf, sizeof(buf)) > 0);
	char *tcp_part = strstr(buf, "\"tcp\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(tcp_part);
#define NAMED(name, kind, help) CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"" #name "\": "));
	STATS_UDP(NAMED)
#undef NAMED
#define NAMED(name, kind, help) CU_ASSERT_PTR_NOT_NULL(strstr(tcp_part, "\"" #name "\": "));
	STATS_TCP(NAMED)
#undef NAMED
	free(w);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_layout),
		UNIT_TEST(test_count),
		UNIT_TEST(test_json),
		UNIT_TEST(test_json_cap_fits_any_thread_count),
		UNIT_TEST(test_table_is_every_counter),
		UNIT_END,
	};
	return unit_run(argc, argv, "stats", tests);
}
