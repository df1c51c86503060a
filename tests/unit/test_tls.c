/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/tls.c and tls_cert.c: credentials, pins, sessions over a socketpair.
 */
#include "config.h"

#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/tls.h"
#include "unit.h"

static char dir[] = "/tmp/shoal-tls.XXXXXX";

static const char *in_dir(const char *name)
{
	static char path[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

static void write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(text, 1, len, f), len);
	fclose(f);
}

/*
 * A key, and a certificate for it with CN=cn and that name as its DNS
 * name, signed by issuer (NULL: self-signed); is_ca makes it a CA. Both
 * written in PEM to DIR/NAME.key and DIR/NAME.crt; *crt_out and *key_out
 * keep them for signing others (free with deinit).
 */
static void make_cert(const char *name, const char *cn, bool is_ca, gnutls_x509_crt_t issuer,
		      gnutls_x509_privkey_t issuer_key, gnutls_x509_crt_t *crt_out,
		      gnutls_x509_privkey_t *key_out)
{
	gnutls_x509_privkey_t key;
	gnutls_x509_crt_t crt;
	unsigned char serial[8] = { 1, 2, 3, 4, 5, 6, 7, (unsigned char)strlen(name) };
	CU_ASSERT_EQUAL_FATAL(gnutls_x509_privkey_init(&key), 0);
	CU_ASSERT_EQUAL_FATAL(
		gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
					     GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0),
		0);
	CU_ASSERT_EQUAL_FATAL(gnutls_x509_crt_init(&crt), 0);
	gnutls_x509_crt_set_version(crt, 3);
	gnutls_x509_crt_set_serial(crt, serial, sizeof(serial));
	gnutls_x509_crt_set_activation_time(crt, time(NULL) - 3600);
	gnutls_x509_crt_set_expiration_time(crt, time(NULL) + 86400);
	gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn));
	gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, cn, strlen(cn),
					     GNUTLS_FSAN_SET);
	gnutls_x509_crt_set_basic_constraints(crt, is_ca, -1);
	gnutls_x509_crt_set_key_usage(crt, is_ca ? GNUTLS_KEY_KEY_CERT_SIGN
						 : GNUTLS_KEY_DIGITAL_SIGNATURE);
	gnutls_x509_crt_set_key(crt, key);
	CU_ASSERT_EQUAL_FATAL(gnutls_x509_crt_sign2(crt, issuer ? issuer : crt,
						    issuer_key ? issuer_key : key,
						    GNUTLS_DIG_SHA256, 0),
			      0);
	char pem[8192], path[64];
	size_t len = sizeof(pem);
	CU_ASSERT_EQUAL_FATAL(gnutls_x509_privkey_export(key, GNUTLS_X509_FMT_PEM, pem, &len), 0);
	snprintf(path, sizeof(path), "%s.key", name);
	write_text(in_dir(path), pem, len);
	len = sizeof(pem);
	CU_ASSERT_EQUAL_FATAL(gnutls_x509_crt_export(crt, GNUTLS_X509_FMT_PEM, pem, &len), 0);
	snprintf(path, sizeof(path), "%s.crt", name);
	write_text(in_dir(path), pem, len);
	*crt_out = crt;
	*key_out = key;
}

/* Credentials from DIR/NAME.key and .crt, trusting ca (a file name in DIR, or NULL). */
static tls_creds_t *creds_of(const char *name, const char *ca, bool request)
{
	char key[64], crt[64], err[512] = "";
	snprintf(key, sizeof(key), "%s.key", name);
	snprintf(crt, sizeof(crt), "%s.crt", name);
	tls_creds_conf_t cf = { .key_file = in_dir(key),
				.cert_file = in_dir(crt),
				.ca_file = ca ? in_dir(ca) : NULL,
				.request_client_cert = request };
	tls_creds_t *c = NULL;
	CU_ASSERT_EQUAL(tls_creds_new(&cf, &c, err, sizeof(err)), 0);
	if (!c)
		fprintf(stderr, "creds %s: %s\n", name, err);
	return c;
}

static tls_ctx_t *ctx_with(tls_creds_t *c)
{
	tls_ctx_t *ctx = NULL;
	CU_ASSERT_EQUAL_FATAL(tls_ctx_new(&ctx), 0);
	tls_ctx_set_creds(ctx, c);
	return ctx;
}

/* A connected pair of non-blocking stream sockets. */
static void pair(int sv[2])
{
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
}

