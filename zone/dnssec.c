/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNSSEC tables of a zone: NSEC predecessors, the NSEC3 chain, hashes precomputed at load. */
#include "config.h"

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
	const znode_t *le = zone_find_le(z, name);
	if (!le || !z->nsec_prev)
		return NULL;
	uint32_t i = z->nsec_prev[le - z->nodes];
	return i == UINT32_MAX ? NULL : &z->nodes[i];
}

void zone_nsec3_hash(const zone_t *z, const uint8_t *name, uint8_t out[ZONE_NSEC3_HASH_LEN])
{
	const zone_nsec3_t *p = &z->nsec3;
	uint8_t buf[NAME_MAXLEN + sizeof(p->salt)];
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

/* Index of the last hash <= h, or count - 1 when h sorts before all (the wrap). */
static size_t nsec3_le(const zone_nsec3_t *p, const uint8_t *h)
{
	size_t lo = 0, hi = p->count; /* the answer is lo - 1 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (memcmp(p->hashes + mid * ZONE_NSEC3_HASH_LEN, h, ZONE_NSEC3_HASH_LEN) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : p->count - 1;
}

QUERY_PATH const znode_t *zone_nsec3_find(const zone_t *z, const uint8_t *name, bool *exact)
{
	const zone_nsec3_t *p = &z->nsec3;
	uint8_t h[ZONE_NSEC3_HASH_LEN];
	zone_nsec3_hash(z, name, h);
	size_t i = nsec3_le(p, h);
	*exact = memcmp(p->hashes + i * ZONE_NSEC3_HASH_LEN, h, ZONE_NSEC3_HASH_LEN) == 0;
	return p->owners[i];
}

/* ---- at load time ---- */

/* Copy of a signature set with every record's TTL set to ttl (RFC 4035 3.1.3 for the SOA). */
static const rrset_wire_t *sigs_with_ttl(zarena_t *a, const rrset_wire_t *sigs, uint32_t ttl)
{
	rrset_wire_t *s = zarena_alloc(a, sizeof(*s));
	uint8_t *data = zarena_alloc(a, sigs->data_len);
	if (!s || !data)
		return NULL;
	*s = *sigs;
	memcpy(data, sigs->data, sigs->data_len);
	for (uint8_t *p = data; p + 10 <= data + sigs->data_len; p += 10 + wire_get_u16(p + 8)) {
		p[4] = (uint8_t)(ttl >> 24);
		p[5] = (uint8_t)(ttl >> 16);
		p[6] = (uint8_t)(ttl >> 8);
		p[7] = (uint8_t)ttl;
	}
	s->data = data;
	return s;
}

static int build_nsec_prev(zone_t *z, zarena_t *a)
{
	uint32_t *prev = zarena_alloc(a, z->node_count * sizeof(*prev));
	if (!prev)
		return SHOAL_ENOMEM;
	uint32_t last = UINT32_MAX;
	for (size_t i = 0; i < z->node_count; i++) {
		const znode_t *n = &z->nodes[i];
		if (!(n->flags & ZNODE_OCCLUDED) && znode_rrset(n, DNS_TYPE_NSEC))
			last = (uint32_t)i;
		prev[i] = last;
	}
	z->nsec_prev = prev;
	return 0;
}

/*
 * The NSEC3 parameters of the zone: the apex NSEC3PARAM with hash 1 and
 * flags 0 (RFC 5155 4.1.2: other flags mean it is not for the server).
 */
static bool nsec3_params(zone_t *z)
{
	const zrrset_t *rs = znode_rrset(z->apex, DNS_TYPE_NSEC3PARAM);
	if (!rs)
		return false;
	const uint8_t *p = rs->set.data, *end = p + rs->set.data_len;
	for (; p + 10 <= end; p += 10 + wire_get_u16(p + 8)) {
		uint16_t rdlen = wire_get_u16(p + 8);
		const uint8_t *rd = p + 10;
		if (rdlen < 5 || rd[0] != 1 || rd[1] != 0 || rdlen != 5 + rd[4])
			continue;
		z->nsec3.iterations = wire_get_u16(rd + 2);
		z->nsec3.salt_len = rd[4];
		memcpy(z->nsec3.salt, rd + 5, rd[4]);
		return true;
	}
	return false;
}

/*
 * Does node n own an NSEC3 of the zone's chain: a label of base32hex SHA-1
 * right below the apex, with an NSEC3 of the same hash, iterations and
 * salt? The hash goes to h.
 */
static bool nsec3_owner(const zone_t *z, const znode_t *n, uint8_t h[ZONE_NSEC3_HASH_LEN])
{
	const zrrset_t *rs = znode_rrset(n, DNS_TYPE_NSEC3);
	/* right below the apex: one label more than it */
	if (!rs || n->labels != z->apex->labels + 1 || znode_name(n)[0] != 32)
		return false;
	char text[32];
	memcpy(text, znode_name(n) + 1, 32);
	if (ldns_b32_pton_extended_hex(text, 32, h, ZONE_NSEC3_HASH_LEN) != ZONE_NSEC3_HASH_LEN)
		return false;
	const uint8_t *p = rs->set.data, *end = p + rs->set.data_len;
	for (; p + 10 <= end; p += 10 + wire_get_u16(p + 8)) {
		const uint8_t *rd = p + 10;
		uint16_t rdlen = wire_get_u16(p + 8);
		if (rdlen >= 5 && rd[0] == 1 && wire_get_u16(rd + 2) == z->nsec3.iterations &&
		    rd[4] == z->nsec3.salt_len && rdlen >= 5 + rd[4] &&
		    memcmp(rd + 5, z->nsec3.salt, rd[4]) == 0)
			return true;
	}
	return false;
}

/* An NSEC3 hash and its node, for sorting the chain. */
typedef struct nsec3_entry {
	uint8_t hash[ZONE_NSEC3_HASH_LEN];
	const znode_t *node;
} nsec3_entry_t;

static int entry_cmp(const void *a, const void *b)
{
	return memcmp(((const nsec3_entry_t *)a)->hash, ((const nsec3_entry_t *)b)->hash,
		      ZONE_NSEC3_HASH_LEN);
}

/* Only NSEC3 and its RRSIGs: such a node is not part of the name tree. */
static bool only_nsec3(const znode_t *n)
{
	for (uint16_t i = 0; i < n->rrset_count; i++) {
		uint16_t t = znode_rrsets(n)[i].set.type;
		if (t != DNS_TYPE_NSEC3 && t != DNS_TYPE_RRSIG)
			return false;
	}
	return true;
}

/* The NSEC3 node of each node in a range: hashes are most of a signed zone's build. */
struct match_job {
	const zone_t *z;
	const znode_t **match;
	const bool *cancel;
	bool cancelled; /* a range stopped at *cancel */
};

static void match_range(void *arg, size_t from, size_t to)
{
	struct match_job *job = arg;
	const zone_t *z = job->z;
	const zone_nsec3_t *p = &z->nsec3;
	for (size_t i = from; i < to; i++) {
		if (zone_stop_at(job->cancel, i - from + 1)) {
			__atomic_store_n(&job->cancelled, true, __ATOMIC_RELAXED);
			return;
		}
		const znode_t *n = &z->nodes[i];
		job->match[i] = NULL;
		if (n->flags & (ZNODE_NSEC3 | ZNODE_OCCLUDED))
			continue;
		uint8_t h[ZONE_NSEC3_HASH_LEN];
		zone_nsec3_hash(z, znode_name(n), h);
		size_t j = nsec3_le(p, h);
		if (memcmp(p->hashes + j * ZONE_NSEC3_HASH_LEN, h, ZONE_NSEC3_HASH_LEN) == 0)
			job->match[i] = p->owners[j];
	}
}

static int build_nsec3(zone_t *z, zarena_t *a, zone_msg_fn msg, void *msg_arg, const char *file,
		       const bool *cancel)
{
	zone_nsec3_t *p = &z->nsec3;
	size_t count = 0;
	for (size_t i = 0; i < z->node_count; i++)
		count += znode_rrset(&z->nodes[i], DNS_TYPE_NSEC3) != NULL;
	nsec3_entry_t *e = malloc((count ? count : 1) * sizeof(*e));
	if (!e)
		return SHOAL_ENOMEM;
	size_t k = 0, stray = 0;
	for (size_t i = 0; i < z->node_count; i++) {
		znode_t *n = (znode_t *)&z->nodes[i];
		if (!znode_rrset(n, DNS_TYPE_NSEC3))
			continue;
		if (!nsec3_owner(z, n, e[k].hash)) {
			stray++;
			continue;
		}
		e[k++].node = n;
		if (only_nsec3(n))
			n->flags |= ZNODE_NSEC3;
	}
	if (stray)
		zone_report(msg, msg_arg, false, file, 0,
			    "%zu NSEC3 record set(s) do not fit the NSEC3PARAM (hash, iterations, "
			    "salt) and are not used for denial",
			    stray);
	if (k == 0) {
		free(e);
		zone_report(msg, msg_arg, false, file, 0,
			    "NSEC3PARAM at the apex but no NSEC3 chain for it: "
			    "denial of existence is not served");
		return 0;
	}
	qsort(e, k, sizeof(*e), entry_cmp);
	uint8_t *hashes = zarena_alloc(a, k * ZONE_NSEC3_HASH_LEN);
	const znode_t **owners = zarena_alloc(a, k * sizeof(*owners));
	const znode_t **match = zarena_alloc(a, z->node_count * sizeof(*match));
	if (!hashes || !owners || !match) {
		free(e);
		return SHOAL_ENOMEM;
	}
	for (size_t i = 0; i < k; i++) {
		memcpy(hashes + i * ZONE_NSEC3_HASH_LEN, e[i].hash, ZONE_NSEC3_HASH_LEN);
		owners[i] = e[i].node;
	}
	free(e);
	p->count = k;
	p->hashes = hashes;
	p->owners = owners;
	/* the names that exist, hashed once here so that queries need not */
	struct match_job job = { z, match, cancel, false };
	zone_parallel(z->node_count, match_range, &job);
	if (job.cancelled)
		return SHOAL_ETIMEOUT;
	p->match = match;
	z->denial = ZONE_DENIAL_NSEC3;
	if (p->iterations > NSEC3_ITERATIONS_WARN)
		zone_report(msg, msg_arg, false, file, 0,
			    "NSEC3 with %u iterations: every negative answer hashes that often "
			    "(RFC 9276 3.1 recommends 0)",
			    p->iterations);
	return 0;
}

int zone_dnssec_build(zone_t *z, zarena_t *a, uint32_t max_iterations, zone_msg_fn msg,
		      void *msg_arg, const char *file, const bool *cancel)
{
	const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
	if (soa && soa->sigs &&
	    !(z->neg_soa_sigs = sigs_with_ttl(a, soa->sigs, wire_get_u32(z->neg_soa.data + 4))))
		return SHOAL_ENOMEM;
	if (nsec3_params(z)) {
		/* checked before any name is hashed: hashing is what the bound is for */
		if (z->nsec3.iterations > max_iterations) {
			zone_report(msg, msg_arg, true, file, 0,
				    "NSEC3PARAM asks for %u iterations, more than %u "
				    "(max-nsec3-iterations): every negative answer would hash that "
				    "often",
				    z->nsec3.iterations, max_iterations);
			return SHOAL_EZONE;
		}
		return build_nsec3(z, a, msg, msg_arg, file, cancel);
	}
	if (znode_rrset(z->apex, DNS_TYPE_NSEC3PARAM))
		zone_report(msg, msg_arg, false, file, 0,
			    "no NSEC3PARAM at the apex has hash 1 (SHA-1) and flags 0: "
			    "denial of existence is not served");
	if (znode_rrset(z->apex, DNS_TYPE_NSEC)) {
		z->denial = ZONE_DENIAL_NSEC;
		return build_nsec_prev(z, a);
	}
	return 0;
}
