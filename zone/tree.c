/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Ordered sets of nodes shared between versions: a B+ tree copied along the path it changes. */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "zone/internal.h"

/*
 * A tree node. A leaf holds up to ZT_FAN zone nodes in order; an inner
 * node up to ZT_FAN children and, for each, the first zone node of its
 * subtree (what a search compares with). A build's tree nodes lie in its
 * arena (arena), its leaves with room for what they hold and no more:
 * a small zone's one leaf is its few entries. Tree nodes are shared between
 * the versions of a zone: refs counts the parents (or versions, for a
 * root) that hold one, and only a tree node made by the change being
 * applied (gen, the change's number) is written in place; any other is
 * copied first, with the path above it (copy on write). A tree that owns
 * its zone nodes (the tree of all names) holds a reference on each
 * entry of its leaves, so a zone node lives while some version's leaf
 * holds it. Between two changes a tree node holds at most ZT_FAN entries;
 * there is room for one more, which splits it.
 */
#define ZT_FAN 64
#define ZT_MIN (ZT_FAN / 4)
#define ZT_CAP (ZT_FAN + 1) /* an inner node's room, and a leaf's at most */

struct zt_node {
	unsigned refs;
	uint8_t count;
	uint8_t cap; /* entries key[] has room for: ZT_CAP but in a leaf */
	bool leaf;
	bool arena; /* in a build's arena: never freed alone, never written */
	uint64_t gen;
	const znode_t *key[]; /* cap of them; an inner node's ZT_CAP children after */
};

_Static_assert(ZONE_ITER_DEPTH >= 10, "64-way nodes at least a quarter full: 2^32 names");
_Static_assert(ZT_CAP <= UINT8_MAX, "count and cap hold a node's entries");

/* The children of inner node x, after its keys. */
static inline zt_node_t **kids(const zt_node_t *x)
{
	return (zt_node_t **)(uintptr_t)(x->key + ZT_CAP);
}

/* Octets of a tree node: a leaf of cap entries, or an inner node. */
static size_t zt_size(bool leaf, unsigned cap)
{
	return sizeof(zt_node_t) + (leaf ? cap : 2 * ZT_CAP) * sizeof(const znode_t *);
}

/* A tree node with room for cap entries (ZT_CAP for an inner node), from arena or malloc. */
static zt_node_t *zt_alloc(bool leaf, unsigned cap, uint64_t gen, zarena_t *arena)
{
	assert(cap <= ZT_CAP && (leaf || cap == ZT_CAP));
	size_t size = zt_size(leaf, cap);
	zt_node_t *x = arena ? zarena_alloc(arena, size) : malloc(size);
	if (!x)
		return NULL;
	x->refs = 1;
	x->count = 0;
	x->cap = (uint8_t)cap;
	x->leaf = leaf;
	x->arena = arena != NULL;
	x->gen = gen;
	return x;
}

static zt_node_t *zt_new(bool leaf, uint64_t gen)
{
	return zt_alloc(leaf, ZT_CAP, gen, NULL);
}

/*
 * A tree node nobody holds any more: back to malloc, or, in the arena,
 * counted dead until the lineage goes.
 */
static void zt_drop(zt_node_t *x, zlin_t *lin)
{
	if (!x->arena)
		free(x);
	else if (lin)
		__atomic_fetch_add(&lin->dead, zt_size(x->leaf, x->cap), __ATOMIC_RELAXED);
}

/* ---- keys ---- */

void zkey_name(zkey_t *k, const uint8_t *name)
{
	k->name = name;
	k->hash = NULL;
	k->labels = name_label_offsets(name, k->off);
}

void zkey_hash(zkey_t *k, const uint8_t *hash)
{
	k->name = NULL;
	k->hash = hash;
	k->labels = 0;
}

void zkey_of(zkey_t *k, enum ztree_kind kind, const znode_t *n)
{
	if (kind == ZTREE_HASHES)
		zkey_hash(k, znode_hash(n));
	else
		zkey_name(k, znode_name(n));
}

/*
 * Canonical order (RFC 4034 6.1) of the key's name against a name of the
 * store, both lowercase: labels compared from the root as octet strings.
 */