/*
 * Both handshakes driven in turn until each is done or has failed (in one
 * thread: each waits only for the other). Results in *rs and *rc.
 */
static void handshake_both(tls_session_t *server, tls_session_t *client, int *rs, int *rc)
{
	*rs = *rc = -EAGAIN;
	for (int k = 0; k < 100 && (*rs == -EAGAIN || *rc == -EAGAIN); k++) {
		if (*rc == -EAGAIN)
			*rc = tls_handshake(client);
		if (*rs == -EAGAIN)
			*rs = tls_handshake(server);
	}
}

/* A server on ctx_s and a client on ctx_c with auth, their handshake: 0 each, or why not. */
typedef struct duo {
	int sv[2];
	tls_session_t *server, *client;
	int rs, rc;
} duo_t;

static void duo_start(duo_t *d, tls_ctx_t *ctx_s, tls_ctx_t *ctx_c, const tls_auth_t *auth)
{
	pair(d->sv);
	CU_ASSERT_EQUAL_FATAL(tls_session_server(ctx_s, d->sv[0], &d->server), 0);
	CU_ASSERT_EQUAL_FATAL(tls_session_client(ctx_c, d->sv[1], auth, &d->client), 0);
	handshake_both(d->server, d->client, &d->rs, &d->rc);
}

static void duo_end(duo_t *d)
{
	if (getenv("TLS_DEBUG"))
		fprintf(stderr, "rs %d (%s) rc %d (%s)\n", d->rs, tls_error(d->server), d->rc,
			tls_error(d->client));
	tls_session_free(d->server);
	tls_session_free(d->client);
	close(d->sv[0]);
	close(d->sv[1]);
}

/* Pins: base64 of 32 octets both ways, anything else refused. */
static void test_tls_pin_text(void)
{
	uint8_t pin[TLS_PIN_LEN], back[TLS_PIN_LEN];
	char text[TLS_PIN_TEXT_MAX];
	for (int i = 0; i < TLS_PIN_LEN; i++)
		pin[i] = (uint8_t)(i * 37 + 250);
	tls_pin_text(pin, text);
	CU_ASSERT_EQUAL(strlen(text), 44);
	CU_ASSERT_EQUAL(tls_pin_parse(text, back), 0);
	CU_ASSERT_EQUAL(memcmp(pin, back, TLS_PIN_LEN), 0);
	CU_ASSERT_EQUAL(tls_pin_parse("abc", back), SHOAL_ESYNTAX);
	text[43] = '\0'; /* one character short */
	CU_ASSERT_EQUAL(tls_pin_parse(text, back), SHOAL_ESYNTAX);
	CU_ASSERT_EQUAL(tls_pin_parse("not base64 at all, with spaces and more text..", back),
			SHOAL_ESYNTAX);
}

/*
 * No key and certificate given: a pair is made at the first start and
 * kept (the key 0600), with the subject asked for; the next start takes
 * the same one, so its pin does not change. A folder with half a pair is
 * refused rather than overwritten.
 */
static void test_tls_self_signed_kept(void)
{
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("state"), 0700), 0);
	tls_creds_conf_t cf = { .folder = in_dir("state"), .common_name = "ns1.example" };
	tls_creds_t *a = NULL, *b = NULL;
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &a, err, sizeof(err)), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(in_dir("state/tls.key"), &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(stat(in_dir("state/tls.crt"), &st), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_creds_subject(a), "CN=ns1.example"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_creds_source(a), "self-signed"));
	cf.common_name = "another.example"; /* kept: the name does not make a new pair */
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &b, err, sizeof(err)), 0);
	uint8_t pa[TLS_PIN_LEN], pb[TLS_PIN_LEN];
	tls_creds_pin(a, pa);
	tls_creds_pin(b, pb);
	CU_ASSERT_EQUAL(memcmp(pa, pb, TLS_PIN_LEN), 0);
	tls_creds_unref(b);
	/* the kept files as tls-key-file and tls-cert-file: the same key */
	cf = (tls_creds_conf_t){ .key_file = in_dir("state/tls.key"),
				 .cert_file = in_dir("state/tls.crt") };
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &b, err, sizeof(err)), 0);
	tls_creds_pin(b, pb);
	CU_ASSERT_EQUAL(memcmp(pa, pb, TLS_PIN_LEN), 0);
	tls_creds_unref(b);
	tls_creds_unref(a);
	/* half a pair */
	CU_ASSERT_EQUAL(unlink(in_dir("state/tls.crt")), 0);
	cf = (tls_creds_conf_t){ .folder = in_dir("state"), .common_name = "ns1.example" };
	CU_ASSERT_EQUAL(tls_creds_new(&cf, &b, err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "has tls.key but not tls.crt"));
	unlink(in_dir("state/tls.key"));
	rmdir(in_dir("state"));
	/* without a folder: made for this process only */
	cf = (tls_creds_conf_t){ .common_name = "ns1.example" };
	CU_ASSERT_EQUAL(tls_creds_new(&cf, &b, err, sizeof(err)), 0);
	tls_creds_unref(b);
}

