/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Answering one query: RFC 1034 4.3.2 with wildcards, CNAME, DNAME, referrals, EDNS, truncation. */
#include "config.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/hot.h"
#include "proto/rdata.h"
#include "proto/response.h"
#include "zone/answer.h"
#include "zone/zone.h"

/*
 * CNAMEs (real or synthesised from a DNAME) followed inside one zone: like
 * Knot, at most 5, and a name met twice (a loop) ends the chain with what
 * was written so far.
 */
#define ANSWER_CHAIN_MAX      5
#define ANSWER_ADDITIONAL_MAX 32 /* additional names remembered to skip repeats */
/* NSEC/NSEC3 owners to prove with: 3 per negative answer, 1 per wildcard on the chain */
#define ANSWER_PROOFS_MAX (ANSWER_CHAIN_MAX + 4)

/* Where the lookup of one name in a zone ends (RFC 1034 4.3.2 step 3). */
enum lookup_kind {
	LOOKUP_EXACT,    /* the name exists (maybe an empty non-terminal) */
	LOOKUP_WILDCARD, /* synthesised from the wildcard node (RFC 4592 3.3) */
	LOOKUP_REFERRAL, /* at or below a zone cut */
	LOOKUP_DNAME,    /* below a DNAME (RFC 6672 3.2) */
	LOOKUP_NXDOMAIN, /* no such name, no wildcard */
};

typedef struct lookup {
	enum lookup_kind kind;
	const znode_t *node; /* the match, wildcard, cut, DNAME owner or closest encloser */
	const znode_t *ce;   /* for a wildcard: the closest encloser, its parent */
} lookup_t;

/* One answer being planned and written. Lives on the worker's stack. */
typedef struct answer {
	response_t r;
	const zone_t *z;
	uint32_t slot; /* z's statistics slot */
	uint16_t qtype;
	bool stop;                 /* truncated: nothing more is written */
	const rrset_wire_t *extra; /* RRset whose targets get A/AAAA in additional */
	const znode_t *cut;        /* for a referral: the cut (glue rules differ) */
	bool glue_truncated;       /* TC set because in-domain glue did not fit */
	bool dnssec;               /* DO set (RFC 4035 3.1): RRSIGs and denial proofs */
	const znode_t *proofs[ANSWER_PROOFS_MAX]; /* owners of the NSEC/NSEC3 to add */
	int proof_count;
	enum answer_kind kind;  /* where the lookup ended, for rate limiting */
	const znode_t *account; /* the name rate limiting counts it for; NULL: the query name */
	bool configured;        /* no zone loaded for the name, but one is configured */
	uint64_t qhash;         /* with z: the question name's hash */
} answer_t;

/* answer_query zeroes what follows the response: the response comes first */
_Static_assert(offsetof(answer_t, r) == 0, "answer_t starts with its response");

/* Find where name (lowercase, hashed with the zone's key) ends in z. */
static void lookup_name(const zone_t *z, const uint8_t *name, size_t len, uint64_t hash,
			uint16_t qtype, lookup_t *res)
{
	const uint8_t *key = z->hash_key;
	const znode_t *n = zone_lookup_hashed(z, name, len, hash);
	if (n && (n->flags & ZNODE_NSEC3))
		n = NULL; /* the NSEC3 chain is not part of the name tree, as in Knot */
	const znode_t *ce = n;
	if (n && !(n->flags & ZNODE_OCCLUDED)) {
		/* RFC 4035 3.1.4.1: DS at a cut belongs to the parent side */
		if ((n->flags & ZNODE_DELEG) && qtype != DNS_TYPE_DS)
			*res = (lookup_t){ LOOKUP_REFERRAL, n, NULL };
		else
			*res = (lookup_t){ LOOKUP_EXACT, n, NULL };
		return;
	}
	if (!n) {
		/* closest encloser: strip labels; the apex always matches */
		const uint8_t *p = name;
		while (!ce && *p) {
			len -= (size_t)*p + 1;
			p += *p + 1;
			if (len <= z->apex->name_len)
				break; /* the name is inside the zone: this is the apex */
			ce = zone_lookup_hashed(z, p, len, name_hash_lower(p, len, key));
			if (ce && (ce->flags & ZNODE_NSEC3))
				ce = NULL;
		}
		if (!ce)
			ce = z->apex;
	}
	/* The topmost cut or DNAME above the name governs (RFC 1034 4.3.2 3b). */
	const znode_t *top = NULL;
	if ((ce->flags & (ZNODE_OCCLUDED | ZNODE_DELEG)) ||
	    (ce != n && (ce->flags & ZNODE_DNAME))) {
		for (const znode_t *p = ce; p; p = zone_parent(z, p)) {
			if ((p->flags & ZNODE_DELEG) || ((p->flags & ZNODE_DNAME) && p != n))
				top = p;
			/* a node not below a cut or DNAME has none above it: stop there */
			if (!(p->flags & ZNODE_OCCLUDED))
				break;
		}
	}
	if (top) {
		*res = (lookup_t){ (top->flags & ZNODE_DELEG) ? LOOKUP_REFERRAL : LOOKUP_DNAME, top,
				   NULL };
		return;
	}
	if (ce->flags & ZNODE_WILDCARD_CHILD) {
		uint8_t wild[NAME_MAXLEN];
		wild[0] = 1;
		wild[1] = '*';
		memcpy(wild + 2, znode_name(ce), ce->name_len);
		size_t wlen = (size_t)ce->name_len + 2;
		const znode_t *w =
			zone_lookup_hashed(z, wild, wlen, name_hash_lower(wild, wlen, key));
		if (w) {
			/* a wildcard with NS (RFC 4592 4.2 leaves it open): a referral, as Knot */
			bool cut = (w->flags & ZNODE_DELEG) && qtype != DNS_TYPE_DS;
			*res = (lookup_t){ cut ? LOOKUP_REFERRAL : LOOKUP_WILDCARD, w, ce };
			return;
		}
	}
	*res = (lookup_t){ LOOKUP_NXDOMAIN, ce, NULL };
}

