/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's DNSSEC keys: made, kept in keys-dir (PKCS#8 files and one list per zone), read back. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libdnssec/binary.h>
#include <libdnssec/error.h>
#include <libdnssec/key.h>
#include <libdnssec/keystore.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "zone/internal.h"
#include "zone/sign_key.h"
#include "zone/sign_ossl.h"

/* RFC 4034 2.1.1: flags of a zone key; with the SEP bit, a KSK. */
#define FLAGS_ZSK 256
#define FLAGS_KSK 257
/* A list line: an id, numbers, and a public key (RSA 4096's base64 is 700 characters). */
#define LINE_MAX_LEN 1024

static const char *const role_names[] = { "ksk", "zsk" };

const char *sign_key_role_name(sign_key_role_t role)
{
	return role_names[role == SIGN_KEY_ZSK];
}

static const char *const state_names[] = { "created", "published", "active" };

sign_key_state_t sign_key_state(const sign_key_t *k, int64_t now)
{
	if (now >= k->active)
		return SIGN_KEY_ACTIVE;
	return now >= k->published ? SIGN_KEY_PUBLISHED : SIGN_KEY_CREATED;
}

const char *sign_key_state_name(sign_key_state_t state)
{
	return state_names[state];
}

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The reason into err; returns rc. */
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* Open dir as libdnssec's PKCS#8 key store into *store. */
static int store_open(dnssec_keystore_t **store, const char *dir, char *err, size_t errlen)
{
	int r = dnssec_keystore_init_pkcs8(store);
	if (r == DNSSEC_EOK)
		r = dnssec_keystore_open(*store, dir);
	if (r != DNSSEC_EOK) {
		dnssec_keystore_deinit(*store);
		*store = NULL;
		return fail(err, errlen, SHOAL_EIO, "%s: key store: %s", dir, dnssec_strerror(r));
	}
	return 0;
}

static void store_close(dnssec_keystore_t *store)
{
	if (store) {
		dnssec_keystore_close(store);
		dnssec_keystore_deinit(store);
	}
}

/*
 * A P-256 key's private key (k's file in dir) read by OpenSSL too, which
 * signs with it: 0, or SHOAL_EIO with the file in err. Other algorithms
 * sign through libdnssec alone.
 */
static int key_load_ossl(sign_key_t *k, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	dnssec_binary_t pub = { 0 };
	if (k->algorithm != DNSSEC_KEY_ALGORITHM_ECDSA_P256_SHA256)
		return 0;
	if (dnssec_key_get_pubkey(k->key, &pub) != DNSSEC_EOK)
		return SHOAL_EINVAL;
	snprintf(path, sizeof(path), "%s/%s.pem", dir, k->id);
	return sign_ossl_load(&k->ossl, path, pub.data, pub.size, err, errlen);
}

/* A libdnssec key for apex with flags and algorithm (the public key set after). */
static int key_new(sign_key_t *k, const uint8_t *apex)
{
	dnssec_key_t *key = NULL;
	int r = dnssec_key_new(&key);
	if (r == DNSSEC_EOK)
		r = dnssec_key_set_dname(key, apex);
	if (r == DNSSEC_EOK)
		r = dnssec_key_set_flags(key, k->role == SIGN_KEY_KSK ? FLAGS_KSK : FLAGS_ZSK);
	if (r == DNSSEC_EOK)
		r = dnssec_key_set_algorithm(key, k->algorithm);
	if (r != DNSSEC_EOK) {
		dnssec_key_free(key);
		return SHOAL_ENOMEM;
	}
	k->key = key;
	return 0;
}

/*
 * k's private key from the store, into a key of its own (libdnssec keeps
 * a public key already set), which must have the public key the list
 * gave: a file swapped for another key's is refused.
 */