/* Files that are not there, or only one of the two: refused with the reason. */
static void test_tls_files_refused(void)
{
	char err[512] = "";
	tls_creds_t *c = NULL;
	tls_creds_conf_t cf = { .key_file = in_dir("none.key"), .cert_file = in_dir("none.crt") };
	CU_ASSERT_EQUAL(tls_creds_new(&cf, &c, err, sizeof(err)), SHOAL_ETLS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "none.crt"));
	cf.cert_file = NULL;
	CU_ASSERT_EQUAL(tls_creds_new(&cf, &c, err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "tls-cert-file is missing"));
	gnutls_x509_crt_t crt;
	gnutls_x509_privkey_t key;
	make_cert("lone", "lone.example", false, NULL, NULL, &crt, &key);
	cf = (tls_creds_conf_t){ .key_file = in_dir("lone.key"),
				 .cert_file = in_dir("lone.crt"),
				 .ca_file = in_dir("none.pem") };
	CU_ASSERT_EQUAL(tls_creds_new(&cf, &c, err, sizeof(err)), SHOAL_ETLS);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "tls-ca-file"));
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
}

/*
 * A client that pins the server's key connects; one with another pin is
 * refused during the handshake, and says which key it saw; opportunistic
 * takes any. ALPN "dot" is what both offer.
 */
static void test_tls_pins(void)
{
	char err[512] = "";
	tls_creds_t *c = NULL;
	tls_creds_conf_t cf = { .common_name = "ns1.example" };
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &c, err, sizeof(err)), 0);
	uint8_t pin[TLS_PIN_LEN];
	tls_creds_pin(c, pin);
	tls_ctx_t *ctx = ctx_with(c);
	tls_auth_t auth = { .mode = TLS_AUTH_PIN, .pin_count = 2 };
	memcpy(auth.pins[1], pin, TLS_PIN_LEN);
	duo_t d;
	duo_start(&d, ctx, ctx, &auth);
	CU_ASSERT_EQUAL(d.rc, 0);
	CU_ASSERT_EQUAL(d.rs, 0);
	uint8_t seen[TLS_PIN_LEN];
	CU_ASSERT_FALSE(tls_peer_pin(d.server, seen)); /* the server asked for none */
	duo_end(&d);

	auth.pin_count = 1; /* pins[0], all zero: not the server's */
	duo_start(&d, ctx, ctx, &auth);
	CU_ASSERT_EQUAL(d.rc, SHOAL_ETLS);
	CU_ASSERT_EQUAL(d.rs, SHOAL_ETLS);
	char text[TLS_PIN_TEXT_MAX];
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_error(d.client), "is none of tls-pin"));
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_error(d.client), tls_pin_text(pin, text)));
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_error(d.server), "alert"));
	duo_end(&d);

	auth = (tls_auth_t){ .mode = TLS_AUTH_OPPORTUNISTIC };
	duo_start(&d, ctx, ctx, &auth);
	CU_ASSERT_EQUAL(d.rc, 0);
	CU_ASSERT_EQUAL(d.rs, 0);
	duo_end(&d);
	tls_ctx_free(ctx);
}

/*
 * Strict by CA and host name: a certificate the CA signed for the name is
 * taken, another name or another CA is refused with the library's reason.
 * Mutual TLS: a server that asks sees the client's certificate, its pin
 * and whether the CA signed it.
 */
