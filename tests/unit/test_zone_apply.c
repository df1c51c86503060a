/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/apply.c: changes applied to a version give what a
 * build of the same records from scratch gives (every lookup the answer
 * makes, and answer_query octet for octet), over 1,000 random small
 * changesets on unsigned, NSEC and NSEC3 zones and on the zones of the
 * differential suites reached by 1,000 changesets; a change that fails a
 * check leaves the version served as it was; a small change shares the
 * rest of the zone.
 */
#include "config.h"

#include <ldns/ldns.h>
#include <malloc.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "proto/wire.h"
#include "tests/unit/unit.h"
#include "zone/answer.h"
#include "zone/apply.h"
#include "zone/changeset.h"
#include "zone/internal.h"
#include "zone/write.h"
#include "zone/zonedb.h"

/* ---- a model: the records a version should hold ---- */

#define RD_MAX 1200

typedef struct mrec {
	uint8_t owner[NAME_MAXLEN]; /* lowercase wire */
	uint16_t type, rdlen;
	uint32_t ttl;
	uint8_t rd[RD_MAX];
} mrec_t;

typedef struct model {
	uint8_t apex[NAME_MAXLEN];
	mrec_t *r;
	size_t n, cap;
} model_t;

static bool same_rec(const mrec_t *a, const mrec_t *b)
{
	return a->type == b->type && a->rdlen == b->rdlen && name_equal(a->owner, b->owner) &&
	       memcmp(a->rd, b->rd, a->rdlen) == 0;
}

static long model_find(const model_t *m, const mrec_t *r)
{
	for (size_t i = 0; i < m->n; i++)
		if (same_rec(&m->r[i], r))
			return (long)i;
	return -1;
}

/* Add r, or set the TTL of the one there. */
static void model_put(model_t *m, const mrec_t *r)
{
	long i = model_find(m, r);
	if (i >= 0) {
		m->r[i].ttl = r->ttl;
		return;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->r = realloc(m->r, m->cap * sizeof(*m->r));
		CU_ASSERT_PTR_NOT_NULL_FATAL(m->r);
	}
	m->r[m->n++] = *r;
}

static void model_del(model_t *m, const mrec_t *r)
{
	long i = model_find(m, r);
	if (i >= 0)
		m->r[i] = m->r[--m->n];
}

static void model_copy(model_t *dst, const model_t *src)
{
	free(dst->r);
	*dst = *src;
	dst->r = malloc((src->cap ? src->cap : 1) * sizeof(*dst->r));
	CU_ASSERT_PTR_NOT_NULL_FATAL(dst->r);
	memcpy(dst->r, src->r, src->n * sizeof(*dst->r));
}

static bool quiet = true;

static void on_msg(void *arg, bool is_error, const char *msg)
{
	char *last = arg;
	if (last && is_error)
		snprintf(last, 1024, "%s", msg);
	if (!quiet)
		fprintf(stderr, "  %s %s\n", is_error ? "E" : "W", msg);
}

/* The zone of the model's records, built from scratch as a load builds it. */
static int model_build(const model_t *m, zone_t **out)
{
	zbuild_t *b = zbuild_new("model", m->apex, on_msg, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	for (size_t i = 0; i < m->n; i++)
		zbuild_add(b, "model", (unsigned)i + 1, NULL, m->r[i].owner, m->r[i].type,
			   DNS_CLASS_IN, m->r[i].ttl, m->r[i].rd, m->r[i].rdlen);
	return zbuild_finish(b, out);
}

/* Every record of z into m. */
static void model_of(model_t *m, const zone_t *z)
{
	memcpy(m->apex, znode_name(z->apex), z->apex->name_len);
	m->n = 0;
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it))
		for (uint16_t k = 0; k < n->rrset_count; k++) {
			const rrset_wire_t *s = &znode_rrsets(n)[k].set;
			for (const uint8_t *p = s->data; p < s->data + s->data_len;
			     p += 10 + wire_get_u16(p + 8)) {
				mrec_t r = { .type = wire_get_u16(p),
					     .ttl = wire_get_u32(p + 4),
					     .rdlen = wire_get_u16(p + 8) };
				CU_ASSERT_FATAL(r.rdlen <= RD_MAX);
				memcpy(r.owner, znode_name(n), n->name_len);
				memcpy(r.rd, p + 10, r.rdlen);
				model_put(m, &r);
			}
		}
}

static const mrec_t *model_soa(const model_t *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->r[i].type == DNS_TYPE_SOA)
			return &m->r[i];
	return NULL;
}

static uint32_t rec_serial(const mrec_t *r)
{
	return wire_get_u32(r->rd + r->rdlen - 20);
}

static void set_serial(mrec_t *r, uint32_t serial)
{
	uint8_t *p = r->rd + r->rdlen - 20;
	p[0] = (uint8_t)(serial >> 24);
	p[1] = (uint8_t)(serial >> 16);
	p[2] = (uint8_t)(serial >> 8);
	p[3] = (uint8_t)serial;
}

/* ---- comparing two versions ---- */

static char why[2048];

static bool differ(const char *fmt, const uint8_t *name)
{
	char text[NAME_TEXT_MAX] = "-";
	if (name)
		name_to_text(name, text, sizeof(text));
	snprintf(why, sizeof(why), fmt, text);
	return false;
}

static bool same_wire(const rrset_wire_t *x, const rrset_wire_t *y)
{
	if (!x || !y)
		return x == y;
	if (x->type != y->type || x->rr_count != y->rr_count || x->data_len != y->data_len ||
	    x->name_count != y->name_count || memcmp(x->data, y->data, x->data_len) != 0)
		return false;
	for (uint16_t i = 0; i < x->name_count; i++)
		if (x->names[i] != y->names[i])
			return false;
	return true;
}

/* The names of two nodes (or both NULL) the same. */
static bool same_node(const znode_t *x, const znode_t *y)
{
	if (!x || !y)
		return x == y;
	return name_equal(znode_name(x), znode_name(y));
}

/* What the lookups the answer makes give for name in a and b: the same. */
static bool same_lookups(const zone_t *a, const zone_t *b, const uint8_t *name)
{
	if (!same_node(zone_lookup(a, name), zone_lookup(b, name)))
		return differ("lookup %s", name);
	if (!same_node(zone_find_le(a, name), zone_find_le(b, name)))
		return differ("find_le %s", name);
	if (a->denial == ZONE_DENIAL_NSEC &&
	    !same_node(zone_nsec_cover(a, name), zone_nsec_cover(b, name)))
		return differ("NSEC cover of %s", name);
	if (a->denial == ZONE_DENIAL_NSEC3) {
		bool ea, eb;
		const znode_t *x = zone_nsec3_find(a, name, &ea),
			      *y = zone_nsec3_find(b, name, &eb);
		if (ea != eb || !same_node(x, y))
			return differ("NSEC3 of %s", name);
	}
	return true;
}

/* Names near n's that a lookup may meet: below it, beside it, its wildcard. */
static bool same_probes(const zone_t *a, const zone_t *b, const uint8_t *name, size_t len)
{
	static const char *const before[] = { "\001\001", "\001-", "\002zz", "\001*", "\002nx" };
	for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		uint8_t probe[NAME_MAXLEN];
		size_t plen = strlen(before[i]);
		if (plen + len > NAME_MAXLEN)
			continue;
		memcpy(probe, before[i], plen);
		memcpy(probe + plen, name, len);
		if (!same_lookups(a, b, probe))
			return false;
	}
	return true;
}

