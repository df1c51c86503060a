/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TLS (GnuTLS): sessions over non-blocking sockets, the credentials they share, SPKI pins. */
#ifndef SHOAL_SERVER_COMMON_TLS_H
#define SHOAL_SERVER_COMMON_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * DNS over TLS (RFC 7858) and zone transfers over TLS (RFC 9103): the one
 * module that calls the TLS library, so the rest of the daemon sees
 * sessions, credentials and pins, and Shoal's error codes.
 *
 * A session runs over a non-blocking socket it does not own: every call
 * does what the socket allows and returns -EAGAIN when it must wait, and
 * tls_wants_write says for which readiness (after -EAGAIN). TLS 1.3, 1.2
 * allowed; ALPN "dot" (RFC 9103 7.1); session tickets (TLS 1.3 PSK).
 */

/* A pin: SHA-256 of a certificate's SubjectPublicKeyInfo (RFC 7858 4.2, RFC 7469 2.4). */
#define TLS_PIN_LEN 32
/* Its base64 (44 characters, kdig's +tls-pin form) and a NUL. */
#define TLS_PIN_TEXT_MAX 48
/* Plaintext octets in one record at most (RFC 8446 5.1). */
#define TLS_RECORD_MAX 16384
/* Pins one peer may be checked against (a zone's tls-pin list). */
#define TLS_PINS_MAX 8
/* A host name to check a certificate against, and its NUL. */
#define TLS_HOSTNAME_MAX 256

/* How a client authenticates the server (RFC 9103 9.3; RFC 8310 for the profiles). */
enum tls_auth_mode {
	TLS_AUTH_OPPORTUNISTIC, /* encrypted, the server not authenticated */
	TLS_AUTH_PIN,           /* strict: its key is one of pins (RFC 7858 4.2) */
	TLS_AUTH_HOSTNAME,      /* strict: a certificate chain to a trusted CA, for hostname */
};

/* What a client checks of the server it connects to. Plain data: copied freely. */
typedef struct tls_auth {
	enum tls_auth_mode mode;
	size_t pin_count; /* TLS_AUTH_PIN */
	uint8_t pins[TLS_PINS_MAX][TLS_PIN_LEN];
	char hostname[TLS_HOSTNAME_MAX]; /* TLS_AUTH_HOSTNAME; also sent as SNI */
} tls_auth_t;

/* ---- pins ---- */

/* pin as base64 into buf[0..TLS_PIN_TEXT_MAX); returns buf. Any thread. */
char *tls_pin_text(const uint8_t pin[TLS_PIN_LEN], char *buf);

/* A pin from its base64 text (44 characters). Returns 0 or SHOAL_ESYNTAX. Any thread. */
int tls_pin_parse(const char *text, uint8_t pin[TLS_PIN_LEN]);

/* ---- credentials ---- */

/*
 * A certificate and its key (the server's, and a client's for mutual
 * TLS), the CAs trusted to check peers, and whether servers ask clients
 * for a certificate. Immutable once made; shared by reference: each
 * session holds one, so a reconfig that replaces them leaves the sessions
 * under way on the ones they started with. Made by tls_creds_new
 * (server/common/tls_cert.c).
 */
typedef struct tls_creds tls_creds_t;

typedef struct tls_creds_conf {
	/* tls-key-file and tls-cert-file (PEM), both or neither */
	const char *key_file, *cert_file;
	/*
	 * Neither: the self-signed pair kept in folder (tls.key, mode 0600,
	 * and tls.crt), made there at the first start with common_name as
	 * its subject (some clients refuse an empty one); folder NULL: made
	 * for this process only.
	 */
	const char *folder;
	const char *common_name;
	const char *ca_file; /* tls-ca-file, or NULL */
	bool system_ca;      /* without ca_file: the system's CAs (a primary's host name checked) */
	bool request_client_cert; /* servers ask clients for one (mutual TLS in provide-xfr) */
} tls_creds_conf_t;

/*
 * Make credentials as c says. Returns 0 and *out (one reference), or a
 * negative error with err ("tls-key-file /x: ..."). Main thread, with the
 * rights the server keeps (a reconfig reads the files again).
 */
int tls_creds_new(const tls_creds_conf_t *c, tls_creds_t **out, char *err, size_t errlen);

/* One more reference to c, and one given back (the last frees). Any thread. */
void tls_creds_ref(tls_creds_t *c);
void tls_creds_unref(tls_creds_t *c);

/* The pin of c's own certificate's key. Any thread. */
void tls_creds_pin(const tls_creds_t *c, uint8_t pin[TLS_PIN_LEN]);

/* Where c's certificate came from, for log lines ("/etc/shoal/tls.crt"). Any thread. */
const char *tls_creds_source(const tls_creds_t *c);