/* Append a set; on no room the answer becomes TC with the question only. */
static bool put(answer_t *a, enum dns_section sec, const uint8_t *owner, const rrset_wire_t *set)
{
	if (a->stop)
		return false;
	if (response_add_rrset(&a->r, sec, owner, set) == 0)
		return true;
	response_truncate(&a->r);
	a->stop = true;
	return false;
}

/* An RRset and, with DO, the RRSIGs that cover it (RFC 4035 3.1.1). */
QUERY_PATH static bool put_set(answer_t *a, enum dns_section sec, const uint8_t *owner,
			       const zrrset_t *rs)
{
	if (!put(a, sec, owner, &rs->set))
		return false;
	return !(a->dnssec && rs->sigs) || put(a, sec, owner, rs->sigs);
}

QUERY_PATH static void put_negative(answer_t *a)
{
	const zone_t *z = a->z;
	if (put(a, DNS_SECTION_AUTHORITY, znode_name(z->apex), &z->neg_soa) && a->dnssec &&
	    z->neg_soa_sigs)
		put(a, DNS_SECTION_AUTHORITY, znode_name(z->apex), z->neg_soa_sigs);
}

/*
 * Denial of existence (RFC 4035 3.1.3, RFC 5155 7.2). The proofs are
 * collected while the answer section is written (a wildcard on a CNAME
 * chain needs one) and written after the SOA or NS in the authority
 * section, each NSEC or NSEC3 once.
 */
static void proof_add(answer_t *a, const znode_t *n)
{
	if (!n)
		return;
	for (int i = 0; i < a->proof_count; i++)
		if (a->proofs[i] == n)
			return;
	if (a->proof_count < ANSWER_PROOFS_MAX)
		a->proofs[a->proof_count++] = n;
}

static void put_proofs(answer_t *a)
{
	uint16_t type = a->z->denial == ZONE_DENIAL_NSEC3 ? DNS_TYPE_NSEC3 : DNS_TYPE_NSEC;
	for (int i = 0; i < a->proof_count; i++) {
		const zrrset_t *rs = znode_rrset(a->proofs[i], type);
		if (rs && !put_set(a, DNS_SECTION_AUTHORITY, znode_name(a->proofs[i]), rs))
			return;
	}
}

/* The NSEC or NSEC3 covering a name that does not exist. */
QUERY_PATH static void prove_cover(answer_t *a, const uint8_t *name)
{
	bool exact;
	if (a->z->denial == ZONE_DENIAL_NSEC)
		proof_add(a, zone_nsec_cover(a->z, name));
	else if (a->z->denial == ZONE_DENIAL_NSEC3)
		proof_add(a, zone_nsec3_find(a->z, name, &exact));
}

/* The cover of "*.<ce>": no wildcard could have answered (RFC 4035 3.1.3.2). */
static void prove_no_wildcard(answer_t *a, const znode_t *ce)
{
	uint8_t wild[NAME_MAXLEN];
	if ((size_t)ce->name_len + 2 > NAME_MAXLEN)
		return;
	wild[0] = 1;
	wild[1] = '*';
	memcpy(wild + 2, znode_name(ce), ce->name_len);
	prove_cover(a, wild);
}

/* name without its leftmost labels, keeping `labels` labels. */
static const uint8_t *name_keep_labels(const uint8_t *name, int labels)
{
	for (int skip = name_labels(name) - labels; skip > 0; skip--)
		name += 1 + *name;
	return name;
}

/*
 * NSEC3 closest encloser proof (RFC 5155 7.2.1) for name below node ce:
 * the NSEC3 matching the closest provable encloser (ce or the nearest
 * ancestor with an NSEC3, as opt-out may leave names out) and the one
 * covering the next closer name. Returns that encloser, or NULL.
 */
