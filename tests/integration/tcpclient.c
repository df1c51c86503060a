/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A small DNS-over-TCP client for the TCP integration tests: pipelining, many connections, idle. */
#include <errno.h>
#include <getopt.h>
#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/dnsquery.h"
#include "tests/tcpio.h"

#define NSID_MAX 64

static const char usage[] =
	"usage: tcpclient [options] ADDR PORT NAME [TYPE]\n"
	"Open connections to a DNS server over TCP, write the queries for NAME/TYPE on each\n"
	"at once (pipelined), read every answer and check IDs come back in order.\n"
	"  -c N   connections (default 1)\n"
	"  -n N   queries per connection, written in one write (default 1; 0 sends none)\n"
	"  -k N   open, write and read the connections in batches of N (default: all at once)\n"
	"  -b     write the queries one octet at a time\n"
	"  -N     ask for NSID and print how many answers each identity gave\n"
	"  -r F   create file F once every connection is open and its queries written\n"
	"  -l S   then keep the connections open S seconds before reading (default 0)\n"
	"  -i S   idle test: send nothing, report whether the server closes within S seconds\n"
	"  -w S   how long to wait for each answer (default 10)\n"
	"  -u Z   the first message is an UPDATE of zone Z adding NAME TXT \"pipelined\" (ID 1),\n"
	"         the -n queries follow it in the same write (IDs 2..)\n"
	"Prints one summary line; exits 0 when every query got an answer in order, else 1.\n";

typedef struct nsid_count {
	char id[128];
	unsigned count;
} nsid_count_t;

static nsid_count_t nsids[NSID_MAX];
static size_t n_nsids;

