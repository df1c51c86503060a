/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading a catalog zone (RFC 9432): the version checked, members and properties, what was skipped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "zone/catalog.h"
#include "zone/internal.h"
#include "zone/zone.h"

#define CATALOG_SKIP_TEXT(name, text) text,
static const char *const skip_texts[] = { CATALOG_SKIPS(CATALOG_SKIP_TEXT) };
#undef CATALOG_SKIP_TEXT

const char *catalog_skip_text(enum catalog_skip why)
{
	return (unsigned)why < CATALOG_SKIP_COUNT ? skip_texts[why] : "?";
}

/* The RDATA of the first record of s and its length (records: type, class, TTL, RDLENGTH). */
static const uint8_t *first_rdata(const rrset_wire_t *s, uint16_t *len)
{
	*len = (uint16_t)(s->data[8] << 8 | s->data[9]);
	return s->data + 10;
}

/* The records of `type` at n, or NULL. */
static const rrset_wire_t *rrset_at(const znode_t *n, uint16_t type)
{
	const zrrset_t *r = znode_rrset(n, type);
	return r ? &r->set : NULL;
}

/*
 * RFC 4.2.1: version.CATZ is one TXT RR, and a consumer reads only the
 * version it knows. Returns 0, or an error with err set.
 */
static int version_check(const zone_t *z, char *err, size_t errlen)
{
	const uint8_t *apex = znode_name(z->apex);
	uint8_t name[NAME_MAXLEN + 8] = "\x07version";
	size_t len = name_length(apex);
	if (len + 8 > NAME_MAXLEN) {
		snprintf(err, errlen, "the catalog's name is too long for a version property");
		return SHOAL_EZONE;
	}
	memcpy(name + 8, apex, len);
	const znode_t *n = zone_lookup(z, name);
	const rrset_wire_t *txt = n ? rrset_at(n, DNS_TYPE_TXT) : NULL;
	if (!txt) {
		snprintf(err, errlen, "no version property (version TXT \"2\", RFC 9432 4.2.1)");
		return SHOAL_EZONE;
	}
	uint16_t rdlen;
	const uint8_t *rd = first_rdata(txt, &rdlen);
	if (txt->rr_count != 1 || rdlen == 0 || rd[0] + 1 != rdlen) {
		snprintf(err, errlen,
			 "the version property is not one TXT record of one string (RFC 9432 "
			 "4.2.1)");
		return SHOAL_EZONE;
	}
	if (rd[0] != 1 || rd[1] != CATALOG_VERSION[0]) {
		char text[64];
		size_t k = 0;
		for (size_t i = 1; i < rdlen && k + 1 < sizeof(text); i++)
			text[k++] = rd[i] >= 0x20 && rd[i] < 0x7f ? (char)rd[i] : '?';
		text[k] = '\0';
		snprintf(err, errlen,
			 "version \"%s\" is not " CATALOG_VERSION
			 ", the one this server reads (RFC 9432 4.2.1)",
			 text);
		return SHOAL_EUNSUPPORTED;
	}
	return 0;
}

/* The walk over a catalog's names. */
typedef struct reader {
	catalog_t *out;
	const uint8_t *apex;
	unsigned apex_labels;
	size_t member_cap, skipped_cap;
	const uint8_t *node; /* the last member node seen, or NULL */
	long member;         /* its index in out->members, or -1 (skipped, or no PTR) */
	bool member_skipped; /* -1 as it was skipped (and said so), not for want of a PTR */
} reader_t;

static int skip(reader_t *r, const uint8_t *owner, enum catalog_skip why)
{
	catalog_t *c = r->out;
	if (!zone_grow((void **)&c->skipped, &r->skipped_cap, c->skipped_count + 1,
		       sizeof(*c->skipped)))
		return SHOAL_ENOMEM;
	c->skipped[c->skipped_count++] = (catalog_skipped_t){ .owner = owner, .why = why };
	return 0;
}

/* name without its first k labels. */
static const uint8_t *labels_skip(const uint8_t *name, unsigned k)
{
	while (k-- > 0 && name[0])
		name += name[0] + 1;
	return name;
}

/* <unique-N>.zones.CATZ (RFC 9432 4.1): a member when it has one PTR. */
static int read_member(reader_t *r, const uint8_t *name, const rrset_wire_t *ptr)
{
	r->node = name;
	r->member = -1;
	r->member_skipped = ptr != NULL; /* until it is read */
	if (!ptr)
		return 0;
	if (ptr->rr_count > 1)
		return skip(r, name, CATALOG_SKIP_PTRS);
	uint16_t len;
	const uint8_t *target = first_rdata(ptr, &len);
	if (name_equal(target, r->apex))
		return skip(r, name, CATALOG_SKIP_SELF);
	catalog_t *c = r->out;
	if (!zone_grow((void **)&c->members, &r->member_cap, c->member_count + 1,
		       sizeof(*c->members)))
		return SHOAL_ENOMEM;
	r->member = (long)c->member_count;
	c->members[c->member_count++] = (catalog_member_t){ .apex = target, .node = name };
	return 0;
}

