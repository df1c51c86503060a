/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/sign_version.c: a file's version signed, its serial, its keys, its state. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/wire.h"
#include "tests/unit/sign_test.h"
#include "unit.h"
#include "zone/changeset.h"
#include "zone/load.h"
#include "zone/sign_version.h"
#include "zone/write.h"

static char tmpdir[] = "/tmp/shoal-test-sign-version.XXXXXX";
static const uint8_t APEX[] = "\7example\3com";
static char last_error[1024];

static void msg(void *arg, bool is_error, const char *text)
{
	(void)arg;
	if (is_error)
		snprintf(last_error, sizeof(last_error), "%s", text);
}

/* The zone at serial with extra (a line, or ""), read from a file of its own in tmpdir. */
static zone_t *file_version(uint32_t serial, const char *extra)
{
	char file[300];
	snprintf(file, sizeof(file), "%s/example.com.zone", tmpdir);
	FILE *f = fopen(file, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f,
		"$ORIGIN example.com.\n$TTL 3600\n@ SOA ns1 hostmaster %u 3600 900 604800 300\n"
		"@ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.80\n%s\n",
		serial, extra);
	fclose(f);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_load(file, APEX, NULL, msg, NULL, &z), 0);
	return z;
}

/* The spec of a policy with keys in tmpdir/sub (NSEC, P-256, a day's signatures). */
static zone_sign_spec_t spec_in(const char *sub, char *dir, size_t cap)
{
	snprintf(dir, cap, "%s/%s", tmpdir, sub);
	return (zone_sign_spec_t){ .keys_dir = dir,
				   .algorithm = 13,
				   .rrsig_lifetime = 86400,
				   .rrsig_refresh = 21600,
				   .rrsig_jitter = 3600,
				   .dnskey_ttl = 600,
				   .threads = 1 };
}

/* sign_version of z (was: served, or NULL) as s says: its return code, *out set. */
static int sign(const zone_t *z, const zone_t *was, const zone_sign_spec_t *s, zone_t **out)
{
	last_error[0] = '\0';
	return sign_version(z, was, s, "example.com.zone", NULL, msg, NULL, out);
}

/* The serial kept in dir's state of the test zone, or -1. */
static long long kept_serial(const char *dir)
{
	char path[400];
	unsigned serial;
	snprintf(path, sizeof(path), "%s/example.com.signed", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int got = fscanf(f, "%u", &serial);
	fclose(f);
	return got == 1 ? (long long)serial : -1;
}

/* A first signing makes the keys and keeps the serial; the same file again is the same version. */
static void test_first_and_same(void)
{
	char dir[300];
	zone_sign_spec_t s = spec_in("first", dir, sizeof(dir));
	zone_t *z = file_version(10, ""), *v1 = NULL, *v2 = NULL;
	CU_ASSERT_EQUAL_FATAL(sign(z, NULL, &s, &v1), 0);
	CU_ASSERT_EQUAL(v1->serial, 10);
	CU_ASSERT_EQUAL(v1->denial, ZONE_DENIAL_NSEC);
	CU_ASSERT_PTR_NOT_NULL(znode_rrset(v1->apex, DNS_TYPE_DNSKEY));
	CU_ASSERT_EQUAL(kept_serial(dir), 10);
	struct stat st;
	char path[400];
	snprintf(path, sizeof(path), "%s/example.com.signed", dir);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(sign(z, v1, &s, &v2), 0);
	CU_ASSERT_PTR_EQUAL(v2, v1); /* nothing changed: no new serial */
	zone_unref(v2);
	zone_unref(z);
	/* a change with the same serial: one past the last */
	z = file_version(10, "new A 192.0.2.9");
	CU_ASSERT_EQUAL(sign(z, v1, &s, &v2), 0);
	CU_ASSERT_EQUAL(v2->serial, 11);
	CU_ASSERT_EQUAL(kept_serial(dir), 11);
	zone_unref(v2);
	zone_unref(z);
	/* a newer file serial is taken */
	z = file_version(50, "new A 192.0.2.9");
	CU_ASSERT_EQUAL(sign(z, v1, &s, &v2), 0);
	CU_ASSERT_EQUAL(v2->serial, 50);
	zone_unref(v2);
	zone_unref(z);
	zone_unref(v1);
}

/* After a restart (no version served) the kept serial is the last: the serial goes forward. */
static void test_restart_goes_forward(void)
{
	char dir[300];
	zone_sign_spec_t s = spec_in("restart", dir, sizeof(dir));
	zone_t *z = file_version(10, ""), *v = NULL;
	CU_ASSERT_EQUAL_FATAL(sign(z, NULL, &s, &v), 0);
	zone_unref(v);
	CU_ASSERT_EQUAL_FATAL(sign(z, NULL, &s, &v), 0);
	CU_ASSERT_EQUAL(v->serial, 11);
	zone_unref(v);
	zone_unref(z);
}

/* A file with a record a signer makes is refused, the owner and type named. */
static void test_presigned_refused(void)
{
	char dir[300];
	zone_sign_spec_t s = spec_in("presigned", dir, sizeof(dir));
	zone_t *z = file_version(10, "www NSEC ns1 A RRSIG NSEC"), *v = NULL;
	CU_ASSERT_EQUAL(sign(z, NULL, &s, &v), SHOAL_EZONE);
	CU_ASSERT_PTR_NULL(v);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_error, "www.example.com. holds DNSSEC records (NSEC)"));
	CU_ASSERT_EQUAL(access(dir, F_OK), -1); /* nothing made */
	zone_unref(z);
}

