/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Changesets applied to a version: the next one, sharing every piece the changes leave alone. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "proto/wire.h"
#include "zone/apply.h"
#include "zone/internal.h"
#include "zone/slab.h"

/*
 * How a change is applied (zone_apply), in steps over what it touches:
 *
 *  1. records: each name the changesets name gets its records after them
 *     (those of the version served, the deletions replayed, the additions
 *     added), into a builder that checks them as a load does;
 *  2. contents: one new node for each such name that keeps records;
 *  3. structure: each new node takes its name's place in the tree of
 *     names and the index (the tree nodes and pages on the way copied);
 *     a name left without records goes, or stays as an empty
 *     non-terminal while names lie below it, and empty non-terminals
 *     come and go with the names below them;
 *  4. flags: every name touched, the parents of wildcards touched and,
 *     where a cut or DNAME came or went, the names below it, get their
 *     flags again (a node whose flags change is copied);
 *  5. DNSSEC: the tree of NSEC owners, or the links between names and
 *     their NSEC3 owners (both sides copied when one changes);
 *  6. the apex, the negative SOA, the counts.
 *
 * Every name whose node in the new version is not base's is "touched".
 * Every tree and the index always point at a name's current node: a node
 * replaced is replaced in all of them at once (put_name).
 */

typedef struct apply {
	const zone_t *base;
	zone_t *z; /* the version being made */
	zwrite_t w;
	const zone_apply_opts_t *o;
	zone_limits_t limits;
	char apex_text[NAME_TEXT_MAX];
	xfr_ops_t ops;
	zmerge_t merge; /* its builder: the records of the names touched */
	/* every node this change made (freed when unheld at the end), step 2's first */
	znode_t **made;
	size_t made_count, made_cap;
	size_t content_count; /* made[0..content_count): step 2's, in canonical order */
	/*
	 * Names touched: their octets one after another, and where each
	 * begins. No keys: name_compare orders names as their keys do.
	 */
	uint8_t *names;
	size_t names_len, names_cap;
	uint32_t *touched;
	size_t touched_count, touched_cap;
	ptrdiff_t rr_delta; /* records of the new version against base's */
	bool whole;         /* cannot be done in place: build it whole */
} apply_t;

/*
 * *p with room for need elements of elem octets: exactly need the first
 * time (the names step 1 touches and the nodes it makes are counted
 * first), an eighth more (and 64) after, so a few more do not double what
 * was sized.
 */
