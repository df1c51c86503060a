/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/write.c: a zone loaded, written and loaded again is
 * the same zone, RRset by RRset and octet by octet; the file is replaced
 * whole or not at all.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/rdata.h"
#include "tests/unit/xfr_test.h"
#include "zone/write.h"

static char tmpdir[] = "/tmp/shoal-write-XXXXXX";

/* Every node, flag and RRset of a and b the same, octet for octet. */
static bool same_zone(const zone_t *a, const zone_t *b)
{
	if (a->node_count != b->node_count || a->rr_count != b->rr_count ||
	    a->serial != b->serial || a->denial != b->denial) {
		fprintf(stderr, "  %zu nodes, %zu records against %zu, %zu\n", a->node_count,
			a->rr_count, b->node_count, b->rr_count);
		return false;
	}
	zone_iter_t ia, ib;
	for (const znode_t *x = zone_first(a, &ia), *y = zone_first(b, &ib); x && y;
	     x = zone_next(&ia), y = zone_next(&ib)) {
		char name[NAME_TEXT_MAX];
		name_to_text(znode_name(x), name, sizeof(name));
		if (x->name_len != y->name_len ||
		    memcmp(znode_name(x), znode_name(y), x->name_len) != 0 ||
		    (x->flags ^ y->flags) & ZNODE_ANSWER_FLAGS ||
		    x->rrset_count != y->rrset_count) {
			fprintf(stderr, "  node %s differs\n", name);
			return false;
		}
		for (uint16_t k = 0; k < x->rrset_count; k++) {
			const rrset_wire_t *s = &znode_rrsets(x)[k].set,
					   *t = &znode_rrsets(y)[k].set;
			if (s->type != t->type || s->rr_count != t->rr_count ||
			    s->data_len != t->data_len || s->name_count != t->name_count ||
			    memcmp(s->data, t->data, s->data_len) != 0) {
				fprintf(stderr, "  %s type %u differs\n", name, s->type);
				return false;
			}
		}
	}
	return true;
}

/* Load, write, load again: the same zone. */
static void round_trip(const char *path, const char *origin)
{
	zone_t *a = xt_load(path, origin);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	char out[4200];
	snprintf(out, sizeof(out), "%s/out.zone", tmpdir);
	CU_ASSERT_EQUAL_FATAL(
		zone_write(a, out, "written by test_xfr_write\nfrom a file", NULL, xt_msg, NULL),
		0);
	zone_t *b = xt_load(out, origin);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_TRUE(same_zone(a, b));
	/* and ldns reads the file as the same records too */
	ldns_rr_list *x = xt_zone_rrs(a), *y = xt_file_rrs(out, origin);
	CU_ASSERT_TRUE(y && xt_same_rrs(x, y));
	ldns_rr_list_deep_free(x);
	ldns_rr_list_deep_free(y);
	zone_unref(a);
	zone_unref(b);
}

static void test_round_trip(void)
{
	/* every answering rule's names, an $INCLUDE, an unknown type in RFC 3597 form */
	round_trip(xt_src("tests/unit/zones/example.zone"), "example.com.");
	round_trip(xt_src("tests/unit/zones/rrsig.zone"), "example.com.");
	/* signed: NSEC, NSEC3 with opt-out, DNSKEY, DS */
	round_trip(xt_src("tests/diff/dnssec/secure.test.zone"), "secure.test.");
	round_trip(xt_src("tests/diff/dnssec/secure3.test.zone"), "secure3.test.");
	round_trip(xt_src("tests/diff/dnssec/signed.secure.test.zone"), "signed.secure.test.");
}

