/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/sign_rrset.c: RRSIGs that ldns verifies. */
#include "config.h"

#include <ldns/ldns.h>
#include <libdnssec/binary.h>
#include <libdnssec/error.h>
#include <libdnssec/sign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "tests/unit/sign_test.h"
#include "unit.h"
#include "zone/sign_rrset.h"

static char tmpdir[] = "/tmp/shoal-test-sign-rrset.XXXXXX";
static const uint8_t APEX[] = "\7example\3com";

/* An RRset of records given as RDATA texts of type (ldns parses them), in the store's form. */
typedef struct test_rrset {
	uint8_t data[4096];
	rrset_wire_t rs;
} test_rrset_t;

static void make_rrset(test_rrset_t *t, uint16_t type, uint32_t ttl, const char *const *rdata,
		       size_t n)
{
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		char text[512];
		ldns_rr *rr = NULL;
		snprintf(text, sizeof(text), "x.example.com. %u IN %s %s", ttl,
			 ldns_rr_descript(type)->_name, rdata[i]);
		CU_ASSERT_EQUAL_FATAL(ldns_rr_new_frm_str(&rr, text, 0, NULL, NULL),
				      LDNS_STATUS_OK);
		uint8_t *wire = NULL;
		size_t len = 0;
		CU_ASSERT_EQUAL_FATAL(ldns_rr2wire(&wire, rr, LDNS_SECTION_ANSWER, &len),
				      LDNS_STATUS_OK);
		size_t owner = ldns_rdf_size(ldns_rr_owner(rr));
		memcpy(t->data + at, wire + owner, len - owner);
		at += len - owner;
		free(wire);
		ldns_rr_free(rr);
	}
	t->rs = (rrset_wire_t){
		.type = type, .rr_count = (uint16_t)n, .data_len = (uint32_t)at, .data = t->data
	};
}

/* An ldns RR of owner (wire), type and TTL with rdata[0..len). */
static ldns_rr *ldns_of(const uint8_t *owner, uint16_t type, uint32_t ttl, const uint8_t *rdata,
			size_t len)
{
	uint8_t wire[4096];
	size_t n = strlen((const char *)owner) + 1, pos = 0;
	memcpy(wire, owner, n);
	uint8_t fixed[10] = {
		type >> 8,          type & 0xff,       0,          1,        ttl >> 24,
		(ttl >> 16) & 0xff, (ttl >> 8) & 0xff, ttl & 0xff, len >> 8, len & 0xff
	};
	memcpy(wire + n, fixed, 10);
	memcpy(wire + n + 10, rdata, len);
	ldns_rr *rr = NULL;
	CU_ASSERT_EQUAL_FATAL(ldns_wire2rr(&rr, wire, n + 10 + len, &pos, LDNS_SECTION_ANSWER),
			      LDNS_STATUS_OK);
	return rr;
}

/* ldns's verdict on the RRSIG sig[0..len) of t at owner under key k. */
static ldns_status verify(const test_rrset_t *t, const uint8_t *owner, const sign_key_t *k,
			  const uint8_t *sig, size_t len)
{
	uint8_t dnskey[1024];
	int klen = sign_key_dnskey(k, dnskey, sizeof(dnskey));
	CU_ASSERT_FATAL(klen > 0);
	ldns_rr_list *rrset = ldns_rr_list_new(), *keys = ldns_rr_list_new();
	wire_t w;
	wire_init_read(&w, t->rs.data, t->rs.data_len);
	for (uint16_t i = 0; i < t->rs.rr_count; i++) {
		wire_skip(&w, 4);
		uint32_t ttl = wire_read_u32(&w);
		uint16_t rdlen = wire_read_u16(&w);
		const uint8_t *rdata = wire_read_ptr(&w, rdlen);
		ldns_rr_list_push_rr(rrset, ldns_of(owner, t->rs.type, ttl, rdata, rdlen));
	}
	ldns_rr_list_push_rr(keys, ldns_of(APEX, DNS_TYPE_DNSKEY, 3600, dnskey, (size_t)klen));
	ldns_rr *rrsig = ldns_of(owner, DNS_TYPE_RRSIG, 3600, sig, len);
	ldns_status s = ldns_verify_rrsig_keylist(rrset, rrsig, keys, NULL);
	ldns_rr_list_deep_free(rrset);
	ldns_rr_list_deep_free(keys);
	ldns_rr_free(rrsig);
	return s;
}

