/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A change to a signed version signed alone: its RRSIGs, its SOA, the NSEC or NSEC3 chain repaired
 * around the names it touches. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "proto/serial.h"
#include "proto/wire.h"
#include "zone/internal.h"
#include "zone/sign_incr.h"

/* A name the change touches: one its records name, or an empty non-terminal above one. */
typedef struct incr_name {
	const uint8_t *owner;      /* lowercase wire, in the changeset's runs */
	const znode_t *old;        /* in the version served, or NULL */
	size_t op_first, op_count; /* its records among the sorted operations */
	uint8_t hash[ZONE_NSEC3_HASH_LEN];
	/* after the change: authoritative types, a cut, a DS, below a cut or DNAME, a node */
	bool data, deleg, has_ds, occluded, exists;
	bool was_member, is_member; /* of the chain: NSEC owners, or names with an NSEC3 */
} incr_name_t;

/* One incremental signing: the signer's context, the change, the names it touches. */
typedef struct incr {
	sign_ctx_t *c;
	const zone_t *z;
	bool nsec3;
	xfr_ops_t ops;
	incr_name_t *names; /* in canonical order */
	size_t count, cap;
	incr_name_t **chain; /* the names of the chain before or after, in its order */
	size_t chain_count;
	uint8_t **keep; /* RRsets built to sign, read until the batch is signed */
	size_t keep_count, keep_cap;
} incr_t;

/* A place in the chain after the change: a name the change touches, or a node of the old one. */
typedef struct chain_pos {
	incr_name_t *x;
	const znode_t *node;
} chain_pos_t;

static uint16_t op_type(const xfr_op_t *op)
{
	return wire_get_u16(op->rr);
}

/* The types the signer makes itself, which a change cannot carry. */
static bool signer_type(uint16_t t)
{
	return t == DNS_TYPE_RRSIG || t == DNS_TYPE_NSEC || t == DNS_TYPE_NSEC3 ||
	       t == DNS_TYPE_NSEC3PARAM || t == DNS_TYPE_DNSKEY;
}

/* Whether a type shows in a name's own list (the chain's types are the signer's to add). */
static bool data_type(uint16_t t)
{
	return t != DNS_TYPE_RRSIG && t != DNS_TYPE_NSEC && t != DNS_TYPE_NSEC3;
}

/* ---- the names touched and what they are after the change ---- */

static int cmp_names(const void *a, const void *b)
{
	const incr_name_t *x = a, *y = b;
	int c = name_compare(x->owner, y->owner);
	/* of two alike, the one with records first: it is kept */
	return c ? c : (x->op_count < y->op_count) - (x->op_count > y->op_count);
}