/* A property of a member, <property>.<unique-N>.zones.CATZ: coo (4.3.1), group (4.3.2). */
static int read_property(reader_t *r, const znode_t *n, const rrset_wire_t *ptr)
{
	const uint8_t *name = znode_name(n);
	bool coo = !memcmp(name,
			   "\x03"
			   "coo",
			   4);
	const rrset_wire_t *txt = !memcmp(name, "\x05group", 6) ? rrset_at(n, DNS_TYPE_TXT) : NULL;
	if (ptr && !coo)
		return skip(r, name, CATALOG_SKIP_DEEP);
	if (!(coo && ptr) && !txt)
		return 0; /* another property (RFC 9432 4.4: custom ones are ignored) */
	bool mine = r->node && name_equal(name_parent(name), r->node);
	if (mine && r->member < 0 && r->member_skipped)
		return 0; /* its member was skipped, and said so */
	if (!mine || r->member < 0)
		return skip(r, name, CATALOG_SKIP_ORPHAN);
	catalog_member_t *m = &r->out->members[r->member];
	uint16_t len;
	if (coo) {
		if (ptr->rr_count > 1)
			return skip(r, name, CATALOG_SKIP_COO);
		m->coo = first_rdata(ptr, &len);
		return 0;
	}
	m->group = first_rdata(txt, &len);
	/* one group a member: its template is chosen by it */
	return txt->rr_count > 1 ? skip(r, name, CATALOG_SKIP_GROUP) : 0;
}

/* One name of the catalog, in canonical order: a member node comes before its properties. */
static int read_node(reader_t *r, const znode_t *n)
{
	const uint8_t *name = znode_name(n);
	const rrset_wire_t *ptr = rrset_at(n, DNS_TYPE_PTR);
	unsigned depth = n->labels - r->apex_labels; /* 0: the apex */
	bool under_zones = depth >= 2 && !memcmp(labels_skip(name, depth - 1), "\x05zones", 6);
	if (!under_zones)
		return ptr ? skip(r, name, CATALOG_SKIP_OUTSIDE) : 0;
	if (depth == 2)
		return read_member(r, name, ptr);
	if (depth == 3)
		return read_property(r, n, ptr);
	return ptr ? skip(r, name, CATALOG_SKIP_DEEP) : 0;
}

/* Members by apex, then by member node: the first of a name's nodes is the one kept. */
static int member_order(const void *a, const void *b)
{
	const catalog_member_t *x = a, *y = b;
	int c = name_compare(x->apex, y->apex);
	return c ? c : name_compare(x->node, y->node);
}

/* Sort the members by apex; one listed twice keeps its first unique id (RFC 9432 4.1). */
static int members_sort(reader_t *r)
{
	catalog_t *c = r->out;
	if (c->member_count > 1)
		qsort(c->members, c->member_count, sizeof(*c->members), member_order);
	size_t kept = 0;
	for (size_t i = 0; i < c->member_count; i++) {
		if (kept && name_equal(c->members[i].apex, c->members[kept - 1].apex)) {
			if (skip(r, c->members[i].node, CATALOG_SKIP_TWICE) < 0)
				return SHOAL_ENOMEM;
			continue;
		}
		c->members[kept++] = c->members[i];
	}
	c->member_count = kept;
	return 0;
}

int catalog_read(const zone_t *z, catalog_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int rc = version_check(z, err, errlen);
	if (rc < 0)
		return rc;
	reader_t r = { .out = out,
		       .apex = znode_name(z->apex),
		       .apex_labels = z->apex->labels,
		       .member = -1 };
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); rc == 0 && n; n = zone_next(&it))
		rc = read_node(&r, n);
	if (rc == 0)
		rc = members_sort(&r);
	if (rc < 0) {
		catalog_clear(out);
		snprintf(err, errlen, "%s", shoal_strerror(rc));
		return rc;
	}
	out->version = zone_ref(z);
	return 0;
}

void catalog_clear(catalog_t *c)
{
	free(c->members);
	free(c->skipped);
	zone_unref(c->version);
	memset(c, 0, sizeof(*c));
}

const catalog_member_t *catalog_find(const catalog_t *c, const uint8_t *apex)
{
	size_t lo = 0, hi = c->member_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = name_compare(c->members[mid].apex, apex);
		if (cmp == 0)
			return &c->members[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool catalog_same_id(const catalog_member_t *a, const catalog_member_t *b)
{
	/* member nodes are lowercase: the label's octets compare as they are */
	return a->node[0] == b->node[0] && !memcmp(a->node + 1, b->node + 1, a->node[0]);
}

bool catalog_same_group(const uint8_t *a, const uint8_t *b)
{
	return a == b || (a && b && a[0] == b[0] && !memcmp(a + 1, b + 1, a[0]));
}
