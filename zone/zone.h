/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One version of a zone: nodes shared between versions, a paged hash index, ordered trees. */
#ifndef SHOAL_ZONE_ZONE_H
#define SHOAL_ZONE_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/name.h"
#include "proto/rrset.h"

/* Per node flags, set when the store is built or changed (never at query time). */
enum znode_flag {
	ZNODE_DATA = 0x01, /* has at least one RRset */
	ZNODE_APEX = 0x02,
	ZNODE_DELEG = 0x04,          /* NS below the apex: a zone cut (RFC 1034 4.2.1) */
	ZNODE_OCCLUDED = 0x08,       /* below a cut or a DNAME: not authoritative data */
	ZNODE_WILDCARD_CHILD = 0x10, /* "*.<this name>" exists (RFC 4592 2.2.1) */
	ZNODE_DNAME = 0x20,          /* has a DNAME RRset (RFC 6672) */
	ZNODE_CNAME = 0x40,          /* has a CNAME RRset */
	ZNODE_NSEC3 = 0x80,          /* an NSEC3 owner of the zone's chain: hidden from lookups */
	ZNODE_ANSWER_FLAGS = 0xff,   /* those above: what the answer reads */
	/* the store's own (zone/internal.h): where a block lies, what room it has */
	ZNODE_LINKED = 0x100, /* the block holds a link after the name (an NSEC3 zone's) */
	ZNODE_HASHED = 0x200, /* and a way back and an NSEC3 hash (a chain owner's place) */
	ZNODE_CHAIN = 0x400,  /* owns an NSEC3 of the zone's chain (with ZNODE_NSEC3 or not) */
	ZNODE_HEAP = 0x800,   /* a block of its own from malloc, not from the build's arena */
	ZNODE_FRESH = 0x1000, /* made by the change being applied, which may still write it */
};

/* How a signed zone proves that names and types do not exist. */
enum zone_denial {
	ZONE_DENIAL_NONE,  /* unsigned (or no chain): no proofs */
	ZONE_DENIAL_NSEC,  /* RFC 4035: NSEC at the apex */
	ZONE_DENIAL_NSEC3, /* RFC 5155: NSEC3PARAM at the apex and its chain */
};

#define ZONE_NSEC3_HASH_LEN 20 /* SHA-1, the only NSEC3 hash (RFC 5155 11) */

/*
 * An RRset of a node and the RRSIGs that cover it (by type covered), kept
 * side by side so DNSSEC can be served later. sigs is NULL when unsigned.
 */
typedef struct zrrset {
	rrset_wire_t set;
	const rrset_wire_t *sigs;
} zrrset_t;

/*
 * A name in the zone. An empty non-terminal (RFC 4592 2.2.2) is a node
 * without RRsets. Each node is one block (zone/build.c fill_node):
 *
 *   [RRSIG groups][RRsets][znode_t][owner][link, back, hash][name offsets][RR data]
 *
 * so the node, its owner name and the RRsets an answer reads next lie side
 * by side: a lookup that compares the name has them in the same lines.
 * The owner is canonical (lowercase) uncompressed wire form. A block is
 * never written once a version that holds it is published: a change makes
 * a new block for every node it changes, and versions share the others
 * (refs counts the versions' tree leaves that hold the node).
 */
typedef struct znode {
	unsigned refs; /* atomic; the store's (zone/internal.h) */
	uint32_t tail; /* octets of the block after this header */
	uint16_t rrset_count;
	uint16_t flags; /* enum znode_flag */
	uint8_t name_len;
	uint8_t labels;      /* not counting the root label */
	uint16_t sig_groups; /* RRSIG groups at the block's start */
} znode_t;
_Static_assert(sizeof(znode_t) == 16, "the owner name after the node is 8-aligned");

/* The owner name of node n: canonical (lowercase) uncompressed wire form. */
static inline const uint8_t *znode_name(const znode_t *n)
{
	return (const uint8_t *)(n + 1);
}