static int key_load_private(sign_key_t *k, const uint8_t *apex, dnssec_keystore_t *store,
			    const char *dir, char *err, size_t errlen)
{
	sign_key_t loaded = *k;
	dnssec_binary_t listed = { 0 }, found = { 0 };
	if (key_new(&loaded, apex) < 0)
		return SHOAL_ENOMEM;
	int r = dnssec_keystore_get_private(store, k->id, loaded.key);
	int rc = 0;
	if (r != DNSSEC_EOK)
		rc = fail(err, errlen, SHOAL_EIO,
			  "%s/%s.pem: %s key %u: missing or unreadable (%s)", dir, k->id,
			  sign_key_role_name(k->role), k->tag, dnssec_strerror(r));
	else if (dnssec_key_get_pubkey(k->key, &listed) != DNSSEC_EOK ||
		 dnssec_key_get_pubkey(loaded.key, &found) != DNSSEC_EOK ||
		 dnssec_binary_cmp(&listed, &found) != 0)
		rc = fail(err, errlen, SHOAL_EIO, "%s/%s.pem: not the key the list names", dir,
			  k->id);
	dnssec_key_free(rc == 0 ? k->key : loaded.key);
	if (rc == 0)
		k->key = loaded.key;
	return rc == 0 ? key_load_ossl(k, dir, err, errlen) : rc;
}

/* One list line into k (its public key set). */
static int parse_line(sign_key_t *k, const uint8_t *apex, char *line)
{
	char id[SIGN_KEY_ID_LEN + 2], role[8], pub[LINE_MAX_LEN];
	unsigned alg, tag;
	int64_t c, p, a;
	if (sscanf(line, "%41s %7s %u %u %" SCNd64 " %" SCNd64 " %" SCNd64 " %1023s", id, role,
		   &alg, &tag, &c, &p, &a, pub) != 8 ||
	    strlen(id) != SIGN_KEY_ID_LEN || alg > UINT8_MAX || tag > UINT16_MAX ||
	    (strcmp(role, "ksk") && strcmp(role, "zsk")))
		return SHOAL_ESYNTAX;
	*k = (sign_key_t){ .role = strcmp(role, "ksk") ? SIGN_KEY_ZSK : SIGN_KEY_KSK,
			   .algorithm = (uint8_t)alg,
			   .created = c,
			   .published = p,
			   .active = a };
	memcpy(k->id, id, sizeof(k->id));
	if (key_new(k, apex) < 0)
		return SHOAL_ENOMEM;
	dnssec_binary_t b64 = { .data = (uint8_t *)pub, .size = strlen(pub) }, raw = { 0 };
	int r = dnssec_binary_from_base64(&b64, &raw);
	if (r == DNSSEC_EOK)
		r = dnssec_key_set_pubkey(k->key, &raw);
	dnssec_binary_free(&raw);
	if (r != DNSSEC_EOK)
		return SHOAL_ESYNTAX;
	k->tag = dnssec_key_get_keytag(k->key);
	/* the tag is written for people reading the file; the key decides */
	return k->tag == tag ? 0 : SHOAL_ESYNTAX;
}

/* Every line of the list f into ks. */
static int parse_list(sign_keyset_t *ks, FILE *f, const char *path, const uint8_t *apex, char *err,
		      size_t errlen)
{
	char line[LINE_MAX_LEN + 128];
	unsigned n = 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (ks->count == SIGN_KEYS_MAX)
			return fail(err, errlen, SHOAL_ESYNTAX, "%s:%u: more than %d keys", path, n,
				    SIGN_KEYS_MAX);
		int rc = parse_line(&ks->keys[ks->count], apex, line);
		if (ks->keys[ks->count].key)
			ks->count++;
		if (rc < 0)
			return rc == SHOAL_ENOMEM
				       ? rc
				       : fail(err, errlen, rc, "%s:%u: not a key line", path, n);
	}
	if (ferror(f))
		return fail(err, errlen, SHOAL_EIO, "%s: %s", path, strerror(errno));
	return ks->count ? 0 : fail(err, errlen, SHOAL_ESYNTAX, "%s: no key", path);
}

