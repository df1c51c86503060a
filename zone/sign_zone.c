/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A whole zone signed with NSEC or NSEC3: the changeset that takes an unsigned version to its
 * signed one. */
#include "config.h"

#include <ldns/util.h>
#include <libdnssec/binary.h>
#include <libdnssec/error.h>
#include <libdnssec/nsec.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "proto/wire.h"
#include "zone/internal.h"
#include "zone/sign_zone.h"

/* An RRSIG's RDATA: the header, the signer, an RSA-4096 signature. */
#define RRSIG_MAX (18 + NAME_MAXLEN + 512)

/* Signatures made between two additions to the changeset: spread over the threads. */
#define SIGN_BATCH 4096

/* One RRSIG to make: an RRset (the zone's records, or a copy in the arena) and a key. */
typedef struct sign_job {
	rrset_wire_t rs;
	size_t data_off; /* where rs's records lie in the arena, or SIZE_MAX: rs.data */
	size_t owner;    /* where the owner lies in the arena */
	const sign_key_t *key;
	sign_times_t times;
	int len; /* the RRSIG RDATA's length once made, or an error */
} sign_job_t;

sign_times_t sign_times_at(int64_t now, uint32_t lifetime)
{
	return (sign_times_t){ .inception = (uint32_t)(now - 3600),
			       .expiration = (uint32_t)(now + lifetime) };
}

/* Append one record of type, TTL and rdata to the RRset being built in w. */
void sign_put_record(wire_t *w, uint16_t type, uint32_t ttl, const uint8_t *rdata, size_t len)
{
	wire_write_u16(w, type);
	wire_write_u16(w, DNS_CLASS_IN);
	wire_write_u32(w, ttl);
	wire_write_u16(w, (uint16_t)len);
	wire_write_bytes(w, rdata, len);
}

/* The offset of a copy of p[0..len) in c's arena, which grows (offsets, not pointers, hold). */
static size_t arena_put(sign_ctx_t *c, const void *p, size_t len)
{
	if (c->arena_len + len > c->arena_cap) {
		size_t cap = c->arena_cap ? c->arena_cap : 1 << 20;
		while (cap < c->arena_len + len)
			cap *= 2;
		uint8_t *grown = realloc(c->arena, cap);
		if (!grown) {
			c->arena_failed = true;
			return 0;
		}
		c->arena = grown;
		c->arena_cap = cap;
	}
	memcpy(c->arena + c->arena_len, p, len);
	c->arena_len += len;
	return c->arena_len - len;
}

/* Jobs [from, to) of the batch signed into their slots: one thread's range. */
static void sign_range(void *arg, size_t from, size_t to)
{
	sign_ctx_t *c = arg;
	for (size_t i = from; i < to; i++) {
		sign_job_t *j = &c->jobs[i];
		rrset_wire_t rs = j->rs;
		if (j->data_off != SIZE_MAX)
			rs.data = c->arena + j->data_off;
		j->len = sign_rrset(j->key, c->apex, c->arena + j->owner, &rs, j->times,
				    c->sigs + i * RRSIG_MAX, RRSIG_MAX);
	}
}

/* The batch signed over the threads, then its RRSIGs added in order on this thread. */
int sign_flush(sign_ctx_t *c)
{
	size_t n = c->job_count, threads = c->o->threads > 1 ? c->o->threads : 1;
	/* a thread is worth a few dozen signatures */
	if (threads > n / 32)
		threads = n / 32 ? n / 32 : 1;
	if (threads > ZONE_PARALLEL_MAX)
		threads = ZONE_PARALLEL_MAX;
	if (n)
		zone_parallel_n(n, threads, sign_range, c);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const sign_job_t *j = &c->jobs[i];
		const uint8_t *data = j->data_off != SIZE_MAX ? c->arena + j->data_off : j->rs.data;
		rc = j->len < 0 ? j->len
				: changeset_add(c->cs, true, c->arena + j->owner, DNS_TYPE_RRSIG,
						wire_get_u32(data + 4), c->sigs + i * RRSIG_MAX,
						(uint16_t)j->len);
	}
	c->job_count = 0;
	c->arena_len = 0;
	return rc;
}

