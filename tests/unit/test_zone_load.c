/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/load.c and zone/build.c: loader checks with their lines, and the store. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "tests/unit/unit.h"
#include "zone/internal.h"

#define MSG_MAX 16

/* Messages a load produced, for asserting on their text. */
typedef struct msgs {
	int count, errors;
	char text[MSG_MAX][1024];
} msgs_t;

static void collect(void *arg, bool is_error, const char *msg)
{
	msgs_t *m = arg;
	if (m->count < MSG_MAX)
		snprintf(m->text[m->count++], sizeof(m->text[0]), "%s%s", is_error ? "E " : "W ",
			 msg);
	m->errors += is_error;
}

/*
 * Does some message contain `needle`? A needle starting "E " or "W " also
 * asks for an error or a warning; the rest is matched after the folder.
 */
static bool has_msg(const msgs_t *m, const char *needle)
{
	char sev = 0;
	if ((needle[0] == 'E' || needle[0] == 'W') && needle[1] == ' ') {
		sev = needle[0];
		needle += 2;
	}
	for (int i = 0; i < m->count; i++)
		if ((!sev || m->text[i][0] == sev) && strstr(m->text[i], needle))
			return true;
	for (int i = 0; i < m->count; i++)
		fprintf(stderr, "  message: %s\n", m->text[i]);
	return false;
}

static const char *zone_path(const char *file)
{
	static char path[4096], rel[512];
	snprintf(rel, sizeof(rel), "tests/unit/zones/%s", file);
	return unit_src_path(path, sizeof(path), rel);
}

static int load(const char *file, const char *origin, msgs_t *m, zone_t **z)
{
	uint8_t wire[NAME_MAXLEN];
	memset(m, 0, sizeof(*m));
	*z = NULL;
	if (name_from_text(origin, NULL, wire) < 0)
		return SHOAL_EINVAL;
	return zone_load(zone_path(file), wire, NULL, collect, m, z);
}

/* load() for a file anywhere, within limits (NULL: the defaults). */
static int load_limited(const char *path, const char *origin, const zone_limits_t *limits,
			msgs_t *m, zone_t **z)
{
	uint8_t wire[NAME_MAXLEN];
	memset(m, 0, sizeof(*m));
	*z = NULL;
	if (name_from_text(origin, NULL, wire) < 0)
		return SHOAL_EINVAL;
	return zone_load(path, wire, limits, collect, m, z);
}

static int load_abs(const char *path, const char *origin, msgs_t *m, zone_t **z)
{
	return load_limited(path, origin, NULL, m, z);
}

static const znode_t *find(const zone_t *z, const char *text)
{
	uint8_t wire[NAME_MAXLEN];
	if (name_from_text(text, NULL, wire) < 0)
		return NULL;
	name_lower(wire);
	return zone_lookup(z, wire);
}

static void test_good_zone_loads(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("example.zone", "example.com.", &m, &z), 0);
	CU_ASSERT_EQUAL(m.errors, 0);
	CU_ASSERT_EQUAL(z->serial, 2026120301);
	CU_ASSERT(z->rr_count > 50);
	CU_ASSERT(z->apex->flags & ZNODE_APEX);
	CU_ASSERT_PTR_NULL(zone_parent(z, z->apex));
	/* negative SOA TTL: min(3600, 300) (RFC 2308 3) */
	CU_ASSERT_EQUAL(wire_get_u32(z->neg_soa.data + 4), 300);
	zone_free(z);
}

static void test_store_flags(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("example.zone", "example.com.", &m, &z), 0);
	const znode_t *n = find(z, "www.example.com.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT(n->flags & ZNODE_DATA);
	CU_ASSERT_PTR_EQUAL(zone_parent(z, n), z->apex);
	const zrrset_t *a = znode_rrset(n, DNS_TYPE_A);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->set.rr_count, 2);
	CU_ASSERT_EQUAL(a->set.data_len, 2 * 14);

	/* empty non-terminals are nodes without data */
	n = find(z, "b.c.example.com.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_EQUAL(n->rrset_count, 0);
	CU_ASSERT_FALSE(n->flags & ZNODE_DATA);
	CU_ASSERT_PTR_EQUAL(zone_parent(z, find(z, "c.example.com.")), z->apex);
	CU_ASSERT_PTR_EQUAL(zone_parent(z, find(z, "a.b.c.example.com.")), n);

	CU_ASSERT(find(z, "sub.example.com.")->flags & ZNODE_DELEG);
	CU_ASSERT(find(z, "ns1.sub.example.com.")->flags & ZNODE_OCCLUDED);
	CU_ASSERT(find(z, "*.sub.example.com.")->flags & ZNODE_OCCLUDED);
	CU_ASSERT(find(z, "wild.example.com.")->flags & ZNODE_WILDCARD_CHILD);
	CU_ASSERT(find(z, "old.example.com.")->flags & ZNODE_DNAME);
	CU_ASSERT(find(z, "ftp.example.com.")->flags & ZNODE_CNAME);
	CU_ASSERT_FALSE(find(z, "www.example.com.")->flags & ZNODE_OCCLUDED);
	CU_ASSERT_PTR_NULL(find(z, "nothere.example.com."));
	/* lookups take lowercase names; the store keeps names lowercase */
	CU_ASSERT_PTR_NOT_NULL(find(z, "WWW.Example.COM."));

	/* compressible RDATA names are listed: MX exchange at offset 10 + 2 */
	const zrrset_t *mx = znode_rrset(z->apex, DNS_TYPE_MX);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mx);
	CU_ASSERT_EQUAL(mx->set.name_count, 2);
	CU_ASSERT_EQUAL(mx->set.names[0], 12);
	zone_free(z);
}

static void test_store_canonical_order(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("example.zone", "example.com.", &m, &z), 0);
	zone_iter_t it;
	const znode_t *prev = zone_first(z, &it);
	CU_ASSERT_PTR_EQUAL(prev, z->apex);
	for (const znode_t *n = zone_next(&it); n; prev = n, n = zone_next(&it))
		CU_ASSERT(name_compare(znode_name(prev), znode_name(n)) < 0);
	/* less-or-equal: an absent name finds its canonical predecessor */
	uint8_t w[NAME_MAXLEN];
	name_from_text("wwx.example.com.", NULL, w);
	const znode_t *le = zone_find_le(z, w);
	CU_ASSERT_PTR_NOT_NULL_FATAL(le);
	CU_ASSERT_PTR_EQUAL(le, find(z, "www.example.com."));
	name_from_text("www.example.com.", NULL, w);
	CU_ASSERT_PTR_EQUAL(zone_find_le(z, w), find(z, "www.example.com."));
	name_from_text("com.", NULL, w);
	CU_ASSERT_PTR_NULL(zone_find_le(z, w));
	zone_free(z);
}

/*
 * The walk gives every node once, apex first, in canonical order; each
 * node's parent is the node of its name less one label, found by name.
 * An iterator left and taken up again (a transfer between two messages)
 * goes on where it was.
 */
static void test_store_walk(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("example.zone", "example.com.", &m, &z), 0);
	zone_iter_t it, kept;
	size_t count = 0;
	const znode_t *third = NULL;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it), count++) {
		CU_ASSERT_PTR_EQUAL(zone_lookup(z, znode_name(n)), n);
		const znode_t *p = zone_parent(z, n);
		if (n == z->apex) {
			CU_ASSERT_PTR_NULL(p);
			continue;
		}
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT(name_equal(znode_name(p), name_parent(znode_name(n))));
		if (count == 2) {
			kept = it;
			third = n;
		}
	}
	CU_ASSERT_EQUAL(count, z->node_count);
	CU_ASSERT_PTR_NOT_NULL_FATAL(third);
	const znode_t *after = zone_next(&kept);
	CU_ASSERT_PTR_NOT_NULL_FATAL(after);
	CU_ASSERT(name_compare(znode_name(third), znode_name(after)) < 0);
	zone_free(z);
}