QUERY_PATH static const znode_t *prove_encloser(answer_t *a, const uint8_t *name, const znode_t *ce)
{
	while (ce && !zone_nsec3_match(a->z, ce))
		ce = zone_parent(a->z, ce);
	if (!ce)
		return NULL;
	proof_add(a, zone_nsec3_match(a->z, ce));
	if (name_labels(name) > ce->labels)
		prove_cover(a, name_keep_labels(name, ce->labels + 1));
	return ce;
}

/* NXDOMAIN for name, whose closest encloser is ce. */
static void prove_nxdomain(answer_t *a, const uint8_t *name, const znode_t *ce)
{
	if (a->z->denial == ZONE_DENIAL_NSEC) {
		prove_cover(a, name);
		prove_no_wildcard(a, ce);
	} else if (a->z->denial == ZONE_DENIAL_NSEC3 &&
		   (ce = prove_encloser(a, name, ce)) != NULL) {
		prove_no_wildcard(a, ce);
	}
}

/*
 * NODATA at node n: its NSEC (or, for an empty non-terminal, the NSEC that
 * covers it), or its NSEC3; without one (opt-out, RFC 5155 7.2.4) the
 * closest provable encloser proof.
 */
QUERY_PATH static void prove_nodata(answer_t *a, const znode_t *n)
{
	if (a->z->denial == ZONE_DENIAL_NSEC) {
		if (znode_rrset(n, DNS_TYPE_NSEC))
			proof_add(a, n);
		else
			prove_cover(a, znode_name(n));
	} else if (a->z->denial == ZONE_DENIAL_NSEC3) {
		const znode_t *m = zone_nsec3_match(a->z, n);
		if (m)
			proof_add(a, m);
		else
			prove_encloser(a, znode_name(n), n);
	}
}

/*
 * An answer synthesised from the wildcard of lookup res for name: no
 * closer name exists (RFC 4035 3.1.3.3, RFC 5155 7.2.6); for NODATA also
 * that the wildcard lacks the type (RFC 4035 3.1.3.4, RFC 5155 7.2.5).
 */
QUERY_PATH static void prove_wildcard(answer_t *a, const uint8_t *name, const lookup_t *res,
				      bool nodata)
{
	const znode_t *w = res->node, *ce = res->ce;
	if (a->z->denial == ZONE_DENIAL_NSEC) {
		prove_cover(a, name);
	} else if (a->z->denial == ZONE_DENIAL_NSEC3) {
		if (nodata)
			proof_add(a, zone_nsec3_match(a->z, ce));
		prove_cover(a, name_keep_labels(name, ce->labels + 1));
	}
	if (nodata)
		prove_nodata(a, w);
}

/* A referral: the DS of the cut, or the proof that it has none (RFC 4035 3.1.4). */
static void prove_referral(answer_t *a, const znode_t *cut)
{
	const zrrset_t *ds = znode_rrset(cut, DNS_TYPE_DS);
	if (ds)
		put_set(a, DNS_SECTION_AUTHORITY, znode_name(cut), ds);
	else
		prove_nodata(a, cut);
}

/* Offset of the target name inside one RDATA for additional processing. */
static int target_offset(uint16_t type)
{
	switch (type) {
	case DNS_TYPE_NS:
		return 0;
	case DNS_TYPE_MX:
	case DNS_TYPE_KX:
		return 2;
	case DNS_TYPE_SRV:
		return 6;
	default:
		return -1;
	}
}

/* Address types added for a target, in the order NSD and Knot add them. */
static const uint16_t address_types[2] = { DNS_TYPE_A, DNS_TYPE_AAAA };

static bool in_bailiwick(const uint8_t *name, const uint8_t *parent)
{
	return name_is_subdomain(name, parent);
}

/*
 * Additional section (RFC 1034 4.3.2 step 6, RFC 2181 5.4.1): A and AAAA
 * of NS, MX and SRV targets inside the zone, as NSD and Knot add them.
 * For a referral, glue below the cut is required: if it does not fit, TC
 * is set (RFC 9471 3); other additional data is left out quietly.
 */
