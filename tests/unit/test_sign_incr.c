/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/sign_incr.c: random changes signed alone equal a full signing, and verify. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/wire.h"
#include "tests/unit/sign_test.h"
#include "unit.h"
#include "zone/apply.h"
#include "zone/internal.h"
#include "zone/load.h"
#include "zone/sign_incr.h"
#include "zone/sign_zone.h"
#include "zone/write.h"

static char tmpdir[] = "/tmp/shoal-test-sign-incr.XXXXXX";
static const uint8_t APEX[] = "\7example\3com";

/*
 * Names of every kind the chain treats apart: data, empty non-terminals
 * (b.eN), a wildcard, insecure delegations with glue and secure ones.
 */
static const char ZONE[] = "$ORIGIN example.com.\n$TTL 3600\n"
			   "@ SOA ns1 hostmaster 1 3600 900 604800 300\n"
			   "@ NS ns1\n@ A 192.0.2.1\nns1 A 192.0.2.53\n"
			   "*.w TXT \"any\"\nw A 192.0.2.9\n";

/* A small random generator: the same runs on every machine. */
static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

/* The test zone with `names` names of data, ENTs and delegations, loaded. */
static zone_t *load_zone(unsigned names)
{
	char file[300];
	snprintf(file, sizeof(file), "%s/example.com.zone", tmpdir);
	FILE *f = fopen(file, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(ZONE, f);
	for (unsigned i = 0; i < names; i++) {
		fprintf(f, "n%u A 192.0.2.%u\n", i, i % 250);
		if (i % 3 == 0)
			fprintf(f, "n%u TXT \"t%u\"\n", i, i);
		if (i % 10 == 0)
			fprintf(f, "a.b.e%u TXT \"below an ENT\"\n", i);
		if (i % 12 == 0)
			fprintf(f, "sub%u NS ns.sub%u\nns.sub%u A 192.0.2.54\n", i, i, i);
		if (i % 12 == 6)
			fprintf(f,
				"sec%u NS ns.sec%u\nns.sec%u A 192.0.2.55\nsec%u DS 12345 13 2 "
				"0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n",
				i, i, i, i);
	}
	fclose(f);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_load(file, APEX, NULL, sign_test_msg, NULL, &z), 0);
	return z;
}

/* Errors of an apply; its warnings (an A added at 3600 to an RRset at 600) are expected. */
static void errors_only(void *arg, bool is_error, const char *text)
{
	if (is_error)
		sign_test_msg(arg, is_error, text);
}

static zone_t *apply1(const zone_t *z, const changeset_t *cs)
{
	zone_apply_opts_t ao = { .label = "test", .msg = errors_only };
	const changeset_t *sets[] = { cs };
	zone_t *out = NULL;
	int rc = zone_apply(z, sets, 1, &ao, &out);
	CU_ASSERT_EQUAL(rc, 0);
	return rc == 0 ? out : NULL;
}

/* A changeset from u's SOA to one of serial with minimum (0: u's). */
static changeset_t *cs_begin(const zone_t *u, uint32_t serial, uint32_t minimum)
{
	changeset_t *cs = changeset_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	const uint8_t *soa = znode_rrset(u->apex, DNS_TYPE_SOA)->set.data;
	uint16_t len = wire_get_u16(soa + 8);
	uint8_t rdata[600];
	memcpy(rdata, soa + 10, len);
	CU_ASSERT_EQUAL(
		changeset_add(cs, false, APEX, DNS_TYPE_SOA, wire_get_u32(soa + 4), rdata, len), 0);
	wire_t w;
	wire_init_write(&w, rdata, sizeof(rdata));
	wire_seek(&w, len - 20u);
	wire_write_u32(&w, serial);
	if (minimum) {
		wire_seek(&w, len - 4u);
		wire_write_u32(&w, minimum);
	}
	CU_ASSERT_EQUAL(
		changeset_add(cs, true, APEX, DNS_TYPE_SOA, wire_get_u32(soa + 4), rdata, len), 0);
	return cs;
}

