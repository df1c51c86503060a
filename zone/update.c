/* SPDX-License-Identifier: GPL-3.0-or-later */
/* An UPDATE against a version: prerequisites (RFC 2136 3.2), the updates as one changeset (3.4.2).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/rdata.h"
#include "proto/serial.h"
#include "zone/internal.h"
#include "zone/update.h"

/* ---- the records of a version ---- */

/* One record: RDATA in the zone's store or a copy of the update's (then ours to free). */
typedef struct urec {
	const uint8_t *rdata;
	uint32_t ttl;
	uint16_t rdlen;
	bool copied;
} urec_t;

/* The SOA serial in an SOA's RDATA (update_parse and the store checked its layout). */
static uint32_t soa_serial(const uint8_t *rdata, uint16_t rdlen)
{
	int mname = rdata_name_length(rdata, rdlen, 0);
	int rname = rdata_name_length(rdata, rdlen, (size_t)mname);
	return wire_get_u32(rdata + mname + rname);
}

/* The records of s into out[0..s->rr_count). */
static void rrset_records(const rrset_wire_t *s, urec_t *out)
{
	wire_t w;
	wire_init_read(&w, s->data, s->data_len);
	for (uint16_t i = 0; i < s->rr_count; i++) {
		wire_skip(&w, 4); /* type, class */
		out[i].ttl = wire_read_u32(&w);
		out[i].rdlen = wire_read_u16(&w);
		out[i].rdata = wire_read_ptr(&w, out[i].rdlen);
		out[i].copied = false;
	}
}

/* The RRset of type at name in z, or NULL. */
static const rrset_wire_t *zone_rrset_at(const zone_t *z, const uint8_t *name, uint16_t type)
{
	const znode_t *n = zone_lookup(z, name);
	const zrrset_t *s = n ? znode_rrset(n, type) : NULL;
	return s ? &s->set : NULL;
}

/* RFC 4034 6.3: RDATA as left-justified octet strings, the shorter first on a tie. */
static int rdata_cmp(const uint8_t *a, uint16_t alen, const uint8_t *b, uint16_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c ? c : (int)alen - (int)blen;
}

/* The index of the record of s with rdata, or -1. */
static long rrset_find(const rrset_wire_t *s, const uint8_t *rdata, uint16_t rdlen)
{
	wire_t w;
	wire_init_read(&w, s->data, s->data_len);
	for (uint16_t i = 0; i < s->rr_count; i++) {
		wire_skip(&w, 8);
		uint16_t len = wire_read_u16(&w);
		const uint8_t *p = wire_read_ptr(&w, len);
		if (p && rdata_cmp(p, len, rdata, rdlen) == 0)
			return i;
	}
	return -1;
}

/* ---- prerequisites (RFC 2136 3.2) ---- */

/* 3.2.1, 3.2.2: one prerequisite that does not depend on values; its rcode. */
static int prereq_plain(const zone_t *z, const update_rr_t *rr)
{
	const znode_t *n = zone_lookup(z, rr->owner);
	bool in_use = n && n->rrset_count > 0;
	bool rrset = n && znode_rrset(n, rr->type) != NULL;
	switch (rr->op) {
	case UPDATE_PREREQ_YXDOMAIN:
		return in_use ? DNS_RCODE_NOERROR : DNS_RCODE_NXDOMAIN;
	case UPDATE_PREREQ_NXDOMAIN:
		return in_use ? DNS_RCODE_YXDOMAIN : DNS_RCODE_NOERROR;
	case UPDATE_PREREQ_YXRRSET:
		return rrset ? DNS_RCODE_NOERROR : DNS_RCODE_NXRRSET;
	case UPDATE_PREREQ_NXRRSET:
		return rrset ? DNS_RCODE_YXRRSET : DNS_RCODE_NOERROR;
	default:
		return DNS_RCODE_NOERROR; /* value dependent: the second pass */
	}
}

/*
 * 3.2.3: the records of the section with want's owner and type, taken
 * as a set, are the zone's RRset exactly (TTLs aside). NOERROR or NXRRSET.
 */
