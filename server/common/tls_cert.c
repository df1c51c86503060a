/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TLS credentials: key and certificate files, the self-signed pair kept in a folder, pins. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/internal.h"
#include "server/common/log.h"
#include "server/common/tls.h"

/* The self-signed pair's files in their folder. */
#define SELF_KEY  "tls.key"
#define SELF_CERT "tls.crt"
/* PEM of an ECDSA P-256 key or a certificate for it, with room. */
#define PEM_MAX 8192

char *tls_pin_text(const uint8_t pin[TLS_PIN_LEN], char *buf)
{
	sodium_bin2base64(buf, TLS_PIN_TEXT_MAX, pin, TLS_PIN_LEN, sodium_base64_VARIANT_ORIGINAL);
	return buf;
}

int tls_pin_parse(const char *text, uint8_t pin[TLS_PIN_LEN])
{
	size_t len = 0;
	const char *end = NULL;
	if (sodium_base642bin(pin, TLS_PIN_LEN, text, strlen(text), NULL, &len, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    len != TLS_PIN_LEN || *end)
		return SHOAL_ESYNTAX;
	return 0;
}

/* The pin of cert's key: SHA-256 of its SubjectPublicKeyInfo in DER (RFC 7469 2.4). */
int tls_cert_pin(gnutls_x509_crt_t cert, uint8_t pin[TLS_PIN_LEN])
{
	gnutls_pubkey_t key;
	gnutls_datum_t spki = { NULL, 0 };
	int rc = SHOAL_ETLS;
	if (gnutls_pubkey_init(&key) < 0)
		return SHOAL_ENOMEM;
	if (gnutls_pubkey_import_x509(key, cert, 0) == 0 &&
	    gnutls_pubkey_export2(key, GNUTLS_X509_FMT_DER, &spki) == 0 &&
	    gnutls_hash_fast(GNUTLS_DIG_SHA256, spki.data, spki.size, pin) == 0)
		rc = 0;
	gnutls_free(spki.data);
	gnutls_pubkey_deinit(key);
	return rc;
}

/* Write data[0..len) to path through a temporary file beside it, with mode; no overwrite. */
static int write_new_file(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (fchmod(fd, mode) < 0 || write(fd, data, len) != (ssize_t)len || fsync(fd) < 0)
		rc = errno ? -errno : SHOAL_EIO;
	close(fd);
	/* link, not rename: a pair made meanwhile by another start is kept, not replaced */
	if (rc == 0 && link(tmp, path) < 0)
		rc = -errno;
	unlink(tmp);
	return rc;
}

/* A new ECDSA P-256 key and a self-signed certificate for it with subject CN=cn, in PEM. */
static int self_signed_make(const char *cn, char *key_pem, size_t *key_len, char *cert_pem,
			    size_t *cert_len)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	uint8_t serial[16];
	int rc = SHOAL_ETLS;
	randombytes_buf(serial, sizeof(serial));
	serial[0] &= 0x7f; /* RFC 5280 4.1.2.2: a positive integer */
	serial[0] |= 0x01;
	if (gnutls_x509_privkey_init(&key) < 0 || gnutls_x509_crt_init(&crt) < 0)
		goto done;
	/* pinned, not chained to a CA: the key is the identity; valid until 2106 (GnuTLS's
	 * "no well-defined expiration", RFC 5280 4.1.2.5) */
	if (gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
					 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0 ||
	    gnutls_x509_crt_set_version(crt, 3) < 0 ||
	    gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)) < 0 ||
	    gnutls_x509_crt_set_activation_time(crt, time(NULL) - 3600) < 0 ||
	    gnutls_x509_crt_set_expiration_time(crt, GNUTLS_X509_NO_WELL_DEFINED_EXPIRATION) < 0 ||
	    gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
					  (unsigned)strlen(cn)) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, cn, (unsigned)strlen(cn),
						 GNUTLS_FSAN_SET) < 0 ||
	    gnutls_x509_crt_set_basic_constraints(crt, 0, -1) < 0 ||
	    gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE) < 0 ||
	    gnutls_x509_crt_set_key(crt, key) < 0 ||
	    gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0 ||
	    gnutls_x509_privkey_export(key, GNUTLS_X509_FMT_PEM, key_pem, key_len) < 0 ||
	    gnutls_x509_crt_export(crt, GNUTLS_X509_FMT_PEM, cert_pem, cert_len) < 0)
		goto done;
	rc = 0;
