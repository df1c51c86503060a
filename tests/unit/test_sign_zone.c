/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/sign_zone.c: a zone signed with NSEC, applied, and checked by ldns and BIND.
 */
#include "config.h"

#include <fcntl.h>
#include <ldns/ldns.h>
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
#include "zone/load.h"
#include "zone/sign_zone.h"
#include "zone/write.h"

static char tmpdir[] = "/tmp/shoal-test-sign-zone.XXXXXX";
static const uint8_t APEX[] = "\7example\3com";

/*
 * Every kind of name the signer treats apart: the apex, names with data
 * in mixed case, an empty non-terminal (c.b), a wildcard, a delegation
 * with glue and one with DS (signed: only the DS), a CNAME.
 */
static const char ZONE[] =
	"$ORIGIN example.com.\n$TTL 3600\n"
	"@ SOA ns1 hostmaster 7 3600 900 604800 300\n"
	"@ NS ns1\n@ NS ns2.example.net.\n@ A 192.0.2.1\n@ MX 10 Mail.Example.com.\n"
	"ns1 A 192.0.2.53\nwww A 192.0.2.80\nwww AAAA 2001:db8::80\n"
	"a.c.b TXT \"below an empty non-terminal\"\n*.wild TXT \"any\"\n"
	"sub NS ns.sub\nns.sub A 192.0.2.54\n"
	"secure NS ns.secure\nns.secure A 192.0.2.55\n"
	"secure DS 12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n"
	"alias CNAME www\n";

/* sign_text_to_file's signer publishes CDS and CDNSKEY (RFC 7344) while set. */
static bool publish_cds;

/*
 * The zone of text loaded, signed with new keys of alg (NSEC, or NSEC3
 * with nsec3's parameters) on threads, applied: the signed version,
 * written to path.
 */
static zone_t *sign_text_to_file(const char *text, unsigned threads, uint8_t alg,
				 const sign_nsec3_t *nsec3, const char *path)
{
	char file[300], dir[300], err[512] = "";
	snprintf(file, sizeof(file), "%s/example.com.zone", tmpdir);
	FILE *f = fopen(file, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	zone_t *z = NULL, *signed_z = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_load(file, APEX, NULL, sign_test_msg, NULL, &z), 0);
	snprintf(dir, sizeof(dir), "%s.keys", path);
	sign_keyset_t ks;
	CU_ASSERT_EQUAL_FATAL(sign_keyset_create(&ks, dir, APEX, alg, time(NULL), err, sizeof(err)),
			      0);
	sign_zone_opts_t o = { .times = sign_times_at(time(NULL), 86400),
			       .jitter = 3600,
			       .serial = 8,
			       .dnskey_ttl = 600,
			       .nsec3 = nsec3,
			       .threads = threads,
			       .cds_cdnskey = publish_cds };
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL_FATAL(sign_zone(z, &ks, &o, &cs), 0);
	CU_ASSERT_EQUAL(cs->from, 7);
	CU_ASSERT_EQUAL(cs->to, 8);
	zone_apply_opts_t ao = { .label = "signer", .msg = sign_test_msg };
	const changeset_t *sets[] = { cs };
	CU_ASSERT_EQUAL_FATAL(zone_apply(z, sets, 1, &ao, &signed_z), 0);
	CU_ASSERT_EQUAL(signed_z->serial, 8);
	CU_ASSERT_EQUAL(signed_z->denial, nsec3 ? ZONE_DENIAL_NSEC3 : ZONE_DENIAL_NSEC);
	/* signed already: refused */
	changeset_t *again = NULL;
	CU_ASSERT_EQUAL(sign_zone(signed_z, &ks, &o, &again), SHOAL_EEXIST);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(zone_write_fd(signed_z, fd), 0);
	close(fd);
	changeset_unref(cs);
	sign_keyset_clear(&ks);
	zone_unref(z);
	return signed_z;
}