/*
 * Enqueue an RRSIG by every key of role on rs at owner (RFC 4034 3: the
 * RRset's TTL); rs's records are copied when they lie in c->buf, which
 * the next RRset built reuses. A full batch is signed and added first.
 */
int sign_add_rrsigs(sign_ctx_t *c, const uint8_t *owner, const rrset_wire_t *rs,
		    sign_key_role_t role)
{
	uintptr_t at = (uintptr_t)rs->data, buf = (uintptr_t)c->buf;
	bool transient = at >= buf && at < buf + SIGN_RRSET_BUF;
	for (size_t i = 0; i < c->ks->count; i++) {
		const sign_key_t *k = &c->ks->keys[i];
		if (k->role != role)
			continue;
		if (c->job_count == SIGN_BATCH) {
			int rc = sign_flush(c);
			if (rc < 0)
				return rc;
		}
		sign_job_t *j = &c->jobs[c->job_count];
		*j = (sign_job_t){ .rs = *rs,
				   .key = k,
				   .times = c->o->times,
				   .owner = arena_put(c, owner, name_length(owner)) };
		/* RFC 6781 4.4.2.2: expirations spread, so re-signing does not come all at once */
		j->times.expiration -= c->o->jitter ? randombytes_uniform(c->o->jitter + 1) : 0;
		j->data_off = transient ? arena_put(c, rs->data, rs->data_len) : SIZE_MAX;
		if (c->arena_failed)
			return SHOAL_ENOMEM;
		c->job_count++;
	}
	return 0;
}

