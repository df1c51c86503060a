/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Changesets: building them record by record, the diff of two zone versions, condensing. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/wire.h"
#include "zone/changeset.h"
#include "zone/internal.h"

#define CS_NAMES_MAX 8          /* compressible names in one RDATA (SOA has 2) */
#define CS_RUN_MAX   UINT16_MAX /* octets of one run: its name offsets are 16 bits */
#define RUN_HEAD     6          /* a run's records, octets of wire, names: 16 bits each */
#define NO_RUN       SIZE_MAX

/*
 * One side while it grows: its runs as xfr_part_t reads them, but the
 * last run's name offsets, kept apart until a run follows (they go after
 * its records, whose count grows) or the side is sealed.
 */
typedef struct side {
	uint8_t *blob;
	size_t len, cap;
	size_t open; /* where the last run begins; NO_RUN: its names are in blob */
	uint16_t *names;
	size_t name_len, name_cap;
	size_t run_count, rr_count;
} side_t;

struct cs_store {
	side_t side[2]; /* deletions, additions */
	bool sealed;
};

/* 16 bits of a run's head, in host order (the head is 2-aligned: see xfr_part_t). */
static uint16_t head_get(const uint8_t *head, int i)
{
	uint16_t v;
	memcpy(&v, head + 2 * i, sizeof(v));
	return v;
}

static void head_set(uint8_t *head, int i, size_t v)
{
	uint16_t w = (uint16_t)v;
	memcpy(head + 2 * i, &w, sizeof(w));
}

/* Octets up to the next 2-aligned offset. */
static size_t align2(size_t at)
{
	return (at + 1) & ~(size_t)1;
}

bool xfr_part_next(const xfr_part_t *p, size_t *at, xfr_run_t *run)
{
	if (*at >= p->len)
		return false;
	const uint8_t *head = p->runs + *at, *owner = head + RUN_HEAD;
	uint16_t rr_count = head_get(head, 0), data_len = head_get(head, 1);
	uint16_t name_count = head_get(head, 2);
	const uint8_t *data = owner + name_length(owner);
	size_t names = align2((size_t)(data - p->runs) + data_len);
	*run = (xfr_run_t){
		.owner = owner,
		.set = { .type = wire_get_u16(data),
			 .rr_count = rr_count,
			 .data_len = data_len,
			 .data = data,
			 .names = name_count ? (const uint16_t *)(const void *)(p->runs + names)
					     : NULL,
			 .name_count = name_count },
	};
	*at = names + (size_t)name_count * sizeof(uint16_t);
	return true;
}

/* The first run of p: its SOA. */
static xfr_run_t soa_run(const xfr_part_t *p)
{
	xfr_run_t run = { 0 };
	size_t at = 0;
	bool got = xfr_part_next(p, &at, &run);
	assert(got); /* a sealed side has its SOA */
	(void)got;
	return run;
}

const uint8_t *xfr_part_soa(const xfr_part_t *p)
{
	return soa_run(p).set.data;
}

changeset_t *changeset_new(void)
{
	changeset_t *cs = calloc(1, sizeof(*cs));
	if (cs && !(cs->store = calloc(1, sizeof(*cs->store)))) {
		free(cs);
		return NULL;
	}
	if (cs) {
		cs->refs = 1;
		cs->store->side[0].open = cs->store->side[1].open = NO_RUN;
	}
	return cs;
}

static void changeset_free(changeset_t *cs)
{
	for (int i = 0; cs->store && i < 2; i++) {
		free(cs->store->side[i].blob);
		free(cs->store->side[i].names);
	}
	free(cs->store);
	free(cs);
}

const changeset_t *changeset_ref(const changeset_t *cs)
{
	unsigned was = __atomic_fetch_add(&((changeset_t *)cs)->refs, 1, __ATOMIC_RELAXED);
	assert(was > 0); /* the caller holds one */
	(void)was;
	return cs;
}