QUERY_PATH static int cmp_name(const zkey_t *k, const uint8_t *name)
{
	uint8_t off[NAME_MAXLABELS];
	int bn = name_label_offsets(name, off), an = k->labels;
	while (an > 0 && bn > 0) {
		const uint8_t *la = k->name + k->off[--an], *lb = name + off[--bn];
		int c = memcmp(la + 1, lb + 1, la[0] < lb[0] ? la[0] : lb[0]);
		if (c)
			return c;
		if (la[0] != lb[0])
			return la[0] < lb[0] ? -1 : 1;
	}
	return an == bn ? 0 : (an < bn ? -1 : 1);
}

/* The key against zone node n: <0, 0, >0. */
QUERY_PATH static int cmp(const zkey_t *k, const znode_t *n)
{
	if (k->hash)
		return memcmp(k->hash, znode_hash(n), ZONE_NSEC3_HASH_LEN);
	return cmp_name(k, znode_name(n));
}

/* In x, the last entry at or before k, or -1 when k sorts before them all. */
QUERY_PATH static int last_le(const zt_node_t *x, const zkey_t *k)
{
	int lo = 0, hi = x->count; /* the answer is lo - 1 */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (cmp(k, x->key[mid]) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* ---- reading ---- */

void ztree_init(ztree_t *t, enum ztree_kind kind, bool owns)
{
	*t = (ztree_t){ .kind = (uint8_t)kind, .owns = owns };
}

QUERY_PATH const znode_t *ztree_find_le(const ztree_t *t, const zkey_t *k)
{
	const zt_node_t *x = t->root;
	if (!x)
		return NULL;
	for (;;) {
		int i = last_le(x, k);
		/* at the root only: a child is entered at its first entry or after */
		if (i < 0)
			return NULL;
		if (x->leaf)
			return x->key[i];
		x = kids(x)[i];
	}
}

/* In x, the last entry before k, or -1 when k sorts at or before them all. */
static int last_lt(const zt_node_t *x, const zkey_t *k)
{
	int lo = 0, hi = x->count; /* the answer is lo - 1 */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (cmp(k, x->key[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

const znode_t *ztree_find_lt(const ztree_t *t, const zkey_t *k)
{
	/* a separator is its subtree's first node: the child it leads holds one before k */
	const zt_node_t *x = t->root;
	for (int i; x; x = kids(x)[i]) {
		i = last_lt(x, k);
		if (i < 0)
			return NULL;
		if (x->leaf)
			return x->key[i];
	}
	return NULL;
}

const znode_t *ztree_find(const ztree_t *t, const zkey_t *k)
{
	const znode_t *n = ztree_find_le(t, k);
	return n && cmp(k, n) == 0 ? n : NULL;
}

QUERY_PATH const znode_t *ztree_last(const ztree_t *t)
{
	const zt_node_t *x = t->root;
	if (!x)
		return NULL;
	while (!x->leaf)
		x = kids(x)[x->count - 1];
	return x->key[x->count - 1];
}

/* Down from it->path[d] (at position it->pos[d]) to the leftmost leaf below. */
static const znode_t *descend_first(zone_iter_t *it, int d)
{
	while (!it->path[d]->leaf) {
		const zt_node_t *c = kids(it->path[d])[it->pos[d]];
		it->path[++d] = c;
		it->pos[d] = 0;
	}
	return it->path[d]->key[it->pos[d]];
}

const znode_t *ztree_first(const ztree_t *t, zone_iter_t *it)
{
	it->height = t->height;
	if (!t->root)
		return NULL;
	it->path[0] = t->root;
	it->pos[0] = 0;
	return descend_first(it, 0);
}

const znode_t *ztree_next(zone_iter_t *it)
{
	if (it->height == 0)
		return NULL;
	int d = it->height - 1;
	while (d >= 0 && it->pos[d] + 1 >= it->path[d]->count)
		d--;
	if (d < 0) {
		it->height = 0; /* past the last: stays there */
		return NULL;
	}
	it->pos[d]++;
	return descend_first(it, d);
}

const znode_t *ztree_seek_gt(const ztree_t *t, const zkey_t *k, zone_iter_t *it)
{
	it->height = t->height;
	const zt_node_t *x = t->root;
	if (!x)
		return NULL;
	for (int d = 0;; d++) {
		int i = last_le(x, k);
		it->path[d] = x;
		if (x->leaf) {
			/* on the last at or before k, then one step on */
			if (i < 0) {
				it->pos[d] = 0;
				return x->key[0];
			}
			it->pos[d] = (uint16_t)i;
			return ztree_next(it);
		}
		it->pos[d] = (uint16_t)(i < 0 ? 0 : i);
		x = kids(x)[it->pos[d]];
	}
}

/* ---- building ---- */

static void zt_free_tree(zt_node_t *x, const ztree_t *t, zlin_t *lin, bool nodes);

/*
 * One level above the `count` tree nodes of below[]: as few parents as
 * hold them, the children spread evenly, so none is below half full.
 * The parents replace them in below[0..*count); on ENOMEM below[] is as
 * it was.
 */
static int build_level(zt_node_t **below, size_t *count, uint64_t gen, zarena_t *arena)
{
	size_t n = *count, parents = (n + ZT_FAN - 1) / ZT_FAN;
	zt_node_t **up = malloc(parents * sizeof(*up));
	if (!up)
		return SHOAL_ENOMEM;
	for (size_t p = 0, at = 0; p < parents; p++) {
		size_t end = n * (p + 1) / parents;
		if (!(up[p] = zt_alloc(false, ZT_CAP, gen, arena))) {
			while (p-- > 0)
				zt_drop(up[p], NULL); /* the children stay in below[] */
			free(up);
			return SHOAL_ENOMEM;
		}
		for (; at < end; at++) {
			kids(up[p])[up[p]->count] = below[at];
			up[p]->key[up[p]->count++] = below[at]->key[0];
		}
	}
	memcpy(below, up, parents * sizeof(*up));
	free(up);
	*count = parents;
	return 0;
}

int ztree_build(ztree_t *t, const znode_t *const *nodes, size_t n, uint64_t gen, zarena_t *arena)
{
	t->root = NULL;
	t->count = 0;
	t->height = 0;
	if (n == 0)
		return 0;
	size_t leaves = (n + ZT_FAN - 1) / ZT_FAN;
	zt_node_t **level = malloc(leaves * sizeof(*level));
	if (!level)
		return SHOAL_ENOMEM;
	size_t count = 0;
	int err = 0;
	for (size_t at = 0; count < leaves; count++) {
		size_t end = n * (count + 1) / leaves;
		/* never written (a change copies it first): room for its entries only */
		zt_node_t *x = zt_alloc(true, (unsigned)(end - at), gen, arena);
		if (!x) {
			err = SHOAL_ENOMEM;
			break;
		}
		for (; at < end; at++) {
			x->key[x->count++] = nodes[at];
			if (t->owns)
				__atomic_fetch_add(&((znode_t *)nodes[at])->refs, 1,
						   __ATOMIC_RELAXED);
		}
		level[count] = x;
	}
	uint8_t height = 1;
	while (err == 0 && count > 1 && (err = build_level(level, &count, gen, arena)) == 0)
		height++;
	if (err < 0) {
		/* what was built is in level[0..count) at the last level reached */
		for (size_t i = 0; i < count; i++)
			zt_free_tree(level[i], t, NULL, false);
		free(level);
		return err;
	}
	t->root = level[0];
	t->count = (uint32_t)n;
	t->height = height;
	free(level);
	return 0;
}

/* ---- sharing and freeing ---- */

void ztree_share(ztree_t *dst, const ztree_t *src)
{
	*dst = *src;
	if (src->root)
		__atomic_fetch_add(&src->root->refs, 1, __ATOMIC_RELAXED);
}

/*
 * Free x and everything below it that nothing else holds: the last
 * reference to a tree node drops one on each child, and, in a tree that
 * owns its zone nodes, on each of them (znode_drop; defer: the change
 * being applied frees its own later).
 */
static void zt_unref(zt_node_t *x, const ztree_t *t, zlin_t *lin, bool defer)
{
	/* release: this thread's reads of x come before another's free of it */
	if (__atomic_fetch_sub(&x->refs, 1, __ATOMIC_ACQ_REL) != 1)
		return;
	for (uint16_t i = 0; i < x->count; i++) {
		if (!x->leaf)
			zt_unref(kids(x)[i], t, lin, defer);
		else if (t->owns)
			znode_drop(lin, x->key[i], defer);
	}
	zt_drop(x, lin);
}

void ztree_release(ztree_t *t, zlin_t *lin, bool defer)
{
	if (t->root)
		zt_unref(t->root, t, lin, defer);
	t->root = NULL;
	t->count = 0;
	t->height = 0;
}

/*
 * Free a tree no other version shares (the last version of its lineage):
 * no counts to look at. With nodes, the heap blocks among its zone nodes
 * go too (the arena's go with the arena).
 */
static void zt_free_tree(zt_node_t *x, const ztree_t *t, zlin_t *lin, bool nodes)
{
	for (uint16_t i = 0; i < x->count; i++) {
		if (!x->leaf)
			zt_free_tree(kids(x)[i], t, lin, nodes);
		else if (nodes && (x->key[i]->flags & ZNODE_HEAP))
			znode_free(lin, (znode_t *)x->key[i]);
	}
	if (!x->arena)
		free(x); /* the arena's go with it: the lineage ends */
}

void ztree_free_alone(ztree_t *t, zlin_t *lin, bool heap_nodes)
{
	if (t->root)
		zt_free_tree(t->root, t, lin, heap_nodes && t->owns);
	t->root = NULL;
	t->count = 0;
	t->height = 0;
}

/* Octets of the tree nodes below x from malloc (the arena's are the lineage's). */
static size_t zt_memory(const zt_node_t *x)
{
	size_t n = x->arena ? 0 : zt_size(x->leaf, x->cap);
	for (uint16_t i = 0; !x->leaf && i < x->count; i++)
		n += zt_memory(kids(x)[i]);
	return n;
}

size_t ztree_memory(const ztree_t *t)
{
	return t->root ? zt_memory(t->root) : 0;
}

/* ---- changing ---- */

/*
 * Make *at writable by the change w: a tree node of another change (or
 * of a build's arena) is copied (its children, or owned zone nodes, get
 * one more holder: the copy) and the copy takes its place; the original
 * loses the holder it had in *at, which its other holders keep alive. A
 * leaf's copy has room for one entry more (leaf_room makes more).
 */
static int own(zt_node_t **at, const ztree_t *t, const zwrite_t *w)
{
	zt_node_t *x = *at;
	if (x->gen == w->gen && !x->arena)
		return 0;
	unsigned cap = x->leaf && x->count < ZT_CAP ? x->count + 1u : ZT_CAP;
	zt_node_t *c = zt_alloc(x->leaf, cap, w->gen, NULL);
	if (!c)
		return SHOAL_ENOMEM;
	c->count = x->count;
	memcpy(c->key, x->key, x->count * sizeof(x->key[0]));
	if (!x->leaf)
		memcpy(kids(c), kids(x), x->count * sizeof(kids(x)[0]));
	for (uint16_t i = 0; i < c->count; i++) {
		if (!c->leaf)
			__atomic_fetch_add(&kids(c)[i]->refs, 1, __ATOMIC_RELAXED);
		else if (t->owns)
			__atomic_fetch_add(&((znode_t *)c->key[i])->refs, 1, __ATOMIC_RELAXED);
	}
	*at = c;
	zt_unref(x, t, w->lin, true);
	return 0;
}

/*
 * Room for need entries in the writable leaf *at: moved to a bigger
 * block (twice the room, at most ZT_CAP) when it has less. Its parent
 * (or the tree's root) is its one holder: *at is the one pointer to it.
 */
static int leaf_room(zt_node_t **at, unsigned need)
{
	zt_node_t *x = *at;
	assert(x->leaf && !x->arena && need <= ZT_CAP);
	if (need <= x->cap)
		return 0;
	unsigned cap = 2u * x->cap > need ? 2u * x->cap : need;
	cap = cap < ZT_CAP ? cap : ZT_CAP;
	zt_node_t *y = realloc(x, zt_size(true, cap));
	if (!y)
		return SHOAL_ENOMEM;
	y->cap = (uint8_t)cap;
	*at = y;
	return 0;
}

/* Move x's entries [from, count) to the empty node y (of the same kind, room enough). */
static void move_tail(zt_node_t *x, uint16_t from, zt_node_t *y)
{
	uint16_t n = (uint16_t)(x->count - from);
	memcpy(y->key, x->key + from, n * sizeof(x->key[0]));
	if (!x->leaf)
		memcpy(kids(y), kids(x) + from, n * sizeof(kids(x)[0]));
	y->count = (uint8_t)n;
	x->count = (uint8_t)from;
}

/* Open a gap at i in x (room for one more). */
static void open_at(zt_node_t *x, uint16_t i)
{
	assert(x->count < x->cap);
	memmove(x->key + i + 1, x->key + i, (x->count - i) * sizeof(x->key[0]));
	if (!x->leaf)
		memmove(kids(x) + i + 1, kids(x) + i, (x->count - i) * sizeof(kids(x)[0]));
	x->count++;
}

/* Close the entry at i in x. */
static void close_at(zt_node_t *x, uint16_t i)
{
	x->count--;
	memmove(x->key + i, x->key + i + 1, (x->count - i) * sizeof(x->key[0]));
	if (!x->leaf)
		memmove(kids(x) + i, kids(x) + i + 1, (x->count - i) * sizeof(kids(x)[0]));
}

/* Move n entries from the front of r (same kind) to the end of l. */
static void shift_left(zt_node_t *l, zt_node_t *r, uint16_t n)
{
	memcpy(l->key + l->count, r->key, n * sizeof(r->key[0]));
	memmove(r->key, r->key + n, (r->count - n) * sizeof(r->key[0]));
	if (!l->leaf) {
		memcpy(kids(l) + l->count, kids(r), n * sizeof(kids(r)[0]));
		memmove(kids(r), kids(r) + n, (r->count - n) * sizeof(kids(r)[0]));
	}
	l->count = (uint8_t)(l->count + n);
	r->count = (uint8_t)(r->count - n);
}

/*
 * The writable children i and i + 1 of x (each with room for ZT_FAN):
 * one below ZT_MIN; merged or evened out.
 */
static void rebalance(zt_node_t *x, uint16_t i)
{
	zt_node_t *l = kids(x)[i], *r = kids(x)[i + 1];
	if (l->count + r->count <= ZT_FAN) {
		shift_left(l, r, r->count);
		free(r); /* written by this change: x was its one holder */
		close_at(x, (uint16_t)(i + 1));
		return;
	}
	uint16_t total = (uint16_t)(l->count + r->count), want = total / 2;
	if (l->count > want) {
		uint16_t n = (uint16_t)(l->count - want);
		memmove(r->key + n, r->key, r->count * sizeof(r->key[0]));
		memcpy(r->key, l->key + want, n * sizeof(r->key[0]));
		if (!r->leaf) {
			memmove(kids(r) + n, kids(r), r->count * sizeof(kids(r)[0]));
			memcpy(kids(r), kids(l) + want, n * sizeof(kids(r)[0]));
		}
		r->count = (uint8_t)(r->count + n);
		l->count = (uint8_t)want;
	} else {
		shift_left(l, r, (uint16_t)(want - l->count));
	}
	x->key[i + 1] = r->key[0];
}

/* Child i of x is below ZT_MIN (x has two children or more): take a neighbour to it. */
static int fix_underflow(zt_node_t *x, uint16_t i, const ztree_t *t, const zwrite_t *w)
{
	uint16_t l = i > 0 ? (uint16_t)(i - 1) : i;
	int err = 0;
	for (uint16_t k = l; k <= l + 1 && err == 0; k++) {
		err = own(&kids(x)[k], t, w);
		if (err == 0 && kids(x)[k]->leaf)
			err = leaf_room(&kids(x)[k], ZT_FAN);
	}
	if (err == 0)
		rebalance(x, l);
	return err;
}

/* The leaf step of set: n replaces, joins or (NULL) leaves the entries at k in *at. */
static int leaf_set(zt_node_t **at, const zkey_t *k, const znode_t *n, ztree_t *t,
		    const zwrite_t *w, zt_node_t **split)
{
	zt_node_t *x = *at;
	int i = last_le(x, k);
	bool found = i >= 0 && cmp(k, x->key[i]) == 0;
	if (found) {
		const znode_t *old = x->key[i];
		if (n && t->owns)
			__atomic_fetch_add(&((znode_t *)n)->refs, 1, __ATOMIC_RELAXED);
		if (n)
			x->key[i] = n;
		else
			close_at(x, (uint16_t)i);
		if (t->owns)
			znode_drop(w->lin, old, true);
		t->count -= n ? 0 : 1;
		return 0;
	}
	if (!n)
		return 0;
	if (leaf_room(at, x->count + 1u) < 0)
		return SHOAL_ENOMEM;
	x = *at;
	if (t->owns)
		__atomic_fetch_add(&((znode_t *)n)->refs, 1, __ATOMIC_RELAXED);
	open_at(x, (uint16_t)(i + 1));
	x->key[i + 1] = n;
	t->count++;
	if (x->count <= ZT_FAN)
		return 0;
	/* one over: the upper half goes to a new right sibling */
	zt_node_t *y = zt_new(true, w->gen);
	if (!y)
		return SHOAL_ENOMEM; /* x keeps the one over: the change is abandoned anyway */
	move_tail(x, x->count / 2, y);
	*split = y;
	return 0;
}

/*
 * Set k to n (NULL: remove k) below the writable node *at. A node that
 * fills up is split and the new right half handed up in *split; the
 * parent evens out a child that fell below ZT_MIN. A leaf that needs
 * room moves: *at follows it.
 */
static int zt_set(zt_node_t **at, const zkey_t *k, const znode_t *n, ztree_t *t, const zwrite_t *w,
		  zt_node_t **split)
{
	*split = NULL;
	zt_node_t *x = *at;
	if (x->leaf)
		return leaf_set(at, k, n, t, w, split);
	int le = last_le(x, k);
	uint16_t i = (uint16_t)(le < 0 ? 0 : le);
	if (le < 0 && !n)
		return 0; /* before everything: nothing to remove */
	zt_node_t *right = NULL;
	int err = own(&kids(x)[i], t, w);
	if (err == 0)
		err = zt_set(&kids(x)[i], k, n, t, w, &right);
	if (err < 0)
		return err;
	zt_node_t *c = kids(x)[i];
	if (c->count)
		x->key[i] = c->key[0];
	if (right) {
		open_at(x, (uint16_t)(i + 1));
		kids(x)[i + 1] = right;
		x->key[i + 1] = right->key[0];
		if (x->count > ZT_FAN) {
			zt_node_t *y = zt_new(false, w->gen);
			if (!y)
				return SHOAL_ENOMEM;
			move_tail(x, x->count / 2, y);
			*split = y;
		}
	} else if (c->count < ZT_MIN && x->count > 1) {
		err = fix_underflow(x, i, t, w);
	}
	return err;
}

int ztree_set(ztree_t *t, const zkey_t *k, const znode_t *n, const zwrite_t *w)
{
	if (!t->root) {
		if (!n)
			return 0;
		/* a tree a change starts: room for the one node, more as it comes */
		if (!(t->root = zt_alloc(true, 1, w->gen, NULL)))
			return SHOAL_ENOMEM;
		t->height = 1;
	}
	int err = own(&t->root, t, w);
	zt_node_t *right = NULL;
	if (err == 0)
		err = zt_set(&t->root, k, n, t, w, &right);
	if (err < 0)
		return err;
	if (right) {
		zt_node_t *top = zt_new(false, w->gen);
		if (!top) {
			/* keep the tree whole: the new half under a root of its own is lost */
			zt_unref(right, t, w->lin, true);
			return SHOAL_ENOMEM;
		}
		kids(top)[0] = t->root;
		top->key[0] = t->root->key[0];
		kids(top)[1] = right;
		top->key[1] = right->key[0];
		top->count = 2;
		t->root = top;
		t->height++;
	}
	/* an inner root with one child gives way to it; an empty leaf root goes */
	while (t->root && !t->root->leaf && t->root->count == 1) {
		zt_node_t *only = kids(t->root)[0];
		free(t->root); /* written by this change: the version was its holder */
		t->root = only;
		t->height--;
	}
	if (t->root && t->root->count == 0) {
		free(t->root);
		t->root = NULL;
		t->height = 0;
	}
	return 0;
}
