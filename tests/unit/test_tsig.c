/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for proto/tsig.c: round trips, ldns as the independent checker
 * both ways (single messages and streams), every TSIG error, truncation, and
 * malformed TSIG RRs read without going out of bounds.
 */
#include <ldns/ldns.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/dns.h"
#include "proto/tsig.h"
#include "tests/unit/unit.h"

#define B64_256 "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
#define B64_512                                                                        \
	"ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTlJWWl5iZmpuc" \
	"nZ6foKGiow=="
/* 200 octets: longer than either hash's block, so HMAC hashes it first */
#define B64_LONG                                                                       \
	"AAcOFRwjKjE4P0ZNVFtiaXB3foWMk5qhqK+2vcTL0tng5+71/AMKERgfJi00O0JJUFdeZWxzeoGI" \
	"j5adpKuyucDHztXc4+rx+P8GDRQbIikwNz5FTFNaYWhvdn2Ei5KZoKeutbzDytHY3+bt9PsCCRAX" \
	"HiUsMzpBSE9WXWRrcnmAh46VnKOqsbi/xs3U2+Lp8Pf+BQwTGiEoLzY9REtSWWBnbnV8g4qRmJ+m" \
	"rbS7wsnQ197l7PP6AQgPFh0kKzI5QEdOVVxjanE="
#define B64_OTHER "AgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICE="
#define B64_1     "MDEyMzQ1Njc4OTo7PD0+P0BBQkM="
#define B64_224   "QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaWw=="
#define B64_384   "UFFSU1RVVldYWVpbXF1eX2BhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ent8fX5/"

#define T0  1700000000u /* a fixed "now" where no other program checks the time */
#define BUF 4096

static const uint8_t QNAME[] = "\7example\3com";

/*
 * The algorithms (RFC 8945 6), with the ldns name and a secret for each,
 * and whether the ldns of the system has it to check: Debian 12's lacks
 * hmac-sha224 and hmac-sha384 ("Unknown cryptographic algorithm"), which
 * tests/xfr/tsig_algorithms.sh checks with Knot DNS and BIND instead.
 */
static const struct {
	const char *alg, *ldns_alg, *secret;
	bool ldns;
} ALGS[] = {
	{ "hmac-sha256", "hmac-sha256.", B64_256, true },
	{ "hmac-sha512", "hmac-sha512.", B64_512, true },
	{ "hmac-sha1", "hmac-sha1.", B64_1, true },
	{ "hmac-sha224", "hmac-sha224.", B64_224, false },
	{ "hmac-sha384", "hmac-sha384.", B64_384, false },
};
#define ALG_COUNT (sizeof(ALGS) / sizeof(ALGS[0]))

static void key_or_die(tsig_key_t *key, const char *name, const char *alg, const char *secret)
{
	CU_ASSERT_EQUAL_FATAL(tsig_key_init(key, name, alg, secret), 0);
}

/* A query (or AXFR request) for example.com; returns its length. */
static size_t make_query(uint8_t *b, uint16_t id, uint16_t qtype)
{
	memset(b, 0, DNS_HEADER_SIZE);
	b[0] = (uint8_t)(id >> 8);
	b[1] = (uint8_t)id;
	b[5] = 1;
	size_t n = DNS_HEADER_SIZE;
	memcpy(b + n, QNAME, sizeof(QNAME));
	n += sizeof(QNAME);
	b[n++] = (uint8_t)(qtype >> 8);
	b[n++] = (uint8_t)qtype;
	b[n++] = 0;
	b[n++] = DNS_CLASS_IN;
	return n;
}

/* Message `index` of a response to a query made by make_query: `records` A records. */
static size_t make_response(uint8_t *b, uint16_t id, int index, int records)
{
	size_t n = make_query(b, id, DNS_TYPE_AXFR);
	b[2] = (uint8_t)((DNS_FLAG_QR | DNS_FLAG_AA) >> 8);
	b[7] = (uint8_t)records;
	for (int i = 0; i < records; i++) {
		const uint8_t rr[] = {
			0xc0, 12, 0, DNS_TYPE_A, 0, DNS_CLASS_IN,   0,         0, 0x0e,
			0x10, 0,  4, 192,        0, (uint8_t)index, (uint8_t)i
		};
		memcpy(b + n, rr, sizeof(rr));
		n += sizeof(rr);
	}
	return n;
}

/* Sign as a client: a fresh context for key, the request signed at now. */
static size_t client_sign(tsig_ctx_t *ctx, const tsig_key_t *key, uint8_t *b, size_t len,
			  uint64_t now)
{
	tsig_init(ctx, key, TSIG_FUDGE_DEFAULT);
	int n = tsig_sign(ctx, b, len, BUF, now);
	CU_ASSERT_FATAL(n > (int)len);
	return (size_t)n;
}

/* Verify as a server holding keys[0..count): find, look up, verify. */
static int server_verify(tsig_ctx_t *ctx, const tsig_key_t *keys, size_t count, const uint8_t *b,
			 size_t len, uint64_t now)
{
	tsig_rr_t rr;
	int ret = tsig_find(b, len, &rr);
	if (ret < 0)
		return ret;
	tsig_init(ctx, tsig_key_find(keys, count, rr.name), TSIG_FUDGE_DEFAULT);
	return tsig_verify(ctx, b, len, &rr, now);
}

/* The TSIG RR of a message, which must have one. */
static tsig_rr_t tsig_of(const uint8_t *b, size_t len)
{
	tsig_rr_t rr;
	CU_ASSERT_EQUAL_FATAL(tsig_find(b, len, &rr), 0);
	return rr;
}

/* A key and a request signed with it by a client: where most tests start. */
typedef struct fixture {
	tsig_key_t key; /* "xfr-key." */
	tsig_ctx_t client, server;
	uint8_t req[BUF], resp[BUF];
	size_t qlen; /* the request without its TSIG RR */
	size_t len;  /* the signed request */
} fixture_t;

/* Start f with a key of ALGS[alg] and a request (id, qtype) signed at now. */
static void start(fixture_t *f, size_t alg, uint16_t id, uint16_t qtype, uint64_t now)
{
	key_or_die(&f->key, "xfr-key.", ALGS[alg].alg, ALGS[alg].secret);
	f->qlen = make_query(f->req, id, qtype);
	f->len = client_sign(&f->client, &f->key, f->req, f->qlen, now);
}

/*
 * The server's NOTAUTH answer after a failed tsig_verify, signed at now into
 * resp; checks it fits tsig_space, stores its length in len, returns its TSIG RR.
 */
static tsig_rr_t error_answer(tsig_ctx_t *server, uint8_t *resp, uint16_t id, uint64_t now,
			      size_t *len)
{
	size_t rlen = make_response(resp, id, 0, 0);
	resp[3] = DNS_RCODE_NOTAUTH;
	size_t space = tsig_space(server);
	int n = tsig_sign(server, resp, rlen, BUF, now);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT((size_t)n <= rlen + space);
	*len = (size_t)n;
	return tsig_of(resp, *len);
}