/* The RRsets of node n, ordered by type: rrset_count of them right before the node. */
static inline const zrrset_t *znode_rrsets(const znode_t *n)
{
	return (const zrrset_t *)(const void *)n - n->rrset_count;
}

/*
 * The hash index: pages of slots under a directory of the version. A
 * name's hash picks a page (its low half) and a slot in it; probing
 * stays inside the page, so a change copies only the pages whose slots
 * it writes, and versions share the others. A page holds
 * ZHASH_PAGE_SLOTS slots, or, in an index of one page (a small zone),
 * fewer: a power of 2 from ZHASH_SLOTS_MIN, the zone's hash_mask + 1.
 * A slot is 0 (empty), or the address of a node over 8 (ZHASH_REF_BITS
 * bits: nodes are 8-aligned) with the top 16 bits of the name's hash
 * above it: a lookup reads the node (and its name, right after it) only
 * on a tag match.
 */
#define ZHASH_PAGE_SLOTS 512
#define ZHASH_SLOTS_MIN  8
#define ZHASH_REF_BITS   48

typedef struct zhash_page {
	unsigned refs; /* atomic: the directories that hold the page */
	uint16_t used; /* slots in use */
	bool arena;    /* in the arena of the build that made it: never freed alone */
	uint64_t gen;  /* the change that may still write it */
	uint64_t slot[];
} zhash_page_t;

/* The tag of hash h as a slot keeps it: its upper 16 bits, to skip most compares. */
static inline uint64_t zhash_tag(uint64_t h)
{
	return h >> ZHASH_REF_BITS;
}

/* The node a slot points to. */
static inline const znode_t *zhash_node(uint64_t slot)
{
	return (const znode_t *)(uintptr_t)((slot & ((UINT64_C(1) << ZHASH_REF_BITS) - 1)) << 3);
}

/* The page of hash h in a directory of `pages` pages (Lemire's multiply-shift). */
static inline uint32_t zhash_page(uint64_t h, uint32_t pages)
{
	return (uint32_t)(((uint64_t)(uint32_t)h * pages) >> 32);
}

/*
 * The first slot of hash h in a page of mask + 1 slots: other bits than
 * the page's and the tag's.
 */
static inline uint32_t zhash_first_slot(uint64_t h, uint32_t mask)
{
	return (uint32_t)(h >> 32) & mask;
}

/*
 * An ordered set of nodes (zone/tree.c): a B+ tree whose tree nodes the
 * versions of a zone share. Read through the functions below.
 */
typedef struct zt_node zt_node_t;
typedef struct ztree {
	zt_node_t *root; /* NULL: empty */
	uint32_t count;
	uint8_t height; /* 0: empty; 1: the root is a leaf */
	uint8_t kind;   /* names in canonical order, or NSEC3 hashes (zone/internal.h) */
	bool owns;      /* holds a reference on each of its nodes: the tree of all names */
} ztree_t;

/*
 * The NSEC3 chain of a zone (RFC 5155): its owners in a tree by hash (the
 * hash kept in each owner's block), and for every name the NSEC3 owner
 * matching it, a link in the name's block (zone_nsec3_match), found by
 * hashing the name once when the node is made, so a query hashes only
 * names that do not exist.
 */
typedef struct zone_nsec3 {
	/*
	 * salt_len octets: the NSEC3PARAM's own, in the apex's block, which
	 * the version holds (its tree of names does); a change that makes
	 * a new apex points it there (zone/apply.c)
	 */
	const uint8_t *salt;
	ztree_t chain;      /* its owners by hash */
	uint32_t unmatched; /* names (not occluded) with no NSEC3: opt-out leaves some */
	uint16_t iterations;
	uint8_t salt_len;
} zone_nsec3_t;

struct zlin;