/* Two nodes of one name: the same flags, RRsets, signatures, parent and NSEC3. */
static bool same_contents(const zone_t *a, const zone_t *b, const znode_t *x, const znode_t *y)
{
	if (x->name_len != y->name_len || !name_equal(znode_name(x), znode_name(y)))
		return differ("names differ at %s", znode_name(x));
	if ((x->flags & ZNODE_ANSWER_FLAGS) != (y->flags & ZNODE_ANSWER_FLAGS) ||
	    x->labels != y->labels || x->rrset_count != y->rrset_count)
		return differ("flags or RRset count of %s", znode_name(x));
	for (uint16_t k = 0; k < x->rrset_count; k++)
		if (!same_wire(&znode_rrsets(x)[k].set, &znode_rrsets(y)[k].set) ||
		    !same_wire(znode_rrsets(x)[k].sigs, znode_rrsets(y)[k].sigs))
			return differ("an RRset of %s", znode_name(x));
	if (!same_node(zone_parent(a, x), zone_parent(b, y)))
		return differ("parent of %s", znode_name(x));
	const znode_t *m = zone_nsec3_match(a, x);
	if (!same_node(m, zone_nsec3_match(b, y)))
		return differ("NSEC3 match of %s", znode_name(x));
	/* a link to the version's own node, never to one of a version before */
	if (m && zone_lookup(a, znode_name(m)) != m)
		return differ("NSEC3 match of %s is not the version's node", znode_name(x));
	return true;
}

/* Whether a (applied) and b (built) hold and find the same: why says where not. */
static bool same_store(const zone_t *a, const zone_t *b)
{
	if (a->node_count != b->node_count || a->rr_count != b->rr_count ||
	    a->serial != b->serial || a->denial != b->denial) {
		snprintf(why, sizeof(why),
			 "nodes %zu %zu, records %zu %zu, serial %u %u, denial %d %d",
			 a->node_count, b->node_count, a->rr_count, b->rr_count, a->serial,
			 b->serial, a->denial, b->denial);
		return false;
	}
	if (!same_wire(&a->neg_soa, &b->neg_soa) || !same_wire(a->neg_soa_sigs, b->neg_soa_sigs))
		return differ("negative SOA%s", NULL);
	if (a->nsec.count != b->nsec.count || a->nsec3.chain.count != b->nsec3.chain.count ||
	    a->nsec3.unmatched != b->nsec3.unmatched)
		return differ("NSEC owners, NSEC3 chain or unmatched names%s", NULL);
	zone_iter_t ia, ib;
	const znode_t *x = zone_first(a, &ia), *y = zone_first(b, &ib);
	for (; x && y; x = zone_next(&ia), y = zone_next(&ib)) {
		const uint8_t *name = znode_name(x);
		if (!same_contents(a, b, x, y) || zone_lookup(a, name) != x ||
		    !same_lookups(a, b, name) || !same_probes(a, b, name, x->name_len))
			return false;
	}
	return x || y ? differ("the walks end apart%s", NULL) : true;
}

/* ---- answers ---- */

typedef struct query {
	uint8_t pkt[NAME_MAXLEN + 64];
	size_t len;
	bool tcp;
} query_t_;

typedef struct queries {
	query_t_ *q;
	size_t n, cap;
} queries_t;

/* A query for name (wire) type class, with EDNS of size edns (0: none) and DO. */
static void query_add(queries_t *qs, const uint8_t *name, uint16_t type, uint16_t qclass,
		      uint16_t edns, bool dnssec, uint16_t flags, bool tcp)
{
	if (qs->n == qs->cap) {
		qs->cap = qs->cap ? 2 * qs->cap : 1024;
		qs->q = realloc(qs->q, qs->cap * sizeof(*qs->q));
		CU_ASSERT_PTR_NOT_NULL_FATAL(qs->q);
	}
	query_t_ *q = &qs->q[qs->n++];
	wire_t w;
	wire_init_write(&w, q->pkt, sizeof(q->pkt));
	wire_write_u16(&w, (uint16_t)qs->n);
	wire_write_u16(&w, flags);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, edns ? 1 : 0);
	wire_write_bytes(&w, name, name_length(name));
	wire_write_u16(&w, type);
	wire_write_u16(&w, qclass);
	if (edns) {
		wire_write_u8(&w, 0);
		wire_write_u16(&w, DNS_TYPE_OPT);
		wire_write_u16(&w, edns);
		wire_write_u32(&w, dnssec ? 0x8000 : 0);
		wire_write_u16(&w, 0);
	}
	q->len = w.pos;
	q->tcp = tcp;
}

/* Every name of the model and some near them, asked for the types of a zone, DO or not. */
static void queries_of(queries_t *qs, const model_t *m)
{
	static const uint16_t types[] = { DNS_TYPE_A,    DNS_TYPE_AAAA,  DNS_TYPE_TXT,
					  DNS_TYPE_NS,   DNS_TYPE_DS,    DNS_TYPE_MX,
					  DNS_TYPE_ANY,  DNS_TYPE_RRSIG, DNS_TYPE_NSEC3,
					  DNS_TYPE_CNAME };
	for (size_t i = 0; i < m->n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = name_equal(m->r[j].owner, m->r[i].owner);
		if (seen)
			continue;
		uint8_t below[NAME_MAXLEN] = { 2, 'q', 'q' };
		size_t len = name_length(m->r[i].owner);
		if (len + 3 <= NAME_MAXLEN)
			memcpy(below + 3, m->r[i].owner, len);
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			for (int dnssec = 0; dnssec < 2; dnssec++) {
				query_add(qs, m->r[i].owner, types[t], DNS_CLASS_IN, 1232, dnssec,
					  0, false);
				if (len + 3 <= NAME_MAXLEN && t < 2)
					query_add(qs, below, types[t], DNS_CLASS_IN, 1232, dnssec,
						  0, false);
			}
	}
}

/* The same answers, octet for octet, from a and b, each served alone by a set like db. */
static bool same_answers(const zonedb_t *db, const zone_t *a, const zone_t *b, const queries_t *qs)
{
	zonedb_t *da = NULL, *dbb = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_replace(db, 0, a, NULL, &da), 0);
	CU_ASSERT_EQUAL_FATAL(zonedb_replace(db, 0, b, NULL, &dbb), 0);
	static uint8_t oa[DNS_TCP_MAX], ob[DNS_TCP_MAX];
	bool same = true;
	for (size_t i = 0; i < qs->n && same; i++) {
		answer_ctx_t ctx = { .edns_size = 1232, .tcp = qs->q[i].tcp };
		answer_info_t ia, ib;
		size_t la = answer_query(da, qs->q[i].pkt, qs->q[i].len, oa, sizeof(oa), &ctx, &ia);
		size_t lb =
			answer_query(dbb, qs->q[i].pkt, qs->q[i].len, ob, sizeof(ob), &ctx, &ib);
		if (la != lb || memcmp(oa, ob, la) != 0) {
			char name[NAME_TEXT_MAX];
			name_to_text(qs->q[i].pkt + DNS_HEADER_SIZE, name, sizeof(name));
			snprintf(why, sizeof(why), "the answers to query %zu (%s) differ", i, name);
			same = false;
		}
	}
	zonedb_free(da);
	zonedb_free(dbb);
	return same;
}

/* ---- changes ---- */

/* A changeset from the SOA of `from` to `to`: dels and adds. */
static changeset_t *changes(const mrec_t *soa_from, const mrec_t *soa_to, const mrec_t *dels,
			    size_t nd, const mrec_t *adds, size_t na)
{
	changeset_t *cs = changeset_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	/* each side: its SOA, then its records */
	for (int add = 0; add < 2; add++) {
		const mrec_t *soa = add ? soa_to : soa_from, *r = add ? adds : dels;
		size_t n = add ? na : nd;
		for (size_t i = 0; i <= n; i++) {
			const mrec_t *x = i ? &r[i - 1] : soa;
			CU_ASSERT_EQUAL_FATAL(
				changeset_add(cs, add, x->owner, x->type, x->ttl, x->rd, x->rdlen),
				0);
		}
	}
	CU_ASSERT_EQUAL_FATAL(changeset_seal(cs), 0);
	return cs;
}