/* Names and strings that need escapes, and types of every shape ldns formats. */
static void test_round_trip_escapes(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/odd.zone", tmpdir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "$ORIGIN odd.test.\n$TTL 3600\n@ SOA ns1 host\\.master 1 2 3 4 5\n@ NS ns1\n"
		   "ns1 A 192.0.2.1\n"
		   "a\\.b\\032c TXT \"quote \\\" semi ; back \\\\ \\255 tab\\009\"\n"
		   "\\@ MX 10 Mail.Odd.Test.\n\\$dollar A 192.0.2.2\n"
		   "caa CAA 0 issue \"ca.example\"\nsrv SRV 1 2 3 ns1\n"
		   "loc LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m\n"
		   "sshfp SSHFP 1 1 dd465c09cfa51fb45020cc83316fff21b9ec74ac\n"
		   "naptr NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp\n"
		   "https HTTPS 1 . alpn=h2,h3 port=8443\n"
		   "hinfo HINFO \"PC\" \"Linux\"\nempty TXT \"\"\n"
		   "unknown TYPE4321 \\# 3 abcdef\nzero TYPE4322 \\# 0\n");
	fclose(f);
	round_trip(path, "odd.test.");
}

/* ---- a zone of every type the RDATA table knows, and every octet in owner names ---- */

#define GEN_VARIANTS 4 /* records per type, each with other edge cases */

static uint32_t gen_state;

/* The next octet of a fixed pseudo-random stream: the same zone on every run. */
static uint8_t gen_octet(void)
{
	gen_state = gen_state * 1103515245u + 12345u;
	return (uint8_t)(gen_state >> 16);
}

/* One RDATA being made, and which variant of each field it takes. */
typedef struct gen {
	uint8_t rd[65535];
	size_t len;
	int v;
} gen_t;

static void gen_put(gen_t *g, const void *p, size_t n)
{
	memcpy(g->rd + g->len, p, n);
	g->len += n;
}

static void gen_u8(gen_t *g, uint8_t c)
{
	g->rd[g->len++] = c;
}

static void gen_u16(gen_t *g, uint16_t n)
{
	gen_u8(g, (uint8_t)(n >> 8));
	gen_u8(g, (uint8_t)n);
}

static void gen_random(gen_t *g, size_t n)
{
	while (n--)
		gen_u8(g, gen_octet());
}

/* Names in RDATA (their case is kept): the root, plain, and octets that need escapes. */
static void gen_name(gen_t *g)
{
	static const char *const names[] = {
		".",
		"Ns1.Every.Test.",
		"a\\,b\\+c\\=d\\000\\255\\127.\\\"\\;\\(\\)\\@\\$\\\\\\.\\032\\009\\010.x.",
		"*.\\@.\\$.-_/~`!#%^&*[]{}<>?|'\\:.y.",
	};
	uint8_t wire[NAME_MAXLEN];
	int n = name_from_text(names[g->v], NULL, wire);
	CU_ASSERT_FATAL(n > 0);
	gen_put(g, wire, (size_t)n);
}

/* A <character-string>: empty, the octets 0-254, 255 and the specials, or random. */
static void gen_string(gen_t *g, int v)
{
	static const char specials[] = "\377\"\\;() @$\t\n\r{}";
	switch (v % GEN_VARIANTS) {
	case 0:
		gen_u8(g, 0);
		break;
	case 1:
		gen_u8(g, 255);
		for (int c = 0; c < 255; c++)
			gen_u8(g, (uint8_t)c);
		break;
	case 2:
		gen_u8(g, sizeof(specials) - 1);
		gen_put(g, specials, sizeof(specials) - 1);
		break;
	default:
		gen_u8(g, 9);
		gen_random(g, 9);
	}
}

/* A one-octet length and that many octets (an NSEC3 salt or hash), at least `min`. */
static void gen_counted(gen_t *g, size_t min)
{
	static const uint8_t lens[GEN_VARIANTS] = { 0, 1, 20, 255 };
	uint8_t n = lens[g->v] < min ? (uint8_t)min : lens[g->v];
	gen_u8(g, n);
	gen_random(g, n);
}

/* Type bit maps (RFC 4034 4.1.2): none, common types, types few readers name, random. */
static void gen_bitmap(gen_t *g)
{
	static const uint8_t common[] = { 0, 6, 0x62, 0x01, 0x80, 0x08, 0x00, 0x03 };
	/* X25 ISDN NSAP PX GPOS; URI CAA AMTRELAY; TA DLV; 65535 */
	static const uint8_t rare[] = { 0, 4,    0x00, 0x00, 0x1a, 0x30, 1,
					1, 0x64, 128,  1,    0xc0, 255,  32 };
	if (g->v == 1)
		gen_put(g, common, sizeof(common));
	if (g->v == 2) {
		gen_put(g, rare, sizeof(rare));
		for (int i = 0; i < 31; i++)
			gen_u8(g, 0);
		gen_u8(g, 0x01);
	}
	if (g->v == 3) {
		gen_u8(g, 0);
		gen_u8(g, 32);
		gen_random(g, 32);
	}
}