done:
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	return rc;
}

/*
 * The self-signed pair into c: the one kept in folder, or made now (and
 * kept there when folder is not NULL). A folder with only one of the two
 * files is refused: its certificate would not go with a new key.
 */
static int self_signed(const tls_creds_conf_t *cf, tls_creds_t *c, char *err, size_t errlen)
{
	char key_path[PATH_MAX], cert_path[PATH_MAX];
	const char *folder = cf->folder;
	snprintf(key_path, sizeof(key_path), "%s/%s", folder ? folder : "", SELF_KEY);
	snprintf(cert_path, sizeof(cert_path), "%s/%s", folder ? folder : "", SELF_CERT);
	bool have_key = folder && access(key_path, F_OK) == 0;
	bool have_cert = folder && access(cert_path, F_OK) == 0;
	if (have_key && have_cert) {
		snprintf(c->source, sizeof(c->source), "%s (self-signed)", cert_path);
		int rc = gnutls_certificate_set_x509_key_file2(c->cred, cert_path, key_path,
							       GNUTLS_X509_FMT_PEM, NULL, 0);
		if (rc < 0)
			snprintf(err, errlen, "%s, %s: %s", cert_path, key_path,
				 gnutls_strerror(rc));
		return rc < 0 ? SHOAL_ETLS : 0;
	}
	if (have_key || have_cert) {
		snprintf(err, errlen, "%s has %s but not %s: remove it to have a new pair made",
			 folder, have_key ? SELF_KEY : SELF_CERT, have_key ? SELF_CERT : SELF_KEY);
		return SHOAL_ECONFIG;
	}
	char key_pem[PEM_MAX], cert_pem[PEM_MAX];
	size_t key_len = sizeof(key_pem), cert_len = sizeof(cert_pem);
	int rc = self_signed_make(cf->common_name, key_pem, &key_len, cert_pem, &cert_len);
	if (rc == 0 && folder && (rc = write_new_file(key_path, key_pem, key_len, 0600)) == 0 &&
	    (rc = write_new_file(cert_path, cert_pem, cert_len, 0644)) < 0)
		unlink(key_path); /* no key left without its certificate */
	if (rc < 0) {
		snprintf(err, errlen, "self-signed certificate in %s: %s",
			 folder ? folder : "memory", shoal_strerror(rc));
		sodium_memzero(key_pem, sizeof(key_pem));
		return rc;
	}
	if (folder)
		log_notice("TLS: made a self-signed key and certificate (CN=%s) in %s",
			   cf->common_name, folder);
	snprintf(c->source, sizeof(c->source), "%s (self-signed)", folder ? cert_path : "memory");
	gnutls_datum_t k = { (unsigned char *)key_pem, (unsigned)key_len };
	gnutls_datum_t x = { (unsigned char *)cert_pem, (unsigned)cert_len };
	rc = gnutls_certificate_set_x509_key_mem2(c->cred, &x, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	sodium_memzero(key_pem, sizeof(key_pem));
	if (rc < 0)
		snprintf(err, errlen, "self-signed certificate: %s", gnutls_strerror(rc));
	return rc < 0 ? SHOAL_ETLS : 0;
}

/* c's own certificate (the first of its chain): its pin and subject. */
static int describe(tls_creds_t *c, char *err, size_t errlen)
{
	gnutls_datum_t der;
	gnutls_x509_crt_t crt;
	if (gnutls_certificate_get_crt_raw(c->cred, 0, 0, &der) < 0 ||
	    gnutls_x509_crt_init(&crt) < 0) {
		snprintf(err, errlen, "%s: no certificate", c->source);
		return SHOAL_ETLS;
	}
	int rc = gnutls_x509_crt_import(crt, &der, GNUTLS_X509_FMT_DER) < 0 ? SHOAL_ETLS : 0;
	if (rc == 0)
		rc = tls_cert_pin(crt, c->pin);
	size_t len = sizeof(c->subject);
	if (rc == 0 && gnutls_x509_crt_get_dn(crt, c->subject, &len) < 0)
		snprintf(c->subject, sizeof(c->subject), "(unreadable)");
	gnutls_x509_crt_deinit(crt);
	if (rc < 0)
		snprintf(err, errlen, "%s: the certificate cannot be read", c->source);
	return rc;
}

/* The given key and certificate files. */
static int from_files(const tls_creds_conf_t *cf, tls_creds_t *c, char *err, size_t errlen)
{
	if (!cf->key_file || !cf->cert_file) {
		snprintf(err, errlen, "tls-key-file and tls-cert-file go together: %s is missing",
			 cf->key_file ? "tls-cert-file" : "tls-key-file");
		return SHOAL_ECONFIG;
	}
	snprintf(c->source, sizeof(c->source), "%s", cf->cert_file);
	int rc = gnutls_certificate_set_x509_key_file2(c->cred, cf->cert_file, cf->key_file,
						       GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "tls-cert-file %s, tls-key-file %s: %s", cf->cert_file,
			 cf->key_file, gnutls_strerror(rc));
		return SHOAL_ETLS;
	}
	return 0;
}