static int prereq_values(const zone_t *z, const update_msg_t *m, const update_rr_t *want,
			 update_rr_t *rr, uint8_t *seen)
{
	const rrset_wire_t *s = zone_rrset_at(z, want->owner, want->type);
	if (!s)
		return DNS_RCODE_NXRRSET;
	memset(seen, 0, s->rr_count);
	update_iter_t it;
	update_iter_init(&it, m, UPDATE_SECTION_PREREQ);
	while (update_iter_next(&it, rr, NULL) > 0) {
		if (rr->op != UPDATE_PREREQ_YXRRSET_RDATA || rr->type != want->type ||
		    !name_equal(rr->owner, want->owner))
			continue;
		long i = rrset_find(s, rr->rdata, rr->rdlen);
		if (i < 0)
			return DNS_RCODE_NXRRSET;
		seen[i] = 1;
	}
	for (uint16_t i = 0; i < s->rr_count; i++)
		if (!seen[i])
			return DNS_RCODE_NXRRSET;
	return DNS_RCODE_NOERROR;
}

/* One pass over the prerequisites: the plain ones (values false) or the value dependent ones. */
static int prereq_pass(const zone_t *z, const update_msg_t *m, bool values, update_rr_t *rr,
		       update_rr_t *scratch, uint8_t *seen)
{
	update_iter_t it;
	update_iter_init(&it, m, UPDATE_SECTION_PREREQ);
	int rcode = DNS_RCODE_NOERROR;
	while (rcode == DNS_RCODE_NOERROR && update_iter_next(&it, rr, NULL) > 0) {
		if (!values)
			rcode = prereq_plain(z, rr);
		else if (rr->op == UPDATE_PREREQ_YXRRSET_RDATA)
			rcode = prereq_values(z, m, rr, scratch, seen);
	}
	return rcode;
}

int zone_update_prereq(const zone_t *z, const update_msg_t *m)
{
	if (m->prcount == 0)
		return DNS_RCODE_NOERROR;
	update_rr_t *rr = malloc(2 * sizeof(*rr));
	uint8_t *seen = malloc(UINT16_MAX);
	int rcode = SHOAL_ENOMEM;
	if (!rr || !seen)
		goto done;
	/* 3.2.5: the value dependent ones are compared after the loop over the others */
	rcode = prereq_pass(z, m, false, rr, rr + 1, seen);
	if (rcode == DNS_RCODE_NOERROR)
		rcode = prereq_pass(z, m, true, rr, rr + 1, seen);
done:
	free(rr);
	free(seen);
	return rcode;
}

/* ---- updates (RFC 2136 3.4.2) ---- */

/* An RRset the update touches: the zone's records, and those after the updates so far. */
typedef struct uset {
	uint8_t owner[NAME_MAXLEN];
	uint16_t type;
	urec_t *old;
	uint32_t old_n;
	urec_t *cur;
	uint32_t cur_n, cur_cap;
} uset_t;

/* The state of one evaluation. */
typedef struct uctx {
	const zone_t *z;
	const uint8_t *apex;
	uset_t *sets;
	size_t n, cap;
	uint8_t (*whole)[NAME_MAXLEN]; /* names whose every RRset is in sets */
	size_t whole_n, whole_cap;
	bool soa_set; /* an update replaced the SOA */
	int err;
} uctx_t;

/* The set of owner and type, made from the zone's records when new; NULL on ENOMEM. */
static uset_t *uset_get(uctx_t *c, const uint8_t *owner, uint16_t type)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->sets[i].type == type && name_equal(c->sets[i].owner, owner))
			return &c->sets[i];
	if (!zone_grow((void **)&c->sets, &c->cap, c->n + 1, sizeof(uset_t)))
		return NULL;
	uset_t *s = &c->sets[c->n];
	memset(s, 0, sizeof(*s));
	memcpy(s->owner, owner, name_length(owner));
	s->type = type;
	const rrset_wire_t *w = zone_rrset_at(c->z, owner, type);
	uint32_t n = w ? w->rr_count : 0;
	s->old = calloc(n ? n : 1, sizeof(urec_t));
	s->cur = calloc(n ? n : 1, sizeof(urec_t));
	if (!s->old || !s->cur) {
		free(s->old);
		free(s->cur);
		return NULL;
	}
	if (w)
		rrset_records(w, s->old);
	memcpy(s->cur, s->old, n * sizeof(urec_t));
	s->cur_cap = n ? n : 1;
	s->old_n = s->cur_n = n;
	c->n++;
	return s;
}

/* Every RRset of owner in c->sets; false on ENOMEM. */
static bool load_name(uctx_t *c, const uint8_t *owner)
{
	for (size_t i = 0; i < c->whole_n; i++)
		if (name_equal(c->whole[i], owner))
			return true;
	const znode_t *n = zone_lookup(c->z, owner);
	for (uint16_t i = 0; n && i < n->rrset_count; i++)
		if (!uset_get(c, owner, znode_rrsets(n)[i].set.type))
			return false;
	if (!zone_grow((void **)&c->whole, &c->whole_cap, c->whole_n + 1, sizeof(*c->whole)))
		return false;
	memcpy(c->whole[c->whole_n++], owner, name_length(owner));
	return true;
}