/* SvcParams (RFC 9460 2.2): none, well-formed, and values no key's syntax reads. */
static void gen_svcparams(gen_t *g)
{
	static const uint8_t good[] = { 0, 0, 0, 2, 0,   1,                     /* mandatory=alpn */
					0, 1, 0, 6, 2,   'h', '2', 2, 'h', '3', /* alpn=h2,h3 */
					0, 3, 0, 2, 1,   187,                   /* port=443 */
					0, 4, 0, 4, 192, 0,   2,   1 };         /* ipv4hint */
	static const uint8_t odd[] = { 0,    1,    0, 3, 5,   'a', ',', /* alpn, length past */
				       0,    3,    0, 1, 7,             /* port of one octet */
				       0,    6,    0, 3, 1,   2,   3,   /* ipv6hint, 3 octets */
				       0xfd, 0xe8, 0, 2, '"', '\\' };   /* key65000 */
	if (g->v == 1)
		gen_put(g, good, sizeof(good));
	if (g->v == 2)
		gen_put(g, odd, sizeof(odd));
	if (g->v == 3) {
		gen_put(g, (const uint8_t[]){ 0, 2, 0, 2 }, 4); /* no-default-alpn with a value */
		gen_random(g, 2);
		gen_put(g, (const uint8_t[]){ 0xff, 0xff, 0, 0 }, 4);
	}
}

/* A gateway or relay of kind v (none, IPv4, IPv6, a name): the kind is RDATA octet 1. */
static void gen_gateway(gen_t *g, bool relay)
{
	uint8_t kind = (uint8_t)(g->v % 4);
	g->rd[1] = relay ? (uint8_t)((g->rd[1] & 0x80) | kind) : kind;
	if (kind == 1)
		gen_random(g, 4);
	if (kind == 2)
		gen_random(g, 16);
	if (kind == 3)
		gen_name(g);
}

/* A6 (RFC 2874 3.1.1): prefix lengths 0, 64, 127 and 128. */
static void gen_a6(gen_t *g)
{
	static const uint8_t prefixes[GEN_VARIANTS] = { 0, 64, 127, 128 };
	uint8_t prefix = prefixes[g->v];
	gen_u8(g, prefix);
	gen_random(g, (size_t)(128 - prefix + 7) / 8);
	if (prefix)
		gen_name(g);
}

/* APL (RFC 3123 4): none, IPv4 and negated IPv6, an unknown family, a trailing zero octet. */
static void gen_apl(gen_t *g)
{
	static const uint8_t items[GEN_VARIANTS][16] = {
		{ 0 },
		{ 0, 1, 24, 3, 192, 0, 2, 0, 2, 32, 0x84, 0x20, 0x01, 0x0d, 0xb8 },
		{ 0, 3, 8, 2, 0xab, 0xcd },
		{ 0, 1, 32, 4, 10, 0, 0, 0 },
	};
	static const size_t lens[GEN_VARIANTS] = { 0, 15, 6, 8 };
	gen_put(g, items[g->v], lens[g->v]);
}

/* HIP (RFC 8005 5): HIT, key, and 0 to 3 rendezvous servers. */
static void gen_hip(gen_t *g)
{
	uint8_t hit = (uint8_t)(1 + g->v * 5), key = (uint8_t)(g->v * 30);
	gen_u8(g, hit);
	gen_u8(g, gen_octet());
	gen_u16(g, key);
	gen_random(g, (size_t)hit + key);
	for (int i = 0; i < g->v; i++)
		gen_name(g);
}

