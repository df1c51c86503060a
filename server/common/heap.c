/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A binary min-heap of timers: each node knows its place, so it moves and goes in O(log n). */
#include "config.h"

#include <assert.h>
#include <stdlib.h>

#include "proto/error.h"
#include "server/common/heap.h"

void heap_init(heap_t *h)
{
	h->v = NULL;
	h->count = h->cap = 0;
}

void heap_clear(heap_t *h)
{
	for (size_t i = 0; i < h->count; i++)
		h->v[i]->at = 0;
	free(h->v);
	heap_init(h);
}

int heap_reserve(heap_t *h, size_t n)
{
	if (n <= h->cap)
		return 0;
	heap_node_t **v = realloc(h->v, n * sizeof(*v));
	if (!v)
		return SHOAL_ENOMEM;
	h->v = v;
	h->cap = n;
	return 0;
}

/* Put node n at place i, and tell it so. */
static void place(heap_t *h, size_t i, heap_node_t *n)
{
	h->v[i] = n;
	n->at = i + 1;
}

/* Move the node at i up while it is smaller than its parent. */
static void sift_up(heap_t *h, size_t i)
{
	heap_node_t *n = h->v[i];
	while (i > 0 && n->key < h->v[(i - 1) / 2]->key) {
		place(h, i, h->v[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(h, i, n);
}

/* Move the node at i down while a child is smaller. */
static void sift_down(heap_t *h, size_t i)
{
	heap_node_t *n = h->v[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->count)
			break;
		if (c + 1 < h->count && h->v[c + 1]->key < h->v[c]->key)
			c++;
		if (h->v[c]->key >= n->key)
			break;
		place(h, i, h->v[c]);
		i = c;
	}
	place(h, i, n);
}

/* The node at i, whose key changed or which took a hole: to where its key says. */
static void settle(heap_t *h, size_t i)
{
	if (i > 0 && h->v[i]->key < h->v[(i - 1) / 2]->key)
		sift_up(h, i);
	else
		sift_down(h, i);
}

int heap_set(heap_t *h, heap_node_t *n, uint64_t key)
{
	if (n->at) {
		assert(n->at <= h->count && h->v[n->at - 1] == n);
		n->key = key;
		settle(h, n->at - 1);
		return 0;
	}
	if (h->count == h->cap && heap_reserve(h, h->cap ? 2 * h->cap : 16) < 0)
		return SHOAL_ENOMEM;
	n->key = key;
	place(h, h->count++, n);
	sift_up(h, h->count - 1);
	return 0;
}

void heap_remove(heap_t *h, heap_node_t *n)
{
	if (!n->at)
		return;
	size_t i = n->at - 1;
	assert(i < h->count && h->v[i] == n);
	n->at = 0;
	heap_node_t *last = h->v[--h->count];
	if (i == h->count)
		return;
	place(h, i, last); /* the last node takes the hole */
	settle(h, i);
}