/* The CAs peers are checked against: tls-ca-file, or the system's. */
static int trust(const tls_creds_conf_t *cf, tls_creds_t *c, char *err, size_t errlen)
{
	if (cf->ca_file) {
		int n = gnutls_certificate_set_x509_trust_file(c->cred, cf->ca_file,
							       GNUTLS_X509_FMT_PEM);
		if (n <= 0) {
			snprintf(err, errlen, "tls-ca-file %s: %s", cf->ca_file,
				 n < 0 ? gnutls_strerror(n) : "no certificate in it");
			return SHOAL_ETLS;
		}
	} else if (!cf->system_ca) {
		return 0;
	} else if (gnutls_certificate_set_x509_system_trust(c->cred) <= 0) {
		log_warning("TLS: the system's CAs cannot be read: host names of primaries "
			    "cannot be checked (set tls-ca-file)");
		return 0;
	}
	c->ca = true;
	return 0;
}

int tls_creds_new(const tls_creds_conf_t *cf, tls_creds_t **out, char *err, size_t errlen)
{
	tls_creds_t *c = calloc(1, sizeof(*c));
	if (!c)
		return SHOAL_ENOMEM;
	c->refs = 1;
	c->request_client_cert = cf->request_client_cert;
	int rc = gnutls_certificate_allocate_credentials(&c->cred) < 0 ? SHOAL_ENOMEM : 0;
	if (rc == 0)
		rc = cf->key_file || cf->cert_file ? from_files(cf, c, err, errlen)
						   : self_signed(cf, c, err, errlen);
	if (rc == 0)
		rc = describe(c, err, errlen);
	if (rc == 0)
		rc = trust(cf, c, err, errlen);
	if (rc < 0) {
		tls_creds_unref(c);
		return rc;
	}
	*out = c;
	return 0;
}

void tls_creds_ref(tls_creds_t *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

void tls_creds_unref(tls_creds_t *c)
{
	if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	if (c->cred)
		gnutls_certificate_free_credentials(c->cred);
	free(c);
}

void tls_creds_pin(const tls_creds_t *c, uint8_t pin[TLS_PIN_LEN])
{
	memcpy(pin, c->pin, TLS_PIN_LEN);
}

const char *tls_creds_source(const tls_creds_t *c)
{
	return c->source;
}

const char *tls_creds_subject(const tls_creds_t *c)
{
	return c->subject;
}