/* The test zone signed on one thread, written to path. */
static zone_t *sign_to_file(uint8_t alg, const sign_nsec3_t *nsec3, const char *path)
{
	return sign_text_to_file(ZONE, 1, alg, nsec3, path);
}

/*
 * ldns-verify-zone and BIND's dnssec-verify pass the signed zone of each
 * algorithm, with NSEC, with NSEC3 as RFC 9276 asks (no salt, no extra
 * iterations) and with a salt and iterations.
 */
static void test_full_signing_verifies(void)
{
	static const uint8_t algs[] = { 13, 15, 14, 8 };
	static const sign_nsec3_t plain = { 0 }, opt_out = { .opt_out = true },
				  salted = { .iterations = 5,
					     .salt_len = 4,
					     .salt = { 0xab, 0xcd, 0x01, 0x00 } };
	const sign_nsec3_t *denials[] = { NULL, &plain, &salted, &opt_out };
	for (size_t i = 0; i < sizeof(algs) * 4; i++) {
		char path[300];
		const sign_nsec3_t *nsec3 = denials[i % 4];
		snprintf(path, sizeof(path), "%s/signed%u-%zu.zone", tmpdir, algs[i / 4], i % 4);
		zone_t *z = sign_to_file(algs[i / 4], nsec3, path);
		CU_ASSERT(sign_test_verifies(path, true));
		zone_unref(z);
	}
}

/*
 * On 4 threads (batches cut in ranges, the RRSIGs added in order after):
 * a zone of 3,000 names verifies with NSEC and NSEC3.
 */
static void test_threads(void)
{
	size_t cap = 200000, len = 0;
	char *text = malloc(cap);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	len += (size_t)snprintf(text, cap, "%s", ZONE);
	for (unsigned i = 0; i < 3000; i++)
		len += (size_t)snprintf(text + len, cap - len, "n%u.many A 192.0.2.%u\n", i,
					i % 256);
	static const sign_nsec3_t plain = { 0 };
	const sign_nsec3_t *denials[] = { NULL, &plain };
	for (size_t i = 0; i < 2; i++) {
		char path[300];
		snprintf(path, sizeof(path), "%s/threads-%zu.zone", tmpdir, i);
		zone_t *z = sign_text_to_file(text, 4, 13, denials[i], path);
		CU_ASSERT(sign_test_verifies(path, true));
		zone_unref(z);
	}
	free(text);
}

/*
 * What is signed and chained: no RRSIG on a delegation's NS or glue, one
 * on its DS; no NSEC at the empty non-terminal or the glue.
 */
static void test_what_is_signed(void)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/shape.zone", tmpdir);
	zone_t *z = sign_to_file(13, NULL, path);
	static const struct {
		const char *name;
		uint16_t type;
		bool signed_;
	} want[] = {
		{ "\3sub\7example\3com", DNS_TYPE_NS, false },
		{ "\2ns\3sub\7example\3com", DNS_TYPE_A, false },
		{ "\6secure\7example\3com", DNS_TYPE_DS, true },
		{ "\3www\7example\3com", DNS_TYPE_AAAA, true },
		{ "\7example\3com", DNS_TYPE_DNSKEY, true },
		{ "\7example\3com", DNS_TYPE_SOA, true },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const znode_t *n = zone_lookup(z, (const uint8_t *)want[i].name);
		CU_ASSERT_PTR_NOT_NULL_FATAL(n);
		const zrrset_t *rs = znode_rrset(n, want[i].type);
		CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
		CU_ASSERT_EQUAL(rs->sigs != NULL, want[i].signed_);
	}
	const znode_t *ent = zone_lookup(z, (const uint8_t *)"\1b\7example\3com");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ent);
	CU_ASSERT_PTR_NULL(znode_rrset(ent, DNS_TYPE_NSEC));
	const znode_t *glue = zone_lookup(z, (const uint8_t *)"\2ns\3sub\7example\3com");
	CU_ASSERT_PTR_NULL(znode_rrset(glue, DNS_TYPE_NSEC));
	zone_unref(z);
}

