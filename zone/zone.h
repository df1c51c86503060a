/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One compiled, read-only zone: nodes in canonical order, a hash index, RRsets in wire form. */
#ifndef SHOAL_ZONE_ZONE_H
#define SHOAL_ZONE_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/name.h"
#include "proto/rrset.h"

/* Per node flags, set when the store is built (never at query time). */
enum znode_flag {
	ZNODE_DATA = 0x01, /* has at least one RRset */
	ZNODE_APEX = 0x02,
	ZNODE_DELEG = 0x04,          /* NS below the apex: a zone cut (RFC 1034 4.2.1) */
	ZNODE_OCCLUDED = 0x08,       /* below a cut or a DNAME: not authoritative data */
	ZNODE_WILDCARD_CHILD = 0x10, /* "*.<this name>" exists (RFC 4592 2.2.1) */
	ZNODE_DNAME = 0x20,          /* has a DNAME RRset (RFC 6672) */
	ZNODE_CNAME = 0x40,          /* has a CNAME RRset */
	ZNODE_NSEC3 = 0x80,          /* an NSEC3 owner of the zone's chain: hidden from lookups */
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
 * without RRsets. name is canonical (lowercase) uncompressed wire form.
 * parent is NULL only at the apex.
 *
 * The node's block (build.c fill_node) holds its RRsets right before its
 * owner name, so the one pointer finds both (znode_rrsets): a lookup that
 * compares the name has the RRsets the answer reads next in the same place.
 */
typedef struct znode {
	const uint8_t *name_; /* znode_name() */
	const struct znode *parent;
	uint16_t rrset_count;
	uint16_t flags; /* enum znode_flag */
	uint8_t name_len;
	uint8_t labels; /* not counting the root label */
} znode_t;

/* The owner name of node n: canonical (lowercase) uncompressed wire form. */
static inline const uint8_t *znode_name(const znode_t *n)
{
	return n->name_;
}

/* The RRsets of node n, ordered by type: rrset_count of them right before the name. */
static inline const zrrset_t *znode_rrsets(const znode_t *n)
{
	return (const zrrset_t *)(const void *)znode_name(n) - n->rrset_count;
}

/*
 * One bucket of the open-addressing hash index: 0 idx means empty. Beside
 * the node it holds the address of the node's owner name, so a lookup
 * reads the name (and the RRsets before it) and the node at once, both
 * addresses known from the slot, instead of the node first and its name
 * after. 12 octets: three 4-octet halves, no padding.
 */
typedef struct zhash_slot {
	uint32_t idx;    /* node index + 1 */
	uint32_t ref_lo; /* ref: the name's address / 8 (ZHASH_REF_BITS), */
	uint32_t ref_hi; /* and the top 16 bits of the name's hash above it */
} zhash_slot_t;

/* Bits of ref for the name's address over 8 (names are 8-aligned): 2^51 of address space. */
#define ZHASH_REF_BITS 48

/* The tag of hash h as ref keeps it: its upper 16 bits, to skip most compares. */
static inline uint64_t zhash_tag(uint64_t h)
{
	return h >> ZHASH_REF_BITS;
}

/* The owner name a slot's ref points to. */
static inline const uint8_t *zhash_name(uint64_t ref)
{
	return (const uint8_t *)(uintptr_t)((ref & ((UINT64_C(1) << ZHASH_REF_BITS) - 1)) << 3);
}

/* First slot for hash h in a table of `size` slots (Lemire's multiply-shift). */
static inline uint32_t zhash_start(uint64_t h, uint32_t size)
{
	return (uint32_t)(((uint64_t)(uint32_t)h * size) >> 32);
}

struct zarena;

/*
 * The NSEC3 chain of a zone (RFC 5155), built at load time: the hashes of
 * the chain in ascending order with their owner nodes, and for every node
 * the NSEC3 node matching its name (hashed once, here), so a query hashes
 * only names that do not exist.
 */
typedef struct zone_nsec3 {
	uint16_t iterations;
	uint8_t salt_len;
	uint8_t salt[255];
	size_t count;
	const uint8_t *hashes;       /* count * ZONE_NSEC3_HASH_LEN, ascending */
	const struct znode **owners; /* the NSEC3 node of each hash */
	const struct znode **match;  /* per node index: the node's NSEC3 node, or NULL */
} zone_nsec3_t;

/*
 * A compiled zone. Immutable once built, except for refs: every zone set
 * that serves it holds a reference, and so may any thread that keeps using
 * it outside a read-side section (a zone transfer streaming it for
 * seconds must not hold up synchronize_rcu); see zone_ref.
 */
typedef struct zone {
	/*
	 * What every answer reads, in the first 64 octets (the zone is
	 * aligned on a cache line): at a moderate load each query finds the
	 * caches cold, and each line costs a miss.
	 */
	_Alignas(64) const znode_t *apex;
	const znode_t *nodes; /* canonical order (RFC 4034 6.1), apex first */
	const zhash_slot_t *hash;
	uint32_t hash_size; /* slots; never full */
	enum zone_denial denial;
	uint8_t hash_key[16]; /* a copy of zone_hash_key(): no pointer to follow, no pthread_once */
	size_t node_count;
	rrset_wire_t neg_soa;             /* SOA with TTL = min(TTL, MINIMUM) (RFC 2308 3) */
	const rrset_wire_t *neg_soa_sigs; /* its RRSIGs with the same TTL, or NULL */
	const uint32_t *nsec_prev;        /* NSEC: per node, the index of the last node at or
					     before it that owns an NSEC (UINT32_MAX: none) */
	zone_nsec3_t nsec3;               /* NSEC3: the chain */
	uint32_t serial;
	size_t rr_count;
	time_t loaded_at;
	unsigned refs; /* atomic: zone_ref, zone_unref */
	struct zarena *arena;
} zone_t;
_Static_assert(offsetof(zone_t, node_count) <= 64, "what every answer reads shares a cache line");

/*
 * A walk over the nodes of a zone in canonical order (RFC 4034 6.1), apex
 * first, empty non-terminals and NSEC3 owners included:
 *   for (n = zone_first(z, &it); n; n = zone_next(&it))
 * Any thread holding the zone (a read section, or a reference); no
 * allocation. The iterator stays valid as long as the zone: a transfer
 * may keep it from one message to the next.
 */
typedef struct zone_iter {
	const struct zone *z;
	size_t next;
} zone_iter_t;

/* The apex (never NULL: a zone has one), the walk starting there. */
const znode_t *zone_first(const struct zone *z, zone_iter_t *it);

/* The node after the last one the walk gave, or NULL past the last. */
const znode_t *zone_next(zone_iter_t *it);

/* The process-wide SipHash key for name_hash, drawn once from randombytes. */
const uint8_t *zone_hash_key(void);

/* Free a zone and everything it owns (ignores refs). NULL is fine. */
void zone_free(zone_t *z);

/* Octets the zone's store took from malloc (its arena; not the zone_t itself). */
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

/* The NSEC3 node matching node n (precomputed), or NULL. */
static inline const znode_t *zone_nsec3_match(const zone_t *z, const znode_t *n)
{
	return z->nsec3.match ? z->nsec3.match[n - z->nodes] : NULL;
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
