/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * DNSSEC signing library benchmark (not a test): RRSIGs a second on one
 * core, in CPU time of the signing thread (CLOCK_THREAD_CPUTIME_ID), through
 * Knot's libdnssec (GnuTLS, nettle underneath) and through OpenSSL's
 * libcrypto 3, for ECDSA P-256 (algorithm 13) and Ed25519 (algorithm 15).
 * Each library signs N distinct RRsets' signed data (RFC 4034 3.1.8.1: the
 * RRSIG rdata without signature, then the RRset in canonical form; here a
 * 1-record A RRset under a 20-octet owner, ~70 octets, as most of a zone is)
 * and returns the signature in DNSSEC's wire form (RFC 6605 4: r | s, so
 * OpenSSL's DER ECDSA signature is converted, as a signer would have to).
 *
 *   tests/bench/sign-bench [-n RRSETS] [-r ROUNDS]
 *   (make tests/bench/sign-bench: not built by default; needs libssl-dev)
 */
#include <getopt.h>
#include <libdnssec/crypto.h>
#include <libdnssec/error.h>
#include <libdnssec/key.h>
#include <libdnssec/keystore.h>
#include <libdnssec/sign.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DATA_LEN 70

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The signed data of RRset i: a fixed RRSIG header and an owner that differs per i. */
static void make_data(uint8_t *d, unsigned i)
{
	memset(d, 0x2a, DATA_LEN);
	memcpy(d + 18, &i, sizeof(i));
}

static int die(const char *what, int r)
{
	fprintf(stderr, "sign-bench: %s failed (%d)\n", what, r);
	exit(1);
}

/* libdnssec: a key made in a PKCS#8 store in a temporary folder, as a signer would keep it. */
static double bench_libdnssec(dnssec_key_algorithm_t alg, unsigned n)
{
	char dir[] = "/tmp/sign-bench.XXXXXX";
	dnssec_keystore_t *store = NULL;
	dnssec_key_t *key = NULL;
	dnssec_sign_ctx_t *ctx = NULL;
	char *id = NULL;
	uint8_t buf[DATA_LEN];
	int r;

	if (!mkdtemp(dir))
		die("mkdtemp", -1);
	if ((r = dnssec_keystore_init_pkcs8(&store)) || (r = dnssec_keystore_init(store, dir)) ||
	    (r = dnssec_keystore_open(store, dir)))
		die("keystore", r);
	if ((r = dnssec_keystore_generate(store, alg, dnssec_algorithm_key_size_default(alg), NULL,
					  &id)))
		die("keystore_generate", r);
	if ((r = dnssec_key_new(&key)) || (r = dnssec_key_set_algorithm(key, alg)) ||
	    (r = dnssec_keystore_get_private(store, id, key)) || (r = dnssec_sign_new(&ctx, key)))
		die("key", r);
	double t0 = thread_cpu();
	for (unsigned i = 0; i < n; i++) {
		dnssec_binary_t data = { .size = DATA_LEN, .data = buf }, sig = { 0 };
		make_data(buf, i);
		if ((r = dnssec_sign_init(ctx)) || (r = dnssec_sign_add(ctx, &data)) ||
		    (r = dnssec_sign_write(ctx, DNSSEC_SIGN_NORMAL, &sig)))
			die("sign", r);
		dnssec_binary_free(&sig);
	}
	double t = thread_cpu() - t0;
	dnssec_sign_free(ctx);
	dnssec_key_free(key);
	dnssec_keystore_remove(store, id);
	dnssec_keystore_close(store);
	dnssec_keystore_deinit(store);
	free(id);
	rmdir(dir);
	return n / t;
}

/* RFC 6605 4: r and s, each 32 octets, from OpenSSL's DER ECDSA-Sig-Value. */
static void der_to_raw(const uint8_t *der, size_t len, uint8_t out[64])
{
	ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &der, (long)len);
	if (!s)
		die("d2i_ECDSA_SIG", -1);
	BN_bn2binpad(ECDSA_SIG_get0_r(s), out, 32);
	BN_bn2binpad(ECDSA_SIG_get0_s(s), out + 32, 32);
	ECDSA_SIG_free(s);
}

/* OpenSSL: one EVP_MD_CTX reset per RRset, as a signing thread would keep one. */
static double bench_openssl(int ed25519, unsigned n)
{
	EVP_PKEY *pkey = ed25519 ? EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")
				 : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t buf[DATA_LEN], sig[128], raw[64];

	if (!pkey || !md)
		die("openssl key", -1);
	double t0 = thread_cpu();
	for (unsigned i = 0; i < n; i++) {
		size_t len = sizeof(sig);
		make_data(buf, i);
		if (EVP_DigestSignInit(md, NULL, ed25519 ? NULL : EVP_sha256(), NULL, pkey) != 1 ||
		    EVP_DigestSign(md, sig, &len, buf, DATA_LEN) != 1)
			die("EVP_DigestSign", -1);
		if (!ed25519)
			der_to_raw(sig, len, raw);
		EVP_MD_CTX_reset(md);
	}
	double t = thread_cpu() - t0;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	return n / t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	unsigned n = 20000, rounds = 5;
	int c;
	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 'r')
			rounds = (unsigned)strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	if (n == 0 || rounds == 0 || rounds > 99)
		return 2;
	dnssec_crypto_init();
	printf("signatures a second, one core, median of %u rounds of %u RRsets\n", rounds, n);
	printf("%-12s %12s %12s %8s\n", "algorithm", "libdnssec", "openssl", "ratio");
	for (int ed = 0; ed <= 1; ed++) {
		double a[99], b[99];
		/* interleaved, so a change in the machine's load hits both alike */
		for (unsigned r = 0; r < rounds; r++) {
			a[r] = bench_libdnssec(ed ? DNSSEC_KEY_ALGORITHM_ED25519
						  : DNSSEC_KEY_ALGORITHM_ECDSA_P256_SHA256,
					       n);
			b[r] = bench_openssl(ed, n);
		}
		qsort(a, rounds, sizeof(double), cmp_double);
		qsort(b, rounds, sizeof(double), cmp_double);
		printf("%-12s %12.0f %12.0f %8.2f\n", ed ? "ed25519" : "ecdsap256", a[rounds / 2],
		       b[rounds / 2], b[rounds / 2] / a[rounds / 2]);
	}
	dnssec_crypto_cleanup();
	return 0;
}
