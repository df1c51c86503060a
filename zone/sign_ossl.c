/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ECDSA P-256 signatures through OpenSSL's libcrypto: the key read from its PEM file, r||s made. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/error.h"
#include "zone/sign_ossl.h"

/* A PKCS#8 P-256 key's PEM is about 240 octets; anything past this is no such key. */
#define PEM_MAX 4096
/* RFC 6605 4: each of r and s */
#define COORD_LEN 32
/* X9.62's uncompressed point: 0x04, x, y */
#define POINT_LEN (1 + 2 * COORD_LEN)

/* path's text into buf[0..PEM_MAX): its length, or a negative errno. */
static ssize_t read_pem(const char *path, char *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = 0, r;
	while (n < PEM_MAX && (r = read(fd, buf + n, PEM_MAX - (size_t)n)) > 0)
		n += r;
	int e = r < 0 ? errno : 0;
	close(fd);
	if (e)
		return -e;
	return n < PEM_MAX ? n : -EFBIG;
}

/* Whether pkey is a P-256 key whose public point is pubkey (x, y). */
static int is_key_of(EVP_PKEY *pkey, const uint8_t *pubkey, size_t publen)
{
	uint8_t point[POINT_LEN];
	size_t len = 0;
	if (!EVP_PKEY_is_a(pkey, "EC") || EVP_PKEY_get_bits(pkey) != 8 * COORD_LEN ||
	    publen != 2 * COORD_LEN)
		return 0;
	if (EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point,
					    sizeof(point), &len) != 1)
		return 0;
	return len == POINT_LEN && point[0] == 0x04 && memcmp(point + 1, pubkey, publen) == 0;
}

/* No passphrase: libdnssec's files have none, and a daemon has no terminal to ask on. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/* The key of path's text pem[0..n) into *pkey: NULL, or why not. */
static const char *decode(EVP_PKEY **pkey, const char *pem, ssize_t n, const uint8_t *pubkey,
			  size_t publen)
{
	if (n < 0)
		return strerror((int)-n);
	BIO *bio = BIO_new_mem_buf(pem, (int)n);
	*pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
	BIO_free(bio);
	if (!*pkey)
		return "OpenSSL cannot read it as a PKCS#8 private key";
	return is_key_of(*pkey, pubkey, publen) ? NULL : "not the P-256 key the list names";
}

int sign_ossl_load(EVP_PKEY **pkey, const char *path, const uint8_t *pubkey, size_t publen,
		   char *err, size_t errlen)
{
	*pkey = NULL;
	char *pem = OPENSSL_malloc(PEM_MAX);
	if (!pem)
		return SHOAL_ENOMEM;
	const char *why = decode(pkey, pem, read_pem(path, pem), pubkey, publen);
	OPENSSL_clear_free(pem, PEM_MAX); /* the key's text goes with it */
	if (!why)
		return 0;
	snprintf(err, errlen, "%s: %s", path, why);
	ERR_clear_error(); /* the reason is in err; the thread's queue stays empty */
	sign_ossl_free(*pkey);
	*pkey = NULL;
	return SHOAL_EIO;
}

/* The DER ECDSA-Sig-Value der[0..len) as r||s into out (RFC 6605 4). */
static int der_to_rs(const uint8_t *der, size_t len, uint8_t *out)
{
	const unsigned char *p = der;
	ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)len);
	if (!sig)
		return SHOAL_EINVAL;
	const BIGNUM *r = NULL, *s = NULL;
	ECDSA_SIG_get0(sig, &r, &s);
	int ok = BN_bn2binpad(r, out, COORD_LEN) == COORD_LEN &&
		 BN_bn2binpad(s, out + COORD_LEN, COORD_LEN) == COORD_LEN;
	ECDSA_SIG_free(sig);
	return ok ? 0 : SHOAL_EINVAL;
}

int sign_ossl_sign(EVP_PKEY *pkey, const uint8_t *data, size_t len, uint8_t *out)
{
	uint8_t der[80]; /* ECDSA_size of P-256 is 72 */
	size_t der_len = sizeof(der);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md)
		return SHOAL_ENOMEM;
	int rc = EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pkey) == 1 &&
				 EVP_DigestSign(md, der, &der_len, data, len) == 1
			 ? der_to_rs(der, der_len, out)
			 : SHOAL_EINVAL;
	if (rc < 0)
		ERR_clear_error();
	EVP_MD_CTX_free(md);
	return rc;
}

void sign_ossl_free(EVP_PKEY *pkey)
{
	EVP_PKEY_free(pkey);
}
