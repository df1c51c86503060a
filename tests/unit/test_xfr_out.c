/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/xfr_out.c: every message of a transfer is parsed by
 * ldns and the records put together again: an AXFR is compared with the
 * zone file as ldns reads it, an IXFR applied to the old version must give
 * the new one, so the test does not restate the writer.
 */
#include "config.h"

#include <unistd.h>

#include "proto/serial.h"
#include "proto/tsig.h"
#include "tests/unit/xfr_test.h"
#include "zone/journal.h"
#include "zone/xfr_out.h"

static char tmpdir[] = "/tmp/shoal-xfrout-XXXXXX";

/*
 * Set by a test of an AXFR: every message must be as small as owners
 * written as their first label and a pointer make it (owner_bound).
 */
static bool check_owner_cost;

/* What a transfer looked like on the wire. */
typedef struct seen {
	ldns_rr_list *rrs; /* every answer record, in order */
	size_t messages, octets, largest;
	size_t over;      /* messages longer than x->limit */
	size_t multi;     /* messages with more than one record */
	bool header_ok;   /* ID, QR, AA, opcode, RCODE, no TC, in every message */
	bool question_ok; /* the question in the first message only */
	bool opt_first_only;
	size_t uncompressed; /* what the records would take without compression */
	size_t owners_long;  /* messages longer than owner_bound (check_owner_cost) */
} seen_t;

/*
 * Octets of an owner with the owners before it in its message: a pointer
 * when one of them is the same name, its first label and a pointer when
 * one of them is its parent (RFC 1035 4.1.4), else the name whole.
 */
static size_t owner_cost(ldns_rdf *owner, ldns_rr_list *an, size_t i)
{
	ldns_rdf *parent = ldns_dname_left_chop(owner);
	size_t cost = ldns_rdf_size(owner);
	for (size_t k = 0; k < i && cost > 2; k++) {
		ldns_rdf *o = ldns_rr_owner(ldns_rr_list_rr(an, k));
		if (ldns_dname_compare(o, owner) == 0)
			cost = 2;
		else if (parent && ldns_dname_compare(o, parent) == 0)
			cost = 1 + (size_t)ldns_rdf_data(owner)[0] + 2;
	}
	ldns_rdf_deep_free(parent);
	return cost;
}

/*
 * The most a message of an AXFR may take when owners are compressed
 * against the owners before them in the message (owner_cost): the
 * canonical order puts a parent before its children. Only for messages
 * of up to 16384 octets, where every name can be pointed to (offsets up
 * to 0x3fff, RFC 1035 4.1.4). Names in RDATA count whole; header,
 * question and OPT as sent.
 */
static size_t owner_bound(ldns_pkt *p, size_t opt)
{
	size_t n = DNS_HEADER_SIZE + opt;
	ldns_rr_list *qd = ldns_pkt_question(p), *an = ldns_pkt_answer(p);
	for (size_t i = 0; i < ldns_rr_list_rr_count(qd); i++)
		n += ldns_rdf_size(ldns_rr_owner(ldns_rr_list_rr(qd, i))) + 4;
	for (size_t i = 0; i < ldns_rr_list_rr_count(an); i++) {
		ldns_rr *rr = ldns_rr_list_rr(an, i);
		n += owner_cost(ldns_rr_owner(rr), an, i) + 10;
		for (size_t k = 0; k < ldns_rr_rd_count(rr); k++)
			n += ldns_rdf_size(ldns_rr_rdf(rr, k));
	}
	return n;
}

/*
 * Run a transfer to its end in messages of up to cap octets (x->limit
 * unless a record needs more), parsing every message with ldns.
 */
