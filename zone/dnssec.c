/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNSSEC of a version: the NSEC owners, the NSEC3 chain and links, the negative SOA. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/hot.h"
#include "proto/wire.h"
#include "zone/internal.h"

/* RFC 9276 3.2: more iterations cost every negative answer a hash each. */
#define NSEC3_ITERATIONS_WARN 100

/* ---- at query time ---- */

QUERY_PATH const znode_t *zone_nsec_cover(const zone_t *z, const uint8_t *name)
{
	zkey_t k;
	zkey_name(&k, name);
	return ztree_find_le(&z->nsec, &k);
}

void zone_nsec3_hash(const zone_t *z, const uint8_t *name, uint8_t out[ZONE_NSEC3_HASH_LEN])
{
	const zone_nsec3_t *p = &z->nsec3;
	uint8_t buf[NAME_MAXLEN + UINT8_MAX]; /* a name or a hash, then the salt */
	size_t len = name_length(name);
	memcpy(buf, name, len);
	memcpy(buf + len, p->salt, p->salt_len);
	ldns_sha1(buf, (unsigned)(len + p->salt_len), out);
	for (uint16_t i = 0; i < p->iterations; i++) {
		memcpy(buf, out, ZONE_NSEC3_HASH_LEN);
		memcpy(buf + ZONE_NSEC3_HASH_LEN, p->salt, p->salt_len);
		ldns_sha1(buf, (unsigned)(ZONE_NSEC3_HASH_LEN + p->salt_len), out);
	}
}

QUERY_PATH const znode_t *zone_nsec3_find(const zone_t *z, const uint8_t *name, bool *exact)
{
	uint8_t h[ZONE_NSEC3_HASH_LEN];
	assert(z->nsec3.chain.count > 0); /* ZONE_DENIAL_NSEC3 only with a chain (build_nsec3) */
	zone_nsec3_hash(z, name, h);
	zkey_t k;
	zkey_hash(&k, h);
	/* a hash before the first is covered by the last, which wraps around */
	const znode_t *n = ztree_find_le(&z->nsec3.chain, &k);
	if (!n)
		n = ztree_last(&z->nsec3.chain);
	*exact = memcmp(znode_hash(n), h, ZONE_NSEC3_HASH_LEN) == 0;
	return n;
}

/* ---- when a version is made ---- */

/* Copy of a signature set with every record's TTL set to ttl (RFC 4035 3.1.3 for the SOA). */
static void sigs_with_ttl(rrset_wire_t *s, uint8_t *data, const rrset_wire_t *sigs, uint32_t ttl)
{
	*s = *sigs;
	memcpy(data, sigs->data, sigs->data_len);
	for (uint8_t *p = data; p + 10 <= data + sigs->data_len; p += 10 + wire_get_u16(p + 8)) {
		p[4] = (uint8_t)(ttl >> 24);
		p[5] = (uint8_t)(ttl >> 16);
		p[6] = (uint8_t)(ttl >> 8);
		p[7] = (uint8_t)ttl;
	}
	s->data = data;
}

int zone_neg_soa(zone_t *z, zarena_t *arena)
{
	const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
	if (!soa || soa->set.data_len < 10 ||
	    soa->set.data_len < 10u + wire_get_u16(soa->set.data + 8) ||
	    wire_get_u16(soa->set.data + 8) < 20)
		return SHOAL_EZONE; /* the checks before keep such a zone out */
	/* the version's own memory: the SOA's copy, then its signatures' (8-aligned) */
	size_t at = (soa->set.data_len + 7) & ~(size_t)7;
	size_t sigs = soa->sigs ? sizeof(rrset_wire_t) + soa->sigs->data_len : 0;
	uint8_t *extra = arena ? zarena_alloc(arena, at + sigs) : malloc(at + sigs);
	if (!extra)
		return SHOAL_ENOMEM;
	zone_neg_soa_free(z);
	z->arena = (uint8_t)(arena ? z->arena | ZONE_ARENA_NEG : z->arena);
	rrset_wire_t *n = &z->neg_soa;
	*n = soa->set;
	uint8_t *data = extra;
	memcpy(data, soa->set.data, soa->set.data_len);
	uint16_t rdlen = wire_get_u16(data + 8);
	uint32_t ttl = wire_get_u32(data + 4);
	uint32_t minimum = wire_get_u32(data + 10 + rdlen - 4);
	z->serial = wire_get_u32(data + 10 + rdlen - 20);
	if (minimum < ttl) {
		data[4] = (uint8_t)(minimum >> 24);
		data[5] = (uint8_t)(minimum >> 16);
		data[6] = (uint8_t)(minimum >> 8);
		data[7] = (uint8_t)minimum;
	}
	n->data = data;
	if (soa->sigs) {
		rrset_wire_t *s = (rrset_wire_t *)(void *)(extra + at);
		sigs_with_ttl(s, (uint8_t *)(s + 1), soa->sigs, wire_get_u32(data + 4));
		z->neg_soa_sigs = s;
	}
	return 0;
}