/* The touched name `name`, or NULL. */
static incr_name_t *find_name(const incr_t *in, const uint8_t *name)
{
	size_t lo = 0, hi = in->count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = name_compare(name, in->names[mid].owner);
		if (c == 0)
			return &in->names[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int add_name(incr_t *in, const uint8_t *owner, size_t first, size_t count)
{
	if (!zone_grow((void **)&in->names, &in->cap, in->count + 1, sizeof(*in->names)))
		return SHOAL_ENOMEM;
	in->names[in->count++] =
		(incr_name_t){ .owner = owner, .op_first = first, .op_count = count };
	return 0;
}

/*
 * The records of one owner, ops[first, end): inside the zone, of a type
 * the change may carry; a DNAME or the apex's NS are not done here.
 */
static int check_ops(const incr_t *in, size_t first, size_t end)
{
	const uint8_t *apex = znode_name(in->z->apex), *owner = in->ops.ops[first].owner;
	if (!name_is_subdomain(owner, apex))
		return SHOAL_EZONE;
	for (size_t i = first; i < end; i++) {
		uint16_t t = op_type(&in->ops.ops[i]);
		if (signer_type(t))
			return SHOAL_EINVAL;
		if (t == DNS_TYPE_DNAME || (t == DNS_TYPE_NS && name_equal(owner, apex)))
			return SHOAL_EUNSUPPORTED;
	}
	return 0;
}

/*
 * The names above owner up to one with data in the version served: the
 * empty non-terminals that may come or go with it (RFC 5155 7.1 gives
 * them an NSEC3). They point into owner.
 */
static int add_ancestors(incr_t *in, const uint8_t *owner)
{
	size_t apex_len = name_length(znode_name(in->z->apex));
	int rc = 0;
	for (const uint8_t *a = name_parent(owner); rc == 0 && name_length(a) > apex_len;
	     a = name_parent(a)) {
		const znode_t *n = zone_lookup(in->z, a);
		if (n && (n->flags & ZNODE_DATA))
			break;
		rc = add_name(in, a, 0, 0);
	}
	return rc;
}

/* The names the change touches, each once, in canonical order, with their operations. */
static int collect_names(incr_t *in)
{
	int rc = 0;
	for (size_t i = 0, j; rc == 0 && i < in->ops.count; i = j) {
		const xfr_op_t *op = &in->ops.ops[i];
		for (j = i + 1; j < in->ops.count && in->ops.ops[j].key_len == op->key_len &&
				!memcmp(in->ops.ops[j].key, op->key, op->key_len);
		     j++)
			;
		rc = check_ops(in, i, j);
		if (rc == 0)
			rc = add_name(in, op->owner, i, j - i);
		if (rc == 0 && in->nsec3)
			rc = add_ancestors(in, op->owner);
	}
	if (rc < 0 || in->count == 0)
		return rc;
	qsort(in->names, in->count, sizeof(*in->names), cmp_names);
	size_t n = 1;
	for (size_t i = 1; i < in->count; i++)
		if (!name_equal(in->names[i].owner, in->names[n - 1].owner))
			in->names[n++] = in->names[i];
	in->count = n;
	return 0;
}

/* Records of type at x after the change: those served, less the deletions, plus the additions. */
static long type_count(const incr_t *in, const incr_name_t *x, uint16_t type)
{
	const zrrset_t *rs = x->old ? znode_rrset(x->old, type) : NULL;
	long n = rs ? rs->set.rr_count : 0;
	for (size_t i = x->op_first; i < x->op_first + x->op_count; i++)
		if (op_type(&in->ops.ops[i]) == type)
			n += xfr_op_is_add(&in->ops.ops[i]) ? 1 : -1;
	return n;
}

static bool has_type(const uint16_t *types, size_t n, uint16_t t)
{
	for (size_t i = 0; i < n; i++)
		if (types[i] == t)
			return true;
	return false;
}

/* x's types after the change, ascending, the chain's own left out, into types; their count. */
static size_t name_types(const incr_t *in, const incr_name_t *x, uint16_t *types)
{
	size_t n = 0;
	for (uint16_t i = 0; x->old && i < x->old->rrset_count; i++) {
		uint16_t t = znode_rrsets(x->old)[i].set.type;
		if (data_type(t) && type_count(in, x, t) > 0)
			types[n++] = t;
	}
	for (size_t i = x->op_first; i < x->op_first + x->op_count; i++) {
		uint16_t t = op_type(&in->ops.ops[i]);
		if (!has_type(types, n, t) && type_count(in, x, t) > 0)
			sign_types_insert(types, &n, t);
	}
	return n;
}

/*
 * Whether a cut made or removed at x (RFC 1034 4.2.1) is local: the name
 * holds nothing but NS and DS, and no name lies below it in the version
 * served that would become occluded or visible.
 */
static bool cut_change_local(const incr_t *in, const incr_name_t *x)
{
	bool was = x->old && (x->old->flags & ZNODE_DELEG);
	if (was == x->deleg)
		return true;
	for (uint16_t i = 0; x->old && i < x->old->rrset_count; i++) {
		uint16_t t = znode_rrsets(x->old)[i].set.type;
		if (data_type(t) && t != DNS_TYPE_NS && t != DNS_TYPE_DS)
			return false;
	}
	for (size_t i = x->op_first; i < x->op_first + x->op_count; i++) {
		uint16_t t = op_type(&in->ops.ops[i]);
		if (t != DNS_TYPE_NS && t != DNS_TYPE_DS)
			return false;
	}
	zkey_t k;
	zkey_name(&k, x->owner);
	zone_iter_t it;
	const znode_t *next = ztree_seek_gt(&in->z->names, &k, &it);
	return !next || !name_is_subdomain(znode_name(next), x->owner);
}

/*
 * Whether a name the version served does not have lies below a cut or a
 * DNAME after the change: the nearest ancestor touched or served says.
 */
static bool occluded_after(const incr_t *in, const uint8_t *name)
{
	size_t apex_len = name_length(znode_name(in->z->apex));
	for (const uint8_t *a = name_parent(name); name_length(a) >= apex_len; a = name_parent(a)) {
		const incr_name_t *p = find_name(in, a);
		if (p && (p->deleg || (p->old && (p->old->flags & ZNODE_DNAME))))
			return true;
		const znode_t *n = p ? p->old : zone_lookup(in->z, a);
		if (n)
			return zflags_hide_below(n->flags) && !(n->flags & ZNODE_APEX);
	}
	return false;
}

/* Whether a name below names[i] is there after the change (names after it are settled). */
static bool below_exists(const incr_t *in, size_t i)
{
	const uint8_t *owner = in->names[i].owner;
	for (size_t j = i + 1; j < in->count && name_is_subdomain(in->names[j].owner, owner); j++)
		if (in->names[j].exists)
			return true;
	zkey_t k;
	zkey_name(&k, owner);
	zone_iter_t it;
	/* the served names below it, in a row after it: those the change leaves stay */
	for (const znode_t *n = ztree_seek_gt(&in->z->names, &k, &it);
	     n && name_is_subdomain(znode_name(n), owner); n = ztree_next(&it)) {
		const incr_name_t *y = find_name(in, znode_name(n));
		if (!y || y->exists)
			return true;
	}
	return false;
}

/* Whether x is in the chain after the change (RFC 4035 2.3; RFC 5155 6, 7.1). */
static bool chain_member(const incr_t *in, const incr_name_t *x)
{
	if (x->occluded)
		return false;
	if (!in->nsec3)
		return x->data;
	return x->exists && !(in->c->o->nsec3->opt_out && x->deleg && !x->has_ds);
}

/* What each name touched is after the change, and whether it was and is in the chain. */
static int name_states(incr_t *in)
{
	uint16_t *types = in->c->types;
	for (size_t i = 0; i < in->count; i++) {
		incr_name_t *x = &in->names[i];
		x->old = zone_lookup(in->z, x->owner);
		size_t n = name_types(in, x, types);
		bool apex = x->old && (x->old->flags & ZNODE_APEX);
		x->data = n > 0;
		x->deleg = !apex && has_type(types, n, DNS_TYPE_NS);
		x->has_ds = has_type(types, n, DNS_TYPE_DS);
		if (!cut_change_local(in, x))
			return SHOAL_EUNSUPPORTED;
	}
	/* a served name's cuts above stay (cut_change_local): its flag holds */
	for (size_t i = 0; i < in->count; i++) {
		incr_name_t *x = &in->names[i];
		x->occluded = x->old ? (x->old->flags & ZNODE_OCCLUDED) != 0
				     : occluded_after(in, x->owner);
	}
	for (size_t i = in->count; i-- > 0;) {
		incr_name_t *x = &in->names[i];
		x->exists =
			(x->old && (x->old->flags & ZNODE_APEX)) || x->data || below_exists(in, i);
	}
	for (size_t i = 0; i < in->count; i++) {
		incr_name_t *x = &in->names[i];
		x->is_member = chain_member(in, x);
		if (!in->nsec3) {
			x->was_member = x->old && znode_nsec_owner(x->old);
			continue;
		}
		if (x->occluded)
			continue;
		int rc = sign_nsec3_hash(in->c->o->nsec3, x->owner, x->hash);
		if (rc < 0)
			return rc;
		x->was_member = x->old && zone_nsec3_owner_of(in->z, x->hash);
	}
	return 0;
}

/* ---- the records ---- */

/* Every record of set (wire) at owner deleted. */
int sign_del_records(sign_ctx_t *c, const uint8_t *owner, const rrset_wire_t *set)
{
	int rc = 0;
	const uint8_t *p = set->data, *end = p + set->data_len;
	for (; rc == 0 && p + 10 <= end; p += 10 + wire_get_u16(p + 8))
		rc = changeset_add(c->cs, false, owner, wire_get_u16(p), wire_get_u32(p + 4),
				   p + 10, wire_get_u16(p + 8));
	return rc;
}

/* The change's own records, as they are. */
static int pass_changes(incr_t *in)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < in->ops.count; i++) {
		const xfr_op_t *op = &in->ops.ops[i];
		rc = changeset_add(in->c->cs, xfr_op_is_add(op), op->owner, op_type(op),
				   wire_get_u32(op->rr + 4), op->rr + 10, wire_get_u16(op->rr + 8));
	}
	return rc;
}