static void test_tls_ca_and_mutual(void)
{
	gnutls_x509_crt_t ca, other_ca, srv, cli, x;
	gnutls_x509_privkey_t ca_key, other_key, srv_key, cli_key, x_key;
	make_cert("ca", "Test CA", true, NULL, NULL, &ca, &ca_key);
	make_cert("other-ca", "Other CA", true, NULL, NULL, &other_ca, &other_key);
	make_cert("srv", "primary.example", false, ca, ca_key, &srv, &srv_key);
	make_cert("cli", "secondary.example", false, ca, ca_key, &cli, &cli_key);
	make_cert("stranger", "primary.example", false, other_ca, other_key, &x, &x_key);
	tls_ctx_t *server = ctx_with(creds_of("srv", "ca.crt", true));
	tls_ctx_t *client = ctx_with(creds_of("cli", "ca.crt", false));
	tls_ctx_t *stranger = ctx_with(creds_of("stranger", NULL, true));
	tls_auth_t auth = { .mode = TLS_AUTH_HOSTNAME };
	snprintf(auth.hostname, sizeof(auth.hostname), "primary.example");
	duo_t d;
	duo_start(&d, server, client, &auth);
	CU_ASSERT_EQUAL(d.rc, 0);
	CU_ASSERT_EQUAL(d.rs, 0);
	uint8_t seen[TLS_PIN_LEN], want[TLS_PIN_LEN];
	tls_creds_t *cc = tls_ctx_creds(client);
	tls_creds_pin(cc, want);
	tls_creds_unref(cc);
	CU_ASSERT_TRUE(tls_peer_pin(d.server, seen));
	CU_ASSERT_EQUAL(memcmp(seen, want, TLS_PIN_LEN), 0);
	CU_ASSERT_TRUE(tls_peer_ca_verified(d.server));
	duo_end(&d);

	snprintf(auth.hostname, sizeof(auth.hostname), "elsewhere.example");
	duo_start(&d, server, client, &auth);
	CU_ASSERT_EQUAL(d.rc, SHOAL_ETLS);
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_error(d.client), "for elsewhere.example"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(tls_error(d.client), "name in the certificate does not match"));
	duo_end(&d);

	/* a server of another CA, with the name asked for */
	snprintf(auth.hostname, sizeof(auth.hostname), "primary.example");
	duo_start(&d, stranger, client, &auth);
	CU_ASSERT_EQUAL(d.rc, SHOAL_ETLS);
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_error(d.client), "issuer is unknown"));
	duo_end(&d);

	/* the stranger as a client of the server: its certificate is seen, not the CA's */
	auth = (tls_auth_t){ .mode = TLS_AUTH_OPPORTUNISTIC };
	duo_start(&d, server, stranger, &auth);
	CU_ASSERT_EQUAL(d.rs, 0);
	CU_ASSERT_TRUE(tls_peer_pin(d.server, seen));
	CU_ASSERT_FALSE(tls_peer_ca_verified(d.server));
	duo_end(&d);
	tls_ctx_free(server);
	tls_ctx_free(client);
	tls_ctx_free(stranger);
	gnutls_x509_crt_t crts[] = { ca, other_ca, srv, cli, x };
	gnutls_x509_privkey_t keys[] = { ca_key, other_key, srv_key, cli_key, x_key };
	for (int i = 0; i < 5; i++) {
		gnutls_x509_crt_deinit(crts[i]);
		gnutls_x509_privkey_deinit(keys[i]);
	}
}

/* What is not a ClientHello ends the server's handshake at once, with the reason. */
static void test_tls_garbage(void)
{
	char err[512] = "";
	tls_creds_t *c = NULL;
	tls_creds_conf_t cf = { .common_name = "ns1.example" };
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &c, err, sizeof(err)), 0);
	tls_ctx_t *ctx = ctx_with(c);
	int sv[2];
	pair(sv);
	tls_session_t *s;
	CU_ASSERT_EQUAL_FATAL(tls_session_server(ctx, sv[0], &s), 0);
	CU_ASSERT_EQUAL(tls_handshake(s), -EAGAIN); /* nothing yet */
	CU_ASSERT_FALSE(tls_wants_write(s));
	/* a DNS query over TCP, as a client that forgot +tls sends */
	static const uint8_t query[] = { 0, 17, 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0,
					 0, 0,  0,    0,    0, 6, 1, 0, 0, 0 };
	CU_ASSERT_EQUAL(write(sv[1], query, sizeof(query)), (ssize_t)sizeof(query));
	CU_ASSERT_EQUAL(tls_handshake(s), SHOAL_ETLS);
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_error(s), "handshake"));
	tls_session_free(s);
	close(sv[0]);
	close(sv[1]);
	/* no credentials: no session */
	tls_ctx_set_creds(ctx, NULL);
	pair(sv);
	CU_ASSERT_EQUAL(tls_session_server(ctx, sv[0], &s), SHOAL_ENOTFOUND);
	close(sv[0]);
	close(sv[1]);
	tls_ctx_free(ctx);
}