/* A digest of every octet a version holds: its records, flags and names, in order. */
static uint64_t digest(const zone_t *z)
{
	uint64_t h = 1469598103934665603u;
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it)) {
		const uint8_t *p = znode_name(n);
		for (uint8_t i = 0; i < n->name_len; i++)
			h = (h ^ p[i]) * 1099511628211u;
		h = (h ^ n->flags) * 1099511628211u;
		for (uint16_t k = 0; k < n->rrset_count; k++) {
			const rrset_wire_t *s = &znode_rrsets(n)[k].set;
			for (uint32_t i = 0; i < s->data_len; i++)
				h = (h ^ s->data[i]) * 1099511628211u;
		}
	}
	return h ^ z->serial ^ z->node_count;
}

/* ---- random zones ---- */

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

static const char *const labels[] = { "a", "b", "c", "*", "www", "ns", "x" };
#define LABELS (sizeof(labels) / sizeof(labels[0]))

/* A name of the pool below apex: up to three labels of `labels`. */
static void pool_name(const model_t *m, uint8_t out[NAME_MAXLEN])
{
	char text[64] = "";
	unsigned depth = rnd(4);
	for (unsigned i = 0; i < depth; i++) {
		strcat(text, i ? "." : "");
		strcat(text, labels[rnd(LABELS)]);
	}
	uint8_t rel[NAME_MAXLEN];
	if (depth == 0) {
		memcpy(out, m->apex, name_length(m->apex));
		return;
	}
	CU_ASSERT_FATAL(name_from_text(text, m->apex, rel) > 0);
	memcpy(out, rel, name_length(rel));
}

/* An existing owner of the model, or NULL. */
static const uint8_t *model_owner(const model_t *m)
{
	return m->n ? m->r[rnd((uint32_t)m->n)].owner : NULL;
}

static void rec_name_rdata(mrec_t *r, const uint8_t *target)
{
	size_t len = name_length(target);
	memcpy(r->rd + r->rdlen, target, len);
	r->rdlen = (uint16_t)(r->rdlen + len);
}

static void rec_bytes(mrec_t *r, const void *p, size_t n)
{
	memcpy(r->rd + r->rdlen, p, n);
	r->rdlen = (uint16_t)(r->rdlen + n);
}

/* The apex's NSEC3PARAM of the model: iterations and salt; false without one. */
static bool model_nsec3param(const model_t *m, uint16_t *iter, uint8_t *salt, uint8_t *salt_len)
{
	for (size_t i = 0; i < m->n; i++) {
		const mrec_t *r = &m->r[i];
		if (r->type == DNS_TYPE_NSEC3PARAM && name_equal(r->owner, m->apex) &&
		    zone_nsec3param_usable(r->rd, r->rdlen)) {
			*iter = wire_get_u16(r->rd + 2);
			*salt_len = r->rd[4];
			memcpy(salt, r->rd + 5, r->rd[4]);
			return true;
		}
	}
	return false;
}

/* The owner name of name's NSEC3 with the model's parameters (or others: wrong). */
static bool nsec3_owner_name(const model_t *m, const uint8_t *name, uint8_t out[NAME_MAXLEN],
			     uint8_t hash[ZONE_NSEC3_HASH_LEN], bool wrong)
{
	uint16_t iter;
	uint8_t salt[255], salt_len;
	if (!model_nsec3param(m, &iter, salt, &salt_len))
		return false;
	iter = (uint16_t)(iter + wrong);
	zone_t fake = { 0 };
	fake.nsec3.iterations = iter;
	fake.nsec3.salt_len = salt_len;
	fake.nsec3.salt = salt;
	zone_nsec3_hash(&fake, name, hash);
	char text[64];
	CU_ASSERT_FATAL(ldns_b32_ntop_extended_hex(hash, ZONE_NSEC3_HASH_LEN, text, sizeof(text)) ==
			32);
	out[0] = 32;
	for (int i = 0; i < 32; i++)
		out[1 + i] = (uint8_t)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + 32 : text[i]);
	memcpy(out + 33, m->apex, name_length(m->apex));
	return true;
}

/* A type bitmap of window 0 with A: RFC 4034 4.1.2. */
static const uint8_t bitmap[] = { 0, 1, 0x40 };

/* An NSEC3 record for name, right or with wrong parameters. */
static bool nsec3_rec(const model_t *m, const uint8_t *name, bool wrong, mrec_t *r)
{
	uint8_t hash[ZONE_NSEC3_HASH_LEN];
	uint16_t iter;
	uint8_t salt[255], salt_len;
	if (!model_nsec3param(m, &iter, salt, &salt_len) ||
	    !nsec3_owner_name(m, name, r->owner, hash, wrong))
		return false;
	iter = (uint16_t)(iter + wrong);
	r->type = DNS_TYPE_NSEC3;
	r->ttl = 300;
	r->rdlen = 0;
	uint8_t head[5] = { 1, (uint8_t)rnd(2), (uint8_t)(iter >> 8), (uint8_t)iter, salt_len };
	rec_bytes(r, head, 5);
	rec_bytes(r, salt, salt_len);
	uint8_t next[1 + ZONE_NSEC3_HASH_LEN] = { ZONE_NSEC3_HASH_LEN };
	next[1] = (uint8_t)rnd(256);
	rec_bytes(r, next, sizeof(next));
	rec_bytes(r, bitmap, sizeof(bitmap));
	return true;
}

/* A random record at owner (RDATA of its type's layout); the type among those of a zone. */
static void random_rec(const model_t *m, const uint8_t *owner, bool dnssec, mrec_t *r)
{
	static const uint16_t types[] = { DNS_TYPE_A,     DNS_TYPE_A,     DNS_TYPE_AAAA,
					  DNS_TYPE_TXT,   DNS_TYPE_MX,    DNS_TYPE_NS,
					  DNS_TYPE_CNAME, DNS_TYPE_DNAME, DNS_TYPE_DS,
					  DNS_TYPE_RRSIG, DNS_TYPE_NSEC };
	memset(r, 0, sizeof(*r));
	memcpy(r->owner, owner, name_length(owner));
	r->type = types[rnd(dnssec ? sizeof(types) / sizeof(types[0]) : 9)];
	r->ttl = 300;
	uint8_t target[NAME_MAXLEN];
	pool_name(m, target);
	switch (r->type) {
	case DNS_TYPE_A: {
		uint8_t a[4] = { 10, 0, 0, (uint8_t)rnd(4) };
		rec_bytes(r, a, 4);
		break;
	}
	case DNS_TYPE_AAAA: {
		uint8_t a[16] = { 0x20, 1, 0xd, 0xb8 };
		a[15] = (uint8_t)rnd(3);
		rec_bytes(r, a, 16);
		break;
	}
	case DNS_TYPE_TXT: {
		uint8_t t[4] = { 3, 't', 'x', (uint8_t)('0' + rnd(4)) };
		rec_bytes(r, t, 4);
		break;
	}
	case DNS_TYPE_MX: {
		uint8_t pref[2] = { 0, (uint8_t)rnd(3) };
		rec_bytes(r, pref, 2);
		rec_name_rdata(r, target);
		break;
	}
	case DNS_TYPE_DS: {
		uint8_t ds[36] = { 0, (uint8_t)rnd(3), 13, 2 };
		rec_bytes(r, ds, sizeof(ds));
		break;
	}
	case DNS_TYPE_RRSIG: {
		static const uint16_t covered[] = { DNS_TYPE_A, DNS_TYPE_NS, DNS_TYPE_NSEC,
						    DNS_TYPE_NSEC3, DNS_TYPE_SOA };
		uint16_t t = covered[rnd(5)];
		uint8_t head[18] = { (uint8_t)(t >> 8), (uint8_t)t, 13, 2, 0, 0, 1, 0x2c };
		head[17] = (uint8_t)rnd(3); /* the key tag's low octet */
		rec_bytes(r, head, sizeof(head));
		rec_name_rdata(r, m->apex);
		uint8_t sig[64] = { (uint8_t)rnd(256) };
		rec_bytes(r, sig, sizeof(sig));
		break;
	}
	case DNS_TYPE_NSEC:
		rec_name_rdata(r, target);
		rec_bytes(r, bitmap, sizeof(bitmap));
		break;
	default: /* NS, CNAME, DNAME: a name of the pool */
		rec_name_rdata(r, target);
	}
}