/* The subject of c's certificate ("CN=ns1.example"), for log lines. Any thread. */
const char *tls_creds_subject(const tls_creds_t *c);

/* ---- the process's context ---- */

/*
 * What every session of the process starts from: the credentials in
 * force (swapped by a reconfig), the session ticket key (made once: a
 * ticket stays good across a change of certificate), the protocol
 * versions and ciphers.
 */
typedef struct tls_ctx tls_ctx_t;

/* A context without credentials yet. Returns 0 and *out, or SHOAL_ETLS/SHOAL_ENOMEM. Main
 * thread. */
int tls_ctx_new(tls_ctx_t **out);

/* Free ctx; sessions still open keep their credentials. Main thread, once no session starts. */
void tls_ctx_free(tls_ctx_t *ctx);

/*
 * The credentials new sessions take from now on: ctx takes the caller's
 * reference to c (NULL: none, sessions are refused), and gives back its
 * reference to the ones before. Any thread; a short lock, as every
 * session's start takes.
 */
void tls_ctx_set_creds(tls_ctx_t *ctx, tls_creds_t *c);

/* The credentials in force, one reference more (tls_creds_unref it), or NULL. Any thread. */
tls_creds_t *tls_ctx_creds(tls_ctx_t *ctx);

/* ---- sessions ---- */

typedef struct tls_session tls_session_t;

/*
 * A server's session on the accepted socket fd (non-blocking; still the
 * caller's to close, after tls_session_free), with ctx's credentials in
 * force. Returns 0 and *out, SHOAL_ENOTFOUND when ctx has none, or
 * SHOAL_ETLS/SHOAL_ENOMEM. The thread that drives it.
 */
int tls_session_server(tls_ctx_t *ctx, int fd, tls_session_t **out);

/*
 * A client's session on the connected socket fd, checking the server as
 * auth says (copied) during the handshake, presenting ctx's certificate
 * when the server asks for one (mutual TLS). Returns as
 * tls_session_server. The thread that drives it.
 */
int tls_session_client(tls_ctx_t *ctx, int fd, const tls_auth_t *auth, tls_session_t **out);

/* Free s (NULL does nothing); its socket is left open. */
void tls_session_free(tls_session_t *s);

/*
 * Go on with the handshake: 0 when it is done, -EAGAIN to wait for the
 * socket (tls_wants_write), or SHOAL_ETLS (tls_error says why: a bad
 * ClientHello, a certificate that does not verify, ALPN, an alert).
 */
int tls_handshake(tls_session_t *s);

/* After -EAGAIN: whether the session waits to write (else to read). */
bool tls_wants_write(const tls_session_t *s);

/*
 * Read application data into buf[0..len): the octets read (> 0), 0 when
 * the peer closed (close_notify or end of stream), -EAGAIN, SHOAL_ETLS or
 * -errno. What a record held past len stays for the next call: see
 * tls_pending.
 */
ssize_t tls_recv(tls_session_t *s, uint8_t *buf, size_t len);

/* Octets already decrypted, waiting for tls_recv (no socket event will say so). */
size_t tls_pending(tls_session_t *s);

/*
 * Send up to TLS_RECORD_MAX octets of p[0..len) as one record: returns
 * how many were taken (> 0), or SHOAL_ETLS or -errno. The record may not
 * all be on the socket yet: then tls_unflushed is true, and tls_flush must
 * finish it (as the socket allows) before the next send or tls_bye. p may
 * be reused once this returns.
 */
ssize_t tls_send(tls_session_t *s, const uint8_t *p, size_t len);

/* A record taken by tls_send waits for the socket. */
bool tls_unflushed(const tls_session_t *s);

/* Write what waits: 0 when nothing is left, -EAGAIN, or an error. */
int tls_flush(tls_session_t *s);

/* Send close_notify (RFC 8446 6.1): 0, -EAGAIN, or an error. */
int tls_bye(tls_session_t *s);

/* Why the last SHOAL_ETLS came, in words; "" before any. */
const char *tls_error(const tls_session_t *s);

/* After the handshake: the peer's certificate's pin; false when it showed none. */
bool tls_peer_pin(tls_session_t *s, uint8_t pin[TLS_PIN_LEN]);

/* After the handshake: the peer's certificate chains to a CA of the credentials' ca_file. */
bool tls_peer_ca_verified(tls_session_t *s);

/* After the handshake: a session ticket resumed it. */
bool tls_resumed(tls_session_t *s);

/* After the handshake: "TLS1.3 AES-256-GCM" and the like, for log lines. */
const char *tls_description(tls_session_t *s, char *buf, size_t cap);

#endif
