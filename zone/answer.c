/* Answering one query: RFC 1034 4.3.2 with wildcards, CNAME, DNAME, referrals, EDNS, truncation. */
#include "config.h"

#include <string.h>

#include "proto/dns.h"
#include "proto/response.h"
#include "zone/answer.h"
#include "zone/internal.h"

/*
 * CNAMEs (real or synthesised from a DNAME) followed inside one zone: like
 * Knot, at most 5, and a name met twice (a loop) ends the chain with what
 * was written so far.
 */
#define ANSWER_CHAIN_MAX 5
#define ANSWER_ADDITIONAL_MAX 32 /* additional names remembered to skip repeats */

/* Where the lookup of one name in a zone ends (RFC 1034 4.3.2 step 3). */
enum lookup_kind {
	LOOKUP_EXACT,      /* the name exists (maybe an empty non-terminal) */
	LOOKUP_WILDCARD,   /* synthesised from the wildcard node (RFC 4592 3.3) */
	LOOKUP_REFERRAL,   /* at or below a zone cut */
	LOOKUP_DNAME,      /* below a DNAME (RFC 6672 3.2) */
	LOOKUP_NXDOMAIN,   /* no such name, no wildcard */
};

typedef struct lookup {
	enum lookup_kind kind;
	const znode_t *node; /* the match, wildcard, cut, DNAME owner or closest encloser */
} lookup_t;

/* One answer being planned and written. Lives on the worker's stack. */
typedef struct answer {
	response_t r;
	const zone_t *z;
	uint16_t qtype;
	bool stop;                  /* truncated: nothing more is written */
	const rrset_wire_t *extra;  /* RRset whose targets get A/AAAA in additional */
	const znode_t *cut;         /* for a referral: the cut (glue rules differ) */
	bool glue_truncated;        /* TC set because in-domain glue did not fit */
} answer_t;

/* Find where name (lowercase, hashed with the zone's key) ends in z. */
static void lookup_name(const zone_t *z, const uint8_t *name, size_t len, uint64_t hash,
			uint16_t qtype, lookup_t *res)
{
	const uint8_t *key = z->hash_key;
	const znode_t *n = zone_lookup_hashed(z, name, len, hash);
	const znode_t *ce = n;
	if (n && !(n->flags & ZNODE_OCCLUDED)) {
		/* RFC 4035 3.1.4.1: DS at a cut belongs to the parent side */
		if ((n->flags & ZNODE_DELEG) && qtype != DNS_TYPE_DS)
			*res = (lookup_t){ LOOKUP_REFERRAL, n };
		else
			*res = (lookup_t){ LOOKUP_EXACT, n };
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
			ce = zone_lookup_hashed(z, p, len, name_hash(p, key));
		}
		if (!ce)
			ce = z->apex;
	}
	/* The topmost cut or DNAME above the name governs (RFC 1034 4.3.2 3b). */
	const znode_t *top = NULL;
	if ((ce->flags & (ZNODE_OCCLUDED | ZNODE_DELEG)) || (ce != n && (ce->flags & ZNODE_DNAME))) {
		for (const znode_t *p = ce; p; p = p->parent)
			if ((p->flags & ZNODE_DELEG) || ((p->flags & ZNODE_DNAME) && p != n))
				top = p;
	}
	if (top) {
		*res = (lookup_t){ (top->flags & ZNODE_DELEG) ? LOOKUP_REFERRAL : LOOKUP_DNAME, top };
		return;
	}
	if (ce->flags & ZNODE_WILDCARD_CHILD) {
		uint8_t wild[NAME_MAXLEN];
		wild[0] = 1;
		wild[1] = '*';
		memcpy(wild + 2, ce->name, ce->name_len);
		const znode_t *w = zone_lookup_hashed(z, wild, (size_t)ce->name_len + 2,
						      name_hash(wild, key));
		if (w) {
			/* a wildcard with NS (RFC 4592 4.2 leaves it open): a referral, as Knot */
			bool cut = (w->flags & ZNODE_DELEG) && qtype != DNS_TYPE_DS;
			*res = (lookup_t){ cut ? LOOKUP_REFERRAL : LOOKUP_WILDCARD, w };
			return;
		}
	}
	*res = (lookup_t){ LOOKUP_NXDOMAIN, ce };
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