/*
 * NSEC3 (RFC 5155 7.1): the empty non-terminal and the delegations have
 * one, the glue none; an insecure delegation's shows no RRSIG; with
 * opt-out (RFC 5155 6) the insecure delegation has none.
 */
static void test_nsec3_chain(void)
{
	char path[300];
	static const sign_nsec3_t plain = { 0 };
	snprintf(path, sizeof(path), "%s/chain.zone", tmpdir);
	zone_t *z = sign_to_file(13, &plain, path);
	bool exact = false;
	CU_ASSERT_PTR_NOT_NULL(zone_nsec3_find(z, (const uint8_t *)"\1b\7example\3com", &exact));
	CU_ASSERT(exact);
	const znode_t *sub = zone_nsec3_find(z, (const uint8_t *)"\3sub\7example\3com", &exact);
	CU_ASSERT_FATAL(sub && exact);
	const zrrset_t *rs = znode_rrset(sub, DNS_TYPE_NSEC3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
	/* the bitmap after alg, flags, iterations, salt length (0), hash length and hash */
	const uint8_t *bitmap = rs->set.data + 10 + 5 + 1 + ZONE_NSEC3_HASH_LEN;
	static const uint8_t ns_only[] = { 0, 1, 0x20 }; /* window 0: type 2 (NS) */
	CU_ASSERT(!memcmp(bitmap, ns_only, sizeof(ns_only)));
	zone_nsec3_find(z, (const uint8_t *)"\2ns\3sub\7example\3com", &exact);
	CU_ASSERT(!exact);
	zone_unref(z);
	/* opt-out: the insecure delegation has none, the secure one has; the bit is set */
	static const sign_nsec3_t opt_out = { .opt_out = true };
	snprintf(path, sizeof(path), "%s/opt-out.zone", tmpdir);
	z = sign_to_file(13, &opt_out, path);
	const znode_t *cover = zone_nsec3_find(z, (const uint8_t *)"\3sub\7example\3com", &exact);
	CU_ASSERT_FATAL(cover != NULL);
	CU_ASSERT(!exact);
	CU_ASSERT_EQUAL(znode_rrset(cover, DNS_TYPE_NSEC3)->set.data[10 + 1], 1);
	CU_ASSERT_PTR_NOT_NULL(
		zone_nsec3_find(z, (const uint8_t *)"\6secure\7example\3com", &exact));
	CU_ASSERT(exact);
	zone_unref(z);
}

/*
 * Signatures: inception an hour back, expirations a day on less up to the
 * hour of jitter, spread (not all the same).
 */
static void test_signature_times(void)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/times.zone", tmpdir);
	uint32_t now = (uint32_t)time(NULL);
	zone_t *z = sign_to_file(13, NULL, path);
	uint32_t lowest = UINT32_MAX, highest = 0;
	size_t sigs = 0;
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it)) {
		for (uint16_t i = 0; i < n->rrset_count; i++) {
			const rrset_wire_t *s = znode_rrsets(n)[i].sigs;
			if (!s)
				continue;
			const uint8_t *rdata = s->data + 10;
			uint32_t exp = wire_get_u32(rdata + 8), inc = wire_get_u32(rdata + 12);
			CU_ASSERT(inc + 3600 >= now && inc + 3600 <= now + 5);
			lowest = exp < lowest ? exp : lowest;
			highest = exp > highest ? exp : highest;
			sigs++;
		}
	}
	CU_ASSERT(sigs > 10);
	CU_ASSERT(lowest + 3600 >= now + 86400 - 5);
	CU_ASSERT(highest <= now + 86400 + 5);
	CU_ASSERT(highest > lowest);
	zone_unref(z);
}

