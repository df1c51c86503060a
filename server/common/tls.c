/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TLS sessions over non-blocking sockets: handshake, records, the peer checked, the context. */
#include "config.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/common/internal.h"
#include "server/common/tls.h"

/*
 * TLS 1.3, 1.2 allowed (RFC 7858 3.4 asks for 1.2 at least, RFC 9103 9
 * for 1.3 where it can); the library's ciphers otherwise.
 */
#define TLS_PRIORITY "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* Non-fatal answers (warning alerts) passed over in one call at most, before it waits. */
#define TLS_NONFATAL_MAX 8

struct tls_ctx {
	pthread_mutex_t lock; /* creds: swapped by a reconfig, taken by each session */
	tls_creds_t *creds;
	gnutls_priority_t priority;
	gnutls_datum_t ticket_key; /* TLS 1.3 tickets (the library rotates keys from it) */
};

struct tls_session {
	gnutls_session_t g;
	tls_creds_t *creds;
	tls_auth_t *auth; /* a client's: what the server must show; NULL on a server */
	bool unflushed;   /* a record taken by tls_send waits for the socket */
	char error[TLS_HOSTNAME_MAX + 200];
};

static const gnutls_datum_t alpn_dot = { (unsigned char *)"dot", 3 };

/* ---- the context ---- */

int tls_ctx_new(tls_ctx_t **out)
{
	tls_ctx_t *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return SHOAL_ENOMEM;
	pthread_mutex_init(&ctx->lock, NULL);
	if (gnutls_priority_init(&ctx->priority, TLS_PRIORITY, NULL) < 0 ||
	    gnutls_session_ticket_key_generate(&ctx->ticket_key) < 0) {
		tls_ctx_free(ctx);
		return SHOAL_ETLS;
	}
	*out = ctx;
	return 0;
}

void tls_ctx_free(tls_ctx_t *ctx)
{
	if (!ctx)
		return;
	tls_creds_unref(ctx->creds);
	if (ctx->priority)
		gnutls_priority_deinit(ctx->priority);
	if (ctx->ticket_key.data) {
		sodium_memzero(ctx->ticket_key.data, ctx->ticket_key.size);
		gnutls_free(ctx->ticket_key.data);
	}
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

void tls_ctx_set_creds(tls_ctx_t *ctx, tls_creds_t *c)
{
	pthread_mutex_lock(&ctx->lock);
	tls_creds_t *old = ctx->creds;
	ctx->creds = c;
	pthread_mutex_unlock(&ctx->lock);
	tls_creds_unref(old);
}

tls_creds_t *tls_ctx_creds(tls_ctx_t *ctx)
{
	/* a lock for a pointer and a count: the handshake that follows costs 200 us */
	pthread_mutex_lock(&ctx->lock);
	tls_creds_t *c = ctx->creds;
	if (c)
		tls_creds_ref(c);
	pthread_mutex_unlock(&ctx->lock);
	return c;
}

/* ---- checking the server, on a client ---- */

/* The server's certificate's key is one of the pins (RFC 7858 4.2). */
static int check_pins(tls_session_t *s)
{
	uint8_t pin[TLS_PIN_LEN];
	char text[TLS_PIN_TEXT_MAX];
	if (!tls_peer_pin(s, pin)) {
		snprintf(s->error, sizeof(s->error), "the server showed no certificate");
		return -1;
	}
	for (size_t i = 0; i < s->auth->pin_count; i++)
		if (sodium_memcmp(pin, s->auth->pins[i], TLS_PIN_LEN) == 0)
			return 0;
	snprintf(s->error, sizeof(s->error), "the server's key (pin %s) is none of tls-pin",
		 tls_pin_text(pin, text));
	return -1;
}

/* The server's chain leads to a trusted CA and names the host (RFC 8310 8.1). */
static int check_hostname(tls_session_t *s)
{
	unsigned status = 0;
	gnutls_datum_t why = { NULL, 0 };
	if (!s->creds->ca) {
		snprintf(s->error, sizeof(s->error), "no CA to check %s against (tls-ca-file)",
			 s->auth->hostname);
		return -1;
	}
	int rc = gnutls_certificate_verify_peers3(s->g, s->auth->hostname, &status);
	if (rc == 0 && status == 0)
		return 0;
	if (rc == 0)
		gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &why, 0);
	snprintf(s->error, sizeof(s->error), "the server's certificate for %s: %s",
		 s->auth->hostname, why.data ? (char *)why.data : gnutls_strerror(rc));
	gnutls_free(why.data);
	return -1;
}