static void test_text_and_unknown_types(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("example.zone", "example.com.", &m, &z), 0);
	const zrrset_t *t = znode_rrset(find(z, "txt.example.com."), DNS_TYPE_TXT);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	static const uint8_t rdata[] = "\x0c"
				       "first string"
				       "\x0f"
				       "second \"quoted\""
				       "\x0a"
				       "semi;colon";
	CU_ASSERT_EQUAL(wire_get_u16(t->set.data + 8), sizeof(rdata) - 1);
	CU_ASSERT_EQUAL(memcmp(t->set.data + 10, rdata, sizeof(rdata) - 1), 0);
	const zrrset_t *u = znode_rrset(find(z, "private.example.com."), 65280);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_EQUAL(wire_get_u16(u->set.data + 8), 4);
	CU_ASSERT_EQUAL(wire_get_u32(u->set.data + 10), 0x0A000001);
	zone_free(z);
}

static void test_rrsig_attached(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("rrsig.zone", "example.com.", &m, &z), 0);
	const znode_t *n = find(z, "ns1.example.com.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	const zrrset_t *a = znode_rrset(n, DNS_TYPE_A);
	const zrrset_t *aaaa = znode_rrset(n, DNS_TYPE_AAAA);
	const zrrset_t *sig = znode_rrset(n, DNS_TYPE_RRSIG);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(aaaa);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sig);
	/* both RRSIGs over A, none over AAAA; each covers type A */
	CU_ASSERT_PTR_NOT_NULL_FATAL(a->sigs);
	CU_ASSERT_EQUAL(a->sigs->rr_count, 2);
	CU_ASSERT_EQUAL(wire_get_u16(a->sigs->data + 10), DNS_TYPE_A);
	CU_ASSERT_PTR_NULL(aaaa->sigs);
	CU_ASSERT_EQUAL(sig->set.rr_count, 2);
	const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
	const zrrset_t *ns = znode_rrset(z->apex, DNS_TYPE_NS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(soa->sigs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns->sigs);
	CU_ASSERT_EQUAL(soa->sigs->rr_count, 1);
	CU_ASSERT_EQUAL(wire_get_u16(soa->sigs->data + 10), DNS_TYPE_SOA);
	CU_ASSERT_EQUAL(wire_get_u16(ns->sigs->data + 10), DNS_TYPE_NS);
	/* RRSIG signer names are never compressed (RFC 4034 3.1.7) */
	CU_ASSERT_EQUAL(sig->set.name_count, 0);
	zone_free(z);
}

static void test_rrset_ttl(void)
{
	/* RFC 2181 5.2: one TTL per RRset; like Knot, the one read last */
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("mixttl.zone", "example.com.", &m, &z), 0);
	const zrrset_t *a = znode_rrset(find(z, "mix.example.com."), DNS_TYPE_A);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->set.rr_count, 3);
	const uint8_t *p = a->set.data;
	for (int i = 0; i < 3; i++, p += 14)
		CU_ASSERT_EQUAL(wire_get_u32(p + 4), 300);
	zone_free(z);
}

static void test_include_with_origin(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("example.zone", "example.com.", &m, &z), 0);
	const znode_t *n = find(z, "host.inc.example.com.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	const zrrset_t *a = znode_rrset(n, DNS_TYPE_A);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(wire_get_u32(a->set.data + 4), 300);
	CU_ASSERT_PTR_NOT_NULL(find(z, "inc.example.com."));
	zone_free(z);
}

/* One bad (or doubtful) zone file and what loading it must say. */
typedef struct load_case {
	const char *file, *origin;
	int rc;
	const char *message; /* a substring of one message */
} load_case_t;

static const load_case_t load_cases[] = {
	{ "nosoa.zone", "example.com.", SHOAL_EZONE,
	  "E nosoa.zone: no SOA record at the zone apex example.com." },
	{ "twosoa.zone", "example.com.", SHOAL_EZONE,
	  "E twosoa.zone:6: example.com.: more than one SOA record" },
	{ "cname.zone", "example.com.", SHOAL_EZONE,
	  "E cname.zone:9: www.example.com.: CNAME and other data at the same name" },
	{ "outside.zone", "example.com.", 0,
	  "W outside.zone:6: www.example.org. is outside the zone example.com., ignored" },
	{ "noglue.zone", "example.com.", 0,
	  "W noglue.zone:6: sub.example.com.: no glue address for name server ns.sub.example.com." },
	{ "nons.zone", "example.com.", 0,
	  "W nons.zone: no NS records at the zone apex example.com." },
	{ "syntax.zone", "example.com.", SHOAL_EZONE, "E syntax.zone:7: " },
	/* ldns reads to the end of the file into the string: NSD's "EOF inside quoted string" */
	{ "unclosed.zone", "example.com.", SHOAL_EZONE,
	  "E unclosed.zone:7: a quoted string opened here is not closed before the end of the file" },
	{ "soaplace.zone", "example.com.", SHOAL_EZONE,
	  "E soaplace.zone:6: host.sub.example.com.: SOA record not at the zone apex" },
	{ "badinc.zone", "example.com.", SHOAL_EZONE, "missing.zone: cannot open" },
	{ "does-not-exist.zone", "example.com.", SHOAL_EIO, "does-not-exist.zone: cannot open" },
	{ "mixttl.zone", "example.com.", 0,
	  "W mixttl.zone:7: mix.example.com.: TTL 100 differs from the RRset's TTL 300" },
	/* every record is outside example.net: warnings, then no SOA */
	{ "outside.zone", "example.net.", SHOAL_EZONE,
	  "no SOA record at the zone apex example.net." },
};

static void test_load_messages(void)
{
	for (size_t i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
		const load_case_t *c = &load_cases[i];
		msgs_t m;
		zone_t *z;
		int rc = load(c->file, c->origin, &m, &z);
		if (rc != c->rc || !has_msg(&m, c->message))
			fprintf(stderr, "  case %s %s: rc %d\n", c->file, c->origin, rc);
		CU_ASSERT_EQUAL(rc, c->rc);
		CU_ASSERT(has_msg(&m, c->message));
		CU_ASSERT((rc == 0) == (z != NULL));
		/* warnings never stop a load; errors always do */
		CU_ASSERT((m.errors == 0) == (rc == 0));
		zone_free(z);
	}
}

static void test_outside_not_stored(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL_FATAL(load("outside.zone", "example.com.", &m, &z), 0);
	CU_ASSERT_EQUAL(z->rr_count, 3);
	zone_free(z);
	/* one error per bad line, loading goes on past it */
	CU_ASSERT_EQUAL(load("syntax.zone", "example.com.", &m, &z), SHOAL_EZONE);
	CU_ASSERT_EQUAL(m.errors, 1);
}

static void test_name_key_order(void)
{
	/* RFC 4034 6.1 example order */
	static const char *names[] = { "example.",         "a.example.",      "yljkjljk.a.example.",
				       "Z.a.example.",     "zABC.a.EXAMPLE.", "z.example.",
				       "\\001.z.example.", "*.z.example.",    "\\200.z.example." };
	uint8_t prev_key[ZONE_KEY_MAX], key[ZONE_KEY_MAX];
	size_t prev_len = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint8_t w[NAME_MAXLEN];
		CU_ASSERT_FATAL(name_from_text(names[i], NULL, w) > 0);
		size_t len = zone_name_key(w, key);
		if (i) {
			size_t n = len < prev_len ? len : prev_len;
			int c = memcmp(prev_key, key, n);
			CU_ASSERT(c < 0 || (c == 0 && prev_len < len));
		}
		memcpy(prev_key, key, len);
		prev_len = len;
	}
}