/* --- ldns, the independent implementation --- */

static ldns_pkt *to_ldns(const uint8_t *wire, size_t len)
{
	ldns_pkt *p = NULL;
	CU_ASSERT_EQUAL_FATAL(ldns_wire2pkt(&p, wire, len), LDNS_STATUS_OK);
	return p;
}

/* An rdf whose wire form is a MAC with its length (RFC 8945 4.3.1), then more octets. */
static ldns_rdf *prior_rdf(const uint8_t *mac, size_t mac_len, const uint8_t *more, size_t more_len)
{
	uint8_t *data = malloc(2 + mac_len + more_len);
	data[0] = (uint8_t)(mac_len >> 8);
	data[1] = (uint8_t)mac_len;
	memcpy(data + 2, mac, mac_len);
	if (more_len)
		memcpy(data + 2 + mac_len, more, more_len);
	ldns_rdf *rdf =
		ldns_rdf_new_frm_data(LDNS_RDF_TYPE_INT16_DATA, 2 + mac_len + more_len, data);
	free(data);
	return rdf;
}

/* Does ldns verify this message, after prior (a MAC) with all variables or the timers only? */
static bool ldns_verifies(const uint8_t *wire, size_t len, const char *key_name, const char *secret,
			  const uint8_t *prior, size_t prior_len, int timers_only)
{
	ldns_pkt *p = to_ldns(wire, len);
	ldns_rdf *rdf = prior ? prior_rdf(prior, prior_len, NULL, 0) : NULL;
	bool ok = ldns_pkt_tsig_verify_next(p, wire, len, key_name, secret, rdf, timers_only);
	ldns_rdf_deep_free(rdf);
	ldns_pkt_free(p);
	return ok;
}

/* Sign wire[0..len) with ldns (at its own clock) after prior_rdf; returns the signed length in out.
 */
static size_t ldns_sign(uint8_t *out, const uint8_t *wire, size_t len, const char *key_name,
			const char *secret, const char *alg, const ldns_rdf *prior, int timers_only)
{
	ldns_pkt *p = to_ldns(wire, len);
	CU_ASSERT_EQUAL_FATAL(ldns_pkt_tsig_sign_next(p, key_name, secret, TSIG_FUDGE_DEFAULT, alg,
						      prior, timers_only),
			      LDNS_STATUS_OK);
	uint8_t *w = NULL;
	size_t n = 0;
	CU_ASSERT_EQUAL_FATAL(ldns_pkt2wire(&w, p, &n), LDNS_STATUS_OK);
	CU_ASSERT_FATAL(n <= BUF);
	memcpy(out, w, n);
	free(w);
	ldns_pkt_free(p);
	return n;
}

/* --- keys --- */