/* Whether owner (loaded whole) holds records of a type for which match says true. */
static bool name_has(const uctx_t *c, const uint8_t *owner, bool (*match)(uint16_t))
{
	for (size_t i = 0; i < c->n; i++)
		if (c->sets[i].cur_n > 0 && match(c->sets[i].type) &&
		    name_equal(c->sets[i].owner, owner))
			return true;
	return false;
}

/* RFC 4035 2.5 and 3.4.2.2: the types a CNAME may stand beside, and the CNAME itself. */
static bool cname_neighbour(uint16_t type)
{
	return type == DNS_TYPE_RRSIG || type == DNS_TYPE_NSEC;
}

static bool is_cname(uint16_t type)
{
	return type == DNS_TYPE_CNAME;
}

static bool other_data(uint16_t type)
{
	return !is_cname(type) && !cname_neighbour(type);
}

static void rec_clear(urec_t *r)
{
	if (r->copied)
		free((void *)r->rdata);
	r->copied = false;
}

/* Remove record i of s's current records. */
static void uset_remove(uset_t *s, uint32_t i)
{
	rec_clear(&s->cur[i]);
	s->cur[i] = s->cur[--s->cur_n];
}

static void uset_clear(uset_t *s)
{
	while (s->cur_n > 0)
		uset_remove(s, s->cur_n - 1);
}

static long uset_find(const uset_t *s, const uint8_t *rdata, uint16_t rdlen)
{
	for (uint32_t i = 0; i < s->cur_n; i++)
		if (rdata_cmp(s->cur[i].rdata, s->cur[i].rdlen, rdata, rdlen) == 0)
			return i;
	return -1;
}

/* Add rr's record to s (a copy of its RDATA); false on ENOMEM. */
static bool uset_append(uset_t *s, const update_rr_t *rr)
{
	size_t cap = s->cur_cap;
	if (!zone_grow((void **)&s->cur, &cap, s->cur_n + 1, sizeof(urec_t)))
		return false;
	s->cur_cap = (uint32_t)cap;
	uint8_t *copy = malloc(rr->rdlen ? rr->rdlen : 1);
	if (!copy)
		return false;
	memcpy(copy, rr->rdata, rr->rdlen);
	s->cur[s->cur_n++] = (urec_t){ copy, rr->ttl, rr->rdlen, true };
	return true;
}

/* 3.4.2.2 for an SOA: replaces the apex's unless older than it. */
static int add_soa(uctx_t *c, const update_rr_t *rr)
{
	uset_t *s = uset_get(c, rr->owner, DNS_TYPE_SOA);
	if (!s)
		return SHOAL_ENOMEM;
	if (!name_equal(rr->owner, c->apex) || s->cur_n != 1)
		return 0;
	if (serial_gt(soa_serial(s->cur[0].rdata, s->cur[0].rdlen),
		      soa_serial(rr->rdata, rr->rdlen)))
		return 0;
	uset_clear(s);
	c->soa_set = true;
	return uset_append(s, rr) ? 0 : SHOAL_ENOMEM;
}

/* 3.4.2.2: an addition, with the CNAME rules and a duplicate's TTL. */
static int add_rr(uctx_t *c, const update_rr_t *rr)
{
	if (rr->type == DNS_TYPE_SOA)
		return add_soa(c, rr);
	if (!load_name(c, rr->owner))
		return SHOAL_ENOMEM;
	if (is_cname(rr->type) ? name_has(c, rr->owner, other_data)
			       : other_data(rr->type) && name_has(c, rr->owner, is_cname))
		return 0;
	uset_t *s = uset_get(c, rr->owner, rr->type);
	if (!s)
		return SHOAL_ENOMEM;
	if (is_cname(rr->type))
		uset_clear(s); /* a CNAME replaces the one there */
	if (uset_find(s, rr->rdata, rr->rdlen) < 0 && !uset_append(s, rr))
		return SHOAL_ENOMEM;
	for (uint32_t i = 0; i < s->cur_n; i++)
		s->cur[i].ttl = rr->ttl; /* RFC 2181 5.2: one TTL for the RRset */
	return 0;
}