/* label prepended to name into out. */
static void prepend(const char *label, const uint8_t *name, uint8_t *out)
{
	size_t l = strlen(label);
	out[0] = (uint8_t)l;
	memcpy(out + 1, label, l);
	memcpy(out + 1 + l, name, name_length(name));
}

/* One random change being made: the served names, what it touched. */
typedef struct gen {
	uint64_t seed;
	const zone_t *u;
	const znode_t **nodes;
	size_t count;
	uint8_t touched[64][NAME_MAXLEN];
	size_t touched_count;
	changeset_t *cs;
} gen_t;

/* Claim name for this change: false when a record there changes already. */
static bool claim(gen_t *g, const uint8_t *name)
{
	for (size_t i = 0; i < g->touched_count; i++)
		if (name_equal(g->touched[i], name))
			return false;
	if (g->touched_count == 64)
		return false;
	memcpy(g->touched[g->touched_count++], name, name_length(name));
	return true;
}

static void add_ttl(gen_t *g, bool is_add, const uint8_t *owner, uint16_t type, uint32_t ttl,
		    const void *rdata, size_t len)
{
	CU_ASSERT_EQUAL(changeset_add(g->cs, is_add, owner, type, ttl, rdata, (uint16_t)len), 0);
}

static void add(gen_t *g, bool is_add, const uint8_t *owner, uint16_t type, const void *rdata,
		size_t len)
{
	add_ttl(g, is_add, owner, type, 3600, rdata, len);
}

/* A random node, or NULL when it is occluded, the apex or (cut) not of the kind asked. */
static const znode_t *pick(gen_t *g, bool cut, bool apex_ok)
{
	const znode_t *n = g->nodes[rnd(&g->seed) % g->count];
	if ((n->flags & ZNODE_OCCLUDED) || (!apex_ok && (n->flags & ZNODE_APEX)))
		return NULL;
	if (cut != ((n->flags & ZNODE_DELEG) != 0))
		return NULL;
	return n;
}

/* Every record of RRset rs at owner deleted. */
static void del_rrset(gen_t *g, const uint8_t *owner, const rrset_wire_t *rs)
{
	const uint8_t *p = rs->data, *end = p + rs->data_len;
	for (; p < end; p += 10 + wire_get_u16(p + 8))
		add(g, false, owner, rs->type, p + 10, wire_get_u16(p + 8));
}

/*
 * A data name (not ns*, which the NS records name) gets an A, loses a
 * record, goes whole, or (3) an RRset of it gets a new TTL.
 */
static bool change_data(gen_t *g, unsigned kind)
{
	const znode_t *n = pick(g, false, kind == 0);
	const uint8_t *owner = n ? znode_name(n) : NULL;
	if (!n || !(n->flags & ZNODE_DATA) || !memcmp(owner + 1, "ns", 2) || !claim(g, owner))
		return false;
	uint32_t r = rnd(&g->seed);
	if (kind == 0) {
		uint8_t a[4] = { 10, (uint8_t)(r >> 16), (uint8_t)(r >> 8), (uint8_t)r };
		add(g, true, owner, DNS_TYPE_A, a, 4);
		return true;
	}
	const zrrset_t *rs = znode_rrsets(n);
	if (kind == 3) {
		/* a new TTL for a whole RRset: each record deleted and added back */
		const rrset_wire_t *set = &rs[r % n->rrset_count].set;
		uint32_t ttl = wire_get_u32(set->data + 4) == 3600 ? 600 : 3600;
		const uint8_t *p = set->data, *end = p + set->data_len;
		for (; p < end; p += 10 + wire_get_u16(p + 8)) {
			add_ttl(g, false, owner, set->type, wire_get_u32(p + 4), p + 10,
				wire_get_u16(p + 8));
			add_ttl(g, true, owner, set->type, ttl, p + 10, wire_get_u16(p + 8));
		}
		return true;
	}
	if (kind == 1) {
		const uint8_t *rec = rs[r % n->rrset_count].set.data;
		add(g, false, owner, wire_get_u16(rec), rec + 10, wire_get_u16(rec + 8));
		return true;
	}
	for (uint16_t i = 0; i < n->rrset_count; i++)
		del_rrset(g, owner, &rs[i].set);
	return true;
}

