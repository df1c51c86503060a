/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/sign_zone.c: a zone signed with NSEC, applied, and checked by ldns and BIND.
 */
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
			       .threads = threads };
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

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_full_signing_verifies),
		UNIT_TEST(test_what_is_signed),
		UNIT_TEST(test_nsec3_chain),
		UNIT_TEST(test_signature_times),
		UNIT_TEST(test_threads),
		UNIT_END,
	};
	return sign_test_main(argc, argv, "sign_zone", tests, tmpdir);
}