/* Whether x's change deletes the record of type with rdata[0..len). */
static bool deleted(const incr_t *in, const incr_name_t *x, uint16_t type, const uint8_t *rdata,
		    uint16_t len)
{
	for (size_t i = x->op_first; i < x->op_first + x->op_count; i++) {
		const uint8_t *rr = in->ops.ops[i].rr;
		if (!xfr_op_is_add(&in->ops.ops[i]) && wire_get_u16(rr) == type &&
		    wire_get_u16(rr + 8) == len && !memcmp(rr + 10, rdata, len))
			return true;
	}
	return false;
}

/* A block of len octets kept until the signatures are made. */
static uint8_t *keep_block(incr_t *in, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);
	if (p &&
	    !zone_grow((void **)&in->keep, &in->keep_cap, in->keep_count + 1, sizeof(*in->keep))) {
		free(p);
		p = NULL;
	}
	if (p)
		in->keep[in->keep_count++] = p;
	return p;
}

/*
 * The RRset of type at x after the change into *rs (rr_count 0: gone), in
 * a block kept until the batch is signed: the served records less the
 * deletions, then the additions, all with the TTL of the last addition
 * (a load keeps the one read last, RFC 2181 5.2) or the served one.
 */
static int build_rrset(incr_t *in, const incr_name_t *x, uint16_t type, rrset_wire_t *rs)
{
	const zrrset_t *old = x->old ? znode_rrset(x->old, type) : NULL;
	uint32_t ttl = old ? wire_get_u32(old->set.data + 4) : 0;
	size_t len = old ? old->set.data_len : 0;
	for (size_t i = x->op_first; i < x->op_first + x->op_count; i++) {
		const uint8_t *rr = in->ops.ops[i].rr;
		if (xfr_op_is_add(&in->ops.ops[i]) && wire_get_u16(rr) == type) {
			ttl = wire_get_u32(rr + 4);
			len += 10u + wire_get_u16(rr + 8);
		}
	}
	wire_t w;
	wire_init_write(&w, keep_block(in, len), len);
	if (!w.buf)
		return SHOAL_ENOMEM;
	*rs = (rrset_wire_t){ .type = type, .data = w.buf };
	const uint8_t *p = old ? old->set.data : NULL, *end = old ? p + old->set.data_len : NULL;
	for (; p && p + 10 <= end; p += 10 + wire_get_u16(p + 8)) {
		if (deleted(in, x, type, p + 10, wire_get_u16(p + 8)))
			continue;
		sign_put_record(&w, type, ttl, p + 10, wire_get_u16(p + 8));
		rs->rr_count++;
	}
	for (size_t i = x->op_first; i < x->op_first + x->op_count; i++) {
		const uint8_t *rr = in->ops.ops[i].rr;
		if (!xfr_op_is_add(&in->ops.ops[i]) || wire_get_u16(rr) != type)
			continue;
		sign_put_record(&w, type, ttl, rr + 10, wire_get_u16(rr + 8));
		rs->rr_count++;
	}
	rs->data_len = (uint32_t)w.pos;
	return w.err ? SHOAL_EMALFORMED : 0;
}