void changeset_unref(const changeset_t *cs)
{
	changeset_t *m = (changeset_t *)cs;
	if (!m)
		return;
	unsigned was = __atomic_fetch_sub(&m->refs, 1, __ATOMIC_ACQ_REL);
	assert(was > 0); /* one more unref than refs: freed already */
	if (was == 1)
		changeset_free(m);
}

/* Can a record of `size` octets join the side's last run? */
static bool joins_last(const side_t *s, const uint8_t *owner, uint16_t type, size_t size)
{
	if (s->run_count < 2 || s->open == NO_RUN) /* the first run is the SOA's alone */
		return false;
	const uint8_t *head = s->blob + s->open, *run_owner = head + RUN_HEAD;
	const uint8_t *data = run_owner + name_length(run_owner);
	return wire_get_u16(data) == type && head_get(head, 0) < UINT16_MAX &&
	       head_get(head, 1) + size <= CS_RUN_MAX && name_equal(run_owner, owner);
}

/* The last run's name offsets go after its records, 2-aligned: no record joins it now. */
static bool close_run(side_t *s)
{
	if (s->open == NO_RUN)
		return true;
	size_t at = align2(s->len), n = s->name_len * sizeof(uint16_t);
	if (!zone_grow((void **)&s->blob, &s->cap, at + n, 1))
		return false;
	memset(s->blob + s->len, 0, at - s->len);
	memcpy(s->blob + at, s->names, n);
	s->len = at + n;
	s->name_len = 0;
	s->open = NO_RUN;
	return true;
}

/* A new run for owner at the end of the side (room made); it is the open one. */
static void open_run(side_t *s, const uint8_t *owner, size_t olen)
{
	s->open = s->len;
	memset(s->blob + s->len, 0, RUN_HEAD);
	memcpy(s->blob + s->len + RUN_HEAD, owner, olen);
	name_lower(s->blob + s->len + RUN_HEAD);
	s->len += RUN_HEAD + olen;
	s->run_count++;
}

int changeset_add(changeset_t *cs, bool add, const uint8_t *owner, uint16_t type, uint32_t ttl,
		  const uint8_t *rdata, uint16_t rdlen)
{
	if (cs->store->sealed)
		return SHOAL_EINVAL;
	side_t *s = &cs->store->side[add];
	if ((s->run_count == 0) != (type == DNS_TYPE_SOA))
		return SHOAL_EINVAL; /* the SOA first, and only there */
	uint16_t off[CS_NAMES_MAX];
	int names = rrtype_rdata_names(type, rdata, rdlen, off, CS_NAMES_MAX);
	if (names < 0)
		return SHOAL_EMALFORMED;
	size_t size = 10 + (size_t)rdlen, olen = name_length(owner);
	bool join = joins_last(s, owner, type, size);
	if ((!join && !close_run(s)) ||
	    !zone_grow((void **)&s->blob, &s->cap, s->len + (join ? 0 : RUN_HEAD + olen) + size,
		       1) ||
	    !zone_grow((void **)&s->names, &s->name_cap, s->name_len + (size_t)names,
		       sizeof(uint16_t)))
		return SHOAL_ENOMEM;
	if (!join)
		open_run(s, owner, olen);
	uint8_t *head = s->blob + s->open;
	size_t data_len = head_get(head, 1);
	wire_t w;
	wire_init_write(&w, s->blob + s->len, size);
	wire_write_u16(&w, type);
	wire_write_u16(&w, DNS_CLASS_IN);
	wire_write_u32(&w, ttl);
	wire_write_u16(&w, rdlen);
	wire_write_bytes(&w, rdata, rdlen);
	for (int k = 0; k < names; k++)
		s->names[s->name_len++] = (uint16_t)(data_len + 10 + off[k]);
	head_set(head, 0, head_get(head, 0) + 1u);
	head_set(head, 1, data_len + size);
	head_set(head, 2, head_get(head, 2) + (size_t)names);
	s->len += size;
	s->rr_count++;
	return 0;
}