static void put_additional(answer_t *a)
{
	const rrset_wire_t *set = a->extra;
	int off = set ? target_offset(set->type) : -1;
	if (off < 0 || a->stop)
		return;
	const znode_t *seen[ANSWER_ADDITIONAL_MAX];
	int nseen = 0;
	const uint8_t *p = set->data, *end = set->data + set->data_len;
	for (uint16_t i = 0; i < set->rr_count && p + 10 <= end; i++) {
		uint16_t rdlen = wire_get_u16(p + 8);
		const uint8_t *rdata = p + 10;
		p += 10 + rdlen;
		if ((size_t)(end - rdata) < rdlen)
			break;
		/* every stored name is read within its own record's RDATA */
		int tlen = rdata_name_length(rdata, rdlen, (size_t)off);
		if (tlen < 0)
			continue;
		uint8_t target[NAME_MAXLEN];
		memcpy(target, rdata + off, (size_t)tlen);
		name_lower(target);
		if (!in_bailiwick(target, znode_name(a->z->apex)))
			continue;
		const znode_t *n = zone_lookup(a->z, target);
		if (!n || ((n->flags & ZNODE_OCCLUDED) && !a->cut))
			continue;
		bool dup = false;
		for (int k = 0; k < nseen; k++)
			dup |= seen[k] == n;
		if (dup)
			continue;
		if (nseen < ANSWER_ADDITIONAL_MAX)
			seen[nseen++] = n;
		bool required = a->cut && in_bailiwick(target, znode_name(a->cut));
		for (int t = 0; t < 2; t++) {
			const zrrset_t *rs = znode_rrset(n, address_types[t]);
			if (!rs)
				continue;
			int rc = response_add_rrset(&a->r, DNS_SECTION_ADDITIONAL, znode_name(n),
						    &rs->set);
			if (rc < 0 && required) {
				/* like Knot: TC, keeping the referral and the glue that fit */
				response_set_flags(&a->r, DNS_FLAG_TC);
				a->glue_truncated = true;
				return;
			}
			/* glue is not signed; other data gets its RRSIGs when they fit */
			if (rc == 0 && a->dnssec && rs->sigs && !(n->flags & ZNODE_OCCLUDED))
				response_add_rrset(&a->r, DNS_SECTION_ADDITIONAL, znode_name(n),
						   rs->sigs);
		}
	}
}

/* NSEC and NSEC3 describe the zone, not the name: no answer to ANY alone. */
static bool dnssec_metadata(uint16_t type)
{
	return type == DNS_TYPE_RRSIG || type == DNS_TYPE_NSEC || type == DNS_TYPE_NSEC3;
}

/*
 * ANY (RFC 8482 4.2): one RRset instead of all. Like Knot, send the first
 * RRset of the node (in type order), which keeps the answer small and
 * deterministic; but data before DNSSEC metadata, so a name whose only
 * data is of a type numbered above NSEC answers that data, as NSD does.
 */
static const zrrset_t *pick_any(const znode_t *n)
{
	const zrrset_t *meta = NULL, *rs = znode_rrsets(n);
	for (uint16_t i = 0; i < n->rrset_count; i++) {
		uint16_t type = rs[i].set.type;
		if (!dnssec_metadata(type))
			return &rs[i];
		if (!meta && type != DNS_TYPE_RRSIG)
			meta = &rs[i];
	}
	return meta;
}

/*
 * RRSIG asked for by type (RFC 4035 3.1.5 leaves the answer open): like
 * Knot, the signatures of the first signed RRset in type order, as ANY
 * gives one RRset; NULL when nothing at the node is signed.
 */
static const rrset_wire_t *pick_sigs(const znode_t *n)
{
	const zrrset_t *rs = znode_rrsets(n);
	for (uint16_t i = 0; i < n->rrset_count; i++)
		if (rs[i].sigs)
			return rs[i].sigs;
	return NULL;
}

/* The synthesised CNAME of a DNAME (RFC 6672 3.3), built on the stack. */
typedef struct synth_cname {
	uint8_t data[10 + NAME_MAXLEN];
	uint16_t names[1];
	rrset_wire_t set;
} synth_cname_t;

/*
 * The first name in the RDATA of the first record of set (a CNAME's or a
 * DNAME's target), found within that record: its length, or -1.
 */
static int first_target(const rrset_wire_t *set)
{
	if (set->data_len < 10)
		return -1;
	uint16_t rdlen = wire_get_u16(set->data + 8);
	if (10u + rdlen > set->data_len)
		return -1;
	return rdata_name_length(set->data + 10, rdlen, 0);
}

/*
 * Replace the DNAME owner suffix of name by the DNAME target (tlen octets)
 * into dst. Returns the new length, or 0 when it would pass 255 octets
 * (YXDOMAIN).
 */
static size_t dname_substitute(const uint8_t *name, size_t len, const znode_t *owner,
			       const uint8_t *target, size_t tlen, uint8_t dst[NAME_MAXLEN])
{
	assert(owner->name_len <= len); /* the DNAME's owner is an ancestor of name */
	size_t prefix = len - owner->name_len;
	if (prefix + tlen > NAME_MAXLEN)
		return 0;
	memmove(dst, name, prefix);
	memcpy(dst + prefix, target, tlen);
	name_lower(dst);
	return prefix + tlen;
}

/*
 * The question name as the client wrote it, for the owner of the first
 * records: NSD and Knot keep the client's case there. Falls back to the
 * lowercase copy when the question used a compression pointer.
 */