/* How a zone of the random tests is signed. */
enum signing { PLAIN, NSEC, NSEC3 };

/* The apex of a random zone: SOA, NS, and the denial's own records. */
static void random_zone(model_t *m, enum signing how)
{
	memset(m, 0, sizeof(*m));
	name_from_text("zt.test.", NULL, m->apex);
	mrec_t r = { .type = DNS_TYPE_SOA, .ttl = 3600 };
	memcpy(r.owner, m->apex, name_length(m->apex));
	uint8_t ns[NAME_MAXLEN];
	name_from_text("ns.zt.test.", NULL, ns);
	rec_name_rdata(&r, ns);
	rec_name_rdata(&r, ns);
	uint8_t soa[20] = { 0,   0,    0, 1,    0,    0, 0x1c, 0x20, 0, 0,
			    0xe, 0x10, 0, 0x12, 0x75, 0, 0,    0,    1, 0x2c };
	rec_bytes(&r, soa, sizeof(soa));
	model_put(m, &r);
	r = (mrec_t){ .type = DNS_TYPE_NS, .ttl = 3600 };
	memcpy(r.owner, m->apex, name_length(m->apex));
	rec_name_rdata(&r, ns);
	model_put(m, &r);
	if (how == NSEC) {
		r = (mrec_t){ .type = DNS_TYPE_NSEC, .ttl = 300 };
		memcpy(r.owner, m->apex, name_length(m->apex));
		rec_name_rdata(&r, ns);
		rec_bytes(&r, bitmap, sizeof(bitmap));
		model_put(m, &r);
	} else if (how == NSEC3) {
		r = (mrec_t){ .type = DNS_TYPE_NSEC3PARAM, .ttl = 0 };
		memcpy(r.owner, m->apex, name_length(m->apex));
		uint8_t p[7] = { 1, 0, 0, 2, 2, 0xab, 0xcd };
		rec_bytes(&r, p, sizeof(p));
		model_put(m, &r);
		CU_ASSERT_FATAL(nsec3_rec(m, m->apex, false, &r));
		model_put(m, &r);
	}
}

/* One random change of the model: a record added or deleted (with its NSEC3, sometimes). */
static void random_op(const model_t *m, enum signing how, mrec_t *dels, size_t *nd, mrec_t *adds,
		      size_t *na)
{
	uint32_t what = rnd(100);
	if (what < 35 && m->n > 3) {
		/* a record deleted; the apex's SOA, NS and denial only by flip_denial */
		const mrec_t *r = &m->r[rnd((uint32_t)m->n)];
		if (!name_equal(r->owner, m->apex) ||
		    (r->type != DNS_TYPE_SOA && r->type != DNS_TYPE_NS &&
		     r->type != DNS_TYPE_NSEC && r->type != DNS_TYPE_NSEC3PARAM))
			dels[(*nd)++] = *r;
		return;
	}
	uint8_t owner[NAME_MAXLEN];
	if (what < 55 && m->n)
		memcpy(owner, model_owner(m), NAME_MAXLEN);
	else
		pool_name(m, owner);
	mrec_t r;
	random_rec(m, owner, how != PLAIN, &r);
	if (r.type == DNS_TYPE_SOA || (name_equal(owner, m->apex) && r.type != DNS_TYPE_A &&
				       r.type != DNS_TYPE_TXT && r.type != DNS_TYPE_RRSIG))
		return; /* the apex keeps its denial: that change is tested on its own */
	adds[(*na)++] = r;
	if (how == NSEC3 && rnd(10) < 7 && nsec3_rec(m, owner, rnd(20) == 0, &r))
		adds[(*na)++] = r; /* the name's NSEC3, most of the time; a wrong one at times */
	if (how == NSEC3 && rnd(40) == 0) {
		/* other data at an NSEC3 owner: the chain's mixed case */
		mrec_t x;
		if (nsec3_rec(m, owner, false, &x)) {
			random_rec(m, x.owner, false, &r);
			if (r.type == DNS_TYPE_A)
				adds[(*na)++] = r;
		}
	}
}

/* The model after dels and adds. */
static void model_change(model_t *m, const mrec_t *dels, size_t nd, const mrec_t *adds, size_t na)
{
	for (size_t i = 0; i < nd; i++)
		model_del(m, &dels[i]);
	for (size_t i = 0; i < na; i++)
		model_put(m, &adds[i]);
}

/* Steps applied in place (sharing with the version before), and in all. */
static size_t in_place;
static size_t released; /* steps whose changeset went before step 2 (sets_read) */

/*
 * An NSEC3 zone's salt lies in its own apex's block, which the version
 * holds: not in an apex of the version it was made from, which may go.
 */
static bool salt_in_apex(const zone_t *z)
{
	if (z->denial != ZONE_DENIAL_NSEC3)
		return true;
	const uint8_t *from = znode_block(z->apex), *to = from + znode_size(z->apex);
	return z->nsec3.salt >= from && z->nsec3.salt + z->nsec3.salt_len <= to;
}

/* What a zone_apply_opts_t.sets_read saw: the changeset it frees, the lineage's heap nodes. */
typedef struct released {
	const changeset_t *cs;
	const zlin_t *lin;
	size_t heap, heap_then;
	unsigned calls;
} released_t;

static void release(void *arg)
{
	released_t *r = arg;
	changeset_unref(r->cs);
	r->cs = NULL;
	r->heap_then = r->lin->heap_count;
	r->calls++;
}

/*
 * One step: the changeset of dels and adds applied to *cur, and the
 * model's records after it built from scratch. When the build refuses the
 * records, the change must be refused too, *cur untouched; otherwise the
 * two versions must agree, and *cur becomes the new one. Returns whether
 * the change was taken.
 */
static bool step(zone_t **cur, model_t *m, const mrec_t *dels, size_t nd, const mrec_t *adds,
		 size_t na, const mrec_t *new_soa)
{
	model_t next = { 0 };
	model_copy(&next, m);
	const mrec_t *old_soa = model_soa(m);
	mrec_t soa_from = *old_soa;
	model_del(&next, old_soa);
	model_put(&next, new_soa);
	model_change(&next, dels, nd, adds, na);
	zone_t *built = NULL;
	int brc = model_build(&next, &built);
	changeset_t *cs = changes(&soa_from, new_soa, dels, nd, adds, na);
	uint64_t before = digest(*cur);
	/* the changeset goes when the apply says it is read (ASan sees any later read) */
	released_t r = { .cs = cs, .lin = (*cur)->lin, .heap = (*cur)->lin->heap_count };
	zone_apply_opts_t o = { .label = "test", .sets_read = release, .sets_arg = &r };
	zone_t *applied = NULL;
	const changeset_t *sets[1] = { cs };
	int arc = zone_apply(*cur, sets, 1, &o, &applied);
	changeset_unref(r.cs);
	CU_ASSERT(r.calls <= 1);
	CU_ASSERT_EQUAL(r.heap_then, r.calls ? r.heap : 0); /* before any node is made */
	released += r.calls;
	if (r.calls && arc == 0)
		CU_ASSERT_PTR_EQUAL(applied->lin, (*cur)->lin); /* in place, as it said */
	CU_ASSERT_EQUAL(digest(*cur), before); /* the version served is never written */
	bool taken = brc == 0;
	if (brc != 0) {
		CU_ASSERT_EQUAL(arc, SHOAL_EZONE);
		CU_ASSERT_PTR_NULL(applied);
	} else {
		CU_ASSERT_EQUAL_FATAL(arc, 0);
		if (!same_store(applied, built)) {
			CU_FAIL("the version applied is not the one built");
			fprintf(stderr, "  %s\n", why);
		}
		in_place += applied->lin == (*cur)->lin; /* a whole build starts a lineage */
		zone_unref(*cur);
		*cur = applied;
		if (!salt_in_apex(applied)) {
			CU_FAIL("the NSEC3 salt lies outside the version's apex");
			fprintf(stderr, "  serial %u\n", applied->serial);
		}
		model_copy(m, &next);
		/* the one version of its lineage: every heap node alive is one of its own */
		size_t heap = 0;
		zone_iter_t it;
		for (const znode_t *x = zone_first(*cur, &it); x; x = zone_next(&it))
			heap += (x->flags & ZNODE_HEAP) != 0;
		if (heap != (*cur)->lin->heap_count) {
			CU_FAIL("heap nodes no version holds");
			fprintf(stderr, "  serial %u: %zu heap nodes held, %zu alive\n",
				(*cur)->serial, heap, (*cur)->lin->heap_count);
			for (const znode_t *x = zone_first(*cur, &it); x; x = zone_next(&it))
				fprintf(stderr, "  held %p %u\n", (const void *)x, x->flags);
		}
	}
	zone_free(built);
	free(next.r);
	return taken;
}