/*
 * One version of a zone. Immutable once built, except for refs: every zone
 * set that serves it holds a reference, and so may any thread that keeps
 * using it outside a read-side section (a zone transfer streaming it for
 * seconds must not hold up synchronize_rcu); see zone_ref. A version
 * made by applying changes to another (zone/apply.h) shares with it every
 * node, hash page and tree node the changes did not touch.
 */
typedef struct zone {
	/*
	 * What every answer reads, in the first 64 octets (the zone is
	 * aligned on a cache line): at a moderate load each query finds the
	 * caches cold, and each line costs a miss.
	 */
	_Alignas(64) const znode_t *apex;
	zhash_page_t *const *hash; /* the directory: hash_pages pages */
	uint32_t hash_pages;
	uint16_t hash_mask;   /* slots in a page, less one */
	uint8_t arena;        /* what of it lies in its lineage's arena (enum zone_arena) */
	uint8_t denial;       /* enum zone_denial */
	uint8_t hash_key[16]; /* a copy of zone_hash_key(): no pointer to follow, no pthread_once */
	size_t node_count;
	uint32_t serial;
	uint32_t hash_used; /* slots in use */
	struct zlin *lin;   /* what the versions of one build share: zone/internal.h */
	/* the version's own: the negative SOA (its copies malloc'd, or in the arena) */
	rrset_wire_t neg_soa;             /* SOA with TTL = min(TTL, MINIMUM) (RFC 2308 3) */
	const rrset_wire_t *neg_soa_sigs; /* its RRSIGs with the same TTL, or NULL */
	size_t rr_count;
	time_t loaded_at;
	unsigned refs;      /* atomic: zone_ref, zone_unref */
	ztree_t names;      /* every node, in canonical order (RFC 4034 6.1) */
	ztree_t nsec;       /* NSEC: the owners of an NSEC (not occluded) */
	zone_nsec3_t nsec3; /* NSEC3: the chain */
} zone_t;
_Static_assert(offsetof(zone_t, node_count) <= 64, "what every answer reads shares a cache line");
_Static_assert(sizeof(zone_t) == 192, "three lines: a million small zones");

/* What of a version its build put in the lineage's arena (zone_t.arena), not to be freed alone. */
enum zone_arena {
	ZONE_ARENA_DIR = 0x01, /* the hash directory */
	ZONE_ARENA_NEG = 0x02, /* the negative SOA's copies */
};

/* The slot of hash h's first probe in z (for prefetching it). */
static inline const uint64_t *zhash_slot_of(const zone_t *z, uint64_t h)
{
	return &z->hash[zhash_page(h, z->hash_pages)]->slot[zhash_first_slot(h, z->hash_mask)];
}

/*
 * A walk over the nodes of a zone in canonical order (RFC 4034 6.1), apex
 * first, empty non-terminals and NSEC3 owners included:
 *   for (n = zone_first(z, &it); n; n = zone_next(&it))
 * Any thread holding the zone (a read section, or a reference); no
 * allocation. The iterator stays valid as long as the zone: a transfer
 * may keep it from one message to the next. Its fields are the tree's.
 */
#define ZONE_ITER_DEPTH 12
typedef struct zone_iter {
	const zt_node_t *path[ZONE_ITER_DEPTH];
	uint16_t pos[ZONE_ITER_DEPTH];
	uint8_t height;
} zone_iter_t;

/* The apex (never NULL: a zone has one), the walk starting there. */
const znode_t *zone_first(const struct zone *z, zone_iter_t *it);

/* The node after the last one the walk gave, or NULL past the last. */
const znode_t *zone_next(zone_iter_t *it);

/* The process-wide SipHash key for name_hash, drawn once from randombytes. */
const uint8_t *zone_hash_key(void);

/* Free a zone and everything it owns (ignores refs). NULL is fine. */
void zone_free(zone_t *z);

/*
 * Octets of the zone's store: its lineage's arena and nodes (those of
 * other versions it shares included), and its own hash pages, directory,
 * tree nodes and negative SOA from malloc; not the zone_t itself.
 */