static void nsid_seen(const uint8_t *p, size_t len)
{
	char id[128];
	if (len >= sizeof(id))
		len = sizeof(id) - 1;
	memcpy(id, p, len);
	id[len] = 0;
	for (size_t i = 0; i < n_nsids; i++)
		if (strcmp(nsids[i].id, id) == 0) {
			nsids[i].count++;
			return;
		}
	if (n_nsids < NSID_MAX) {
		strcpy(nsids[n_nsids].id, id);
		nsids[n_nsids++].count = 1;
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A connection with a read deadline of wait_s; -1 when it fails. A bad address ends the run. */
static int connect_to(const char *addr, int port, int wait_s)
{
	int fd = tcpio_connect(addr, (uint16_t)port, wait_s);
	if (fd == -2) {
		fprintf(stderr, "tcpclient: bad address %s\n", addr);
		exit(2);
	}
	return fd;
}

/* Write the queries whole, or one octet at a time, 1 ms apart. */
static bool send_queries(int fd, const uint8_t *p, size_t len, bool bytewise)
{
	if (!bytewise)
		return tcpio_send_all(fd, p, len);
	for (size_t i = 0; i < len; i++) {
		if (!tcpio_send_all(fd, p + i, 1))
			return false;
		usleep(1000);
	}
	return true;
}

/* Read one answer; returns its parsed packet (caller frees) or NULL. */
static ldns_pkt *read_answer(int fd)
{
	static uint8_t msg[65535];
	ldns_pkt *pkt = NULL;
	ssize_t len = tcpio_recv_msg(fd, msg, sizeof(msg));
	if (len < 0 || ldns_wire2pkt(&pkt, msg, (size_t)len) != LDNS_STATUS_OK)
		return NULL;
	return pkt;
}

static void count_nsid(ldns_pkt *pkt)
{
	ldns_edns_option_list *opts = ldns_pkt_edns_get_option_list(pkt);
	for (size_t i = 0; opts && i < ldns_edns_option_list_get_count(opts); i++) {
		ldns_edns_option *o = ldns_edns_option_list_get_option(opts, i);
		if (ldns_edns_get_code(o) == LDNS_EDNS_NSID)
			nsid_seen(ldns_edns_get_data(o), ldns_edns_get_size(o));
	}
}

/* Idle test: connect, send nothing, wait for the server to close. */
static int idle_test(const char *addr, int port, int seconds)
{
	int fd = connect_to(addr, port, seconds);
	if (fd < 0) {
		perror("tcpclient: connect");
		return 1;
	}
	double t0 = now_ms();
	uint8_t b[512];
	ssize_t r = recv(fd, b, sizeof(b), 0);
	close(fd);
	if (r == 0 || (r < 0 && errno == ECONNRESET)) {
		printf("closed_after_ms %.0f\n", now_ms() - t0);
		return 0;
	}
	printf("still_open after %d s\n", seconds);
	return 1;
}

/* An UPDATE of zone (RFC 2136 2) adding name TXT "pipelined", framed, ID 1, into buf. */
static size_t update_build(uint8_t *buf, size_t cap, const char *zone, const char *name)
{
	char text[600];
	ldns_rr *rr = NULL;
	snprintf(text, sizeof(text), "%s 300 IN TXT \"pipelined\"", name);
	ldns_rdf *apex = ldns_dname_new_frm_str(zone);
	ldns_rr_list *add = ldns_rr_list_new();
	if (!apex || ldns_rr_new_frm_str(&rr, text, 0, NULL, NULL) != LDNS_STATUS_OK) {
		fprintf(stderr, "tcpclient: bad update %s in %s\n", name, zone);
		exit(2);
	}
	ldns_rr_list_push_rr(add, rr);
	ldns_pkt *pkt = ldns_update_pkt_new(apex, LDNS_RR_CLASS_IN, NULL, add, NULL);
	ldns_rr_list_deep_free(add); /* the packet holds a copy of the list */
	ldns_pkt_set_id(pkt, 1);
	return dnsquery_frame(buf, cap, pkt, "tcpclient");
}

int main(int argc, char **argv)
{
	int conns = 1, queries = 1, linger = 0, idle = 0, wait_s = 10, batch = 0;
	bool bytewise = false, nsid = false;
	const char *ready = NULL, *update = NULL;
	int opt;
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	while ((opt = getopt_long(argc, argv, "c:n:k:bNr:l:i:w:u:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			conns = atoi(optarg);
			break;
		case 'n':
			queries = atoi(optarg);
			break;
		case 'k':
			batch = atoi(optarg);
			break;
		case 'b':
			bytewise = true;
			break;
		case 'N':
			nsid = true;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'l':
			linger = atoi(optarg);
			break;
		case 'i':
			idle = atoi(optarg);
			break;
		case 'w':
			wait_s = atoi(optarg);
			break;
		case 'u':
			update = optarg;
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
	ldns_rr_type type =
		argc - optind > 3 ? ldns_get_rr_type_by_name(argv[optind + 3]) : LDNS_RR_TYPE_A;
	if (idle > 0)
		return idle_test(addr, port, idle);

	/* every connection sends the same queries, IDs 1..n */
	size_t qcap = (size_t)(queries + 1) * 600, qlen = 0;
	uint8_t *q = malloc(qcap);
	int first_id = 1;
	if (update) {
		qlen += update_build(q, qcap, update, name);
		first_id = 2;
	}
	for (int i = 0; i < queries; i++)
		qlen += dnsquery_build(q + qlen, qcap - qlen, name, type, (uint16_t)(i + first_id),
				       nsid, "tcpclient");
	if (update)
		queries++; /* its answer is read and checked as theirs */

	if (batch <= 0 || batch > conns)
		batch = conns;
	int *fds = calloc((size_t)batch, sizeof(int));
	int opened = 0;
	long answers = 0, in_order = 0, noerror = 0, lost = 0;
	for (int first = 0; first < conns; first += batch) {
		int nb = conns - first < batch ? conns - first : batch;
		for (int c = 0; c < nb; c++) {
			fds[c] = connect_to(addr, port, wait_s);
			if (fds[c] < 0)
				continue;
			opened++;
			if (qlen && !send_queries(fds[c], q, qlen, bytewise)) {
				close(fds[c]);
				fds[c] = -1;
			}
		}
		if (ready && first == 0) {
			FILE *f = fopen(ready, "w");
			if (f)
				fclose(f);
		}
		if (linger > 0 && first == 0)
			sleep((unsigned)linger);
		for (int c = 0; c < nb; c++) {
			int got = 0;
			for (int i = 0; fds[c] >= 0 && i < queries; i++) {
				ldns_pkt *pkt = read_answer(fds[c]);
				if (!pkt)
					break;
				got++;
				in_order += ldns_pkt_id(pkt) == i + 1 && ldns_pkt_qr(pkt);
				noerror += ldns_pkt_get_rcode(pkt) == LDNS_RCODE_NOERROR;
				if (nsid)
					count_nsid(pkt);
				ldns_pkt_free(pkt);
			}
			answers += got;
			lost += got < queries; /* a connection that did not get all its answers */
			if (fds[c] >= 0)
				close(fds[c]);
		}
	}
	long expected = (long)conns * queries;
	printf("connections %d opened %d queries %ld answers %ld in_order %ld noerror %ld lost %ld\n",
	       conns, opened, expected, answers, in_order, noerror, lost);
	for (size_t i = 0; i < n_nsids; i++)
		printf("nsid %s %u\n", nsids[i].id, nsids[i].count);
	free(fds);
	free(q);
	return opened == conns && answers == expected && in_order == expected ? 0 : 1;
}