/*
 * A file too big to read in one go is read in stretches on several
 * threads; the zone and the messages must be those of one reading. The
 * same file read through $INCLUDE (included files are never split) is the
 * reference. The text has what could fool the cutting: records spread over
 * lines in parentheses, quotes holding ';' '(' and escaped quotes, comments
 * holding parentheses, and errors in several stretches. For each reader.
 */
static void parallel_load_equals_serial(void)
{
	char dir[] = "/tmp/shoal-split.XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	char big[4200], inc[4200];
	snprintf(big, sizeof(big), "%s/big.zone", dir);
	snprintf(inc, sizeof(inc), "%s/inc.zone", dir);
	FILE *f = fopen(big, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f,
		"$ORIGIN split.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.1\n");
	for (int i = 0; i < 70000; i++) {
		switch (i % 7) {
		case 0:
			fprintf(f, "h%d IN A 192.0.2.%d ; a comment ( with a parenthesis\n", i,
				i % 250);
			break;
		case 1:
			fprintf(f,
				"h%d 60 IN TXT \"semi;colon (paren\" \"esc\\\"aped\" (\n"
				"\t\"second line ; ( \"\n\t)\n",
				i);
			break;
		case 2:
			fprintf(f, "h%d MX ( 10 ; priority\n\tmail%d )\n", i, i);
			break;
		case 3:
			fprintf(f, "\tTXT \"same owner as h%d\"\n", i - 1);
			break;
		case 4:
			fprintf(f, "; h%d only a comment )\n\n", i);
			break;
		case 5:
			fprintf(f, "h%d AAAA 2001:db8::%x\n", i, i & 0xffff);
			break;
		default:
			if ((i / 7) % 2500 == 0)
				fprintf(f, "bad%d A 192.0.2.999\n",
					i); /* an error in some stretches */
			else
				fprintf(f, "h%d.sub CNAME h%d\n", i, i - 1);
		}
	}
	fclose(f);
	f = fopen(inc, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "$INCLUDE %s\n", big);
	fclose(f);

	msgs_t par, ser;
	zone_t *zp = NULL, *zs = NULL;
	zone_load_set_threads(4, 1 << 16);
	int ep = load_abs(big, "split.test", &par, &zp);
	int es = load_abs(inc, "split.test", &ser, &zs);
	zone_load_set_threads(0, 0);
	CU_ASSERT_EQUAL(ep, SHOAL_EZONE);
	CU_ASSERT_EQUAL(es, SHOAL_EZONE);
	/* the same errors, in the same order, with the same lines */
	CU_ASSERT_EQUAL(par.count, 4);
	CU_ASSERT_EQUAL(par.count, ser.count);
	for (int i = 0; i < par.count && i < ser.count; i++)
		CU_ASSERT_STRING_EQUAL(par.text[i], ser.text[i]);
	CU_ASSERT(has_msg(&par, "E big.zone:"));
	/* and, without the bad lines, the same zone */
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), "sed -i '/^bad/d' %s", big);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	zone_load_set_threads(4, 1 << 16);
	ep = load_abs(big, "split.test", &par, &zp);
	es = load_abs(inc, "split.test", &ser, &zs);
	zone_load_set_threads(0, 0);
	CU_ASSERT_EQUAL_FATAL(ep, 0);
	CU_ASSERT_EQUAL_FATAL(es, 0);
	CU_ASSERT_EQUAL(zp->rr_count, zs->rr_count);
	CU_ASSERT_EQUAL(zp->node_count, zs->node_count);
	CU_ASSERT(zp->rr_count > 55000);
	zone_iter_t ip, is;
	for (const znode_t *a = zone_first(zp, &ip), *b = zone_first(zs, &is); a && b;
	     a = zone_next(&ip), b = zone_next(&is)) {
		CU_ASSERT_EQUAL_FATAL(a->name_len, b->name_len);
		CU_ASSERT_FATAL(memcmp(znode_name(a), znode_name(b), a->name_len) == 0);
		CU_ASSERT_EQUAL_FATAL(a->rrset_count, b->rrset_count);
		for (uint16_t k = 0; k < a->rrset_count; k++) {
			const rrset_wire_t *x = &znode_rrsets(a)[k].set,
					   *y = &znode_rrsets(b)[k].set;
			CU_ASSERT_EQUAL_FATAL(x->data_len, y->data_len);
			CU_ASSERT_FATAL(memcmp(x->data, y->data, x->data_len) == 0);
		}
	}
	/* the multi-line TXT kept its TTL and both strings */
	uint8_t name[NAME_MAXLEN];
	name_from_text("h1.split.test.", NULL, name);
	const znode_t *n = zone_lookup(zp, name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	const zrrset_t *txt = znode_rrset(n, DNS_TYPE_TXT);
	CU_ASSERT_PTR_NOT_NULL_FATAL(txt);
	CU_ASSERT_EQUAL(wire_get_u32(txt->set.data + 4), 60);
	zone_free(zp);
	zone_free(zs);
	unlink(big);
	unlink(inc);
	rmdir(dir);
}

static void test_parallel_load_equals_serial(void)
{
	parallel_load_equals_serial(); /* the scanner, the default */
}

static void test_parallel_load_equals_serial_ldns(void)
{
	zone_load_set_reader(ZONE_READER_LDNS);
	parallel_load_equals_serial();
	zone_load_set_reader(ZONE_READER_ZSCANNER);
}

/* What a range of zone_parallel saw of its thread: its name, whether SIGTERM was blocked. */
typedef struct seen {
	char name[4][16];
	bool term_blocked[4];
	size_t n;
} seen_t;

static void see_thread(void *arg, size_t from, size_t to)
{
	seen_t *s = arg;
	size_t k = from * 4 / s->n; /* ranges are cut evenly: the range's number */
	(void)to;
	sigset_t now;
	pthread_getname_np(pthread_self(), s->name[k], sizeof(s->name[k]));
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	s->term_blocked[k] = sigismember(&now, SIGTERM) == 1;
}

/*
 * The helper threads of a load are named (ps -L, top -H) and take no
 * signal, even when the loading thread takes them (shoald's main thread
 * at start-up); the loading thread runs the first range itself.
 */
static void test_parallel_threads(void)
{
	seen_t s = { .n = 4 * 4096 };
	char own[16];
	sigset_t none;
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	pthread_getname_np(pthread_self(), own, sizeof(own));
	zone_load_set_threads(4, 0);
	CU_ASSERT_EQUAL(zone_parallel(s.n, see_thread, &s), 4);
	zone_load_set_threads(0, 0);
	CU_ASSERT_STRING_EQUAL(s.name[0], own);
	CU_ASSERT_FALSE(s.term_blocked[0]);
	for (size_t k = 1; k < 4; k++) {
		char want[16];
		snprintf(want, sizeof(want), "zone-load-%zu", k);
		CU_ASSERT_STRING_EQUAL(s.name[k], want);
		CU_ASSERT_TRUE(s.term_blocked[k]);
	}
}

/*
 * A NUL octet in a line (found by fuzz_zone): the loader read lines as C
 * strings, took a line starting with NUL for a blank one without its end
 * and skipped the next line with it. The line is an error, named with its
 * number, and the record after it is read.
 */