static void test_keys(void)
{
	tsig_key_t key;
	CU_ASSERT_EQUAL(tsig_alg_from_text("hmac-sha256"), TSIG_HMAC_SHA256);
	CU_ASSERT_EQUAL(tsig_alg_from_text("HMAC-SHA512."), TSIG_HMAC_SHA512);
	CU_ASSERT_EQUAL(tsig_alg_from_text("hmac-sha1"), TSIG_HMAC_SHA1);
	CU_ASSERT_EQUAL(tsig_alg_from_text("hmac-sha224"), TSIG_HMAC_SHA224);
	CU_ASSERT_EQUAL(tsig_alg_from_text("Hmac-Sha384."), TSIG_HMAC_SHA384);
	CU_ASSERT_EQUAL(tsig_alg_from_text("hmac-md5.sig-alg.reg.int"), SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(tsig_alg_from_text("hmac-md5"), SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(tsig_alg_from_text("hmac-sha"), SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(tsig_alg_from_text("hmac-sha256.."), SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(tsig_alg_from_text(""), SHOAL_EUNSUPPORTED);
	CU_ASSERT_STRING_EQUAL(tsig_alg_name(TSIG_HMAC_SHA512), "hmac-sha512");
	CU_ASSERT_STRING_EQUAL(tsig_alg_name(TSIG_HMAC_SHA1), "hmac-sha1");
	/* each algorithm's MAC is its hash's length (RFC 8945 6) */
	static const struct {
		const char *alg;
		uint8_t mac_len;
	} lens[] = { { "hmac-sha1", 20 },
		     { "hmac-sha224", 28 },
		     { "hmac-sha256", 32 },
		     { "hmac-sha384", 48 },
		     { "hmac-sha512", 64 } };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		CU_ASSERT_EQUAL(tsig_key_init(&key, "k", lens[i].alg, B64_256), 0);
		CU_ASSERT_EQUAL(key.mac_len, lens[i].mac_len);
		CU_ASSERT_EQUAL(key.mac_min, lens[i].mac_len);
	}

	CU_ASSERT_EQUAL(tsig_key_init(&key, "Xfr-Key", "hmac-sha256", B64_256), 0);
	CU_ASSERT_EQUAL(memcmp(key.name, "\7xfr-key", 9), 0);
	CU_ASSERT_EQUAL(key.name_len, 9);
	CU_ASSERT_EQUAL(key.mac_len, 32);
	CU_ASSERT_EQUAL(key.mac_min, 32);
	CU_ASSERT_EQUAL(tsig_key_init(&key, "xfr-key.", "hmac-sha512", B64_512), 0);
	CU_ASSERT_EQUAL(key.mac_len, 64);
	/* spaces and line ends in the secret are skipped */
	CU_ASSERT_EQUAL(tsig_key_init(&key, "k", "hmac-sha256",
				      " AQIDBAUGBwgJCgsMDQ4PEBES\n"
				      "ExQVFhcYGRobHB0eHyA= "),
			0);

	CU_ASSERT_EQUAL(tsig_key_init(&key, "a..b", "hmac-sha256", B64_256), SHOAL_ENAME);
	CU_ASSERT_EQUAL(tsig_key_init(&key, "k", "hmac-md5", B64_256), SHOAL_EUNSUPPORTED);
	CU_ASSERT_EQUAL(tsig_key_init(&key, "k", "hmac-sha256", "not base64!"), SHOAL_ESYNTAX);
	CU_ASSERT_EQUAL(tsig_key_init(&key, "k", "hmac-sha256", "AQID="), SHOAL_ESYNTAX);
	CU_ASSERT_EQUAL(tsig_key_init(&key, "k", "hmac-sha256", ""), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(tsig_key_init(&key, "k", "hmac-sha256", " \n"), SHOAL_EINVAL);
	char *huge = malloc(2000);
	memset(huge, 'A', 1999);
	huge[1999] = '\0';
	CU_ASSERT_EQUAL(tsig_key_init(&key, "k", "hmac-sha256", huge), SHOAL_EINVAL);
	free(huge);
	/* a failed init leaves nothing of an earlier key */
	CU_ASSERT_EQUAL(key.mac_len, 0);
	CU_ASSERT_EQUAL(tsig_key_set(&key, (const uint8_t *)"\1k", TSIG_HMAC_SHA256,
				     (const uint8_t *)"", 0),
			SHOAL_EINVAL);

	tsig_key_t keys[3];
	key_or_die(&keys[0], "a.example.", "hmac-sha256", B64_256);
	key_or_die(&keys[1], "b.example.", "hmac-sha512", B64_512);
	key_or_die(&keys[2], "c.example.", "hmac-sha256", B64_OTHER);
	CU_ASSERT_PTR_EQUAL(tsig_key_find(keys, 3, (const uint8_t *)"\1B\7EXAMPLE"), &keys[1]);
	CU_ASSERT_PTR_NULL(tsig_key_find(keys, 3, (const uint8_t *)"\1d\7example"));
	tsig_key_clear(&keys[0]);
	CU_ASSERT_EQUAL(keys[0].name_len, 0);
}

/* --- round trips --- */

/* A signed request, verified by the server; its signed answer, verified by the client. */
static void test_round_trip(void)
{
	for (size_t a = 0; a < ALG_COUNT; a++) {
		fixture_t f;
		start(&f, a, 0x1234, DNS_TYPE_SOA, T0);
		CU_ASSERT_EQUAL(wire_get_u16(f.req + 10), 1); /* ARCOUNT counts the TSIG */
		CU_ASSERT(f.len <= f.qlen + tsig_space(&f.client));
		tsig_rr_t rr = tsig_of(f.req, f.len);
		CU_ASSERT_EQUAL(rr.offset, f.qlen);
		CU_ASSERT_EQUAL(rr.time_signed, T0);
		CU_ASSERT_EQUAL(rr.fudge, TSIG_FUDGE_DEFAULT);
		CU_ASSERT_EQUAL(rr.mac_len, f.key.mac_len);
		CU_ASSERT_EQUAL(rr.original_id, 0x1234);
		CU_ASSERT_EQUAL(rr.error, 0);
		CU_ASSERT_EQUAL(rr.other_len, 0);

		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0 + 5), 0);
		CU_ASSERT_EQUAL(f.server.error, 0);
		size_t rlen = make_response(f.resp, 0x1234, 0, 1);
		int n = tsig_sign(&f.server, f.resp, rlen, BUF, T0 + 5);
		CU_ASSERT_FATAL(n > (int)rlen);
		CU_ASSERT_EQUAL(tsig_verify(&f.client, f.resp, n, NULL, T0 + 6), 0);
		CU_ASSERT_EQUAL(tsig_verify_end(&f.client), 0);
		/* the answer to another request does not verify: its request MAC differs */
		tsig_ctx_t other;
		client_sign(&other, &f.key, f.req, make_query(f.req, 0x1234, DNS_TYPE_SOA), T0 + 1);
		CU_ASSERT_EQUAL(tsig_verify(&other, f.resp, n, NULL, T0 + 6), SHOAL_ETSIG);
		CU_ASSERT_EQUAL(other.error, DNS_TSIG_BADSIG);
	}
}

/* A long secret (hashed first by HMAC) works, and as ldns computes it, in every algorithm. */
static void test_long_secret(void)
{
	for (size_t a = 0; a < ALG_COUNT; a++) {
		tsig_key_t key;
		key_or_die(&key, "long.", ALGS[a].alg, B64_LONG);
		uint8_t req[BUF];
		tsig_ctx_t client, server;
		size_t len = client_sign(&client, &key, req, make_query(req, 7, DNS_TYPE_A), T0);
		CU_ASSERT_EQUAL(server_verify(&server, &key, 1, req, len, T0), 0);
		CU_ASSERT(!ALGS[a].ldns || ldns_verifies(req, len, "long.", B64_LONG, NULL, 0, 0));
	}
}

/* Shoal signs a request, an answer and a 4-message stream; ldns verifies each. */
static void test_ldns_verifies_shoal(void)
{
	for (size_t a = 0; a < ALG_COUNT; a++) {
		if (!ALGS[a].ldns)
			continue; /* nothing to check it with here */
		fixture_t f;
		start(&f, a, 99, DNS_TYPE_AXFR, T0);
		uint8_t msg[BUF];
		CU_ASSERT(ldns_verifies(f.req, f.len, "xfr-key.", ALGS[a].secret, NULL, 0, 0));
		CU_ASSERT_EQUAL_FATAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), 0);

		tsig_rr_t prior = tsig_of(f.req, f.len);
		uint8_t prior_mac[TSIG_MAC_MAX];
		memcpy(prior_mac, prior.mac, prior.mac_len);
		for (int i = 0; i < 4; i++) {
			size_t n = make_response(msg, 99, i, 1 + i * 20);
			int signed_len = tsig_sign(&f.server, msg, n, BUF, T0 + (uint64_t)i);
			CU_ASSERT_FATAL(signed_len > 0);
			/* 5.3.1: the first answer digests all variables, the others the timers */
			CU_ASSERT(ldns_verifies(msg, (size_t)signed_len, "xfr-key.", ALGS[a].secret,
						prior_mac, f.key.mac_len, i > 0));
			CU_ASSERT_FALSE(ldns_verifies(msg, (size_t)signed_len, "xfr-key.",
						      ALGS[a].secret, prior_mac, f.key.mac_len,
						      i == 0));
			CU_ASSERT_EQUAL(
				tsig_verify(&f.client, msg, (size_t)signed_len, NULL, T0 + 10), 0);
			tsig_rr_t rr = tsig_of(msg, (size_t)signed_len);
			memcpy(prior_mac, rr.mac, rr.mac_len);
		}
		CU_ASSERT_EQUAL(tsig_verify_end(&f.client), 0);
	}
}