bool zone_nsec3param_usable(const uint8_t *rd, uint16_t rdlen)
{
	/* RFC 5155 4.1.2: other flags mean it is not for the server */
	return rdlen >= 5 && rd[0] == 1 && rd[1] == 0 && rdlen == 5 + rd[4];
}

bool zone_nsec3_params(zone_t *z)
{
	const zrrset_t *rs = znode_rrset(z->apex, DNS_TYPE_NSEC3PARAM);
	if (!rs)
		return false;
	const uint8_t *p = rs->set.data, *end = p + rs->set.data_len;
	for (; p + 10 <= end; p += 10 + wire_get_u16(p + 8)) {
		uint16_t rdlen = wire_get_u16(p + 8);
		const uint8_t *rd = p + 10;
		if (!zone_nsec3param_usable(rd, rdlen))
			continue;
		z->nsec3.iterations = wire_get_u16(rd + 2);
		z->nsec3.salt_len = rd[4];
		z->nsec3.salt = rd + 5; /* in the apex's block, which z holds: no copy */
		return true;
	}
	return false;
}

bool znode_only_nsec3(const znode_t *n)
{
	for (uint16_t i = 0; i < n->rrset_count; i++) {
		uint16_t t = znode_rrsets(n)[i].set.type;
		if (t != DNS_TYPE_NSEC3 && t != DNS_TYPE_RRSIG)
			return false;
	}
	return n->rrset_count > 0;
}

bool zone_nsec3_owner(const zone_t *z, znode_t *n)
{
	n->flags &= (uint16_t) ~(ZNODE_CHAIN | ZNODE_NSEC3);
	/* a label of base32hex SHA-1 right below the apex, room for its hash */
	const zrrset_t *rs = znode_rrset(n, DNS_TYPE_NSEC3);
	if (!rs || !(n->flags & ZNODE_HASHED))
		return false;
	uint8_t h[ZONE_NSEC3_HASH_LEN];
	char text[32];
	memcpy(text, znode_name(n) + 1, 32);
	if (ldns_b32_pton_extended_hex(text, 32, h, ZONE_NSEC3_HASH_LEN) != ZONE_NSEC3_HASH_LEN)
		return false;
	/* with an NSEC3 of the same hash, iterations and salt */
	const uint8_t *p = rs->set.data, *end = p + rs->set.data_len;
	for (; p + 10 <= end; p += 10 + wire_get_u16(p + 8)) {
		const uint8_t *rd = p + 10;
		uint16_t rdlen = wire_get_u16(p + 8);
		if (rdlen >= 5 && rd[0] == 1 && wire_get_u16(rd + 2) == z->nsec3.iterations &&
		    rd[4] == z->nsec3.salt_len && rdlen >= 5 + rd[4] &&
		    memcmp(rd + 5, z->nsec3.salt, rd[4]) == 0) {
			memcpy((uint8_t *)znode_hash(n), h, ZONE_NSEC3_HASH_LEN);
			n->flags |= ZNODE_CHAIN;
			/* only NSEC3 and its RRSIGs: not part of the name tree */
			n->flags |= znode_only_nsec3(n) ? ZNODE_NSEC3 : 0;
			return true;
		}
	}
	return false;
}

bool znode_matchable(const znode_t *n)
{
	return !(n->flags & (ZNODE_NSEC3 | ZNODE_OCCLUDED));
}

void zone_nsec3_link(znode_t *n, znode_t *x)
{
	*znode_link(n) = x;
	if (x)
		*znode_back(x) = n;
}

/* The chain owner of hash h in z, or NULL. */
const znode_t *zone_nsec3_owner_of(const zone_t *z, const uint8_t h[ZONE_NSEC3_HASH_LEN])
{
	zkey_t k;
	zkey_hash(&k, h);
	return ztree_find(&z->nsec3.chain, &k);
}

/* The NSEC3 node of each node in a range: hashes are most of a signed zone's build. */
struct match_job {
	const zone_t *z;
	znode_t **nodes;
	const bool *cancel;
	bool cancelled;   /* a range stopped at *cancel */
	size_t unmatched; /* atomic */
};

static void match_range(void *arg, size_t from, size_t to)
{
	struct match_job *job = arg;
	const zone_t *z = job->z;
	size_t unmatched = 0;
	for (size_t i = from; i < to; i++) {
		if (zone_stop_at(job->cancel, i - from + 1)) {
			__atomic_store_n(&job->cancelled, true, __ATOMIC_RELAXED);
			return;
		}
		znode_t *n = job->nodes[i];
		if (!znode_matchable(n))
			continue;
		uint8_t h[ZONE_NSEC3_HASH_LEN];
		zone_nsec3_hash(z, znode_name(n), h);
		/* one name per hash: no other range writes this owner's way back */
		znode_t *x = (znode_t *)zone_nsec3_owner_of(z, h);
		zone_nsec3_link(n, x);
		unmatched += !x;
	}
	__atomic_fetch_add(&job->unmatched, unmatched, __ATOMIC_RELAXED);
}

