/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The hash index of a version: pages under a directory, shared between versions. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "zone/internal.h"

/*
 * Slots in use a page may hold: past this a change grows the whole index.
 * Linear probing inside a page stays short below it, and the index is
 * built at 3/4 load, where the fullest of a 909,095-name zone's 2,368
 * pages held 449 to 454 slots in three loads (the hash key is drawn anew).
 */
#define ZHASH_FULL_NUM 15
#define ZHASH_FULL_DEN 16
#define ZHASH_LOAD_NUM 3 /* built with slots for 4/3 the names */
#define ZHASH_LOAD_DEN 4

_Static_assert((ZHASH_PAGE_SLOTS & (ZHASH_PAGE_SLOTS - 1)) == 0 &&
		       (ZHASH_SLOTS_MIN & (ZHASH_SLOTS_MIN - 1)) == 0 &&
		       ZHASH_SLOTS_MIN <= ZHASH_PAGE_SLOTS && ZHASH_PAGE_SLOTS - 1 <= UINT16_MAX,
	       "slots per page are powers of 2 that hash_mask and used hold");

/* The shape of an index: pages of slots each (a power of 2, ZHASH_PAGE_SLOTS but alone). */
typedef struct geometry {
	uint32_t pages, slots;
} geometry_t;

static size_t page_size(uint32_t slots)
{
	return sizeof(zhash_page_t) + slots * sizeof(uint64_t);
}

/* An empty page of slots, from arena (a build's) or, NULL, from malloc. */
static zhash_page_t *page_new(uint64_t gen, uint32_t slots, zarena_t *arena)
{
	size_t size = page_size(slots);
	zhash_page_t *p = arena ? zarena_alloc(arena, size) : malloc(size);
	if (!p)
		return NULL;
	memset(p, 0, size);
	p->refs = 1;
	p->gen = gen;
	p->arena = arena != NULL;
	return p;
}

/* A page nobody holds: back to malloc, or counted dead in lin's arena (lin NULL: not counted). */
static void page_drop(zhash_page_t *p, uint32_t slots, zlin_t *lin)
{
	if (!p->arena)
		free(p);
	else if (lin)
		__atomic_fetch_add(&lin->dead, page_size(slots), __ATOMIC_RELAXED);
}

static void page_unref(zhash_page_t *p, uint32_t slots, zlin_t *lin)
{
	/* release: this thread's reads of the page come before another's free of it */
	if (p && __atomic_fetch_sub(&p->refs, 1, __ATOMIC_ACQ_REL) == 1)
		page_drop(p, slots, lin);
}

/* The slot value of node n, whose name hashes to h. */
static uint64_t slot_of(const znode_t *n, uint64_t h)
{
	return zhash_tag(h) << ZHASH_REF_BITS | (uint64_t)(uintptr_t)n >> 3;
}

/*
 * Put n (name hash h) in the first free slot of its page of mask + 1
 * slots; false when the page is too full.
 */
static bool page_add(zhash_page_t *p, uint32_t mask, const znode_t *n, uint64_t h)
{
	if (p->used >= (mask + 1) * ZHASH_FULL_NUM / ZHASH_FULL_DEN)
		return false;
	uint32_t i = zhash_first_slot(h, mask);
	while (p->slot[i])
		i = (i + 1) & mask;
	p->slot[i] = slot_of(n, h);
	p->used++;
	return true;
}

/*
 * The index for `names` names at the build's load: one page of as few
 * slots as hold them (a small zone's), or pages of ZHASH_PAGE_SLOTS.
 */
static geometry_t geometry_for(size_t names)
{
	size_t want = names * ZHASH_LOAD_DEN / ZHASH_LOAD_NUM + 1;
	geometry_t g = { 1, ZHASH_SLOTS_MIN };
	while (g.slots < want && g.slots < ZHASH_PAGE_SLOTS)
		g.slots *= 2;
	size_t pages = (want + ZHASH_PAGE_SLOTS - 1) / ZHASH_PAGE_SLOTS;
	if (pages > 1)
		g.pages = pages > UINT32_MAX ? UINT32_MAX : (uint32_t)pages;
	return g;
}

/* The index the next size up: twice the slots of a lone page, then twice the pages. */
static geometry_t geometry_up(geometry_t g)
{
	if (g.slots < ZHASH_PAGE_SLOTS)
		g.slots *= 2;
	else
		g.pages = g.pages < UINT32_MAX / 2 ? g.pages * 2 : UINT32_MAX;
	return g;
}

