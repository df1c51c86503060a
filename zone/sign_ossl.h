/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ECDSA P-256 signatures through OpenSSL's libcrypto: the key read from its PEM file, r||s made. */
#ifndef SHOAL_ZONE_SIGN_OSSL_H
#define SHOAL_ZONE_SIGN_OSSL_H

#include <stddef.h>
#include <stdint.h>

/*
 * libdnssec signs every algorithm; this signs the one that is most of a
 * full signature, ECDSA P-256 (algorithm 13), through OpenSSL, which makes
 * these signatures 1.78 times as fast on this machine (design.md, "DNSSEC
 * signing"). The key is the same PKCS#8 file libdnssec wrote and reads.
 */

#define SIGN_OSSL_SIG_LEN 64 /* RFC 6605 4: r and s, 32 octets each */

struct evp_pkey_st; /* OpenSSL's EVP_PKEY */

/*
 * The P-256 private key of the PKCS#8 PEM file path into *pkey (owned, to
 * sign_ossl_free), checked against pubkey[0..publen), the DNSKEY's public
 * key (RFC 6605 4: x and y, 64 octets). The file's text is read into a
 * buffer of its own, wiped and freed after OpenSSL decoded it. Returns 0,
 * or SHOAL_EIO with "PATH: ..." in err (missing, unreadable, not a P-256
 * key, or another key than pubkey). Any thread; reads a file, never on
 * the query path.
 */
int sign_ossl_load(struct evp_pkey_st **pkey, const char *path, const uint8_t *pubkey,
		   size_t publen, char *err, size_t errlen);

/*
 * The ECDSA P-256 signature with SHA-256 of data[0..len) by pkey into
 * out[0..SIGN_OSSL_SIG_LEN), in DNSSEC's r||s form (RFC 6605 4). Returns 0,
 * SHOAL_ENOMEM or SHOAL_EINVAL (OpenSSL failed). Any thread, several at
 * once with the same pkey: openssl-threads(7) lets threads use an object
 * none of them changes, and signing only reads the key; the digest
 * context that signing changes is each call's own. Allocates: never on
 * the query path.
 */
int sign_ossl_sign(struct evp_pkey_st *pkey, const uint8_t *data, size_t len, uint8_t *out);

/* Free pkey (NULL is nothing); OpenSSL clears the private key as it frees it. */
void sign_ossl_free(struct evp_pkey_st *pkey);

#endif
