/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Small per-zone objects packed on huge pages: size classes, chunks, free lists. */
#include "config.h"

#include "zone/slab.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define ZSLAB_LINE      64
#define ZSLAB_CLASSES   (ZSLAB_MAX / ZSLAB_LINE)
#define ZSLAB_CHUNK_MIN (64u << 10)
#define ZSLAB_HUGE      (2u << 20)

/*
 * One size class: the free objects (each holding the next one's address)
 * and the unused rest of its newest chunk; chunk is that chunk's size,
 * which doubles up to ZSLAB_HUGE.
 */
typedef struct zslab_class {
	void *free;
	uint8_t *next, *end;
	size_t chunk;
} zslab_class_t;

static pthread_mutex_t zslab_lock = PTHREAD_MUTEX_INITIALIZER;
static zslab_class_t zslab_classes[ZSLAB_CLASSES];

/*
 * A new chunk of len octets: below ZSLAB_HUGE wherever the kernel puts
 * it; ZSLAB_HUGE on its own boundary (twice mapped, the ends cut), advised
 * as a huge page. NULL when out of memory.
 */
static uint8_t *chunk_new(size_t len)
{
	if (len < ZSLAB_HUGE) {
		void *m =
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return m == MAP_FAILED ? NULL : m;
	}
	uint8_t *m =
		mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	uintptr_t at = ((uintptr_t)m + len - 1) & ~(uintptr_t)(len - 1);
	size_t head = at - (uintptr_t)m;
	if (head)
		munmap(m, head);
	munmap((uint8_t *)at + len, len - head);
	/* advice only: where the kernel gives none, the chunk is 4 KiB pages as before */
	(void)madvise((void *)at, len, MADV_HUGEPAGE);
	return (uint8_t *)at;
}

/* An object of class c (size octets), the lock held: a freed one first, else the chunk's next. */
static void *class_take(zslab_class_t *c, size_t size)
{
	void *p = c->free;
	if (p) {
		c->free = *(void **)p;
		return p;
	}
	if ((size_t)(c->end - c->next) < size) {
		size_t len = c->chunk ? c->chunk : ZSLAB_CHUNK_MIN;
		uint8_t *chunk = chunk_new(len);
		if (!chunk)
			return NULL;
		c->next = chunk;
		c->end = chunk + len;
		c->chunk = len < ZSLAB_HUGE ? 2 * len : len;
	}
	p = c->next;
	c->next += size;
	return p;
}

/* n rounded up to whole lines. */
static size_t class_size(size_t n)
{
	return (n + ZSLAB_LINE - 1) & ~(size_t)(ZSLAB_LINE - 1);
}

void *zslab_alloc(size_t n)
{
	assert(n > 0);
	size_t size = class_size(n);
	if (!ZSLAB_PACKED || size > ZSLAB_MAX)
		return aligned_alloc(ZSLAB_LINE, size);
	pthread_mutex_lock(&zslab_lock);
	void *p = class_take(&zslab_classes[size / ZSLAB_LINE - 1], size);
	pthread_mutex_unlock(&zslab_lock);
	return p;
}

void zslab_free(void *p, size_t n)
{
	if (!p)
		return;
	size_t size = class_size(n);
	if (!ZSLAB_PACKED || size > ZSLAB_MAX) {
		free(p);
		return;
	}
	zslab_class_t *c = &zslab_classes[size / ZSLAB_LINE - 1];
	pthread_mutex_lock(&zslab_lock);
	*(void **)p = c->free;
	c->free = p;
	pthread_mutex_unlock(&zslab_lock);
}
