/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * serial-watch: how long secondaries take from a NOTIFY to answering the
 * new serial (tests/bench/xfr.sh). It stands as one more secondary the
 * primary notifies: the arrival of that NOTIFY, over UDP or TCP (Knot
 * sends it over TCP), answered so the primary is content, starts the
 * clock; meanwhile it asks each secondary for the
 * zone's SOA every millisecond over UDP, and prints, per secondary, the
 * seconds from the NOTIFY to its first answer with the serial, or
 * "timeout".
 *
 *   serial-watch ZONE SERIAL NOTIFY_PORT SECONDS PORT...
 *
 * Exit 0 when every secondary answered the serial in time, 1 when one did
 * not, 2 on a usage error.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "proto/wire.h"

#define WATCH_MAX 8

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A socket of type on 127.0.0.1@port (0: any port); a TCP one listening. */
static int bound(int type, uint16_t port)
{
	int fd = socket(AF_INET, type | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && type == SOCK_STREAM)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd >= 0 && port &&
	    (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	     (type == SOCK_STREAM && listen(fd, 8) < 0))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A NOTIFY over TCP on the listening socket lfd: read, answered, closed. */
static bool tcp_notify(int lfd)
{
	int fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		return false;
	uint8_t buf[4096];
	size_t have = 0;
	struct pollfd p = { fd, POLLIN, 0 };
	while (poll(&p, 1, 1000) > 0) {
		ssize_t n = recv(fd, buf + have, sizeof(buf) - have, MSG_DONTWAIT);
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t len = have >= 2 ? (size_t)(buf[0] << 8 | buf[1]) : 0;
		if (have >= 2 && have >= len + 2 && len >= DNS_HEADER_SIZE) {
			buf[4] |= 0x80; /* QR, RFC 1996 4.7 */
			(void)send(fd, buf, len + 2, MSG_NOSIGNAL);
			close(fd);
			return true;
		}
	}
	close(fd);
	return false;
}

/* A query for zone's SOA with id, into buf; its length. */
static size_t soa_query(uint8_t *buf, size_t cap, const uint8_t *zone, uint16_t id)
{
	wire_t w;
	wire_init_write(&w, buf, cap);
	wire_write_u16(&w, id);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 0);
	wire_write_bytes(&w, zone, name_length(zone));
	wire_write_u16(&w, DNS_TYPE_SOA);
	wire_write_u16(&w, DNS_CLASS_IN);
	return w.pos;
}

/* The serial of the SOA answering `len` octets at pkt, or -1. */
static long answer_serial(const uint8_t *pkt, size_t len)
{
	wire_t w;
	wire_init_read(&w, pkt, len);
	wire_skip(&w, 6);
	uint16_t an = wire_read_u16(&w);
	wire_skip(&w, 4);
	uint8_t name[NAME_MAXLEN];
	name_unpack(&w, name, false); /* the question */
	wire_skip(&w, 4);
	if (an == 0 || w.err)
		return -1;
	name_unpack(&w, name, false);
	bool soa = wire_read_u16(&w) == DNS_TYPE_SOA;
	wire_skip(&w, 6);
	uint16_t rdlen = wire_read_u16(&w);
	size_t end = w.pos + rdlen;
	/* the serial is the first of the five numbers that end an SOA's RDATA */
	if (w.err || !soa || end > len || rdlen < 20)
		return -1;
	return (long)wire_get_u32(pkt + end - 20);
}

/* Answer the NOTIFY in buf (len octets) from `from`: the same message, QR set (RFC 1996 4.7). */
static void answer_notify(int fd, uint8_t *buf, size_t len, const struct sockaddr_in *from)
{
	if (len < DNS_HEADER_SIZE)
		return;
	buf[2] |= 0x80;
	(void)sendto(fd, buf, len, 0, (const struct sockaddr *)from, sizeof(*from));
}

int main(int argc, char **argv)
{
	if (argc < 6 || argc - 5 > WATCH_MAX) {
		fprintf(stderr, "usage: serial-watch ZONE SERIAL NOTIFY_PORT SECONDS PORT...\n");
		return 2;
	}
	uint8_t zone[NAME_MAXLEN];
	if (name_from_text(argv[1], NULL, zone) < 0)
		return 2;
	long serial = strtol(argv[2], NULL, 10);
	int nfd = bound(SOCK_DGRAM, (uint16_t)atoi(argv[3]));
	int tfd = bound(SOCK_STREAM, (uint16_t)atoi(argv[3]));
	int qfd = bound(SOCK_DGRAM, 0);
	double limit = atof(argv[4]);
	int count = argc - 5;
	struct sockaddr_in to[WATCH_MAX];
	double seen[WATCH_MAX] = { 0 };
	for (int i = 0; i < count; i++) {
		to[i] = (struct sockaddr_in){ .sin_family = AF_INET,
					      .sin_port = htons((uint16_t)atoi(argv[5 + i])) };
		to[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	if (nfd < 0 || tfd < 0 || qfd < 0) {
		fprintf(stderr, "serial-watch: no socket\n");
		return 2;
	}
	double start = now(), notified = 0, next = 0;
	int done = 0;
	while (done < count && now() - start < limit) {
		if (now() >= next) {
			for (int i = 0; i < count; i++) {
				uint8_t q[NAME_MAXLEN + 32];
				size_t len = soa_query(q, sizeof(q), zone, (uint16_t)i);
				if (!seen[i])
					(void)sendto(qfd, q, len, 0, (struct sockaddr *)&to[i],
						     sizeof(to[i]));
			}
			next = now() + 0.001;
		}
		struct pollfd p[3] = { { nfd, POLLIN, 0 }, { qfd, POLLIN, 0 }, { tfd, POLLIN, 0 } };
		if (poll(p, 3, 1) <= 0)
			continue;
		if ((p[2].revents & POLLIN) && tcp_notify(tfd) && !notified)
			notified = now();
		uint8_t buf[4096];
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(nfd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (len > 0) {
			if (!notified)
				notified = now();
			answer_notify(nfd, buf, (size_t)len, &from);
		}
		while ((len = recv(qfd, buf, sizeof(buf), 0)) > 0) {
			unsigned id = len >= 2 ? (unsigned)(buf[0] << 8 | buf[1]) : WATCH_MAX;
			if (id < (unsigned)count && !seen[id] && notified &&
			    answer_serial(buf, (size_t)len) == serial) {
				seen[id] = now();
				done++;
			}
		}
	}
	for (int i = 0; i < count; i++) {
		if (seen[i])
			printf("%s %.4f\n", argv[5 + i], seen[i] - notified);
		else
			printf("%s timeout\n", argv[5 + i]);
	}
	return done == count ? 0 : 1;
}