/* A zone set serving one zone of apex like m's, to swap versions into. */
static zonedb_t *db_for(const model_t *m, const zone_t *z)
{
	char text[NAME_TEXT_MAX], path[] = "/tmp/shoal-apply.XXXXXX";
	name_to_text(m->apex, text, sizeof(text));
	CU_ASSERT_FATAL(unit_temp_file(path, "", 0) == 0);
	CU_ASSERT_FATAL(zone_write(z, path, "apply", NULL, NULL, NULL) == 0);
	zone_spec_t spec = { .name = text, .file = path, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db = NULL;
	CU_ASSERT_FATAL(zonedb_build(&spec, 1, NULL, NULL, NULL, NULL, &db) == 0);
	unlink(path);
	return db;
}

/*
 * 1,000 random changesets of 1 to 4 changes each on a zone signed `how`,
 * each applied and compared with the build of the same records; the
 * answers to every name compared every 50th step and at the end.
 */
static void random_walk(enum signing how, uint64_t seed)
{
	rnd_state = seed;
	model_t m;
	random_zone(&m, how);
	zone_t *cur = NULL;
	CU_ASSERT_EQUAL_FATAL(model_build(&m, &cur), 0);
	zonedb_t *db = db_for(&m, cur);
	size_t taken = 0, signed_steps = 0;
	in_place = released = 0;
	mrec_t denial = { 0 }; /* the apex's NSEC or NSEC3PARAM, while taken away */
	for (unsigned s = 1; s <= 1000; s++) {
		mrec_t dels[16], adds[16];
		size_t nd = 0, na = 0;
		for (unsigned k = 1 + rnd(4); k > 0; k--)
			random_op(&m, how, dels, &nd, adds, &na);
		/* now and then the denial goes for a step: a change not made in place */
		for (size_t i = 0; how != PLAIN && s % 250 == 0 && i < m.n; i++)
			if (name_equal(m.r[i].owner, m.apex) &&
			    (m.r[i].type == DNS_TYPE_NSEC || m.r[i].type == DNS_TYPE_NSEC3PARAM))
				dels[nd++] = denial = m.r[i];
		if (s % 250 == 1 && denial.type)
			adds[na++] = denial;
		mrec_t soa = *model_soa(&m);
		set_serial(&soa, rec_serial(&soa) + 1);
		taken += step(&cur, &m, dels, nd, adds, na, &soa);
		signed_steps += cur->denial != ZONE_DENIAL_NONE;
		if (s % 50 == 0 || s == 1000) {
			queries_t qs = { 0 };
			queries_of(&qs, &m);
			zone_t *built = NULL;
			CU_ASSERT_EQUAL_FATAL(model_build(&m, &built), 0);
			if (!same_answers(db, cur, built, &qs)) {
				CU_FAIL("an answer differs");
				fprintf(stderr, "  step %u: %s\n", s, why);
			}
			zone_free(built);
			free(qs.q);
		}
	}
	/* most steps are valid zones: the walk went somewhere, mostly in place */
	fprintf(stderr,
		" [%zu of 1000 steps taken, %zu in place, %zu changesets gone early, %zu signed, "
		"%zu records] ",
		taken, in_place, released, signed_steps, m.n);
	CU_ASSERT(taken > 600);
	CU_ASSERT(in_place > taken * 3 / 4);
	/* an NSEC3 zone's step 5 may still build whole: its changesets stay to the end */
	CU_ASSERT(how == NSEC3 ? released == 0 : released > in_place * 3 / 4);
	CU_ASSERT(how == PLAIN || signed_steps > 900);
	CU_ASSERT(m.n > 30);
	zone_unref(cur);
	zonedb_free(db);
	free(m.r);
}

static void test_random_unsigned(void)
{
	random_walk(PLAIN, 0x9e3779b97f4a7c15u);
}

static void test_random_nsec(void)
{
	random_walk(NSEC, 0x1234567887654321u);
}

static void test_random_nsec3(void)
{
	random_walk(NSEC3, 0xdeadbeefcafef00du);
}

/* ---- the zones of the differential suites, reached by 1,000 changesets ---- */

/* The cases of a corpus of tests/diff (NAME TYPE [dig options]) as queries. */
static void corpus_queries(queries_t *qs, const char *rel)
{
	char path[4096], line[512];
	FILE *f = fopen(unit_src_path(path, sizeof(path), rel), "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	while (fgets(line, sizeof(line), f)) {
		char *save, *name = strtok_r(line, " \t\n", &save),
			    *type = strtok_r(NULL, " \t\n", &save);
		if (!name || !type || name[0] == '#')
			continue;
		uint16_t qclass = DNS_CLASS_IN, edns = 1232, flags = 0;
		bool dnssec = false, tcp = false;
		for (char *opt; (opt = strtok_r(NULL, " \t\n", &save));) {
			if (strcmp(opt, "+dnssec") == 0)
				dnssec = true;
			else if (strcmp(opt, "+noedns") == 0)
				edns = 0;
			else if (strncmp(opt, "+bufsize=", 9) == 0)
				edns = (uint16_t)atoi(opt + 9);
			else if (strcmp(opt, "+tcp") == 0)
				tcp = true;
			else if (strcmp(opt, "+rec") == 0)
				flags |= DNS_FLAG_RD;
			else if (strcmp(opt, "+cd") == 0)
				flags |= DNS_FLAG_CD;
			else if (strcmp(opt, "-c") == 0 && (opt = strtok_r(NULL, " \t\n", &save)))
				qclass = strcmp(opt, "CH") == 0    ? DNS_CLASS_CH
					 : strcmp(opt, "ANY") == 0 ? 255
								   : 4;
		}
		uint8_t wire[NAME_MAXLEN];
		ldns_rr_type t = ldns_get_rr_type_by_name(type);
		if (name_from_text(name, NULL, wire) < 0 || t == 0)
			continue;
		query_add(qs, wire, (uint16_t)t, qclass, edns, dnssec, flags, tcp);
	}
	fclose(f);
}

/* A record of `from` that `to` lacks, or the other way round (direction in *add). */
static long farthest(const model_t *from, const model_t *to)
{
	for (size_t i = 0; i < from->n; i++)
		if (model_find(to, &from->r[i]) < 0 && from->r[i].type != DNS_TYPE_SOA)
			return (long)i;
	return -1;
}

/*
 * Zone file rel (origin from its name) loaded, and reached from a start
 * with half its records gone and others added, by 1,000 changesets of a
 * few records each that wander on the way (records taken away and put
 * back); the last one lands on the file's records and SOA. The version
 * those changes made must be the one loaded from the file: the same
 * store, and octet for octet the same answer to every case of the
 * suite's corpus.
 */
static void reach_file(const char *rel, const char *origin, const char *corpus, uint64_t seed)
{
	rnd_state = seed;
	char path[4096];
	uint8_t apex[NAME_MAXLEN];
	CU_ASSERT_FATAL(name_from_text(origin, NULL, apex) > 0);
	zone_t *target = NULL;
	CU_ASSERT_EQUAL_FATAL(
		zone_load(unit_src_path(path, sizeof(path), rel), apex, NULL, NULL, NULL, &target),
		0);
	model_t want = { 0 }, m = { 0 };
	model_of(&want, target);
	/* the start: half of the records but the SOA, and junk besides; the serial 1000 back */
	model_copy(&m, &want);
	for (size_t i = 0; i < m.n;)
		if (m.r[i].type != DNS_TYPE_SOA && rnd(2))
			m.r[i] = m.r[--m.n];
		else
			i++;
	mrec_t soa = *model_soa(&m);
	model_del(&m, &soa);
	set_serial(&soa, target->serial - 1000);
	model_put(&m, &soa);
	for (unsigned i = 0; i < 40; i++) {
		mrec_t r;
		uint8_t owner[NAME_MAXLEN];
		char text[32];
		snprintf(text, sizeof(text), "junk%u", i);
		CU_ASSERT_FATAL(name_from_text(text, apex, owner) > 0);
		random_rec(&m, owner, false, &r);
		if (r.type == DNS_TYPE_A || r.type == DNS_TYPE_TXT || r.type == DNS_TYPE_AAAA)
			model_put(&m, &r);
	}
	zone_t *cur = NULL;
	CU_ASSERT_EQUAL_FATAL(model_build(&m, &cur), 0);
	/* a reload of the file over the start: its records diffed against it, and applied */
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_load_changes(path, cur, NULL, NULL, NULL, 0, &cs), 0);
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t o = { .label = rel };
	zone_t *reloaded = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_apply(cur, sets, 1, &o, &reloaded), 0);
	changeset_unref(cs);
	if (!same_store(reloaded, target)) {
		CU_FAIL("the reload's version is not the file's");
		fprintf(stderr, "  %s: %s\n", rel, why);
	}
	zone_unref(reloaded);
	size_t refused = 0;
	for (unsigned s = 1; s <= 1000; s++) {
		mrec_t dels[8], adds[8];
		size_t nd = 0, na = 0;
		/* toward the file's records; now and then away from them until the last 200 */
		unsigned left = 1000 - s + 1, todo = 0;
		for (size_t i = 0; i < m.n; i++)
			todo += model_find(&want, &m.r[i]) < 0 && m.r[i].type != DNS_TYPE_SOA;
		for (size_t i = 0; i < want.n; i++)
			todo += model_find(&m, &want.r[i]) < 0 && want.r[i].type != DNS_TYPE_SOA;
		unsigned k = (todo + left - 1) / left + (s < 800 && rnd(3) == 0);
		for (; k > 0 && nd < 8 && na < 8; k--) {
			long i;
			if (s < 800 && rnd(4) == 0 && want.n) {
				const mrec_t *r = &want.r[rnd((uint32_t)want.n)];
				if (r->type != DNS_TYPE_SOA && model_find(&m, r) >= 0)
					dels[nd++] = *r; /* away: a record of the file taken out */
			} else if ((i = farthest(&m, &want)) >= 0 && rnd(2)) {
				dels[nd++] = m.r[i];
			} else if ((i = farthest(&want, &m)) >= 0) {
				adds[na++] = want.r[i];
			} else if ((i = farthest(&m, &want)) >= 0) {
				dels[nd++] = m.r[i];
			}
		}
		mrec_t next = *model_soa(&m);
		if (s == 1000)
			next = *model_soa(&want);
		else
			set_serial(&next, rec_serial(&next) + 1);
		refused += !step(&cur, &m, dels, nd, adds, na, &next);
	}
	model_t end = { 0 };
	model_of(&end, cur);
	CU_ASSERT_EQUAL(end.n, want.n);
	CU_ASSERT_EQUAL(refused, 0);
	if (!same_store(cur, target)) {
		CU_FAIL("the version reached is not the file's");
		fprintf(stderr, "  %s: %s\n", rel, why);
	}
	queries_t qs = { 0 };
	corpus_queries(&qs, corpus);
	queries_of(&qs, &want);
	zonedb_t *db = db_for(&want, target);
	if (!same_answers(db, cur, target, &qs)) {
		CU_FAIL("an answer of the corpus differs");
		fprintf(stderr, "  %s: %s\n", rel, why);
	}
	fprintf(stderr, " [%s: %zu records, %zu queries, %zu steps in place] ", origin, want.n,
		qs.n, in_place);
	zonedb_free(db);
	free(qs.q);
	zone_unref(cur);
	zone_free(target);
	free(want.r);
	free(m.r);
	free(end.r);
}