static int run_in(xfr_out_t *x, size_t cap, uint16_t id, tsig_ctx_t *server, tsig_ctx_t *client,
		  seen_t *s)
{
	static uint8_t buf[DNS_TCP_MAX];
	memset(s, 0, sizeof(*s));
	s->rrs = ldns_rr_list_new();
	s->header_ok = s->question_ok = s->opt_first_only = true;
	int len;
	while ((len = xfr_out_next(x, buf, cap)) > 0) {
		if ((size_t)len > cap - x->reserve)
			return SHOAL_ESPACE; /* the room for the TSIG RR was not kept */
		s->over += (size_t)len > x->limit;
		size_t unsigned_len = (size_t)len;
		if (server) {
			len = tsig_sign(server, buf, (size_t)len, cap, 1700000000);
			if (len < 0 || tsig_verify(client, buf, (size_t)len, NULL, 1700000000) < 0)
				return SHOAL_ETSIG;
		}
		ldns_pkt *p = NULL;
		if (ldns_wire2pkt(&p, buf, (size_t)len) != LDNS_STATUS_OK)
			return SHOAL_EMALFORMED;
		s->header_ok &= ldns_pkt_id(p) == id && ldns_pkt_qr(p) && ldns_pkt_aa(p) &&
				!ldns_pkt_tc(p) && ldns_pkt_get_opcode(p) == LDNS_PACKET_QUERY &&
				ldns_pkt_get_rcode(p) == LDNS_RCODE_NOERROR;
		s->question_ok &= ldns_pkt_qdcount(p) == (s->messages == 0);
		s->opt_first_only &= ldns_pkt_edns(p) == (s->messages == 0 && x->edns.present);
		size_t opt = s->messages == 0 ? response_opt_size(&x->edns) : 0;
		if (check_owner_cost && unsigned_len > owner_bound(p, opt)) {
			fprintf(stderr, "  message %zu: %zu octets, owners compressed give %zu\n",
				s->messages, unsigned_len, owner_bound(p, opt));
			s->owners_long++;
		}
		ldns_rr_list *an = ldns_pkt_answer(p);
		for (size_t i = 0; i < ldns_rr_list_rr_count(an); i++) {
			ldns_rr *rr = ldns_rr_list_rr(an, i);
			s->uncompressed += ldns_rdf_size(ldns_rr_owner(rr)) + 10;
			for (size_t k = 0; k < ldns_rr_rd_count(rr); k++)
				s->uncompressed += ldns_rdf_size(ldns_rr_rdf(rr, k));
			ldns_rr_list_push_rr(s->rrs, ldns_rr_clone(rr));
		}
		s->multi += ldns_rr_list_rr_count(an) > 1;
		s->messages++;
		s->octets += (size_t)len;
		if ((size_t)len > s->largest)
			s->largest = (size_t)len;
		ldns_pkt_free(p);
	}
	if (len == 0 && client && tsig_verify_end(client) < 0)
		return SHOAL_ETSIG;
	return len;
}

/* The same in messages of x->limit: a record that does not fit one stops the transfer. */
static int run(xfr_out_t *x, uint16_t id, tsig_ctx_t *server, tsig_ctx_t *client, seen_t *s)
{
	return run_in(x, x->limit, id, server, client, s);
}

/* The first and last records are the SOA; without the last, the zone file's records. */
static bool same_as_file(ldns_rr_list *rrs, const char *path, const char *origin)
{
	size_t n = ldns_rr_list_rr_count(rrs);
	if (n < 2 || ldns_rr_get_type(ldns_rr_list_rr(rrs, 0)) != LDNS_RR_TYPE_SOA ||
	    ldns_rr_compare(ldns_rr_list_rr(rrs, 0), ldns_rr_list_rr(rrs, n - 1)) != 0)
		return false;
	ldns_rr_free(ldns_rr_list_pop_rr(rrs));
	ldns_rr_list *file = xt_file_rrs(path, origin);
	bool same = file && xt_same_rrs(rrs, file);
	ldns_rr_list_deep_free(file);
	return same;
}

/* AXFR of path at each limit, compared with the file. */
static void check_zone(const char *path, const char *origin, size_t limit)
{
	zone_t *z = xt_load(path, origin);
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	uint8_t req[512];
	size_t rlen = xt_request(req, 0x4242, origin, DNS_TYPE_AXFR, 0);
	query_t q;
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, rlen), QUERY_OK);
	xfr_out_t x;
	CU_ASSERT_EQUAL_FATAL(xfr_out_axfr(&x, z, &q, limit, 0, NULL), 0);
	/* the transfer holds its own reference: the loader's may go */
	zone_unref(z);
	memset(req, 0xff, sizeof(req));
	seen_t s;
	CU_ASSERT_EQUAL(run(&x, 0x4242, NULL, NULL, &s), 0);
	CU_ASSERT_TRUE(xfr_out_done(&x));
	CU_ASSERT_EQUAL(xfr_out_next(&x, (uint8_t[DNS_TCP_MAX]){ 0 }, DNS_TCP_MAX), 0);
	CU_ASSERT_TRUE(s.header_ok);
	CU_ASSERT_TRUE(s.question_ok);
	CU_ASSERT(s.largest <= limit);
	CU_ASSERT_EQUAL(x.messages, s.messages);
	CU_ASSERT_EQUAL(x.records, ldns_rr_list_rr_count(s.rrs));
	CU_ASSERT(s.octets < s.uncompressed); /* names were compressed */
	CU_ASSERT_TRUE(same_as_file(s.rrs, path, origin));
	CU_ASSERT_EQUAL(s.owners_long, 0);
	ldns_rr_list_deep_free(s.rrs);
	xfr_out_clear(&x);
}

static void test_axfr_signed_nsec3(void)
{
	check_zone(xt_src("tests/diff/dnssec/secure3.test.zone"), "secure3.test.", DNS_TCP_MAX);
	check_zone(xt_src("tests/diff/dnssec/secure3.test.zone"), "secure3.test.", 1024);
}

static void test_axfr_signed_nsec(void)
{
	check_zone(xt_src("tests/diff/dnssec/secure.test.zone"), "secure.test.", DNS_TCP_MAX);
}

