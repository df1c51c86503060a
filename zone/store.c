/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The compiled zone store: arena, canonical keys, hash index and lookups. */
#include "config.h"

#include <assert.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/hot.h"
#include "proto/rdata.h"
#include "zone/internal.h"
#include "zone/slab.h"

/* ---- huge pages ---- */

#define ZONE_HUGE_PAGE (2u << 20)

void zone_huge_pages(void *p, size_t n)
{
	/*
	 * A big zone's load touches a few hundred MiB for the first time; in
	 * 4 KiB pages each is a fault (a third of the load time in a VM). The
	 * 2 MiB-aligned stretches of a big allocation may be huge pages where
	 * the kernel allows it (transparent_hugepage "madvise" or "always").
	 * The advice covers every page the allocation touches, not only those
	 * stretches: advice on part of a mapping splits it, and mremap, which
	 * grows the builder's arrays, refuses a range over two mappings.
	 */
	if (n < ZONE_HUGE_PAGE)
		return;
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t end = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;
	(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

/* ---- arena ---- */

#define ZARENA_BLOCK     (2u << 20) /* one huge page, header included */
#define ZARENA_BLOCK_MIN (1u << 10) /* small zones stay small: a million of them */
#define ZARENA_ALIGN     8          /* the blocks hold pointers and integers, nothing wider */

typedef struct zblock {
	struct zblock *next;
	size_t used, cap;
	size_t mapped; /* octets mapped for it at a huge page boundary; 0: from malloc */
	_Alignas(ZARENA_ALIGN) uint8_t data[];
} zblock_t;

struct zarena {
	zblock_t *head; /* block being filled */
	zblock_t *big;  /* dedicated blocks for large objects */
	size_t total;
};

zarena_t *zarena_new(void)
{
	return calloc(1, sizeof(zarena_t));
}

/*
 * A block of at least cap octets. One of a huge page or more is mapped on
 * a huge page boundary, so all of it may be huge pages (malloc would put
 * its header first and lose most of one); the rest of its last 4 KiB page
 * is added to cap. *size: the octets the block takes.
 */
static zblock_t *zblock_new(size_t cap, size_t *size)
{
	size_t len = sizeof(zblock_t) + cap, mapped = 0;
	zblock_t *b = NULL;
	if (len >= ZONE_HUGE_PAGE) {
		len = (len + 4095) & ~(size_t)4095;
		uint8_t *m = mmap(NULL, len + ZONE_HUGE_PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		uintptr_t at =
			((uintptr_t)m + ZONE_HUGE_PAGE - 1) & ~(uintptr_t)(ZONE_HUGE_PAGE - 1);
		size_t head = at - (uintptr_t)m;
		if (head)
			munmap(m, head);
		if (ZONE_HUGE_PAGE - head)
			munmap((uint8_t *)at + len, ZONE_HUGE_PAGE - head);
		b = (zblock_t *)at;
		zone_huge_pages(b, len);
		mapped = len;
		cap = len - sizeof(*b);
	} else if (!(b = zslab_alloc(len))) {
		return NULL;
	}
	b->next = NULL;
	b->used = 0;
	b->cap = cap;
	b->mapped = mapped;
	*size = sizeof(*b) + cap;
	return b;
}

static_assert((ZARENA_ALIGN & (ZARENA_ALIGN - 1)) == 0,
	      "rounding up by masking needs a power of 2");

void *zarena_alloc(zarena_t *a, size_t n)
{
	n = (n + ZARENA_ALIGN - 1) & ~(size_t)(ZARENA_ALIGN - 1);
	if (n == 0)
		n = ZARENA_ALIGN;
	if (n > ZARENA_BLOCK / 4 || (n > ZARENA_BLOCK_MIN && !a->head)) {
		/* Large arrays (nodes, hash) get their own block. */
		size_t size;
		zblock_t *b = zblock_new(n, &size);
		if (!b)
			return NULL;
		b->used = n;
		b->next = a->big;
		a->big = b;
		a->total += size;
		return b->data;
	}
	if (!a->head || a->head->cap - a->head->used < n) {
		/* blocks grow with the zone: small zones stay small */
		size_t cap = a->total < ZARENA_BLOCK_MIN ? ZARENA_BLOCK_MIN : a->total;
		if (cap > ZARENA_BLOCK - sizeof(zblock_t))
			cap = ZARENA_BLOCK - sizeof(zblock_t);
		while (cap < n)
			cap *= 2;
		size_t size;
		zblock_t *b = zblock_new(cap, &size);
		if (!b)
			return NULL;
		b->next = a->head;
		a->head = b;
		a->total += size;
	}
	void *p = a->head->data + a->head->used;
	a->head->used += n;
	assert(a->head->used <= a->head->cap);
	return p;
}

int zarena_adopt(zarena_t *a, zarena_t *from)
{
	/* its blocks join a's lists; a's block being filled stays first */
	zblock_t **tail = &from->head;
	while (*tail)
		tail = &(*tail)->next;
	if (a->head) {
		*tail = a->head->next;
		a->head->next = from->head;
	} else {
		a->head = from->head;
	}
	tail = &from->big;
	while (*tail)
		tail = &(*tail)->next;
	*tail = a->big;
	a->big = from->big;
	a->total += from->total;
	free(from);
	return 0;
}

void zarena_trim(zarena_t *a)
{
	for (zblock_t *b = a->head; b; b = b->next) {
		size_t keep = (sizeof(*b) + b->used + 4095) & ~(size_t)4095;
		if (!b->mapped || keep >= b->mapped)
			continue;
		munmap((uint8_t *)b + keep, b->mapped - keep);
		a->total -= b->mapped - keep;
		b->mapped = keep;
		b->cap = keep - sizeof(*b);
	}
}

static void zblock_free_list(zblock_t *b)
{
	while (b) {
		zblock_t *next = b->next;
		if (b->mapped)
			munmap(b, b->mapped);
		else
			zslab_free(b, sizeof(*b) + b->cap);
		b = next;
	}
}

void zarena_free(zarena_t *a)
{
	if (!a)
		return;
	zblock_free_list(a->head);
	zblock_free_list(a->big);
	free(a);
}

size_t zarena_size(const zarena_t *a)
{
	return a ? a->total : 0;
}

bool zone_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

/* ---- messages ---- */

void zone_report(zone_msg_fn fn, void *arg, bool is_error, const char *file, unsigned line,
		 const char *fmt, ...)
{
	if (!fn)
		return;
	char text[768], msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(msg, sizeof(msg), "%s:%u: %s", file, line, text);
	else
		snprintf(msg, sizeof(msg), "%s: %s", file, text);
	fn(arg, is_error, msg);
}

void zone_msgs_init(zone_msgs_t *m, zone_msg_fn fn, void *arg)
{
	*m = (zone_msgs_t){ .fn = fn, .arg = arg };
}

void zone_msgs_pass(void *arg, bool is_error, const char *msg)
{
	zone_msgs_t *m = arg;
	unsigned *seen = is_error ? &m->errors : &m->warnings;
	if (__atomic_add_fetch(seen, 1, __ATOMIC_RELAXED) <= LOAD_MAX_ERRORS && m->fn)
		m->fn(m->arg, is_error, msg);
}

void zone_msgs_skip(zone_msgs_t *m, bool is_error, unsigned n)
{
	__atomic_add_fetch(is_error ? &m->errors : &m->warnings, n, __ATOMIC_RELAXED);
}

void zone_msgs_end(zone_msgs_t *m, const char *file)
{
	unsigned warnings = __atomic_exchange_n(&m->warnings, 0, __ATOMIC_RELAXED);
	unsigned errors = __atomic_exchange_n(&m->errors, 0, __ATOMIC_RELAXED);
	if (warnings > LOAD_MAX_ERRORS)
		zone_report(m->fn, m->arg, false, file, 0, "%u more warnings not shown",
			    warnings - LOAD_MAX_ERRORS);
	if (errors > LOAD_MAX_ERRORS)
		zone_report(m->fn, m->arg, true, file, 0, "%u more errors not shown",
			    errors - LOAD_MAX_ERRORS);
}

/* ---- hash key ---- */

static uint8_t hash_key[crypto_shorthash_KEYBYTES];
static pthread_once_t hash_key_once = PTHREAD_ONCE_INIT;

static void hash_key_init(void)
{
	/* sodium_init picks the random source; randombytes works even if it fails */
	int ok = sodium_init();
	(void)ok;
	randombytes_buf(hash_key, sizeof(hash_key));
}

const uint8_t *zone_hash_key(void)
{
	pthread_once(&hash_key_once, hash_key_init);
	return hash_key;
}

/* ---- canonical keys ---- */

size_t zone_name_key(const uint8_t *name, uint8_t *key)
{
	const uint8_t *label[NAME_MAXLABELS];
	int n = 0;
	for (const uint8_t *p = name; *p && n < NAME_MAXLABELS; p += *p + 1)
		label[n++] = p;
	size_t k = 0;
	for (int i = n - 1; i >= 0; i--) {
		const uint8_t *l = label[i];
		for (int j = 1; j <= l[0]; j++) {
			uint8_t c = l[j];
			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c + 32);
			/* 0x00 and 0x01 become two octets so 0x00 can end a label */
			if (c <= 1) {
				key[k++] = 1;
				key[k++] = (uint8_t)(c + 1);
			} else {
				key[k++] = c;
			}
		}
		key[k++] = 0;
	}
	return k;
}

/* ---- nodes and lineages ---- */

static uint64_t gen_last;

uint64_t zone_gen_next(void)
{
	return __atomic_add_fetch(&gen_last, 1, __ATOMIC_RELAXED);
}

zlin_t *zlin_new(zarena_t *arena)
{
	/* in the arena it holds: one allocation less a zone, gone with it */
	zlin_t *lin = zarena_alloc(arena, sizeof(*lin));
	if (!lin)
		return NULL;
	*lin = (zlin_t){ .refs = 1, .arena = arena };
	return lin;
}

void zlin_unref(zlin_t *lin)
{
	if (lin && __atomic_fetch_sub(&lin->refs, 1, __ATOMIC_ACQ_REL) == 1)
		zarena_free(lin->arena); /* lin with it */
}

size_t znode_head(const znode_t *n)
{
	return n->sig_groups * sizeof(rrset_wire_t) + n->rrset_count * sizeof(zrrset_t);
}

void znode_free(zlin_t *lin, znode_t *n)
{
	size_t size = znode_size(n);
	if (n->flags & ZNODE_HEAP) {
		__atomic_fetch_sub(&lin->heap, size, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&lin->heap_count, 1, __ATOMIC_RELAXED);
		free(znode_block(n));
	} else {
		/* the arena's memory goes with the lineage; count what is lost till then */
		__atomic_fetch_add(&lin->dead, size, __ATOMIC_RELAXED);
	}
}

void znode_drop(zlin_t *lin, const znode_t *n, bool defer)
{
	znode_t *m = (znode_t *)n;
	/* release: this thread's reads of the node come before another's free of it */
	if (__atomic_fetch_sub(&m->refs, 1, __ATOMIC_ACQ_REL) == 1 && !defer)
		znode_free(lin, m);
}

znode_t *znode_alloc(zlin_t *lin, size_t head, size_t tail)
{
	uint8_t *mem = malloc(head + sizeof(znode_t) + tail);
	if (!mem)
		return NULL;
	__atomic_fetch_add(&lin->heap, head + sizeof(znode_t) + tail, __ATOMIC_RELAXED);
	__atomic_fetch_add(&lin->heap_count, 1, __ATOMIC_RELAXED);
	znode_t *n = (znode_t *)(mem + head);
	memset(n, 0, sizeof(*n));
	n->tail = (uint32_t)tail;
	n->flags = ZNODE_HEAP | ZNODE_FRESH;
	return n;
}

/* p moved by delta octets with its block (NULL stays NULL). */
static const void *moved(const void *p, ptrdiff_t delta)
{
	return p ? (const uint8_t *)p + delta : NULL;
}

znode_t *znode_copy(zlin_t *lin, const znode_t *n)
{
	size_t head = znode_head(n);
	znode_t *c = znode_alloc(lin, head, n->tail);
	if (!c)
		return NULL;
	uint8_t *mem = (uint8_t *)c - head;
	memcpy(mem, znode_block(n), znode_size(n));
	c->refs = 0;
	c->flags = (uint16_t)(n->flags | ZNODE_HEAP | ZNODE_FRESH);
	/* the RRsets point into their own block: the copy's into its own */
	ptrdiff_t delta = mem - znode_block(n);
	rrset_wire_t *sg = (rrset_wire_t *)(void *)mem;
	zrrset_t *rs = (zrrset_t *)(sg + c->sig_groups);
	for (uint16_t i = 0; i < c->sig_groups; i++) {
		sg[i].data = moved(sg[i].data, delta);
		sg[i].names = moved(sg[i].names, delta);
	}
	for (uint16_t i = 0; i < c->rrset_count; i++) {
		rs[i].set.data = moved(rs[i].set.data, delta);
		rs[i].set.names = moved(rs[i].set.names, delta);
		rs[i].sigs = moved(rs[i].sigs, delta);
	}
	return c;
}

uint16_t znode_own_flags(const znode_t *n, bool apex)
{
	uint16_t f = n->rrset_count ? ZNODE_DATA : 0;
	if (apex)
		f |= ZNODE_APEX;
	else if (znode_rrset(n, DNS_TYPE_NS))
		f |= ZNODE_DELEG;
	if (znode_rrset(n, DNS_TYPE_DNAME))
		f |= ZNODE_DNAME;
	if (znode_rrset(n, DNS_TYPE_CNAME))
		f |= ZNODE_CNAME;
	return f;
}

bool zone_glue_missing(const zone_t *z, const znode_t *cut, const uint8_t *rdata, uint16_t rdlen,
		       char text[NAME_TEXT_MAX])
{
	/* the name's length within its own RDATA, however the load checked it */
	int tlen = rdata_name_length(rdata, rdlen, 0);
	if (tlen < 0 || !name_is_subdomain(rdata, znode_name(cut)))
		return false;
	uint8_t lower[NAME_MAXLEN];
	memcpy(lower, rdata, (size_t)tlen);
	name_lower(lower);
	const znode_t *t = zone_lookup(z, lower);
	if (t && (znode_rrset(t, DNS_TYPE_A) || znode_rrset(t, DNS_TYPE_AAAA)))
		return false;
	if (name_to_text(rdata, text, NAME_TEXT_MAX) < 0)
		strcpy(text, "?");
	return true;
}

/* ---- lookups ---- */

QUERY_PATH const znode_t *zone_lookup(const zone_t *z, const uint8_t *name)
{
	return zone_lookup_hashed(z, name, name_length(name), name_hash(name, z->hash_key));
}

QUERY_PATH const zrrset_t *znode_rrset(const znode_t *n, uint16_t type)
{
	/* Nodes hold few RRsets: a linear scan beats a binary search here. */
	const zrrset_t *rs = znode_rrsets(n);
	for (uint16_t i = 0; i < n->rrset_count; i++)
		if (rs[i].set.type == type)
			return &rs[i];
	return NULL;
}

QUERY_PATH const znode_t *zone_parent(const zone_t *z, const znode_t *n)
{
	if (n->labels <= z->apex->labels)
		return NULL;
	/* the name less its first label: a node whatever it holds (every ancestor is) */
	const uint8_t *name = znode_name(n);
	const uint8_t *p = name + name[0] + 1;
	size_t len = n->name_len - (size_t)name[0] - 1;
	return zone_lookup_hashed(z, p, len, name_hash_lower(p, len, z->hash_key));
}

const znode_t *zone_first(const zone_t *z, zone_iter_t *it)
{
	return ztree_first(&z->names, it);
}

const znode_t *zone_next(zone_iter_t *it)
{
	return ztree_next(it);
}

QUERY_PATH const znode_t *zone_find_le(const zone_t *z, const uint8_t *name)
{
	zkey_t k;
	zkey_name(&k, name);
	return ztree_find_le(&z->names, &k);
}

/* ---- versions ---- */

/* Octets of the negative SOA's copies: its data, then its signatures' (zone_neg_soa). */
static size_t neg_soa_size(const zone_t *z)
{
	size_t n = z->neg_soa.data ? (z->neg_soa.data_len + 7) & ~(size_t)7 : 0;
	return n + (z->neg_soa_sigs ? sizeof(rrset_wire_t) + z->neg_soa_sigs->data_len : 0);
}

size_t zone_memory(const zone_t *z)
{
	const zlin_t *lin = z->lin;
	size_t n =
		lin ? zarena_size(lin->arena) + __atomic_load_n(&lin->heap, __ATOMIC_RELAXED) : 0;
	n += ztree_memory(&z->names) + ztree_memory(&z->nsec) + ztree_memory(&z->nsec3.chain);
	n += z->arena & ZONE_ARENA_NEG ? 0 : neg_soa_size(z);
	return n + zhash_memory(z);
}

void zone_neg_soa_free(zone_t *z)
{
	if (!(z->arena & ZONE_ARENA_NEG))
		free((void *)(uintptr_t)z->neg_soa.data);
	z->arena &= (uint8_t)~ZONE_ARENA_NEG;
	z->neg_soa.data = NULL;
	z->neg_soa_sigs = NULL;
}

void zone_free(zone_t *z)
{
	if (!z)
		return;
	zlin_t *lin = z->lin;
	/*
	 * The last version of its lineage shares nothing: its trees and pages
	 * go without counting, its heap nodes with them, the arena after.
	 * Otherwise every piece loses this version as a holder, and those
	 * left with none go.
	 */
	bool alone = !lin || __atomic_load_n(&lin->refs, __ATOMIC_ACQUIRE) == 1;
	if (alone) {
		bool heap = lin && __atomic_load_n(&lin->heap_count, __ATOMIC_RELAXED);
		ztree_free_alone(&z->names, lin, heap);
		ztree_free_alone(&z->nsec, lin, false);
		ztree_free_alone(&z->nsec3.chain, lin, false);
	} else {
		ztree_release(&z->nsec, lin, false);
		ztree_release(&z->nsec3.chain, lin, false);
		ztree_release(&z->names, lin, false);
	}
	zhash_release(z, alone);
	zone_neg_soa_free(z);
	zslab_free(z, sizeof(*z));
	zlin_unref(lin); /* last: the arena may hold what was freed before */
}

const zone_t *zone_ref(const zone_t *z)
{
	/* the caller's own hold keeps the count above 0: no ordering needed */
	unsigned was = __atomic_fetch_add(&((zone_t *)z)->refs, 1, __ATOMIC_RELAXED);
	assert(was > 0);
	(void)was;
	return z;
}

void zone_unref(const zone_t *z)
{
	zone_t *m = (zone_t *)z;
	if (!m)
		return;
	/* release: this thread's reads of the zone come before the free on another */
	unsigned was = __atomic_fetch_sub(&m->refs, 1, __ATOMIC_ACQ_REL);
	assert(was > 0); /* one more unref than refs: freed already */
	if (was == 1)
		zone_free(m);
}
