/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/sign_key.c: a zone's DNSSEC keys made, kept, read back, DNSKEY and DS. */
#include "config.h"

#include <ldns/ldns.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "tests/unit/sign_test.h"
#include "unit.h"
#include "zone/sign_key.h"

static char tmpdir[] = "/tmp/shoal-test-sign-key.XXXXXX";
static const uint8_t APEX[] = "\7example\3com";

static unsigned file_mode(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 01000;
}

/* A fresh keys folder under tmpdir. */
static const char *keys_dir(const char *name)
{
	static char dir[256];
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	return dir;
}

/* Made: a KSK and a ZSK, files of mode 0600 in a folder of 0700, tags as ldns counts them. */
static void check_created(const char *dir, uint8_t alg, sign_keyset_t *ks)
{
	char err[512] = "", path[512];
	int64_t now = time(NULL);
	CU_ASSERT_EQUAL_FATAL(sign_keyset_create(ks, dir, APEX, alg, now, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(ks->count, 2);
	CU_ASSERT_EQUAL(ks->keys[0].role, SIGN_KEY_KSK);
	CU_ASSERT_EQUAL(ks->keys[1].role, SIGN_KEY_ZSK);
	CU_ASSERT_EQUAL(file_mode(dir), 0700);
	snprintf(path, sizeof(path), "%s/example.com.keys", dir);
	CU_ASSERT_EQUAL(file_mode(path), 0600);
	for (size_t i = 0; i < ks->count; i++) {
		const sign_key_t *k = &ks->keys[i];
		uint8_t rdata[2048];
		int n = sign_key_dnskey(k, rdata, sizeof(rdata));
		CU_ASSERT_FATAL(n > 4);
		CU_ASSERT_EQUAL(rdata[1],
				i == 0 ? 1 : 0); /* SEP on the KSK only (RFC 4034 2.1.1) */
		CU_ASSERT_EQUAL(rdata[0], 1);    /* zone key */
		CU_ASSERT_EQUAL(rdata[3], alg);
		CU_ASSERT_EQUAL(k->tag, ldns_calc_keytag_raw(rdata, (size_t)n));
		CU_ASSERT_EQUAL(k->created, now);
		CU_ASSERT(sign_key_can_sign(k));
		snprintf(path, sizeof(path), "%s/%s.pem", dir, k->id);
		CU_ASSERT_EQUAL(file_mode(path), 0600);
	}
}

/* Each algorithm a policy may name makes its keys. */
static void test_create_algorithms(void)
{
	static const uint8_t algs[] = { 13, 15, 14, 8 };
	for (size_t i = 0; i < sizeof(algs); i++) {
		char name[16];
		snprintf(name, sizeof(name), "alg%u", algs[i]);
		sign_keyset_t ks;
		check_created(keys_dir(name), algs[i], &ks);
		sign_keyset_clear(&ks);
	}
}

/* Read back, with and without the private keys: the same keys; made twice: refused. */
static void test_load(void)
{
	const char *dir = keys_dir("load");
	sign_keyset_t made, pub, priv;
	char err[512] = "";
	check_created(dir, 13, &made);
	CU_ASSERT_EQUAL(sign_keyset_create(&pub, dir, APEX, 13, 1, err, sizeof(err)), SHOAL_EEXIST);
	CU_ASSERT_EQUAL_FATAL(sign_keyset_load(&pub, dir, APEX, false, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(sign_keyset_load(&priv, dir, APEX, true, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(pub.count, 2);
	CU_ASSERT_EQUAL_FATAL(priv.count, 2);
	for (size_t i = 0; i < 2; i++) {
		uint8_t a[512], b[512];
		CU_ASSERT_STRING_EQUAL(pub.keys[i].id, made.keys[i].id);
		CU_ASSERT_EQUAL(pub.keys[i].tag, made.keys[i].tag);
		CU_ASSERT_EQUAL(pub.keys[i].role, made.keys[i].role);
		CU_ASSERT_EQUAL(pub.keys[i].active, made.keys[i].active);
		int n = sign_key_dnskey(&made.keys[i], a, sizeof(a));
		CU_ASSERT_EQUAL(sign_key_dnskey(&pub.keys[i], b, sizeof(b)), n);
		CU_ASSERT(n > 0 && !memcmp(a, b, (size_t)n));
		CU_ASSERT(!sign_key_can_sign(&pub.keys[i]));
		CU_ASSERT(sign_key_can_sign(&priv.keys[i]));
	}
	sign_keyset_clear(&pub);
	CU_ASSERT_EQUAL(sign_keyset_load(&pub, keys_dir("none"), APEX, false, err, sizeof(err)),
			SHOAL_ENOTFOUND);
	sign_keyset_clear(&made);
	sign_keyset_clear(&priv);
}

/* The DS (RFC 4509 2.1): tag, algorithm, 2, SHA-256 of the owner and the DNSKEY RDATA. */
static void test_ds(void)
{
	sign_keyset_t ks;
	check_created(keys_dir("ds"), 13, &ks);
	uint8_t ds[64], rdata[512], want[SHA256_DIGEST_SIZE];
	int n = sign_key_ds(&ks.keys[0], ds, sizeof(ds));
	CU_ASSERT_EQUAL_FATAL(n, 4 + SHA256_DIGEST_SIZE);
	CU_ASSERT_EQUAL((ds[0] << 8) | ds[1], ks.keys[0].tag);
	CU_ASSERT_EQUAL(ds[2], 13);
	CU_ASSERT_EQUAL(ds[3], 2);
	int len = sign_key_dnskey(&ks.keys[0], rdata, sizeof(rdata));
	struct sha256_ctx h;
	sha256_init(&h);
	sha256_update(&h, sizeof(APEX), APEX);
	sha256_update(&h, (size_t)len, rdata);
	sha256_digest(&h, sizeof(want), want);
	CU_ASSERT(!memcmp(ds + 4, want, sizeof(want)));
	CU_ASSERT_EQUAL(sign_key_ds(&ks.keys[1], ds, sizeof(ds)), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(sign_key_ds(&ks.keys[0], ds, 10), SHOAL_ESPACE);
	sign_keyset_clear(&ks);
}

/*
 * A private key file missing, or another key's in its place, stops the
 * load with the file named; the list alone (tags, DS) still reads.
 */
static void test_missing_key_file(void)
{
	const char *dir = keys_dir("missing");
	sign_keyset_t ks, again;
	char err[512] = "", zsk[512], ksk[512], cmd[1200];
	check_created(dir, 15, &ks);
	snprintf(ksk, sizeof(ksk), "%s/%s.pem", dir, ks.keys[0].id);
	snprintf(zsk, sizeof(zsk), "%s/%s.pem", dir, ks.keys[1].id);
	snprintf(cmd, sizeof(cmd), "mv %s %s.away", zsk, zsk);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL(sign_keyset_load(&again, dir, APEX, true, err, sizeof(err)), SHOAL_EIO);
	CU_ASSERT_EQUAL(again.count, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, zsk));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "missing or unreadable"));
	CU_ASSERT_EQUAL(sign_keyset_load(&again, dir, APEX, false, err, sizeof(err)), 0);
	sign_keyset_clear(&again);
	snprintf(cmd, sizeof(cmd), "cp %s %s", ksk, zsk);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL(sign_keyset_load(&again, dir, APEX, true, err, sizeof(err)), SHOAL_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not the key the list names"));
	sign_keyset_clear(&ks);
}

/*
 * A P-256 key's private key is read by OpenSSL too, which signs with it;
 * other algorithms' are libdnssec's alone.
 */
static void test_openssl_p256(void)
{
	static const uint8_t algs[] = { 13, 15 };
	for (size_t i = 0; i < sizeof(algs); i++) {
		char name[16], err[512] = "";
		snprintf(name, sizeof(name), "ossl%u", algs[i]);
		sign_keyset_t made, again;
		check_created(keys_dir(name), algs[i], &made);
		CU_ASSERT_EQUAL_FATAL(
			sign_keyset_load(&again, keys_dir(name), APEX, true, err, sizeof(err)), 0);
		for (size_t k = 0; k < 2; k++) {
			CU_ASSERT_EQUAL(made.keys[k].ossl != NULL, algs[i] == 13);
			CU_ASSERT_EQUAL(again.keys[k].ossl != NULL, algs[i] == 13);
		}
		sign_keyset_clear(&again);
		CU_ASSERT_EQUAL_FATAL(
			sign_keyset_load(&again, keys_dir(name), APEX, false, err, sizeof(err)), 0);
		CU_ASSERT_PTR_NULL(again.keys[1].ossl);
		sign_keyset_clear(&again);
		sign_keyset_clear(&made);
	}
}

/*
 * A P-256 key file libdnssec reads but OpenSSL does not (its END line
 * names another label, which GnuTLS overlooks) stops the load with the
 * file named: the zone is not half signed by the slower library.
 */
static void test_openssl_unreadable(void)
{
	const char *dir = keys_dir("ossl-bad");
	sign_keyset_t ks, again;
	char err[512] = "", zsk[512], cmd[1200];
	check_created(dir, 13, &ks);
	snprintf(zsk, sizeof(zsk), "%s/%s.pem", dir, ks.keys[1].id);
	snprintf(cmd, sizeof(cmd), "sed -i 's/^-----END PRIVATE KEY-----$/-----END X-----/' %s",
		 zsk);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL(sign_keyset_load(&again, dir, APEX, true, err, sizeof(err)), SHOAL_EIO);
	CU_ASSERT_EQUAL(again.count, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, zsk));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "OpenSSL cannot read it"));
	if (!strstr(err, "OpenSSL"))
		fprintf(stderr, "\n  %s\n", err);
	sign_keyset_clear(&ks);
}

/* A damaged list is refused with its line. */
static void test_bad_list(void)
{
	const char *dir = keys_dir("bad");
	sign_keyset_t ks;
	char err[512] = "", path[512];
	check_created(dir, 13, &ks);
	sign_keyset_clear(&ks);
	snprintf(path, sizeof(path), "%s/example.com.keys", dir);
	FILE *f = fopen(path, "a");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("0123 ksk 13\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(sign_keyset_load(&ks, dir, APEX, false, err, sizeof(err)), SHOAL_ESYNTAX);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "example.com.keys:4: not a key line"));
	CU_ASSERT_EQUAL(ks.count, 0);
}

/*
 * A key's state is what its times say at a moment: made (not yet in the
 * DNSKEY RRset), published, active; on each time it moves on.
 */
static void test_state(void)
{
	sign_key_t k = { .created = 100, .published = 200, .active = 300 };
	static const struct {
		int64_t now;
		sign_key_state_t state;
		const char *name;
	} want[] = {
		{ 150, SIGN_KEY_CREATED, "created" },     { 199, SIGN_KEY_CREATED, "created" },
		{ 200, SIGN_KEY_PUBLISHED, "published" }, { 299, SIGN_KEY_PUBLISHED, "published" },
		{ 300, SIGN_KEY_ACTIVE, "active" },       { 9999, SIGN_KEY_ACTIVE, "active" },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CU_ASSERT_EQUAL(sign_key_state(&k, want[i].now), want[i].state);
		CU_ASSERT_STRING_EQUAL(sign_key_state_name(sign_key_state(&k, want[i].now)),
				       want[i].name);
	}
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_create_algorithms),
		UNIT_TEST(test_load),
		UNIT_TEST(test_ds),
		UNIT_TEST(test_missing_key_file),
		UNIT_TEST(test_openssl_p256),
		UNIT_TEST(test_openssl_unreadable),
		UNIT_TEST(test_bad_list),
		UNIT_TEST(test_state),
		UNIT_END,
	};
	return sign_test_main(argc, argv, "sign_key", tests, tmpdir);
}