/* A new zone file `name` in the test's folder, its path in path[0..4096). */
static FILE *zone_file(const char *name, char *path)
{
	snprintf(path, 4096, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	return f;
}

/*
 * A zone of every kind of owner: delegations with glue, wildcards, empty
 * non-terminals, compressible and other names in RDATA, and an RRset far
 * bigger than a small message, so it continues over several.
 */
static const char *write_big_zone(int names)
{
	static char path[4096];
	FILE *f = zone_file("big.zone", path);
	fprintf(f, "$ORIGIN big.test.\n$TTL 600\n@ SOA ns1 hm 7 3600 900 604800 300\n"
		   "@ NS ns1\n@ NS ns2.other.test.\nns1 A 192.0.2.1\n@ MX 10 mail\n"
		   "mail A 192.0.2.25\n*.wild TXT \"any\"\na.b.c.ent A 192.0.2.9\n"
		   "sub NS ns.sub\nns.sub A 192.0.2.53\n_sip._udp SRV 0 0 5060 mail\n");
	for (int i = 0; i < 300; i++)
		fprintf(f, "many TXT \"%03d 0123456789012345678901234567890123456789\"\n", i);
	for (int i = 0; i < names; i++) {
		fprintf(f, "h%d A 10.0.%d.%d\n", i, i / 256 % 256, i % 256);
		if (i % 7 == 0)
			fprintf(f, "h%d AAAA 2001:db8::%x\n", i, i);
		if (i % 11 == 0)
			fprintf(f, "c%d CNAME h%d\n", i, i);
		if (i % 13 == 0)
			fprintf(f, "h%d MX 5 h%d.other.test.\n", i, i + 1);
	}
	fclose(f);
	return path;
}

static void test_axfr_many_messages(void)
{
	const char *path = write_big_zone(5000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	check_zone(path, "big.test.", DNS_TCP_MAX);
	check_zone(path, "big.test.", 16383);
	check_zone(path, "big.test.", 512); /* the 300 TXT records span many messages */
}

/*
 * A zone of many names that each have children, so that a message holds
 * far more names than a table of names already written would keep: every
 * owner must still point to its parent, written before it.
 */
static const char *write_tree_zone(int parents)
{
	static char path[4096];
	FILE *f = zone_file("tree.zone", path);
	fprintf(f, "$ORIGIN tree.test.\n$TTL 600\n@ SOA ns1 hm 1 3600 900 604800 300\n"
		   "@ NS ns1\nns1 A 192.0.2.1\n");
	for (int i = 0; i < parents; i++) {
		fprintf(f, "parent%d A 10.1.%d.%d\n", i, i / 256 % 256, i % 256);
		for (int k = 0; k < 3; k++)
			fprintf(f, "child%d.parent%d A 10.2.%d.%d\nchild%d.parent%d TXT \"%d\"\n",
				k, i, i / 256 % 256, i % 256, k, i, k);
	}
	fclose(f);
	return path;
}

/*
 * check_zone with owners compressed against their parents however many
 * names a message holds (RFC 1035 4.1.4): at 16384 octets, as the server
 * sends, and at `small`; then at 65535, where a name after offset 0x3fff
 * cannot be pointed to.
 */
static void check_compressed(const char *path, const char *origin, size_t small)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(path);
	check_owner_cost = true;
	check_zone(path, origin, 16384);
	check_zone(path, origin, small);
	check_owner_cost = false;
	check_zone(path, origin, DNS_TCP_MAX);
}

static void test_axfr_owner_compression(void)
{
	check_compressed(write_tree_zone(2000), "tree.test.", 4096);
}

/*
 * A request of qtype (AXFR, or IXFR from serial) for origin in req[0..cap),
 * signed by client and verified by server, both with key (set up here:
 * tsig_key_clear it), parsed into q.
 */
static void signed_request(tsig_key_t *key, const char *origin, uint16_t qtype, uint32_t serial,
			   uint8_t *req, size_t cap, tsig_ctx_t *client, tsig_ctx_t *server,
			   query_t *q)
{
	CU_ASSERT_EQUAL_FATAL(tsig_key_init(key, "xfr-key", "hmac-sha512",
					    "c2VjcmV0IHNlY3JldCBzZWNyZXQgc2VjcmV0"),
			      0);
	tsig_init(client, key, TSIG_FUDGE_DEFAULT);
	size_t rlen = xt_request(req, 7, origin, qtype, serial);
	int slen = tsig_sign(client, req, rlen, cap, 1700000000);
	CU_ASSERT_FATAL(slen > 0);
	tsig_init(server, key, TSIG_FUDGE_DEFAULT);
	CU_ASSERT_EQUAL_FATAL(tsig_verify(server, req, (size_t)slen, NULL, 1700000000), 0);
	CU_ASSERT_EQUAL_FATAL(query_parse(q, req, (size_t)slen), QUERY_OK);
}

/* signed_request for an AXFR. */
static void signed_axfr(tsig_key_t *key, const char *origin, uint8_t *req, size_t cap,
			tsig_ctx_t *client, tsig_ctx_t *server, query_t *q)
{
	signed_request(key, origin, DNS_TYPE_AXFR, 0, req, cap, client, server, q);
}

/* Every message keeps room for the TSIG RR, and the stream verifies (RFC 8945 5.3.1). */
static void test_axfr_tsig_room(void)
{
	const char *path = write_big_zone(2000);
	zone_t *z = xt_load(path, "big.test.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	tsig_key_t key;
	tsig_ctx_t client, server;
	uint8_t req[1024];
	query_t q;
	signed_axfr(&key, "big.test.", req, sizeof(req), &client, &server, &q);
	/* with EDNS too: the OPT goes in the first message only */
	response_edns_t e = { .present = true, .udp_size = 1232 };
	xfr_out_t x;
	CU_ASSERT_EQUAL_FATAL(xfr_out_axfr(&x, z, &q, 2048, tsig_space(&server), &e), 0);
	seen_t s;
	CU_ASSERT_EQUAL(run(&x, 7, &server, &client, &s), 0);
	CU_ASSERT(s.messages > 10);
	CU_ASSERT(s.largest <= 2048);
	CU_ASSERT(s.multi >= s.messages - 1);
	CU_ASSERT_TRUE(s.opt_first_only);
	CU_ASSERT_TRUE(same_as_file(s.rrs, path, "big.test."));
	ldns_rr_list_deep_free(s.rrs);
	xfr_out_clear(&x);
	zone_unref(z);
	tsig_key_clear(&key);
}

/* A record bigger than the message limit stops the transfer with an error. */
static void test_axfr_record_too_big(void)
{
	char path[4096];
	FILE *f = zone_file("fat.zone", path);
	fprintf(f,
		"$ORIGIN fat.test.\n@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\n"
		"ns1 300 A 192.0.2.1\nfat 300 TXT \"%0200d\" \"%0200d\" \"%0200d\"\n",
		1, 2, 3);
	fclose(f);
	zone_t *z = xt_load(path, "fat.test.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	uint8_t req[512], buf[DNS_TCP_MAX];
	size_t rlen = xt_request(req, 1, "fat.test.", DNS_TYPE_AXFR, 0);
	query_t q;
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, rlen), QUERY_OK);
	xfr_out_t x;
	CU_ASSERT_EQUAL(xfr_out_axfr(&x, z, &q, 20, 0, NULL), SHOAL_EINVAL);
	CU_ASSERT_EQUAL_FATAL(xfr_out_axfr(&x, z, &q, 512, 0, NULL), 0);
	int len = 1;
	for (int i = 0; i < 10 && len > 0; i++)
		len = xfr_out_next(&x, buf, 512);
	CU_ASSERT_EQUAL(len, SHOAL_ESPACE);
	CU_ASSERT_FALSE(xfr_out_done(&x));
	CU_ASSERT_EQUAL(xfr_out_next(&x, buf, sizeof(buf)), SHOAL_EINVAL);
	xfr_out_clear(&x);
	xfr_out_clear(&x); /* twice is fine */
	zone_unref(z);
}

/*
 * A record over the usual message size (a TXT of 40160 octets against
 * 16384) gets a message as big as it needs, up to 65535 octets (RFC 5936
 * 2.2), room for the TSIG RR kept; the transfer goes on and verifies.
 * Without the room to grow, the transfer stops at that record.
 */
static void test_axfr_record_grows(void)
{
	char path[4096];
	FILE *f = zone_file("huge.zone", path);
	fprintf(f, "$ORIGIN huge.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\n"
		   "ns1 A 192.0.2.1\nhuge TXT");
	for (int i = 0; i < 160; i++)
		fprintf(f, " \"%0250d\"", i);
	fprintf(f, "\n");
	for (int i = 0; i < 3000; i++)
		fprintf(f, "h%d A 10.0.%d.%d\n", i, i / 256, i % 256);
	fclose(f);
	zone_t *z = xt_load(path, "huge.test.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	tsig_key_t key;
	tsig_ctx_t client, server;
	uint8_t req[1024];
	query_t q;
	signed_axfr(&key, "huge.test.", req, sizeof(req), &client, &server, &q);
	xfr_out_t x;
	CU_ASSERT_EQUAL_FATAL(xfr_out_axfr(&x, z, &q, 16384, tsig_space(&server), NULL), 0);
	seen_t s;
	CU_ASSERT_EQUAL(run_in(&x, DNS_TCP_MAX, 7, &server, &client, &s), 0);
	CU_ASSERT_EQUAL(s.over, 1); /* that record's message; the others keep the size */
	CU_ASSERT(s.largest > 40160);
	CU_ASSERT(s.messages > 2);
	CU_ASSERT_TRUE(s.header_ok);
	CU_ASSERT_TRUE(same_as_file(s.rrs, path, "huge.test."));
	ldns_rr_list_deep_free(s.rrs);
	xfr_out_clear(&x);

	signed_axfr(&key, "huge.test.", req, sizeof(req), &client, &server, &q);
	CU_ASSERT_EQUAL_FATAL(xfr_out_axfr(&x, z, &q, 16384, tsig_space(&server), NULL), 0);
	CU_ASSERT_EQUAL(run(&x, 7, &server, &client, &s), SHOAL_ESPACE);
	CU_ASSERT(s.messages > 0); /* the records before it went */
	CU_ASSERT_FALSE(xfr_out_done(&x));
	ldns_rr_list_deep_free(s.rrs);
	xfr_out_clear(&x);
	zone_unref(z);
	tsig_key_clear(&key);
}

/*
 * A zone of names that need escapes in text (dots, spaces, quotes, octets
 * 0 and 255 in labels), labels of 63 octets, a name of 255 octets, a
 * wildcard, a delegation with glue, and names in RDATA in the zone and
 * elsewhere, in upper case and lower, repeated from one record to the next.
 */
static const char *write_escape_zone(void)
{
	static char path[4096];
	FILE *f = zone_file("esc.zone", path);
	fprintf(f, "$ORIGIN esc.test.\n$TTL 300\n@ SOA ns1 host\\.master 1 3600 900 604800 300\n"
		   "@ NS ns1\n@ NS NS2.Other.Test.\nns1 A 192.0.2.1\n@ MX 10 a\\.b\n"
		   "a\\.b A 192.0.2.2\nc.a\\.b A 192.0.2.3\nsp\\032ace TXT \"x y\"\n"
		   "\\000nul A 192.0.2.4\n\\255\\001.bin A 192.0.2.5\nback\\\\slash CNAME a\\.b\n"
		   "quote\\\" MX 10 c.a\\.b\n*.wild A 192.0.2.6\n*.wild MX 10 Mail.Wild\n"
		   "x.wild A 192.0.2.7\nsub NS ns.sub\nsub NS ns.other.test.\n"
		   "ns.sub A 192.0.2.53\nns.sub AAAA 2001:db8::53\nptr PTR a\\.b.esc.test.\n"
		   "_x._tcp SRV 0 0 1 a\\.b\ndn DNAME other.test.\n");
	/* 63-octet labels, and a name of 255 octets, 124 labels */
	char l63[64], deep[256] = "xy";
	memset(l63, 'q', 63);
	l63[63] = 0;
	fprintf(f, "%s.%s A 192.0.2.8\n%s.%s.%s A 192.0.2.9\n", l63, l63, l63, l63, l63);
	for (int i = 0; i < 121; i++)
		strcat(deep, ".d");
	fprintf(f, "%s A 192.0.2.10\n", deep);
	for (int i = 0; i < 300; i++)
		fprintf(f, "dl%d NS ns%d.hoster%d.example.\ndl%d NS NS%d.Hoster%d.Example.\n", i,
			i % 2, i % 7, i, i % 2 + 1, i % 7);
	fclose(f);
	return path;
}

/* Names that need escapes, deep names, names in RDATA of every case. */
static void test_axfr_escapes(void)
{
	check_compressed(write_escape_zone(), "esc.test.", 700);
}

/* The versions 1, 2, 3 of j.test. and a journal of the changes between them. */
static zone_t *v[4];
static journal_t *journal;

static void ixfr_setup(void)
{
	for (int i = 1; i <= 3; i++)
		v[i] = xt_load(xt_write_version(tmpdir, i), "j.test.");
	journal = journal_new(1 << 20);
	for (int i = 1; i < 3; i++) {
		changeset_t *cs = NULL;
		if (v[i] && v[i + 1] && changeset_diff(v[i], v[i + 1], 0, &cs) == 0)
			journal_add(journal, cs);
	}
}

static void ixfr_teardown(void)
{
	for (int i = 1; i <= 3; i++)
		zone_unref(v[i]);
	journal_unref(journal);
}

/*
 * What a server does with an IXFR request for version 3: the client's
 * serial from the request, then the changes since, the SOA alone when the
 * client is not older, or the whole zone when the history does not reach
 * back. Returns what xfr_out_* returned.
 */
static int ixfr_start(xfr_out_t *x, uint32_t client, bool condense, size_t limit)
{
	uint8_t req[512];
	size_t rlen = xt_request(req, 0x1995, "j.test.", DNS_TYPE_IXFR, client);
	query_t q;
	if (query_parse(&q, req, rlen) != QUERY_OK)
		return SHOAL_EMALFORMED;
	uint32_t serial;
	int err = xfr_request_serial(&q, &serial);
	if (err < 0)
		return err;
	if (!serial_lt(serial, v[3]->serial))
		return xfr_out_ixfr(x, v[3], NULL, &q, limit, 0, NULL);
	xfr_changes_t c;
	err = journal_changes(journal, serial, v[3]->serial, condense, &c);
	if (err == SHOAL_ENOTFOUND)
		return xfr_out_axfr(x, v[3], &q, limit, 0, NULL);
	return err < 0 ? err : xfr_out_ixfr(x, v[3], &c, &q, limit, 0, NULL);
}

/*
 * The records of an IXFR stream s, applied to the records of `from`, give
 * those of `to`; s's records are freed.
 */
static void check_applied(seen_t *s, const zone_t *from, const zone_t *to)
{
	ldns_rr_list *zone = xt_zone_rrs(from), *want = xt_zone_rrs(to);
	CU_ASSERT_TRUE(xt_apply_ixfr(zone, s->rrs));
	CU_ASSERT_TRUE(xt_same_rrs(zone, want));
	ldns_rr_list_deep_free(zone);
	ldns_rr_list_deep_free(want);
	ldns_rr_list_deep_free(s->rrs);
}

/* An IXFR from the client's version, applied to it, gives version 3. */
static void check_ixfr(int client, bool condense, size_t limit, size_t *messages)
{
	xfr_out_t x;
	CU_ASSERT_EQUAL_FATAL(ixfr_start(&x, (uint32_t)client, condense, limit), 0);
	CU_ASSERT_TRUE(x.ixfr);
	seen_t s;
	CU_ASSERT_EQUAL(run(&x, 0x1995, NULL, NULL, &s), 0);
	CU_ASSERT_TRUE(s.header_ok);
	CU_ASSERT_TRUE(s.question_ok);
	CU_ASSERT(s.largest <= limit);
	*messages = s.messages;
	/* SOA 3, SOA of the client's version, ..., SOA 3 (RFC 1995 4) */
	ldns_rr *first = ldns_rr_list_rr(s.rrs, 0), *second = ldns_rr_list_rr(s.rrs, 1);
	CU_ASSERT_EQUAL(ldns_rr_get_type(first), LDNS_RR_TYPE_SOA);
	CU_ASSERT_EQUAL(ldns_rdf2native_int32(ldns_rr_rdf(first, 2)), 3);
	CU_ASSERT_EQUAL(ldns_rr_get_type(second), LDNS_RR_TYPE_SOA);
	CU_ASSERT_EQUAL(ldns_rdf2native_int32(ldns_rr_rdf(second, 2)), (uint32_t)client);
	size_t soas = 0;
	for (size_t i = 0; i < ldns_rr_list_rr_count(s.rrs); i++)
		soas += ldns_rr_get_type(ldns_rr_list_rr(s.rrs, i)) == LDNS_RR_TYPE_SOA;
	size_t changesets = condense ? 1 : (size_t)(3 - client);
	CU_ASSERT_EQUAL(soas, 2 + 2 * changesets);
	check_applied(&s, v[client], v[3]);
	xfr_out_clear(&x);
}

static void test_ixfr_changes(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(v[3]);
	size_t one, many;
	check_ixfr(2, false, DNS_TCP_MAX, &one);
	CU_ASSERT_EQUAL(one, 1);
	check_ixfr(1, false, DNS_TCP_MAX, &one);
	check_ixfr(1, true, DNS_TCP_MAX, &one);
	/* a small limit: the sequence goes over many messages */
	check_ixfr(1, false, 128, &many);
	CU_ASSERT(many > 3);
}

/*
 * Version 2 of the zone in `path`, written to tmpdir/name: the serial
 * one more, every third record below the apex gone, a few added (one
 * whose name needs escapes, a wildcard). Returns its path.
 */
static const char *write_changed(const char *path, const char *origin, const char *name)
{
	static char out[4096];
	snprintf(out, sizeof(out), "%s/%s", tmpdir, name);
	ldns_rr_list *rrs = xt_file_rrs(path, origin);
	FILE *f = fopen(out, "w");
	if (!rrs || !f) {
		if (f)
			fclose(f);
		ldns_rr_list_deep_free(rrs);
		return NULL;
	}
	ldns_rdf *apex = ldns_dname_new_frm_str(origin);
	for (size_t i = 0; i < ldns_rr_list_rr_count(rrs); i++) {
		ldns_rr *rr = ldns_rr_list_rr(rrs, i);
		if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA) {
			uint32_t serial = ldns_rdf2native_int32(ldns_rr_rdf(rr, 2));
			ldns_rdf_deep_free(ldns_rr_set_rdf(
				rr, ldns_native2rdf_int32(LDNS_RDF_TYPE_INT32, serial + 1), 2));
		} else if (i % 3 == 0 && ldns_dname_compare(ldns_rr_owner(rr), apex) != 0) {
			continue;
		}
		/* ldns leaves a quote in an owner as it is: escape it (RFC 1035 5.1) */
		char *text = ldns_rr2str(rr);
		for (char *c = text; *c && *c != '\t'; c++)
			fprintf(f, *c == '"' ? "\\%c" : "%c", *c);
		fputs(strchr(text, '\t'), f);
		free(text);
	}
	fprintf(f, "new\\.name.%s 300 IN MX 10 mail.new\\.name.%s\n*.added.%s 300 IN TXT \"w\"\n",
		origin, origin, origin);
	fclose(f);
	ldns_rdf_deep_free(apex);
	ldns_rr_list_deep_free(rrs);
	return out;
}

/*
 * IXFR from the zone in path to its changed version (write_changed), in
 * messages of limit, signed or not: applied to the old version's records,
 * the records parsed back give the new version's.
 */
static void check_ixfr_of(const char *path, const char *origin, size_t limit, bool tsig)
{
	zone_t *v1 = xt_load(path, origin);
	zone_t *v2 = xt_load(write_changed(path, origin, "changed.zone"), origin);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v2);
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL_FATAL(changeset_diff(v1, v2, 0, &cs), 0);
	journal_t *j = journal_new(1 << 24);
	journal_add(j, cs);
	xfr_changes_t c;
	CU_ASSERT_EQUAL_FATAL(journal_changes(j, v1->serial, v2->serial, false, &c), 0);
	tsig_key_t key;
	tsig_ctx_t client, server;
	uint8_t req[1024];
	query_t q;
	size_t rlen = xt_request(req, 7, origin, DNS_TYPE_IXFR, v1->serial);
	if (tsig)
		signed_request(&key, origin, DNS_TYPE_IXFR, v1->serial, req, sizeof(req), &client,
			       &server, &q);
	else
		CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, rlen), QUERY_OK);
	xfr_out_t x;
	CU_ASSERT_EQUAL_FATAL(
		xfr_out_ixfr(&x, v2, &c, &q, limit, tsig ? tsig_space(&server) : 0, NULL), 0);
	seen_t s;
	CU_ASSERT_EQUAL(run(&x, 7, tsig ? &server : NULL, tsig ? &client : NULL, &s), 0);
	CU_ASSERT_TRUE(s.header_ok);
	CU_ASSERT(s.octets < s.uncompressed);
	check_applied(&s, v1, v2);
	xfr_out_clear(&x);
	journal_unref(j);
	zone_unref(v1);
	zone_unref(v2);
	if (tsig)
		tsig_key_clear(&key);
}