static const uint8_t *question_owner(const query_t *q)
{
	const uint8_t *raw = q->pkt + DNS_HEADER_SIZE;
	size_t i = 0;
	while (i < q->qname_len && raw[i] != 0) {
		if (raw[i] > 63)
			return q->qname;
		i += (size_t)raw[i] + 1;
	}
	return i + 1 == q->qname_len ? raw : q->qname;
}

/* Has a CNAME (real or synthesised) for this name been added already? */
static bool chain_seen(const uint64_t *seen, int n, uint64_t hash)
{
	for (int i = 0; i < n; i++)
		if (seen[i] == hash)
			return true;
	return false;
}

static void answer_zone(answer_t *a, const query_t *q)
{
	const zone_t *z = a->z;
	const uint8_t *owner = question_owner(q);
	uint8_t buf[2][NAME_MAXLEN]; /* the chain's names; `name` is never buf[spare] */
	int spare = 0;
	const uint8_t *name = q->qname;
	size_t len = q->qname_len;
	uint64_t seen[ANSWER_CHAIN_MAX]; /* hashes of the names a CNAME was added for */
	int chain = 0;
	const znode_t *dname_added = NULL;
	uint16_t flags = DNS_FLAG_AA;
	uint16_t rcode = DNS_RCODE_NOERROR;

	for (;;) {
		/* one key for every zone: the question's hash holds in a parent too */
		uint64_t hash =
			name == q->qname ? a->qhash : name_hash_lower(name, len, z->hash_key);
		lookup_t res;
		lookup_name(z, name, len, hash, a->qtype, &res);
		const znode_t *n = res.node;
		if (res.kind == LOOKUP_REFERRAL) {
			/* RFC 1034 4.3.2 3b: not authoritative below a cut */
			if (chain == 0)
				flags &= (uint16_t)~DNS_FLAG_AA;
			a->kind = ANSWER_REFERRAL;
			a->account = n;
			const zrrset_t *ns = znode_rrset(n, DNS_TYPE_NS);
			if (put(a, DNS_SECTION_AUTHORITY, znode_name(n), &ns->set)) {
				a->extra = &ns->set;
				a->cut = n;
				if (a->dnssec)
					prove_referral(a, n);
			}
			break;
		}
		if (res.kind == LOOKUP_NXDOMAIN) {
			rcode = DNS_RCODE_NXDOMAIN;
			a->kind = ANSWER_NXDOMAIN;
			a->account = n; /* the closest encloser */
			put_negative(a);
			if (a->dnssec)
				prove_nxdomain(a, name, n);
			break;
		}
		const rrset_wire_t *cname = NULL;
		const zrrset_t *cname_rs = NULL; /* a real CNAME, signed */
		synth_cname_t s;
		if (res.kind == LOOKUP_DNAME) {
			const zrrset_t *dn = znode_rrset(n, DNS_TYPE_DNAME);
			/* a DNAME met again on the chain is not repeated, as in Knot */
			if (n != dname_added && !put_set(a, DNS_SECTION_ANSWER, znode_name(n), dn))
				break;
			dname_added = n;
			uint8_t *next = buf[spare];
			assert(next != name);
			int tlen = first_target(&dn->set);
			if (tlen < 0)
				break; /* the load checks refuse such a DNAME */
			size_t nlen = dname_substitute(name, len, n, dn->set.data + 10,
						       (size_t)tlen, next);
			if (nlen == 0) {
				rcode = DNS_RCODE_YXDOMAIN; /* RFC 6672 2.2 */
				break;
			}
			memcpy(s.data, "\0\x05\0\x01", 4);
			memcpy(s.data + 4, dn->set.data + 4,
			       4); /* the DNAME's TTL (RFC 6672 3.3) */
			s.data[8] = (uint8_t)(nlen >> 8);
			s.data[9] = (uint8_t)nlen;
			memcpy(s.data + 10, next, nlen);
			s.names[0] = 10;
			s.set = (rrset_wire_t){ .type = DNS_TYPE_CNAME,
						.rr_count = 1,
						.data_len = (uint32_t)(10 + nlen),
						.data = s.data,
						.names = s.names,
						.name_count = 1 };
			cname = &s.set;
		} else {
			/* exact or wildcard: the owner is the name asked for (RFC 4592 3.3.1) */
			bool wild = res.kind == LOOKUP_WILDCARD;
			a->account = wild ? res.ce : NULL;
			const rrset_wire_t *sigs = a->qtype == DNS_TYPE_RRSIG ? pick_sigs(n) : NULL;
			if (sigs) {
				/* signatures of the wildcard: the name itself does not exist */
				if (put(a, DNS_SECTION_ANSWER, owner, sigs) && wild && a->dnssec)
					prove_wildcard(a, name, &res, false);
				break;
			}
			const zrrset_t *rs = a->qtype == DNS_TYPE_ANY ? pick_any(n)
					     : a->qtype == DNS_TYPE_RRSIG
						     ? NULL
						     : znode_rrset(n, a->qtype);
			if (rs) {
				if (put_set(a, DNS_SECTION_ANSWER, owner, rs))
					a->extra = &rs->set;
				if (wild && a->dnssec)
					prove_wildcard(a, name, &res, false);
				break;
			}
			cname_rs = (n->flags & ZNODE_CNAME) ? znode_rrset(n, DNS_TYPE_CNAME) : NULL;
			if (!cname_rs) {
				a->kind = ANSWER_NODATA;
				put_negative(a); /* NODATA (RFC 2308 2.2) */
				if (a->dnssec && wild)
					prove_wildcard(a, name, &res, true);
				else if (a->dnssec)
					prove_nodata(a, n);
				break;
			}
			if (wild && a->dnssec)
				prove_wildcard(a, name, &res, false);
			cname = &cname_rs->set;
		}
		/*
		 * RFC 1034 4.3.2 3a: add the CNAME and restart at its target.
		 * Like Knot, the target of the last CNAME allowed is still
		 * looked up; only a further CNAME is not added.
		 */
		if (chain >= ANSWER_CHAIN_MAX || chain_seen(seen, chain, hash) ||
		    !(cname_rs ? put_set(a, DNS_SECTION_ANSWER, owner, cname_rs)
			       : put(a, DNS_SECTION_ANSWER, owner, cname)))
			break;
		seen[chain++] = hash;
		int tlen = first_target(cname);
		if (tlen < 0)
			break; /* the load checks refuse such a CNAME */
		const uint8_t *target = cname->data + 10;
		uint8_t *next = buf[spare];
		assert(next != name && next != owner); /* target may be in the other buffer */
		spare ^= 1;
		len = (size_t)tlen;
		memcpy(next, target, len);
		name_lower(next);
		name = owner = next;
		if (!in_bailiwick(name, znode_name(z->apex)))
			break; /* NSD and Knot follow chains inside the zone only */
	}
	if (!a->stop)
		put_proofs(a);
	if (!a->stop)
		put_additional(a);
	response_set_flags(&a->r, flags);
	response_set_rcode(&a->r, rcode);
}

