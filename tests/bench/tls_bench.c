/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * TLS library benchmark (not a test): GnuTLS against OpenSSL on this
 * machine, the server's side only, in CPU time of the server's thread
 * (CLOCK_THREAD_CPUTIME_ID), the client in another thread:
 *   - a full handshake (TLS 1.3, ECDSA P-256 certificate, each library's
 *     default key exchange), one 2-octet message each way, the session
 *     freed: what a new DoT or XoT connection costs the server;
 *   - a resumed one (the client presents the ticket of the previous);
 *   - bulk: one connection, 64 MiB sent in 16 KiB writes (a zone
 *     transfer's messages), per MiB, beside plain write(2) of the same;
 *   - memory: heap per session kept open and idle after one exchange.
 * Both ends on a socketpair, so the network costs nothing but the copy.
 *
 *   tests/bench/tls-bench [-n HANDSHAKES] [-m MIB] [-r ROUNDS]
 *   (make tests/bench/tls-bench: not built by default)
 */
#include <errno.h>
#include <getopt.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <malloc.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 16384

static char cert_pem[8192], key_pem[8192];
static size_t cert_len, key_len;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "tls-bench: %s\n", what);
	exit(1);
}

/* An ECDSA P-256 key and a self-signed certificate for it, in PEM (made with GnuTLS). */
static void make_cert(void)
{
	gnutls_x509_privkey_t key;
	gnutls_x509_crt_t crt;
	if (gnutls_x509_privkey_init(&key) < 0 ||
	    gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
					 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0)
		die("key");
	if (gnutls_x509_crt_init(&crt) < 0)
		die("cert");
	unsigned char serial[8] = { 1 };
	time_t now = time(NULL);
	gnutls_x509_crt_set_version(crt, 3);
	gnutls_x509_crt_set_serial(crt, serial, sizeof(serial));
	gnutls_x509_crt_set_activation_time(crt, now - 3600);
	gnutls_x509_crt_set_expiration_time(crt, now + 86400);
	gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "bench", 5);
	gnutls_x509_crt_set_key(crt, key);
	if (gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0)
		die("sign");
	cert_len = sizeof(cert_pem);
	key_len = sizeof(key_pem);
	if (gnutls_x509_crt_export(crt, GNUTLS_X509_FMT_PEM, cert_pem, &cert_len) < 0 ||
	    gnutls_x509_privkey_export(key, GNUTLS_X509_FMT_PEM, key_pem, &key_len) < 0)
		die("export");
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
}

/* What one library does, both sides, blocking. */
typedef struct backend {
	const char *name;
	void (*setup)(void);
	/* server: handshake on fd, 2 octets out, 2 in, free; *resumed says whether it was */
	void (*serve)(int fd, int *resumed);
	/* client: handshake (resuming when it can), 2 in, 2 out, keep the ticket */
	void (*client)(int fd);
	void (*forget)(void); /* the client drops its ticket */
	void (*bulk_recv)(int fd, size_t total);
	const char *(*cipher)(void);
	/* server: a session after its handshake (drop frees it), len octets sent on it */
	void *(*accept)(int fd);
	void *(*exchange)(int fd); /* accept, then 2 octets out and 2 in */
	void (*send)(void *session, const char *p, size_t len);
	void (*drop)(void *session);
} backend_t;

/* ---- GnuTLS ---- */

static gnutls_certificate_credentials_t g_scred, g_ccred;
static gnutls_datum_t g_ticket_key, g_session;
static char g_cipher[128];

static void g_setup(void)
{
	gnutls_datum_t c = { (unsigned char *)cert_pem, (unsigned)cert_len };
	gnutls_datum_t k = { (unsigned char *)key_pem, (unsigned)key_len };
	if (gnutls_certificate_allocate_credentials(&g_scred) < 0 ||
	    gnutls_certificate_set_x509_key_mem(g_scred, &c, &k, GNUTLS_X509_FMT_PEM) < 0 ||
	    gnutls_certificate_allocate_credentials(&g_ccred) < 0 ||
	    gnutls_session_ticket_key_generate(&g_ticket_key) < 0)
		die("gnutls setup");
}

static gnutls_session_t g_session_new(unsigned flags, int fd)
{
	gnutls_session_t s;
	if (gnutls_init(&s, flags) < 0 || gnutls_set_default_priority(s) < 0)
		die("gnutls_init");
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE,
			       (flags & GNUTLS_SERVER) ? g_scred : g_ccred);
	gnutls_transport_set_int(s, fd);
	return s;
}

