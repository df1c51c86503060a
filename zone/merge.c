/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The records of names after changesets: a version's, the deletions replayed, the additions. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "proto/wire.h"
#include "zone/internal.h"

const char *zone_rr_text(const uint8_t *owner, uint16_t type, char *buf, size_t cap)
{
	char name[NAME_TEXT_MAX], tb[16];
	if (name_to_text(owner, name, sizeof(name)) < 0)
		strcpy(name, "?");
	const rdata_desc_t *d = rdata_desc(type);
	if (!d)
		snprintf(tb, sizeof(tb), "TYPE%u", type);
	snprintf(buf, cap, "%s %s", name, d ? d->name : tb);
	return buf;
}

/* An error of the changes, "LABEL: ZONE: text", through m's messages. */
static int fail(zmerge_t *m, const char *fmt, const uint8_t *owner, uint16_t type)
{
	char text[NAME_TEXT_MAX + 20];
	zone_rr_text(owner, type, text, sizeof(text));
	char zone[NAME_TEXT_MAX];
	if (name_to_text(znode_name(m->base->apex), zone, sizeof(zone)) < 0)
		strcpy(zone, "?");
	char what[NAME_TEXT_MAX + 120];
	snprintf(what, sizeof(what), fmt, text);
	zone_report(m->msg, m->msg_arg, true, m->label, 0, "%s: %s", zone, what);
	return SHOAL_EZONE;
}

/* One record (type, class, TTL, RDLENGTH, RDATA) of owner to the builder. */
static int build_rec(zmerge_t *m, const uint8_t *owner, const uint8_t *rec)
{
	int err = zbuild_add(m->b, m->label, 0, NULL, owner, wire_get_u16(rec), DNS_CLASS_IN,
			     wire_get_u32(rec + 4), rec + 10, wire_get_u16(rec + 8));
	return err == SHOAL_EZONE ? 0 : err; /* reported; the builder fails at its end */
}

/*
 * One record's operations, in the order they happen, on what the zone has
 * of it (the record `have`, or NULL): false when a deletion meets nothing.
 * *have ends as the record to keep, or NULL.
 */
static bool replay(const xfr_op_t *ops, size_t n, const uint8_t **have)
{
	for (size_t i = 0; i < n; i++) {
		if (!xfr_op_is_add(&ops[i]) && !*have)
			return false;
		*have = xfr_op_is_add(&ops[i]) ? ops[i].rr : NULL;
	}
	return true;
}

/* The end of the ops of the record at i: the next record's first. */
static size_t op_group(const xfr_ops_t *ops, size_t i)
{
	size_t j = i + 1;
	const xfr_op_t *a = &ops->ops[i];
	while (j < ops->count && xfr_op_cmp(a->key, a->key_len, a->rr, &ops->ops[j]) == 0)
		j++;
	return j;
}

static bool add_later(zmerge_t *m, const uint8_t *rec)
{
	if (!zone_grow((void **)&m->added, &m->added_cap, m->added_count + 1, sizeof(rec)))
		return false;
	m->added[m->added_count++] = rec;
	return true;
}

/* A record only the changes have, ops [i, j): added, or an error when deleted first. */
static int new_record(zmerge_t *m, size_t i, size_t j)
{
	const uint8_t *have = NULL;
	const xfr_op_t *op = &m->ops->ops[i];
	if (!replay(op, j - i, &have))
		return fail(m, "a change deletes %s, a record the zone does not have", op->owner,
			    wire_get_u16(op->rr));
	return have && !add_later(m, have) ? SHOAL_ENOMEM : 0;
}