static void gen_field(gen_t *g, enum rdata_field f)
{
	static const size_t rest[GEN_VARIANTS] = { 0, 1, 40, 300 };
	static const size_t fixed[] = {
		[RDATA_U8] = 1,  [RDATA_U16] = 2, [RDATA_U32] = 4,  [RDATA_U48] = 6,
		[RDATA_U64] = 8, [RDATA_A] = 4,   [RDATA_AAAA] = 16
	};
	if (f < sizeof(fixed) / sizeof(fixed[0]) && fixed[f]) {
		for (size_t i = 0; i < fixed[f]; i++)
			gen_u8(g, g->v == 1 ? 0 : g->v == 2 ? 0xff : gen_octet());
		return;
	}
	switch (f) {
	case RDATA_NAME_C:
	case RDATA_NAME:
		gen_name(g);
		break;
	case RDATA_STRING:
		gen_string(g, g->v);
		break;
	case RDATA_STRINGS:
		for (int i = 0; i <= g->v; i++)
			gen_string(g, g->v + i);
		break;
	case RDATA_SALT:
		gen_counted(g, 0);
		break;
	case RDATA_HASH:
		gen_counted(g, 1);
		break;
	case RDATA_REST:
		gen_random(g, rest[g->v]);
		break;
	case RDATA_BITMAP:
		gen_bitmap(g);
		break;
	case RDATA_SVCPARAMS:
		gen_svcparams(g);
		break;
	case RDATA_GATEWAY:
	case RDATA_RELAY:
		gen_gateway(g, f == RDATA_RELAY);
		break;
	case RDATA_A6:
		gen_a6(g);
		break;
	case RDATA_APL:
		gen_apl(g);
		break;
	case RDATA_HIP:
		gen_hip(g);
		break;
	default:
		CU_FAIL_FATAL("a field kind the generator does not know");
	}
}

/* Variant v of an RDATA of the layout d, checked against the layout. */
static size_t gen_rdata(gen_t *g, const rdata_desc_t *d, int v)
{
	g->len = 0;
	g->v = v;
	for (int i = 0; i < RDATA_FIELDS_MAX && d->fields[i] != RDATA_END; i++)
		gen_field(g, (enum rdata_field)d->fields[i]);
	const char *why = NULL;
	if (rdata_walk(d->type, g->rd, g->len, NULL, 0, &why) < 0)
		fprintf(stderr, "  %s variant %d: %s\n", d->name, v, why);
	CU_ASSERT_FATAL(why == NULL);
	return g->len;
}

/* A name as text with every octet but letters and digits as \DDD: what any reader reads. */
static void put_name_ddd(FILE *f, const uint8_t *name)
{
	for (const uint8_t *p = name; *p; p += 1 + *p) {
		for (uint8_t i = 1; i <= *p; i++)
			fprintf(f, isalnum(p[i]) ? "%c" : "\\%03u", p[i]);
		fputc('.', f);
	}
	if (!*name)
		fputc('.', f);
}

/* One record in RFC 3597's generic form, "\# N hex", under its TYPEnnn. */
static void put_generic(FILE *f, const uint8_t *owner, uint32_t ttl, uint16_t type,
			const uint8_t *rd, size_t len)
{
	put_name_ddd(f, owner);
	fprintf(f, " %u IN TYPE%u \\# %zu", ttl, type, len);
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%s%02x", i % 32 ? "" : " ", rd[i]);
	fputc('\n', f);
}

/*
 * Does ldns read the generic form of this RDATA as these octets? Not
 * always: it reads them through its own idea of the type's fields.
 */