static int hash_cmp(const void *a, const void *b)
{
	return memcmp(znode_hash(*(const znode_t *const *)a),
		      znode_hash(*(const znode_t *const *)b), ZONE_NSEC3_HASH_LEN);
}

/* The chain owners among nodes[0..count): in *owners (malloc'd, by hash), their count. */
static int chain_owners(zone_t *z, znode_t **nodes, const znode_t ***owners, size_t *k,
			size_t *stray)
{
	size_t count = 0;
	for (size_t i = 0; i < z->node_count; i++)
		count += (nodes[i]->flags & ZNODE_HASHED) != 0;
	const znode_t **e = malloc((count ? count : 1) * sizeof(*e));
	if (!e)
		return SHOAL_ENOMEM;
	*k = *stray = 0;
	for (size_t i = 0; i < z->node_count; i++) {
		znode_t *n = nodes[i];
		if (!(n->flags & ZNODE_HASHED))
			continue;
		if (zone_nsec3_owner(z, n)) {
			e[(*k)++] = n;
		} else {
			(*stray)++;
		}
	}
	qsort(e, *k, sizeof(*e), hash_cmp);
	*owners = e;
	return 0;
}

static int build_nsec3(zone_t *z, znode_t **nodes, uint64_t gen, zone_msg_fn msg, void *msg_arg,
		       const char *file, const bool *cancel)
{
	const znode_t **owners;
	size_t k, stray = 0;
	int err = chain_owners(z, nodes, &owners, &k, &stray);
	if (err < 0)
		return err;
	for (size_t i = 0; i < z->node_count; i++)
		stray += !(nodes[i]->flags & ZNODE_HASHED) && znode_rrset(nodes[i], DNS_TYPE_NSEC3);
	if (stray)
		zone_report(msg, msg_arg, false, file, 0,
			    "%zu NSEC3 record set(s) do not fit the NSEC3PARAM (hash, iterations, "
			    "salt) and are not used for denial",
			    stray);
	if (k == 0) {
		free(owners);
		zone_report(msg, msg_arg, false, file, 0,
			    "NSEC3PARAM at the apex but no NSEC3 chain for it: "
			    "denial of existence is not served");
		return 0;
	}
	err = ztree_build(&z->nsec3.chain, owners, k, gen, z->lin->arena);
	free(owners);
	if (err < 0)
		return err;
	/* the names that exist, hashed once here so that queries need not */
	struct match_job job = { z, nodes, cancel, false, 0 };
	zone_parallel(z->node_count, match_range, &job);
	if (job.cancelled)
		return SHOAL_ETIMEOUT;
	z->nsec3.unmatched = (uint32_t)job.unmatched;
	z->denial = ZONE_DENIAL_NSEC3;
	if (z->nsec3.iterations > NSEC3_ITERATIONS_WARN)
		zone_report(msg, msg_arg, false, file, 0,
			    "NSEC3 with %u iterations: every negative answer hashes that often "
			    "(RFC 9276 3.1 recommends 0)",
			    z->nsec3.iterations);
	return 0;
}

bool znode_nsec_owner(const znode_t *n)
{
	return !(n->flags & ZNODE_OCCLUDED) && znode_rrset(n, DNS_TYPE_NSEC);
}

/* The tree of the owners of an NSEC, in canonical order. */
static int build_nsec(zone_t *z, znode_t **nodes, uint64_t gen)
{
	const znode_t **owners = malloc((z->node_count ? z->node_count : 1) * sizeof(*owners));
	if (!owners)
		return SHOAL_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < z->node_count; i++)
		if (znode_nsec_owner(nodes[i]))
			owners[k++] = nodes[i];
	int err = ztree_build(&z->nsec, owners, k, gen, z->lin->arena);
	free(owners);
	if (err == 0)
		z->denial = ZONE_DENIAL_NSEC;
	return err;
}

int zone_dnssec_build(zone_t *z, znode_t **nodes, uint64_t gen, uint32_t max_iterations,
		      zone_msg_fn msg, void *msg_arg, const char *file, const bool *cancel)
{
	if (zone_nsec3_params(z)) {
		/* checked before any name is hashed: hashing is what the bound is for */
		if (z->nsec3.iterations > max_iterations) {
			zone_report(msg, msg_arg, true, file, 0,
				    "NSEC3PARAM asks for %u iterations, more than %u "
				    "(max-nsec3-iterations): every negative answer would hash that "
				    "often",
				    z->nsec3.iterations, max_iterations);
			return SHOAL_EZONE;
		}
		return build_nsec3(z, nodes, gen, msg, msg_arg, file, cancel);
	}
	if (znode_rrset(z->apex, DNS_TYPE_NSEC3PARAM))
		zone_report(msg, msg_arg, false, file, 0,
			    "no NSEC3PARAM at the apex has hash 1 (SHA-1) and flags 0: "
			    "denial of existence is not served");
	if (znode_rrset(z->apex, DNS_TYPE_NSEC))
		return build_nsec(z, nodes, gen);
	return 0;
}