/* A new name below a node (maybe with an empty non-terminal between), or a wildcard. */
static bool new_name(gen_t *g, bool wildcard)
{
	const znode_t *n = pick(g, false, true);
	if (!n)
		return false;
	uint32_t r = rnd(&g->seed);
	uint8_t mid[NAME_MAXLEN], name[NAME_MAXLEN];
	char label[16];
	snprintf(label, sizeof(label), "y%u", r % 1000);
	const uint8_t *parent = znode_name(n);
	if (name_is_wildcard(parent))
		return false;
	if (!wildcard && r % 3 == 0) {
		prepend(label, parent, mid);
		parent = mid;
	}
	snprintf(label, sizeof(label), "x%u", (r >> 10) % 1000);
	prepend(wildcard ? "*" : label, parent, name);
	if (name_length(name) > 200 || zone_lookup(g->u, name) || !claim(g, name))
		return false;
	add(g, true, name, DNS_TYPE_TXT, "\3new", 4);
	return true;
}

/* A cut's DS added or deleted, a glue name added below it, or a new cut with its glue. */
static bool change_cut(gen_t *g, unsigned kind)
{
	uint32_t r = rnd(&g->seed);
	uint8_t name[NAME_MAXLEN], glue[NAME_MAXLEN], ns[NAME_MAXLEN];
	char label[16];
	if (kind == 2) {
		snprintf(label, sizeof(label), "d%u", r % 1000);
		prepend(label, APEX, name);
		prepend("ns", name, glue);
		if (zone_lookup(g->u, name) || !claim(g, name) || !claim(g, glue))
			return false;
		add(g, true, name, DNS_TYPE_NS, glue, name_length(glue));
		add(g, true, glue, DNS_TYPE_A, "\xc0\x00\x02\x07", 4);
		return true;
	}
	const znode_t *n = pick(g, true, false);
	if (!n)
		return false;
	if (kind == 1) {
		snprintf(label, sizeof(label), "g%u", r % 1000);
		prepend(label, znode_name(n), ns);
		if (!claim(g, ns))
			return false;
		add(g, true, ns, DNS_TYPE_A, "\xc0\x00\x02\x08", 4);
		return true;
	}
	if (!claim(g, znode_name(n)))
		return false;
	const zrrset_t *ds = znode_rrset(n, DNS_TYPE_DS);
	uint8_t rdata[36] = { (uint8_t)r, (uint8_t)(r >> 8), 13, 2 };
	for (int i = 4; i < 36; i++)
		rdata[i] = (uint8_t)rnd(&g->seed);
	if (ds)
		del_rrset(g, znode_name(n), &ds->set);
	else
		add(g, true, znode_name(n), DNS_TYPE_DS, rdata, sizeof(rdata));
	return true;
}

/* A random changeset to u (unsigned) of up to 6 changes, to serial. */
static changeset_t *random_change(const zone_t *u, uint64_t *seed, uint32_t serial)
{
	gen_t *g = calloc(1, sizeof(*g));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	g->seed = *seed;
	g->u = u;
	g->nodes = malloc(u->node_count * sizeof(*g->nodes));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g->nodes);
	zone_iter_t it;
	for (const znode_t *n = zone_first(u, &it); n; n = zone_next(&it))
		g->nodes[g->count++] = n;
	g->cs = cs_begin(u, serial, 0);
	unsigned want = 1 + rnd(&g->seed) % 6, made = 0;
	for (unsigned tries = 0; made < want && tries < 200; tries++) {
		unsigned kind = rnd(&g->seed) % 9;
		if (kind < 4)
			made += change_data(g, kind);
		else if (kind < 6)
			made += new_name(g, kind == 5);
		else
			made += change_cut(g, kind - 6);
	}
	CU_ASSERT(made > 0);
	CU_ASSERT_EQUAL(changeset_seal(g->cs), 0);
	changeset_t *cs = g->cs;
	*seed = g->seed;
	free(g->nodes);
	free(g);
	return cs;
}