/* Free a directory no version holds yet (a fill that failed); an arena's stays. */
static void dir_free(zhash_page_t **dir, geometry_t g, bool arena)
{
	for (uint32_t i = 0; dir && i < g.pages; i++)
		if (dir[i])
			page_drop(dir[i], g.slots, NULL);
	if (!arena)
		free(dir);
}

/* Put every node of z's tree of names into the pages of dir (geometry g). */
static int fill_pages(const zone_t *z, zhash_page_t **dir, geometry_t g, const bool *cancel,
		      size_t *count)
{
	zone_iter_t it;
	size_t k = 0;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it)) {
		if (zone_stop_at(cancel, ++k))
			return SHOAL_ETIMEOUT;
		uintptr_t at = (uintptr_t)n;
		if ((at & 7) || (uint64_t)at >> (ZHASH_REF_BITS + 3))
			return SHOAL_EUNSUPPORTED; /* no such address on Linux without asking */
		uint64_t h = name_hash_lower(znode_name(n), n->name_len, z->hash_key);
		if (!page_add(dir[zhash_page(h, g.pages)], g.slots - 1, n, h))
			return SHOAL_ESPACE; /* the caller asks for more slots */
	}
	*count = k;
	return 0;
}

/*
 * A new directory of geometry g holding the nodes of z's tree of names,
 * in arena (a build's) or, NULL, from malloc, in place of z's index.
 */
static int fill(zone_t *z, geometry_t g, uint64_t gen, const bool *cancel, zarena_t *arena)
{
	size_t size = g.pages * sizeof(zhash_page_t *);
	zhash_page_t **dir = arena ? zarena_alloc(arena, size) : malloc(size);
	if (!dir)
		return SHOAL_ENOMEM;
	memset(dir, 0, size);
	int err = 0;
	for (uint32_t i = 0; i < g.pages && err == 0; i++)
		if (!(dir[i] = page_new(gen, g.slots, arena)))
			err = SHOAL_ENOMEM;
	size_t count = 0;
	if (err == 0)
		err = fill_pages(z, dir, g, cancel, &count);
	if (err < 0) {
		dir_free(dir, g, arena != NULL);
		return err;
	}
	zhash_release(z, false);
	z->hash = dir;
	z->hash_pages = g.pages;
	z->hash_mask = (uint16_t)(g.slots - 1);
	z->hash_used = (uint32_t)count;
	z->arena = (uint8_t)(arena ? z->arena | ZONE_ARENA_DIR : z->arena & ~ZONE_ARENA_DIR);
	return 0;
}

/* fill, the next size up until no page is too full (a skew that rare). */
static int fill_growing(zone_t *z, geometry_t g, uint64_t gen, const bool *cancel, zarena_t *arena)
{
	int err;
	while ((err = fill(z, g, gen, cancel, arena)) == SHOAL_ESPACE && g.pages < UINT32_MAX / 2)
		g = geometry_up(g);
	return err;
}

int zhash_build(zone_t *z, uint64_t gen, const bool *cancel)
{
	return fill_growing(z, geometry_for(z->names.count), gen, cancel, z->lin->arena);
}

QUERY_PATH const znode_t *zone_lookup_hashed(const zone_t *z, const uint8_t *name, size_t name_len,
					     uint64_t hash)
{
	uint64_t tag = zhash_tag(hash);
	const uint32_t mask = z->hash_mask;
	const uint64_t *slot = z->hash[zhash_page(hash, z->hash_pages)]->slot;
	uint32_t i = zhash_first_slot(hash, mask);
	for (;;) {
		uint64_t s = slot[i];
		if (s == 0)
			return NULL;
		if (zhash_tag(s) == tag) {
			/*
			 * The node, its name right after it and the RRsets
			 * right before it: the line either side of the node's
			 * is asked for at once, as the answer reads both next
			 * (the RR data follows the name). Cold, each would
			 * otherwise be a miss of its own after the compare.
			 */
			const znode_t *n = zhash_node(s);
			__builtin_prefetch((const uint8_t *)n - 64);
			__builtin_prefetch((const uint8_t *)n + 64);
			if (n->name_len == name_len && memcmp(znode_name(n), name, name_len) == 0)
				return n;
		}
		i = (i + 1) & mask;
	}
}