/* The serial of the SOA record at rec (its RDATA is checked: at least 22 octets). */
static uint32_t soa_serial(const uint8_t *rec)
{
	uint16_t rdlen = wire_get_u16(rec + 8);
	return wire_get_u32(rec + 10 + rdlen - 20);
}

/* *p down to len elements of elem octets (a failure keeps it as it was). Before pointers into it.
 */
static void shrink(void **p, size_t *cap, size_t len, size_t elem)
{
	void *q = len && len < *cap ? realloc(*p, len * elem) : NULL;
	if (q) {
		*p = q;
		*cap = len;
	}
}

int changeset_seal(changeset_t *cs)
{
	struct cs_store *st = cs->store;
	if (st->sealed || !st->side[0].run_count || !st->side[1].run_count)
		return SHOAL_EINVAL;
	size_t octets = sizeof(*cs) + sizeof(*st);
	for (int i = 0; i < 2; i++) {
		side_t *s = &st->side[i];
		if (!close_run(s))
			return SHOAL_ENOMEM;
		/* the room growth left goes: a journal holds (and counts) the rest for long */
		shrink((void **)&s->blob, &s->cap, s->len, 1);
		free(s->names);
		s->names = NULL;
		s->name_cap = 0;
		octets += s->cap;
		xfr_part_t *part = i ? &cs->add : &cs->del;
		*part = (xfr_part_t){ s->blob, s->len, s->run_count, s->rr_count };
	}
	cs->from = soa_serial(xfr_part_soa(&cs->del));
	cs->to = soa_serial(xfr_part_soa(&cs->add));
	cs->octets = octets;
	st->sealed = true;
	return 0;
}

void xfr_changes_clear(xfr_changes_t *c)
{
	for (size_t i = 0; i < c->count; i++)
		changeset_unref(c->sets[i]);
	free(c->sets);
	c->sets = NULL;
	c->count = 0;
}

/* ---- the diff of two versions ---- */

/* Add the record at rec (type, class, TTL, RDLENGTH, RDATA) with owner. */
static int add_rec(changeset_t *cs, bool add, const uint8_t *owner, const uint8_t *rec)
{
	return changeset_add(cs, add, owner, wire_get_u16(rec), wire_get_u32(rec + 4), rec + 10,
			     wire_get_u16(rec + 8));
}

/* The records of set (zone data: built by zbuild, so well formed) one by one. */
#define FOR_EACH_REC(set, rec)                                                            \
	for (const uint8_t *rec = (set)->data; rec + 10 <= (set)->data + (set)->data_len; \
	     rec += 10 + wire_get_u16(rec + 8))