/* IXFR of zones with escapes, wildcards, delegations and DNSSEC records, signed and not. */
static void test_ixfr_round_trip(void)
{
	const char *esc = write_escape_zone();
	CU_ASSERT_PTR_NOT_NULL_FATAL(esc);
	check_ixfr_of(esc, "esc.test.", 16384, false);
	check_ixfr_of(esc, "esc.test.", 600, true);
	const char *nsec3 = xt_src("tests/diff/dnssec/secure3.test.zone");
	check_ixfr_of(nsec3, "secure3.test.", 16384, true);
	check_ixfr_of(nsec3, "secure3.test.", 1024, false);
	check_ixfr_of(xt_src("tests/diff/dnssec/secure.test.zone"), "secure.test.", 2048, true);
}

/* One message holding the one SOA of version 3. */
static void check_soa_only(uint32_t client)
{
	xfr_out_t x;
	CU_ASSERT_EQUAL_FATAL(ixfr_start(&x, client, true, DNS_TCP_MAX), 0);
	seen_t s;
	CU_ASSERT_EQUAL(run(&x, 0x1995, NULL, NULL, &s), 0);
	CU_ASSERT_EQUAL(s.messages, 1);
	CU_ASSERT_EQUAL(ldns_rr_list_rr_count(s.rrs), 1);
	ldns_rr *soa = ldns_rr_list_rr(s.rrs, 0);
	CU_ASSERT_EQUAL(ldns_rr_get_type(soa), LDNS_RR_TYPE_SOA);
	CU_ASSERT_EQUAL(ldns_rdf2native_int32(ldns_rr_rdf(soa, 2)), 3);
	ldns_rr_list_deep_free(s.rrs);
	xfr_out_clear(&x);
}