static bool grow_to(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? need + need / 8 + 64 : need;
	void *q = realloc(*p, n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static bool push(void **p, size_t *count, size_t *cap, size_t elem, const void *item)
{
	if (!grow_to(p, cap, *count + 1, elem))
		return false;
	memcpy((uint8_t *)*p + *count * elem, item, elem);
	(*count)++;
	return true;
}

/* Note name as touched (a name may be noted twice: sort_touched keeps one). */
static int touch(apply_t *a, const uint8_t *name)
{
	size_t len = name_length(name);
	if (a->names_len + len > UINT32_MAX ||
	    !grow_to((void **)&a->names, &a->names_cap, a->names_len + len, 1) ||
	    !grow_to((void **)&a->touched, &a->touched_cap, a->touched_count + 1,
		     sizeof(*a->touched)))
		return SHOAL_ENOMEM;
	memcpy(a->names + a->names_len, name, len);
	a->touched[a->touched_count++] = (uint32_t)a->names_len;
	a->names_len += len;
	return 0;
}

static const uint8_t *touched_name(const apply_t *a, size_t i)
{
	return a->names + a->touched[i];
}

/* The names and their octets step 1 touches: the apex and each owner of the ops once. */
static int size_touched(apply_t *a)
{
	const xfr_ops_t *ops = &a->ops;
	const uint8_t *apex = znode_name(a->base->apex);
	bool apex_op = ops->count && name_equal(ops->ops[0].owner, apex);
	size_t count = !apex_op, octets = apex_op ? 0 : a->base->apex->name_len;
	for (size_t i = 0; i < ops->count; i++)
		if (i == 0 || !name_equal(ops->ops[i - 1].owner, ops->ops[i].owner)) {
			count++;
			octets += name_length(ops->ops[i].owner);
		}
	a->names = malloc(octets);
	a->touched = malloc(count * sizeof(*a->touched));
	if (!a->names || !a->touched)
		return SHOAL_ENOMEM;
	a->names_cap = octets;
	a->touched_cap = count;
	return 0;
}

static int made(apply_t *a, znode_t *n)
{
	return push((void **)&a->made, &a->made_count, &a->made_cap, sizeof(n), &n) ? 0
										    : SHOAL_ENOMEM;
}

/* ---- 1. records ---- */

/* Step 1: every name the changes name, the apex first, into the builder; each touched. */
static int records(apply_t *a)
{
	const uint8_t *apex = znode_name(a->base->apex);
	const xfr_ops_t *ops = &a->ops;
	int err = size_touched(a);
	size_t i = 0;
	if (err == 0 && (!ops->count || !name_equal(ops->ops[0].owner, apex))) {
		/* the SOA changes whatever else does */
		err = zmerge_name(&a->merge, apex, a->base->apex, &i);
		if (err == 0)
			err = touch(a, apex);
	}
	for (size_t step = 1; err == 0 && i < ops->count; step++) {
		if (zone_stop_at(a->o->cancel, step))
			return SHOAL_ETIMEOUT;
		const uint8_t *owner = ops->ops[i].owner;
		if ((err = zmerge_inside(&a->merge, i)) < 0)
			return err;
		if ((err = zmerge_name(&a->merge, owner, zone_lookup(a->base, owner), &i)) == 0)
			err = touch(a, owner);
	}
	return err;
}

/* ---- 2. contents ---- */

static int take_content(void *arg, znode_t *n)
{
	apply_t *a = arg;
	assert(a->made_count == a->content_count); /* step 2 makes no other node */
	int err = made(a, n);
	if (err < 0) {
		/* not held by anything yet: nothing else frees it */
		znode_free(a->w.lin, n);
		return err;
	}
	a->content_count++;
	/* a chain owner is one by what it holds: known now, as its hash */
	if (a->base->denial == ZONE_DENIAL_NSEC3)
		zone_nsec3_owner(a->base, n);
	return 0;
}

static bool same_wire(const rrset_wire_t *x, const rrset_wire_t *y)
{
	if (!x || !y)
		return x == y;
	return x->type == y->type && x->data_len == y->data_len &&
	       memcmp(x->data, y->data, x->data_len) == 0;
}

/* Whether nodes a and b hold the same records (TTLs included): a change that changed nothing. */
static bool same_records(const znode_t *a, const znode_t *b)
{
	if (a->rrset_count != b->rrset_count)
		return false;
	for (uint16_t k = 0; k < a->rrset_count; k++)
		if (!same_wire(&znode_rrsets(a)[k].set, &znode_rrsets(b)[k].set) ||
		    !same_wire(znode_rrsets(a)[k].sigs, znode_rrsets(b)[k].sigs))
			return false;
	return true;
}

/* Records of node n. */
static size_t node_records(const znode_t *n)
{
	size_t count = 0;
	for (uint16_t i = 0; i < n->rrset_count; i++)
		count += znode_rrsets(n)[i].set.rr_count;
	return count;
}

/* ---- 3. structure ---- */

/*
 * Make n (NULL: nothing) the node of name in every structure of the new
 * version: the tree of names, the index, the NSEC3 chain (by the flags
 * the nodes have: a chain owner is one by its records) and, where the
 * name is already there, the tree of NSEC owners (step 5 settles who
 * belongs there). The caller touches the name, or step 1 did.
 */
static int place(apply_t *a, const uint8_t *name, const znode_t *n)
{
	zone_t *z = a->z;
	const znode_t *was = z->denial == ZONE_DENIAL_NSEC3 ? zone_lookup(z, name) : NULL;
	zkey_t k;
	zkey_name(&k, name);
	int err = ztree_set(&z->names, &k, n, &a->w);
	if (err == 0)
		err = zhash_put(z, name, n, &a->w);
	if (err == 0 && z->denial == ZONE_DENIAL_NSEC && ztree_find(&z->nsec, &k))
		err = ztree_set(&z->nsec, &k, n, &a->w);
	if (err == 0 && was && (was->flags & ZNODE_CHAIN)) {
		zkey_t h;
		zkey_hash(&h, znode_hash(was));
		err = ztree_set(&z->nsec3.chain, &h, NULL, &a->w);
	}
	if (err == 0 && n && (n->flags & ZNODE_CHAIN)) {
		zkey_t h;
		zkey_hash(&h, znode_hash(n));
		err = ztree_set(&z->nsec3.chain, &h, n, &a->w);
	}
	return err;
}

/* place, and the name touched. */
static int put_name(apply_t *a, const uint8_t *name, const znode_t *n)
{
	int err = place(a, name, n);
	return err == 0 ? touch(a, name) : err;
}

static znode_t *writable(apply_t *a, const znode_t *n);

/*
 * The copy c of n took n's place: a current partner that pointed at n
 * (its NSEC3 the way back, or its name the link) is made writable too and
 * pointed at c. A partner no longer current is left to step 5, which
 * links every name touched again.
 */
static int repoint(apply_t *a, znode_t *c, const znode_t *n)
{
	const znode_t *x = (c->flags & ZNODE_LINKED) ? *znode_link(c) : NULL;
	if (x && (x->flags & ZNODE_HASHED) && *znode_back(x) == n &&
	    zone_lookup(a->z, znode_name(x)) == x) {
		znode_t *wx = writable(a, x);
		if (!wx)
			return SHOAL_ENOMEM;
		zone_nsec3_link(c, wx);
	}
	const znode_t *m = (c->flags & ZNODE_HASHED) ? *znode_back(c) : NULL;
	if (m && (m->flags & ZNODE_LINKED) && zone_nsec3_match(NULL, m) == n &&
	    zone_lookup(a->z, znode_name(m)) == m) {
		znode_t *wm = writable(a, m);
		if (!wm)
			return SHOAL_ENOMEM;
		zone_nsec3_link(wm, c);
	}
	return 0;
}

/* n, writable by this change: n itself when it made n, otherwise a copy put in its place. */
static znode_t *writable(apply_t *a, const znode_t *n)
{
	if (n->flags & ZNODE_FRESH)
		return (znode_t *)n;
	znode_t *c = znode_copy(a->w.lin, n);
	if (!c)
		return NULL;
	if (made(a, c) < 0) {
		znode_free(a->w.lin, c);
		return NULL;
	}
	if (put_name(a, znode_name(c), c) < 0 || repoint(a, c, n) < 0)
		return NULL;
	return c;
}

/* Whether a name lies below `name` in the new version. */
static bool has_child(const apply_t *a, const uint8_t *name)
{
	zkey_t k;
	zkey_name(&k, name);
	zone_iter_t it;
	const znode_t *next = ztree_seek_gt(&a->z->names, &k, &it);
	return next && name_is_subdomain(znode_name(next), name);
}

/* An empty non-terminal of name placed in the new version (not touched); 0 or SHOAL_ENOMEM. */
static int put_ent(apply_t *a, const uint8_t *name)
{
	znode_t *ent = zbuild_ent(a->w.lin, name, a->z->denial == ZONE_DENIAL_NSEC3);
	if (!ent || made(a, ent) < 0) {
		if (ent)
			znode_free(a->w.lin, ent);
		return SHOAL_ENOMEM;
	}
	return place(a, name, ent);
}

/* Every ancestor of name below the apex a node: the missing ones made empty non-terminals. */
static int ensure_ancestors(apply_t *a, const uint8_t *name)
{
	size_t apex_len = a->z->apex->name_len;
	int err = 0;
	for (const uint8_t *p = name; err == 0 && name_length(p) > apex_len;) {
		p += p[0] + 1;
		if (name_length(p) <= apex_len || zone_lookup(a->z, p))
			break; /* its ancestors are nodes too */
		err = put_ent(a, p);
		if (err == 0)
			err = touch(a, p);
	}
	return err;
}

/*
 * name keeps no records: it goes, or, with names below it, stays as an
 * empty non-terminal; then each empty non-terminal above it left with
 * nothing below goes too.
 */
static int remove_name(apply_t *a, const uint8_t *name)
{
	const znode_t *n = zone_lookup(a->z, name);
	if (!n)
		return 0; /* added and deleted again by the changes */
	/* step 1 touched name */
	if (has_child(a, name))
		return n->rrset_count ? put_ent(a, name) : 0;
	int err = place(a, name, NULL);
	const uint8_t *apex = znode_name(a->z->apex);
	for (const uint8_t *p = name + name[0] + 1; err == 0 && !name_equal(p, apex);
	     p += p[0] + 1) {
		const znode_t *up = zone_lookup(a->z, p);
		if (!up || up->rrset_count || has_child(a, p))
			break;
		err = put_name(a, p, NULL);
	}
	return err;
}

/* Step 3: each name with records in the changes takes its new node; the others go. */
static int structure(apply_t *a)
{
	size_t c = 0, count = a->touched_count;
	int err = 0;
	for (size_t i = 0; err == 0 && i < count; i++) {
		if (zone_stop_at(a->o->cancel, i + 1))
			return SHOAL_ETIMEOUT;
		uint8_t name[NAME_MAXLEN];
		memcpy(name, touched_name(a, i),
		       name_length(touched_name(a, i))); /* touch() may move it */
		const znode_t *old = zone_lookup(a->base, name);
		a->rr_delta -= old ? (ptrdiff_t)node_records(old) : 0;
		if (c < a->content_count && name_equal(znode_name(a->made[c]), name)) {
			znode_t *n = a->made[c++];
			a->rr_delta += (ptrdiff_t)node_records(n);
			/* deleted and added back: the node stays, the new one goes */
			if (old && same_records(old, n))
				continue;
			err = ensure_ancestors(a, name);
			if (err == 0)
				err = place(a, name, n); /* step 1 touched it */
		} else {
			err = remove_name(a, name);
		}
	}
	/* the builder keeps names in the changes' order: each found its own */
	return err == 0 && c != a->content_count ? SHOAL_EINVAL : err;
}

/* ---- 4. flags ---- */

/* The flags node n of name should have in the new version (but the chain's). */
static uint16_t flags_for(const apply_t *a, const znode_t *n)
{
	const uint8_t *name = znode_name(n);
	bool apex = n->labels == a->z->apex->labels;
	uint16_t keep =
		ZNODE_LINKED | ZNODE_HASHED | ZNODE_CHAIN | ZNODE_NSEC3 | ZNODE_HEAP | ZNODE_FRESH;
	uint16_t f = (uint16_t)((n->flags & keep) | znode_own_flags(n, apex));
	if (!apex) {
		const znode_t *p = zone_parent(a->z, n);
		if (p && zflags_hide_below(p->flags))
			f |= ZNODE_OCCLUDED;
	}
	if (n->name_len + 2 <= NAME_MAXLEN) {
		uint8_t wild[NAME_MAXLEN] = { 1, '*' };
		memcpy(wild + 2, name, n->name_len);
		if (zone_lookup(a->z, wild))
			f |= ZNODE_WILDCARD_CHILD;
	}
	return f;
}

/*
 * The node of name gets its flags again. *below: whether what hides the
 * names below it changed from base (a cut or DNAME came or went above
 * them), so that they get theirs again too.
 */
static int reflag(apply_t *a, const uint8_t *name, bool *below)
{
	*below = false;
	const znode_t *n = zone_lookup(a->z, name);
	if (!n)
		return 0;
	uint16_t f = flags_for(a, n);
	if (f != n->flags) {
		znode_t *m = writable(a, n);
		if (!m)
			return SHOAL_ENOMEM;
		/* where its block came from is the copy's own */
		const uint16_t own = ZNODE_HEAP | ZNODE_FRESH;
		m->flags = (uint16_t)((f & ~own) | (m->flags & own));
		n = m;
	}
	const znode_t *old = zone_lookup(a->base, name);
	*below = old && zflags_hide_below(old->flags) != zflags_hide_below(n->flags);
	return 0;
}

/* Every name below `name`, in canonical order (parents first), gets its flags again. */
static int reflag_below(apply_t *a, const uint8_t *name)
{
	uint8_t at[NAME_MAXLEN];
	memcpy(at, name, name_length(name));
	for (size_t step = 1;; step++) {
		if (zone_stop_at(a->o->cancel, step))
			return SHOAL_ETIMEOUT;
		/* by name, not by a walk kept over changes: a copy changes the tree */
		zkey_t k;
		zkey_name(&k, at);
		zone_iter_t it;
		const znode_t *next = ztree_seek_gt(&a->z->names, &k, &it);
		if (!next || !name_is_subdomain(znode_name(next), name))
			return 0;
		memcpy(at, znode_name(next), next->name_len);
		bool ignored;
		int err = reflag(a, at, &ignored);
		if (err < 0)
			return err;
	}
}

static int touched_cmp(const void *x, const void *y, void *arg)
{
	const apply_t *a = arg;
	return name_compare(a->names + *(const uint32_t *)x, a->names + *(const uint32_t *)y);
}

/* The touched names in canonical order, each once. */
static void sort_touched(apply_t *a)
{
	/* in order already, as a rule: step 1 touches names in that order, once each */
	bool sorted = true;
	for (size_t i = 1; i < a->touched_count && sorted; i++)
		sorted = touched_cmp(&a->touched[i - 1], &a->touched[i], a) < 0;
	if (sorted)
		return;
	qsort_r(a->touched, a->touched_count, sizeof(*a->touched), touched_cmp, a);
	size_t k = 0;
	for (size_t i = 0; i < a->touched_count; i++)
		if (k == 0 || touched_cmp(&a->touched[k - 1], &a->touched[i], a) != 0)
			a->touched[k++] = a->touched[i];
	a->touched_count = k;
}

/* Step 4: flags of the names touched, of the parents of wildcards, below changed cuts. */
static int flags(apply_t *a)
{
	/* a wildcard touched changes its parent's flag */
	size_t count = a->touched_count;
	for (size_t i = 0; i < count; i++) {
		const uint8_t *name = touched_name(a, i);
		if (name_is_wildcard(name)) {
			uint8_t parent[NAME_MAXLEN];
			memcpy(parent, name + 2, name_length(name + 2));
			if (touch(a, parent) < 0)
				return SHOAL_ENOMEM;
		}
	}
	sort_touched(a);
	count = a->touched_count;
	const uint8_t *swept = NULL; /* the last name whose names below were all done */
	uint8_t swept_name[NAME_MAXLEN];
	for (size_t i = 0; i < count; i++) {
		uint8_t name[NAME_MAXLEN];
		memcpy(name, touched_name(a, i), name_length(touched_name(a, i)));
		if (swept && name_is_subdomain(name, swept))
			continue;
		bool below;
		int err = reflag(a, name, &below);
		if (err == 0 && below) {
			memcpy(swept_name, name, sizeof(name));
			swept = swept_name;
			err = reflag_below(a, name);
		}
		if (err < 0)
			return err;
	}
	return 0;
}

/* ---- 5. DNSSEC ---- */

/* Step 5, NSEC: the names touched join or leave the tree of NSEC owners. */
static int nsec_owners(apply_t *a)
{
	sort_touched(a);
	for (size_t i = 0; i < a->touched_count; i++) {
		const uint8_t *name = touched_name(a, i);
		const znode_t *n = zone_lookup(a->z, name);
		zkey_t k;
		zkey_name(&k, name);
		bool want = n && znode_nsec_owner(n);
		int err = 0;
		if (want)
			err = ztree_set(&a->z->nsec, &k, n, &a->w);
		else if (ztree_find(&a->z->nsec, &k))
			err = ztree_set(&a->z->nsec, &k, NULL, &a->w);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Whether name node n counts as unmatched: it should have an NSEC3 and has none. */
static bool unmatched(const znode_t *n)
{
	return n && znode_matchable(n) && !zone_nsec3_match(NULL, n);
}

/* A touched name's NSEC3 hash and node (which may not be matchable), for chain owners. */
typedef struct hashed {
	uint8_t hash[ZONE_NSEC3_HASH_LEN];
	const znode_t *node;
} hashed_t;

typedef struct hashes {
	hashed_t *h;
	size_t count, cap;
} hashes_t;

/* The NSEC3 hash of name n: from base's link where it had one, otherwise hashed. */
static void name_hash3(const apply_t *a, const znode_t *n, uint8_t h[ZONE_NSEC3_HASH_LEN])
{
	const znode_t *old = zone_lookup(a->base, znode_name(n));
	const znode_t *x = old ? zone_nsec3_match(a->base, old) : NULL;
	if (x)
		memcpy(h, znode_hash(x), ZONE_NSEC3_HASH_LEN);
	else
		zone_nsec3_hash(a->z, znode_name(n), h);
}

/* Link n to x (NULL: n has no NSEC3) and x back to n, copying what must change. */
static int link_pair(apply_t *a, const znode_t *n, const znode_t *x)
{
	if (zone_nsec3_match(a->z, n) == x && (!x || *znode_back(x) == n))
		return 0;
	/* by name: making one writable may have copied the other already */
	znode_t *wn = writable(a, n);
	znode_t *wx = x && wn ? writable(a, zone_lookup(a->z, znode_name(x))) : NULL;
	if (!wn || (x && !wx))
		return SHOAL_ENOMEM;
	zone_nsec3_link((znode_t *)zone_lookup(a->z, znode_name(wn)), wx);
	return 0;
}

/* A name node: linked to the chain owner of its hash (none when it has no NSEC3 of its own). */
static int link_name(apply_t *a, const znode_t *n, hashes_t *l)
{
	if (n->flags & ZNODE_NSEC3)
		return 0; /* a pure chain owner is no name of the tree */
	hashed_t e = { .node = n };
	name_hash3(a, n, e.hash);
	if (!push((void **)&l->h, &l->count, &l->cap, sizeof(e), &e))
		return SHOAL_ENOMEM;
	if (!znode_matchable(n))
		return link_pair(a, n, NULL); /* occluded */
	return link_pair(a, n, zone_nsec3_owner_of(a->z, e.hash));
}

/*
 * A chain owner: its way back from the name of its hash. That name is one
 * of the touched (hashed in l), or, untouched, the one base linked it
 * from; an owner new to the chain with neither may have its name among
 * base's unmatched ones, which only a whole build finds.
 */
static int link_owner(apply_t *a, const znode_t *x, const hashes_t *l)
{
	bool known = false; /* the name of x's hash is among the touched */
	for (size_t i = 0; i < l->count && !known; i++)
		if (memcmp(l->h[i].hash, znode_hash(x), ZONE_NSEC3_HASH_LEN) == 0) {
			const znode_t *n = zone_lookup(a->z, znode_name(l->h[i].node));
			if (n && znode_matchable(n))
				return link_pair(a, n, x);
			known = true; /* occluded: it has no NSEC3 */
		}
	const znode_t *old = zone_lookup(a->base, znode_name(x));
	if (known) {
		/* x links back from nothing */
	} else if (old && (old->flags & ZNODE_CHAIN)) {
		const znode_t *was = *znode_back(old);
		const znode_t *n = was ? zone_lookup(a->z, znode_name(was)) : NULL;
		if (n && znode_matchable(n))
			return link_pair(a, n, x);
	} else if (a->base->nsec3.unmatched) {
		a->whole = true;
		return 0;
	}
	if (*znode_back(x) == NULL)
		return 0;
	znode_t *w = writable(a, x);
	if (!w)
		return SHOAL_ENOMEM;
	*znode_back(w) = NULL;
	return 0;
}

/* The names base linked the names touched to, and back: touched as well. */
static int touch_partners(apply_t *a)
{
	size_t count = a->touched_count;
	for (size_t i = 0; i < count; i++) {
		const znode_t *old = zone_lookup(a->base, touched_name(a, i));
		const znode_t *x = old ? zone_nsec3_match(a->base, old) : NULL;
		const znode_t *n = old && (old->flags & ZNODE_HASHED) ? *znode_back(old) : NULL;
		if ((x && touch(a, znode_name(x)) < 0) || (n && touch(a, znode_name(n)) < 0))
			return SHOAL_ENOMEM;
	}
	sort_touched(a);
	return 0;
}

/*
 * Step 5, NSEC3: the names touched and their partners in base (the NSEC3
 * owner a name linked to, the name an owner linked back from) get their
 * links again: names first (each hashed once, or its hash taken from
 * base's link), then the chain owners among them.
 */
static int nsec3_links(apply_t *a)
{
	if (!a->z->nsec3.chain.count) {
		a->whole = true; /* no chain left: the denial changes */
		return 0;
	}
	int err = touch_partners(a);
	hashes_t l = { 0 };
	for (int pass = 0; pass < 2 && err == 0 && !a->whole; pass++) {
		/* links copy nodes, which touches them: the names sorted are enough */
		size_t count = a->touched_count;
		for (size_t i = 0; i < count && err == 0 && !a->whole; i++) {
			const znode_t *n = zone_lookup(a->z, touched_name(a, i));
			if (!n || !(n->flags & ZNODE_LINKED))
				continue;
			if (pass == 0)
				err = link_name(a, n, &l);
			else if (n->flags & ZNODE_CHAIN)
				err = link_owner(a, n, &l);
		}
	}
	free(l.h);
	if (err < 0 || a->whole)
		return err;
	/* what was unmatched among them, and what is */
	sort_touched(a);
	size_t lost = 0, now = 0;
	for (size_t i = 0; i < a->touched_count; i++) {
		lost += unmatched(zone_lookup(a->base, touched_name(a, i)));
		now += unmatched(zone_lookup(a->z, touched_name(a, i)));
	}
	a->z->nsec3.unmatched = (uint32_t)(a->base->nsec3.unmatched - lost + now);
	return 0;
}

/* ---- 6. the version ---- */

/* RFC 9471: warn about the cuts touched whose in-domain name servers have no address. */
static void check_glue(apply_t *a)
{
	for (size_t i = 0; i < a->touched_count; i++) {
		const znode_t *n = zone_lookup(a->z, touched_name(a, i));
		if (!n || !(n->flags & ZNODE_DELEG) || (n->flags & ZNODE_OCCLUDED))
			continue;
		const zrrset_t *ns = znode_rrset(n, DNS_TYPE_NS);
		const uint8_t *rec = ns->set.data, *end = rec + ns->set.data_len;
		for (; rec + 10 <= end; rec += 10 + wire_get_u16(rec + 8)) {
			char text[NAME_TEXT_MAX], owner[NAME_TEXT_MAX];
			if (!zone_glue_missing(a->z, n, rec + 10, wire_get_u16(rec + 8), text))
				continue;
			if (name_to_text(znode_name(n), owner, sizeof(owner)) < 0)
				strcpy(owner, "?");
			zone_report(a->o->msg, a->o->msg_arg, false, a->o->label, 0,
				    "%s: no glue address for name server %s", owner, text);
		}
	}
}

/* The version being made: base's fields, its trees and index shared. */
static int version_from(apply_t *a)
{
	const zone_t *base = a->base;
	zone_t *z = zslab_alloc(sizeof(*z));
	if (!z)
		return SHOAL_ENOMEM;
	/* all but the count, which other threads change as they take and drop base */
	size_t at = offsetof(zone_t, refs), past = at + sizeof(z->refs);
	memcpy(z, base, at);
	memcpy((uint8_t *)z + past, (const uint8_t *)base + past, sizeof(*z) - past);
	z->refs = 1;
	/* base's own pieces stay base's: this version makes its own */
	z->arena = 0;
	z->neg_soa.data = NULL;
	z->neg_soa_sigs = NULL;
	z->hash = NULL;
	z->hash_pages = 0;
	__atomic_fetch_add(&z->lin->refs, 1, __ATOMIC_RELAXED);
	ztree_share(&z->names, &base->names);
	ztree_share(&z->nsec, &base->nsec);
	ztree_share(&z->nsec3.chain, &base->nsec3.chain);
	a->z = z;
	a->w = (zwrite_t){ zone_gen_next(), z->lin };
	return zhash_share(z, base);
}

/* The nodes this change made: done with (they stay where held), or freed. */
static void settle_made(apply_t *a)
{
	for (size_t i = 0; i < a->made_count; i++) {
		znode_t *n = a->made[i];
		if (__atomic_load_n(&n->refs, __ATOMIC_RELAXED) == 0)
			znode_free(a->w.lin, n);
		else
			n->flags &= (uint16_t)~ZNODE_FRESH;
	}
	a->made_count = 0;
}

/* Steps 3 to 6 on the nodes step 2 made. */
static int make_version(apply_t *a)
{
	int err = version_from(a);
	if (err == 0)
		err = structure(a);
	if (err == 0)
		err = flags(a);
	if (err == 0 && a->z->denial == ZONE_DENIAL_NSEC)
		err = nsec_owners(a);
	if (err == 0 && a->z->denial == ZONE_DENIAL_NSEC3)
		err = nsec3_links(a);
	if (err < 0 || a->whole)
		return err;
	zone_t *z = a->z;
	z->apex = zone_lookup(z, znode_name(a->base->apex));
	/* the salt lay in base's apex, which this version may no longer hold */
	if (z->denial == ZONE_DENIAL_NSEC3 && !zone_nsec3_params(z))
		return SHOAL_EINVAL; /* same_denial saw the same NSEC3PARAM: never */
	z->node_count = z->names.count;
	z->rr_count = (size_t)((ptrdiff_t)a->base->rr_count + a->rr_delta);
	z->loaded_at = time(NULL);
	if ((err = zone_neg_soa(z, NULL)) < 0)
		return err;
	if (!znode_rrset(z->apex, DNS_TYPE_NS))
		zone_report(a->o->msg, a->o->msg_arg, false, a->o->label, 0,
			    "no NS records at the zone apex %s", a->apex_text);
	check_glue(a);
	return 0;
}

/* ---- the one entry ---- */

/* A builder for the records the changes make (a's merge). 0 or SHOAL_ENOMEM. */
static int new_builder(apply_t *a)
{
	zbuild_free(a->merge.b);
	a->merge.b = zbuild_new(a->o->label, znode_name(a->base->apex), a->o->msg, a->o->msg_arg);
	if (!a->merge.b)
		return SHOAL_ENOMEM;
	zbuild_set_limits(a->merge.b, &a->limits);
	zbuild_watch(a->merge.b, a->o->cancel);
	return 0;
}

/* The version built whole from base's records and the changes: a new lineage. */
static int apply_whole(apply_t *a, zone_t **out)
{
	if (a->o->no_rebuild)
		return SHOAL_EUNSUPPORTED;
	int err = new_builder(a);
	if (err == 0)
		err = zmerge_whole(&a->merge);
	if (err < 0)
		return err;
	zbuild_t *b = a->merge.b;
	a->merge.b = NULL;
	return zbuild_finish(b, out);
}

/* Drop what an attempt in place made (the version with it): a whole build follows. */
static void drop_attempt(apply_t *a)
{
	/* the nodes nothing holds first: the version's free sees only held ones */
	for (size_t i = 0; i < a->made_count; i++)
		if (__atomic_load_n(&a->made[i]->refs, __ATOMIC_RELAXED) == 0)
			znode_free(a->base->lin, a->made[i]);
	a->made_count = a->content_count = a->touched_count = a->names_len = 0;
	zone_free(a->z);
	a->z = NULL;
}

static void apply_clear(apply_t *a)
{
	drop_attempt(a);
	zbuild_free(a->merge.b);
	zmerge_clear(&a->merge);
	xfr_ops_clear(&a->ops);
	free(a->made);
	free(a->names);
	free(a->touched);
}

/* The changes start at base's serial and follow each other. */
static bool consecutive(const zone_t *base, const changeset_t *const *sets, size_t n)
{
	if (n == 0 || sets[0]->from != base->serial)
		return false;
	for (size_t k = 1; k < n; k++)
		if (sets[k]->from != sets[k - 1]->to)
			return false;
	return true;
}

/* Whether the change can be made in place, before any of it is. */
static bool in_place(const apply_t *a)
{
	const zlin_t *lin = a->base->lin;
	size_t arena = zarena_size(lin->arena);
	/* half the build's nodes no version holds: time for a fresh arena */
	return __atomic_load_n(&lin->dead, __ATOMIC_RELAXED) <= arena / 2;
}

/*
 * Whether the apex node `now` keeps base's denial of existence (the same
 * NSEC3 parameters, NSEC still there or not).
 */
static bool denial_kept(const zone_t *base, const znode_t *now)
{
	const znode_t *old = base->apex;
	if (!now || now->labels != old->labels)
		return false;
	const zrrset_t *p = znode_rrset(old, DNS_TYPE_NSEC3PARAM);
	const zrrset_t *q = znode_rrset(now, DNS_TYPE_NSEC3PARAM);
	if ((p == NULL) != (q == NULL) ||
	    (p && (p->set.data_len != q->set.data_len ||
		   memcmp(p->set.data, q->set.data, p->set.data_len) != 0)))
		return false;
	bool nsec = znode_rrset(now, DNS_TYPE_NSEC) != NULL;
	switch (base->denial) {
	case ZONE_DENIAL_NSEC3:
		return true;
	case ZONE_DENIAL_NSEC:
		return nsec;
	default:
		return !nsec && !p;
	}
}

/* Whether the apex's new records keep base's denial: the apex is the first node step 2 made. */
static bool same_denial(const apply_t *a)
{
	return denial_kept(a->base, a->content_count ? a->made[0] : NULL);
}

/*
 * Before step 2, with the ops of step 1: whether nothing can send the
 * change to a whole build (then same_denial holds after step 2). Not in
 * an NSEC3 zone (step 5 may); not when the changes touch the apex's NSEC
 * or NSEC3PARAM (the apex's ops come first: its key is the least).
 */
static bool stays_in_place(const apply_t *a)
{
	if (a->base->denial == ZONE_DENIAL_NSEC3 || !denial_kept(a->base, a->base->apex))
		return false;
	const uint8_t *apex = znode_name(a->base->apex);
	for (size_t i = 0; i < a->ops.count && name_equal(a->ops.ops[i].owner, apex); i++) {
		uint16_t type = wire_get_u16(a->ops.ops[i].rr);
		if (type == DNS_TYPE_NSEC || type == DNS_TYPE_NSEC3PARAM)
			return false;
	}
	return true;
}

/* Steps 1 to 6: the version made in place, or a->whole set when it cannot be. */
static int apply_in_place(apply_t *a)
{
	int err = new_builder(a);
	if (err == 0)
		err = records(a);
	if (err < 0)
		return err;
	/*
	 * The builder and the names touched have what steps 2 to 6 need: the
	 * ops go before the nodes, tree nodes and pages are made (an IXFR of
	 * 100,000 changes: 12 MB less at the peak), and the changesets with
	 * them when no whole build can follow, which would collect them
	 * again (9 MB more).
	 */
	bool early = stays_in_place(a);
	xfr_ops_clear(&a->ops);
	zmerge_clear(&a->merge);
	zbuild_t *b = a->merge.b;
	a->merge.b = NULL;
	a->w.lin = a->base->lin;
	if (early && a->o->sets_read)
		a->o->sets_read(a->o->sets_arg);
	/* a node for each name step 1 touched, as a rule: the list sized for them */
	if (!grow_to((void **)&a->made, &a->made_cap, a->touched_count, sizeof(znode_t *))) {
		zbuild_free(b);
		return SHOAL_ENOMEM;
	}
	err = zbuild_nodes(b, a->base->lin, a->base->denial == ZONE_DENIAL_NSEC3, take_content, a);
	if (err == 0 && !same_denial(a)) {
		if (early)
			return SHOAL_EINVAL; /* stays_in_place saw the same apex records: never */
		a->whole = true;
	}
	return err == 0 && !a->whole ? make_version(a) : err;
}

int zone_apply(const zone_t *base, const changeset_t *const *sets, size_t n,
	       const zone_apply_opts_t *o, zone_t **out)
{
	*out = NULL;
	if (!consecutive(base, sets, n))
		return SHOAL_EINVAL;
	apply_t a = { .base = base, .o = o };
	a.limits = o->limits ? *o->limits : (zone_limits_t)ZONE_LIMITS_DEFAULT;
	if (name_to_text(znode_name(base->apex), a.apex_text, sizeof(a.apex_text)) < 0)
		strcpy(a.apex_text, "?");
	a.merge = (zmerge_t){ .base = base,
			      .ops = &a.ops,
			      .soa = xfr_part_soa(&sets[n - 1]->add),
			      .label = o->label,
			      .msg = o->msg,
			      .msg_arg = o->msg_arg };
	int err = xfr_ops_collect(sets, n, &a.ops) < 0 ? SHOAL_ENOMEM : 0;
	if (err == 0 && base->denial == ZONE_DENIAL_NSEC3 &&
	    base->nsec3.iterations > a.limits.max_nsec3_iterations) {
		/* a bound lowered since the version was loaded holds for its changes too */
		zone_report(o->msg, o->msg_arg, true, o->label, 0,
			    "%s: NSEC3PARAM asks for %u iterations, more than %u "
			    "(max-nsec3-iterations)",
			    a.apex_text, base->nsec3.iterations, a.limits.max_nsec3_iterations);
		err = SHOAL_EZONE;
	}
	a.whole = !in_place(&a);
	if (err == 0 && !a.whole)
		err = apply_in_place(&a);
	if (err == 0 && a.whole) {
		drop_attempt(&a);
		if (!a.ops.ops && xfr_ops_collect(sets, n, &a.ops) < 0)
			err = SHOAL_ENOMEM;
		if (err == 0)
			err = apply_whole(&a, out);
	} else if (err == 0) {
		settle_made(&a);
		*out = a.z;
		a.z = NULL;
	}
	apply_clear(&a);
	return err;
}
