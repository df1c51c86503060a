/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What answer_query tells its transport: the answer's kind and account name, and DNS cookies. */
#include "config.h"

#include <ldns/ldns.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cookie.h"
#include "proto/dns.h"
#include "tests/unit/unit.h"
#include "zone/answer.h"
#include "zone/zonedb.h"

static zonedb_t *db;

static const uint8_t ip_a[4] = { 192, 0, 2, 7 };
static const uint8_t ip_b[4] = { 192, 0, 2, 8 };
static const uint8_t client[8] = { 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8 };
#define NOW 1700000000u

/* How to ask: the COOKIE option's data (NULL for none), the address, the time. */
typedef struct ask {
	const uint8_t *cookie;
	uint16_t cookie_len;
	const uint8_t *ip;
	uint32_t now;
	const cookie_secrets_t *secrets;
	bool required;
	bool tcp;
	bool no_edns;
} ask_t;

static answer_info_t info;
static uint8_t out[DNS_TCP_MAX];
static size_t out_len;

/* Ask name/type as o says; returns the parsed answer (the caller frees it) or NULL. */
static ldns_pkt *ask(const char *name, uint16_t type, uint16_t qclass, const ask_t *o)
{
	ldns_rdf *qname = ldns_dname_new_frm_str(name);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qname);
	ldns_pkt *q = ldns_pkt_query_new(qname, (ldns_rr_type)type, (ldns_rr_class)qclass, 0);
	ldns_pkt_set_id(q, 0x1234);
	if (!o->no_edns)
		ldns_pkt_set_edns_udp_size(q, 1232);
	if (o->cookie) {
		uint8_t opt[4 + 64];
		opt[0] = 0;
		opt[1] = DNS_EDNS_COOKIE;
		opt[2] = (uint8_t)(o->cookie_len >> 8);
		opt[3] = (uint8_t)o->cookie_len;
		memcpy(opt + 4, o->cookie, o->cookie_len);
		ldns_pkt_set_edns_data(
			q, ldns_rdf_new_frm_data(LDNS_RDF_TYPE_UNKNOWN, 4 + o->cookie_len, opt));
	}
	uint8_t *wire = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL_FATAL(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
	ldns_pkt_free(q);
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT,
			     .tcp = o->tcp,
			     .cookies = o->secrets,
			     .now = o->now ? o->now : NOW,
			     .client_ip = o->ip ? o->ip : ip_a,
			     .client_ip_len = 4,
			     .cookie_required = o->required };
	/* the name is written, never cleared: leftovers must not show */
	memset(&info, 0xee, sizeof(info));
	out_len = answer_query(db, wire, len, out, sizeof(out), &ctx, &info);
	free(wire);
	if (out_len == 0)
		return NULL;
	ldns_pkt *p = NULL;
	CU_ASSERT_EQUAL_FATAL(ldns_wire2pkt(&p, out, out_len), LDNS_STATUS_OK);
	return p;
}