/* A private key file gone fails the signing with the file named. */
static void test_key_missing(void)
{
	char dir[300], cmd[400];
	zone_sign_spec_t s = spec_in("missing", dir, sizeof(dir));
	zone_t *z = file_version(10, ""), *v = NULL;
	CU_ASSERT_EQUAL_FATAL(sign(z, NULL, &s, &v), 0);
	zone_unref(v);
	snprintf(cmd, sizeof(cmd), "rm %s/*.pem", dir);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	v = NULL;
	CU_ASSERT(sign(z, NULL, &s, &v) < 0);
	CU_ASSERT_PTR_NULL(v);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_error, ".pem"));
	CU_ASSERT_PTR_NOT_NULL(strstr(last_error, dir));
	zone_unref(z);
}

/* --check: the file version itself, no keys made, nothing written. */
static void test_check_only(void)
{
	char dir[300];
	zone_sign_spec_t s = spec_in("check", dir, sizeof(dir));
	s.check_only = true;
	zone_t *z = file_version(10, ""), *v = NULL;
	CU_ASSERT_EQUAL(sign(z, NULL, &s, &v), 0);
	CU_ASSERT_PTR_EQUAL(v, z);
	CU_ASSERT_EQUAL(access(dir, F_OK), -1);
	zone_unref(v);
	zone_unref(z);
}

/* Past the refresh point the same file is signed anew; NSEC3 as the spec asks. */
static void test_refresh_and_nsec3(void)
{
	char dir[300], path[400];
	zone_sign_spec_t s = spec_in("refresh", dir, sizeof(dir));
	zone_t *z = file_version(10, ""), *v1 = NULL, *v2 = NULL;
	CU_ASSERT_EQUAL_FATAL(sign(z, NULL, &s, &v1), 0);
	/* the last signing a day back */
	snprintf(path, sizeof(path), "%s/example.com.signed", dir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "10 - %lld\n", (long long)time(NULL) - 86400);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(sign(z, v1, &s, &v2), 0);
	CU_ASSERT_PTR_NOT_EQUAL(v2, v1);
	CU_ASSERT_EQUAL(v2->serial, 11);
	zone_unref(v1);
	/* the policy asks NSEC3 now: signed anew with its parameters and a salt kept */
	s.nsec3 = true;
	s.nsec3_iterations = 1;
	s.nsec3_salt_len = 4;
	CU_ASSERT_EQUAL_FATAL(sign(z, v2, &s, &v1), 0);
	CU_ASSERT_EQUAL(v1->denial, ZONE_DENIAL_NSEC3);
	CU_ASSERT_EQUAL(v1->nsec3.salt_len, 4);
	CU_ASSERT_EQUAL(v1->serial, 12);
	zone_unref(v2);
	zone_t *z2 = file_version(12, "new A 192.0.2.9");
	CU_ASSERT_EQUAL_FATAL(sign(z2, v1, &s, &v2), 0);
	CU_ASSERT_EQUAL(v2->serial, 13);
	CU_ASSERT_EQUAL(memcmp(v2->nsec3.salt, v1->nsec3.salt, 4), 0);
	zone_unref(v2);
	zone_unref(v1);
	zone_unref(z2);
	zone_unref(z);
}

/* z's SOA record's wire (type to RDATA) and the offset of its serial in the RDATA. */
static const uint8_t *soa_of(const zone_t *z, uint16_t *rdlen)
{
	const uint8_t *rec = znode_rrset(z->apex, DNS_TYPE_SOA)->set.data;
	*rdlen = wire_get_u16(rec + 8);
	return rec;
}

/*
 * An update's changeset to v (as zone_update_changes makes one): v's SOA
 * out, the same at serial in, then the records of `del` (its RRsets at
 * owner, of the types listed, 0-ended) out and an A of `add` in.
 */