/* The header of an RRSIG but its times and signature: type covered to original TTL, tag, signer. */
static bool same_sig_fields(const rrset_wire_t *a, const rrset_wire_t *b)
{
	if (a->rr_count != b->rr_count)
		return false;
	const uint8_t *p = a->data, *q = b->data;
	for (uint16_t i = 0; i < a->rr_count; i++) {
		uint16_t lp = wire_get_u16(p + 8), lq = wire_get_u16(q + 8);
		const uint8_t *rp = p + 10, *rq = q + 10;
		if (memcmp(p, q, 8) || memcmp(rp, rq, 8) || memcmp(rp + 16, rq + 16, 2) ||
		    !name_equal(rp + 18, rq + 18))
			return false;
		p += 10 + lp;
		q += 10 + lq;
	}
	return true;
}

/* Whether nodes a and b hold the same records, but for the RRSIGs' times and signatures. */
static bool same_node(const znode_t *a, const znode_t *b)
{
	if (!name_equal(znode_name(a), znode_name(b)) || a->rrset_count != b->rrset_count)
		return false;
	for (uint16_t i = 0; i < a->rrset_count; i++) {
		const zrrset_t *x = &znode_rrsets(a)[i], *y = &znode_rrsets(b)[i];
		if (x->set.type != y->set.type || x->set.rr_count != y->set.rr_count ||
		    (x->sigs == NULL) != (y->sigs == NULL))
			return false;
		if (x->sigs && !same_sig_fields(x->sigs, y->sigs))
			return false;
		if (x->set.type != DNS_TYPE_RRSIG &&
		    (x->set.data_len != y->set.data_len ||
		     memcmp(x->set.data, y->set.data, x->set.data_len)))
			return false;
	}
	return true;
}

/* Whether a and b hold the same names and records (same_node), so the same chain and bitmaps. */
static bool same_zone(const zone_t *a, const zone_t *b)
{
	if (a->node_count != b->node_count || a->serial != b->serial || a->denial != b->denial)
		fprintf(stderr, "\n  nodes %zu against %zu\n", a->node_count, b->node_count);
	zone_iter_t i, j;
	const znode_t *x = zone_first(a, &i), *y = zone_first(b, &j);
	for (; x && y; x = zone_next(&i), y = zone_next(&j)) {
		if (!same_node(x, y)) {
			char ta[NAME_TEXT_MAX], tb[NAME_TEXT_MAX];
			name_to_text(znode_name(x), ta, sizeof(ta));
			name_to_text(znode_name(y), tb, sizeof(tb));
			fprintf(stderr, "\n  %s differs from %s\n", ta, tb);
			return false;
		}
	}
	return !x && !y;
}

/* z written to a file of the tmpdir named name. */
static void write_zone(const zone_t *z, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(zone_write_fd(z, fd), 0);
	close(fd);
}

/* What one run signs with. */
typedef struct run {
	sign_keyset_t ks;
	sign_zone_opts_t o;
	zone_t *unsigned_z, *signed_z;
	size_t whole_sigs; /* RRSIGs of the last full signing */
} run_t;

/* RRSIGs a changeset adds. */
static size_t sigs_added(const changeset_t *cs)
{
	size_t at = 0, n = 0;
	xfr_run_t run;
	while (xfr_part_next(&cs->add, &at, &run))
		n += run.set.type == DNS_TYPE_RRSIG ? run.set.rr_count : 0;
	return n;
}

/* u signed whole (o's serial) and applied. */
static zone_t *sign_whole(run_t *r, const zone_t *u)
{
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL_FATAL(sign_zone(u, &r->ks, &r->o, &cs), 0);
	r->whole_sigs = sigs_added(cs);
	zone_t *z = apply1(u, cs);
	changeset_unref(cs);
	return z;
}