int zhash_share(zone_t *dst, const zone_t *src)
{
	zhash_page_t **dir = malloc(src->hash_pages * sizeof(*dir));
	if (!dir)
		return SHOAL_ENOMEM;
	memcpy(dir, src->hash, src->hash_pages * sizeof(*dir));
	for (uint32_t i = 0; i < src->hash_pages; i++)
		__atomic_fetch_add(&dir[i]->refs, 1, __ATOMIC_RELAXED);
	dst->hash = dir;
	dst->hash_pages = src->hash_pages;
	dst->hash_mask = src->hash_mask;
	dst->hash_used = src->hash_used;
	dst->arena &= (uint8_t)~ZONE_ARENA_DIR;
	return 0;
}

void zhash_release(zone_t *z, bool alone)
{
	zhash_page_t **dir = (zhash_page_t **)z->hash;
	uint32_t slots = z->hash_mask + 1u;
	for (uint32_t i = 0; dir && i < z->hash_pages; i++) {
		if (alone)
			page_drop(dir[i], slots, NULL); /* no other version holds it */
		else
			page_unref(dir[i], slots, z->lin);
	}
	if (!(z->arena & ZONE_ARENA_DIR))
		free(dir);
	z->arena &= (uint8_t)~ZONE_ARENA_DIR;
	z->hash = NULL;
	z->hash_pages = 0;
}

size_t zhash_memory(const zone_t *z)
{
	size_t n = z->arena & ZONE_ARENA_DIR ? 0 : z->hash_pages * sizeof(zhash_page_t *);
	for (uint32_t i = 0; i < z->hash_pages; i++)
		n += z->hash[i]->arena ? 0 : page_size(z->hash_mask + 1u);
	return n;
}

/* Page i of z's directory, writable by the change w (copied first when shared or a build's). */
static zhash_page_t *own(zone_t *z, uint32_t i, const zwrite_t *w)
{
	assert(!(z->arena & ZONE_ARENA_DIR)); /* a change's version has a directory of its own */
	zhash_page_t **dir = (zhash_page_t **)z->hash;
	zhash_page_t *p = dir[i];
	if (p->gen == w->gen && !p->arena)
		return p;
	uint32_t slots = z->hash_mask + 1u;
	zhash_page_t *c = page_new(w->gen, slots, NULL);
	if (!c)
		return NULL;
	memcpy(c->slot, p->slot, slots * sizeof(c->slot[0]));
	c->used = p->used;
	dir[i] = c;
	page_unref(p, slots, w->lin); /* the versions that share it keep it */
	return c;
}

/*
 * Remove slot i of page p (mask + 1 slots), moving up the probes that
 * passed over it (no tombstones).
 */
static void page_remove(zhash_page_t *p, uint32_t mask, uint32_t i, const uint8_t key[16])
{
	uint32_t hole = i;
	for (uint32_t j = (i + 1) & mask; p->slot[j]; j = (j + 1) & mask) {
		const znode_t *n = zhash_node(p->slot[j]);
		uint32_t home =
			zhash_first_slot(name_hash_lower(znode_name(n), n->name_len, key), mask);
		/* j may fill the hole when its home is not in (hole, j], circularly */
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			p->slot[hole] = p->slot[j];
			hole = j;
		}
	}
	p->slot[hole] = 0;
	p->used--;
}

int zhash_put(zone_t *z, const uint8_t *name, const znode_t *n, const zwrite_t *w)
{
	size_t len = name_length(name);
	uint64_t h = name_hash_lower(name, len, z->hash_key);
	uint32_t pi = zhash_page(h, z->hash_pages), mask = z->hash_mask;
	zhash_page_t *p = own(z, pi, w);
	if (!p)
		return SHOAL_ENOMEM;
	uint32_t i = zhash_first_slot(h, mask);
	for (; p->slot[i]; i = (i + 1) & mask) {
		const znode_t *m = zhash_node(p->slot[i]);
		if (m->name_len == len && memcmp(znode_name(m), name, len) == 0)
			break;
	}
	if (p->slot[i] && n) {
		p->slot[i] = slot_of(n, h); /* a new block for the same name */
		return 0;
	}
	if (p->slot[i]) {
		page_remove(p, mask, i, z->hash_key);
		z->hash_used--;
		return 0;
	}
	if (!n)
		return 0;
	geometry_t g = { z->hash_pages, mask + 1 };
	if (!page_add(p, mask, n, h) ||
	    (size_t)z->hash_used + 1 > (size_t)g.pages * g.slots * 7 / 8) {
		/* grown whole: from the tree of names, which has n already */
		return fill_growing(z, geometry_up(g), w->gen, NULL, NULL);
	}
	z->hash_used++;
	return 0;
}