/* The RRset of type at x: its RRSIGs deleted, and made again if it remains signed. */
static int resign_type(incr_t *in, const incr_name_t *x, uint16_t type)
{
	const zrrset_t *old = x->old ? znode_rrset(x->old, type) : NULL;
	int rc = old && old->sigs ? sign_del_records(in->c, x->owner, old->sigs) : 0;
	/* RFC 4035 2.2: at a cut only the DS is the zone's to sign */
	if (rc < 0 || (x->deleg && type != DNS_TYPE_DS))
		return rc;
	rrset_wire_t rs;
	rc = build_rrset(in, x, type, &rs);
	if (rc < 0 || rs.rr_count == 0)
		return rc;
	bool apex = name_equal(x->owner, in->c->apex);
	return sign_add_rrsigs(in->c, x->owner, &rs, sign_signer_role(apex, type));
}

/* Each RRset x's change touches signed again, unless x is not authoritative. */
static int sign_name(incr_t *in, const incr_name_t *x)
{
	int rc = 0;
	if (x->occluded)
		return 0;
	for (size_t i = x->op_first; rc == 0 && i < x->op_first + x->op_count; i++) {
		uint16_t t = op_type(&in->ops.ops[i]);
		if (i == x->op_first || t != op_type(&in->ops.ops[i - 1]))
			rc = resign_type(in, x, t);
	}
	return rc;
}