static void test_diff_zones_by_ixfr(void)
{
	static const char *const zones[][2] = {
		{ "tests/diff/zones/diff.test.zone", "diff.test." },
		{ "tests/diff/zones/sub.diff.test.zone", "sub.diff.test." },
		{ "tests/diff/zones/wild.test.zone", "wild.test." },
		{ "tests/diff/zones/other.test.zone", "other.test." }
	};
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		in_place = 0;
		reach_file(zones[i][0], zones[i][1], "tests/diff/queries.txt", 77 + i);
	}
}

static void test_dnssec_zones_by_ixfr(void)
{
	static const char *const zones[][2] = {
		{ "tests/diff/dnssec/secure.test.zone", "secure.test." },
		{ "tests/diff/dnssec/secure3.test.zone", "secure3.test." },
		{ "tests/diff/dnssec/signed.secure.test.zone", "signed.secure.test." }
	};
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		in_place = 0;
		reach_file(zones[i][0], zones[i][1], "tests/diff/dnssec/queries.txt", 99 + i);
	}
}

/* ---- changes refused ---- */

/* A zone to change: a few names, a CNAME, a delegation. */
static zone_t *small_zone(model_t *m)
{
	random_zone(m, PLAIN);
	static const char *const text[][3] = {
		{ "www", "A", "\x0a\x00\x00\x01" },
		{ "www", "A", "\x0a\x00\x00\x02" },
		{ "mail", "A", "\x0a\x00\x00\x03" },
		{ "alias", "CNAME", NULL },
	};
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		mrec_t r = { .ttl = 300 };
		CU_ASSERT_FATAL(name_from_text(text[i][0], m->apex, r.owner) > 0);
		r.type = strcmp(text[i][1], "A") == 0 ? DNS_TYPE_A : DNS_TYPE_CNAME;
		if (text[i][2])
			rec_bytes(&r, text[i][2], 4);
		else
			rec_name_rdata(&r, m->apex);
		model_put(m, &r);
	}
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(model_build(m, &z), 0);
	return z;
}

/* A record of the small zone's kind: owner (relative), type A or CNAME, one octet. */
static mrec_t small_rec(const model_t *m, const char *owner, uint16_t type, uint8_t last)
{
	mrec_t r = { .type = type, .ttl = 300 };
	CU_ASSERT_FATAL(name_from_text(owner, m->apex, r.owner) > 0);
	uint8_t a[4] = { 10, 0, 0, last };
	if (type == DNS_TYPE_A)
		rec_bytes(&r, a, 4);
	else
		rec_name_rdata(&r, m->apex);
	return r;
}