/* The records of old's RRset `set` merged with the ops [*k, end) of its name. */
static int merge_set(zmerge_t *m, const uint8_t *owner, const uint8_t *key, size_t klen,
		     const rrset_wire_t *set, size_t *k, size_t end)
{
	const xfr_ops_t *ops = m->ops;
	int err = 0;
	const uint8_t *rec = set->data, *stop = set->data + set->data_len;
	for (; err == 0 && rec < stop; rec += 10 + wire_get_u16(rec + 8)) {
		int c = -1;
		while (err == 0 && *k < end &&
		       (c = xfr_op_cmp(key, klen, rec, &ops->ops[*k])) > 0) {
			size_t g = op_group(ops, *k);
			err = new_record(m, *k, g);
			*k = g;
		}
		if (err == 0 && *k < end && c == 0) {
			size_t g = op_group(ops, *k);
			const uint8_t *have = rec;
			replay(ops->ops + *k, g - *k, &have); /* the record is there: never fails */
			if (have == rec)
				err = build_rec(m, owner, rec);
			else if (have && !add_later(m, have))
				err = SHOAL_ENOMEM;
			*k = g;
		} else if (err == 0) {
			err = build_rec(m, owner, rec);
		}
	}
	return err;
}

int zmerge_name(zmerge_t *m, const uint8_t *owner, const znode_t *old, size_t *i)
{
	const xfr_ops_t *ops = m->ops;
	uint8_t key[ZONE_KEY_MAX];
	size_t klen = zone_name_key(owner, key), k = *i, end = k;
	while (end < ops->count && ops->ops[end].key_len == klen &&
	       memcmp(ops->ops[end].key, key, klen) == 0)
		end++;
	m->added_count = 0;
	int err = 0;
	for (uint16_t s = 0; old && err == 0 && s < old->rrset_count; s++) {
		const rrset_wire_t *set = &znode_rrsets(old)[s].set;
		if (old != m->base->apex || set->type != DNS_TYPE_SOA)
			err = merge_set(m, owner, key, klen, set, &k, end);
	}
	while (err == 0 && k < end) {
		size_t g = op_group(ops, k);
		err = new_record(m, k, g);
		k = g;
	}
	if (err == 0 && name_equal(owner, znode_name(m->base->apex)) && !add_later(m, m->soa))
		err = SHOAL_ENOMEM;
	for (size_t r = 0; err == 0 && r < m->added_count; r++)
		err = build_rec(m, owner, m->added[r]);
	*i = end;
	return err;
}

int zmerge_inside(zmerge_t *m, size_t i)
{
	const xfr_op_t *op = &m->ops->ops[i];
	if (name_is_subdomain(op->owner, znode_name(m->base->apex)))
		return 0;
	return fail(m, "%s: outside the zone", op->owner, wire_get_u16(op->rr));
}

static int key_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);
	return c ? c : (la > lb) - (la < lb);
}

/* The names only the changes have from op *i on, before key (NULL: all of them). */
static int merge_new_names(zmerge_t *m, size_t *i, const uint8_t *key, size_t klen)
{
	const xfr_ops_t *ops = m->ops;
	int err = 0;
	while (err == 0 && *i < ops->count &&
	       (!key || key_cmp(ops->ops[*i].key, ops->ops[*i].key_len, key, klen) < 0))
		if ((err = zmerge_inside(m, *i)) == 0)
			err = zmerge_name(m, ops->ops[*i].owner, NULL, i);
	return err;
}

int zmerge_whole(zmerge_t *m)
{
	zone_iter_t it;
	size_t i = 0;
	int err = 0;
	uint8_t key[ZONE_KEY_MAX];
	for (const znode_t *n = zone_first(m->base, &it); err == 0 && n; n = zone_next(&it)) {
		size_t klen = zone_name_key(znode_name(n), key);
		err = merge_new_names(m, &i, key, klen);
		if (err == 0)
			err = zmerge_name(m, znode_name(n), n, &i);
	}
	return err == 0 ? merge_new_names(m, &i, NULL, 0) : err;
}

void zmerge_clear(zmerge_t *m)
{
	free(m->added);
	m->added = NULL;
	m->added_count = m->added_cap = 0;
}
