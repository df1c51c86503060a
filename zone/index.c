/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The hash index of a version: pages under a directory, shared between versions. */
#include "config.h"

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
#define ZHASH_PAGE_FULL (ZHASH_PAGE_SLOTS * 15 / 16)
#define ZHASH_LOAD_NUM  3 /* built with slots for 4/3 the names */
#define ZHASH_LOAD_DEN  4

static zhash_page_t *page_new(uint64_t gen)
{
	zhash_page_t *p = aligned_alloc(_Alignof(zhash_page_t), sizeof(zhash_page_t));
	if (!p)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->refs = 1;
	p->gen = gen;
	return p;
}

static void page_unref(zhash_page_t *p)
{
	/* release: this thread's reads of the page come before another's free of it */
	if (p && __atomic_fetch_sub(&p->refs, 1, __ATOMIC_ACQ_REL) == 1)
		free(p);
}

/* The slot value of node n, whose name hashes to h. */
static uint64_t slot_of(const znode_t *n, uint64_t h)
{
	return zhash_tag(h) << ZHASH_REF_BITS | (uint64_t)(uintptr_t)n >> 3;
}

/* Put n (name hash h) in the first free slot of its page; false when the page is too full. */
static bool page_add(zhash_page_t *p, const znode_t *n, uint64_t h)
{
	if (p->used >= ZHASH_PAGE_FULL)
		return false;
	uint32_t i = zhash_first_slot(h);
	while (p->slot[i])
		i = (i + 1) & (ZHASH_PAGE_SLOTS - 1);
	p->slot[i] = slot_of(n, h);
	p->used++;
	return true;
}

/* Pages for `names` names at the build's load, at least one. */
static uint32_t pages_for(size_t names)
{
	size_t slots = names * ZHASH_LOAD_DEN / ZHASH_LOAD_NUM + 1;
	size_t pages = (slots + ZHASH_PAGE_SLOTS - 1) / ZHASH_PAGE_SLOTS;
	return pages > UINT32_MAX ? UINT32_MAX : (uint32_t)pages;
}

static void dir_free(zhash_page_t **dir, uint32_t pages)
{
	for (uint32_t i = 0; dir && i < pages; i++)
		page_unref(dir[i]);
	free(dir);
}

/* A new directory of `pages` pages holding the nodes of z's tree of names. */
static int fill(zone_t *z, uint32_t pages, uint64_t gen, const bool *cancel)
{
	zhash_page_t **dir = calloc(pages, sizeof(*dir));
	if (!dir)
		return SHOAL_ENOMEM;
	int err = 0;
	for (uint32_t i = 0; i < pages && err == 0; i++)
		if (!(dir[i] = page_new(gen)))
			err = SHOAL_ENOMEM;
	zone_iter_t it;
	size_t k = 0;
	for (const znode_t *n = zone_first(z, &it); n && err == 0; n = zone_next(&it)) {
		if (zone_stop_at(cancel, ++k)) {
			err = SHOAL_ETIMEOUT;
			break;
		}
		uintptr_t at = (uintptr_t)n;
		if ((at & 7) || (uint64_t)at >> (ZHASH_REF_BITS + 3)) {
			err = SHOAL_EUNSUPPORTED; /* no such address on Linux without asking */
			break;
		}
		uint64_t h = name_hash_lower(znode_name(n), n->name_len, z->hash_key);
		if (!page_add(dir[zhash_page(h, pages)], n, h))
			err = SHOAL_ESPACE; /* the caller asks for more pages */
	}
	if (err < 0) {
		dir_free(dir, pages);
		return err;
	}
	zhash_release(z, false);
	z->hash = dir;
	z->hash_pages = pages;
	z->hash_used = k;
	return 0;
}

/* fill, with twice the pages until no page is too full (a skew that rare). */
static int fill_growing(zone_t *z, uint32_t pages, uint64_t gen, const bool *cancel)
{
	int err;
	while ((err = fill(z, pages, gen, cancel)) == SHOAL_ESPACE && pages < UINT32_MAX / 2)
		pages *= 2;
	return err;
}

int zhash_build(zone_t *z, uint64_t gen, const bool *cancel)
{
	return fill_growing(z, pages_for(z->names.count), gen, cancel);
}

QUERY_PATH const znode_t *zone_lookup_hashed(const zone_t *z, const uint8_t *name, size_t name_len,
					     uint64_t hash)
{
	uint64_t tag = zhash_tag(hash);
	const uint64_t *slot = z->hash[zhash_page(hash, z->hash_pages)]->slot;
	uint32_t i = zhash_first_slot(hash);
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
		i = (i + 1) & (ZHASH_PAGE_SLOTS - 1);
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
	dst->hash_used = src->hash_used;
	return 0;
}

void zhash_release(zone_t *z, bool alone)
{
	zhash_page_t **dir = (zhash_page_t **)z->hash;
	for (uint32_t i = 0; dir && i < z->hash_pages; i++) {
		if (alone)
			free(dir[i]); /* no other version holds it */
		else
			page_unref(dir[i]);
	}
	free(dir);
	z->hash = NULL;
	z->hash_pages = 0;
}

size_t zhash_memory(const zone_t *z)
{
	return z->hash_pages * (sizeof(zhash_page_t) + sizeof(zhash_page_t *));
}

/* Page i of z's directory, writable by the change w (copied first when shared). */
static zhash_page_t *own(zone_t *z, uint32_t i, const zwrite_t *w)
{
	zhash_page_t **dir = (zhash_page_t **)z->hash;
	zhash_page_t *p = dir[i];
	if (p->gen == w->gen)
		return p;
	zhash_page_t *c = page_new(w->gen);
	if (!c)
		return NULL;
	memcpy(c->slot, p->slot, sizeof(c->slot));
	c->used = p->used;
	dir[i] = c;
	page_unref(p); /* the versions that share it keep it */
	return c;
}

/* Remove slot i of page p, moving up the probes that passed over it (no tombstones). */
static void page_remove(zhash_page_t *p, uint32_t i, const uint8_t key[16])
{
	const uint32_t mask = ZHASH_PAGE_SLOTS - 1;
	uint32_t hole = i;
	for (uint32_t j = (i + 1) & mask; p->slot[j]; j = (j + 1) & mask) {
		const znode_t *n = zhash_node(p->slot[j]);
		uint32_t home = zhash_first_slot(name_hash_lower(znode_name(n), n->name_len, key));
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
	uint32_t pi = zhash_page(h, z->hash_pages);
	zhash_page_t *p = own(z, pi, w);
	if (!p)
		return SHOAL_ENOMEM;
	uint32_t i = zhash_first_slot(h);
	for (; p->slot[i]; i = (i + 1) & (ZHASH_PAGE_SLOTS - 1)) {
		const znode_t *m = zhash_node(p->slot[i]);
		if (m->name_len == len && memcmp(znode_name(m), name, len) == 0)
			break;
	}
	if (p->slot[i] && n) {
		p->slot[i] = slot_of(n, h); /* a new block for the same name */
		return 0;
	}
	if (p->slot[i]) {
		page_remove(p, i, z->hash_key);
		z->hash_used--;
		return 0;
	}
	if (!n)
		return 0;
	if (!page_add(p, n, h) ||
	    z->hash_used + 1 > (size_t)z->hash_pages * ZHASH_PAGE_SLOTS * 7 / 8) {
		/* grown whole: from the tree of names, which has n already */
		return fill_growing(z, z->hash_pages * 2, w->gen, NULL);
	}
	z->hash_used++;
	return 0;
}
