/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A binary min-heap of timers keyed by due time: O(log n) to add, move, remove; O(1) to peek. */
#ifndef SHOAL_SERVER_COMMON_HEAP_H
#define SHOAL_SERVER_COMMON_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One timer, in caller memory (a field of what it times): its key (a due
 * time), and its place in the heap, so that moving or removing it needs
 * no search. A node is in at most one heap.
 */
typedef struct heap_node {
	uint64_t key;
	size_t at; /* its place + 1; 0: in no heap */
} heap_node_t;

/* The heap: pointers to nodes, the smallest key first. One thread at a time. */
typedef struct heap {
	heap_node_t **v;
	size_t count, cap;
} heap_t;

/* An empty heap in caller memory. */
void heap_init(heap_t *h);

/* Free the heap's array; every node in it is told it is in no heap (the nodes are the caller's). */
void heap_clear(heap_t *h);

/*
 * Room for n nodes, so that heap_set never allocates below that. Returns
 * 0 or SHOAL_ENOMEM (the heap as it was).
 */
int heap_reserve(heap_t *h, size_t n);

/*
 * Key node n with key: added when in no heap, else moved to its new place.
 * Returns 0, or SHOAL_ENOMEM when it had to be added past the room
 * reserved and the array could not grow (n is then in no heap).
 */
int heap_set(heap_t *h, heap_node_t *n, uint64_t key);

/* Take n out of h (nothing when it is in no heap). */
void heap_remove(heap_t *h, heap_node_t *n);

/* The node with the smallest key (of equal keys, any), or NULL when empty. */
static inline heap_node_t *heap_top(const heap_t *h)
{
	return h->count ? h->v[0] : NULL;
}

/* Whether n is in a heap. */
static inline bool heap_has(const heap_node_t *n)
{
	return n->at != 0;
}

#endif