/*
 * CHAOS class TXT (as NSD and Knot answer it): id.server and hostname.bind
 * name the server, version.server and version.bind give its version. TTL 0
 * and no AA: no zone holds these names. Any other CH name or type, and a
 * text not configured, is REFUSED as NSD and Knot do.
 */
static void answer_chaos(answer_t *a, const query_t *q, const answer_ctx_t *ctx)
{
	static const uint8_t id_server[] = "\2id\6server";
	static const uint8_t hostname_bind[] = "\10hostname\4bind";
	static const uint8_t version_server[] = "\7version\6server";
	static const uint8_t version_bind[] = "\7version\4bind";
	const uint8_t *text = NULL;
	uint8_t text_len = 0;
	if (q->qtype == DNS_TYPE_TXT) {
		if (name_equal(q->qname, id_server) || name_equal(q->qname, hostname_bind)) {
			text = ctx->identity;
			text_len = ctx->identity_len;
		} else if (name_equal(q->qname, version_server) ||
			   name_equal(q->qname, version_bind)) {
			text = ctx->version;
			text_len = ctx->version_len;
		}
	}
	if (!text) {
		response_set_rcode(&a->r, DNS_RCODE_REFUSED);
		return;
	}
	/* type, class, TTL 0, RDLENGTH, then one character-string (RFC 1035 3.3.14) */
	uint8_t rr[10 + 1 + UINT8_MAX];
	wire_t w;
	wire_init_write(&w, rr, sizeof(rr));
	wire_write_u16(&w, DNS_TYPE_TXT);
	wire_write_u16(&w, DNS_CLASS_CH);
	wire_write_u32(&w, 0);
	wire_write_u16(&w, (uint16_t)(1 + text_len));
	wire_write_u8(&w, text_len);
	wire_write_bytes(&w, text, text_len);
	rrset_wire_t set = { .type = DNS_TYPE_TXT,
			     .rr_count = 1,
			     .data_len = (uint32_t)(11 + text_len),
			     .data = rr };
	put(a, DNS_SECTION_ANSWER, q->qname, &set);
}

/* Whether ctx's client may query a zone of this policy (NULL: anyone may). */
static inline bool answer_allowed(const void *policy, const answer_ctx_t *ctx)
{
	return !policy || (ctx->allow && ctx->allow(policy, ctx));
}