/* ldns signs a request (owner name compressed) and a 3-message answer stream; Shoal verifies. */
static void test_shoal_verifies_ldns(void)
{
	for (size_t a = 0; a < ALG_COUNT; a++) {
		if (!ALGS[a].ldns)
			continue;                    /* nothing to check it with here */
		uint64_t now = (uint64_t)time(NULL); /* ldns signs with its own clock */
		tsig_key_t key;
		key_or_die(&key, "key.example.com.", ALGS[a].alg, ALGS[a].secret);
		uint8_t req[BUF], msg[BUF], signed_msg[BUF];
		size_t qlen = make_query(req, 4321, DNS_TYPE_AXFR);
		size_t len = ldns_sign(req, req, qlen, "key.example.com.", ALGS[a].secret,
				       ALGS[a].ldns_alg, NULL, 0);
		/* ldns compresses the owner against the question: c0 0c */
		CU_ASSERT_EQUAL(req[qlen + 4], 0xc0);
		tsig_ctx_t server, client;
		CU_ASSERT_EQUAL(server_verify(&server, &key, 1, req, len, now), 0);

		/* Shoal as the client: its request, ldns's answers */
		len = client_sign(&client, &key, req, make_query(req, 4321, DNS_TYPE_AXFR), now);
		tsig_rr_t rr = tsig_of(req, len);
		ldns_rdf *prior = prior_rdf(rr.mac, rr.mac_len, NULL, 0);
		for (int i = 0; i < 3; i++) {
			size_t n = make_response(msg, 4321, i, 2 + i);
			n = ldns_sign(signed_msg, msg, n, "key.example.com.", ALGS[a].secret,
				      ALGS[a].ldns_alg, prior, i > 0);
			CU_ASSERT_EQUAL(tsig_verify(&client, signed_msg, n, NULL, now), 0);
			ldns_rdf_deep_free(prior);
			rr = tsig_of(signed_msg, n);
			prior = prior_rdf(rr.mac, rr.mac_len, NULL, 0);
		}
		ldns_rdf_deep_free(prior);
		CU_ASSERT_EQUAL(tsig_verify_end(&client), 0);
	}
}

/*
 * RFC 8945 5.3.1: up to 99 unsigned messages between signed ones. ldns
 * signs the last message over the prior MAC and the unsigned messages,
 * handed to it as one "prior MAC" blob, which is exactly that digest.
 */
static void stream_with_unsigned(size_t a, int unsigned_count, bool expect_ok)
{
	uint64_t now = (uint64_t)time(NULL);
	fixture_t f;
	start(&f, a, 5, DNS_TYPE_AXFR, now);
	uint8_t msg[BUF], first[BUF];
	tsig_rr_t rr = tsig_of(f.req, f.len);
	ldns_rdf *prior = prior_rdf(rr.mac, rr.mac_len, NULL, 0);
	size_t n = ldns_sign(first, msg, make_response(msg, 5, 0, 3), "xfr-key.", ALGS[a].secret,
			     ALGS[a].ldns_alg, prior, 0);
	ldns_rdf_deep_free(prior);
	CU_ASSERT_EQUAL(tsig_verify(&f.client, first, n, NULL, now), 0);
	rr = tsig_of(first, n);

	/* the unsigned messages, each given to the verifier as it comes */
	size_t run_cap = (size_t)unsigned_count * 64 + 1;
	uint8_t *run = malloc(run_cap);
	size_t run_len = 0;
	int ret = 0;
	for (int i = 1; i <= unsigned_count; i++) {
		size_t m = make_response(msg, 5, i, 2);
		memcpy(run + run_len, msg, m);
		run_len += m;
		ret = tsig_verify(&f.client, msg, m, NULL, now);
		if (ret != 0)
			break;
		CU_ASSERT_EQUAL(tsig_verify_end(&f.client),
				SHOAL_ETSIG); /* not done on an unsigned one */
	}
	if (expect_ok) {
		CU_ASSERT_EQUAL(ret, 0);
		prior = prior_rdf(rr.mac, rr.mac_len, run, run_len);
		n = ldns_sign(first, msg, make_response(msg, 5, 1000, 1), "xfr-key.",
			      ALGS[a].secret, ALGS[a].ldns_alg, prior, 1);
		ldns_rdf_deep_free(prior);
		CU_ASSERT_EQUAL(tsig_verify(&f.client, first, n, NULL, now), 0);
		CU_ASSERT_EQUAL(tsig_verify_end(&f.client), 0);
	} else {
		/* the 100th unsigned message in a row is refused */
		CU_ASSERT_EQUAL(ret, SHOAL_ETSIG);
		CU_ASSERT_EQUAL(f.client.error, DNS_TSIG_BADSIG);
		CU_ASSERT_FALSE(f.client.peer_error);
	}
	free(run);
}

static void test_unsigned_messages(void)
{
	for (size_t a = 0; a < ALG_COUNT; a++) {
		if (!ALGS[a].ldns)
			continue; /* nothing to check it with here */
		stream_with_unsigned(a, 1, true);
		stream_with_unsigned(a, 7, true);
		stream_with_unsigned(a, TSIG_UNSIGNED_MAX, true);
		stream_with_unsigned(a, TSIG_UNSIGNED_MAX + 1, false);
	}
	/* the first answer must be signed */
	fixture_t f;
	start(&f, 0, 5, DNS_TYPE_AXFR, T0);
	uint8_t msg[BUF];
	CU_ASSERT_EQUAL(tsig_verify(&f.client, msg, make_response(msg, 5, 0, 1), NULL, T0),
			SHOAL_ETSIG);
	CU_ASSERT_EQUAL(f.client.error, DNS_TSIG_BADSIG);
	/* nothing verified yet: the stream is not done */
	tsig_init(&f.client, &f.key, TSIG_FUDGE_DEFAULT);
	CU_ASSERT_EQUAL(tsig_verify_end(&f.client), SHOAL_ETSIG);
}

/* A stream Shoal signed, changed on the way: dropped, reordered or altered messages fail. */
static void test_stream_tampered(void)
{
	fixture_t f;
	start(&f, 0, 77, DNS_TYPE_AXFR, T0);
	uint8_t msgs[3][BUF];
	size_t lens[3];
	CU_ASSERT_EQUAL_FATAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), 0);
	for (int i = 0; i < 3; i++) {
		int n = tsig_sign(&f.server, msgs[i], make_response(msgs[i], 77, i, 3), BUF,
				  T0 + 1);
		CU_ASSERT_FATAL(n > 0);
		lens[i] = (size_t)n;
	}
	tsig_ctx_t c = f.client;
	CU_ASSERT_EQUAL(tsig_verify(&c, msgs[0], lens[0], NULL, T0 + 1), 0);
	CU_ASSERT_EQUAL(tsig_verify(&c, msgs[2], lens[2], NULL, T0 + 1), SHOAL_ETSIG); /* dropped */
	CU_ASSERT_EQUAL(c.error, DNS_TSIG_BADSIG);
	c = f.client;
	CU_ASSERT_EQUAL(tsig_verify(&c, msgs[1], lens[1], NULL, T0 + 1),
			SHOAL_ETSIG); /* reordered */
	c = f.client;
	CU_ASSERT_EQUAL(tsig_verify(&c, msgs[0], lens[0], NULL, T0 + 1), 0);
	msgs[1][tsig_of(msgs[1], lens[1]).offset - 1] ^= 1; /* an address in the answer */
	CU_ASSERT_EQUAL(tsig_verify(&c, msgs[1], lens[1], NULL, T0 + 1), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(c.error, DNS_TSIG_BADSIG);
}

/* --- errors --- */