/* RFC 1995 2: a client as new as the server, or newer, gets the SOA alone. */
static void test_ixfr_up_to_date(void)
{
	check_soa_only(3);
	check_soa_only(7);               /* a serial from the future */
	check_soa_only(3 + SERIAL_HALF); /* nor newer nor older (RFC 1982) */
}

/* History that does not reach back: the whole zone, AXFR-style (RFC 1995 4). */
static void test_ixfr_falls_back(void)
{
	xfr_out_t x;
	CU_ASSERT_EQUAL_FATAL(ixfr_start(&x, 0xfffffff0, false, DNS_TCP_MAX), 0);
	CU_ASSERT_FALSE(x.ixfr);
	seen_t s;
	CU_ASSERT_EQUAL(run(&x, 0x1995, NULL, NULL, &s), 0);
	CU_ASSERT_TRUE(same_as_file(s.rrs, xt_write_version(tmpdir, 3), "j.test."));
	ldns_rr_list_deep_free(s.rrs);
	xfr_out_clear(&x);
	/* the question says IXFR, as it came */
	uint8_t buf[DNS_TCP_MAX];
	CU_ASSERT_EQUAL_FATAL(ixfr_start(&x, 0xfffffff0, false, DNS_TCP_MAX), 0);
	int len = xfr_out_next(&x, buf, sizeof(buf));
	CU_ASSERT(len > 0);
	ldns_pkt *p = NULL;
	CU_ASSERT_EQUAL_FATAL(ldns_wire2pkt(&p, buf, (size_t)len), LDNS_STATUS_OK);
	CU_ASSERT_EQUAL(ldns_rr_get_type(ldns_rr_list_rr(ldns_pkt_question(p), 0)),
			LDNS_RR_TYPE_IXFR);
	ldns_pkt_free(p);
	xfr_out_clear(&x);
	/* changes that do not lead to the zone served are refused */
	xfr_changes_t c;
	CU_ASSERT_EQUAL_FATAL(journal_changes(journal, 1, 2, false, &c), 0);
	uint8_t req[512];
	query_t q;
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, xt_request(req, 1, "j.test.", DNS_TYPE_IXFR, 1)),
			      QUERY_OK);
	CU_ASSERT_EQUAL(xfr_out_ixfr(&x, v[3], &c, &q, DNS_TCP_MAX, 0, NULL), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(c.count, 0); /* taken over, and dropped */
}