/* A query that parsed, its zone matched (answer_query): RFC 1034 4.3.2. */
static void answer_well_formed(answer_t *a, const zonedb_t *db, const query_t *q,
			       const answer_ctx_t *ctx)
{
	if (q->qclass == DNS_CLASS_CH) {
		answer_chaos(a, q, ctx);
		return;
	}
	if (!a->z) {
		/* a zone configured but not loaded: SERVFAIL, as NSD and Knot */
		response_set_rcode(&a->r, a->configured ? DNS_RCODE_SERVFAIL : DNS_RCODE_REFUSED);
		return;
	}
	if (q->qtype == DNS_TYPE_AXFR || q->qtype == DNS_TYPE_IXFR) {
		/*
		 * Transfers are not served yet. NSD and Knot both answer AXFR
		 * over UDP with NOTIMP (RFC 5936 4.2 allows only TCP); for IXFR
		 * over UDP and any transfer over TCP we follow NSD without a
		 * transfer ACL: REFUSED.
		 */
		bool axfr_udp = q->qtype == DNS_TYPE_AXFR && !ctx->tcp;
		response_set_rcode(&a->r, axfr_udp ? DNS_RCODE_NOTIMP : DNS_RCODE_REFUSED);
		return;
	}
	/*
	 * RFC 4035 3.1.4.1: DS at a child apex is the parent's data; NSD and
	 * Knot answer it from the parent when they serve both.
	 */
	const zone_t *parent;
	uint32_t parent_slot;
	const void *policy = NULL;
	if (q->qtype == DNS_TYPE_DS && q->qname_len == a->z->apex->name_len && q->qname_len > 1 &&
	    (parent = zonedb_match_slot(db, name_parent(q->qname), NULL, &parent_slot, &policy)) !=
		    NULL) {
		/* the parent's data: the parent's allow-query decides */
		if (!answer_allowed(policy, ctx)) {
			response_set_rcode(&a->r, DNS_RCODE_REFUSED);
			return;
		}
		a->z = parent;
		a->slot = parent_slot;
	}
	answer_zone(a, q);
}

/*
 * The COOKIE option of the answer to q (RFC 7873 5.2) into out (client
 * cookie, then server cookie): the valid server cookie that came, or a
 * fresh one. Sets info->cookie. Returns its length, or 0 for no option
 * (no cookie came, cookies are off, or the client's address is not known).
 */
static uint8_t answer_cookie(const query_t *q, const answer_ctx_t *ctx, answer_info_t *info,
			     uint8_t out[COOKIE_CLIENT_LEN + COOKIE_SERVER_MAX])
{
	cookie_t c;
	if (!q->edns || !q->cookie || !ctx->cookies ||
	    cookie_parse(&c, q->cookie, q->cookie_len) < 0)
		return 0;
	enum cookie_verdict v =
		cookie_check(&c, ctx->client_ip, ctx->client_ip_len, ctx->now, ctx->cookies);
	memcpy(out, c.client, COOKIE_CLIENT_LEN);
	if (v == COOKIE_VALID) {
		/* still fresh (RFC 9018 4.3): sent back as it came, no hash to make */
		info->cookie = ANSWER_COOKIE_VALID;
		memcpy(out + COOKIE_CLIENT_LEN, c.server, c.server_len);
		return (uint8_t)(COOKIE_CLIENT_LEN + c.server_len);
	}
	if (cookie_make(out + COOKIE_CLIENT_LEN, c.client, ctx->client_ip, ctx->client_ip_len,
			ctx->now, ctx->cookies->current) < 0)
		return 0;
	info->cookie = v == COOKIE_RENEW ? ANSWER_COOKIE_VALID
		       : c.server        ? ANSWER_COOKIE_INVALID
					 : ANSWER_COOKIE_CLIENT;
	return COOKIE_CLIENT_LEN + COOKIE_SERVER_LEN;
}

/* Tell rate limiting what the answer was and whom to count it for. */
static void answer_account(const answer_t *a, const query_t *q, answer_info_t *info)
{
	info->kind = a->kind;
	if (a->r.rcode != DNS_RCODE_NOERROR && a->r.rcode != DNS_RCODE_NXDOMAIN)
		info->kind = ANSWER_ERROR;
	const uint8_t *name = a->account ? znode_name(a->account) : q->qname;
	uint8_t len = a->account ? a->account->name_len : q->qname_len;
	if (info->kind == ANSWER_ERROR || !q->has_question)
		len = 0; /* errors are counted per client, whatever the name */
	info->name_len = len;
	memcpy(info->name, name, len);
}