size_t zone_memory(const zone_t *z);

/*
 * Take a reference to z and return it. Any thread, as long as z cannot go
 * meanwhile: inside the read-side section of a published set that serves
 * z, or while holding another reference. The zone then stays whole after
 * the section ends and after the sets that served it are freed, until the
 * matching zone_unref.
 */
const zone_t *zone_ref(const zone_t *z);

/*
 * Drop a reference; the last one frees the zone, on the calling thread.
 * Any thread; NULL is fine. The count is the one mutable field of a zone,
 * hence the cast inside: callers hold zones as const.
 */
void zone_unref(const zone_t *z);

/*
 * The node with exactly `name` (lowercase wire) whose name_hash is `hash`,
 * or NULL. Read-only; any thread; no allocation.
 */
const znode_t *zone_lookup_hashed(const zone_t *z, const uint8_t *name, size_t name_len,
				  uint64_t hash);

/* zone_lookup_hashed after hashing name with zone_hash_key(). */
const znode_t *zone_lookup(const zone_t *z, const uint8_t *name);

/*
 * The parent of node n in z (every ancestor of a node inside the zone is
 * a node, empty non-terminals included), or NULL for the apex. Read-only;
 * any thread; no allocation.
 */
const znode_t *zone_parent(const zone_t *z, const znode_t *n);

/* The RRset of `type` at node n, or NULL. */
const zrrset_t *znode_rrset(const znode_t *n, uint16_t type);

/*
 * "Less or equal" in canonical order: the last node whose name sorts at or
 * before `name` (for DNSSEC denial later); NULL when name sorts before the
 * apex. name is lowercase wire form.
 */
const znode_t *zone_find_le(const zone_t *z, const uint8_t *name);

/*
 * The node whose NSEC covers `name` (lowercase wire, not an owner of an
 * NSEC: a name that does not exist, or an empty non-terminal), in a zone
 * whose denial is ZONE_DENIAL_NSEC; NULL if there is none. O(log nodes).
 */
const znode_t *zone_nsec_cover(const zone_t *z, const uint8_t *name);

/*
 * The NSEC3 hash of name (lowercase wire) with the zone's salt and
 * iterations (RFC 5155 5) into out. No allocation.
 */
void zone_nsec3_hash(const zone_t *z, const uint8_t *name, uint8_t out[ZONE_NSEC3_HASH_LEN]);

/*
 * The NSEC3 node whose hash equals or covers (RFC 5155 1.3: hash between
 * owner and next, the last one wrapping around) the hash of `name`, in a
 * zone whose denial is ZONE_DENIAL_NSEC3. *exact tells which. O(log chain).
 */
const znode_t *zone_nsec3_find(const zone_t *z, const uint8_t *name, bool *exact);

/*
 * Where a node's link and hash lie: after its owner name, at the next
 * multiple of 8 (ZNODE_LINKED, ZNODE_HASHED).
 */
static inline const uint8_t *znode_ext(const znode_t *n)
{
	return znode_name(n) + ((n->name_len + 7u) & ~7u);
}

/* The NSEC3 node matching node n (found when n was made), or NULL. */
static inline const znode_t *zone_nsec3_match(const zone_t *z, const znode_t *n)
{
	(void)z;
	return (n->flags & ZNODE_LINKED) ? *(const znode_t *const *)(const void *)znode_ext(n)
					 : NULL;
}

/*
 * Canonical sort key of a name (RFC 4034 6.1): labels from the root, each
 * followed by 0x00, with octets 0x00 and 0x01 escaped so that memcmp on
 * keys orders names canonically and equal keys mean equal names. key must
 * hold ZONE_KEY_MAX octets; returns the key length.
 */
#define ZONE_KEY_MAX (2 * NAME_MAXLEN + NAME_MAXLABELS)
size_t zone_name_key(const uint8_t *name, uint8_t *key);

#endif