/* The client's serial in the request's authority section (RFC 1995 3). */
static void test_request_serial(void)
{
	uint8_t req[512];
	query_t q;
	uint32_t serial = 0;
	size_t len = xt_request(req, 1, "J.Test.", DNS_TYPE_IXFR, 0xdeadbeef);
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, len), QUERY_OK);
	CU_ASSERT_EQUAL(xfr_request_serial(&q, &serial), 0);
	CU_ASSERT_EQUAL(serial, 0xdeadbeef);
	/* no authority section */
	len = xt_request(req, 1, "j.test.", DNS_TYPE_AXFR, 0);
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, len), QUERY_OK);
	CU_ASSERT_EQUAL(xfr_request_serial(&q, &serial), SHOAL_ENOTFOUND);
	/* the SOA of another name, another type, a wrong RDLENGTH */
	len = xt_request(req, 1, "j.test.", DNS_TYPE_IXFR, 5);
	size_t owner_at = len - 34; /* a pointer, 10 octets, 22 of RDATA */
	req[owner_at + 1] = 14;     /* a pointer to "test." */
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, len), QUERY_OK);
	CU_ASSERT_EQUAL(xfr_request_serial(&q, &serial), SHOAL_EMALFORMED);
	len = xt_request(req, 1, "j.test.", DNS_TYPE_IXFR, 5);
	req[owner_at + 3] = DNS_TYPE_A;
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, len), QUERY_OK);
	CU_ASSERT_EQUAL(xfr_request_serial(&q, &serial), SHOAL_EMALFORMED);
	len = xt_request(req, 1, "j.test.", DNS_TYPE_IXFR, 5);
	req[owner_at + 11] = 21;
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, len), QUERY_OK);
	CU_ASSERT_EQUAL(xfr_request_serial(&q, &serial), SHOAL_EMALFORMED);
	/* names in the SOA RDATA may be compressed */
	len = xt_request(req, 1, "j.test.", DNS_TYPE_IXFR, 77);
	req[owner_at + 11] = 23; /* MNAME becomes a pointer to the apex */
	memmove(req + owner_at + 13, req + owner_at + 12, 22);
	req[owner_at + 12] = 0xc0;
	req[owner_at + 13] = 0x0c;
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, len + 1), QUERY_OK);
	CU_ASSERT_EQUAL(xfr_request_serial(&q, &serial), 0);
	CU_ASSERT_EQUAL(serial, 77);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	ixfr_setup();
	static const unit_test_t tests[] = {
		UNIT_TEST(test_axfr_signed_nsec3),   UNIT_TEST(test_axfr_signed_nsec),
		UNIT_TEST(test_axfr_many_messages),  UNIT_TEST(test_axfr_owner_compression),
		UNIT_TEST(test_axfr_escapes),        UNIT_TEST(test_axfr_tsig_room),
		UNIT_TEST(test_axfr_record_too_big), UNIT_TEST(test_axfr_record_grows),
		UNIT_TEST(test_ixfr_changes),        UNIT_TEST(test_ixfr_round_trip),
		UNIT_TEST(test_ixfr_up_to_date),     UNIT_TEST(test_ixfr_falls_back),
		UNIT_TEST(test_request_serial),      UNIT_END,
	};
	int rc = unit_run(argc, argv, "xfr_out", tests);
	ixfr_teardown();
	return xt_remove_dir(tmpdir, rc);
}