static sign_times_t times_now(void)
{
	uint32_t now = (uint32_t)time(NULL);
	return (sign_times_t){ .inception = now - 3600, .expiration = now + 86400 };
}

/*
 * Sign t at owner with alg's key pair; ldns verifies it over served (t
 * when NULL: the RRset as served, each record once); the header is right.
 */
static void sign_and_verify(uint8_t alg, const test_rrset_t *t, const test_rrset_t *served,
			    const uint8_t *owner, uint8_t want_labels)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/alg%u", tmpdir, alg);
	sign_keyset_t ks;
	int rc = sign_keyset_load(&ks, dir, APEX, true, err, sizeof(err));
	if (rc == SHOAL_ENOTFOUND)
		rc = sign_keyset_create(&ks, dir, APEX, alg, time(NULL), err, sizeof(err));
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	uint8_t sig[2048];
	sign_times_t times = times_now();
	int n = sign_rrset(&ks.keys[1], APEX, owner, &t->rs, times, sig, sizeof(sig));
	CU_ASSERT_FATAL(n > 18);
	CU_ASSERT_EQUAL((sig[0] << 8) | sig[1], t->rs.type);
	CU_ASSERT_EQUAL(sig[2], alg);
	CU_ASSERT_EQUAL(sig[3], want_labels);
	CU_ASSERT_EQUAL(wire_get_u32(sig + 8), times.expiration);
	CU_ASSERT_EQUAL(wire_get_u32(sig + 12), times.inception);
	CU_ASSERT_EQUAL((sig[16] << 8) | sig[17], ks.keys[1].tag);
	CU_ASSERT(!memcmp(sig + 18, APEX, sizeof(APEX)));
	served = served ? served : t;
	ldns_status s = verify(served, owner, &ks.keys[1], sig, (size_t)n);
	CU_ASSERT_EQUAL(s, LDNS_STATUS_OK);
	if (s != LDNS_STATUS_OK)
		fprintf(stderr, "\n  algorithm %u, type %u: %s\n", alg, t->rs.type,
			ldns_get_errorstr_by_id(s));
	/* the same signature over other data does not verify */
	sig[n - 1] ^= 1;
	CU_ASSERT_NOT_EQUAL(verify(served, owner, &ks.keys[1], sig, (size_t)n), LDNS_STATUS_OK);
	/* a key without its private half cannot sign */
	sign_keyset_t pub;
	CU_ASSERT_EQUAL_FATAL(sign_keyset_load(&pub, dir, APEX, false, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(sign_rrset(&pub.keys[1], APEX, owner, &t->rs, times, sig, sizeof(sig)),
			SHOAL_EINVAL);
	sign_keyset_clear(&pub);
	sign_keyset_clear(&ks);
}

/*
 * Records out of canonical order, a duplicate (signed once, RFC 4034 6.3),
 * names in mixed case in an RDATA and an owner: ldns, which puts the
 * RRset in canonical form its own way, verifies each algorithm's RRSIG.
 */
static void test_verify(void)
{
	static const char *const a[] = { "192.0.2.3", "192.0.2.1", "192.0.2.20", "192.0.2.1" };
	static const char *const a_once[] = { "192.0.2.20", "192.0.2.1", "192.0.2.3" };
	static const char *const mx[] = { "20 Mail2.Example.COM.", "10 MAIL.example.com." };
	static const char *const txt[] = { "\"Some Text\"", "\"\"" };
	static const uint8_t owner[] = "\3WwW\7Example\3com";
	static const uint8_t wild[] = "\1*\3sub\7example\3com";
	static const uint8_t algs[] = { 13, 15, 14, 8 };
	static test_rrset_t t, once;
	for (size_t i = 0; i < sizeof(algs); i++) {
		make_rrset(&t, DNS_TYPE_A, 300, a, 4);
		make_rrset(&once, DNS_TYPE_A, 300, a_once, 3);
		sign_and_verify(algs[i], &t, &once, owner, 3);
		make_rrset(&t, DNS_TYPE_MX, 300, mx, 2);
		sign_and_verify(algs[i], &t, NULL, owner, 3);
		make_rrset(&t, DNS_TYPE_TXT, 60, txt, 2);
		sign_and_verify(algs[i], &t, NULL, wild, 3); /* RFC 4034 3.1.3: "*" not counted */
	}
}

/* libdnssec's verdict on sig[0..len) of data[0..n) under k's public key. */
static int dnssec_verifies(const sign_key_t *k, const uint8_t *data, size_t n, const uint8_t *sig,
			   size_t len)
{
	dnssec_sign_ctx_t *ctx = NULL;
	dnssec_binary_t in = { .data = (uint8_t *)data, .size = n },
			s = { .data = (uint8_t *)sig, .size = len };
	int r = dnssec_sign_new(&ctx, k->key);
	if (r == DNSSEC_EOK)
		r = dnssec_sign_add(ctx, &in);
	if (r == DNSSEC_EOK)
		r = dnssec_sign_verify(ctx, false, &s);
	dnssec_sign_free(ctx);
	return r;
}

/*
 * P-256 RRSIGs are OpenSSL's (RFC 6605 4: r||s, 64 octets): libdnssec
 * verifies each over RFC 4034 3.1.8.1's data, rebuilt here for one A
 * record; a thousand of them, so that an r or s with leading zero octets
 * (one in 128 signatures) is padded right; another key's is refused.
 */
static void test_openssl_verified_by_libdnssec(void)
{
	static const char *const a[] = { "192.0.2.1" };
	static const uint8_t owner[] = "\3www\7example\3com";
	static test_rrset_t t;
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/ossl", tmpdir);
	sign_keyset_t ks;
	CU_ASSERT_EQUAL_FATAL(sign_keyset_create(&ks, dir, APEX, 13, time(NULL), err, sizeof(err)),
			      0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ks.keys[1].ossl);
	make_rrset(&t, DNS_TYPE_A, 300, a, 1);
	uint8_t sig[512], data[512];
	unsigned bad = 0;
	for (int i = 0; i < 1000; i++) {
		int n = sign_rrset(&ks.keys[1], APEX, owner, &t.rs, times_now(), sig, sizeof(sig));
		CU_ASSERT_EQUAL_FATAL(n, 18 + (int)sizeof(APEX) + 64);
		size_t header = (size_t)n - 64, at = header;
		memcpy(data, sig, header);
		memcpy(data + at, owner, sizeof(owner));
		at += sizeof(owner);
		memcpy(data + at, t.data, t.rs.data_len); /* type, class, TTL, RDLENGTH, RDATA */
		at += t.rs.data_len;
		bad += dnssec_verifies(&ks.keys[1], data, at, sig + header, 64) != DNSSEC_EOK;
		if (i == 0)
			CU_ASSERT_NOT_EQUAL(
				dnssec_verifies(&ks.keys[0], data, at, sig + header, 64),
				DNSSEC_EOK);
	}
	CU_ASSERT_EQUAL(bad, 0);
	sign_keyset_clear(&ks);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_verify),
		UNIT_TEST(test_openssl_verified_by_libdnssec),
		UNIT_END,
	};
	return sign_test_main(argc, argv, "sign_rrset", tests, tmpdir);
}