/* A run of the zone of `names` names with keys of alg in a folder of its own, signed whole. */
static void run_start(run_t *r, unsigned names, const sign_nsec3_t *nsec3, const char *label)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/%s.keys", tmpdir, label);
	memset(r, 0, sizeof(*r));
	CU_ASSERT_EQUAL_FATAL(
		sign_keyset_create(&r->ks, dir, APEX, 13, time(NULL), err, sizeof(err)), 0);
	r->o = (sign_zone_opts_t){ .times = sign_times_at(time(NULL), 86400),
				   .jitter = 3600,
				   .serial = 100,
				   .dnskey_ttl = 600,
				   .nsec3 = nsec3,
				   .threads = 2 };
	r->unsigned_z = load_zone(names);
	r->signed_z = sign_whole(r, r->unsigned_z);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->signed_z);
}

static void run_end(run_t *r)
{
	zone_unref(r->unsigned_z);
	zone_unref(r->signed_z);
	sign_keyset_clear(&r->ks);
}

/*
 * cs applied to the run's unsigned zone, and signed alone onto its signed
 * one at the next serial: the result equals a full signing of the new
 * unsigned zone (but for RRSIG times and signatures). Returns the
 * incremental changeset's RRSIGs, or -1.
 */
static long step(run_t *r, const changeset_t *cs)
{
	r->o.serial++;
	changeset_t *out = NULL;
	int rc = sign_changes(r->signed_z, cs, &r->ks, &r->o, &out);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc < 0)
		return -1;
	zone_t *u = apply1(r->unsigned_z, cs), *s = apply1(r->signed_z, out);
	long sigs = (long)sigs_added(out);
	changeset_unref(out);
	CU_ASSERT_FATAL(u && s);
	zone_t *whole = sign_whole(r, u);
	bool same = same_zone(s, whole);
	CU_ASSERT(same);
	zone_unref(whole);
	zone_unref(r->unsigned_z);
	zone_unref(r->signed_z);
	r->unsigned_z = u;
	r->signed_z = s;
	return same ? sigs : -1;
}

/*
 * Random changes (records added and removed, TTLs changed, names made and deleted,
 * empty non-terminals made and left, wildcards, DS added and removed,
 * glue, new cuts) each signed alone and applied: after each the zone
 * equals a full signing of the same data and ldns-verify-zone passes it
 * (dnssec-verify every 10 steps), with NSEC, NSEC3 and NSEC3 opt-out.
 */
static void test_random_changes(void)
{
	static const sign_nsec3_t plain = { 0 }, opt_out = { .opt_out = true },
				  salted = { .iterations = 3,
					     .salt_len = 2,
					     .salt = { 0xab, 0xcd } };
	const sign_nsec3_t *denials[] = { NULL, &plain, &opt_out, &salted };
	const char *labels[] = { "nsec", "nsec3", "optout", "salted" };
	for (size_t d = 0; d < 4; d++) {
		run_t r;
		run_start(&r, 60, denials[d], labels[d]);
		uint64_t seed = 1 + d;
		for (unsigned k = 0; k < 60; k++) {
			changeset_t *cs = random_change(r.unsigned_z, &seed, 2 + k);
			long sigs = step(&r, cs);
			changeset_unref(cs);
			CU_ASSERT_FATAL(sigs >= 0);
			char path[300];
			snprintf(path, sizeof(path), "%s/%s-%u.zone", tmpdir, labels[d], k);
			write_zone(r.signed_z, path);
			bool ok = sign_test_verifies(path, k % 10 == 9);
			CU_ASSERT(ok);
			if (!ok)
				fprintf(stderr, "\n  %s step %u\n", labels[d], k);
		}
		run_end(&r);
	}
}

/* A name of the test zone from text, into out. */
static const uint8_t *name_of(const char *text, uint8_t *out)
{
	CU_ASSERT_FATAL(name_from_text(text, APEX, out) > 0);
	return out;
}

/* What sign_changes says of the one record of type with rdata at owner added (or deleted). */
static int sign_one(run_t *r, bool is_add, const char *owner, uint16_t type, const void *rdata,
		    size_t len)
{
	uint8_t name[NAME_MAXLEN];
	changeset_t *cs = cs_begin(r->unsigned_z, 50, 0), *out = NULL;
	CU_ASSERT_EQUAL(
		changeset_add(cs, is_add, name_of(owner, name), type, 3600, rdata, (uint16_t)len),
		0);
	CU_ASSERT_EQUAL(changeset_seal(cs), 0);
	int rc = sign_changes(r->signed_z, cs, &r->ks, &r->o, &out);
	changeset_unref(out);
	changeset_unref(cs);
	return rc;
}