static bool ldns_reads_generic(uint16_t type, const uint8_t *rd, size_t len)
{
	char *text = malloc(64 + 2 * len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	int n = sprintf(text, "x. 0 IN TYPE%u \\# %zu ", type, len);
	for (size_t i = 0; i < len; i++)
		n += sprintf(text + n, "%02x", rd[i]);
	ldns_rr *rr = NULL;
	bool same = ldns_rr_new_frm_str(&rr, text, 0, NULL, NULL) == LDNS_STATUS_OK;
	ldns_buffer *b = ldns_buffer_new(len + 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	same = same && ldns_rr_rdata2buffer_wire(b, rr) == LDNS_STATUS_OK &&
	       ldns_buffer_position(b) == len && memcmp(ldns_buffer_begin(b), rd, len) == 0;
	ldns_buffer_free(b);
	ldns_rr_free(rr);
	free(text);
	return same;
}

/* The zones of test_every_type_and_octet: all records, and those ldns reads. */
typedef struct every {
	FILE *all, *ldns;
	size_t all_count, ldns_count;
	char unread[512]; /* what ldns does not read: TYPE/variant ... */
} every_t;

static void every_add(every_t *e, const uint8_t *owner, uint32_t ttl, uint16_t type,
		      const uint8_t *rd, size_t len, int v)
{
	put_generic(e->all, owner, ttl, type, rd, len);
	e->all_count++;
	if (ldns_reads_generic(type, rd, len)) {
		put_generic(e->ldns, owner, ttl, type, rd, len);
		e->ldns_count++;
	} else {
		size_t n = strlen(e->unread);
		snprintf(e->unread + n, sizeof(e->unread) - n, "%s%u/%d", n ? " " : "", type, v);
	}
}

/*
 * every.test.: per type of the RDATA table (but SOA) and variant v, a
 * record at v<v>.t<type>, with TTLs 0, 3600, 2^31-1 and 2^32-1; per octet
 * c an A record at o<c>o.octets and a TXT record at <c>.single (in any
 * case: the letters meet their capitals). Written in the generic form,
 * which the scanner reads for every type, to e->all, and to e->ldns when
 * ldns reads it.
 */
static void write_every_type(every_t *e)
{
	static const uint32_t ttls[GEN_VARIANTS] = { 0, 3600, 2147483647u, 4294967295u };
	static const char apex[] =
		"every.test. 3600 IN SOA ns1.every.test. hm.every.test. 1 2 3 4 5\n"
		"every.test. 3600 IN NS ns1.every.test.\n";
	fputs(apex, e->all);
	fputs(apex, e->ldns);
	e->all_count = e->ldns_count = 2;
	gen_t g;
	gen_state = 1;
	for (uint32_t t = 0; t <= UINT16_MAX; t++) {
		const rdata_desc_t *d = rdata_desc((uint16_t)t);
		if (!d || t == DNS_TYPE_SOA)
			continue;
		for (int v = 0; v < GEN_VARIANTS; v++) {
			char text[64];
			uint8_t owner[NAME_MAXLEN];
			snprintf(text, sizeof(text), "v%d.t%u.every.test.", v, t);
			CU_ASSERT_FATAL(name_from_text(text, NULL, owner) > 0);
			size_t len = gen_rdata(&g, d, v);
			every_add(e, owner, ttls[v], (uint16_t)t, g.rd, len, v);
		}
	}
	/*
	 * Two TXT records of 250 strings of 255 octets, letters and zeros:
	 * a line longer than ldns reads (LDNS_MAX_LINELEN), so for the scanner
	 * only; the zeros, four characters each as \DDD, do not fit RRTEXT_MAX.
	 */
	for (int k = 0; k < 2; k++) {
		uint8_t owner[NAME_MAXLEN];
		CU_ASSERT_FATAL(
			name_from_text(k ? "zeros.big.every.test." : "letters.big.every.test.",
				       NULL, owner) > 0);
		for (g.len = 0; g.len < 250 * 256; g.len += 256) {
			g.rd[g.len] = 255;
			memset(g.rd + g.len + 1, k ? 0 : 'x', 255);
		}
		put_generic(e->all, owner, 60, DNS_TYPE_TXT, g.rd, g.len);
		e->all_count++;
	}
	for (int c = 0; c < 256; c++) {
		char text[64];
		uint8_t owner[NAME_MAXLEN], single[NAME_MAXLEN];
		snprintf(text, sizeof(text), "o\\%03do.octets.every.test.", c);
		CU_ASSERT_FATAL(name_from_text(text, NULL, owner) > 0);
		snprintf(text, sizeof(text), "\\%03d.single.every.test.", c);
		CU_ASSERT_FATAL(name_from_text(text, NULL, single) > 0);
		uint8_t a[4] = { 10, 0, 0, (uint8_t)c }, txt[2] = { 1, (uint8_t)c };
		every_add(e, owner, 300, DNS_TYPE_A, a, sizeof(a), 0);
		every_add(e, single, 300, DNS_TYPE_TXT, txt, sizeof(txt), 0);
	}
}

/* The zone at path read with reader. */
static zone_t *load_with(const char *path, enum zone_reader reader)
{
	zone_load_set_reader(reader);
	zone_t *z = xt_load(path, "every.test.");
	zone_load_set_reader(ZONE_READER_ZSCANNER);
	return z;
}

/*
 * The zone at `in`, read with the scanner, holds `count` records, and
 * written it reads back as the same zone with the scanner (which reads it
 * at the next start) and, when `ldns_too`, with ldns.
 */
static void write_and_read_back(const char *in, size_t count, bool ldns_too)
{
	char out[4200];
	snprintf(out, sizeof(out), "%s.out", in);
	zone_t *a = load_with(in, ZONE_READER_ZSCANNER);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->rr_count, count);
	CU_ASSERT_EQUAL_FATAL(zone_write(a, out, NULL, NULL, xt_msg, NULL), 0);
	zone_t *zs = load_with(out, ZONE_READER_ZSCANNER);
	CU_ASSERT_TRUE(zs && same_zone(a, zs));
	if (ldns_too) {
		zone_t *ld = load_with(out, ZONE_READER_LDNS);
		CU_ASSERT_TRUE(ld && same_zone(a, ld));
		zone_unref(ld);
	}
	zone_unref(a);
	zone_unref(zs);
}

/*
 * Every type of proto/rdata.c's table, with the edge cases of each field,
 * and owners with every octet: the zone written reads back as the same
 * zone. ldns cannot read some of the records in any form (an ISDN of
 * more than two strings; NSAP-PTR it takes for a string, not a name):
 * those stay out of the zone it reads, and only those.
 */
static void test_every_type_and_octet(void)
{
	char all[4200], ldns[4200];
	snprintf(all, sizeof(all), "%s/every.zone", tmpdir);
	snprintf(ldns, sizeof(ldns), "%s/every-ldns.zone", tmpdir);
	every_t e = { .all = fopen(all, "w"), .ldns = fopen(ldns, "w") };
	CU_ASSERT_PTR_NOT_NULL_FATAL(e.all);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e.ldns);
	write_every_type(&e);
	CU_ASSERT_EQUAL_FATAL(fclose(e.all), 0);
	CU_ASSERT_EQUAL_FATAL(fclose(e.ldns), 0);
	fprintf(stderr, "  not read by ldns: %s\n", e.unread);
	CU_ASSERT_STRING_EQUAL(e.unread, "20/2 20/3 23/1 23/2 23/3");
	/* the letters meet their capitals: 26 owners of two A records, 26 of two TXT */
	write_and_read_back(all, e.all_count, false);
	write_and_read_back(ldns, e.ldns_count, true);
	/* and ldns reads the zone it can as the scanner does */
	zone_t *a = load_with(ldns, ZONE_READER_ZSCANNER), *b = load_with(ldns, ZONE_READER_LDNS);
	CU_ASSERT_TRUE(a && b && same_zone(a, b));
	zone_unref(a);
	zone_unref(b);
}