/* The change dels, adds applied to z must be refused with err and the message; z stays. */
static void refused_change(zone_t *z, const model_t *m, const mrec_t *dels, size_t nd,
			   const mrec_t *adds, size_t na, const zone_limits_t *limits, int err,
			   const char *message)
{
	mrec_t soa = *model_soa(m), next = soa;
	set_serial(&next, rec_serial(&soa) + 1);
	changeset_t *cs = changes(&soa, &next, dels, nd, adds, na);
	uint64_t before = digest(z);
	size_t heap = z->lin->heap_count;
	char last[1024] = "";
	zone_apply_opts_t o = {
		.label = "primary 192.0.2.1@53", .limits = limits, .msg = on_msg, .msg_arg = last
	};
	zone_t *out = (zone_t *)1;
	const changeset_t *sets[1] = { cs };
	CU_ASSERT_EQUAL(zone_apply(z, sets, 1, &o, &out), err);
	CU_ASSERT_PTR_NULL(out);
	if (message && !strstr(last, message)) {
		CU_FAIL("not the message expected");
		fprintf(stderr, "  wanted \"%s\", got \"%s\"\n", message, last);
	}
	/* the version served is as it was, and so is what its lineage holds */
	CU_ASSERT_EQUAL(digest(z), before);
	CU_ASSERT_EQUAL(z->lin->heap_count, heap);
	CU_ASSERT_PTR_NOT_NULL(zone_lookup(z, small_rec(m, "www", DNS_TYPE_A, 1).owner));
	changeset_unref(cs);
}

static void test_refused_changes(void)
{
	model_t m;
	zone_t *z = small_zone(&m);
	quiet = true;
	/* a record outside the zone */
	mrec_t out = small_rec(&m, "www", DNS_TYPE_A, 9);
	name_from_text("www.other.test.", NULL, out.owner);
	refused_change(z, &m, NULL, 0, &out, 1, NULL, SHOAL_EZONE,
		       "primary 192.0.2.1@53: zt.test.: www.other.test. A: outside the zone");
	/* a deletion of a record not there */
	mrec_t gone = small_rec(&m, "www", DNS_TYPE_A, 7);
	refused_change(z, &m, &gone, 1, NULL, 0, NULL, SHOAL_EZONE,
		       "deletes www.zt.test. A, a record the zone does not have");
	/* CNAME beside other data, both ways */
	mrec_t cname = small_rec(&m, "www", DNS_TYPE_CNAME, 0);
	refused_change(z, &m, NULL, 0, &cname, 1, NULL, SHOAL_EZONE,
		       "CNAME and other data at the same name");
	mrec_t beside = small_rec(&m, "alias", DNS_TYPE_A, 5);
	refused_change(z, &m, NULL, 0, &beside, 1, NULL, SHOAL_EZONE,
		       "CNAME and other data at the same name");
	/* a limit: three A records at one name where two are allowed */
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	limits.max_records_per_type = 2;
	mrec_t third = small_rec(&m, "www", DNS_TYPE_A, 3);
	refused_change(z, &m, NULL, 0, &third, 1, &limits, SHOAL_EZONE,
		       "more than 2 A records at one name (max-records-per-type)");
	/* changes that do not start at the version's serial */
	mrec_t soa = *model_soa(&m), from = soa, to = soa;
	set_serial(&from, rec_serial(&soa) + 5);
	set_serial(&to, rec_serial(&soa) + 6);
	changeset_t *cs = changes(&from, &to, NULL, 0, NULL, 0);
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t o = { .label = "test" };
	zone_t *got = NULL;
	CU_ASSERT_EQUAL(zone_apply(z, sets, 1, &o, &got), SHOAL_EINVAL);
	CU_ASSERT_PTR_NULL(got);
	changeset_unref(cs);
	/* and a good change after all that: applied */
	mrec_t fine = small_rec(&m, "www", DNS_TYPE_A, 3);
	mrec_t next = soa;
	set_serial(&next, rec_serial(&soa) + 1);
	CU_ASSERT(step(&z, &m, NULL, 0, &fine, 1, &next));
	quiet = false;
	zone_unref(z);
	free(m.r);
}

/*
 * A change of one record in a zone of 20,000 names: the new version has
 * new nodes for the names the change touches (the apex for its SOA, the
 * name changed) and shares every other with the version before, which
 * still holds its own: both walk the same names, the pointers equal but
 * for those. A caller that would rather use a version of its own than
 * one built whole is told so (no_rebuild).
 */
static void test_small_change_shares(void)
{
	model_t m;
	random_zone(&m, PLAIN);
	for (unsigned i = 0; i < 20000; i++) {
		mrec_t r = { .type = DNS_TYPE_A, .ttl = 300 };
		char text[32];
		snprintf(text, sizeof(text), "h%u", i);
		CU_ASSERT_FATAL(name_from_text(text, m.apex, r.owner) > 0);
		uint8_t a[4] = { 10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
		rec_bytes(&r, a, 4);
		model_put(&m, &r);
	}
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(model_build(&m, &z), 0);
	mrec_t old = { .type = DNS_TYPE_A, .ttl = 300 }, new;
	name_from_text("h777", m.apex, old.owner);
	uint8_t a[4] = { 10, 0, 3, 9 };
	rec_bytes(&old, a, 4);
	new = old;
	new.rd[3] = 77;
	mrec_t soa = *model_soa(&m), next = soa;
	set_serial(&next, rec_serial(&soa) + 1);
	changeset_t *cs = changes(&soa, &next, &old, 1, &new, 1);
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t o = { .label = "test" };
	zone_t *v = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_apply(z, sets, 1, &o, &v), 0);
	size_t shared = 0, names = 0;
	zone_iter_t ia, ib;
	for (const znode_t *x = zone_first(z, &ia), *y = zone_first(v, &ib); x && y;
	     x = zone_next(&ia), y = zone_next(&ib), names++)
		shared += x == y;
	CU_ASSERT_EQUAL(names, 20001);
	CU_ASSERT_EQUAL(shared, names - 2);
	CU_ASSERT_EQUAL(v->lin, z->lin);
	CU_ASSERT_EQUAL(v->lin->heap_count, 2);
	/* the old version is as it was; the new one answers the change */
	CU_ASSERT_EQUAL(znode_rrset(zone_lookup(z, old.owner), DNS_TYPE_A)->set.data[13], 9);
	CU_ASSERT_EQUAL(znode_rrset(zone_lookup(v, old.owner), DNS_TYPE_A)->set.data[13], 77);
	/* the old one goes first: the new one keeps what they shared */
	zone_unref(z);
	CU_ASSERT_EQUAL(znode_rrset(zone_lookup(v, old.owner), DNS_TYPE_A)->set.data[13], 77);
	CU_ASSERT_PTR_NOT_NULL(zone_lookup(v, znode_name(zone_first(v, &ia))));
	/* a denial that changes is not done in place: no_rebuild says so */
	mrec_t nsec = { .type = DNS_TYPE_NSEC, .ttl = 300 };
	memcpy(nsec.owner, m.apex, name_length(m.apex));
	rec_name_rdata(&nsec, m.apex);
	rec_bytes(&nsec, bitmap, sizeof(bitmap));
	mrec_t after = next;
	set_serial(&after, rec_serial(&next) + 1);
	changeset_t *flip = changes(&next, &after, NULL, 0, &nsec, 1);
	const changeset_t *fs[1] = { flip };
	o.no_rebuild = true;
	zone_t *w = NULL;
	CU_ASSERT_EQUAL(zone_apply(v, fs, 1, &o, &w), SHOAL_EUNSUPPORTED);
	o.no_rebuild = false;
	CU_ASSERT_EQUAL(zone_apply(v, fs, 1, &o, &w), 0);
	CU_ASSERT_EQUAL_FATAL(w ? w->denial : ZONE_DENIAL_NONE, ZONE_DENIAL_NSEC);
	CU_ASSERT(w->lin != v->lin);
	zone_unref(w);
	changeset_unref(flip);
	changeset_unref(cs);
	zone_unref(v);
	free(m.r);
}