static void put_negative(answer_t *a)
{
	put(a, DNS_SECTION_AUTHORITY, a->z->apex->name, &a->z->neg_soa);
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
		if ((int)rdlen <= off)
			continue;
		uint8_t target[NAME_MAXLEN];
		size_t tlen = name_length(rdata + off);
		memcpy(target, rdata + off, tlen);
		name_lower(target);
		if (!in_bailiwick(target, a->z->apex->name))
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
		bool required = a->cut && in_bailiwick(target, a->cut->name);
		for (int t = 0; t < 2; t++) {
			const zrrset_t *rs = znode_rrset(n, address_types[t]);
			if (!rs)
				continue;
			int rc = response_add_rrset(&a->r, DNS_SECTION_ADDITIONAL, n->name, &rs->set);
			if (rc < 0 && required) {
				/* like Knot: TC, keeping the referral and the glue that fit */
				response_set_flags(&a->r, DNS_FLAG_TC);
				a->glue_truncated = true;
				return;
			}
		}
	}
}

/*
 * ANY (RFC 8482 4.2): one RRset instead of all. Like Knot, send the first
 * RRset of the node (in type order), which keeps the answer small and
 * deterministic.
 */
static const rrset_wire_t *pick_any(const znode_t *n)
{
	for (uint16_t i = 0; i < n->rrset_count; i++)
		if (n->rrsets[i].set.type != DNS_TYPE_RRSIG)
			return &n->rrsets[i].set;
	return NULL;
}

/* The synthesised CNAME of a DNAME (RFC 6672 3.3), built on the stack. */
typedef struct synth_cname {
	uint8_t data[10 + NAME_MAXLEN];
	uint16_t names[1];
	rrset_wire_t set;
} synth_cname_t;

/*
 * Replace the DNAME owner suffix of name by the DNAME target into dst.
 * Returns the new length, or 0 when it would pass 255 octets (YXDOMAIN).
 */
static size_t dname_substitute(const uint8_t *name, size_t len, const znode_t *owner,
			       const uint8_t *target, uint8_t dst[NAME_MAXLEN])
{
	size_t prefix = len - owner->name_len;
	size_t tlen = name_length(target);
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
	uint8_t buf[2][NAME_MAXLEN];  /* the chain's names; `name` is never buf[spare] */
	int spare = 0;
	const uint8_t *name = q->qname;
	size_t len = q->qname_len;
	uint64_t seen[ANSWER_CHAIN_MAX]; /* hashes of the names a CNAME was added for */
	int chain = 0;
	const znode_t *dname_added = NULL;
	uint16_t flags = DNS_FLAG_AA;
	uint16_t rcode = DNS_RCODE_NOERROR;

	for (;;) {
		uint64_t hash = name_hash(name, z->hash_key);
		lookup_t res;
		lookup_name(z, name, len, hash, a->qtype, &res);
		const znode_t *n = res.node;
		if (res.kind == LOOKUP_REFERRAL) {
			/* RFC 1034 4.3.2 3b: not authoritative below a cut */
			if (chain == 0)
				flags &= (uint16_t)~DNS_FLAG_AA;
			const zrrset_t *ns = znode_rrset(n, DNS_TYPE_NS);
			if (put(a, DNS_SECTION_AUTHORITY, n->name, &ns->set)) {
				a->extra = &ns->set;
				a->cut = n;
			}
			break;
		}
		if (res.kind == LOOKUP_NXDOMAIN) {
			rcode = DNS_RCODE_NXDOMAIN;
			put_negative(a);
			break;
		}
		const rrset_wire_t *cname = NULL;
		synth_cname_t s;
		if (res.kind == LOOKUP_DNAME) {
			const zrrset_t *dn = znode_rrset(n, DNS_TYPE_DNAME);
			/* a DNAME met again on the chain is not repeated, as in Knot */
			if (n != dname_added && !put(a, DNS_SECTION_ANSWER, n->name, &dn->set))
				break;
			dname_added = n;
			uint8_t *next = buf[spare];
			size_t nlen = dname_substitute(name, len, n, dn->set.data + 10, next);
			if (nlen == 0) {
				rcode = DNS_RCODE_YXDOMAIN; /* RFC 6672 2.2 */
				break;
			}
			memcpy(s.data, "\0\x05\0\x01", 4);
			memcpy(s.data + 4, dn->set.data + 4, 4); /* the DNAME's TTL (RFC 6672 3.3) */
			s.data[8] = (uint8_t)(nlen >> 8);
			s.data[9] = (uint8_t)nlen;
			memcpy(s.data + 10, next, nlen);
			s.names[0] = 10;
			s.set = (rrset_wire_t){ .type = DNS_TYPE_CNAME, .rr_count = 1,
						.data_len = (uint32_t)(10 + nlen), .data = s.data,
						.names = s.names, .name_count = 1 };
			cname = &s.set;
		} else {
			/* exact or wildcard: the owner is the name asked for (RFC 4592 3.3.1) */
			const rrset_wire_t *set = NULL;
			if (a->qtype == DNS_TYPE_ANY) {
				set = pick_any(n);
			} else {
				const zrrset_t *rs = znode_rrset(n, a->qtype);
				set = rs ? &rs->set : NULL;
			}
			if (set) {
				if (put(a, DNS_SECTION_ANSWER, owner, set))
					a->extra = set;
				break;
			}
			const zrrset_t *cn = (n->flags & ZNODE_CNAME) ? znode_rrset(n, DNS_TYPE_CNAME) : NULL;
			if (!cn) {
				put_negative(a); /* NODATA (RFC 2308 2.2) */
				break;
			}
			cname = &cn->set;
		}
		/*
		 * RFC 1034 4.3.2 3a: add the CNAME and restart at its target.
		 * Like Knot, the target of the last CNAME allowed is still
		 * looked up; only a further CNAME is not added.
		 */
		if (chain >= ANSWER_CHAIN_MAX || chain_seen(seen, chain, hash) ||
		    !put(a, DNS_SECTION_ANSWER, owner, cname))
			break;
		seen[chain++] = hash;
		const uint8_t *target = cname->data + 10;
		uint8_t *next = buf[spare];
		spare ^= 1;
		len = name_length(target);
		memcpy(next, target, len);
		name_lower(next);
		name = owner = next;
		if (!in_bailiwick(name, z->apex->name))
			break; /* NSD and Knot follow chains inside the zone only */
	}
	if (!a->stop)
		put_additional(a);
	response_set_flags(&a->r, flags);
	response_set_rcode(&a->r, rcode);
}