/* A message changed after signing: BADSIG, answered unsigned; the client reads it as the peer's. */
static void test_badsig(void)
{
	fixture_t f;
	start(&f, 0, 42, DNS_TYPE_SOA, T0);
	tsig_key_t wrong;
	key_or_die(&wrong, "xfr-key.", "hmac-sha256", B64_OTHER);
	tsig_rr_t rr = tsig_of(f.req, f.len);
	size_t mac_at = (size_t)(rr.mac - f.req);

	/* every octet before the MAC covered: header (but the ID), question, TSIG fields */
	for (size_t i = 2; i < mac_at - 2; i++) {
		if (i == 10 || i == 11)
			continue; /* ARCOUNT: changing it moves the TSIG, tested in malformed */
		f.req[i] ^= 0x01;
		int ret = server_verify(&f.server, &f.key, 1, f.req, f.len, T0);
		/* a changed TSIG type leaves a message without TSIG */
		CU_ASSERT(ret == SHOAL_ETSIG || ret == SHOAL_EMALFORMED || ret == SHOAL_ENOTFOUND);
		if (ret == SHOAL_ETSIG)
			CU_ASSERT(f.server.error == DNS_TSIG_BADSIG ||
				  f.server.error == DNS_TSIG_BADKEY);
		f.req[i] ^= 0x01;
	}
	/* the key and algorithm names are digested in canonical form: their case is free */
	for (size_t i = f.qlen + 1; i < f.qlen + 4; i++)
		f.req[i] ^= 0x20;
	for (size_t i = f.qlen + 20; i < f.qlen + 24; i++)
		f.req[i] ^= 0x20;
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), 0);
	for (size_t i = f.qlen + 1; i < f.qlen + 4; i++)
		f.req[i] ^= 0x20;
	for (size_t i = f.qlen + 20; i < f.qlen + 24; i++)
		f.req[i] ^= 0x20;
	/* but the question's case is the message's */
	f.req[DNS_HEADER_SIZE + 1] ^= 0x20;
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADSIG);
	f.req[DNS_HEADER_SIZE + 1] ^= 0x20;
	/* the ID is not covered: the Original ID stands for it (RFC 8945 4.3.3) */
	f.req[0] ^= 0xff;
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), 0);
	f.req[0] ^= 0xff;
	/* the flags, and the last octet of the MAC */
	f.req[3] ^= DNS_FLAG_CD;
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADSIG);
	f.req[3] ^= DNS_FLAG_CD;
	f.req[mac_at + rr.mac_len - 1] ^= 1;
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADSIG);
	f.req[mac_at + rr.mac_len - 1] ^= 1;
	/* the same name with another secret */
	CU_ASSERT_EQUAL(server_verify(&f.server, &wrong, 1, f.req, f.len, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADSIG);
	CU_ASSERT_FALSE(f.server.peer_error);

	/* RFC 8945 5.3.2: the answer carries BADSIG in an unsigned TSIG RR */
	size_t n;
	rr = error_answer(&f.server, f.resp, 42, T0, &n);
	CU_ASSERT_EQUAL(rr.mac_len, 0);
	CU_ASSERT_EQUAL(rr.error, DNS_TSIG_BADSIG);
	CU_ASSERT_EQUAL(memcmp(rr.name, "\7xfr-key", 9), 0);
	CU_ASSERT_EQUAL(tsig_verify(&f.client, f.resp, n, NULL, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(f.client.error, DNS_TSIG_BADSIG);
	CU_ASSERT(f.client.peer_error);
}

/* An unknown key name, or a known name under another algorithm: BADKEY, answered unsigned. */
static void test_badkey(void)
{
	tsig_key_t ours, theirs, other_alg;
	key_or_die(&ours, "xfr-key.", "hmac-sha256", B64_256);
	key_or_die(&theirs, "Other-Key.", "hmac-sha256", B64_256);
	key_or_die(&other_alg, "xfr-key.", "hmac-sha512", B64_256);
	uint8_t req[BUF], resp[BUF];
	tsig_ctx_t client, server;
	size_t len = client_sign(&client, &theirs, req, make_query(req, 1, DNS_TYPE_SOA), T0);
	CU_ASSERT_EQUAL(server_verify(&server, &ours, 1, req, len, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(server.error, DNS_TSIG_BADKEY);
	CU_ASSERT_PTR_NULL(server.key);

	size_t n;
	tsig_rr_t rr = error_answer(&server, resp, 1, T0, &n);
	CU_ASSERT_EQUAL(memcmp(rr.name, "\11other-key", 11), 0); /* the request's key name */
	CU_ASSERT_EQUAL(memcmp(rr.alg_name, "\13hmac-sha256", 13), 0);
	CU_ASSERT_EQUAL(rr.mac_len, 0);
	CU_ASSERT_EQUAL(rr.error, DNS_TSIG_BADKEY);
	/* ldns reads the answer as a TSIG'd packet too */
	ldns_pkt *p = to_ldns(resp, (size_t)n);
	CU_ASSERT_PTR_NOT_NULL(ldns_pkt_tsig(p));
	ldns_pkt_free(p);
	/* and the client takes it as the server's BADKEY */
	CU_ASSERT_EQUAL(tsig_verify(&client, resp, n, NULL, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(client.error, DNS_TSIG_BADKEY);
	CU_ASSERT(client.peer_error);

	/* a known name under another algorithm */
	len = client_sign(&client, &other_alg, req, make_query(req, 1, DNS_TYPE_SOA), T0);
	CU_ASSERT_EQUAL(server_verify(&server, &ours, 1, req, len, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(server.error, DNS_TSIG_BADKEY);
	CU_ASSERT_PTR_NOT_NULL(server.key);
	rr = error_answer(&server, resp, 1, T0, &n);
	CU_ASSERT_EQUAL(memcmp(rr.alg_name, "\13hmac-sha512", 13), 0);
	CU_ASSERT_EQUAL(rr.mac_len, 0);
}

/*
 * Cut the MAC of msg's TSIG RR to mac_len octets, or grow it by one octet
 * (mac_len above the current size); returns the new message length.
 */
static size_t resize_mac(uint8_t *msg, size_t len, uint16_t mac_len)
{
	tsig_rr_t rr = tsig_of(msg, len);
	size_t size_at = (size_t)(rr.mac - msg) - 2;
	size_t rdlen_at = size_at - 8 - name_length(rr.alg_name) - 2;
	size_t tail = len - (size_at + 2 + rr.mac_len);
	uint8_t *after = msg + size_at + 2 + rr.mac_len;
	long delta = (long)mac_len - rr.mac_len;
	memmove(after + delta, after, tail);
	if (delta > 0)
		memset(after, 0xab, (size_t)delta);
	msg[size_at] = (uint8_t)(mac_len >> 8);
	msg[size_at + 1] = (uint8_t)mac_len;
	uint16_t rdlen = (uint16_t)(wire_get_u16(msg + rdlen_at) + delta);
	msg[rdlen_at] = (uint8_t)(rdlen >> 8);
	msg[rdlen_at + 1] = (uint8_t)rdlen;
	return (size_t)((long)len + delta);
}

/* RFC 8945 5.2.3: outside Time Signed +- Fudge: BADTIME, answered signed with both times. */
static void test_badtime(void)
{
	for (size_t a = 0; a < ALG_COUNT; a++) {
		fixture_t f;
		start(&f, a, 9, DNS_TYPE_SOA, T0);
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0 + 300), 0);
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0 - 300), 0);
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0 - 301),
				SHOAL_ETSIG);
		CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADTIME);
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0 + 301),
				SHOAL_ETSIG);
		CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADTIME);

		size_t n;
		tsig_rr_t rr = error_answer(&f.server, f.resp, 9, T0 + 301, &n);
		CU_ASSERT_EQUAL(rr.error, DNS_TSIG_BADTIME);
		CU_ASSERT_EQUAL(rr.time_signed, T0);    /* the request's */
		CU_ASSERT_EQUAL_FATAL(rr.other_len, 6); /* ours */
		CU_ASSERT_EQUAL(wire_get_u32(rr.other + 2), T0 + 301);
		CU_ASSERT_EQUAL(rr.mac_len, f.key.mac_len);
		/* signed over the request MAC: ldns and the client verify it */
		tsig_rr_t qrr = tsig_of(f.req, f.len);
		CU_ASSERT(!ALGS[a].ldns || ldns_verifies(f.resp, n, "xfr-key.", ALGS[a].secret,
							 qrr.mac, qrr.mac_len, 0));
		tsig_ctx_t client = f.client;
		CU_ASSERT_EQUAL(tsig_verify(&client, f.resp, n, NULL, T0), SHOAL_ETSIG);
		CU_ASSERT_EQUAL(client.error, DNS_TSIG_BADTIME);
		CU_ASSERT(client.peer_error);
		/* from a server that sends it unsigned (5.3.2 says SHOULD sign): still BADTIME */
		n = resize_mac(f.resp, n, 0);
		CU_ASSERT_EQUAL(tsig_verify(&f.client, f.resp, n, NULL, T0), SHOAL_ETSIG);
		CU_ASSERT_EQUAL(f.client.error, DNS_TSIG_BADTIME);
		CU_ASSERT(f.client.peer_error);
	}
	/* a signed answer too old for the client: BADTIME, ours */
	fixture_t f;
	start(&f, 0, 9, DNS_TYPE_SOA, T0);
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), 0);
	int n = tsig_sign(&f.server, f.resp, make_response(f.resp, 9, 0, 1), BUF, T0);
	CU_ASSERT_EQUAL(tsig_verify(&f.client, f.resp, (size_t)n, NULL, T0 + 1000), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(f.client.error, DNS_TSIG_BADTIME);
	CU_ASSERT_FALSE(f.client.peer_error);
}

