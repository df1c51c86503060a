/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inside server/common/tls.c and tls_cert.c: what TLS credentials hold. */
#ifndef SHOAL_SERVER_COMMON_INTERNAL_H
#define SHOAL_SERVER_COMMON_INTERNAL_H

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <limits.h>

#include "server/common/tls.h"

struct tls_creds {
	unsigned refs; /* atomic: the context's and each session's */
	gnutls_certificate_credentials_t cred;
	bool request_client_cert;
	bool ca; /* peers can be checked against CAs (ca_file, or the system's) */
	uint8_t pin[TLS_PIN_LEN];
	char source[PATH_MAX + 32];
	char subject[256];
};

/* The pin of cert's key (tls_cert.c). Returns 0, SHOAL_ETLS or SHOAL_ENOMEM. */
int tls_cert_pin(gnutls_x509_crt_t cert, uint8_t pin[TLS_PIN_LEN]);

#endif