/* A file at path holding text. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	CU_ASSERT_EQUAL(fclose(f), 0);
}

/* The first line of the file at path, or "" (in a static buffer). */
static const char *first_line(const char *path)
{
	static char line[512];
	line[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	return line;
}

/* How many files of tmpdir have names that start with prefix. */
static int files_named(const char *prefix)
{
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "exit $(ls %s | grep -c '^%s')", tmpdir, prefix);
	int rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/*
 * example.com. loaded, and a file of tmpdir named `name` holding `text`,
 * its path in out[4200] (NULL text: no file).
 */
static zone_t *example_and_file(const char *name, const char *text, char *out)
{
	zone_t *z = xt_load(xt_src("tests/unit/zones/example.zone"), "example.com.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	snprintf(out, 4200, "%s/%s", tmpdir, name);
	if (text)
		write_file(out, text);
	return z;
}

/* The file is replaced whole: no temporary file stays, the mode is kept. */
static void test_atomic_replace(void)
{
	char out[4200];
	zone_t *z = example_and_file("replace.zone", "old contents\n", out);
	CU_ASSERT_EQUAL(chmod(out, 0600), 0);
	CU_ASSERT_EQUAL(zone_write(z, out, NULL, NULL, xt_msg, NULL), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(out, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	/* no comment asked: the SOA first */
	CU_ASSERT_PTR_NOT_NULL(strstr(first_line(out), "SOA"));
	CU_ASSERT_EQUAL(files_named("replace.zone"), 1);

	/* a folder that cannot be written: an error, the old file as it was */
	snprintf(out, sizeof(out), "%s/nosuch/x.zone", tmpdir);
	CU_ASSERT_EQUAL(zone_write(z, out, NULL, NULL, xt_msg, NULL), -ENOENT);
	char ro[4100];
	snprintf(ro, sizeof(ro), "%s/ro", tmpdir);
	CU_ASSERT_EQUAL_FATAL(mkdir(ro, 0755), 0);
	snprintf(out, sizeof(out), "%s/x.zone", ro);
	write_file(out, "kept\n");
	CU_ASSERT_EQUAL(chmod(ro, 0555), 0);
	if (geteuid() != 0) { /* root writes anyway */
		CU_ASSERT_EQUAL(zone_write(z, out, NULL, NULL, xt_msg, NULL), -EACCES);
		CU_ASSERT_STRING_EQUAL(first_line(out), "kept\n");
	}
	CU_ASSERT_EQUAL(chmod(ro, 0755), 0);
	zone_unref(z);
}

/*
 * A new file is made 0666 less the process's umask, as every file a
 * process makes (it was 0644 whatever the umask: readable by all under
 * umask 027 or 077); an existing one keeps its own (test_atomic_replace).
 */
static void test_new_file_mode(void)
{
	static const mode_t masks[] = { 027, 077, 0, 022 };
	char out[4200];
	zone_t *z = example_and_file("mode", NULL, out);
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		snprintf(out, sizeof(out), "%s/mode%03o.zone", tmpdir, (unsigned)masks[i]);
		mode_t was = umask(masks[i]);
		CU_ASSERT_EQUAL(zone_write(z, out, NULL, NULL, xt_msg, NULL), 0);
		umask(was);
		struct stat st;
		CU_ASSERT_EQUAL_FATAL(stat(out, &st), 0);
		if ((st.st_mode & 0777) != (0666 & ~masks[i]))
			fprintf(stderr, "  umask %03o: mode %03o\n", (unsigned)masks[i],
				(unsigned)(st.st_mode & 0777));
		CU_ASSERT_EQUAL(st.st_mode & 0777, 0666 & ~masks[i]);
	}
	zone_unref(z);
}

/*
 * A file that would not read back as the zone is not put in place. Here
 * its text passes the zone's max-zone-file-size (limits.max_octets), so
 * the next start would refuse it: the old file stays, no temporary file
 * is left, and one message says why.
 */
static void test_read_back_refused(void)
{
	char out[4200];
	zone_t *z = example_and_file("refused.zone", "kept\n", out);
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	limits.max_octets = 200;
	xt_msgs_t m = { 0 };
	CU_ASSERT_EQUAL(zone_write(z, out, NULL, &limits, xt_msg, &m), SHOAL_EZONE);
	CU_ASSERT_EQUAL(m.errors, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "refused.zone: not replaced: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "max-zone-file-size"));
	CU_ASSERT_STRING_EQUAL(first_line(out), "kept\n");
	CU_ASSERT_EQUAL(files_named("refused.zone"), 1);
	/* within the default limits it is written */
	CU_ASSERT_EQUAL(zone_write(z, out, NULL, NULL, xt_msg, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(first_line(out), "SOA"));
	zone_unref(z);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_round_trip),
		UNIT_TEST(test_round_trip_escapes),
		UNIT_TEST(test_every_type_and_octet),
		UNIT_TEST(test_atomic_replace),
		UNIT_TEST(test_new_file_mode),
		UNIT_TEST(test_read_back_refused),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "xfr_write", tests);
	return xt_remove_dir(tmpdir, rc);
}