/* The types an update never deletes whole at the apex (3.4.2.3). */
static bool apex_kept(const uctx_t *c, const uint8_t *owner, uint16_t type)
{
	return (type == DNS_TYPE_SOA || type == DNS_TYPE_NS) && name_equal(owner, c->apex);
}

static int del_rrset(uctx_t *c, const update_rr_t *rr)
{
	if (apex_kept(c, rr->owner, rr->type))
		return 0;
	uset_t *s = uset_get(c, rr->owner, rr->type);
	if (!s)
		return SHOAL_ENOMEM;
	uset_clear(s);
	return 0;
}

static int del_name(uctx_t *c, const update_rr_t *rr)
{
	if (!load_name(c, rr->owner))
		return SHOAL_ENOMEM;
	for (size_t i = 0; i < c->n; i++)
		if (name_equal(c->sets[i].owner, rr->owner) &&
		    !apex_kept(c, rr->owner, c->sets[i].type))
			uset_clear(&c->sets[i]);
	return 0;
}

/* 3.4.2.4: one record, never the SOA nor the apex's last NS. */
static int del_rr(uctx_t *c, const update_rr_t *rr)
{
	if (rr->type == DNS_TYPE_SOA)
		return 0;
	uset_t *s = uset_get(c, rr->owner, rr->type);
	if (!s)
		return SHOAL_ENOMEM;
	long i = uset_find(s, rr->rdata, rr->rdlen);
	if (i < 0 || (s->cur_n == 1 && apex_kept(c, rr->owner, rr->type)))
		return 0;
	uset_remove(s, (uint32_t)i);
	return 0;
}

static int apply_one(uctx_t *c, const update_rr_t *rr)
{
	switch (rr->op) {
	case UPDATE_ADD:
		return add_rr(c, rr);
	case UPDATE_DEL_RRSET:
		return del_rrset(c, rr);
	case UPDATE_DEL_NAME:
		return del_name(c, rr);
	case UPDATE_DEL_RR:
		return del_rr(c, rr);
	default:
		return SHOAL_EINVAL;
	}
}

/* ---- the changeset ---- */

static int urec_order(const void *a, const void *b)
{
	const urec_t *x = a, *y = b;
	return rdata_cmp(x->rdata, x->rdlen, y->rdata, y->rdlen);
}

static int uset_order(const void *a, const void *b)
{
	const uset_t *x = a, *y = b;
	int c = name_compare(x->owner, y->owner);
	return c ? c : (int)x->type - (int)y->type;
}

/*
 * The records of s that one side has and the other has not (or with
 * another TTL): deletions from old, additions from cur. Counted into
 * *changes; added to cs when it is not NULL. Both sorted.
 */