static void test_nul_in_line(void)
{
	char path[] = "/tmp/shoal-nul.XXXXXX";
	static const char text[] = "@ 60 IN SOA a b 1 2 3 4 5\n"
				   "\0\0junk NS a\n"
				   "a 20 IN A 192.0.2.1\n"
				   "b 20 IN A 192.0.2.2\n";
	CU_ASSERT_EQUAL_FATAL(unit_temp_file(path, text, sizeof(text) - 1), 0);
	msgs_t m;
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(load_abs(path, "nul.test", &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, ":2: a NUL octet in the line"));
	CU_ASSERT_EQUAL(m.errors, 1);
	unlink(path);
}

/* ---- zone data is not trusted: generated zones ---- */

#define GEN_HEAD "$ORIGIN gen.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.1\n"
#define GEN_LINE 6 /* the first line after GEN_HEAD */

/* A zone file for gen.test. that a test writes: GEN_HEAD is in it already. */
static FILE *gen_open(char path[32])
{
	strcpy(path, "/tmp/shoal-gen.XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (f)
		fputs(GEN_HEAD, f);
	return f;
}

/* Close, load with the limits (NULL: defaults) and remove the file. */
static int gen_load(char path[32], FILE *f, const zone_limits_t *limits, msgs_t *m, zone_t **z)
{
	fclose(f);
	memset(m, 0, sizeof(*m));
	*z = NULL;
	int rc = zone_load(path, (const uint8_t *)"\3gen\4test", limits, collect, m, z);
	unlink(path);
	return rc;
}

/* Load GEN_HEAD and `records`; the messages in m. */
static int gen_text(const char *records, const zone_limits_t *limits, msgs_t *m, zone_t **z)
{
	char path[32];
	FILE *f = gen_open(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(records, f);
	return gen_load(path, f, limits, m, z);
}

/*
 * An NS in RFC 3597's generic form with no data, "\# 0": the glue check
 * read its target from the octets after the record (the next record in
 * the builder) and copied up to ~400 octets into a 255-octet buffer on the
 * stack. Such an NS has no name: the load refuses it, with its line.
 */
static void test_ns_without_name(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL(gen_text("sub IN NS \\# 0\n"
				 "x.sub IN TXT \"the record after it\"\n",
				 NULL, &m, &z),
			SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E /tmp/shoal-gen."));
	CU_ASSERT(has_msg(&m, ":6: sub.gen.test.: bad NS RDATA (0 octets): a domain name runs "
			      "past the end of the RDATA"));
	CU_ASSERT_EQUAL(m.errors, 1);
	zone_free(z);
}

/*
 * A DNAME with no target: every query below it made dname_substitute read
 * the octets after the record and send them to the client as the
 * synthesised CNAME's target. CNAME without a target, likewise.
 */
static void test_dname_cname_without_name(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL(gen_text("d IN DNAME \\# 0\n"
				 "e IN TXT \"the neighbour\"\n"
				 "c IN CNAME \\# 0\n"
				 "c2 IN CNAME \\# 2 0100\n",
				 NULL, &m, &z),
			SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, ":6: d.gen.test.: bad DNAME RDATA (0 octets)"));
	CU_ASSERT(has_msg(&m, ":8: c.gen.test.: bad CNAME RDATA (0 octets)"));
	CU_ASSERT(has_msg(&m, ":9: ")); /* ldns itself refuses this one */
	CU_ASSERT_EQUAL(m.errors, 3);
	zone_free(z);
}

/* An empty RRSIG beside a real one took its place in the grouping by type covered. */
static void test_rrsig_without_data(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL(gen_text("ns1 IN RRSIG A 8 3 300 20270101000000 20261201000000 12345 "
				 "gen.test. AQID\n"
				 "ns1 IN RRSIG \\# 0\n"
				 "ns1 IN RRSIG \\# 1 00\n",
				 NULL, &m, &z),
			SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, ":7: ns1.gen.test.: bad RRSIG RDATA (0 octets)"));
	CU_ASSERT(has_msg(&m, ":8: ")); /* ldns itself refuses this one */
	CU_ASSERT_EQUAL(m.errors, 2);
	zone_free(z);
}

/* Generic form for known types: the type's layout, no more and no less; meta types never. */
static void test_generic_form_checked(void)
{
	msgs_t m;
	zone_t *z;
	CU_ASSERT_EQUAL(gen_text("a IN A \\# 0\n"
				 "b IN A \\# 3 0a0000\n"
				 "c IN MX \\# 5 000a000000\n"
				 "d IN TXT \\# 2 0561\n"
				 "e IN TYPE255 \\# 0\n"
				 "f IN TYPE41 \\# 0\n"
				 "g IN SOA \\# 0\n"
				 "h IN AAAA \\# 16 20010db8000000000000000000000001\n"
				 "i IN TYPE65280 \\# 0\n",
				 NULL, &m, &z),
			SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, ":6: a.gen.test.: bad A RDATA (0 octets): a field runs past"));
	/* ldns refuses these itself: only "\# 0" passes it for every type */
	CU_ASSERT(has_msg(&m, ":7: "));
	CU_ASSERT(has_msg(&m, ":9: "));
	/* ldns keeps of c's MX what fits the type (10 and the root) and drops the rest */
	CU_ASSERT(has_msg(&m, ":8: c.gen.test.: bad MX RDATA (5 octets): octets left over"));
	CU_ASSERT(has_msg(&m, ":10: TYPE255 exists only in queries"));
	CU_ASSERT(has_msg(&m, ":11: TYPE41 exists only in queries"));
	CU_ASSERT(has_msg(&m, ":12: g.gen.test.: bad SOA RDATA (0 octets)"));
	CU_ASSERT_EQUAL(m.errors, 7);
	zone_free(z);
	/* right in generic form, it loads as written in the type's own syntax */
	CU_ASSERT_EQUAL(gen_text("a IN A \\# 4 c0000207 ; \\# 9\nb IN NS \\# 5 036e733100\n"
				 "t IN TXT \"\\# 3\" \\\\# 7\n",
				 NULL, &m, &z),
			0);
	CU_ASSERT_EQUAL(m.errors, 0);
	if (z) {
		const znode_t *n = find(z, "b.gen.test.");
		CU_ASSERT(n && (n->flags & ZNODE_DELEG));
	}
	zone_free(z);
}

/* Minimal RDATA that fits the layout of `type` (any octets for an unknown type), in hex. */
static void minimal_rdata(uint16_t type, char *hex, size_t cap)
{
	static const char *const kind[] = {
		[RDATA_U8] = "00",
		[RDATA_U16] = "0000",
		[RDATA_U32] = "00000000",
		[RDATA_U48] = "000000000000",
		[RDATA_U64] = "0000000000000000",
		[RDATA_A] = "00000000",
		[RDATA_AAAA] = "00000000000000000000000000000000",
		[RDATA_NAME_C] = "00",
		[RDATA_NAME] = "00",
		[RDATA_STRING] = "00",
		[RDATA_STRINGS] = "00",
		[RDATA_SALT] = "00",
		[RDATA_HASH] = "0100",
		[RDATA_REST] = "",
		[RDATA_BITMAP] = "",
		[RDATA_SVCPARAMS] = "",
		[RDATA_GATEWAY] = "",
		[RDATA_RELAY] = "",
		[RDATA_A6] = "8000",
		[RDATA_APL] = "",
		[RDATA_HIP] = "00000000",
	};
	const rdata_desc_t *d = rdata_desc(type);
	hex[0] = '\0';
	for (int i = 0; d && i < RDATA_FIELDS_MAX && d->fields[i] != RDATA_END; i++)
		strncat(hex, kind[d->fields[i]], cap - strlen(hex) - 1);
}