/* The key tag of the one RRSIG over rs (RFC 4034 3.1: after 16 octets of RDATA), or -1. */
static int rrsig_tag(const zrrset_t *rs)
{
	if (!rs || !rs->sigs || rs->sigs->rr_count != 1)
		return -1;
	return wire_get_u16(rs->sigs->data + 10 + 16);
}

/* The tag of z's KSK (the DNSKEY with flags 257, RFC 4034 2.1.1), or -1 when not one. */
static int ksk_tag(const zone_t *z)
{
	const zrrset_t *keys = znode_rrset(z->apex, DNS_TYPE_DNSKEY);
	int tag = -1, found = 0;
	wire_t w;
	wire_init_read(&w, keys->set.data, keys->set.data_len);
	for (uint16_t i = 0; i < keys->set.rr_count; i++) {
		wire_skip(&w, 8);
		uint16_t len = wire_read_u16(&w);
		const uint8_t *rdata = wire_read_ptr(&w, len);
		if (!w.err && wire_get_u16(rdata) == 257) {
			tag = ldns_calc_keytag_raw(rdata, len);
			found++;
		}
	}
	return found == 1 ? tag : -1;
}

/*
 * RFC 7344 4.1: CDS and CDNSKEY are signed by a key the parent's DS set
 * holds, the KSK, not by the ZSK as the rest of the apex: a zone's own
 * (here RFC 8078 4's request to remove the DS) too.
 */
static void test_own_cds_signed_by_ksk(void)
{
	char path[300], text[sizeof(ZONE) + 64];
	snprintf(text, sizeof(text), "%s@ CDS 0 0 0 00\n@ CDNSKEY 0 3 0 AA==\n", ZONE);
	snprintf(path, sizeof(path), "%s/own-cds.zone", tmpdir);
	zone_t *z = sign_text_to_file(text, 1, 13, NULL, path);
	int ksk = ksk_tag(z);
	CU_ASSERT(ksk >= 0);
	CU_ASSERT_EQUAL(rrsig_tag(znode_rrset(z->apex, DNS_TYPE_CDS)), ksk);
	CU_ASSERT_EQUAL(rrsig_tag(znode_rrset(z->apex, DNS_TYPE_CDNSKEY)), ksk);
	CU_ASSERT(sign_test_verifies(path, true));
	zone_unref(z);
}

/* The one record of type at z's apex: its RDATA and length, its TTL; NULL when not one. */
static const uint8_t *apex_record(const zone_t *z, uint16_t type, uint16_t *len, uint32_t *ttl)
{
	const zrrset_t *rs = znode_rrset(z->apex, type);
	if (!rs || rs->set.rr_count != 1)
		return NULL;
	*ttl = wire_get_u32(rs->set.data + 4);
	*len = wire_get_u16(rs->set.data + 8);
	return rs->set.data + 10;
}

/*
 * The DS of z's KSK with SHA-256 as ldns computes it (RFC 4509 2.1), into
 * out: its length, or 0. The DNSKEY's RDATA from the signed zone.
 */
static size_t ldns_ds_of_ksk(const zone_t *z, uint8_t *out, size_t cap)
{
	const zrrset_t *keys = znode_rrset(z->apex, DNS_TYPE_DNSKEY);
	size_t len = 0;
	wire_t w;
	wire_init_read(&w, keys->set.data, keys->set.data_len);
	for (uint16_t i = 0; i < keys->set.rr_count && !len; i++) {
		wire_skip(&w, 8);
		size_t pos = 0;
		const uint8_t *at = wire_read_ptr(&w, 2);
		uint16_t rdlen = wire_get_u16(at);
		wire_skip(&w, rdlen);
		if (w.err || wire_get_u16(at + 2) != 257)
			continue;
		ldns_rr *key = ldns_rr_new();
		ldns_rr_set_type(key, LDNS_RR_TYPE_DNSKEY);
		ldns_rr_set_owner(key, ldns_dname_new_frm_data(sizeof(APEX), APEX));
		ldns_rr *ds = ldns_wire2rdf(key, at, 2 + rdlen, &pos) == LDNS_STATUS_OK
				      ? ldns_key_rr2ds(key, LDNS_SHA256)
				      : NULL;
		ldns_buffer *b = ldns_buffer_new(512);
		if (ds && ldns_rr_rdata2buffer_wire(b, ds) == LDNS_STATUS_OK &&
		    ldns_buffer_position(b) <= cap) {
			len = ldns_buffer_position(b);
			memcpy(out, ldns_buffer_begin(b), len);
		}
		ldns_buffer_free(b);
		ldns_rr_free(ds);
		ldns_rr_free(key);
	}
	return len;
}