static void g_io(ssize_t r, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "gnutls: %s\n", gnutls_strerror((int)r));
		die(what);
	}
}

/* gnutls_record_recv, past GNUTLS_E_AGAIN: in TLS 1.3 a post-handshake
 * message (a session ticket) returns it even on a blocking socket. */
static ssize_t g_recv(gnutls_session_t s, void *b, size_t len)
{
	ssize_t r;
	do
		r = gnutls_record_recv(s, b, len);
	while (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED);
	return r;
}

static void g_handshake(gnutls_session_t s)
{
	int r;
	do
		r = gnutls_handshake(s);
	while (r < 0 && !gnutls_error_is_fatal(r));
	if (r < 0) {
		fprintf(stderr, "gnutls: %s\n", gnutls_strerror(r));
		die("gnutls handshake");
	}
}

static void *g_accept(int fd);

/* The server's exchange: 2 octets out, 2 in; the session kept. */
static void *g_exchange(int fd)
{
	gnutls_session_t s = g_accept(fd);
	char b[2] = { 0, 0 };
	g_io(gnutls_record_send(s, b, 2), "gnutls send");
	g_io(g_recv(s, b, 2), "gnutls recv");
	return s;
}

static void g_serve(int fd, int *resumed)
{
	gnutls_session_t s = g_exchange(fd);
	*resumed = gnutls_session_is_resumed(s);
	char *d = gnutls_session_get_desc(s);
	snprintf(g_cipher, sizeof(g_cipher), "%s", d);
	gnutls_free(d);
	gnutls_deinit(s);
}

static void g_client(int fd)
{
	gnutls_session_t s = g_session_new(GNUTLS_CLIENT, fd);
	if (g_session.size)
		gnutls_session_set_data(s, g_session.data, g_session.size);
	g_handshake(s);
	char b[2];
	g_io(g_recv(s, b, 2), "gnutls client recv");
	g_io(gnutls_record_send(s, b, 2), "gnutls client send");
	gnutls_free(g_session.data);
	g_session.data = NULL;
	g_session.size = 0;
	gnutls_session_get_data2(s, &g_session);
	gnutls_deinit(s);
}

static void g_forget(void)
{
	gnutls_free(g_session.data);
	g_session.data = NULL;
	g_session.size = 0;
}

static void g_bulk_recv(int fd, size_t total)
{
	static char buf[CHUNK];
	gnutls_session_t s = g_session_new(GNUTLS_CLIENT, fd);
	g_handshake(s);
	for (size_t done = 0; done < total;) {
		ssize_t r = g_recv(s, buf, sizeof(buf));
		g_io(r, "gnutls bulk recv");
		done += (size_t)r;
	}
	gnutls_deinit(s);
}

static void *g_accept(int fd)
{
	gnutls_session_t s = g_session_new(GNUTLS_SERVER, fd);
	gnutls_session_ticket_enable_server(s, &g_ticket_key);
	g_handshake(s);
	return s;
}

static void g_send(void *s, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t r = gnutls_record_send(s, p, len);
		g_io(r, "gnutls send");
		p += r;
		len -= (size_t)r;
	}
}

static void g_drop(void *s)
{
	gnutls_deinit(s);
}

static const char *g_cipher_name(void)
{
	return g_cipher;
}

/* ---- OpenSSL ---- */

static SSL_CTX *o_sctx, *o_cctx;
static SSL_SESSION *o_session;
static char o_cipher[128];

static void o_setup(void)
{
	BIO *cb = BIO_new_mem_buf(cert_pem, (int)cert_len);
	BIO *kb = BIO_new_mem_buf(key_pem, (int)key_len);
	X509 *x = PEM_read_bio_X509(cb, NULL, NULL, NULL);
	EVP_PKEY *k = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
	o_sctx = SSL_CTX_new(TLS_server_method());
	o_cctx = SSL_CTX_new(TLS_client_method());
	if (!x || !k || !o_sctx || !o_cctx || SSL_CTX_use_certificate(o_sctx, x) != 1 ||
	    SSL_CTX_use_PrivateKey(o_sctx, k) != 1)
		die("openssl setup");
	/* idle sessions give their record buffers back (fair to its memory figure) */
	SSL_CTX_set_mode(o_sctx, SSL_MODE_RELEASE_BUFFERS);
	/* one ticket, as GnuTLS sends */
	SSL_CTX_set_num_tickets(o_sctx, 1);
	SSL_CTX_set_session_cache_mode(o_cctx, SSL_SESS_CACHE_CLIENT);
	X509_free(x);
	EVP_PKEY_free(k);
	BIO_free(cb);
	BIO_free(kb);
}