/*
 * Every type number from `first` to `last` at the apex, each with RDATA
 * that fits it; without `all`, not CNAME nor the meta types.
 */
static void write_types(FILE *f, unsigned first, unsigned last, bool all)
{
	char hex[128];
	for (unsigned t = first; t <= last; t++) {
		/* SOA and NS are in GEN_HEAD; a CNAME cannot share the apex (nor a meta type) */
		if (t == DNS_TYPE_SOA || t == DNS_TYPE_NS ||
		    (!all && (t == DNS_TYPE_CNAME || rdata_type_is_meta((uint16_t)t))))
			continue;
		minimal_rdata((uint16_t)t, hex, sizeof(hex));
		fprintf(f, "@ IN TYPE%u \\# %zu %s\n", t, strlen(hex) / 2, hex);
	}
}

/*
 * All 65,536 type numbers at the apex: the node's 16-bit RRset count
 * wrapped, the apex lost its SOA and the negative-answer SOA was read
 * through NULL. Now the name has more types than max-types-per-name; and
 * with the limit at its highest, 65535, the count holds every RRset.
 */
static void test_types_per_name(void)
{
	char path[32];
	msgs_t m;
	zone_t *z;
	FILE *f = gen_open(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	write_types(f, 0, UINT16_MAX, true);
	CU_ASSERT_EQUAL(gen_load(path, f, NULL, &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E /tmp/shoal-gen."));
	CU_ASSERT(has_msg(&m, "gen.test.: more than 100 types at one name"));
	CU_ASSERT(has_msg(&m, ": TYPE0 exists only in queries"));
	zone_free(z);

	/* without the meta types, under the highest limit: every RRset counted, SOA kept */
	zone_limits_t most = ZONE_LIMITS_DEFAULT;
	most.max_types_per_name = ZONE_LIMIT_MAX;
	f = gen_open(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	write_types(f, 0, UINT16_MAX, false);
	int rc = gen_load(path, f, &most, &m, &z);
	if (rc != 0)
		has_msg(&m, "(show the messages)");
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(z->apex->rrset_count, 65536 - 9 - 1); /* no meta types, no CNAME */
	CU_ASSERT_PTR_NOT_NULL(znode_rrset(z->apex, DNS_TYPE_SOA));
	CU_ASSERT_PTR_NOT_NULL(znode_rrset(z->apex, 65535));
	CU_ASSERT_EQUAL(z->serial, 1);
	zone_free(z);

	/* the default: 100 types load, 101 do not; a signed type counts twice, as in BIND */
	f = gen_open(path);
	write_types(f, 65000, 65097, false); /* with SOA and NS: 100 */
	CU_ASSERT_EQUAL(gen_load(path, f, NULL, &m, &z), 0);
	zone_free(z);
	f = gen_open(path);
	write_types(f, 65000, 65098, false);
	CU_ASSERT_EQUAL(gen_load(path, f, NULL, &m, &z), SHOAL_EZONE);
	zone_free(z);
	f = gen_open(path);
	write_types(f, 65000, 65097, false);
	fputs("@ IN RRSIG SOA 8 2 300 20270101000000 20261201000000 1 gen.test. AQID\n", f);
	CU_ASSERT_EQUAL(gen_load(path, f, NULL, &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "more than 100 types at one name, a signed type counting twice"));
	zone_free(z);
}

/* `n` A records at x.gen.test. and `sigs` RRSIG(A) of `siglen` signature octets. */
static int gen_big_set(int n, int sigs, int siglen, const zone_limits_t *limits, msgs_t *m,
		       zone_t **z)
{
	char path[32];
	FILE *f = gen_open(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int i = 0; i < n; i++)
		fprintf(f, "x IN A 10.%d.%d.%d\n", i >> 16, (i >> 8) & 255, i & 255);
	for (int i = 0; i < sigs; i++) {
		fprintf(f,
			"x IN RRSIG \\# %d 0001080200000e10000000000000000000%02x0367656e047465737400",
			18 + 10 + siglen, i);
		for (int k = 0; k < siglen; k++)
			fputs("ab", f);
		fputc('\n', f);
	}
	return gen_load(path, f, limits, m, z);
}

/*
 * 4,600 A records at one name passed the store's 65535-octet bound for
 * one RRset (14 octets each) but not a message's (16 each, with the owner
 * compressed): TCP answered TC with no records. Such a set is refused at
 * load, and so is one that fits alone but not with its RRSIGs.
 */
static void test_rrset_too_big_to_send(void)
{
	msgs_t m;
	zone_t *z;
	zone_limits_t many = ZONE_LIMITS_DEFAULT;
	many.max_records_per_type = ZONE_LIMIT_MAX;
	CU_ASSERT_EQUAL(gen_big_set(4600, 0, 0, &many, &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E /tmp/shoal-gen."));
	CU_ASSERT(has_msg(&m, "x.gen.test.: the A RRset (4600 records) takes at least 73628 "
			      "octets, more than one TCP message holds"));
	CU_ASSERT_EQUAL(m.errors, 1);
	zone_free(z);
	CU_ASSERT_EQUAL(gen_big_set(4000, 0, 0, &many, &m, &z), 0);
	zone_free(z);
	CU_ASSERT_EQUAL(gen_big_set(4000, 10, 200, &many, &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "the A RRset (4000 records with its RRSIGs)"));
	zone_free(z);
	/* the default max-records-per-type: 1000 */
	CU_ASSERT_EQUAL(gen_big_set(1000, 0, 0, NULL, &m, &z), 0);
	zone_free(z);
	CU_ASSERT_EQUAL(gen_big_set(1001, 0, 0, NULL, &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "x.gen.test.: more than 1000 A records at one name "
			      "(max-records-per-type)"));
	CU_ASSERT_EQUAL(m.errors, 1);
	zone_free(z);
	zone_limits_t few = ZONE_LIMITS_DEFAULT;
	few.max_records_per_type = 10;
	CU_ASSERT_EQUAL(gen_big_set(5, 11, 10, &few, &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "more than 10 RRSIG records at one name"));
	zone_free(z);
}

/* A scratch folder for files a test writes; rm -r'd by scratch_done. */
static char scratch_dir[64];

static const char *scratch_new(void)
{
	snprintf(scratch_dir, sizeof(scratch_dir), "/tmp/shoal-files.XXXXXX");
	return mkdtemp(scratch_dir);
}

/* The path of `name` in the scratch folder (a static buffer: one at a time). */
static const char *scratch_path(const char *name)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", scratch_dir, name);
	return path;
}

/* Write `text` to the scratch file `name`. */
static void scratch_write(const char *name, const char *text)
{
	FILE *f = fopen(scratch_path(name), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void scratch_done(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch_dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/*
 * Loads that would block for good: a FIFO waits in open() for a writer and
 * /dev/zero never ends. Only regular files are read, and the error names
 * the $INCLUDE's file and line. The alarm turns a load that hangs into a
 * failure of this test rather than of the whole run.
 */
static void test_include_not_regular(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(scratch_new());
	CU_ASSERT_EQUAL_FATAL(mkfifo(scratch_path("fifo"), 0600), 0);
	scratch_write("fifo.zone", "@ 60 IN SOA a b 1 2 3 4 5\n"
				   "@ 60 IN NS a\n"
				   "$INCLUDE fifo\n"
				   "a 60 IN A 192.0.2.1\n");
	scratch_write("zero.zone", "@ 60 IN SOA a b 1 2 3 4 5\n"
				   "@ 60 IN NS a\n"
				   "a 60 IN A 192.0.2.1\n"
				   "$INCLUDE /dev/zero\n");
	scratch_write("dir.zone", "@ 60 IN SOA a b 1 2 3 4 5\n"
				  "$INCLUDE .\n");
	alarm(60);
	msgs_t m;
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(load_abs(scratch_path("fifo.zone"), "files.test", &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E fifo.zone:3: $INCLUDE "));
	CU_ASSERT(has_msg(&m, "/fifo: not a regular file (a FIFO)"));
	CU_ASSERT_EQUAL(m.errors, 1);
	CU_ASSERT_EQUAL(load_abs(scratch_path("zero.zone"), "files.test", &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(
		&m, "E zero.zone:4: $INCLUDE /dev/zero: not a regular file (a character device)"));
	CU_ASSERT_EQUAL(load_abs(scratch_path("dir.zone"), "files.test", &m, &z), SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E dir.zone:2: $INCLUDE "));
	CU_ASSERT(has_msg(&m, ": not a regular file (a directory)"));
	/* the zone's own file: the same refusal, and nothing else is read */
	CU_ASSERT_EQUAL(load_abs(scratch_path("fifo"), "files.test", &m, &z), SHOAL_EIO);
	CU_ASSERT(has_msg(&m, "E /tmp/shoal-files."));
	CU_ASSERT(has_msg(&m, "/fifo: not a regular file (a FIFO)"));
	CU_ASSERT_EQUAL(load_abs("/dev/zero", "files.test", &m, &z), SHOAL_EIO);
	CU_ASSERT(has_msg(&m, "E /dev/zero: not a regular file (a character device)"));
	alarm(0);
	CU_ASSERT_PTR_NULL(z);
	scratch_done();
}

/*
 * $INCLUDE fan-out: five levels of files, each including the next ten
 * times, ask for 10^5 reads from a few hundred octets. The count of
 * $INCLUDEs per zone is bounded (default 256): the one past it is an error
 * at its line, and loading stops soon after (at most 50 errors).
 */
static void test_include_bomb(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(scratch_new());
	for (int level = 1; level <= 5; level++) {
		char name[16], text[512] = "";
		snprintf(name, sizeof(name), "l%d", level);
		for (int i = 0; i < 10; i++) {
			size_t len = strlen(text);
			if (level < 5)
				snprintf(text + len, sizeof(text) - len, "$INCLUDE l%d\n",
					 level + 1);
			else
				snprintf(text + len, sizeof(text) - len, "h%d 60 IN A 192.0.2.1\n",
					 i);
		}
		scratch_write(name, text);
	}
	scratch_write("bomb.zone", "@ 60 IN SOA a b 1 2 3 4 5\n"
				   "@ 60 IN NS a\n"
				   "a 60 IN A 192.0.2.1\n"
				   "$INCLUDE l1\n");
	alarm(60);
	msgs_t m;
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(load_abs(scratch_path("bomb.zone"), "bomb.test", &m, &z), SHOAL_EZONE);
	alarm(0);
	/* counted depth first, the 257th $INCLUDE is line 9 of the third l4 read */
	CU_ASSERT(has_msg(&m, "E l4:9: more than 256 $INCLUDE directives in the zone"));
	CU_ASSERT(m.errors <= 50);
	scratch_done();
}

/* The bound on $INCLUDEs can be set: n of them load, n + 1 do not. */
static void test_include_limit_set(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(scratch_new());
	scratch_write("one", "h 60 IN A 192.0.2.1\n");
	scratch_write("three.zone", "@ 60 IN SOA a b 1 2 3 4 5\n@ 60 IN NS a\n"
				    "$INCLUDE one\n$INCLUDE one\n$INCLUDE one\n");
	scratch_write("four.zone", "@ 60 IN SOA a b 1 2 3 4 5\n@ 60 IN NS a\n"
				   "$INCLUDE one\n$INCLUDE one\n$INCLUDE one\n$INCLUDE one\n");
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	limits.max_includes = 3;
	msgs_t m;
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(load_limited(scratch_path("three.zone"), "limit.test", &limits, &m, &z), 0);
	zone_free(z);
	CU_ASSERT_EQUAL(load_limited(scratch_path("four.zone"), "limit.test", &limits, &m, &z),
			SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E four.zone:6: more than 3 $INCLUDE directives in the zone"));
	/* the limits are the load's own: the next load has the defaults */
	CU_ASSERT_EQUAL(load_abs(scratch_path("four.zone"), "limit.test", &m, &z), 0);
	zone_free(z);
	limits.max_includes = 0;
	CU_ASSERT_EQUAL(load_limited(scratch_path("three.zone"), "limit.test", &limits, &m, &z),
			SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E three.zone:3: more than 0 $INCLUDE directives in the zone"));
	scratch_done();
}

/*
 * The octets read for one zone are bounded, its $INCLUDEs counted each
 * time they are read: a file past the bound is refused before it is read,
 * and so is an $INCLUDE that would take the zone past it.
 */
static void test_zone_size_limit(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(scratch_new());
	char text[4096] = "@ 60 IN SOA a b 1 2 3 4 5\n@ 60 IN NS a\n";
	while (strlen(text) < 1500)
		strcat(text, "a 60 IN A 192.0.2.1 ; padding to make the file longer\n");
	scratch_write("big.zone", text);                /* about 1.5 KB */
	scratch_write("part", "b 60 IN A 192.0.2.2\n"); /* 20 octets */
	scratch_write("inc.zone", "@ 60 IN SOA a b 1 2 3 4 5\n@ 60 IN NS a\n"
				  "$INCLUDE part\n$INCLUDE part\n$INCLUDE part\n");
	size_t inc_size = strlen("@ 60 IN SOA a b 1 2 3 4 5\n@ 60 IN NS a\n"
				 "$INCLUDE part\n$INCLUDE part\n$INCLUDE part\n");
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	limits.max_octets = 1000;
	msgs_t m;
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(load_limited(scratch_path("big.zone"), "size.test", &limits, &m, &z),
			SHOAL_EIO);
	CU_ASSERT(has_msg(&m, "big.zone: 15"));
	CU_ASSERT(has_msg(&m, " octets, more than the 1000 left for the zone's files "
			      "(max-zone-file-size)"));
	/* room for the file and two of its three $INCLUDEs */
	limits.max_octets = inc_size + 2 * 20;
	CU_ASSERT_EQUAL(load_limited(scratch_path("inc.zone"), "size.test", &limits, &m, &z),
			SHOAL_EZONE);
	CU_ASSERT(has_msg(&m, "E inc.zone:5: $INCLUDE "));
	CU_ASSERT(has_msg(&m, "/part: 20 octets, more than the 0 left for the zone's files"));
	CU_ASSERT_EQUAL(m.errors, 1);
	limits.max_octets = inc_size + 3 * 20;
	CU_ASSERT_EQUAL(load_limited(scratch_path("inc.zone"), "size.test", &limits, &m, &z), 0);
	zone_free(z);
	scratch_done();
}

/* Every message of a load counted, the last one kept. */
typedef struct tally {
	unsigned errors, warnings;
	unsigned hidden; /* warnings not shown, as the last line about them says */
	bool cancelled;  /* "loading cancelled" was said */
	char last[1024];
} tally_t;

static void tally(void *arg, bool is_error, const char *msg)
{
	tally_t *t = arg;
	if (is_error)
		t->errors++;
	else
		t->warnings++;
	const char *p = strrchr(msg, ':');
	if (p && !is_error)
		sscanf(p + 1, "%u more warnings not shown", &t->hidden);
	t->cancelled |= is_error && strstr(msg, "loading cancelled") != NULL;
	snprintf(t->last, sizeof(t->last), "%s", msg);
}

#define MANY_OUTSIDE 100000 /* records outside the zone: one warning each */
#define MANY_CUTS    100    /* delegations without glue: one warning each, when compiled */

/* Load a zone of MANY_OUTSIDE + MANY_CUTS warnings (and `errors` CNAME clashes); rc. */
static int load_noisy(int errors, tally_t *t)
{
	char path[32];
	FILE *f = gen_open(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int i = 0; i < MANY_OUTSIDE; i++)
		fprintf(f, "w%d.example.org. A 192.0.2.1\n", i);
	for (int i = 0; i < MANY_CUTS; i++)
		fprintf(f, "cut%d NS ns.cut%d\n", i, i);
	for (int i = 0; i < errors; i++)
		fprintf(f, "c%d CNAME ns1\nc%d A 192.0.2.2\n", i, i);
	fclose(f);
	memset(t, 0, sizeof(*t));
	zone_t *z = NULL;
	int rc = zone_load(path, (const uint8_t *)"\3gen\4test", NULL, tally, t, &z);
	unlink(path);
	zone_free(z);
	return rc;
}

/*
 * Warnings count against a cap as errors do: a file of 10^5 records
 * outside the zone wrote 10^5 lines to the log. At most LOAD_MAX_ERRORS
 * of each are passed on, then one line says how many were not, with both
 * readers, read in one go or in stretches on threads.
 */
static void test_messages_bounded(void)
{
	enum zone_reader readers[] = { ZONE_READER_ZSCANNER, ZONE_READER_LDNS };
	char want[160];
	for (int r = 0; r < 2; r++) {
		zone_load_set_reader(readers[r]);
		for (int threads = 1; threads <= 4; threads += 3) {
			tally_t t;
			zone_load_set_threads(threads, 1 << 16);
			CU_ASSERT_EQUAL(load_noisy(0, &t), 0);
			CU_ASSERT_EQUAL(t.errors, 0);
			CU_ASSERT_EQUAL(t.warnings, LOAD_MAX_ERRORS + 1);
			snprintf(want, sizeof(want), "%u more warnings not shown",
				 MANY_OUTSIDE + MANY_CUTS - LOAD_MAX_ERRORS);
			CU_ASSERT_PTR_NOT_NULL(strstr(t.last, want));
			if (!strstr(t.last, want))
				fprintf(stderr, "  reader %d threads %d: %u warnings, last: %s\n",
					r, threads, t.warnings, t.last);
		}
	}
	zone_load_set_threads(0, 0);
	zone_load_set_reader(ZONE_READER_ZSCANNER);
}

/* The errors the checks find after reading (CNAME and other data) are bounded too. */
static void test_check_errors_bounded(void)
{
	tally_t t;
	CU_ASSERT_EQUAL(load_noisy(1000, &t), SHOAL_EZONE);
	CU_ASSERT_EQUAL(t.errors, LOAD_MAX_ERRORS + 1);
	CU_ASSERT(t.warnings <= LOAD_MAX_ERRORS + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.last, "950 more errors not shown"));
	if (!strstr(t.last, "950 more errors not shown"))
		fprintf(stderr, "  %u errors, last: %s\n", t.errors, t.last);
}

/* A cancelled load stops at its next record and says so (shoald: reload-timeout, stop). */
static void test_load_cancel(void)
{
	msgs_t m;
	zone_t *z = NULL;
	zone_load_cancel(true);
	CU_ASSERT_EQUAL(load("example.zone", "example.com.", &m, &z), SHOAL_ETIMEOUT);
	CU_ASSERT(has_msg(&m, "E example.zone: loading cancelled"));
	CU_ASSERT_PTR_NULL(z);
	zone_load_cancel(false);
	CU_ASSERT_EQUAL(load("example.zone", "example.com.", &m, &z), 0);
	zone_free(z);
}

/* A message callback that cancels the load at the first message it sees. */
static void cancel_at_first(void *arg, bool is_error, const char *msg)
{
	tally(arg, is_error, msg);
	zone_load_cancel(true);
}

#define CANCEL_NAMES 200000

/*
 * A cancel (reload-timeout, stop) seen while the records read are
 * checked and compiled: the compile went on to the end, so an abandoned
 * reload held the next one back for as long. Every name here has a TTL
 * warning, found as its node is checked; the first one cancels. The load
 * stops within a bounded number of names: the warnings counted (shown or
 * not) say how far it went.
 */
static void test_cancel_while_compiling(void)
{
	char path[32];
	FILE *f = gen_open(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int i = 0; i < CANCEL_NAMES; i++)
		fprintf(f, "n%d 300 A 192.0.2.1\nn%d 600 A 192.0.2.2\n", i, i);
	fclose(f);
	tally_t t = { 0 };
	zone_t *z = NULL;
	int rc = zone_load(path, (const uint8_t *)"\3gen\4test", NULL, cancel_at_first, &t, &z);
	zone_load_cancel(false);
	unlink(path);
	CU_ASSERT_EQUAL(rc, SHOAL_ETIMEOUT);
	CU_ASSERT_PTR_NULL(z);
	zone_free(z);
	/* each name one warning, the summary line one more */
	unsigned seen = t.warnings + t.hidden;
	fprintf(stderr, "  rc %d, %u of %u names checked; last: %s\n", rc, seen, CANCEL_NAMES,
		t.last);
	CU_ASSERT(seen <= ZONE_CANCEL_EVERY + 1);
	CU_ASSERT(t.cancelled);
}

/*
 * The same while every name is hashed for NSEC3 (on the load's threads):
 * the warning about an NSEC3 that does not fit the NSEC3PARAM comes right
 * before the hashing, and cancels. Before, the hashing went on and the
 * zone loaded.
 */
static void test_cancel_while_hashing(void)
{
	char path[32];
	FILE *f = gen_open(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("@ NSEC3PARAM 1 0 0 -\n"
	      "00000000000000000000000000000000 NSEC3 1 0 0 - 00000000000000000000000000000001 A\n"
	      "00000000000000000000000000000001 NSEC3 1 0 5 - 00000000000000000000000000000000 A\n",
	      f);
	for (int i = 0; i < CANCEL_NAMES / 4; i++)
		fprintf(f, "n%d A 192.0.2.1\n", i);
	fclose(f);
	tally_t t = { 0 };
	zone_t *z = NULL;
	zone_load_set_threads(4, 0);
	int rc = zone_load(path, (const uint8_t *)"\3gen\4test", NULL, cancel_at_first, &t, &z);
	zone_load_set_threads(0, 0);
	zone_load_cancel(false);
	unlink(path);
	CU_ASSERT_EQUAL(rc, SHOAL_ETIMEOUT);
	CU_ASSERT_PTR_NULL(z);
	CU_ASSERT(t.cancelled);
	CU_ASSERT_EQUAL(t.warnings, 1); /* the NSEC3 that does not fit */
	if (rc != SHOAL_ETIMEOUT)
		fprintf(stderr, "  rc %d, last: %s\n", rc, t.last);
	zone_free(z);
}

/*
 * Asking for huge pages must not split the mapping of an array the
 * builder grows with mremap: mremap refuses a range over two mappings
 * (EFAULT), and a big load then failed now and then with "out of memory",
 * when the kernel had not put the array on a 2 MiB boundary.
 */
/*
 * A zone of `names` hosts as tests/bench/genzone.sh makes them: hN with an
 * A record, every tenth with an AAAA too, built straight from records.
 */
static zone_t *host_zone(size_t names)
{
	uint8_t origin[NAME_MAXLEN], owner[NAME_MAXLEN], rname[NAME_MAXLEN];
	uint8_t rdata[2 * NAME_MAXLEN + 20];
	CU_ASSERT_FATAL(name_from_text("bench.test.", NULL, origin) > 0);
	zbuild_t *b = zbuild_new("hosts.zone", origin, collect, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	int n = 0;
	CU_ASSERT_FATAL(name_from_text("ns1.bench.test.", NULL, rdata) > 0);
	n = (int)name_length(rdata);
	CU_ASSERT_EQUAL(zbuild_add(b, "hosts.zone", 1, "", origin, DNS_TYPE_NS, DNS_CLASS_IN, 3600,
				   rdata, (uint16_t)n),
			0);
	/* SOA: mname ns1, rname hostmaster, serial refresh retry expire minimum */
	CU_ASSERT_FATAL(name_from_text("hostmaster.bench.test.", NULL, rname) > 0);
	memcpy(rdata + n, rname, name_length(rname));
	n += (int)name_length(rname);
	memset(rdata + n, 0, 20);
	rdata[n + 19] = 60;
	CU_ASSERT_EQUAL(zbuild_add(b, "hosts.zone", 1, "", origin, DNS_TYPE_SOA, DNS_CLASS_IN, 3600,
				   rdata, (uint16_t)(n + 20)),
			0);
	for (size_t i = 0; i < names; i++) {
		char text[64];
		snprintf(text, sizeof(text), "h%zu.bench.test.", i);
		CU_ASSERT_FATAL(name_from_text(text, NULL, owner) > 0);
		uint8_t a[4] = { 10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };
		CU_ASSERT_EQUAL(zbuild_add(b, "hosts.zone", 2, "", owner, DNS_TYPE_A, DNS_CLASS_IN,
					   3600, a, 4),
				0);
		uint8_t aaaa[16] = { 0x20,
				     0x01,
				     0x0d,
				     0xb8,
				     [12] = (uint8_t)(i >> 24),
				     (uint8_t)(i >> 16),
				     (uint8_t)(i >> 8),
				     (uint8_t)i };
		if (i % 10 == 0)
			CU_ASSERT_EQUAL(zbuild_add(b, "hosts.zone", 3, "", owner, DNS_TYPE_AAAA,
						   DNS_CLASS_IN, 3600, aaaa, 16),
					0);
	}
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(zbuild_finish(b, &z), 0);
	return z;
}

/*
 * The hash holds every node, found by its own name whatever the tags
 * (16 bits of them: 100,000 names share some), and the RRsets read from
 * the name are the node's. And the store per record does not grow: slot
 * and node together are what the index costs every name.
 */
static void test_store_lookup_every_name(void)
{
	size_t names = 100000;
	zone_t *z = host_zone(names);
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	CU_ASSERT_EQUAL(z->node_count, names + 1);
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it)) {
		if (zone_lookup(z, znode_name(n)) != n) {
			CU_FAIL("a node is not found by its name");
			break;
		}
	}
	for (size_t i = 0; i < names; i += 997) {
		char text[64];
		snprintf(text, sizeof(text), "h%zu.bench.test.", i);
		const znode_t *n = find(z, text);
		CU_ASSERT_PTR_NOT_NULL_FATAL(n);
		const zrrset_t *a = znode_rrset(n, DNS_TYPE_A);
		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		CU_ASSERT_EQUAL(a->set.rr_count, 1);
		CU_ASSERT_EQUAL(wire_get_u16(a->set.data), DNS_TYPE_A);
		CU_ASSERT_EQUAL(a->set.data[10 + 3], (uint8_t)i);
		CU_ASSERT_EQUAL(n->rrset_count, i % 10 == 0 ? 2 : 1);
		CU_ASSERT_EQUAL(znode_rrset(n, DNS_TYPE_AAAA) != NULL, i % 10 == 0);
		snprintf(text, sizeof(text), "h%zu.bench.test.", names + i);
		CU_ASSERT_PTR_NULL(find(z, text));
	}
	/* 116.8 octets a record here before slots held names and nodes lost the RRset pointer */
	double per_record = (double)zone_memory(z) / (double)z->rr_count;
	CU_ASSERT(per_record < 116.0);
	if (per_record >= 116.0)
		fprintf(stderr, "  store: %.1f octets per record\n", per_record);
	zone_free(z);
}

/*
 * A small zone stays small (a million of them): the 7 records of
 * tests/integration/zones/small.zone, every piece of the version (nodes,
 * hash index, tree of names, negative SOA, lineage) in the one 1 KiB
 * block of its arena, and zone_t 192 octets: 1,248 octets in all, what
 * the store took before versions could share.
 */
static void test_small_zone_store(void)
{
	char path[4096];
	unit_src_path(path, sizeof(path), "tests/integration/zones/small.zone");
	msgs_t m;
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(load_abs(path, "z0.bench.", &m, &z), 0);
	CU_ASSERT_EQUAL(z->rr_count, 7);
	CU_ASSERT_EQUAL(sizeof(zone_t), 192);
	size_t all = zone_memory(z) + sizeof(*z);
	CU_ASSERT(all <= 1248);
	if (all > 1248)
		fprintf(stderr, "  a 7-record zone: %zu octets\n", all);
	zone_free(z);
}

static void test_huge_pages_keep_mremap(void)
{
	size_t len = (4u << 20) + 4096;
	uint8_t *m =
		mmap(NULL, len + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(m != MAP_FAILED);
	/* start it 4 KiB past a 2 MiB boundary, whatever mmap gave */
	uint8_t *p = m;
	if (((uintptr_t)m & ((2u << 20) - 1)) == 0) {
		munmap(m, 4096);
		p = m + 4096;
	} else {
		munmap(m + len, 4096);
	}
	zone_huge_pages(p, len);
	memset(p, 1, len);
	void *q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
	CU_ASSERT(q != MAP_FAILED);
	munmap(q != MAP_FAILED ? q : p, q != MAP_FAILED ? 2 * len : len);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_good_zone_loads),
		UNIT_TEST(test_store_flags),
		UNIT_TEST(test_store_canonical_order),
		UNIT_TEST(test_store_walk),
		UNIT_TEST(test_text_and_unknown_types),
		UNIT_TEST(test_rrsig_attached),
		UNIT_TEST(test_rrset_ttl),
		UNIT_TEST(test_include_with_origin),
		UNIT_TEST(test_load_messages),
		UNIT_TEST(test_outside_not_stored),
		UNIT_TEST(test_name_key_order),
		UNIT_TEST(test_parallel_load_equals_serial),
		UNIT_TEST(test_parallel_load_equals_serial_ldns),
		UNIT_TEST(test_parallel_threads),
		UNIT_TEST(test_huge_pages_keep_mremap),
		UNIT_TEST(test_store_lookup_every_name),
		UNIT_TEST(test_nul_in_line),
		UNIT_TEST(test_ns_without_name),
		UNIT_TEST(test_dname_cname_without_name),
		UNIT_TEST(test_rrsig_without_data),
		UNIT_TEST(test_generic_form_checked),
		UNIT_TEST(test_types_per_name),
		UNIT_TEST(test_rrset_too_big_to_send),
		UNIT_TEST(test_include_not_regular),
		UNIT_TEST(test_include_bomb),
		UNIT_TEST(test_include_limit_set),
		UNIT_TEST(test_zone_size_limit),
		UNIT_TEST(test_load_cancel),
		UNIT_TEST(test_messages_bounded),
		UNIT_TEST(test_check_errors_bounded),
		UNIT_TEST(test_cancel_while_compiling),
		UNIT_TEST(test_cancel_while_hashing),
		UNIT_TEST(test_small_zone_store),
		UNIT_END,
	};
	return unit_run(argc, argv, "zone_load", tests);
}