/* The records of the RRset rs at owner to the changeset's additions (add) or deletions. */
static int put_rrset(sign_ctx_t *c, bool add, const uint8_t *owner, const rrset_wire_t *rs)
{
	wire_t w;
	wire_init_read(&w, rs->data, rs->data_len);
	for (uint16_t i = 0; i < rs->rr_count; i++) {
		wire_skip(&w, 4);
		uint32_t ttl = wire_read_u32(&w);
		uint16_t len = wire_read_u16(&w);
		const uint8_t *rdata = wire_read_ptr(&w, len);
		int rc = w.err ? SHOAL_EMALFORMED
			       : changeset_add(c->cs, add, owner, rs->type, ttl, rdata, len);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Add the records of the RRset rs at owner (built here) to the changeset. */
static int add_rrset(sign_ctx_t *c, const uint8_t *owner, const rrset_wire_t *rs)
{
	return put_rrset(c, true, owner, rs);
}

/*
 * An apex RRset made of the keys, added and signed by the KSKs: DNSKEY of
 * every key (RFC 6781 3.1); CDNSKEY, or CDS with SHA-256 (RFC 8624 3.3),
 * of each KSK, the keys the parent is to point at (RFC 7344 4), with the
 * DNSKEY TTL as Knot and BIND give them.
 */
static int add_key_rrset(sign_ctx_t *c, uint16_t type)
{
	wire_t w;
	wire_init_write(&w, c->buf, SIGN_RRSET_BUF);
	uint8_t rdata[2048];
	uint16_t count = 0;
	for (size_t i = 0; i < c->ks->count; i++) {
		const sign_key_t *k = &c->ks->keys[i];
		if (type != DNS_TYPE_DNSKEY && k->role != SIGN_KEY_KSK)
			continue;
		int n = type == DNS_TYPE_CDS ? sign_key_ds(k, rdata, sizeof(rdata))
					     : sign_key_dnskey(k, rdata, sizeof(rdata));
		if (n < 0)
			return n;
		sign_put_record(&w, type, c->o->dnskey_ttl, rdata, (size_t)n);
		count++;
	}
	rrset_wire_t rs = {
		.type = type, .rr_count = count, .data_len = (uint32_t)w.pos, .data = c->buf
	};
	int rc = w.err ? w.err : add_rrset(c, c->apex, &rs);
	return rc < 0 ? rc : sign_add_rrsigs(c, c->apex, &rs, SIGN_KEY_KSK);
}

/*
 * The DNSKEY RRset; with o->cds_cdnskey the CDS and CDNSKEY RRsets too,
 * the zone's own deleted: the policy says what the parent is told.
 */
static int add_dnskeys(sign_ctx_t *c, const zone_t *z)
{
	static const uint16_t cds_types[] = { DNS_TYPE_CDS, DNS_TYPE_CDNSKEY };
	int rc = add_key_rrset(c, DNS_TYPE_DNSKEY);
	for (size_t i = 0; rc == 0 && c->o->cds_cdnskey && i < 2; i++) {
		const zrrset_t *own = znode_rrset(z->apex, cds_types[i]);
		rc = own ? put_rrset(c, false, c->apex, &own->set) : 0;
		if (rc == 0)
			rc = add_key_rrset(c, cds_types[i]);
	}
	return rc;
}

int sign_replace_soa(sign_ctx_t *c, const uint8_t *old, const uint8_t *base)
{
	uint16_t old_len = wire_get_u16(old + 8), len = wire_get_u16(base + 8);
	if (old_len < 22 || len < 22)
		return SHOAL_EMALFORMED;
	int rc = changeset_add(c->cs, false, c->apex, DNS_TYPE_SOA, wire_get_u32(old + 4), old + 10,
			       old_len);
	uint32_t ttl = wire_get_u32(base + 4);
	const uint8_t *rdata = base + 10;
	uint8_t fresh[2 * NAME_MAXLEN + 20];
	memcpy(fresh, rdata, len);
	wire_t s;
	wire_init_write(&s, fresh, sizeof(fresh));
	wire_seek(&s, len - 20); /* serial, refresh, retry, expire, minimum */
	wire_write_u32(&s, c->o->serial);
	uint32_t minimum = wire_get_u32(rdata + len - 4);
	c->nsec_ttl = ttl < minimum ? ttl : minimum;
	wire_t b;
	wire_init_write(&b, c->buf, SIGN_RRSET_BUF);
	sign_put_record(&b, DNS_TYPE_SOA, ttl, fresh, len);
	rrset_wire_t rs = {
		.type = DNS_TYPE_SOA, .rr_count = 1, .data_len = (uint32_t)b.pos, .data = c->buf
	};
	if (rc == 0)
		rc = add_rrset(c, c->apex, &rs);
	return rc < 0 ? rc : sign_add_rrsigs(c, c->apex, &rs, SIGN_KEY_ZSK);
}

/* Insert type t into the sorted types[0..*n). */
void sign_types_insert(uint16_t *types, size_t *n, uint16_t t)
{
	size_t i = *n;
	for (; i > 0 && types[i - 1] > t; i--)
		types[i] = types[i - 1];
	types[i] = t;
	(*n)++;
}

/* The type bit maps (RFC 4034 4.1.2) of the sorted types[0..n) into w. */
void sign_put_bitmap(wire_t *w, const uint16_t *types, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint8_t window = (uint8_t)(types[i] >> 8), bits[32] = { 0 }, len = 0;
		for (; i < n && types[i] >> 8 == window; i++) {
			uint8_t low = (uint8_t)types[i];
			bits[low / 8] |= (uint8_t)(0x80 >> (low % 8));
			len = (uint8_t)(low / 8 + 1);
		}
		wire_write_u8(w, window);
		wire_write_u8(w, len);
		wire_write_bytes(w, bits, len);
	}
}

/*
 * Which keys sign an RRset: at the apex CDS and CDNSKEY by the KSK, a key
 * the parent's DS set holds (RFC 7344 4.1), as the DNSKEY RRset is; every
 * other by the ZSK.
 */
sign_key_role_t sign_signer_role(bool apex, uint16_t type)
{
	return apex && (type == DNS_TYPE_CDS || type == DNS_TYPE_CDNSKEY) ? SIGN_KEY_KSK
									  : SIGN_KEY_ZSK;
}

/*
 * Node n's RRSIGs (what it is authoritative for: at a delegation only the
 * DS, RFC 4035 2.2); the types its NSEC or NSEC3 shows gather in
 * c->types[0..*nt) (at a delegation NS and DS, not its glue, RFC 4035
 * 2.3), and *sigs says whether it has an RRSIG.
 */
static int sign_data(sign_ctx_t *c, const znode_t *n, size_t *nt, bool *sigs)
{
	const uint8_t *owner = znode_name(n);
	bool apex = n->flags & ZNODE_APEX, deleg = !apex && (n->flags & ZNODE_DELEG);
	const zrrset_t *rs = znode_rrsets(n);
	int rc = 0;
	*nt = 0;
	*sigs = false;
	for (uint16_t i = 0; rc == 0 && i < n->rrset_count; i++) {
		uint16_t t = rs[i].set.type;
		if (deleg && t != DNS_TYPE_NS && t != DNS_TYPE_DS)
			continue;
		if (sign_signer_role(apex, t) == SIGN_KEY_KSK && c->o->cds_cdnskey)
			continue; /* the zone's own, replaced by add_dnskeys */
		c->types[(*nt)++] = t;
		if (deleg && t != DNS_TYPE_DS)
			continue;
		*sigs = true;
		if (!(apex && t == DNS_TYPE_SOA)) /* the new SOA is signed where it is made */
			rc = sign_add_rrsigs(c, owner, &rs[i].set, sign_signer_role(apex, t));
	}
	if (apex && c->o->cds_cdnskey) {
		sign_types_insert(c->types, nt, DNS_TYPE_CDS);
		sign_types_insert(c->types, nt, DNS_TYPE_CDNSKEY);
	}
	if (apex) {
		sign_types_insert(c->types, nt, DNS_TYPE_DNSKEY);
		if (c->o->nsec3)
			sign_types_insert(c->types, nt, DNS_TYPE_NSEC3PARAM);
	}
	return rc;
}

/* One record of type with rdata[0..len) at owner, added and signed by the ZSKs. */
int sign_add_signed(sign_ctx_t *c, const uint8_t *owner, uint16_t type, uint32_t ttl,
		    const uint8_t *rdata, size_t len)
{
	wire_t w;
	wire_init_write(&w, c->buf, SIGN_RRSET_BUF - NAME_MAXLEN - SIGN_BITMAP_MAX - 300);
	sign_put_record(&w, type, ttl, rdata, len);
	rrset_wire_t rs = {
		.type = type, .rr_count = 1, .data_len = (uint32_t)w.pos, .data = c->buf
	};
	int rc = w.err ? w.err : add_rrset(c, owner, &rs);
	return rc < 0 ? rc : sign_add_rrsigs(c, owner, &rs, SIGN_KEY_ZSK);
}

/* Where an NSEC or NSEC3 RDATA is put together: the end of c->buf. */
void sign_rdata_writer(sign_ctx_t *c, wire_t *r)
{
	size_t room = NAME_MAXLEN + SIGN_BITMAP_MAX + 300;
	wire_init_write(r, c->buf + SIGN_RRSET_BUF - room, room);
}

/* Node n signed, and its NSEC to next (RFC 4034 4.1) with RRSIG and NSEC in its bitmap. */
static int sign_node(sign_ctx_t *c, const znode_t *n, const uint8_t *next)
{
	size_t nt;
	bool sigs;
	int rc = sign_data(c, n, &nt, &sigs);
	sign_types_insert(c->types, &nt, DNS_TYPE_RRSIG);
	sign_types_insert(c->types, &nt, DNS_TYPE_NSEC);
	wire_t r;
	sign_rdata_writer(c, &r);
	wire_write_bytes(&r, next, name_length(next));
	sign_put_bitmap(&r, c->types, nt);
	if (rc == 0)
		rc = r.err ? r.err
			   : sign_add_signed(c, znode_name(n), DNS_TYPE_NSEC, c->nsec_ttl, r.buf,
					     r.pos);
	return rc;
}

/* Every NSEC owner in canonical order, each signed with its NSEC to the next, the last to the apex.
 */
static int sign_nodes(sign_ctx_t *c, const zone_t *z)
{
	zone_iter_t it;
	const znode_t *prev = NULL;
	int rc = 0;
	for (const znode_t *n = zone_first(z, &it); rc == 0 && n; n = zone_next(&it)) {
		/* RFC 4035 2.3: names with authoritative data and delegations; not glue, not ENTs
		 */
		if (!(n->flags & ZNODE_DATA) || (n->flags & ZNODE_OCCLUDED))
			continue;
		if (prev)
			rc = sign_node(c, prev, znode_name(n));
		prev = n;
	}
	return rc == 0 ? sign_node(c, prev, c->apex) : rc;
}

/* A name of the NSEC3 chain: its hash and its node. */
typedef struct chain_entry {
	uint8_t hash[ZONE_NSEC3_HASH_LEN];
	const znode_t *node;
} chain_entry_t;

static int chain_cmp(const void *a, const void *b)
{
	return memcmp(((const chain_entry_t *)a)->hash, ((const chain_entry_t *)b)->hash,
		      ZONE_NSEC3_HASH_LEN);
}

/*
 * NSEC3PARAM's RDATA (RFC 5155 4.2), the start of an NSEC3's (3.2), into
 * w: flags 0 in an NSEC3PARAM (4.1.2), the opt-out bit in an NSEC3 (3.1.2.1).
 */
void sign_put_nsec3_params(wire_t *w, const sign_nsec3_t *p, bool nsec3)
{
	wire_write_u8(w, 1); /* SHA-1, the one hash (RFC 5155 11) */
	wire_write_u8(w, nsec3 && p->opt_out ? 1 : 0);
	wire_write_u16(w, p->iterations);
	wire_write_u8(w, p->salt_len);
	wire_write_bytes(w, p->salt, p->salt_len);
}

/* The NSEC3 hash of name (lowercase wire, RFC 5155 5) into out. */
int sign_nsec3_hash(const sign_nsec3_t *p, const uint8_t *name, uint8_t *out)
{
	dnssec_nsec3_params_t params = { .algorithm = DNSSEC_NSEC3_ALGORITHM_SHA1,
					 .iterations = p->iterations,
					 .salt = { .data = (uint8_t *)p->salt,
						   .size = p->salt_len } };
	dnssec_binary_t in = { .data = (uint8_t *)name, .size = name_length(name) }, h = { 0 };
	int r = dnssec_nsec3_hash(&in, &params, &h);
	bool ok = r == DNSSEC_EOK && h.size == ZONE_NSEC3_HASH_LEN;
	if (ok)
		memcpy(out, h.data, ZONE_NSEC3_HASH_LEN);
	dnssec_binary_free(&h);
	return ok ? 0 : SHOAL_ENOMEM;
}

/* The owner of the NSEC3 of hash: its base32hex label (RFC 5155 3) over the apex. */
void sign_nsec3_owner(const sign_ctx_t *c, const uint8_t *hash, uint8_t *owner)
{
	char text[40];
	ldns_b32_ntop_extended_hex(hash, ZONE_NSEC3_HASH_LEN, text, sizeof(text));
	owner[0] = 32;
	for (int i = 0; i < 32; i++)
		owner[1 + i] = name_lower_octet((uint8_t)text[i]);
	memcpy(owner + 33, c->apex, name_length(c->apex));
}

/* Entry e's node signed, and its NSEC3 to the next hash (RFC 5155 3.2, 7.1). */
static int sign_nsec3_entry(sign_ctx_t *c, const chain_entry_t *e, const uint8_t *next)
{
	size_t nt;
	bool sigs;
	int rc = sign_data(c, e->node, &nt, &sigs);
	if (sigs || (e->node->flags & ZNODE_APEX))
		sign_types_insert(c->types, &nt, DNS_TYPE_RRSIG);
	wire_t r;
	sign_rdata_writer(c, &r);
	sign_put_nsec3_params(&r, c->o->nsec3, true);
	wire_write_u8(&r, ZONE_NSEC3_HASH_LEN);
	wire_write_bytes(&r, next, ZONE_NSEC3_HASH_LEN);
	sign_put_bitmap(&r, c->types, nt);
	uint8_t owner[NAME_MAXLEN];
	sign_nsec3_owner(c, e->hash, owner);
	if (rc == 0)
		rc = r.err ? r.err
			   : sign_add_signed(c, owner, DNS_TYPE_NSEC3, c->nsec_ttl, r.buf, r.pos);
	return rc;
}

/* Whether n is a delegation without DS: what opt-out leaves out of the chain (RFC 5155 6). */
static bool insecure_cut(const znode_t *n)
{
	return !(n->flags & ZNODE_APEX) && (n->flags & ZNODE_DELEG) && !znode_rrset(n, DNS_TYPE_DS);
}

/*
 * The NSEC3PARAM and the chain: every name with authoritative data, every
 * delegation and every empty non-terminal not below a cut (RFC 5155 7.1),
 * but with opt-out the insecure delegations (an empty non-terminal above
 * them keeps its NSEC3, which 7.1 allows), hashed, sorted, each NSEC3 to
 * the next, the last to the first.
 */
static int sign_nsec3_chain(sign_ctx_t *c, const zone_t *z)
{
	chain_entry_t *chain = malloc((z->node_count + 1) * sizeof(*chain));
	size_t n = 0;
	zone_iter_t it;
	int rc = chain ? 0 : SHOAL_ENOMEM;
	for (const znode_t *x = zone_first(z, &it); rc == 0 && x; x = zone_next(&it)) {
		if ((x->flags & ZNODE_OCCLUDED) || (c->o->nsec3->opt_out && insecure_cut(x)))
			continue;
		chain[n].node = x;
		rc = sign_nsec3_hash(c->o->nsec3, znode_name(x), chain[n++].hash);
	}
	if (rc == 0)
		qsort(chain, n, sizeof(*chain), chain_cmp);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = sign_nsec3_entry(c, &chain[i], chain[(i + 1) % n].hash);
	wire_t r;
	sign_rdata_writer(c, &r);
	sign_put_nsec3_params(&r, c->o->nsec3, false);
	/* RFC 5155 4: the TTL is not said; 0, as Knot and BIND publish it */
	if (rc == 0)
		rc = sign_add_signed(c, c->apex, DNS_TYPE_NSEC3PARAM, 0, r.buf, r.pos);
	free(chain);
	return rc;
}

/* Whether ks has a KSK and a ZSK that can sign. */
bool sign_keys_usable(const sign_keyset_t *ks)
{
	bool ksk = false, zsk = false;
	for (size_t i = 0; i < ks->count; i++) {
		bool can = sign_key_can_sign(&ks->keys[i]);
		ksk |= can && ks->keys[i].role == SIGN_KEY_KSK;
		zsk |= can && ks->keys[i].role == SIGN_KEY_ZSK;
	}
	return ksk && zsk;
}

int sign_zone(const zone_t *z, const sign_keyset_t *ks, const sign_zone_opts_t *o,
	      changeset_t **out)
{
	const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
	*out = NULL;
	if (!soa)
		return SHOAL_EZONE;
	if (z->denial != ZONE_DENIAL_NONE || soa->sigs || znode_rrset(z->apex, DNS_TYPE_DNSKEY))
		return SHOAL_EEXIST;
	if (!sign_keys_usable(ks))
		return SHOAL_EINVAL;
	const uint8_t *apex = znode_name(z->apex);
	sign_ctx_t *c = sign_ctx_new(ks, o, apex);
	if (!c)
		return SHOAL_ENOMEM;
	/* the SOA's wire was checked when z was built */
	int rc = sign_replace_soa(c, soa->set.data, soa->set.data);
	if (rc == 0)
		rc = add_dnskeys(c, z);
	if (rc == 0)
		rc = c->o->nsec3 ? sign_nsec3_chain(c, z) : sign_nodes(c, z);
	return sign_ctx_finish(c, rc, out);
}

int sign_ctx_finish(sign_ctx_t *c, int rc, changeset_t **out)
{
	if (rc == 0)
		rc = sign_flush(c);
	if (rc == 0)
		rc = changeset_seal(c->cs);
	if (rc == 0) {
		*out = c->cs;
		c->cs = NULL;
	}
	sign_ctx_free(c);
	return rc;
}

sign_ctx_t *sign_ctx_new(const sign_keyset_t *ks, const sign_zone_opts_t *o, const uint8_t *apex)
{
	sign_ctx_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*c = (sign_ctx_t){ .ks = ks, .o = o, .apex = apex };
	c->cs = changeset_new();
	c->types = malloc((65536 + 3) * sizeof(*c->types));
	c->buf = malloc(SIGN_RRSET_BUF);
	c->jobs = malloc(SIGN_BATCH * sizeof(*c->jobs));
	c->sigs = malloc((size_t)SIGN_BATCH * RRSIG_MAX);
	if (c->cs && c->types && c->buf && c->jobs && c->sigs)
		return c;
	sign_ctx_free(c);
	return NULL;
}

void sign_ctx_free(sign_ctx_t *c)
{
	if (!c)
		return;
	changeset_unref(c->cs);
	free(c->types);
	free(c->buf);
	free(c->jobs);
	free(c->sigs);
	free(c->arena);
	free(c);
}
