/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's DNSSEC keys: made, kept in keys-dir (PKCS#8 files and one list per zone), read back. */
#ifndef SHOAL_ZONE_SIGN_KEY_H
#define SHOAL_ZONE_SIGN_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Keys live in one folder (keys-dir, mode 0700): each private key in
 * libdnssec's PKCS#8 key store, DIR/ID.pem, ID the hex of the SHA-1 of
 * its public key; and per zone DIR/NAME.keys (NAME as the journal's file
 * name), the list of its keys: one line each, "ID ROLE ALGORITHM TAG
 * CREATED PUBLISHED ACTIVE PUBLIC-KEY-BASE64". Every file is mode 0600,
 * owned by the process that made it. The list holds the public keys, so
 * tags, DNSKEY and DS are read without opening a private key.
 *
 * A zone gets two keys, a KSK (flags 257, signs the DNSKEY RRset) and a
 * ZSK (flags 256, signs the rest): the rollovers to come roll a ZSK by
 * pre-publication without the parent, and only the KSK's roll needs a new
 * DS (RFC 6781 3.1); a combined key would make every roll the parent's.
 * The process calls libdnssec's dnssec_crypto_init() once before any of these.
 * A P-256 key's private key is read twice, by libdnssec and by OpenSSL
 * (zone/sign_ossl.c), which makes its signatures: both must read it.
 */

#define SIGN_KEYS_MAX   8  /* keys of one zone: a rollover's old and new of each role */
#define SIGN_KEY_ID_LEN 40 /* libdnssec's key id: hex of a SHA-1 */

typedef enum sign_key_role {
	SIGN_KEY_KSK,
	SIGN_KEY_ZSK,
} sign_key_role_t;

/* One key of a zone. */
typedef struct sign_key {
	char id[SIGN_KEY_ID_LEN + 1];
	sign_key_role_t role;
	uint8_t algorithm;                  /* RFC 8624 number */
	uint16_t tag;                       /* RFC 4034 appendix B */
	int64_t created, published, active; /* UNIX seconds */
	struct dnssec_key *key;   /* libdnssec's: the public key, and the private when loaded */
	struct evp_pkey_st *ossl; /* a P-256 key's private key read by OpenSSL, which signs */
} sign_key_t;

/* A zone's keys, in the order of its list. */
typedef struct sign_keyset {
	sign_key_t keys[SIGN_KEYS_MAX];
	size_t count;
} sign_keyset_t;

/*
 * Read the keys of apex (lowercase wire) from dir into ks (caller memory,
 * to sign_keyset_clear): the list, and with `private` each private key
 * from its file, checked against the list's public key. Returns 0,
 * SHOAL_ENOTFOUND when the zone has no list, or SHOAL_EIO, SHOAL_ESYNTAX
 * or SHOAL_ENOMEM with the file and the reason in err (a private key file
 * missing or unreadable, by libdnssec or for P-256 by OpenSSL:
 * "DIR/ID.pem: ..."); ks is then cleared. Any
 * thread; it reads files, never on the query path.
 */
int sign_keyset_load(sign_keyset_t *ks, const char *dir, const uint8_t *apex, bool private,
		     char *err, size_t errlen);

/*
 * Make apex's first keys, a KSK and a ZSK of `algorithm`, active from
 * now, in dir (made, mode 0700, when missing; not its parents): the
 * private keys' files, then the list, written whole (a temporary file,
 * fsync, rename). ks (caller memory) gets them with their private keys.
 * Returns 0, SHOAL_EEXIST when the zone has a list already, or SHOAL_EIO,
 * SHOAL_EUNSUPPORTED (an algorithm libdnssec cannot make) or SHOAL_ENOMEM
 * with the reason in err. Any thread; slow (RSA keys take a while).
 */
int sign_keyset_create(sign_keyset_t *ks, const char *dir, const uint8_t *apex, uint8_t algorithm,
		       int64_t now, char *err, size_t errlen);

/* Free what ks holds (its private keys wiped by libdnssec and OpenSSL) and empty it. */
void sign_keyset_clear(sign_keyset_t *ks);

/* Whether k holds its private key (sign_keyset_load with private, or made here). */
bool sign_key_can_sign(const sign_key_t *k);

/*
 * What a key is at a moment, from its times alone: made but not in the
 * DNSKEY RRset yet (before its published time), published (in the RRset,
 * not signing yet), active (signing). The rollovers' retired and removed
 * states come with their times.
 */
typedef enum sign_key_state {
	SIGN_KEY_CREATED,
	SIGN_KEY_PUBLISHED,
	SIGN_KEY_ACTIVE,
} sign_key_state_t;

/* k's state at now (UNIX seconds). */
sign_key_state_t sign_key_state(const sign_key_t *k, int64_t now);

/* "created", "published" or "active". */
const char *sign_key_state_name(sign_key_state_t state);

/* "ksk" or "zsk". */
const char *sign_key_role_name(sign_key_role_t role);

/*
 * The DNSKEY RDATA of k (RFC 4034 2.1) into out[0..cap). Returns its
 * length, or SHOAL_ESPACE.
 */
int sign_key_dnskey(const sign_key_t *k, uint8_t *out, size_t cap);

/*
 * The DS RDATA of k under apex with SHA-256 (RFC 4509; RFC 8624 3.3: the
 * digest to use) into out[0..cap). Returns its length, SHOAL_ESPACE, or
 * SHOAL_EINVAL when k is no KSK.
 */
int sign_key_ds(const sign_key_t *k, uint8_t *out, size_t cap);

#endif
