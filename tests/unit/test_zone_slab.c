/* SPDX-License-Identifier: GPL-3.0-or-later */
/* zone/slab.c: line-aligned objects, reuse by size class, 2 MiB chunks on huge pages. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>

#include "tests/unit/unit.h"
#include "zone/slab.h"

#define HUGE_PAGE (2u << 20)

/* Every size comes back on a cache line, writable over its whole length, and goes back. */
static void test_sizes(void)
{
	static const size_t sizes[] = {
		1, 8, 63, 64, 65, 128, 192, 1056, ZSLAB_MAX, ZSLAB_MAX + 1, 3 * ZSLAB_MAX
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t *p = zslab_alloc(sizes[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_EQUAL((uintptr_t)p % 64, 0);
		memset(p, 0xa5, sizes[i]);
		zslab_free(p, sizes[i]);
	}
	zslab_free(NULL, 64);
}

/* A freed object is the next one its class gives (any size rounding to it), not another class's. */
static void test_reuse(void)
{
	void *a = zslab_alloc(100);
	void *b = zslab_alloc(100);
	CU_ASSERT_PTR_NOT_EQUAL(a, b);
	zslab_free(a, 100);
	void *c = zslab_alloc(200);
	if (ZSLAB_PACKED) /* malloc may give a freed object to any size */
		CU_ASSERT_PTR_NOT_EQUAL(c, a);
	void *d = zslab_alloc(128);
	if (ZSLAB_PACKED)
		CU_ASSERT_PTR_EQUAL(d, a);
	a = d;
	zslab_free(a, 128);
	zslab_free(b, 100);
	zslab_free(c, 200);
}

/* Whether the mapping holding p may have transparent huge pages (smaps' THPeligible). */
static int thp_eligible(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, eligible = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && sscanf(line, "THPeligible: %d", &eligible) == 1)
			break;
	}
	fclose(f);
	return eligible;
}

/* Whether transparent huge pages may back advised mappings ("always" or "madvise"). */
static bool thp_enabled(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char buf[128] = "";
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

/*
 * Many objects of one class: distinct, never overlapping, and past the
 * small chunks (64 KiB doubling) in 2 MiB ones on their own boundary,
 * advised as huge pages (smaps says THPeligible where the kernel has
 * them on; malloc's memory in "madvise" mode says 0).
 */
static void test_many(void)
{
	enum { N = 40000, SIZE = 64 };
	uint8_t **p = calloc(N, sizeof(*p));
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	size_t aligned = 0;
	for (size_t i = 0; i < N; i++) {
		p[i] = zslab_alloc(SIZE);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
		memset(p[i], (int)(i & 0xff), SIZE);
		aligned += (uintptr_t)p[i] % HUGE_PAGE == 0;
	}
	size_t bad = 0;
	for (size_t i = 0; i < N; i++)
		for (size_t k = 0; k < SIZE; k++)
			bad += p[i][k] != (uint8_t)(i & 0xff);
	CU_ASSERT_EQUAL(bad, 0);
	/* 64 + 128 + ... + 1024 KiB hold 31,744 objects: the rest start a 2 MiB chunk */
	CU_ASSERT(!ZSLAB_PACKED || aligned >= 1);
	if (ZSLAB_PACKED && thp_enabled())
		CU_ASSERT_EQUAL(thp_eligible(p[N - 1]), 1);
	for (size_t i = 0; i < N; i++)
		zslab_free(p[i], SIZE);
	free(p);
}

/* Threads allocating and freeing at once get distinct objects (ThreadSanitizer watches). */
static void *churn(void *arg)
{
	uint8_t tag = (uint8_t)(uintptr_t)arg;
	enum { K = 2000 };
	uint8_t *held[K];
	size_t bad = 0;
	for (int round = 0; round < 5; round++) {
		for (size_t i = 0; i < K; i++) {
			held[i] = zslab_alloc(64 + (i % 3) * 64);
			if (held[i])
				memset(held[i], tag, 64);
		}
		for (size_t i = 0; i < K; i++) {
			if (!held[i])
				continue;
			for (size_t k = 0; k < 64; k++)
				bad += held[i][k] != tag;
			zslab_free(held[i], 64 + (i % 3) * 64);
		}
	}
	return (void *)(uintptr_t)bad;
}

static void test_threads(void)
{
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
	for (int i = 0; i < 4; i++) {
		void *bad;
		pthread_join(t[i], &bad);
		CU_ASSERT_PTR_NULL(bad);
	}
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_sizes),
		UNIT_TEST(test_reuse),
		UNIT_TEST(test_many),
		UNIT_TEST(test_threads),
		UNIT_END,
	};
	return unit_run(argc, argv, "zone_slab", tests);
}