static SSL *o_new(SSL_CTX *ctx, int fd)
{
	SSL *s = SSL_new(ctx);
	if (!s || SSL_set_fd(s, fd) != 1)
		die("SSL_new");
	return s;
}

static void o_io(int r, const char *what)
{
	if (r <= 0) {
		ERR_print_errors_fp(stderr);
		die(what);
	}
}

static void *o_accept(int fd);

/* The server's exchange: 2 octets out, 2 in; the session kept. */
static void *o_exchange(int fd)
{
	SSL *s = o_accept(fd);
	char b[2] = { 0, 0 };
	o_io(SSL_write(s, b, 2), "SSL_write");
	o_io(SSL_read(s, b, 2), "SSL_read");
	return s;
}

static void o_serve(int fd, int *resumed)
{
	SSL *s = o_exchange(fd);
	*resumed = SSL_session_reused(s);
	snprintf(o_cipher, sizeof(o_cipher), "%s %s", SSL_get_version(s), SSL_get_cipher_name(s));
	SSL_set_shutdown(s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(s);
}

static void o_client(int fd)
{
	SSL *s = o_new(o_cctx, fd);
	if (o_session)
		SSL_set_session(s, o_session);
	o_io(SSL_connect(s), "SSL_connect");
	char b[2];
	o_io(SSL_read(s, b, 2), "client SSL_read");
	o_io(SSL_write(s, b, 2), "client SSL_write");
	SSL_SESSION_free(o_session);
	o_session = SSL_get1_session(s);
	/* an SSL freed without a shutdown marks its session not resumable */
	SSL_set_shutdown(s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(s);
}

static void o_forget(void)
{
	SSL_SESSION_free(o_session);
	o_session = NULL;
}

static void o_bulk_recv(int fd, size_t total)
{
	static char buf[CHUNK];
	SSL *s = o_new(o_cctx, fd);
	o_io(SSL_connect(s), "SSL_connect");
	for (size_t done = 0; done < total;) {
		int r = SSL_read(s, buf, sizeof(buf));
		o_io(r, "bulk SSL_read");
		done += (size_t)r;
	}
	SSL_free(s);
}

static void *o_accept(int fd)
{
	SSL *s = o_new(o_sctx, fd);
	o_io(SSL_accept(s), "SSL_accept");
	return s;
}

static void o_send(void *s, const char *p, size_t len)
{
	o_io(SSL_write(s, p, (int)len), "SSL_write");
}

static void o_drop(void *s)
{
	SSL_free(s);
}

static const char *o_cipher_name(void)
{
	return o_cipher;
}

static const backend_t backends[] = {
	{ "gnutls", g_setup, g_serve, g_client, g_forget, g_bulk_recv, g_cipher_name, g_accept,
	  g_exchange, g_send, g_drop },
	{ "openssl", o_setup, o_serve, o_client, o_forget, o_bulk_recv, o_cipher_name, o_accept,
	  o_exchange, o_send, o_drop },
};

/* ---- the runs ---- */

typedef struct client_job {
	const backend_t *b;
	int fds[4096];
	int n;
	int resume; /* keep the ticket from one connection to the next */
	size_t total;
} client_job_t;

static void *client_main(void *arg)
{
	client_job_t *j = arg;
	for (int i = 0; i < j->n; i++) {
		if (!j->resume)
			j->b->forget();
		if (j->total)
			j->b->bulk_recv(j->fds[i], j->total);
		else
			j->b->client(j->fds[i]);
		close(j->fds[i]);
	}
	return NULL;
}

/* n handshakes, resuming or not: the server's CPU per handshake, in µs. */
static double handshakes(const backend_t *b, int n, int resume)
{
	static client_job_t job;
	int server_fds[4096];
	job.b = b;
	job.n = n;
	job.resume = resume;
	job.total = 0;
	for (int i = 0; i < n; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			die("socketpair");
		server_fds[i] = sv[0];
		job.fds[i] = sv[1];
	}
	b->forget();
	pthread_t t;
	pthread_create(&t, NULL, client_main, &job);
	double cpu = 0;
	int resumed_count = 0;
	for (int i = 0; i < n; i++) {
		int resumed = 0;
		double t0 = thread_cpu();
		b->serve(server_fds[i], &resumed);
		double t1 = thread_cpu();
		close(server_fds[i]);
		/* the first resumed run's first connection has no ticket yet */
		if (i > 0 || !resume) {
			cpu += t1 - t0;
			resumed_count += resumed;
		}
	}
	pthread_join(t, NULL);
	int counted = resume ? n - 1 : n;
	if (resume && resumed_count != counted)
		fprintf(stderr, "  %s: only %d of %d resumed\n", b->name, resumed_count, counted);
	if (!resume && resumed_count)
		fprintf(stderr, "  %s: %d resumed unasked\n", b->name, resumed_count);
	return cpu * 1e6 / counted;
}

static void bulk(const backend_t *b, size_t total)
{
	static client_job_t job;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	job.b = b;
	job.n = 1;
	job.fds[0] = sv[1];
	job.total = total;
	pthread_t t;
	pthread_create(&t, NULL, client_main, &job);
	static char buf[CHUNK];
	void *s = b->accept(sv[0]);
	double t0 = thread_cpu();
	for (size_t done = 0; done < total; done += CHUNK)
		b->send(s, buf, CHUNK);
	double t1 = thread_cpu();
	printf("  %-8s bulk: %.0f us CPU per MiB sent (%zu MiB)\n", b->name,
	       (t1 - t0) * 1e6 / ((double)total / 1048576), total / 1048576);
	b->drop(s);
	pthread_join(t, NULL);
	close(sv[0]);
}

static void *plain_reader(void *arg)
{
	static char buf[CHUNK];
	int fd = *(int *)arg;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

static void plain_bulk(size_t total)
{
	static char buf[CHUNK];
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	pthread_t t;
	pthread_create(&t, NULL, plain_reader, &sv[1]);
	double t0 = thread_cpu();
	for (size_t done = 0; done < total;) {
		ssize_t r = write(sv[0], buf, CHUNK);
		if (r < 0)
			die("write");
		done += (size_t)r;
	}
	double t1 = thread_cpu();
	close(sv[0]);
	pthread_join(t, NULL);
	close(sv[1]);
	printf("  %-8s bulk: %.0f us CPU per MiB sent (%zu MiB)\n", "write(2)",
	       (t1 - t0) * 1e6 / ((double)total / 1048576), total / 1048576);
}

/*
 * Heap per session the server keeps open and idle after one exchange,
 * the clients in a child process (so only the server's sessions count).
 */
static void memory(const backend_t *b, int n)
{
	int server_fds[4096], client_fds[4096];
	void *sessions[4096];
	for (int i = 0; i < n; i++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			die("socketpair");
		server_fds[i] = sv[0];
		client_fds[i] = sv[1];
	}
	b->forget();
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < n; i++)
			b->client(client_fds[i]);
		pause(); /* the connections stay open until killed */
		_exit(0);
	}
	for (int i = 0; i < n; i++)
		close(client_fds[i]);
	sessions[0] = b->exchange(server_fds[0]); /* the library's first use out of the count */
	struct mallinfo2 before = mallinfo2();
	for (int i = 1; i < n; i++)
		sessions[i] = b->exchange(server_fds[i]);
	struct mallinfo2 after = mallinfo2();
	printf("  %-8s memory: %.0f octets of heap per idle session\n", b->name,
	       (double)(after.uordblks - before.uordblks) / (n - 1));
	for (int i = 0; i < n; i++) {
		b->drop(sessions[i]);
		close(server_fds[i]);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	int n = 1000, rounds = 3, opt;
	size_t mib = 64;
	while ((opt = getopt(argc, argv, "n:m:r:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'm':
			mib = (size_t)atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: tls-bench [-n HANDSHAKES] [-m MIB] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (n < 2 || n > 4096)
		die("-n: from 2 to 4096");
	make_cert();
	printf("GnuTLS %s, %s\n", gnutls_check_version(NULL), OpenSSL_version(OPENSSL_VERSION));
	for (size_t i = 0; i < 2; i++)
		backends[i].setup();
	for (int r = 0; r < rounds; r++) {
		printf("round %d\n", r + 1);
		for (size_t i = 0; i < 2; i++) {
			const backend_t *b = &backends[i];
			double full = handshakes(b, n, 0);
			double resumed = handshakes(b, n, 1);
			printf("  %-8s full %.0f us, resumed %.0f us per handshake (%s)\n", b->name,
			       full, resumed, b->cipher());
		}
		for (size_t i = 0; i < 2; i++)
			bulk(&backends[i], mib * 1048576);
		plain_bulk(mib * 1048576);
	}
	for (size_t i = 0; i < 2; i++)
		memory(&backends[i], n < 200 ? n : 200);
	return 0;
}
