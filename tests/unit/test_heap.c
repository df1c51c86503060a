/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/heap.c: the smallest key first, through adds, moves and removals. */
#include "config.h"

#include <stdlib.h>

#include "proto/error.h"
#include "server/common/heap.h"
#include "unit.h"

#define NODES 2000

/* The smallest key of the nodes in a heap, by looking at every one: what heap_top must give. */
static uint64_t smallest(const heap_node_t *n, size_t count, size_t *in)
{
	uint64_t min = UINT64_MAX;
	*in = 0;
	for (size_t i = 0; i < count; i++) {
		if (!heap_has(&n[i]))
			continue;
		(*in)++;
		if (n[i].key < min)
			min = n[i].key;
	}
	return min;
}

/* Random adds, moves up and down, removals and pops: after each, the top is the smallest. */
static void test_random_against_a_scan(void)
{
	static heap_node_t n[NODES];
	heap_t h;
	heap_init(&h);
	srand(30);
	unsigned wrong = 0;
	for (int step = 0; step < 50000; step++) {
		heap_node_t *x = &n[rand() % NODES];
		int what = rand() % 4;
		if (what < 2)
			wrong += heap_set(&h, x, (uint64_t)(rand() % 1000)) != 0;
		else if (what == 2)
			heap_remove(&h, x);
		else if (heap_top(&h))
			heap_remove(&h, heap_top(&h));
		size_t in;
		uint64_t min = smallest(n, NODES, &in);
		wrong += in != h.count;
		wrong += in && heap_top(&h)->key != min;
		wrong += !in && heap_top(&h) != NULL;
	}
	CU_ASSERT_EQUAL(wrong, 0);
	heap_clear(&h);
	size_t in;
	smallest(n, NODES, &in);
	CU_ASSERT_EQUAL(in, 0); /* cleared: every node told it is in no heap */
}

/* Popping everything gives the keys in order; equal keys all come. */
static void test_pops_in_order(void)
{
	heap_node_t n[100];
	heap_t h;
	heap_init(&h);
	CU_ASSERT_EQUAL(heap_reserve(&h, 100), 0);
	for (int i = 0; i < 100; i++) {
		n[i].at = 0;
		CU_ASSERT_EQUAL(heap_set(&h, &n[i], (uint64_t)((i * 37) % 50)), 0);
	}
	uint64_t last = 0;
	int popped = 0;
	while (heap_top(&h)) {
		heap_node_t *t = heap_top(&h);
		CU_ASSERT(t->key >= last);
		last = t->key;
		heap_remove(&h, t);
		CU_ASSERT_FALSE(heap_has(t));
		popped++;
	}
	CU_ASSERT_EQUAL(popped, 100);
	heap_clear(&h);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_random_against_a_scan),
		UNIT_TEST(test_pops_in_order),
		UNIT_END,
	};
	return unit_run(argc, argv, "heap", tests);
}