static int uset_diff(const uset_t *s, changeset_t *cs, size_t *changes)
{
	uint32_t i = 0, j = 0;
	while (i < s->old_n || j < s->cur_n) {
		const urec_t *o = i < s->old_n ? &s->old[i] : NULL;
		const urec_t *n = j < s->cur_n ? &s->cur[j] : NULL;
		int cmp = !o ? 1 : !n ? -1 : urec_order(o, n);
		bool same = cmp == 0 && o->ttl == n->ttl;
		i += cmp <= 0;
		j += cmp >= 0;
		if (same)
			continue;
		for (int add = 0; add < 2; add++) {
			const urec_t *r = add ? (cmp >= 0 ? n : NULL) : (cmp <= 0 ? o : NULL);
			if (!r)
				continue;
			++*changes;
			int rc = cs ? changeset_add(cs, add, s->owner, s->type, r->ttl, r->rdata,
						    r->rdlen)
				    : 0;
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* Every set's changes but the SOA's; the count, or a negative code. */
static long diff_all(uctx_t *c, changeset_t *cs)
{
	size_t changes = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->sets[i].type == DNS_TYPE_SOA && name_equal(c->sets[i].owner, c->apex))
			continue;
		int rc = uset_diff(&c->sets[i], cs, &changes);
		if (rc < 0)
			return rc;
	}
	return (long)changes;
}

/* The new SOA: the update's or the old one, its serial per 3.6 and policy. */
static int add_soas(uctx_t *c, changeset_t *cs, enum zone_serial_policy p, time_t now)
{
	const rrset_wire_t *w = zone_rrset_at(c->z, c->apex, DNS_TYPE_SOA);
	urec_t old;
	rrset_records(w, &old);
	uset_t *s = uset_get(c, c->apex, DNS_TYPE_SOA);
	if (!s)
		return SHOAL_ENOMEM;
	const urec_t *cur = &s->cur[0];
	uint8_t rdata[2 * NAME_MAXLEN + 20];
	memcpy(rdata, cur->rdata, cur->rdlen);
	uint32_t serial = soa_serial(cur->rdata, cur->rdlen);
	if (!c->soa_set || !serial_gt(serial, c->z->serial))
		serial = zone_serial_next(c->z->serial, p, now);
	size_t at = cur->rdlen - 20u; /* the serial, then four more 32-bit fields */
	wire_t wr;
	wire_init_write(&wr, rdata + at, 4);
	wire_write_u32(&wr, serial);
	int rc = changeset_add(cs, false, c->apex, DNS_TYPE_SOA, old.ttl, old.rdata, old.rdlen);
	return rc < 0 ? rc
		      : changeset_add(cs, true, c->apex, DNS_TYPE_SOA, cur->ttl, rdata, cur->rdlen);
}

/* Whether the SOA itself changed beside its serial (fields or TTL). */
static bool soa_changed(uctx_t *c)
{
	if (!c->soa_set)
		return false;
	uset_t *s = uset_get(c, c->apex, DNS_TYPE_SOA);
	return s &&
	       (s->old[0].ttl != s->cur[0].ttl ||
		rdata_cmp(s->old[0].rdata, s->old[0].rdlen, s->cur[0].rdata, s->cur[0].rdlen) != 0);
}

static int build(uctx_t *c, enum zone_serial_policy p, time_t now, changeset_t **out)
{
	for (size_t i = 0; i < c->n; i++) {
		qsort(c->sets[i].old, c->sets[i].old_n, sizeof(urec_t), urec_order);
		qsort(c->sets[i].cur, c->sets[i].cur_n, sizeof(urec_t), urec_order);
	}
	if (c->n > 1)
		qsort(c->sets, c->n, sizeof(uset_t), uset_order);
	long changes = diff_all(c, NULL);
	if (changes < 0)
		return (int)changes;
	if (changes == 0 && !soa_changed(c))
		return 0; /* nothing to do: no new version */
	changeset_t *cs = changeset_new();
	if (!cs)
		return SHOAL_ENOMEM;
	int rc = add_soas(c, cs, p, now);
	long added = rc == 0 ? diff_all(c, cs) : 0;
	if (added < 0)
		rc = (int)added;
	if (rc == 0)
		rc = changeset_seal(cs);
	if (rc < 0) {
		changeset_unref(cs);
		return rc;
	}
	*out = cs;
	return 0;
}

static void uctx_clear(uctx_t *c)
{
	for (size_t i = 0; i < c->n; i++) {
		uset_clear(&c->sets[i]);
		free(c->sets[i].old);
		free(c->sets[i].cur);
	}
	free(c->sets);
	free(c->whole);
}

int zone_update_changes(const zone_t *z, const update_msg_t *m, enum zone_serial_policy p,
			time_t now, changeset_t **out)
{
	*out = NULL;
	uctx_t c = { .z = z, .apex = znode_name(z->apex) };
	update_rr_t *rr = malloc(sizeof(*rr));
	int rc = SHOAL_ENOMEM;
	if (!rr)
		goto done;
	update_iter_t it;
	update_iter_init(&it, m, UPDATE_SECTION_UPDATE);
	rc = 0;
	while (rc == 0 && update_iter_next(&it, rr, NULL) > 0)
		rc = apply_one(&c, rr);
	if (rc == 0)
		rc = build(&c, p, now, out);
done:
	uctx_clear(&c);
	free(rr);
	return rc;
}

/* ---- serials (RFC 2136 3.6, RFC 1982) ---- */

/* The DNS serial of a UTC day: YYYYMMDD00. */
static uint32_t date_serial(time_t now)
{
	struct tm tm;
	if (!gmtime_r(&now, &tm))
		return 0;
	return (uint32_t)(tm.tm_year + 1900) * 1000000u + (uint32_t)(tm.tm_mon + 1) * 10000u +
	       (uint32_t)tm.tm_mday * 100u;
}

uint32_t zone_serial_next(uint32_t old, enum zone_serial_policy p, time_t now)
{
	uint32_t want = old;
	if (p == ZONE_SERIAL_UNIXTIME)
		want = (uint32_t)now;
	else if (p == ZONE_SERIAL_DATESERIAL)
		want = date_serial(now);
	return serial_gt(want, old) ? want : serial_add(old, 1);
}