/*
 * With cds_cdnskey (RFC 7344 4, RFC 8078): at the apex one CDS, the KSK's
 * DS with SHA-256 as ldns computes it, and one CDNSKEY, the KSK's DNSKEY,
 * both with the DNSKEY TTL, both signed by the KSK (RFC 7344 4.1), in the
 * apex's NSEC or NSEC3 bitmap; the zone's own (RFC 8078 4's removal)
 * replaced. ldns-verify-zone and dnssec-verify pass it with NSEC and NSEC3.
 */
static void test_cds_cdnskey_published(void)
{
	static const sign_nsec3_t plain = { 0 };
	char text[sizeof(ZONE) + 64];
	snprintf(text, sizeof(text), "%s@ CDS 0 0 0 00\n@ CDNSKEY 0 3 0 AA==\n", ZONE);
	const char *texts[] = { ZONE, text };
	publish_cds = true;
	for (size_t i = 0; i < 4; i++) {
		char path[300];
		snprintf(path, sizeof(path), "%s/cds-%zu.zone", tmpdir, i);
		zone_t *z = sign_text_to_file(texts[i / 2], 1, 13, i % 2 ? &plain : NULL, path);
		uint16_t cds_len = 0, key_len = 0;
		uint32_t cds_ttl = 0, key_ttl = 0;
		const uint8_t *cds = apex_record(z, DNS_TYPE_CDS, &cds_len, &cds_ttl);
		const uint8_t *cdnskey = apex_record(z, DNS_TYPE_CDNSKEY, &key_len, &key_ttl);
		uint8_t ds[128];
		size_t ds_len = ldns_ds_of_ksk(z, ds, sizeof(ds));
		CU_ASSERT_FATAL(cds && cdnskey && ds_len);
		CU_ASSERT(cds_len == ds_len && !memcmp(cds, ds, ds_len));
		CU_ASSERT_EQUAL(wire_get_u16(cdnskey), 257);
		CU_ASSERT_EQUAL(ldns_calc_keytag_raw(cdnskey, key_len), ksk_tag(z));
		CU_ASSERT_EQUAL(wire_get_u16(ds), ksk_tag(z));
		CU_ASSERT(cds_ttl == 600 && key_ttl == 600);
		CU_ASSERT_EQUAL(rrsig_tag(znode_rrset(z->apex, DNS_TYPE_CDS)), ksk_tag(z));
		CU_ASSERT_EQUAL(rrsig_tag(znode_rrset(z->apex, DNS_TYPE_CDNSKEY)), ksk_tag(z));
		CU_ASSERT(sign_test_verifies(path, true));
		zone_unref(z);
	}
	publish_cds = false;
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_full_signing_verifies),
		UNIT_TEST(test_what_is_signed),
		UNIT_TEST(test_nsec3_chain),
		UNIT_TEST(test_signature_times),
		UNIT_TEST(test_threads),
		UNIT_TEST(test_own_cds_signed_by_ksk),
		UNIT_TEST(test_cds_cdnskey_published),
		UNIT_END,
	};
	return sign_test_main(argc, argv, "sign_zone", tests, tmpdir);
}