/* A query that parsed: pick the zone, then RFC 1034 4.3.2. */
static void answer_well_formed(answer_t *a, const zonedb_t *db, const query_t *q,
			       const answer_ctx_t *ctx)
{
	/* class ANY is answered from IN data, as Knot does */
	bool configured = false;
	if (q->qclass == DNS_CLASS_IN || q->qclass == DNS_CLASS_ANY)
		a->z = zonedb_match(db, q->qname, &configured);
	if (!a->z) {
		/* a zone configured but not loaded: SERVFAIL, as NSD and Knot */
		response_set_rcode(&a->r, configured ? DNS_RCODE_SERVFAIL : DNS_RCODE_REFUSED);
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
	if (q->qtype == DNS_TYPE_DS && q->qname_len == a->z->apex->name_len && q->qname_len > 1 &&
	    (parent = zonedb_find(db, name_parent(q->qname))) != NULL)
		a->z = parent;
	answer_zone(a, q);
}

size_t answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len,
		    uint8_t *out, size_t cap, const answer_ctx_t *ctx,
		    answer_info_t *info)
{
	query_t q;
	enum query_verdict v = query_parse(&q, pkt, len);
	*info = (answer_info_t){ .edns = q.edns, .qtype = q.has_question ? q.qtype : 0 };
	if (v == QUERY_DROP) {
		/* shorter than a header is malformed; a response (QR set) is not */
		info->dropped = true;
		info->malformed = len < DNS_HEADER_SIZE;
		return 0;
	}
	response_edns_t e = { 0 };
	if (q.edns) {
		e.present = true;
		e.udp_size = ctx->edns_size;
		e.do_bit = q.edns_do;
		if (q.nsid_requested && ctx->nsid) {
			e.nsid = ctx->nsid;
			e.nsid_len = ctx->nsid_len;
		}
	}
	size_t limit = ctx->tcp ? DNS_TCP_MAX : query_udp_limit(&q, ctx->edns_size);
	if (limit > cap)
		limit = cap;
	answer_t a = { .qtype = q.qtype };
	if (response_init(&a.r, &q, out, cap, limit, response_opt_size(&e)) < 0) {
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
		answer_well_formed(&a, db, &q, ctx);
	}
	int n = response_finish(&a.r, &e);
	if (n < 0) {
		info->dropped = true;
		return 0;
	}
	info->rcode = a.r.rcode;
	info->truncated = a.r.truncated || a.glue_truncated;
	return (size_t)n;
}
