/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The compiled zone store: arena, canonical keys, hash index and lookups. */
#include "config.h"

#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "zone/internal.h"

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
#define ZARENA_BLOCK_MIN (16u << 10)
#define ZARENA_ALIGN     8 /* the blocks hold pointers and integers, nothing wider */

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
	} else if (!(b = malloc(len))) {
		return NULL;
	}
	b->next = NULL;
	b->used = 0;
	b->cap = cap;
	b->mapped = mapped;
	*size = sizeof(*b) + cap;
	return b;
}

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
			free(b);
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

size_t zone_memory(const zone_t *z)
{
	return zarena_size(z->arena);
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

/* ---- lookups ---- */

QUERY_PATH const znode_t *zone_lookup_hashed(const zone_t *z, const uint8_t *name, size_t name_len,
					     uint64_t hash)
{
	uint64_t tag = zhash_tag(hash);
	uint32_t i = zhash_start(hash, z->hash_size);
	for (;;) {
		const zhash_slot_t *s = &z->hash[i];
		if (s->idx == 0)
			return NULL;
		uint64_t ref = (uint64_t)s->ref_hi << 32 | s->ref_lo;
		if (zhash_tag(ref) == tag) {
			/*
			 * Both addresses come from the slot: the name (and the
			 * RRsets before it) and the node load side by side.
			 * The lines on either side of the name's are asked for
			 * at once too: the RRsets end where the name starts and
			 * the RR data follows it, and the answer reads both next.
			 * Cold, each would otherwise be a miss of its own after
			 * the compare returns (a small node fits in these three).
			 */
			const uint8_t *owner = zhash_name(ref);
			const znode_t *n = &z->nodes[s->idx - 1];
			__builtin_prefetch(owner - 64);
			__builtin_prefetch(owner + 64);
			if (n->name_len == name_len && memcmp(owner, name, name_len) == 0)
				return n;
		}
		i = i + 1 == z->hash_size ? 0 : i + 1;
	}
}

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

const znode_t *zone_parent(const zone_t *z, const znode_t *n)
{
	(void)z;
	return n->parent;
}

const znode_t *zone_first(const zone_t *z, zone_iter_t *it)
{
	it->z = z;
	it->next = 1;
	return z->apex;
}

const znode_t *zone_next(zone_iter_t *it)
{
	return it->next < it->z->node_count ? &it->z->nodes[it->next++] : NULL;
}

static int key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);
	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

const znode_t *zone_find_le(const zone_t *z, const uint8_t *name)
{
	uint8_t key[ZONE_KEY_MAX], nkey[ZONE_KEY_MAX];
	size_t klen = zone_name_key(name, key);
	size_t lo = 0, hi = z->node_count; /* answer is in [lo-1, hi) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t nlen = zone_name_key(znode_name(&z->nodes[mid]), nkey);
		if (key_cmp(nkey, nlen, key, klen) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &z->nodes[lo - 1] : NULL;
}

void zone_free(zone_t *z)
{
	if (!z)
		return;
	zarena_free(z->arena);
	free(z);
}

const zone_t *zone_ref(const zone_t *z)
{
	/* the caller's own hold keeps the count above 0: no ordering needed */
	__atomic_fetch_add(&((zone_t *)z)->refs, 1, __ATOMIC_RELAXED);
	return z;
}

void zone_unref(const zone_t *z)
{
	zone_t *m = (zone_t *)z;
	/* release: this thread's reads of the zone come before the free on another */
	if (m && __atomic_fetch_sub(&m->refs, 1, __ATOMIC_ACQ_REL) == 1)
		zone_free(m);
}