int sign_keyset_load(sign_keyset_t *ks, const char *dir, const uint8_t *apex, bool private,
		     char *err, size_t errlen)
{
	char path[PATH_MAX];
	dnssec_keystore_t *store = NULL;
	memset(ks, 0, sizeof(*ks));
	if (zone_apex_path(dir, apex, ".keys", path, sizeof(path)) < 0)
		return fail(err, errlen, SHOAL_EIO, "%s: path too long", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT
			       ? SHOAL_ENOTFOUND
			       : fail(err, errlen, SHOAL_EIO, "%s: %s", path, strerror(errno));
	int rc = parse_list(ks, f, path, apex, err, errlen);
	fclose(f);
	if (rc == 0 && private)
		rc = store_open(&store, dir, err, errlen);
	for (size_t i = 0; rc == 0 && private && i < ks->count; i++)
		rc = key_load_private(&ks->keys[i], apex, store, dir, err, errlen);
	store_close(store);
	if (rc < 0)
		sign_keyset_clear(ks);
	return rc;
}

/* One list line for k into f. */
static int write_line(FILE *f, const sign_key_t *k)
{
	dnssec_binary_t pub = { 0 }, b64 = { 0 };
	if (dnssec_key_get_pubkey(k->key, &pub) != DNSSEC_EOK ||
	    dnssec_binary_to_base64(&pub, &b64) != DNSSEC_EOK)
		return SHOAL_ENOMEM;
	int w = fprintf(f, "%s %s %u %u %" PRId64 " %" PRId64 " %" PRId64 " %.*s\n", k->id,
			sign_key_role_name(k->role), k->algorithm, k->tag, k->created, k->published,
			k->active, (int)b64.size, (const char *)b64.data);
	dnssec_binary_free(&b64);
	return w < 0 ? SHOAL_EIO : 0;
}

/* ks's list to path, whole: a temporary file of mode 0600, fsync, rename. */
static int write_list(const sign_keyset_t *ks, const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return fail(err, errlen, SHOAL_EIO, "%s: %s", tmp, strerror(errno));
	}
	int rc = fprintf(f, "# id role algorithm tag created published active public-key\n") < 0
			 ? SHOAL_EIO
			 : 0;
	for (size_t i = 0; rc == 0 && i < ks->count; i++)
		rc = write_line(f, &ks->keys[i]);
	if (rc == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		rc = SHOAL_EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = SHOAL_EIO;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = SHOAL_EIO;
	if (rc < 0) {
		int e = errno;
		unlink(tmp);
		return rc == SHOAL_ENOMEM ? rc : fail(err, errlen, rc, "%s: %s", path, strerror(e));
	}
	return 0;
}

/* A new key of role in the store: its file made 0600, k filled with its private key. */
static int key_generate(sign_key_t *k, dnssec_keystore_t *store, const char *dir,
			const uint8_t *apex, char *err, size_t errlen)
{
	char *id = NULL, path[PATH_MAX];
	int bits = dnssec_algorithm_key_size_default(k->algorithm);
	int r = dnssec_keystore_generate(store, k->algorithm, bits > 0 ? (unsigned)bits : 0, NULL,
					 &id);
	if (r != DNSSEC_EOK)
		return fail(err, errlen, SHOAL_EIO, "%s: making a %s of algorithm %u: %s", dir,
			    sign_key_role_name(k->role), k->algorithm, dnssec_strerror(r));
	bool fits = strlen(id) == SIGN_KEY_ID_LEN;
	if (fits)
		memcpy(k->id, id, sizeof(k->id));
	free(id);
	if (!fits)
		return fail(err, errlen, SHOAL_EIO, "%s: the key store gave an id of another form",
			    dir);
	/* libdnssec makes it 0640: the key is worth as much as the zone (RFC 6781 3.2) */
	snprintf(path, sizeof(path), "%s/%s.pem", dir, k->id);
	if (chmod(path, 0600) != 0)
		return fail(err, errlen, SHOAL_EIO, "%s: %s", path, strerror(errno));
	int rc = key_new(k, apex);
	if (rc == 0 && dnssec_keystore_get_private(store, k->id, k->key) != DNSSEC_EOK)
		rc = fail(err, errlen, SHOAL_EIO, "%s: cannot read back the key made", path);
	if (rc == 0)
		k->tag = dnssec_key_get_keytag(k->key);
	return rc == 0 ? key_load_ossl(k, dir, err, errlen) : rc;
}

int sign_keyset_create(sign_keyset_t *ks, const char *dir, const uint8_t *apex, uint8_t algorithm,
		       int64_t now, char *err, size_t errlen)
{
	char path[PATH_MAX];
	dnssec_keystore_t *store = NULL;
	memset(ks, 0, sizeof(*ks));
	if (!dnssec_algorithm_key_support(algorithm))
		return fail(err, errlen, SHOAL_EUNSUPPORTED, "algorithm %u cannot be made here",
			    algorithm);
	if (zone_apex_path(dir, apex, ".keys", path, sizeof(path)) < 0)
		return fail(err, errlen, SHOAL_EIO, "%s: path too long", dir);
	if (access(path, F_OK) == 0)
		return SHOAL_EEXIST;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return fail(err, errlen, SHOAL_EIO, "%s: %s", dir, strerror(errno));
	int rc = store_open(&store, dir, err, errlen);
	for (int role = SIGN_KEY_KSK; rc == 0 && role <= SIGN_KEY_ZSK; role++) {
		sign_key_t *k = &ks->keys[ks->count];
		*k = (sign_key_t){ .role = (sign_key_role_t)role,
				   .algorithm = algorithm,
				   .created = now,
				   .published = now,
				   .active = now };
		rc = key_generate(k, store, dir, apex, err, errlen);
		if (k->key)
			ks->count++;
	}
	store_close(store);
	if (rc == 0)
		rc = write_list(ks, path, err, errlen);
	if (rc < 0)
		sign_keyset_clear(ks);
	return rc;
}

void sign_keyset_clear(sign_keyset_t *ks)
{
	for (size_t i = 0; i < ks->count; i++) {
		dnssec_key_free(ks->keys[i].key);
		sign_ossl_free(ks->keys[i].ossl);
	}
	memset(ks, 0, sizeof(*ks));
}

bool sign_key_can_sign(const sign_key_t *k)
{
	return k->key && dnssec_key_can_sign(k->key);
}

/* A libdnssec binary into out[0..cap): its length, or SHOAL_ESPACE. */
static int copy_out(const dnssec_binary_t *b, uint8_t *out, size_t cap)
{
	if (b->size > cap)
		return SHOAL_ESPACE;
	memcpy(out, b->data, b->size);
	return (int)b->size;
}

int sign_key_dnskey(const sign_key_t *k, uint8_t *out, size_t cap)
{
	dnssec_binary_t rdata = { 0 };
	if (dnssec_key_get_rdata(k->key, &rdata) != DNSSEC_EOK)
		return SHOAL_EINVAL;
	return copy_out(&rdata, out, cap); /* rdata is the key's own: not freed */
}

int sign_key_ds(const sign_key_t *k, uint8_t *out, size_t cap)
{
	if (k->role != SIGN_KEY_KSK)
		return SHOAL_EINVAL;
	dnssec_binary_t ds = { 0 };
	if (dnssec_key_create_ds(k->key, DNSSEC_KEY_DIGEST_SHA256, &ds) != DNSSEC_EOK)
		return SHOAL_ENOMEM;
	int n = copy_out(&ds, out, cap);
	dnssec_binary_free(&ds);
	return n;
}