/* RFC 8945 5.2.2.1 and 5.2.4: truncated MACs. */
static void test_truncation(void)
{
	static const struct {
		size_t alg;
		uint16_t floor; /* max(10, half the hash) */
	} cases[] = { { 0, 16 }, { 1, 32 }, { 2, 10 }, { 3, 14 }, { 4, 24 } };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t a = cases[c].alg;
		fixture_t f;
		start(&f, a, 3, DNS_TYPE_SOA, T0);
		uint8_t copy[BUF];
		memcpy(copy, f.req, f.len);

		/* at the floor: allowed by the RFC, not by the default policy: BADTRUNC */
		size_t tlen = resize_mac(f.req, f.len, cases[c].floor);
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, tlen, T0), SHOAL_ETSIG);
		CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADTRUNC);
		size_t n;
		tsig_rr_t rr = error_answer(&f.server, f.resp, 3, T0, &n);
		CU_ASSERT_EQUAL(rr.error, DNS_TSIG_BADTRUNC);
		/* signed, over the request MAC as it came: truncated (5.2.2.1 rule 4) */
		tsig_rr_t qrr = tsig_of(f.req, tlen);
		CU_ASSERT(!ALGS[a].ldns || ldns_verifies(f.resp, n, "xfr-key.", ALGS[a].secret,
							 qrr.mac, qrr.mac_len, 0));

		/* a policy that takes it: verified, and answered over the truncated MAC */
		f.key.mac_min = (uint8_t)cases[c].floor;
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, tlen, T0), 0);
		int signed_len =
			tsig_sign(&f.server, f.resp, make_response(f.resp, 3, 0, 1), BUF, T0);
		CU_ASSERT_FATAL(signed_len > 0);
		CU_ASSERT(!ALGS[a].ldns || ldns_verifies(f.resp, (size_t)signed_len, "xfr-key.",
							 ALGS[a].secret, qrr.mac, qrr.mac_len, 0));
		/* a wrong octet in the part sent still fails */
		f.req[qrr.mac - f.req + 3] ^= 1;
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, tlen, T0), SHOAL_ETSIG);
		CU_ASSERT_EQUAL(f.server.error, DNS_TSIG_BADSIG);

		/* under the floor, empty, or longer than the hash: FORMERR */
		memcpy(f.req, copy, f.len);
		tlen = resize_mac(f.req, f.len, (uint16_t)(cases[c].floor - 1));
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, tlen, T0),
				SHOAL_EMALFORMED);
		memcpy(f.req, copy, f.len);
		tlen = resize_mac(f.req, f.len, 0);
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, tlen, T0),
				SHOAL_EMALFORMED);
		memcpy(f.req, copy, f.len);
		tlen = resize_mac(f.req, f.len, (uint16_t)(f.key.mac_len + 1));
		CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, tlen, T0),
				SHOAL_EMALFORMED);
	}
}

/* --- malformed TSIG RRs --- */

/* tsig_find on an exact-size heap copy, so ASan sees any read past the end. */
static int find_exact(const uint8_t *msg, size_t len, tsig_rr_t *rr)
{
	uint8_t *copy = malloc(len ? len : 1);
	memcpy(copy, msg, len);
	int ret = tsig_find(copy, len, rr);
	free(copy);
	return ret;
}

/* tsig_find's verdict on good[0..len) with the octet at `at` set to value. */
static int mutated(const uint8_t *good, size_t len, size_t at, int value)
{
	uint8_t m[BUF];
	tsig_rr_t rr;
	memcpy(m, good, len);
	m[at] = (uint8_t)value;
	return find_exact(m, len, &rr);
}