/* The answer's kind and account name (text, "" for none). */
static void check_account(const char *qname, uint16_t type, uint16_t qclass, enum answer_kind kind,
			  const char *name)
{
	ask_t o = { 0 };
	ldns_pkt *p = ask(qname, type, qclass, &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	ldns_pkt_free(p);
	CU_ASSERT_EQUAL(info.kind, kind);
	uint8_t want[NAME_MAXLEN];
	size_t want_len = 0;
	if (*name) {
		ldns_rdf *r = ldns_dname_new_frm_str(name);
		want_len = ldns_rdf_size(r);
		memcpy(want, ldns_rdf_data(r), want_len);
		ldns_rdf_deep_free(r);
	}
	CU_ASSERT_EQUAL(info.name_len, want_len);
	CU_ASSERT(info.name_len == want_len && memcmp(info.name, want, want_len) == 0);
	if (info.kind != kind || info.name_len != want_len)
		fprintf(stderr, "  %s/%u: kind %d, name_len %u\n", qname, type, info.kind,
			info.name_len);
}

/*
 * Rate limiting counts an answer for the query name, but made-up names
 * below one node share one account: NXDOMAIN counts for the closest
 * encloser, a referral for its cut, a wildcard answer for the wildcard's
 * parent; errors for no name at all.
 */
static void test_kind_and_account(void)
{
	static const struct {
		const char *qname;
		uint16_t type, qclass;
		enum answer_kind kind;
		const char *account;
	} cases[] = {
		{ "www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_POSITIVE,
		  "www.example.com." },
		{ "WWW.Example.COM.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_POSITIVE,
		  "www.example.com." },
		{ "alias.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_POSITIVE,
		  "alias.example.com." },
		{ "mail.example.com.", DNS_TYPE_MX, DNS_CLASS_IN, ANSWER_NODATA,
		  "mail.example.com." },
		{ "nothere.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_NXDOMAIN,
		  "example.com." },
		{ "x.y.a.b.c.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_NXDOMAIN,
		  "a.b.c.example.com." },
		{ "dangling.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_NXDOMAIN,
		  "example.com." },
		{ "host.sub.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_REFERRAL,
		  "sub.example.com." },
		{ "random1.wild.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_POSITIVE,
		  "wild.example.com." },
		{ "random2.wild.example.com.", DNS_TYPE_MX, DNS_CLASS_IN, ANSWER_NODATA,
		  "wild.example.com." },
		{ "sub.wild.example.com.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_POSITIVE,
		  "sub.wild.example.com." },
		{ "example.org.", DNS_TYPE_A, DNS_CLASS_IN, ANSWER_ERROR, "" },
		{ "www.example.com.", DNS_TYPE_A, DNS_CLASS_CH, ANSWER_ERROR, "" },
		{ "example.com.", DNS_TYPE_AXFR, DNS_CLASS_IN, ANSWER_ERROR, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_account(cases[i].qname, cases[i].type, cases[i].qclass, cases[i].kind,
			      cases[i].account);
}

/* The data of the answer's COOKIE option into c (40 octets); its length, or 0 for none. */
static size_t answer_cookie(ldns_pkt *p, uint8_t *c)
{
	ldns_rdf *d = ldns_pkt_edns_data(p);
	if (!d)
		return 0;
	const uint8_t *o = ldns_rdf_data(d);
	size_t len = ldns_rdf_size(d);
	for (size_t i = 0; i + 4 <= len;) {
		uint16_t code = (uint16_t)(o[i] << 8 | o[i + 1]);
		uint16_t olen = (uint16_t)(o[i + 2] << 8 | o[i + 3]);
		if (code == DNS_EDNS_COOKIE && olen <= 40 && i + 4 + olen <= len) {
			memcpy(c, o + i + 4, olen);
			return olen;
		}
		i += 4 + (size_t)olen;
	}
	return 0;
}

static cookie_secrets_t secrets;

/*
 * RFC 7873 5.2: a client cookie alone gets a server cookie; that cookie
 * from the same address is valid and sent back as it came; from another
 * address it is not, and a fresh one is sent; a cookie older than half an
 * hour is valid and renewed, one older than an hour is not valid.
 */
static void test_cookie_exchange(void)
{
	uint8_t c[40], first[40];
	ask_t o = { .cookie = client, .cookie_len = 8, .secrets = &secrets };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p), 2);
	CU_ASSERT_EQUAL(answer_cookie(p, first), 24);
	ldns_pkt_free(p);
	CU_ASSERT_EQUAL(memcmp(first, client, 8), 0);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_CLIENT);
	uint8_t made[COOKIE_SERVER_LEN];
	cookie_make(made, client, ip_a, 4, NOW, secrets.current);
	CU_ASSERT_EQUAL(memcmp(first + 8, made, COOKIE_SERVER_LEN), 0);

	/* replayed from the same address: valid, and sent back unchanged */
	o.cookie = first;
	o.cookie_len = 24;
	o.now = NOW + 60;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_VALID);
	CU_ASSERT_EQUAL(answer_cookie(p, c), 24);
	CU_ASSERT_EQUAL(memcmp(c, first, 24), 0);
	ldns_pkt_free(p);

	/* from another address: not valid; a fresh cookie for that address */
	o.ip = ip_b;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_INVALID);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(answer_cookie(p, c), 24);
	cookie_make(made, client, ip_b, 4, NOW + 60, secrets.current);
	CU_ASSERT_EQUAL(memcmp(c + 8, made, COOKIE_SERVER_LEN), 0);
	ldns_pkt_free(p);

	/* 31 minutes on: valid, renewed (RFC 9018 4.3) */
	o.ip = ip_a;
	o.now = NOW + 31 * 60;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_VALID);
	CU_ASSERT_EQUAL(answer_cookie(p, c), 24);
	CU_ASSERT_NOT_EQUAL(memcmp(c, first, 24), 0);
	ldns_pkt_free(p);

	/* past the hour: no longer valid */
	o.now = NOW + 3601;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_INVALID);
	ldns_pkt_free(p);

	/* cookies off (no secrets): the option is ignored, as by a server without them */
	o.now = NOW;
	o.secrets = NULL;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_NONE);
	CU_ASSERT_EQUAL(answer_cookie(p, c), 0);
	ldns_pkt_free(p);
}