/* Every record of n to one side (the apex's SOA stays out: the SOAs go first). */
static int add_node(changeset_t *cs, bool add, const zone_t *z, const znode_t *n)
{
	for (uint16_t i = 0; i < n->rrset_count; i++) {
		const rrset_wire_t *set = &znode_rrsets(n)[i].set;
		if (n == z->apex && set->type == DNS_TYPE_SOA)
			continue;
		FOR_EACH_REC(set, rec)
		{
			int err = add_rec(cs, add, znode_name(n), rec);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

/* Records in RDATA order, as zbuild sorts them (RFC 4034 6.3). */
static int rdata_cmp(const uint8_t *a, const uint8_t *b)
{
	uint16_t la = wire_get_u16(a + 8), lb = wire_get_u16(b + 8);
	int c = memcmp(a + 10, b + 10, la < lb ? la : lb);
	return c ? c : (la > lb) - (la < lb);
}

/* One RRset in both versions: record by record. */
static int diff_set(changeset_t *cs, const uint8_t *owner, const rrset_wire_t *a,
		    const rrset_wire_t *b)
{
	const uint8_t *pa = a->data, *ea = a->data + a->data_len;
	const uint8_t *pb = b->data, *eb = b->data + b->data_len;
	int err = 0;
	while (err == 0 && (pa + 10 <= ea || pb + 10 <= eb)) {
		int c = pa + 10 > ea ? 1 : pb + 10 > eb ? -1 : rdata_cmp(pa, pb);
		if (c == 0 && wire_get_u32(pa + 4) == wire_get_u32(pb + 4)) {
			/* the same record */
		} else {
			if (c <= 0)
				err = add_rec(cs, false, owner, pa);
			if (c >= 0 && err == 0)
				err = add_rec(cs, true, owner, pb);
		}
		if (c <= 0)
			pa += 10 + wire_get_u16(pa + 8);
		if (c >= 0)
			pb += 10 + wire_get_u16(pb + 8);
	}
	return err;
}

/* One name in both versions: RRsets by type, both in ascending order. */
static int diff_node(changeset_t *cs, const zone_t *zo, const znode_t *a, const znode_t *b)
{
	uint16_t i = 0, j = 0;
	int err = 0;
	while (err == 0 && (i < a->rrset_count || j < b->rrset_count)) {
		const rrset_wire_t *sa = i < a->rrset_count ? &znode_rrsets(a)[i].set : NULL;
		const rrset_wire_t *sb = j < b->rrset_count ? &znode_rrsets(b)[j].set : NULL;
		int c = !sa ? 1 : !sb ? -1 : (sa->type > sb->type) - (sa->type < sb->type);
		if (c == 0 && a == zo->apex && sa->type == DNS_TYPE_SOA) {
			/* the SOAs head the two sides */
		} else if (c == 0) {
			err = diff_set(cs, znode_name(a), sa, sb);
		} else {
			const rrset_wire_t *one = c < 0 ? sa : sb;
			FOR_EACH_REC(one, rec)
			{
				if ((err = add_rec(cs, c > 0, c < 0 ? znode_name(a) : znode_name(b),
						   rec)) < 0)
					break;
			}
		}
		i += c <= 0;
		j += c >= 0;
	}
	return err;
}

static int key_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);
	return c ? c : (la > lb) - (la < lb);
}

/* The octets a changeset being built holds so far (its arrays' used parts). */
static size_t held(const changeset_t *cs)
{
	size_t n = sizeof(*cs) + sizeof(*cs->store);
	for (int i = 0; i < 2; i++) {
		const side_t *s = &cs->store->side[i];
		n += s->len + s->name_len * sizeof(uint16_t);
	}
	return n;
}

int changeset_diff(const zone_t *old, const zone_t *new, size_t max_octets, changeset_t **out)
{
	return changeset_diff_watch(old, new, max_octets, NULL, out);
}

int changeset_diff_watch(const zone_t *old, const zone_t *new, size_t max_octets,
			 const bool *cancel, changeset_t **out)
{
	changeset_t *cs = changeset_new();
	if (!cs)
		return SHOAL_ENOMEM;
	const uint8_t *soa_old = znode_rrset(old->apex, DNS_TYPE_SOA)->set.data;
	const uint8_t *soa_new = znode_rrset(new->apex, DNS_TYPE_SOA)->set.data;
	/* the SOAs first (the node walk below skips them) */
	int err = add_rec(cs, false, znode_name(old->apex), soa_old);
	if (err == 0)
		err = add_rec(cs, true, znode_name(new->apex), soa_new);
	uint8_t ka[ZONE_KEY_MAX], kb[ZONE_KEY_MAX];
	size_t la = 0, lb = 0;
	zone_iter_t ia, ib;
	const znode_t *a = zone_first(old, &ia), *b = zone_first(new, &ib);
	bool have_a = false, have_b = false;
	for (size_t step = 1; err == 0 && (a || b); step++) {
		if (zone_stop_at(cancel, step)) {
			err = SHOAL_ETIMEOUT;
			break;
		}
		if (a && !have_a) {
			la = zone_name_key(znode_name(a), ka);
			have_a = true;
		}
		if (b && !have_b) {
			lb = zone_name_key(znode_name(b), kb);
			have_b = true;
		}
		int c = !a ? 1 : !b ? -1 : key_cmp(ka, la, kb, lb);
		if (c < 0)
			err = add_node(cs, false, old, a);
		else if (c > 0)
			err = add_node(cs, true, new, b);
		else
			err = diff_node(cs, old, a, b);
		if (c <= 0) {
			a = zone_next(&ia);
			have_a = false;
		}
		if (c >= 0) {
			b = zone_next(&ib);
			have_b = false;
		}
		if (err == 0 && max_octets && held(cs) > max_octets)
			err = SHOAL_ESPACE;
	}
	if (err == 0)
		err = changeset_seal(cs);
	if (err < 0) {
		/* zone data always fits its type: only memory, the bound or a cancel end it */
		changeset_unref(cs);
		return err == SHOAL_ESPACE || err == SHOAL_ETIMEOUT ? err : SHOAL_ENOMEM;
	}
	*out = cs;
	return 0;
}

/* ---- operations over several changesets ---- */

int xfr_op_cmp(const uint8_t *key, size_t key_len, const uint8_t *rr, const xfr_op_t *op)
{
	int c = key_cmp(key, key_len, op->key, op->key_len);
	if (c)
		return c;
	uint16_t ta = wire_get_u16(rr), tb = wire_get_u16(op->rr);
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return rdata_cmp(rr, op->rr);
}

/* qsort_r's order of the indexes of two ops of arg (the ops): one record's by seq. */
static int op_sort(const void *pa, const void *pb, void *arg)
{
	const xfr_op_t *ops = arg;
	const xfr_op_t *a = &ops[*(const uint32_t *)pa], *b = &ops[*(const uint32_t *)pb];
	int c = xfr_op_cmp(a->key, a->key_len, a->rr, b);
	return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

/*
 * Sort ops[0..n) by op_sort through their indexes, then move each op to
 * its place along the permutation's cycles: glibc's qsort is a merge sort
 * into a copy of what it sorts, as big as the ops (7 MB for an IXFR of
 * 100,000 changes, at its peak); a copy of 4-octet indexes is an eighth
 * of it. 0 or SHOAL_ENOMEM.
 */
static int ops_sort(xfr_op_t *ops, size_t n)
{
	if (n > UINT32_MAX)
		return SHOAL_ENOMEM;
	uint32_t *at = malloc((n ? n : 1) * sizeof(*at));
	if (!at)
		return SHOAL_ENOMEM;
	for (size_t i = 0; i < n; i++)
		at[i] = (uint32_t)i;
	qsort_r(at, n, sizeof(*at), op_sort, ops);
	/* place i gets ops[at[i]]; a place filled is marked at[i] == i */
	for (size_t i = 0; i < n; i++) {
		if (at[i] == i)
			continue;
		xfr_op_t first = ops[i];
		size_t j = i;
		while (at[j] != i) {
			size_t from = at[j];
			ops[j] = ops[from];
			at[j] = (uint32_t)j;
			j = from;
		}
		ops[j] = first;
		at[j] = (uint32_t)j;
	}
	free(at);
	return 0;
}

/* Octets of the owner keys of part's runs but the SOA's, each as zone_name_key writes it. */
static size_t part_keys(const xfr_part_t *part)
{
	uint8_t key[ZONE_KEY_MAX];
	size_t n = 0, at = 0;
	xfr_run_t run;
	xfr_part_next(part, &at, &run); /* the SOA */
	while (xfr_part_next(part, &at, &run))
		n += zone_name_key(run.owner, key);
	return n;
}

/* The ops of part's records but the SOA, seq as in xfr_op_t, their owner keys from *key on. */
static void part_ops(const xfr_part_t *part, uint32_t seq, xfr_ops_t *out, uint8_t **key)
{
	size_t at = 0;
	xfr_run_t run;
	xfr_part_next(part, &at, &run); /* the SOA */
	while (xfr_part_next(part, &at, &run)) {
		size_t klen = zone_name_key(run.owner, *key);
		FOR_EACH_REC(&run.set, rec)
		{
			out->ops[out->count++] = (xfr_op_t){ .owner = run.owner,
							     .rr = rec,
							     .key = *key,
							     .key_len = (uint16_t)klen,
							     .seq = seq };
		}
		*key += klen;
	}
}

int xfr_ops_collect(const changeset_t *const *sets, size_t n, xfr_ops_t *out)
{
	memset(out, 0, sizeof(*out));
	size_t count = 0, keys = 0;
	for (size_t k = 0; k < n; k++) {
		count += sets[k]->del.rr_count - 1 + sets[k]->add.rr_count - 1;
		keys += part_keys(&sets[k]->del) + part_keys(&sets[k]->add);
	}
	/* keys at their length: room for the longest name per run would be 637 octets each */
	out->ops = malloc((count ? count : 1) * sizeof(xfr_op_t));
	out->keys = malloc(keys ? keys : 1);
	if (!out->ops || !out->keys) {
		xfr_ops_clear(out);
		return SHOAL_ENOMEM;
	}
	out->octets = (count ? count : 1) * sizeof(xfr_op_t) + (keys ? keys : 1);
	uint8_t *key = out->keys;
	for (size_t k = 0; k < n; k++) {
		part_ops(&sets[k]->del, (uint32_t)(2 * k), out, &key);
		part_ops(&sets[k]->add, (uint32_t)(2 * k + 1), out, &key);
	}
	/* one record's operations stay in the order they happen (seq breaks ties) */
	if (ops_sort(out->ops, out->count) < 0) {
		xfr_ops_clear(out);
		return SHOAL_ENOMEM;
	}
	return 0;
}

void xfr_ops_clear(xfr_ops_t *ops)
{
	free(ops->ops);
	free(ops->keys);
	memset(ops, 0, sizeof(*ops));
}

int changeset_condense(const changeset_t *const *sets, size_t n, changeset_t **out)
{
	if (n == 0)
		return SHOAL_EINVAL;
	for (size_t k = 1; k < n; k++)
		if (sets[k]->from != sets[k - 1]->to)
			return SHOAL_EINVAL;
	xfr_ops_t ops;
	if (xfr_ops_collect(sets, n, &ops) < 0)
		return SHOAL_ENOMEM;
	changeset_t *cs = changeset_new();
	int err = cs ? 0 : SHOAL_ENOMEM;
	xfr_run_t from = soa_run(&sets[0]->del), to = soa_run(&sets[n - 1]->add);
	if (err == 0)
		err = add_rec(cs, false, from.owner, from.set.data);
	if (err == 0)
		err = add_rec(cs, true, to.owner, to.set.data);
	for (size_t i = 0; err == 0 && i < ops.count;) {
		/* one record's history: was it there before the first, is it after the last? */
		const xfr_op_t *first = &ops.ops[i];
		size_t j = i + 1;
		while (j < ops.count &&
		       xfr_op_cmp(first->key, first->key_len, first->rr, &ops.ops[j]) == 0)
			j++;
		const xfr_op_t *last = &ops.ops[j - 1];
		bool before = !xfr_op_is_add(first), after = xfr_op_is_add(last);
		bool same_ttl = wire_get_u32(first->rr + 4) == wire_get_u32(last->rr + 4);
		if (before && !(after && same_ttl))
			err = add_rec(cs, false, first->owner, first->rr);
		if (after && !(before && same_ttl) && err == 0)
			err = add_rec(cs, true, last->owner, last->rr);
		i = j;
	}
	xfr_ops_clear(&ops);
	if (err == 0)
		err = changeset_seal(cs);
	if (err < 0) {
		changeset_unref(cs);
		return err;
	}
	*out = cs;
	return 0;
}