static void test_malformed(void)
{
	fixture_t f;
	start(&f, 0, 11, DNS_TYPE_SOA, T0);
	const uint8_t *good = f.req;
	size_t len = f.len, qlen = f.qlen;
	uint8_t m[BUF];
	tsig_rr_t rr = tsig_of(good, len);
	size_t rdlen_at = qlen + 9 + 8; /* after the owner "\7xfr-key\0", type, class, TTL */
	size_t other_len_at = len - 2;

	/* every shorter message: never found whole, never read past its end */
	for (size_t cut = 0; cut < len; cut++)
		CU_ASSERT_EQUAL(find_exact(good, cut, &rr), SHOAL_EMALFORMED);
	/* bytes after the TSIG RR */
	memcpy(m, good, len);
	m[len] = 0;
	CU_ASSERT_EQUAL(find_exact(m, len + 1, &rr), SHOAL_EMALFORMED);

	const size_t mac_size_at = (size_t)(rr.mac - good) - 2;
	/* one octet set to another value; CUnit names the line that fails */
	CU_ASSERT_EQUAL(mutated(good, len, qlen + 12, DNS_CLASS_IN), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(mutated(good, len, qlen + 16, 1), SHOAL_EMALFORMED); /* TTL 1 */
	CU_ASSERT_EQUAL(mutated(good, len, 11, 2), SHOAL_EMALFORMED);    /* ARCOUNT past the end */
	CU_ASSERT_EQUAL(mutated(good, len, 11, 0), SHOAL_ENOTFOUND);     /* TSIG not counted */
	CU_ASSERT_EQUAL(mutated(good, len, 10, 0xff), SHOAL_EMALFORMED); /* ARCOUNT 0xff01 */
	CU_ASSERT_EQUAL(mutated(good, len, 5, 2), SHOAL_EMALFORMED);     /* QDCOUNT 2 */
	CU_ASSERT_EQUAL(mutated(good, len, 7, 1), SHOAL_EMALFORMED);     /* TSIG in the answer */
	CU_ASSERT_EQUAL(mutated(good, len, rdlen_at + 1, good[rdlen_at + 1] + 1), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(mutated(good, len, rdlen_at + 1, good[rdlen_at + 1] - 1), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(mutated(good, len, rdlen_at, 0xff), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(mutated(good, len, mac_size_at, 0x10), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(mutated(good, len, other_len_at + 1, 1), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(mutated(good, len, other_len_at, 0xff), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(mutated(good, len, rdlen_at + 2, 0x3f), SHOAL_EMALFORMED); /* long label */
	CU_ASSERT_EQUAL(mutated(good, len, qlen, 0x47), SHOAL_EMALFORMED); /* label type 01 */
	/* the algorithm name compressed (a pointer, RFC 8945 4.2 forbids it) */
	CU_ASSERT_EQUAL(mutated(good, len, rdlen_at + 2, 0xc0), SHOAL_EMALFORMED);

	/* two TSIG RRs: the first is not last */
	memcpy(m, good, len);
	memcpy(m + len, good + qlen, len - qlen);
	m[11] = 2;
	CU_ASSERT_EQUAL(find_exact(m, len + (len - qlen), &rr), SHOAL_EMALFORMED);
	/* an OPT after the TSIG */
	memcpy(m, good, len);
	const uint8_t opt[] = { 0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0 };
	memcpy(m + len, opt, sizeof(opt));
	m[11] = 2;
	CU_ASSERT_EQUAL(find_exact(m, len + sizeof(opt), &rr), SHOAL_EMALFORMED);
	/* no TSIG at all, with junk after the counted records: ignored */
	memcpy(m, good, qlen);
	m[11] = 0;
	memset(m + qlen, 0xee, 5);
	CU_ASSERT_EQUAL(find_exact(m, qlen + 5, &rr), SHOAL_ENOTFOUND);
	CU_ASSERT_EQUAL(find_exact(m, 5, &rr), SHOAL_EMALFORMED);

	/* random damage: any verdict, but no crash and no read out of bounds (ASan) */
	uint32_t seed = 12345;
	for (int i = 0; i < 20000; i++) {
		memcpy(m, good, len);
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245u + 12345u;
			m[(seed >> 8) % len] = (uint8_t)(seed >> 20);
		}
		seed = seed * 1103515245u + 12345u;
		size_t cut = len - (seed >> 16) % 8;
		uint8_t *copy = malloc(cut);
		memcpy(copy, m, cut);
		int ret = server_verify(&f.server, &f.key, 1, copy, cut, T0);
		CU_ASSERT(ret == 0 || ret == SHOAL_EMALFORMED || ret == SHOAL_ENOTFOUND ||
			  ret == SHOAL_ETSIG);
		free(copy);
	}
}

/* --- the caller's buffer --- */

static void test_space(void)
{
	fixture_t f;
	start(&f, 1, 21, DNS_TYPE_SOA, T0);
	uint8_t before[BUF];
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0 + 400), SHOAL_ETSIG);
	size_t rlen = make_response(f.resp, 21, 0, 2);
	memcpy(before, f.resp, rlen);
	/* the BADTIME answer, the longest kind: one octet short fails and changes nothing */
	tsig_ctx_t copy = f.server;
	int n = tsig_sign(&copy, f.resp, rlen, BUF, T0 + 400);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL((size_t)n, rlen + tsig_space(&f.server));
	memcpy(f.resp, before, rlen);
	copy = f.server;
	CU_ASSERT_EQUAL(tsig_sign(&copy, f.resp, rlen, (size_t)n - 1, T0 + 400), SHOAL_ESPACE);
	CU_ASSERT_EQUAL(memcmp(f.resp, before, rlen), 0);
	copy = f.server;
	CU_ASSERT_EQUAL(tsig_sign(&copy, f.resp, rlen, (size_t)n, T0 + 400), n);

	/* no header, ARCOUNT full, no key to sign a request with */
	CU_ASSERT_EQUAL(tsig_sign(&f.client, f.resp, 11, BUF, T0), SHOAL_EINVAL);
	memcpy(f.resp, before, rlen);
	f.resp[10] = f.resp[11] = 0xff;
	CU_ASSERT_EQUAL(tsig_sign(&f.client, f.resp, rlen, BUF, T0), SHOAL_EINVAL);
	tsig_init(&f.client, NULL, TSIG_FUDGE_DEFAULT);
	CU_ASSERT_EQUAL(tsig_sign(&f.client, before, rlen, BUF, T0), SHOAL_EINVAL);
}

/* A name of n octets in wire form (n from 2 to 255): labels of 63 octets of c, then shorter. */
static void long_name(uint8_t *name, size_t n, char c)
{
	size_t at = 0;
	while (at + 1 < n) {
		size_t l = n - 1 - at - 1 > 63 ? 63 : n - 1 - at - 1;
		name[at++] = (uint8_t)l;
		memset(name + at, c, l);
		at += l;
	}
	name[at] = 0;
}

/*
 * TSIG_RR_MAX holds any TSIG RR: a request signed with a key name of 255
 * octets, the longest signed answer (BADTIME, with Other Data), and an
 * unsigned error answer that echoes a key and an algorithm name of 255
 * octets each.
 */
static void test_longest_rr(void)
{
	uint8_t name[NAME_MAXLEN], alg[NAME_MAXLEN], req[BUF], resp[BUF];
	long_name(name, NAME_MAXLEN, 'k');
	CU_ASSERT_EQUAL_FATAL(name_length(name), NAME_MAXLEN);
	tsig_key_t key;
	CU_ASSERT_EQUAL_FATAL(tsig_key_set(&key, name, TSIG_HMAC_SHA512, (const uint8_t *)"s", 1),
			      0);
	tsig_ctx_t client, server;
	size_t qlen = make_query(req, 5, DNS_TYPE_SOA);
	size_t len = client_sign(&client, &key, req, qlen, T0);
	CU_ASSERT(len - qlen <= TSIG_RR_MAX);
	CU_ASSERT_EQUAL(server_verify(&server, &key, 1, req, len, T0 + 400), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(server.error, DNS_TSIG_BADTIME);
	CU_ASSERT(tsig_space(&server) <= TSIG_RR_MAX);
	size_t rlen = make_response(resp, 5, 0, 0);
	int n = tsig_sign(&server, resp, rlen, BUF, T0 + 400);
	CU_ASSERT(n > 0 && (size_t)n - rlen <= TSIG_RR_MAX);
	/* an unknown key under an algorithm name of 255 octets: BADKEY echoes both */
	tsig_rr_t rr = tsig_of(req, len);
	long_name(alg, NAME_MAXLEN, 'a');
	memcpy(rr.alg_name, alg, NAME_MAXLEN);
	tsig_init(&server, NULL, TSIG_FUDGE_DEFAULT);
	CU_ASSERT_EQUAL(tsig_verify(&server, req, len, &rr, T0), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(server.error, DNS_TSIG_BADKEY);
	CU_ASSERT_EQUAL(tsig_space(&server), TSIG_RR_MAX - TSIG_MAC_MAX); /* no MAC */
	n = tsig_sign(&server, resp, rlen, BUF, T0);
	CU_ASSERT(n > 0 && (size_t)n - rlen <= TSIG_RR_MAX);
}

/* What an error answer says, for the logs: its RCODE and its TSIG RR's Error (RFC 8945 5.3). */
static void test_answer_text(void)
{
	fixture_t f;
	start(&f, 0, 42, DNS_TYPE_SOA, T0);
	tsig_key_t wrong;
	key_or_die(&wrong, "xfr-key.", "hmac-sha256", B64_OTHER);
	char text[TSIG_ANSWER_TEXT_MAX], why[DNS_RCODE_TEXT_MAX];
	CU_ASSERT_EQUAL(server_verify(&f.server, &wrong, 1, f.req, f.len, T0), SHOAL_ETSIG);
	size_t n;
	error_answer(&f.server, f.resp, 42, T0, &n);
	CU_ASSERT_STRING_EQUAL(tsig_answer_text(f.resp, n, text), "NOTAUTH, TSIG error BADSIG");
	/* the client's finding, and the peer's */
	int rc = tsig_verify(&f.client, f.resp, n, NULL, T0);
	CU_ASSERT_STRING_EQUAL(tsig_verify_text(&f.client, rc, why), "BADSIG");
	CU_ASSERT(f.client.peer_error);
	CU_ASSERT_STRING_EQUAL(tsig_verify_text(&f.client, SHOAL_EMALFORMED, why), "malformed");
	/* no TSIG RR, or one without an Error: the RCODE alone */
	size_t rlen = make_response(f.resp, 42, 0, 0);
	f.resp[3] = DNS_RCODE_REFUSED;
	CU_ASSERT_STRING_EQUAL(tsig_answer_text(f.resp, rlen, text), "REFUSED");
	start(&f, 0, 43, DNS_TYPE_SOA, T0);
	CU_ASSERT_EQUAL(server_verify(&f.server, &f.key, 1, f.req, f.len, T0), 0);
	rlen = make_response(f.resp, 43, 0, 0);
	f.resp[3] = DNS_RCODE_NOTAUTH;
	int m = tsig_sign(&f.server, f.resp, rlen, BUF, T0);
	CU_ASSERT_FATAL(m > 0);
	CU_ASSERT_STRING_EQUAL(tsig_answer_text(f.resp, (size_t)m, text), "NOTAUTH");
	CU_ASSERT_STRING_EQUAL(tsig_answer_text(f.resp, 5, text), "?");
}

/* --- threads --- */

static tsig_key_t shared_keys[2];

/*
 * Full transactions on one key shared by every thread, each with its own
 * contexts; returns how many verified. No CUnit call here: it is not
 * thread-safe. Run under TSan, this shows that a shared key is only read.
 */
static void *transactions(void *arg)
{
	const tsig_key_t *key = &shared_keys[(uintptr_t)arg % 2];
	uintptr_t verified = 0;
	for (int i = 0; i < 200; i++) {
		uint8_t req[512], resp[512];
		tsig_ctx_t client, server;
		tsig_rr_t rr;
		tsig_init(&client, key, TSIG_FUDGE_DEFAULT);
		int len = tsig_sign(&client, req, make_query(req, (uint16_t)i, DNS_TYPE_SOA),
				    sizeof(req), T0);
		if (len < 0 || tsig_find(req, (size_t)len, &rr) != 0)
			continue;
		tsig_init(&server, tsig_key_find(shared_keys, 2, rr.name), TSIG_FUDGE_DEFAULT);
		if (tsig_verify(&server, req, (size_t)len, &rr, T0) != 0)
			continue;
		int n = tsig_sign(&server, resp, make_response(resp, (uint16_t)i, 0, 2),
				  sizeof(resp), T0);
		if (n > 0 && tsig_verify(&client, resp, n, NULL, T0) == 0 &&
		    tsig_verify_end(&client) == 0)
			verified++;
	}
	return (void *)verified;
}

static void test_threads(void)
{
	key_or_die(&shared_keys[0], "a.", "hmac-sha256", B64_256);
	key_or_die(&shared_keys[1], "b.", "hmac-sha512", B64_512);
	pthread_t threads[4];
	for (uintptr_t t = 0; t < 4; t++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[t], NULL, transactions, (void *)t),
				      0);
	for (int t = 0; t < 4; t++) {
		void *verified = NULL;
		pthread_join(threads[t], &verified);
		CU_ASSERT_EQUAL((uintptr_t)verified, 200);
	}
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0)
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_keys),
		UNIT_TEST(test_round_trip),
		UNIT_TEST(test_long_secret),
		UNIT_TEST(test_ldns_verifies_shoal),
		UNIT_TEST(test_shoal_verifies_ldns),
		UNIT_TEST(test_unsigned_messages),
		UNIT_TEST(test_stream_tampered),
		UNIT_TEST(test_badsig),
		UNIT_TEST(test_badkey),
		UNIT_TEST(test_badtime),
		UNIT_TEST(test_truncation),
		UNIT_TEST(test_malformed),
		UNIT_TEST(test_space),
		UNIT_TEST(test_longest_rr),
		UNIT_TEST(test_answer_text),
		UNIT_TEST(test_threads),
		UNIT_END,
	};
	return unit_run(argc, argv, "tsig", tests);
}