/* The library's check of the server, during the handshake: -1 ends it with an alert. */
static int verify_server(gnutls_session_t g)
{
	tls_session_t *s = gnutls_session_get_ptr(g);
	switch (s->auth->mode) {
	case TLS_AUTH_PIN:
		return check_pins(s);
	case TLS_AUTH_HOSTNAME:
		return check_hostname(s);
	default:
		return 0; /* opportunistic: encrypted, whoever it is (RFC 9103 9.3) */
	}
}

/* ---- sessions ---- */

/*
 * A session of the kind flags says on fd, with ctx's credentials and
 * settings. ALPN "dot" (RFC 9103 7.1): a server refuses a client that
 * offers only other protocols (one that offers none is an RFC 7858 client
 * and is served); a client offers it and takes a server without ALPN.
 */
static int session_new(tls_ctx_t *ctx, int fd, unsigned flags, tls_session_t **out)
{
	tls_creds_t *c = tls_ctx_creds(ctx);
	if (!c)
		return SHOAL_ENOTFOUND;
	tls_session_t *s = calloc(1, sizeof(*s));
	if (!s) {
		tls_creds_unref(c);
		return SHOAL_ENOMEM;
	}
	s->creds = c;
	if (gnutls_init(&s->g, flags | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL) < 0) {
		s->g = NULL;
		tls_session_free(s);
		return SHOAL_ENOMEM;
	}
	gnutls_session_set_ptr(s->g, s);
	int rc = gnutls_priority_set(s->g, ctx->priority);
	if (rc == 0)
		rc = gnutls_credentials_set(s->g, GNUTLS_CRD_CERTIFICATE, c->cred);
	if (rc == 0)
		rc = gnutls_alpn_set_protocols(s->g, &alpn_dot, 1,
					       (flags & GNUTLS_SERVER) ? GNUTLS_ALPN_MANDATORY : 0);
	if (rc < 0) {
		tls_session_free(s);
		return SHOAL_ETLS;
	}
	gnutls_transport_set_int(s->g, fd);
	/* the caller's deadlines bound the handshake, not the library's clock */
	gnutls_handshake_set_timeout(s->g, GNUTLS_INDEFINITE_TIMEOUT);
	*out = s;
	return 0;
}

int tls_session_server(tls_ctx_t *ctx, int fd, tls_session_t **out)
{
	tls_session_t *s;
	int rc = session_new(ctx, fd, GNUTLS_SERVER, &s);
	if (rc < 0)
		return rc;
	if (gnutls_session_ticket_enable_server(s->g, &ctx->ticket_key) < 0) {
		tls_session_free(s);
		return SHOAL_ETLS;
	}
	if (s->creds->request_client_cert) {
		/* mutual TLS: asked, not required (provide-xfr decides per zone) */
		gnutls_certificate_server_set_request(s->g, GNUTLS_CERT_REQUEST);
		/* no list of the CAs trusted (the system's would be long) */
		gnutls_certificate_send_x509_rdn_sequence(s->g, 1);
	}
	*out = s;
	return 0;
}

int tls_session_client(tls_ctx_t *ctx, int fd, const tls_auth_t *auth, tls_session_t **out)
{
	tls_session_t *s;
	int rc = session_new(ctx, fd, GNUTLS_CLIENT, &s);
	if (rc < 0)
		return rc;
	s->auth = malloc(sizeof(*s->auth));
	if (!s->auth) {
		tls_session_free(s);
		return SHOAL_ENOMEM;
	}
	*s->auth = *auth;
	s->auth->hostname[TLS_HOSTNAME_MAX - 1] = '\0';
	if (auth->mode == TLS_AUTH_HOSTNAME &&
	    gnutls_server_name_set(s->g, GNUTLS_NAME_DNS, s->auth->hostname,
				   strlen(s->auth->hostname)) < 0) {
		tls_session_free(s);
		return SHOAL_ETLS;
	}
	gnutls_session_set_verify_function(s->g, verify_server);
	*out = s;
	return 0;
}

void tls_session_free(tls_session_t *s)
{
	if (!s)
		return;
	if (s->g)
		gnutls_deinit(s->g);
	tls_creds_unref(s->creds);
	free(s->auth);
	free(s);
}

/* A library error as Shoal's: waiting, or SHOAL_ETLS with the reason kept. */
static int tls_fail(tls_session_t *s, const char *what, int rc)
{
	if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED)
		return -EAGAIN;
	if (s->error[0] &&
	    (rc == GNUTLS_E_CERTIFICATE_ERROR || rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR))
		return SHOAL_ETLS; /* the check said why */
	if (rc == GNUTLS_E_WARNING_ALERT_RECEIVED || rc == GNUTLS_E_FATAL_ALERT_RECEIVED)
		snprintf(s->error, sizeof(s->error), "%s: the peer sent alert %s", what,
			 gnutls_alert_get_name(gnutls_alert_get(s->g)));
	else
		snprintf(s->error, sizeof(s->error), "%s: %s", what, gnutls_strerror(rc));
	return SHOAL_ETLS;
}