static changeset_t *update_cs(const zone_t *v, uint32_t serial, const uint8_t *del,
			      const uint16_t *types, const uint8_t *add)
{
	uint16_t rdlen;
	const uint8_t *soa = soa_of(v, &rdlen);
	uint8_t rdata[600];
	memcpy(rdata, soa + 10, rdlen);
	wire_t w;
	wire_init_write(&w, rdata + rdlen - 20, 4);
	wire_write_u32(&w, serial);
	changeset_t *cs = changeset_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	CU_ASSERT_EQUAL(changeset_add(cs, false, APEX, DNS_TYPE_SOA, 3600, soa + 10, rdlen), 0);
	CU_ASSERT_EQUAL(changeset_add(cs, true, APEX, DNS_TYPE_SOA, 3600, rdata, rdlen), 0);
	const znode_t *n = del ? zone_lookup(v, del) : NULL;
	for (size_t t = 0; n && types[t]; t++) {
		const zrrset_t *rs = znode_rrset(n, types[t]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
		const uint8_t *p = rs->set.data;
		for (uint16_t k = 0; k < rs->set.rr_count; k++, p += 10 + wire_get_u16(p + 8))
			CU_ASSERT_EQUAL(changeset_add(cs, false, del, types[t], wire_get_u32(p + 4),
						      p + 10, wire_get_u16(p + 8)),
					0);
	}
	static const uint8_t a[4] = { 192, 0, 2, 9 };
	if (add)
		CU_ASSERT_EQUAL(changeset_add(cs, true, add, DNS_TYPE_A, 300, a, 4), 0);
	CU_ASSERT_EQUAL_FATAL(changeset_seal(cs), 0);
	return cs;
}

/* v written to tmpdir/name and passed by both verifiers. */
static bool verifies(const zone_t *v, const char *name)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(zone_write_fd(v, fd), 0);
	close(fd);
	return sign_test_verifies(path, true);
}

/*
 * sign_update: an added name signed alone (the other RRsets' RRSIGs
 * kept), a name deleted whole with its NSEC and RRSIGs, the serial kept
 * and taken past a state ahead; sign_unsigned: no signer's record left.
 */
static void test_update(void)
{
	char dir[300];
	static const uint8_t NEW[] = "newexamplecom", WWW[] = "wwwexamplecom",
			     NS1[] = "ns1examplecom";
	zone_sign_spec_t s = spec_in("update", dir, sizeof(dir));
	zone_t *z = file_version(10, ""), *v1 = NULL, *v2 = NULL, *v3 = NULL, *bare = NULL;
	CU_ASSERT_EQUAL_FATAL(sign(z, NULL, &s, &v1), 0);
	changeset_t *cs = update_cs(v1, 11, NULL, NULL, NEW), *journal = NULL;
	CU_ASSERT_EQUAL_FATAL(
		sign_update(v1, cs, &s, "update", NULL, 1 << 20, msg, NULL, &v2, &journal), 0);
	changeset_unref(cs);
	CU_ASSERT_EQUAL(v2->serial, 11);
	CU_ASSERT_EQUAL(kept_serial(dir), 11);
	CU_ASSERT_PTR_NOT_NULL(znode_rrset(zone_lookup(v2, NEW), DNS_TYPE_RRSIG));
	/* signed alone: ns1's signatures are the very ones of v1 */
	const zrrset_t *a1 = znode_rrset(zone_lookup(v1, NS1), DNS_TYPE_RRSIG);
	const zrrset_t *a2 = znode_rrset(zone_lookup(v2, NS1), DNS_TYPE_RRSIG);
	CU_ASSERT_TRUE(a1->set.data_len == a2->set.data_len &&
		       !memcmp(a1->set.data, a2->set.data, a1->set.data_len));
	CU_ASSERT_PTR_NOT_NULL_FATAL(journal);
	CU_ASSERT_EQUAL(journal->to, 11);
	changeset_unref(journal);
	CU_ASSERT_TRUE(verifies(v2, "added.zone"));
	/* a state ahead of what is served (a reload that failed after): past it */
	char path[400];
	snprintf(path, sizeof(path), "%s/example.com.signed", dir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "20 - %lld\n", (long long)time(NULL));
	fclose(f);
	static const uint16_t all[] = { DNS_TYPE_A, DNS_TYPE_RRSIG, DNS_TYPE_NSEC, 0 };
	cs = update_cs(v2, 12, WWW, all, NULL);
	CU_ASSERT_EQUAL_FATAL(
		sign_update(v2, cs, &s, "update", NULL, 1 << 20, msg, NULL, &v3, &journal), 0);
	changeset_unref(cs);
	changeset_unref(journal);
	CU_ASSERT_EQUAL(v3->serial, 21);
	CU_ASSERT_EQUAL(kept_serial(dir), 21);
	CU_ASSERT_PTR_NULL(zone_lookup(v3, WWW));
	CU_ASSERT_TRUE(verifies(v3, "deleted.zone"));
	CU_ASSERT_EQUAL_FATAL(sign_unsigned(v3, &s, "file", NULL, msg, NULL, &bare), 0);
	CU_ASSERT_EQUAL(bare->serial, 21);
	CU_ASSERT_EQUAL(bare->denial, ZONE_DENIAL_NONE);
	CU_ASSERT_PTR_NULL(znode_rrset(bare->apex, DNS_TYPE_DNSKEY));
	CU_ASSERT_PTR_NULL(znode_rrset(bare->apex, DNS_TYPE_RRSIG));
	CU_ASSERT_PTR_NOT_NULL(znode_rrset(zone_lookup(bare, NEW), DNS_TYPE_A));
	CU_ASSERT_PTR_NULL(znode_rrset(zone_lookup(bare, NEW), DNS_TYPE_NSEC));
	zone_unref(bare);
	zone_unref(v3);
	zone_unref(v2);
	zone_unref(v1);
	zone_unref(z);
}