QUERY_PATH size_t answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len, uint8_t *out,
			       size_t cap, const answer_ctx_t *ctx, answer_info_t *info)
{
	/*
	 * After a wake-up none of these is in a cache: the set's first line
	 * (the zone match's first read), the context and the answer's first
	 * line are fetched while the question is parsed, not one after the
	 * other as the answer reaches them (answer-bench -c in alternation:
	 * a cold answer's median 526 ns against 571 without).
	 */
	__builtin_prefetch(db);
	__builtin_prefetch(ctx);
	__builtin_prefetch(out, 1);
	query_t q;
	enum query_verdict v = query_parse(&q, pkt, len);
	answer_info_clear(info);
	info->edns = q.edns;
	info->tsig = q.tsig;
	info->dnssec_ok = q.edns && q.edns_do;
	info->qtype = q.has_question ? q.qtype : 0;
	info->kind = ANSWER_ERROR;
	if (v == QUERY_DROP) {
		/* shorter than a header is malformed; a response (QR set) is not */
		info->dropped = true;
		info->malformed = len < DNS_HEADER_SIZE;
		return 0;
	}
	uint8_t cookie[COOKIE_CLIENT_LEN + COOKIE_SERVER_MAX];
	response_edns_t e = { 0 };
	if (q.edns) {
		e.present = true;
		e.udp_size = ctx->edns_size;
		e.do_bit = q.edns_do;
		if (q.nsid_requested && ctx->nsid) {
			e.nsid = ctx->nsid;
			e.nsid_len = ctx->nsid_len;
		}
		e.cookie_len = answer_cookie(&q, ctx, info, cookie);
		e.cookie = e.cookie_len ? cookie : NULL;
	}
	size_t limit = ctx->tcp ? DNS_TCP_MAX : query_udp_limit(&q, ctx->edns_size);
	if (limit > cap)
		limit = cap;
	/*
	 * Not `answer_t a = { ... }`: that zeroes the response's compression
	 * table too (384 octets), which response_init leaves for comp_count
	 * to govern. Everything after the response is zeroed as it would be.
	 */
	answer_t a;
	memset((uint8_t *)&a + offsetof(answer_t, z), 0, sizeof(a) - offsetof(answer_t, z));
	a.qtype = q.qtype;
	a.dnssec = q.edns && q.edns_do;
	const void *policy = NULL; /* the matched zone's allow-query, loaded or not */
	/* class ANY is answered from IN data, as Knot does; other classes match no zone */
	if (v == QUERY_OK && (q.qclass == DNS_CLASS_IN || q.qclass == DNS_CLASS_ANY)) {
		/*
		 * The zone and the name's hash slot follow from the question
		 * alone: find them before the header and question are written,
		 * so that the slot, which a cold lookup misses first, is on
		 * its way while they are.
		 */
		a.z = zonedb_match_slot(db, q.qname, &a.configured, &a.slot, &policy);
		/*
		 * Hashed with the set's key, which is every zone's
		 * (zone_hash_key()): nothing waits for the zone's first line,
		 * a cache miss of its own among a million zones, so the hash
		 * is computed while the match's misses are outstanding.
		 */
		uint64_t qhash = name_hash_lower(q.qname, q.qname_len, zonedb_hash_key(db));
		if (a.z) {
			assert(!memcmp(a.z->hash_key, zonedb_hash_key(db), sizeof(a.z->hash_key)));
			a.qhash = qhash;
			__builtin_prefetch(zhash_slot_of(a.z, a.qhash));
		}
	}
	int rc = response_init(&a.r, &q, out, cap, limit, response_opt_size(&e));
	if (rc < 0 && e.nsid) {
		/* The header, question and OPT do not fit with the NSID: answer
		 * without it (RFC 5001 2.2: the server chooses to honour a
		 * request) rather than not at all. */
		e.nsid = NULL;
		e.nsid_len = 0;
		rc = response_init(&a.r, &q, out, cap, limit, response_opt_size(&e));
	}
	if (rc < 0) {
		info->dropped = true;
		return 0;
	}
	switch (v) {
	case QUERY_FORMERR:
		info->malformed = true;
		response_set_rcode(&a.r, DNS_RCODE_FORMERR);
		break;
	case QUERY_BADVERS:
		response_set_rcode(&a.r, DNS_RCODE_BADVERS); /* RFC 6891 6.1.3 */
		break;
	case QUERY_NOTIMP:
		response_set_rcode(&a.r, DNS_RCODE_NOTIMP);
		break;
	default:
		/*
		 * RFC 7873 5.2.3, 5.2.4: a server that requires cookies answers
		 * a client without a valid one BADCOOKIE, with a fresh cookie
		 * it can retry with; over TCP the connection is proof enough.
		 */
		if (ctx->cookie_required && !ctx->tcp && e.cookie &&
		    info->cookie != ANSWER_COOKIE_VALID)
			response_set_rcode(&a.r, DNS_RCODE_BADCOOKIE);
		else if (!answer_allowed(policy, ctx))
			/* allow-query: REFUSED, as NSD and BIND, before anything of the zone shows
			 */
			response_set_rcode(&a.r, DNS_RCODE_REFUSED);
		else
			answer_well_formed(&a, db, &q, ctx);
	}
	int n = response_finish(&a.r, &e);
	if (n < 0) {
		info->dropped = true;
		return 0;
	}
	info->rcode = a.r.rcode;
	info->truncated = a.r.truncated || a.glue_truncated;
	info->zone_slot = a.slot;
	answer_account(&a, &q, info);
	return (size_t)n;
}