int tls_handshake(tls_session_t *s)
{
	int rc = gnutls_handshake(s->g);
	for (int k = 0; rc < 0 && !gnutls_error_is_fatal(rc) && rc != GNUTLS_E_AGAIN &&
			rc != GNUTLS_E_INTERRUPTED && k < TLS_NONFATAL_MAX;
	     k++)
		rc = gnutls_handshake(s->g); /* a warning alert: go on */
	if (rc == 0)
		return 0;
	int err = tls_fail(s, "handshake", rc);
	/* the peer hears why (bad_certificate...) and can log it; best effort, never waited for */
	if (err == SHOAL_ETLS)
		gnutls_alert_send_appropriate(s->g, rc);
	return err;
}

bool tls_wants_write(const tls_session_t *s)
{
	return gnutls_record_get_direction(s->g) == 1;
}

ssize_t tls_recv(tls_session_t *s, uint8_t *buf, size_t len)
{
	for (int k = 0; k < TLS_NONFATAL_MAX; k++) {
		ssize_t n = gnutls_record_recv(s->g, buf, len);
		if (n >= 0)
			return n;
		/* a peer that closes without close_notify: the end, as for TCP (RFC 8446 6.1) */
		if (n == GNUTLS_E_PREMATURE_TERMINATION)
			return 0;
		if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED ||
		    gnutls_error_is_fatal((int)n))
			return tls_fail(s, "receive", (int)n);
		/* a warning alert, a post-handshake message: read on */
	}
	return -EAGAIN;
}

size_t tls_pending(tls_session_t *s)
{
	return gnutls_record_check_pending(s->g);
}

ssize_t tls_send(tls_session_t *s, const uint8_t *p, size_t len)
{
	/* one record: the peer may have asked for smaller ones (RFC 8449) */
	size_t max = gnutls_record_get_max_size(s->g);
	size_t n = len < max ? len : max;
	n = n < TLS_RECORD_MAX ? n : TLS_RECORD_MAX;
	ssize_t r = gnutls_record_send(s->g, p, n);
	if (r > 0)
		return r;
	if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
		/* encrypted and held: flushed by a later call with no data */
		s->unflushed = true;
		return (ssize_t)n;
	}
	return tls_fail(s, "send", r < 0 ? (int)r : GNUTLS_E_INTERNAL_ERROR);
}

bool tls_unflushed(const tls_session_t *s)
{
	return s->unflushed;
}

int tls_flush(tls_session_t *s)
{
	if (!s->unflushed)
		return 0;
	ssize_t r = gnutls_record_send(s->g, NULL, 0);
	if (r < 0)
		return tls_fail(s, "send", (int)r);
	s->unflushed = false;
	return 0;
}

int tls_bye(tls_session_t *s)
{
	int rc = gnutls_bye(s->g, GNUTLS_SHUT_WR);
	return rc < 0 ? tls_fail(s, "close_notify", rc) : 0;
}

const char *tls_error(const tls_session_t *s)
{
	return s->error;
}

bool tls_peer_pin(tls_session_t *s, uint8_t pin[TLS_PIN_LEN])
{
	unsigned n = 0;
	const gnutls_datum_t *chain = gnutls_certificate_get_peers(s->g, &n);
	gnutls_x509_crt_t crt;
	if (!chain || n == 0 || gnutls_x509_crt_init(&crt) < 0)
		return false;
	bool ok = gnutls_x509_crt_import(crt, &chain[0], GNUTLS_X509_FMT_DER) == 0 &&
		  tls_cert_pin(crt, pin) == 0;
	gnutls_x509_crt_deinit(crt);
	return ok;
}

bool tls_peer_ca_verified(tls_session_t *s)
{
	unsigned status = 0, n = 0;
	return s->creds->ca && gnutls_certificate_get_peers(s->g, &n) && n > 0 &&
	       gnutls_certificate_verify_peers2(s->g, &status) == 0 && status == 0;
}

bool tls_resumed(tls_session_t *s)
{
	return gnutls_session_is_resumed(s->g) != 0;
}

const char *tls_description(tls_session_t *s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s %s", gnutls_protocol_get_name(gnutls_protocol_get_version(s->g)),
		 gnutls_cipher_get_name(gnutls_cipher_get(s->g)));
	return buf;
}