/* The signing time kept in dir's state of the test zone, or -1. */
static long long kept_signed_at(const char *dir)
{
	char path[400], salt[600];
	unsigned serial;
	long long at;
	snprintf(path, sizeof(path), "%s/example.com.signed", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int got = fscanf(f, "%u %599s %lld", &serial, salt, &at);
	fclose(f);
	return got == 3 ? at : -1;
}

/*
 * A refresh batch: nothing due now (no change, the next batch when the
 * first RRSIG reaches its refresh point); at a time inside the jitter's
 * hour some RRsets signed anew at the next serial, and the state's signing
 * time moved so that a reload finds the refresh due exactly when the next
 * batch is; without the keys' list nothing is made and an error is said.
 */
static void test_refresh_batch(void)
{
	char dir[300], path[400];
	zone_sign_spec_t s = spec_in("batch", dir, sizeof(dir));
	zone_t *z = file_version(10, "a A 192.0.2.1\nb A 192.0.2.2\nc A 192.0.2.3"), *v1 = NULL;
	int64_t t0 = time(NULL);
	CU_ASSERT_EQUAL_FATAL(sign(z, NULL, &s, &v1), 0);
	long long first = kept_signed_at(dir);
	changeset_t *cs = NULL;
	zone_t *v2 = NULL;
	int64_t next;
	CU_ASSERT_EQUAL(sign_version_refresh(v1, &s, t0, 60, NULL, msg, NULL, &cs, &v2, &next), 0);
	CU_ASSERT(!cs && !v2);
	int64_t keep = (int64_t)s.rrsig_lifetime - s.rrsig_refresh;
	CU_ASSERT(next >= t0 + keep - s.rrsig_jitter && next <= t0 + keep);
	CU_ASSERT_EQUAL(kept_signed_at(dir), first);
	/* half an hour into the jitter's hour: some due, not all */
	int64_t t = t0 + keep - s.rrsig_jitter / 2;
	CU_ASSERT_EQUAL_FATAL(sign_version_refresh(v1, &s, t, 60, NULL, msg, NULL, &cs, &v2, &next),
			      0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v2);
	CU_ASSERT_EQUAL(v2->serial, 11);
	CU_ASSERT_EQUAL(kept_serial(dir), 11);
	CU_ASSERT(next > t + 60);
	long long at = kept_signed_at(dir);
	CU_ASSERT(at > first);
	/* the state's refresh point (sign_version's) is the next batch's */
	if (next < t + keep - s.rrsig_jitter)
		CU_ASSERT_EQUAL(at + s.rrsig_lifetime - s.rrsig_refresh - s.rrsig_jitter, next);
	changeset_unref(cs);
	zone_unref(v2);
	/* the keys' list gone: an error, and no key made in its place */
	snprintf(path, sizeof(path), "%s/example.com.keys", dir);
	CU_ASSERT_EQUAL_FATAL(unlink(path), 0);
	last_error[0] = '\0';
	CU_ASSERT(sign_version_refresh(v1, &s, t, 60, NULL, msg, NULL, &cs, &v2, &next) < 0);
	CU_ASSERT(!cs && !v2 && last_error[0]);
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
	zone_unref(v1);
	zone_unref(z);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_first_and_same),
		UNIT_TEST(test_restart_goes_forward),
		UNIT_TEST(test_presigned_refused),
		UNIT_TEST(test_key_missing),
		UNIT_TEST(test_check_only),
		UNIT_TEST(test_refresh_and_nsec3),
		UNIT_TEST(test_update),
		UNIT_TEST(test_refresh_batch),
		UNIT_END,
	};
	return sign_test_main(argc, argv, "sign_version", tests, tmpdir);
}
