/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A small DNS-over-TLS client for the TLS integration tests: pipelining, resumption, pins, and the
 * clients that misbehave (stall, garbage). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/dnsquery.h"
#include "tests/tcpio.h"

static const char usage[] =
	"usage: tlsclient [options] ADDR PORT NAME [TYPE]\n"
	"Open connections to a DNS-over-TLS server (ALPN dot), write the queries for NAME/TYPE\n"
	"on each at once (pipelined), read every answer and check IDs come back in order.\n"
	"  -c N   connections (default 1)\n"
	"  -n N   queries per connection, written at once (default 1)\n"
	"  -s A   the local address to connect from (default: the kernel's choice)\n"
	"  -R     resume: connections after the first present the first's session ticket\n"
	"  -P     print the pin (base64 SHA-256 of the SPKI) of each connection's server key\n"
	"  -A P   offer ALPN protocol P instead of dot\n"
	"  -r F   create file F once every connection's handshake is done\n"
	"  -l S   then keep the connections open S seconds before writing the queries\n"
	"  -m M   misbehave instead of asking: 'silent' (connect, send nothing), 'stall' (half\n"
	"         a ClientHello), 'garbage' (a DNS query, not TLS); report when the server\n"
	"         closes (closed_after_ms) or that it did not within -w; 'reset' (half a\n"
	"         ClientHello, then an RST)\n"
	"  -w S   how long to wait for each answer or close (default 10)\n"
	"  -T     plain TCP instead of TLS: the same queries and checks (a baseline)\n"
	"  -d MS  once connected, wait MS milliseconds before the ClientHello\n"
	"Prints one summary line; exits 0 when every query got an answer in order, else 1.\n";

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A TCP connection from src (NULL: any) with a read deadline, or -1. */
static int connect_from(const char *src, const char *addr, int port, int wait_s)
{
	if (!src)
		return tcpio_connect(addr, (uint16_t)port, wait_s);
	struct sockaddr_in a = { .sin_family = AF_INET }, b = { .sin_family = AF_INET };
	if (inet_pton(AF_INET, src, &a.sin_addr) != 1 || inet_pton(AF_INET, addr, &b.sin_addr) != 1)
		exit(2);
	b.sin_port = htons((uint16_t)port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    connect(fd, (struct sockaddr *)&b, sizeof(b)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	tcpio_deadline(fd, wait_s);
	return fd;
}

/* Misbehave on one connection as mode says, then wait for the server to close it. */
static int misbehave(const char *src, const char *addr, int port, const char *mode, int wait_s)
{
	int fd = connect_from(src, addr, port, wait_s);
	if (fd < 0) {
		perror("tlsclient: connect");
		return 1;
	}
	/* a TLS record header announcing a 512-octet handshake, and 10 octets of it */
	static const uint8_t half_hello[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01,
					      0xfc, 0x03, 0x03, 0x11, 0x22, 0x33, 0x44 };
	/* a DNS query over TCP, as a client that forgot +tls sends */
	static const uint8_t query[] = { 0, 29, 0x12, 0x34, 1,   0,   0,   1,   0,   0,   0,
					 0, 0,  0,    7,    'e', 'x', 'a', 'm', 'p', 'l', 'e',
					 0, 0,  1,    0,    1,   0,   0,   0,   0 };
	if (!strcmp(mode, "stall"))
		tcpio_send_all(fd, half_hello, sizeof(half_hello));
	else if (!strcmp(mode, "garbage"))
		tcpio_send_all(fd, query, sizeof(query));
	else if (strcmp(mode, "silent")) {
		fprintf(stderr, "tlsclient: -m silent, stall, garbage or reset\n");
		return 2;
	}
	double t0 = now_ms();
	uint8_t b[512];
	ssize_t r;
	/* an alert may come before the close */
	while ((r = recv(fd, b, sizeof(b), 0)) > 0)
		;
	close(fd);
	if (r == 0 || (r < 0 && errno == ECONNRESET)) {
		printf("closed_after_ms %.0f\n", now_ms() - t0);
		return 0;
	}
	printf("still_open after %d s\n", wait_s);
	return 1;
}

/* One connection: its socket and session. */
typedef struct conn {
	int fd;
	bool open;          /* connected (and, unless -T, the handshake done) */
	gnutls_session_t s; /* NULL with -T */
	bool resumed;
	char pin[64];
} conn_t;

static gnutls_certificate_credentials_t creds;
static gnutls_datum_t ticket;
static const char *alpn = "dot";
static bool reset;   /* -m reset */
static bool plain;   /* -T: plain TCP, the same queries and checks (a baseline) */
static int delay_ms; /* -d: connected, wait this long before the ClientHello */

/* The server's key's pin, as shoalctl tls-pin prints it. */
static void server_pin(gnutls_session_t s, char *out, size_t cap)
{
	unsigned n = 0;
	const gnutls_datum_t *chain = gnutls_certificate_get_peers(s, &n);
	gnutls_x509_crt_t crt;
	gnutls_pubkey_t key;
	gnutls_datum_t spki = { NULL, 0 };
	uint8_t hash[32];
	snprintf(out, cap, "none");
	if (!chain || !n || gnutls_x509_crt_init(&crt) < 0)
		return;
	if (gnutls_x509_crt_import(crt, &chain[0], GNUTLS_X509_FMT_DER) == 0 &&
	    gnutls_pubkey_init(&key) == 0) {
		if (gnutls_pubkey_import_x509(key, crt, 0) == 0 &&
		    gnutls_pubkey_export2(key, GNUTLS_X509_FMT_DER, &spki) == 0 &&
		    gnutls_hash_fast(GNUTLS_DIG_SHA256, spki.data, spki.size, hash) == 0) {
			gnutls_datum_t raw = { hash, sizeof(hash) }, b64;
			if (gnutls_base64_encode2(&raw, &b64) == 0) {
				snprintf(out, cap, "%.*s", (int)b64.size, (char *)b64.data);
				gnutls_free(b64.data);
			}
		}
		gnutls_free(spki.data);
		gnutls_pubkey_deinit(key);
	}
	gnutls_x509_crt_deinit(crt);
}

/*
 * -m reset: the server's certificate refused as a client that does not
 * like its key may, by an abortive close (an RST, no alert) while the
 * server waits for the client's Finished.
 */
static int reset_on_cert(gnutls_session_t s)
{
	int fd = gnutls_transport_get_int(s);
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	shutdown(fd, SHUT_RD);
	close(fd);
	return -1;
}

/* Connect and finish the handshake (blocking); false on failure (said on stderr). */
static bool conn_open(conn_t *c, const char *src, const char *addr, int port, int wait_s,
		      bool resume)
{
	gnutls_datum_t proto = { (unsigned char *)alpn, (unsigned)strlen(alpn) };
	c->s = NULL;
	c->fd = connect_from(src, addr, port, wait_s);
	if (c->fd < 0)
		return false;
	if (plain)
		return c->open = true;
	if (delay_ms > 0)
		nanosleep(&(struct timespec){ .tv_sec = delay_ms / 1000,
					      .tv_nsec = (delay_ms % 1000) * 1000000L },
			  NULL);
	/* a server that closes shows as a failed write, not as this process killed by SIGPIPE */
	gnutls_init(&c->s, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL);
	gnutls_set_default_priority(c->s);
	gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, creds);
	gnutls_alpn_set_protocols(c->s, &proto, 1, 0);
	if (resume && ticket.size)
		gnutls_session_set_data(c->s, ticket.data, ticket.size);
	gnutls_transport_set_int(c->s, c->fd);
	if (reset)
		gnutls_session_set_verify_function(c->s, reset_on_cert);
	gnutls_handshake_set_timeout(c->s, (unsigned)wait_s * 1000);
	int rc;
	do
		rc = gnutls_handshake(c->s);
	while (rc < 0 && !gnutls_error_is_fatal(rc));
	if (rc < 0) {
		fprintf(stderr, "tlsclient: handshake: %s\n", gnutls_strerror(rc));
		return false;
	}
	c->resumed = gnutls_session_is_resumed(c->s);
	server_pin(c->s, c->pin, sizeof(c->pin));
	return c->open = true;
}

/* Read exactly len octets of application data; false on end, error or deadline. */
static bool tls_read_all(const conn_t *c, uint8_t *p, size_t len)
{
	gnutls_session_t s = c->s;
	if (!s)
		return tcpio_recv_all(c->fd, p, len);
	while (len > 0) {
		ssize_t r = gnutls_record_recv(s, p, len);
		if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
			continue; /* a session ticket arrived: read on */
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

static bool tls_write_all(const conn_t *c, const uint8_t *p, size_t len)
{
	gnutls_session_t s = c->s;
	if (!s)
		return tcpio_send_all(c->fd, p, len);
	while (len > 0) {
		ssize_t r = gnutls_record_send(s, p, len);
		if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
			continue;
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

/* Read `queries` answers on c: how many came, in order and NOERROR. */
static void read_answers(conn_t *c, int queries, long *answers, long *in_order, long *noerror)
{
	static uint8_t msg[65535];
	for (int i = 0; i < queries; i++) {
		uint8_t len[2];
		ldns_pkt *pkt = NULL;
		if (!tls_read_all(c, len, 2))
			return;
		size_t n = (size_t)len[0] << 8 | len[1];
		if (!tls_read_all(c, msg, n) || ldns_wire2pkt(&pkt, msg, n) != LDNS_STATUS_OK)
			return;
		(*answers)++;
		*in_order += ldns_pkt_id(pkt) == i + 1 && ldns_pkt_qr(pkt);
		*noerror += ldns_pkt_get_rcode(pkt) == LDNS_RCODE_NOERROR;
		ldns_pkt_free(pkt);
	}
}

int main(int argc, char **argv)
{
	int conns = 1, queries = 1, linger = 0, wait_s = 10, opt;
	bool resume = false, pins = false;
	const char *ready = NULL, *mode = NULL, *src = NULL;
	while ((opt = getopt(argc, argv, "c:n:s:RPA:r:l:m:w:Td:h")) != -1) {
		switch (opt) {
		case 'c':
			conns = atoi(optarg);
			break;
		case 'n':
			queries = atoi(optarg);
			break;
		case 's':
			src = optarg;
			break;
		case 'R':
			resume = true;
			break;
		case 'T':
			plain = true;
			break;
		case 'd':
			delay_ms = atoi(optarg);
			break;
		case 'P':
			pins = true;
			break;
		case 'A':
			alpn = optarg;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'l':
			linger = atoi(optarg);
			break;
		case 'm':
			mode = optarg;
			break;
		case 'w':
			wait_s = atoi(optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind < 3 || conns < 1 || queries < 0 || queries > 60000) {
		fputs(usage, stderr);
		return 2;
	}
	const char *addr = argv[optind], *name = argv[optind + 2];
	int port = atoi(argv[optind + 1]);
	reset = mode && !strcmp(mode, "reset");
	if (mode && !reset)
		return misbehave(src, addr, port, mode, wait_s);
	ldns_rr_type type =
		argc - optind > 3 ? ldns_get_rr_type_by_name(argv[optind + 3]) : LDNS_RR_TYPE_A;
	gnutls_certificate_allocate_credentials(&creds);
	if (reset) {
		conn_t c;
		bool ok = conn_open(&c, src, addr, port, wait_s, false);
		gnutls_deinit(c.s);
		gnutls_certificate_free_credentials(creds);
		printf("%s\n", ok ? "handshake done" : "reset");
		return ok;
	}

	size_t qcap = (size_t)(queries ? queries : 1) * 600, qlen = 0, first_len = 0;
	uint8_t *q = malloc(qcap);
	for (int i = 0; i < queries; i++) {
		qlen += dnsquery_build(q + qlen, qcap - qlen, name, type, (uint16_t)(i + 1), false,
				       "tlsclient");
		first_len = first_len ? first_len : qlen;
	}
	conn_t *c = calloc((size_t)conns, sizeof(*c));
	int opened = 0, resumed = 0;
	for (int i = 0; i < conns; i++) {
		if (!conn_open(&c[i], src, addr, port, wait_s, resume))
			continue;
		opened++;
		resumed += c[i].resumed;
		if (resume && !ticket.size) {
			/*
			 * TLS 1.3: the ticket comes after the handshake; a query (one:
			 * the load stays the one counted) brings it in
			 */
			if (qlen && tls_write_all(&c[i], q, first_len)) {
				long a = 0, o = 0, e = 0;
				read_answers(&c[i], 1, &a, &o, &e);
			}
			gnutls_session_get_data2(c[i].s, &ticket);
		}
	}
	if (ready) {
		FILE *f = fopen(ready, "w");
		if (f)
			fclose(f);
	}
	if (linger > 0)
		sleep((unsigned)linger);
	long answers = 0, in_order = 0, noerror = 0, lost = 0;
	for (int i = 0; i < conns; i++) {
		if (!c[i].open)
			continue;
		long before = answers;
		if (qlen && tls_write_all(&c[i], q, qlen))
			read_answers(&c[i], queries, &answers, &in_order, &noerror);
		lost += answers - before < queries;
		if (pins)
			printf("pin %s\n", c[i].pin);
		if (c[i].s) {
			gnutls_bye(c[i].s, GNUTLS_SHUT_WR);
			gnutls_deinit(c[i].s);
		}
		close(c[i].fd);
	}
	long expected = (long)conns * queries;
	printf("connections %d opened %d resumed %d queries %ld answers %ld in_order %ld noerror "
	       "%ld lost %ld\n",
	       conns, opened, resumed, expected, answers, in_order, noerror, lost);
	free(c);
	free(q);
	gnutls_free(ticket.data);
	gnutls_certificate_free_credentials(creds);
	return opened == conns && answers == expected && in_order == expected ? 0 : 1;
}