/*
 * What is not done in place says so, SHOAL_EUNSUPPORTED, for the caller
 * to sign whole: a cut made above served names or removed above its
 * glue, a cut made at a name with other data, a DNAME, the apex's NS, the
 * SOA's MINIMUM, other keys, other NSEC3 parameters or opt-out, NSEC for
 * NSEC3. DNSSEC records in the change, a changeset not sealed, a zone not
 * signed or a serial not newer: SHOAL_EINVAL;
 * a record outside the zone: SHOAL_EZONE.
 */
static void test_unsupported(void)
{
	static const sign_nsec3_t plain = { 0 }, opt_out = { .opt_out = true },
				  salted = { .salt_len = 1, .salt = { 1 } };
	run_t r;
	run_start(&r, 24, NULL, "unsupported");
	r.o.serial++;
	uint8_t ns[NAME_MAXLEN];
	name_of("ns1", ns);
	CU_ASSERT_EQUAL(sign_one(&r, true, "b.e0", DNS_TYPE_NS, ns, name_length(ns)),
			SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(sign_one(&r, true, "n1", DNS_TYPE_NS, ns, name_length(ns)),
			SHOAL_EUNSUPPORTED);
	name_of("ns.sub0", ns);
	CU_ASSERT_EQUAL(sign_one(&r, false, "sub0", DNS_TYPE_NS, ns, name_length(ns)),
			SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(sign_one(&r, true, "n2", DNS_TYPE_DNAME, ns, name_length(ns)),
			SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(sign_one(&r, true, "@", DNS_TYPE_NS, ns, name_length(ns)),
			SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(sign_one(&r, true, "n3", DNS_TYPE_NSEC, ns, name_length(ns)), SHOAL_EINVAL);
	static const uint8_t key[] = { 1, 0, 3, 13, 1, 2, 3, 4 };
	CU_ASSERT_EQUAL(sign_one(&r, true, "@", DNS_TYPE_DNSKEY, key, sizeof(key)), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(sign_one(&r, true, "example.net.", DNS_TYPE_NS, ns, name_length(ns)),
			SHOAL_EZONE);
	/* the SOA's MINIMUM sets every NSEC's TTL (RFC 9077 3) */
	changeset_t *cs = cs_begin(r.unsigned_z, 50, 60), *out = NULL;
	CU_ASSERT_EQUAL(changeset_seal(cs), 0);
	CU_ASSERT_EQUAL(sign_changes(r.signed_z, cs, &r.ks, &r.o, &out), SHOAL_EUNSUPPORTED);
	/* a changeset not sealed has no SOA to start from */
	changeset_t *empty = changeset_new();
	CU_ASSERT_EQUAL(sign_changes(r.signed_z, empty, &r.ks, &r.o, &out), SHOAL_EINVAL);
	changeset_unref(empty);
	/* a serial not newer than the one served (RFC 1982) */
	uint32_t serial = r.o.serial;
	r.o.serial = r.signed_z->serial;
	CU_ASSERT_EQUAL(sign_changes(r.signed_z, cs, &r.ks, &r.o, &out), SHOAL_EINVAL);
	r.o.serial = serial;
	/* the unsigned zone is not signed */
	CU_ASSERT_EQUAL(sign_changes(r.unsigned_z, cs, &r.ks, &r.o, &out), SHOAL_EINVAL);
	/* NSEC3 asked of an NSEC zone */
	r.o.nsec3 = &plain;
	CU_ASSERT_EQUAL(sign_changes(r.signed_z, cs, &r.ks, &r.o, &out), SHOAL_EUNSUPPORTED);
	r.o.nsec3 = NULL;
	/* other keys: a rollover's DNSKEY RRset is the full signer's */
	run_t other;
	run_start(&other, 2, NULL, "other");
	CU_ASSERT_EQUAL(sign_changes(r.signed_z, cs, &other.ks, &r.o, &out), SHOAL_EUNSUPPORTED);
	run_end(&other);
	run_end(&r);
	/* other NSEC3 parameters, opt-out, or NSEC */
	run_start(&r, 24, &plain, "unsupported3");
	r.o.serial++;
	const sign_nsec3_t *others[] = { &salted, &opt_out, NULL };
	for (size_t i = 0; i < 3; i++) {
		r.o.nsec3 = others[i];
		CU_ASSERT_EQUAL(sign_changes(r.signed_z, cs, &r.ks, &r.o, &out),
				SHOAL_EUNSUPPORTED);
	}
	CU_ASSERT_PTR_NULL(out);
	changeset_unref(cs);
	run_end(&r);
}

/*
 * A cut made at a new name and removed again where no name lies below it
 * in the zone served is done in place, and so is another NS at a cut.
 */
static void test_local_cuts(void)
{
	static const sign_nsec3_t plain = { 0 }, opt_out = { .opt_out = true };
	const sign_nsec3_t *denials[] = { NULL, &plain, &opt_out };
	for (size_t d = 0; d < 3; d++) {
		run_t r;
		run_start(&r, 24, denials[d], d == 0 ? "cut" : d == 1 ? "cut3" : "cutopt");
		uint8_t owner[NAME_MAXLEN], ns[NAME_MAXLEN];
		name_of("bare", owner);
		name_of("ns.example.net.", ns);
		for (int k = 0; k < 3; k++) {
			changeset_t *cs = cs_begin(r.unsigned_z, 2 + (uint32_t)k, 0);
			/* the third: another NS at a cut served */
			if (k == 2)
				name_of("sub0", owner);
			CU_ASSERT_EQUAL(changeset_add(cs, k != 1, owner, DNS_TYPE_NS, 3600, ns,
						      (uint16_t)name_length(ns)),
					0);
			CU_ASSERT_EQUAL(changeset_seal(cs), 0);
			CU_ASSERT(step(&r, cs) >= 0);
			changeset_unref(cs);
			char path[300];
			snprintf(path, sizeof(path), "%s/cut-%zu-%d.zone", tmpdir, d, k);
			write_zone(r.signed_z, path);
			CU_ASSERT(sign_test_verifies(path, true));
		}
		run_end(&r);
	}
}

/* The RRSIGs of cs signed alone onto the run's signed zone, applied there. */
static long signed_alone(run_t *r, const changeset_t *cs)
{
	r->o.serial++;
	changeset_t *out = NULL;
	CU_ASSERT_EQUAL_FATAL(sign_changes(r->signed_z, cs, &r->ks, &r->o, &out), 0);
	zone_t *s = apply1(r->signed_z, out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	long sigs = (long)sigs_added(out);
	changeset_unref(out);
	zone_unref(r->signed_z);
	r->signed_z = s;
	return sigs;
}

/*
 * The cost follows the change: in a zone of 20,000 names signed whole
 * (over 40,000 RRSIGs), a record added to an RRset makes 2 signatures
 * (the SOA, the RRset), a new name 4 (the SOA, its RRset, its NSEC or
 * NSEC3 and the one before it, re-pointed).
 */
static void test_cost(void)
{
	static const sign_nsec3_t plain = { 0 };
	static const uint8_t addr[4] = { 192, 0, 2, 99 };
	const sign_nsec3_t *denials[] = { NULL, &plain };
	const char *names[] = { "n777", "n777x" };
	for (size_t d = 0; d < 2; d++) {
		run_t r;
		run_start(&r, 20000, denials[d], d ? "cost3" : "cost");
		CU_ASSERT(r.whole_sigs > 40000);
		for (int k = 0; k < 2; k++) {
			uint8_t owner[NAME_MAXLEN];
			changeset_t *cs = cs_begin(r.unsigned_z, 2 + (uint32_t)k, 0);
			CU_ASSERT_EQUAL(changeset_add(cs, true, name_of(names[k], owner),
						      DNS_TYPE_A, 3600, addr, 4),
					0);
			CU_ASSERT_EQUAL(changeset_seal(cs), 0);
			CU_ASSERT_EQUAL(signed_alone(&r, cs), k ? 4 : 2);
			changeset_unref(cs);
		}
		fprintf(stderr, "\n  %s: %zu RRSIGs whole, 2 and 4 for the changes\n",
			d ? "NSEC3" : "NSEC", r.whole_sigs);
		run_end(&r);
	}
}

/* Whether a and b add and delete the same runs: owners, types and counts in the same order. */
static bool same_runs(const xfr_part_t *a, const xfr_part_t *b)
{
	size_t i = 0, j = 0;
	xfr_run_t x, y;
	for (;;) {
		bool more = xfr_part_next(a, &i, &x);
		if (more != xfr_part_next(b, &j, &y))
			return false;
		if (!more)
			return true;
		if (!name_equal(x.owner, y.owner) || x.set.type != y.set.type ||
		    x.set.rr_count != y.set.rr_count)
			return false;
	}
}

/*
 * A change of 300 records (over 300 signatures: batches cut into ranges)
 * signed alone on 4 threads equals a full signing, and its changeset is
 * the one signed on 1 thread, record for record but for the RRSIGs' times
 * and signatures.
 */
static void test_threads(void)
{
	run_t r;
	run_start(&r, 600, NULL, "threads");
	changeset_t *cs = cs_begin(r.unsigned_z, 2, 0), *outs[2] = { NULL, NULL };
	for (unsigned i = 0; i < 300; i++) {
		char text[32];
		uint8_t owner[NAME_MAXLEN], addr[4] = { 10, 0, (uint8_t)(i >> 8), (uint8_t)i };
		snprintf(text, sizeof(text), i % 3 ? "n%u" : "n%ux", i * 2);
		CU_ASSERT_EQUAL(
			changeset_add(cs, true, name_of(text, owner), DNS_TYPE_A, 3600, addr, 4),
			0);
	}
	CU_ASSERT_EQUAL(changeset_seal(cs), 0);
	for (int k = 0; k < 2; k++) {
		r.o.threads = k ? 4 : 1;
		r.o.serial = 200;
		CU_ASSERT_EQUAL(sign_changes(r.signed_z, cs, &r.ks, &r.o, &outs[k]), 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(outs[k]);
	}
	CU_ASSERT(sigs_added(outs[1]) > 300);
	CU_ASSERT(same_runs(&outs[0]->add, &outs[1]->add));
	CU_ASSERT(same_runs(&outs[0]->del, &outs[1]->del));
	changeset_unref(outs[0]);
	changeset_unref(outs[1]);
	r.o.serial = 100;
	CU_ASSERT(step(&r, cs) > 300);
	changeset_unref(cs);
	run_end(&r);
}

/*
 * ztree_find_lt, the link before a name that goes: over a tree of three
 * levels, the node before each node's name is the one the walk gave
 * before it, none before the apex; before a name that is not there, the
 * node at or before it.
 */
static void test_find_lt(void)
{
	zone_t *z = load_zone(5000);
	CU_ASSERT_FATAL(z->names.height >= 3);
	zone_iter_t it;
	const znode_t *prev = NULL;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it)) {
		zkey_t k;
		zkey_name(&k, znode_name(n));
		CU_ASSERT_PTR_EQUAL(ztree_find_lt(&z->names, &k), prev);
		uint8_t after[NAME_MAXLEN];
		if (n->name_len + 2 <= NAME_MAXLEN && n->labels > 2) {
			/* "\x01" below n sorts after it and before what follows: n is before */
			prepend("\x01", znode_name(n), after);
			zkey_name(&k, after);
			CU_ASSERT_PTR_EQUAL(ztree_find_lt(&z->names, &k), n);
		}
		prev = n;
	}
	zone_unref(z);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_random_changes),
		UNIT_TEST(test_unsupported),
		UNIT_TEST(test_local_cuts),
		UNIT_TEST(test_threads),
		UNIT_TEST(test_find_lt),
		UNIT_TEST(test_cost),
		UNIT_END,
	};
	return sign_test_main(argc, argv, "sign_incr", tests, tmpdir);
}
