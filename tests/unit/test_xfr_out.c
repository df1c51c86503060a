/*
 * Unit tests for zone/xfr_out.c, AXFR: every message of a transfer is
 * parsed by ldns, the records put together again and compared with the
 * zone file as ldns reads it, so the test does not restate the writer.
 */
#include "config.h"

#include <unistd.h>

#include "proto/tsig.h"
#include "tests/unit/xfr_test.h"
#include "zone/xfr_out.h"

static char tmpdir[] = "/tmp/shoal-xfrout-XXXXXX";

/* What a transfer looked like on the wire. */
typedef struct seen {
	ldns_rr_list *rrs;      /* every answer record, in order */
	size_t messages, octets, largest;
	size_t multi;           /* messages with more than one record */
	bool header_ok;         /* ID, QR, AA, opcode, RCODE, no TC, in every message */
	bool question_ok;       /* the question in the first message only */
	bool opt_first_only;
	size_t uncompressed;    /* what the records would take without compression */
} seen_t;

/* Run a transfer to its end, parsing every message with ldns. */
static int run(xfr_out_t *x, uint16_t id, tsig_ctx_t *server, tsig_ctx_t *client, seen_t *s)
{
	static uint8_t buf[DNS_TCP_MAX];
	memset(s, 0, sizeof(*s));
	s->rrs = ldns_rr_list_new();
	s->header_ok = s->question_ok = s->opt_first_only = true;
	int len;
	while ((len = xfr_out_next(x, buf)) > 0) {
		if ((size_t)len > x->limit - x->reserve)
			return SHOAL_ESPACE; /* the room for the TSIG RR was not kept */
		if (server) {
			len = tsig_sign(server, buf, (size_t)len, x->limit, 1700000000);
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
	CU_ASSERT_EQUAL(xfr_out_next(&x, (uint8_t[DNS_TCP_MAX]){ 0 }), 0);
	CU_ASSERT_TRUE(s.header_ok);
	CU_ASSERT_TRUE(s.question_ok);
	CU_ASSERT(s.largest <= limit);
	CU_ASSERT_EQUAL(x.messages, s.messages);
	CU_ASSERT_EQUAL(x.records, ldns_rr_list_rr_count(s.rrs));
	CU_ASSERT(s.octets < s.uncompressed); /* names were compressed */
	CU_ASSERT_TRUE(same_as_file(s.rrs, path, origin));
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

/*
 * A zone of every kind of owner: delegations with glue, wildcards, empty
 * non-terminals, compressible and other names in RDATA, and an RRset far
 * bigger than a small message, so it continues over several.
 */
static const char *write_big_zone(int names)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/big.zone", tmpdir);
	FILE *f = fopen(path, "w");
	if (!f)
		return NULL;
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

/* Every message keeps room for the TSIG RR, and the stream verifies (RFC 8945 5.3.1). */
static void test_axfr_tsig_room(void)
{
	const char *path = write_big_zone(2000);
	zone_t *z = xt_load(path, "big.test.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	tsig_key_t key;
	CU_ASSERT_EQUAL_FATAL(tsig_key_init(&key, "xfr-key", "hmac-sha512",
					    "c2VjcmV0IHNlY3JldCBzZWNyZXQgc2VjcmV0"), 0);
	tsig_ctx_t client, server;
	tsig_init(&client, &key, TSIG_FUDGE_DEFAULT);
	uint8_t req[1024];
	size_t rlen = xt_request(req, 7, "big.test.", DNS_TYPE_AXFR, 0);
	int slen = tsig_sign(&client, req, rlen, sizeof(req), 1700000000);
	CU_ASSERT_FATAL(slen > 0);
	tsig_init(&server, &key, TSIG_FUDGE_DEFAULT);
	CU_ASSERT_EQUAL_FATAL(tsig_verify(&server, req, (size_t)slen, NULL, 1700000000), 0);
	query_t q;
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, (size_t)slen), QUERY_OK);
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
	snprintf(path, sizeof(path), "%s/fat.zone", tmpdir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "$ORIGIN fat.test.\n@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\n"
		   "ns1 300 A 192.0.2.1\nfat 300 TXT \"%0200d\" \"%0200d\" \"%0200d\"\n", 1, 2, 3);
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
		len = xfr_out_next(&x, buf);
	CU_ASSERT_EQUAL(len, SHOAL_ESPACE);
	CU_ASSERT_FALSE(xfr_out_done(&x));
	CU_ASSERT_EQUAL(xfr_out_next(&x, buf), SHOAL_EINVAL);
	xfr_out_clear(&x);
	xfr_out_clear(&x); /* twice is fine */
	zone_unref(z);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_axfr_signed_nsec3),
		UNIT_TEST(test_axfr_signed_nsec),
		UNIT_TEST(test_axfr_many_messages),
		UNIT_TEST(test_axfr_tsig_room),
		UNIT_TEST(test_axfr_record_too_big),
		UNIT_END,
	};
	int rc = unit_run("xfr_out", tests);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
