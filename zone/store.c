/* The compiled zone store: arena, canonical keys, hash index and lookups. */
#include "config.h"

#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "zone/internal.h"

/* ---- arena ---- */

#define ZARENA_BLOCK     (1u << 20) /* big enough that malloc maps it: freed at once */
#define ZARENA_BLOCK_MIN (16u << 10)
#define ZARENA_ALIGN     8 /* the blocks hold pointers and integers, nothing wider */

typedef struct zblock {
	struct zblock *next;
	size_t used, cap;
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

static zblock_t *zblock_new(size_t cap)
{
	zblock_t *b = malloc(sizeof(*b) + cap);
	if (b) {
		b->next = NULL;
		b->used = 0;
		b->cap = cap;
	}
	return b;
}

void *zarena_alloc(zarena_t *a, size_t n)
{
	n = (n + ZARENA_ALIGN - 1) & ~(size_t)(ZARENA_ALIGN - 1);
	if (n == 0)
		n = ZARENA_ALIGN;
	if (n > ZARENA_BLOCK / 4 || (n > ZARENA_BLOCK_MIN && !a->head)) {
		/* Large arrays (nodes, hash) get their own block. */
		zblock_t *b = zblock_new(n);
		if (!b)
			return NULL;
		b->used = n;
		b->next = a->big;
		a->big = b;
		a->total += sizeof(*b) + n;
		return b->data;
	}
	if (!a->head || a->head->cap - a->head->used < n) {
		/* blocks grow with the zone: small zones stay small */
		size_t cap = a->total < ZARENA_BLOCK_MIN ? ZARENA_BLOCK_MIN : a->total;
		if (cap > ZARENA_BLOCK)
			cap = ZARENA_BLOCK;
		while (cap < n)
			cap *= 2;
		zblock_t *b = zblock_new(cap);
		if (!b)
			return NULL;
		b->next = a->head;
		a->head = b;
		a->total += sizeof(*b) + cap;
	}
	void *p = a->head->data + a->head->used;
	a->head->used += n;
	return p;
}

static void zblock_free_list(zblock_t *b)
{
	while (b) {
		zblock_t *next = b->next;
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

const znode_t *zone_lookup_hashed(const zone_t *z, const uint8_t *name, size_t name_len,
				  uint64_t hash)
{
	uint32_t tag = (uint32_t)(hash >> 32);
	uint32_t i = zhash_start(hash, z->hash_size);
	for (;;) {
		const zhash_slot_t *s = &z->hash[i];
		if (s->idx == 0)
			return NULL;
		if (s->tag == tag) {
			const znode_t *n = &z->nodes[s->idx - 1];
			if (n->name_len == name_len && memcmp(n->name, name, name_len) == 0)
				return n;
		}
		i = i + 1 == z->hash_size ? 0 : i + 1;
	}
}

const znode_t *zone_lookup(const zone_t *z, const uint8_t *name)
{
	return zone_lookup_hashed(z, name, name_length(name), name_hash(name, z->hash_key));
}

const zrrset_t *znode_rrset(const znode_t *n, uint16_t type)
{
	/* Nodes hold few RRsets: a linear scan beats a binary search here. */
	for (uint16_t i = 0; i < n->rrset_count; i++)
		if (n->rrsets[i].set.type == type)
			return &n->rrsets[i];
	return NULL;
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
		size_t nlen = zone_name_key(z->nodes[mid].name, nkey);
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