/* Octets of malloc's heap in use; 0 where it cannot tell (a sanitizer's own allocator). */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* tests/integration/zones/small.zone (z0.bench., its apex into apex), its records into m. */
static zone_t *load_small(uint8_t apex[NAME_MAXLEN], model_t *m)
{
	char path[4096];
	name_from_text("z0.bench.", NULL, apex);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(
		zone_load(unit_src_path(path, sizeof(path), "tests/integration/zones/small.zone"),
			  apex, NULL, NULL, NULL, &z),
		0);
	model_of(m, z);
	return z;
}

/*
 * A change to a small zone (a secondary of many small zones takes one
 * each IXFR) costs what it makes: the new apex (its SOA), a copy of the
 * one leaf and the one hash page it writes, the directory, the negative
 * SOA and the version; well under the whole zone that an IXFR built
 * anew before versions shared (tests/integration/zones/small.zone: a
 * 1 KiB arena and a zone_t, 1,248 octets). Measured in malloc's heap:
 * not under a sanitizer, whose allocator mallinfo2 does not see.
 */
static void test_small_zone_change_memory(void)
{
	uint8_t apex[NAME_MAXLEN];
	model_t m = { 0 };
	zone_t *z = load_small(apex, &m);
	mrec_t soa = *model_soa(&m), next = soa;
	set_serial(&next, rec_serial(&soa) + 1);
	changeset_t *cs = changes(&soa, &next, NULL, 0, NULL, 0);
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t o = { .label = "test" };
	zone_t *w = NULL;
	size_t before = heap_in_use();
	CU_ASSERT_EQUAL_FATAL(zone_apply(z, sets, 1, &o, &w), 0);
	size_t own = heap_in_use() - before;
	CU_ASSERT_EQUAL(w->lin, z->lin);
	CU_ASSERT_EQUAL(w->serial, rec_serial(&next));
	CU_ASSERT(own < 1248);
	if (own >= 1248 || !before)
		fprintf(stderr, "  a change: %zu octets%s ", own, before ? "" : " (not measured)");
	changeset_unref(cs);
	zone_unref(w);
	zone_unref(z);
	free(m.r);
}

/* What the heap held when the apex without NS was reported (step 6 of zone_apply). */
static void at_step6(void *arg, bool is_error, const char *msg)
{
	if (!is_error && strstr(msg, "no NS records"))
		*(size_t *)arg = heap_in_use();
}

/*
 * The change of the memory tests: the apex's NS records (of m) deleted,
 * so that step 6 reports, and `count` A records added over `names` names
 * (t0, t1, ...), the serial one up.
 */
static changeset_t *ns_gone_a_added(const model_t *m, const uint8_t *apex, unsigned count,
				    unsigned names)
{
	mrec_t soa = *model_soa(m), next = soa, *dels = calloc(m->n, sizeof(mrec_t));
	mrec_t *adds = calloc(count, sizeof(mrec_t));
	CU_ASSERT_FATAL(dels && adds);
	set_serial(&next, rec_serial(&soa) + 1);
	size_t nd = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->r[i].type == DNS_TYPE_NS && name_equal(m->r[i].owner, apex))
			dels[nd++] = m->r[i];
	CU_ASSERT_FATAL(nd > 0);
	for (unsigned i = 0; i < count; i++) {
		char text[32];
		snprintf(text, sizeof(text), "t%u", i % names);
		adds[i] = (mrec_t){ .type = DNS_TYPE_A, .ttl = 300 };
		CU_ASSERT_FATAL(name_from_text(text, apex, adds[i].owner) > 0);
		uint8_t a[4] = { 10, 9, (uint8_t)(i >> 8), (uint8_t)i };
		rec_bytes(&adds[i], a, 4);
	}
	changeset_t *cs = changes(&soa, &next, dels, nd, adds, count);
	free(adds);
	free(dels);
	return cs;
}

/*
 * The sorted operations are step 1's alone: by step 6, while the new
 * version's nodes, tree nodes and pages are held, they are gone (they
 * were held to the end: 12 MB at the peak of an IXFR of 100,000
 * changes). 5,000 records added to 50 names, the apex's NS deleted so
 * that step 6 reports; the heap then holds little more than once
 * zone_apply returns, against the ops' 200 kB. Not under a sanitizer.
 */
static void test_ops_gone_once_the_records_are_read(void)
{
	uint8_t apex[NAME_MAXLEN];
	model_t m = { 0 };
	zone_t *z = load_small(apex, &m);
	changeset_t *cs = ns_gone_a_added(&m, apex, 5000, 50);
	const changeset_t *sets[1] = { cs };
	xfr_ops_t ops;
	CU_ASSERT_EQUAL_FATAL(xfr_ops_collect(sets, 1, &ops), 0);
	size_t ops_octets = ops.octets;
	xfr_ops_clear(&ops);
	size_t step6 = 0;
	zone_apply_opts_t o = { .label = "test", .msg = at_step6, .msg_arg = &step6 };
	zone_t *w = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_apply(z, sets, 1, &o, &w), 0);
	size_t after = heap_in_use();
	CU_ASSERT_EQUAL(w->lin, z->lin); /* in place */
	if (after) {                     /* a sanitizer's allocator: mallinfo2 sees nothing */
		CU_ASSERT(step6 > 0);    /* reported */
		CU_ASSERT(step6 < after + ops_octets / 2);
		if (step6 >= after + ops_octets / 2)
			fprintf(stderr, "  at step 6 %zd octets more than after, the ops %zu ",
				(ssize_t)(step6 - after), ops_octets);
	}
	changeset_unref(cs);
	zone_unref(w);
	zone_unref(z);
	free(m.r);
}

/*
 * The names a change touches are kept once each, in their own octets and
 * an offset, and the lists of nodes made sized for them: 5,000 names
 * added (t0 to t4999, 15 or 16 octets each), the apex's NS deleted so
 * that step 6 reports. At step 6 the heap holds, beyond what zone_apply
 * returns, the touched names (24 octets a name) and the two lists of
 * nodes made (16 octets a name); before, each name was kept twice with
 * its key and a 16-octet entry in arrays that doubled (917,568 octets in
 * all), then the node lists doubled (250,032). Not under a sanitizer.
 */
static void test_touched_names_once_each(void)
{
	enum { NAMES = 5000 };
	uint8_t apex[NAME_MAXLEN];
	model_t m = { 0 };
	zone_t *z = load_small(apex, &m);
	changeset_t *cs = ns_gone_a_added(&m, apex, NAMES, NAMES);
	const changeset_t *sets[1] = { cs };
	size_t step6 = 0;
	zone_apply_opts_t o = { .label = "test", .msg = at_step6, .msg_arg = &step6 };
	zone_t *w = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_apply(z, sets, 1, &o, &w), 0);
	size_t after = heap_in_use(), bound = NAMES * (16 + 8 + 16) + 8192;
	CU_ASSERT_EQUAL(w->lin, z->lin); /* in place */
	if (after) {
		CU_ASSERT(step6 > 0);
		CU_ASSERT(step6 < after + bound);
		if (step6 >= after + bound)
			fprintf(stderr, "  at step 6 %zd octets more than after, bound %zu ",
				(ssize_t)(step6 - after), bound);
	}
	changeset_unref(cs);
	zone_unref(w);
	zone_unref(z);
	free(m.r);
}

static const unit_test_t tests[] = {
	UNIT_TEST(test_random_unsigned),
	UNIT_TEST(test_random_nsec),
	UNIT_TEST(test_random_nsec3),
	UNIT_TEST(test_diff_zones_by_ixfr),
	UNIT_TEST(test_dnssec_zones_by_ixfr),
	UNIT_TEST(test_refused_changes),
	UNIT_TEST(test_small_change_shares),
	UNIT_TEST(test_small_zone_change_memory),
	UNIT_TEST(test_ops_gone_once_the_records_are_read),
	UNIT_TEST(test_touched_names_once_each),
	UNIT_END,
};

int main(int argc, char **argv)
{
	return unit_run(argc, argv, "zone_apply", tests);
}