/* After a rotation the previous secret's cookies are valid while it is staging, and after not. */
static void test_cookie_staging(void)
{
	uint8_t c[40], first[40];
	ask_t o = { .cookie = client, .cookie_len = 8, .secrets = &secrets };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(answer_cookie(p, first), 24);
	ldns_pkt_free(p);

	cookie_secrets_t rotated = { .has_staging = true };
	randombytes_buf(rotated.current, sizeof(rotated.current));
	memcpy(rotated.staging, secrets.current, sizeof(rotated.staging));
	o.secrets = &rotated;
	o.cookie = first;
	o.cookie_len = 24;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_VALID);
	CU_ASSERT_EQUAL(answer_cookie(p, c), 24);
	uint8_t made[COOKIE_SERVER_LEN];
	cookie_make(made, client, ip_a, 4, NOW, rotated.current);
	CU_ASSERT_EQUAL(memcmp(c + 8, made, COOKIE_SERVER_LEN), 0); /* renewed under the new one */
	ldns_pkt_free(p);

	rotated.has_staging = false;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(info.cookie, ANSWER_COOKIE_INVALID);
	ldns_pkt_free(p);
}

/* RFC 7873 5.2.2: a COOKIE option of a length other than 8 or 16 to 40 is FORMERR. */
static void test_cookie_malformed(void)
{
	uint8_t data[48];
	memset(data, 0x5a, sizeof(data));
	for (uint16_t len = 0; len <= sizeof(data); len++) {
		ask_t o = { .cookie = data, .cookie_len = len, .secrets = &secrets };
		ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		bool ok = len == 8 || (len >= 16 && len <= 40);
		CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p),
				ok ? LDNS_RCODE_NOERROR : LDNS_RCODE_FORMERR);
		CU_ASSERT_EQUAL(info.malformed, !ok);
		CU_ASSERT_EQUAL(info.kind, ok ? ANSWER_POSITIVE : ANSWER_ERROR);
		ldns_pkt_free(p);
	}
}

/*
 * RFC 7873 5.2.3: BADCOOKIE only when cookies are required, and then only
 * over UDP to a client without a valid server cookie; it carries a fresh
 * cookie to retry with.
 */
static void test_cookie_required(void)
{
	uint8_t c[40];
	ask_t o = { .cookie = client, .cookie_len = 8, .secrets = &secrets, .required = true };
	ldns_pkt *p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL((int)ldns_pkt_get_rcode(p) | (int)ldns_pkt_edns_extended_rcode(p) << 4,
			DNS_RCODE_BADCOOKIE);
	CU_ASSERT_EQUAL(info.rcode, DNS_RCODE_BADCOOKIE);
	CU_ASSERT_EQUAL(info.kind, ANSWER_ERROR);
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p), 0);
	CU_ASSERT_EQUAL(answer_cookie(p, c), 24);
	ldns_pkt_free(p);

	o.cookie = c;
	o.cookie_len = 24;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(ldns_pkt_ancount(p), 2);
	ldns_pkt_free(p);

	/* over TCP the connection proves the address */
	o.cookie = client;
	o.cookie_len = 8;
	o.tcp = true;
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ldns_pkt_free(p);

	/* without a COOKIE option, cookies are not asked for (RFC 7873 5.2.1) */
	o = (ask_t){ .secrets = &secrets, .required = true };
	p = ask("www.example.com.", DNS_TYPE_A, DNS_CLASS_IN, &o);
	CU_ASSERT_EQUAL(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
	ldns_pkt_free(p);
}

static void on_msg(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	if (is_error)
		fprintf(stderr, "%s\n", msg);
}

int main(int argc, char **argv)
{
	char path[4096];
	const char *src = getenv("SHOAL_SRCDIR");
	snprintf(path, sizeof(path), "%s/tests/unit/zones/example.zone", src ? src : ".");
	zone_spec_t spec = { .name = "example.com", .file = path, .limits = ZONE_LIMITS_DEFAULT };
	if (sodium_init() < 0 || zonedb_build(&spec, 1, NULL, NULL, on_msg, NULL, &db) != 0) {
		fprintf(stderr, "test zone does not load\n");
		return 1;
	}
	randombytes_buf(secrets.current, sizeof(secrets.current));
	static const unit_test_t tests[] = {
		UNIT_TEST(test_kind_and_account), UNIT_TEST(test_cookie_exchange),
		UNIT_TEST(test_cookie_staging),   UNIT_TEST(test_cookie_malformed),
		UNIT_TEST(test_cookie_required),  UNIT_END,
	};
	int rc = unit_run(argc, argv, "answer_info", tests);
	zonedb_free(db);
	return rc;
}