/* ---- the chain ---- */

/* The key of a name in the chain: its owner (NSEC), or its hash (NSEC3). */
static const uint8_t *name_key(const incr_t *in, const incr_name_t *x)
{
	return in->nsec3 ? x->hash : x->owner;
}

static const uint8_t *node_key(const incr_t *in, const znode_t *n)
{
	return in->nsec3 ? znode_hash(n) : znode_name(n);
}

static int key_cmp(const incr_t *in, const uint8_t *a, const uint8_t *b)
{
	return in->nsec3 ? memcmp(a, b, ZONE_NSEC3_HASH_LEN) : name_compare(a, b);
}

static const ztree_t *old_chain(const incr_t *in)
{
	return in->nsec3 ? &in->z->nsec3.chain : &in->z->nsec;
}

static void make_key(const incr_t *in, zkey_t *k, const uint8_t *key)
{
	if (in->nsec3)
		zkey_hash(k, key);
	else
		zkey_name(k, key);
}

/* The first of in->chain whose key sorts after key. */
static size_t chain_upper(const incr_t *in, const uint8_t *key)
{
	size_t lo = 0, hi = in->chain_count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (key_cmp(in, key, name_key(in, in->chain[mid])) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether node n of the old chain leaves it with the change. */
static bool went(const incr_t *in, const znode_t *n)
{
	size_t at = chain_upper(in, node_key(in, n));
	const incr_name_t *x = at ? in->chain[at - 1] : NULL;
	return x && key_cmp(in, name_key(in, x), node_key(in, n)) == 0 && !x->is_member;
}

/* The old chain's node of a touched name that was in it. */
static const znode_t *old_node(const incr_t *in, const incr_name_t *x)
{
	if (!x->was_member)
		return NULL;
	return in->nsec3 ? zone_nsec3_owner_of(in->z, x->hash) : x->old;
}

static const uint8_t *pos_key(const incr_t *in, chain_pos_t p)
{
	return p.x ? name_key(in, p.x) : node_key(in, p.node);
}

/* Of two places (either may be empty), the first (or, last, the last) in the chain's order. */
static chain_pos_t pick(const incr_t *in, chain_pos_t a, chain_pos_t b, bool last)
{
	if (!a.x && !a.node)
		return b;
	if (!b.x && !b.node)
		return a;
	int c = key_cmp(in, pos_key(in, a), pos_key(in, b));
	/* alike: the touched name, which says what it is after */
	if (c == 0)
		return a.x ? a : b;
	return (c < 0) != last ? a : b;
}

/* The member after key in the chain after the change (key NULL: the first), or none. */
static chain_pos_t next_after(const incr_t *in, const uint8_t *key)
{
	zkey_t k;
	zone_iter_t it;
	chain_pos_t a = { 0 }, b = { 0 };
	if (key)
		make_key(in, &k, key);
	const znode_t *n =
		key ? ztree_seek_gt(old_chain(in), &k, &it) : ztree_first(old_chain(in), &it);
	while (n && went(in, n))
		n = ztree_next(&it);
	a.node = n;
	for (size_t i = key ? chain_upper(in, key) : 0; i < in->chain_count && !b.x; i++)
		if (in->chain[i]->is_member)
			b.x = in->chain[i];
	return pick(in, a, b, false);
}

/* The member before key in the chain after the change (key NULL: the last), or none. */
static chain_pos_t prev_before(const incr_t *in, const uint8_t *key)
{
	zkey_t k;
	chain_pos_t a = { 0 }, b = { 0 };
	const znode_t *n = NULL;
	if (key)
		make_key(in, &k, key);
	n = key ? ztree_find_lt(old_chain(in), &k) : ztree_last(old_chain(in));
	while (n && went(in, n)) {
		make_key(in, &k, node_key(in, n));
		n = ztree_find_lt(old_chain(in), &k);
	}
	a.node = n;
	for (size_t i = key ? chain_upper(in, key) : in->chain_count; i-- > 0 && !b.x;)
		if (in->chain[i]->is_member &&
		    (!key || key_cmp(in, name_key(in, in->chain[i]), key)))
			b.x = in->chain[i];
	return pick(in, a, b, true);
}

/* The next member of the chain after p, wrapping around at the end. */
static chain_pos_t chain_next(const incr_t *in, chain_pos_t p)
{
	chain_pos_t n = next_after(in, pos_key(in, p));
	return n.x || n.node ? n : next_after(in, NULL);
}

/* The type bit maps of x's NSEC or NSEC3 after the change (RFC 4034 4.1.2, RFC 5155 3.2). */
static void put_types(incr_t *in, const incr_name_t *x, wire_t *r)
{
	uint16_t *types = in->c->types;
	size_t n = name_types(in, x, types), kept = 0;
	/* RFC 4035 2.3: a cut shows its NS and DS, not its glue */
	for (size_t i = 0; i < n; i++)
		if (!x->deleg || types[i] == DNS_TYPE_NS || types[i] == DNS_TYPE_DS)
			types[kept++] = types[i];
	bool apex = x->old && (x->old->flags & ZNODE_APEX);
	bool sigs = apex || (kept && (!x->deleg || x->has_ds));
	if (!in->nsec3 || sigs)
		sign_types_insert(types, &kept, DNS_TYPE_RRSIG);
	if (!in->nsec3)
		sign_types_insert(types, &kept, DNS_TYPE_NSEC);
	sign_put_bitmap(r, types, kept);
}

/*
 * The RDATA of p's NSEC or NSEC3 to next into r: made anew for a touched
 * name, the old one pointed at next for another.
 */
static int chain_rdata(incr_t *in, chain_pos_t p, chain_pos_t next, const zrrset_t *old, wire_t *r)
{
	const uint8_t *key = pos_key(in, next);
	sign_rdata_writer(in->c, r);
	if (!in->nsec3)
		wire_write_bytes(r, key, name_length(key));
	else {
		sign_put_nsec3_params(r, in->c->o->nsec3, true);
		wire_write_u8(r, ZONE_NSEC3_HASH_LEN);
		wire_write_bytes(r, key, ZONE_NSEC3_HASH_LEN);
	}
	if (p.x) {
		put_types(in, p.x, r);
		return r->err;
	}
	/* the bitmap after the old next: its name, or the params, length and hash */
	const uint8_t *rd = old->set.data + 10;
	uint16_t len = wire_get_u16(old->set.data + 8);
	size_t at = in->nsec3 ? 6u + rd[4] + ZONE_NSEC3_HASH_LEN : name_length(rd);
	if (at > len)
		return SHOAL_EMALFORMED;
	wire_write_bytes(r, rd + at, len - at);
	return r->err;
}

/* p's NSEC or NSEC3 made to point at the next member and show its types, if it changes. */
static int relink(incr_t *in, chain_pos_t p)
{
	const znode_t *node = p.x ? old_node(in, p.x) : p.node;
	uint16_t type = in->nsec3 ? DNS_TYPE_NSEC3 : DNS_TYPE_NSEC;
	const zrrset_t *old = node ? znode_rrset(node, type) : NULL;
	if (!p.x && !old)
		return SHOAL_EMALFORMED;
	wire_t r;
	int rc = chain_rdata(in, p, chain_next(in, p), old, &r);
	if (rc < 0)
		return rc;
	if (old && old->set.rr_count == 1 && wire_get_u16(old->set.data + 8) == r.pos &&
	    !memcmp(old->set.data + 10, r.buf, r.pos))
		return 0;
	uint8_t owner[NAME_MAXLEN];
	if (node)
		memcpy(owner, znode_name(node), name_length(znode_name(node)));
	else if (in->nsec3)
		sign_nsec3_owner(in->c, p.x->hash, owner);
	else
		memcpy(owner, p.x->owner, name_length(p.x->owner));
	if (old)
		rc = sign_del_records(in->c, owner, &old->set);
	if (rc == 0 && old && old->sigs)
		rc = sign_del_records(in->c, owner, old->sigs);
	return rc < 0 ? rc : sign_add_signed(in->c, owner, type, in->c->nsec_ttl, r.buf, r.pos);
}

/* The old chain link of x, which leaves the chain: deleted with its RRSIGs. */
static int unlink_name(incr_t *in, const incr_name_t *x)
{
	const znode_t *node = old_node(in, x);
	const zrrset_t *old =
		node ? znode_rrset(node, in->nsec3 ? DNS_TYPE_NSEC3 : DNS_TYPE_NSEC) : NULL;
	if (!old)
		return SHOAL_EMALFORMED;
	int rc = sign_del_records(in->c, znode_name(node), &old->set);
	return rc == 0 && old->sigs ? sign_del_records(in->c, znode_name(node), old->sigs) : rc;
}

static int cmp_hashes(const void *a, const void *b)
{
	const incr_name_t *x = *(incr_name_t *const *)a, *y = *(incr_name_t *const *)b;
	return memcmp(x->hash, y->hash, ZONE_NSEC3_HASH_LEN);
}

static int cmp_nodes(const void *a, const void *b)
{
	const znode_t *x = *(const znode_t *const *)a, *y = *(const znode_t *const *)b;
	return (x > y) - (x < y);
}

/* The old nodes of the chain before each name that comes or goes: their links change. */
static int neighbours(incr_t *in, const znode_t ***out, size_t *count)
{
	size_t cap = 0;
	*out = NULL;
	*count = 0;
	for (size_t i = 0; i < in->chain_count; i++) {
		const incr_name_t *x = in->chain[i];
		if (x->was_member == x->is_member)
			continue;
		chain_pos_t p = prev_before(in, name_key(in, x));
		if (!p.x && !p.node)
			p = prev_before(in, NULL); /* the last, which wraps around */
		if (p.x || !p.node)
			continue; /* touched: relinked as such */
		if (!zone_grow((void **)out, &cap, *count + 1, sizeof(**out)))
			return SHOAL_ENOMEM;
		(*out)[(*count)++] = p.node;
	}
	if (*count)
		qsort(*out, *count, sizeof(**out), cmp_nodes);
	return 0;
}

/*
 * The chain repaired around the names touched: the links of those that
 * leave it deleted; those that stay or come, and the old members before
 * any that come or go, pointed at their next and signed, if changed.
 */
static int repair_chain(incr_t *in)
{
	in->chain = malloc((in->count ? in->count : 1) * sizeof(*in->chain));
	if (!in->chain)
		return SHOAL_ENOMEM;
	for (size_t i = 0; i < in->count; i++)
		if (in->names[i].was_member || in->names[i].is_member)
			in->chain[in->chain_count++] = &in->names[i];
	if (in->nsec3)
		qsort(in->chain, in->chain_count, sizeof(*in->chain), cmp_hashes);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < in->chain_count; i++) {
		incr_name_t *x = in->chain[i];
		rc = x->is_member ? relink(in, (chain_pos_t){ .x = x }) : unlink_name(in, x);
	}
	const znode_t **nodes = NULL;
	size_t n = 0;
	if (rc == 0)
		rc = neighbours(in, &nodes, &n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (i == 0 || nodes[i] != nodes[i - 1])
			rc = relink(in, (chain_pos_t){ .node = nodes[i] });
	free(nodes);
	return rc;
}

/* ---- the whole ---- */

/* Whether the DNSKEY RRset served is ks's keys, with o's TTL: no key came or went. */
static bool same_keys(const zone_t *z, const sign_keyset_t *ks, const sign_zone_opts_t *o)
{
	const zrrset_t *rs = znode_rrset(z->apex, DNS_TYPE_DNSKEY);
	if (!rs || rs->set.rr_count != ks->count || wire_get_u32(rs->set.data + 4) != o->dnskey_ttl)
		return false;
	for (size_t i = 0; i < ks->count; i++) {
		uint8_t rdata[2048];
		int n = sign_key_dnskey(&ks->keys[i], rdata, sizeof(rdata));
		bool found = false;
		const uint8_t *p = rs->set.data, *end = p + rs->set.data_len;
		for (; n > 0 && !found && p + 10 <= end; p += 10 + wire_get_u16(p + 8))
			found = wire_get_u16(p + 8) == n && !memcmp(p + 10, rdata, (size_t)n);
		if (!found)
			return false;
	}
	return true;
}

/* Whether served is signed as o asks: the same denial, NSEC3 parameters and opt-out. */
static bool same_denial(const zone_t *z, const sign_zone_opts_t *o)
{
	const sign_nsec3_t *p = o->nsec3;
	if (z->denial != (p ? ZONE_DENIAL_NSEC3 : ZONE_DENIAL_NSEC))
		return false;
	if (!p)
		return true;
	if (z->nsec3.iterations != p->iterations || z->nsec3.salt_len != p->salt_len ||
	    memcmp(z->nsec3.salt, p->salt, p->salt_len))
		return false;
	const znode_t *own = zone_nsec3_match(z, z->apex);
	const zrrset_t *rs = own ? znode_rrset(own, DNS_TYPE_NSEC3) : NULL;
	return rs && rs->set.data_len > 11 && (rs->set.data[11] & 1) == p->opt_out;
}

int sign_check_served(const zone_t *z, const sign_keyset_t *ks, const sign_zone_opts_t *o)
{
	const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
	if (!soa || !soa->sigs || z->denial == ZONE_DENIAL_NONE || !sign_keys_usable(ks))
		return SHOAL_EINVAL;
	if (!serial_gt(o->serial, z->serial))
		return SHOAL_EINVAL; /* RFC 1982: a secondary would not take it */
	return same_keys(z, ks, o) && same_denial(z, o) ? 0 : SHOAL_EUNSUPPORTED;
}

/*
 * Served's SOA and its RRSIGs deleted, cs's new one with o->serial added
 * and signed; the same TTL and MINIMUM, or every NSEC's TTL would change.
 */
static int replace_soa(incr_t *in, const changeset_t *cs)
{
	const zrrset_t *soa = znode_rrset(in->z->apex, DNS_TYPE_SOA);
	const uint8_t *old = soa->set.data, *base = xfr_part_soa(&cs->add);
	uint16_t old_len = wire_get_u16(old + 8), len = wire_get_u16(base + 8);
	if (len < 22)
		return SHOAL_EMALFORMED;
	if (wire_get_u32(old + 4) != wire_get_u32(base + 4) ||
	    wire_get_u32(old + 10 + old_len - 4) != wire_get_u32(base + 10 + len - 4))
		return SHOAL_EUNSUPPORTED;
	int rc = sign_replace_soa(in->c, old, base);
	return rc < 0 ? rc : sign_del_records(in->c, in->c->apex, soa->sigs);
}

static void incr_clear(incr_t *in)
{
	sign_ctx_free(in->c);
	xfr_ops_clear(&in->ops);
	free(in->names);
	free(in->chain);
	for (size_t i = 0; i < in->keep_count; i++)
		free(in->keep[i]);
	free(in->keep);
}

int sign_changes(const zone_t *served, const changeset_t *cs, const sign_keyset_t *ks,
		 const sign_zone_opts_t *o, changeset_t **out)
{
	*out = NULL;
	if (cs->add.rr_count == 0 || cs->del.rr_count == 0)
		return SHOAL_EINVAL; /* not sealed: no SOA to start from */
	int rc = sign_check_served(served, ks, o);
	if (rc < 0)
		return rc;
	incr_t in = { .z = served, .nsec3 = o->nsec3 != NULL };
	in.c = sign_ctx_new(ks, o, znode_name(served->apex));
	if (!in.c)
		return SHOAL_ENOMEM;
	const changeset_t *sets[] = { cs };
	rc = replace_soa(&in, cs);
	if (rc == 0)
		rc = xfr_ops_collect(sets, 1, &in.ops);
	if (rc == 0)
		rc = collect_names(&in);
	if (rc == 0)
		rc = name_states(&in);
	if (rc == 0)
		rc = pass_changes(&in);
	for (size_t i = 0; rc == 0 && i < in.count; i++)
		rc = sign_name(&in, &in.names[i]);
	if (rc == 0)
		rc = repair_chain(&in);
	if (rc == 0)
		rc = sign_flush(in.c);
	if (rc == 0)
		rc = changeset_seal(in.c->cs);
	if (rc == 0) {
		*out = in.c->cs;
		in.c->cs = NULL;
	}
	incr_clear(&in);
	return rc;
}