/*
 * Records: what one record brings past the caller's buffer waits in
 * tls_pending; a send the socket cannot take whole is held (tls_unflushed)
 * and tls_flush finishes it once the peer reads; close_notify reads as 0.
 * Sessions made before the credentials change keep theirs; a ticket
 * resumes a session.
 */
static void test_tls_records(void)
{
	char err[512] = "";
	tls_creds_t *c = NULL;
	tls_creds_conf_t cf = { .common_name = "ns1.example" };
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &c, err, sizeof(err)), 0);
	tls_ctx_t *ctx = ctx_with(c);
	tls_auth_t auth = { .mode = TLS_AUTH_OPPORTUNISTIC };
	duo_t d;
	duo_start(&d, ctx, ctx, &auth);
	CU_ASSERT_EQUAL_FATAL(d.rc, 0);
	CU_ASSERT_EQUAL_FATAL(d.rs, 0);
	/* the credentials change: the sessions under way keep theirs */
	tls_creds_t *c2 = NULL;
	CU_ASSERT_EQUAL_FATAL(tls_creds_new(&cf, &c2, err, sizeof(err)), 0);
	tls_ctx_set_creds(ctx, c2);

	static uint8_t big[3 * TLS_RECORD_MAX], got[3 * TLS_RECORD_MAX];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	CU_ASSERT_EQUAL(tls_send(d.client, big, 100), 100);
	uint8_t small[10];
	CU_ASSERT_EQUAL(tls_recv(d.server, small, sizeof(small)), 10);
	CU_ASSERT_EQUAL(tls_pending(d.server), 90);
	CU_ASSERT_EQUAL(tls_recv(d.server, got, sizeof(got)), 90);
	CU_ASSERT_EQUAL(memcmp(got, big + 10, 90), 0);
	CU_ASSERT_EQUAL(tls_recv(d.server, got, sizeof(got)), -EAGAIN);

	/* a small send buffer: the server's records back up */
	int tiny = 4096;
	setsockopt(d.sv[0], SOL_SOCKET, SO_SNDBUF, &tiny, sizeof(tiny));
	size_t sent = 0, received = 0;
	int rounds = 0;
	while (sent < sizeof(big) && rounds++ < 1000) {
		if (tls_unflushed(d.server) && tls_flush(d.server) == -EAGAIN) {
			ssize_t n = tls_recv(d.client, got + received, sizeof(got) - received);
			CU_ASSERT_TRUE_FATAL(n > 0 || n == -EAGAIN);
			received += n > 0 ? (size_t)n : 0;
			continue;
		}
		ssize_t n = tls_send(d.server, big + sent, sizeof(big) - sent);
		CU_ASSERT_TRUE_FATAL(n > 0 && n <= TLS_RECORD_MAX);
		sent += (size_t)n;
	}
	CU_ASSERT_EQUAL(sent, sizeof(big));
	while (tls_unflushed(d.server) && rounds++ < 2000) {
		if (tls_flush(d.server) == 0)
			break;
		ssize_t n = tls_recv(d.client, got + received, sizeof(got) - received);
		received += n > 0 ? (size_t)n : 0;
	}
	CU_ASSERT_FALSE(tls_unflushed(d.server));
	for (; received < sizeof(big) && rounds++ < 3000;) {
		ssize_t n = tls_recv(d.client, got + received, sizeof(got) - received);
		received += n > 0 ? (size_t)n : 0;
	}
	CU_ASSERT_EQUAL(received, sizeof(big));
	CU_ASSERT_EQUAL(memcmp(got, big, sizeof(big)), 0);
	CU_ASSERT_EQUAL(tls_bye(d.client), 0);
	CU_ASSERT_EQUAL(tls_recv(d.server, got, sizeof(got)), 0);
	char desc[64];
	CU_ASSERT_PTR_NOT_NULL(strstr(tls_description(d.server, desc, sizeof(desc)), "TLS1."));
	duo_end(&d);
	tls_ctx_free(ctx);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(dir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_tls_pin_text),      UNIT_TEST(test_tls_self_signed_kept),
		UNIT_TEST(test_tls_files_refused), UNIT_TEST(test_tls_pins),
		UNIT_TEST(test_tls_ca_and_mutual), UNIT_TEST(test_tls_garbage),
		UNIT_TEST(test_tls_records),       UNIT_END,
	};
	int rc = unit_run(argc, argv, "tls", tests);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
