/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Signatures refreshed in batches: the RRsets of a signed version whose RRSIGs expire soonest. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/wire.h"
#include "zone/internal.h"
#include "zone/sign_refresh.h"

/* An RRset whose RRSIGs fall due, and when the first of them expires. */
typedef struct due_rrset {
	const znode_t *node;
	const zrrset_t *rs;
	int64_t expires;
} due_rrset_t;

/* The RRsets due (growing), and the earliest expiration of the others. */
typedef struct refresh_scan {
	due_rrset_t *due;
	size_t count, cap;
	int64_t next_expiry; /* of the RRsets not due but the SOA */
	int64_t soa_expiry;  /* of the SOA when not due: a batch signs it anew all the same */
} refresh_scan_t;

/*
 * The earliest expiration of sigs (RFC 4034 3.1.5: serial arithmetic)
 * as UNIX seconds, read near `near`: an RRSIG's 32-bit time is the one
 * within 68 years of it (RFC 4034 3.1.5, RFC 1982).
 */
static int64_t earliest_expiry(const rrset_wire_t *sigs, int64_t near)
{
	int64_t first = INT64_MAX;
	const uint8_t *p = sigs->data, *end = p + sigs->data_len;
	for (; p + 10 <= end; p += 10 + wire_get_u16(p + 8)) {
		if (wire_get_u16(p + 8) < 12)
			continue;
		uint32_t exp = wire_get_u32(p + 10 + 8); /* after type, algorithm, labels, TTL */
		int64_t at = near + (int32_t)(exp - (uint32_t)near);
		first = at < first ? at : first;
	}
	return first;
}

/* Every signed RRset of served: those expiring before due_before listed, the rest's first kept. */
static int scan(const zone_t *served, int64_t due_before, refresh_scan_t *s)
{
	zone_iter_t it;
	s->next_expiry = s->soa_expiry = INT64_MAX;
	for (const znode_t *n = zone_first(served, &it); n; n = zone_next(&it)) {
		const zrrset_t *rs = znode_rrsets(n);
		for (uint16_t i = 0; i < n->rrset_count; i++) {
			if (!rs[i].sigs)
				continue;
			int64_t at = earliest_expiry(rs[i].sigs, due_before);
			bool soa = (n->flags & ZNODE_APEX) && rs[i].set.type == DNS_TYPE_SOA;
			int64_t *first = soa ? &s->soa_expiry : &s->next_expiry;
			if (at >= due_before) {
				*first = at < *first ? at : *first;
				continue;
			}
			if (!zone_grow((void **)&s->due, &s->cap, s->count + 1, sizeof(*s->due)))
				return SHOAL_ENOMEM;
			s->due[s->count++] =
				(due_rrset_t){ .node = n, .rs = &rs[i], .expires = at };
		}
	}
	return 0;
}

static int cmp_due(const void *a, const void *b)
{
	const due_rrset_t *x = a, *y = b;
	return (x->expires > y->expires) - (x->expires < y->expires);
}

/* The keys that sign rs at n: the KSKs the DNSKEY RRset (RFC 6781 3.1), as sign_zone does. */
static sign_key_role_t signer_of(const znode_t *n, const zrrset_t *rs)
{
	bool apex = n->flags & ZNODE_APEX;
	if (apex && rs->set.type == DNS_TYPE_DNSKEY)
		return SIGN_KEY_KSK;
	return sign_signer_role(apex, rs->set.type);
}

/* d's RRSIGs deleted and made anew; the apex's SOA is made anew by sign_replace_soa. */
static int resign(sign_ctx_t *c, const due_rrset_t *d)
{
	if ((d->node->flags & ZNODE_APEX) && d->rs->set.type == DNS_TYPE_SOA)
		return 0;
	const uint8_t *owner = znode_name(d->node);
	int rc = sign_del_records(c, owner, d->rs->sigs);
	return rc < 0 ? rc : sign_add_rrsigs(c, owner, &d->rs->set, signer_of(d->node, d->rs));
}

/*
 * The batch: the SOA at the new serial, then due[0, take) signed anew;
 * the changeset into *out.
 */
static int sign_batch(const zone_t *served, const sign_keyset_t *ks, const sign_zone_opts_t *o,
		      const due_rrset_t *due, size_t take, changeset_t **out)
{
	sign_ctx_t *c = sign_ctx_new(ks, o, znode_name(served->apex));
	if (!c)
		return SHOAL_ENOMEM;
	const zrrset_t *soa = znode_rrset(served->apex, DNS_TYPE_SOA);
	int rc = sign_replace_soa(c, soa->set.data, soa->set.data);
	if (rc == 0)
		rc = sign_del_records(c, c->apex, soa->sigs);
	for (size_t i = 0; rc == 0 && i < take; i++)
		rc = resign(c, &due[i]);
	return sign_ctx_finish(c, rc, out);
}

int sign_refresh(const zone_t *served, const sign_keyset_t *ks, const sign_zone_opts_t *o,
		 int64_t due_before, size_t cap, changeset_t **out, sign_refresh_result_t *res)
{
	*out = NULL;
	*res = (sign_refresh_result_t){ .next_expiry = INT64_MAX };
	int rc = sign_check_served(served, ks, o);
	if (rc < 0)
		return rc;
	refresh_scan_t s = { 0 };
	rc = scan(served, due_before, &s);
	cap = cap ? cap : SIGN_REFRESH_BATCH;
	size_t take = s.count < cap ? s.count : cap;
	if (rc == 0 && take) {
		/* the oldest first: those closest to expiring cannot wait for another batch */
		qsort(s.due, s.count, sizeof(*s.due), cmp_due);
		rc = sign_batch(served, ks, o, s.due, take, out);
		res->resigned = take;
		res->more = take < s.count;
		/* those left are sorted: the first is the earliest */
		if (res->more && s.due[take].expires < s.next_expiry)
			s.next_expiry = s.due[take].expires;
	} else if (s.soa_expiry < s.next_expiry) {
		s.next_expiry = s.soa_expiry; /* no batch: the SOA keeps its RRSIG */
	}
	res->next_expiry = s.next_expiry;
	free(s.due);
	return rc;
}
