/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/query/transfer.c: transfer requests in, answers and streams out, no
 * sockets. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "proto/request.h"
#include "proto/tsig.h"
#include "proto/wire.h"
#include "server/conf/conf.h"
#include "server/query/transfer.h"
#include "tests/unit/conf_text.h"
#include "unit.h"

static char tmpdir[] = "/tmp/shoal-test-transfer.XXXXXX";
static conf_t cfg;
static zonedb_ref_t zones;
static xfr_stats_t stats;
static answer_ctx_t ctx_udp = { .edns_size = 1232 }, ctx_tcp = { .edns_size = 1232, .tcp = true };
static transfer_t xfr;

#define SECRET       "hVXazZpI2xIG1nyPHmlJNC8tV89c4sQXRlcOGNTYPG0="
#define WRONG_SECRET "Kp1o0bUJyDNBvgSdmqNTh5sNDcc2ENqF+5lgdIBOqlE="

/* NOTIFY messages handed on. */
static int notified;
static uint8_t notified_zone[NAME_MAXLEN];
static uint32_t notified_serial;
static bool notified_has_serial;

static bool on_notify(void *arg, unsigned worker, const uint8_t *apex, bool has_serial,
		      uint32_t serial, const struct sockaddr *peer)
{
	notified++;
	memcpy(notified_zone, apex, name_length(apex));
	notified_has_serial = has_serial;
	notified_serial = serial;
	return true;
}

/* Whether the last NOTIFY handed on named zone `text`. */
static bool notified_is(const char *text)
{
	uint8_t apex[NAME_MAXLEN];
	return name_from_text(text, NULL, apex) > 0 && name_equal(apex, notified_zone);
}

static const char *write_file(const char *name, const char *text)
{
	static char path[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	FILE *f = fopen(path[k], "w");
	if (!f) {
		perror(path[k]);
		exit(99);
	}
	fputs(text, f);
	fclose(f);
	return path[k];
}

static void quiet(void *arg, bool is_error, const char *msg)
{
	if (is_error)
		fprintf(stderr, "  %s\n", msg);
}

/* long.test: MNAME and RNAME of 253 octets, nothing to compress: an SOA too big for 512 */
static const char *long_soa_zone(void)
{
	char label[64], names[2][300], text[1024];
	label[63] = '\0';
	for (int i = 0; i < 2; i++) {
		memset(label, "ab"[i], 63);
		snprintf(names[i], sizeof(names[i]), "%s.%s.%s.%s.", label + 4, label, label,
			 label);
	}
	snprintf(text, sizeof(text),
		 "$ORIGIN long.test.\n$TTL 300\n@ SOA %s %s 10 3600 600 86400 60\n@ NS ns1\n"
		 "ns1 A 192.0.2.1\n",
		 names[0], names[1]);
	return write_file("long.zone", text);
}

/* The configuration, zones loaded and published, a transfer_t as a worker has it. */
static int setup(void)
{
	char zone[256], long_zone[256], served[256], text[2048], err[512];
	snprintf(zone, sizeof(zone), "%s",
		 write_file("x.zone", "$ORIGIN x.test.\n$TTL 300\n"
				      "@ SOA ns1 hm 10 3600 600 86400 60\n@ NS ns1\n"
				      "ns1 A 192.0.2.1\nwww A 192.0.2.2\nmail MX 10 www\n"));
	snprintf(long_zone, sizeof(long_zone), "%s", long_soa_zone());
	snprintf(served, sizeof(served), "%s",
		 write_file("served.zone", "$ORIGIN served.test.\n$TTL 300\n"
					   "@ SOA ns1 hm 10 3600 600 86400 60\n@ NS ns1\n"
					   "ns1 A 192.0.2.1\n"));
	snprintf(text, sizeof(text),
		 "transfers-out: 1\n"
		 "keys:\n  - name: k\n    algorithm: hmac-sha256\n    secret: \"" SECRET "\"\n"
		 "zones:\n"
		 "  - name: x.test\n    file: %s\n"
		 "    provide-xfr: [\"10.0.0.0/8 NOKEY\", \"192.0.2.0/24 k\"]\n"
		 "  - name: sec.test\n    primaries: [\"192.0.2.53@5300 NOKEY\"]\n"
		 "  - name: sec2.test\n    primaries: [\"192.0.2.53 NOKEY\"]\n"
		 "    allow-notify: [\"198.51.100.0/24 k\"]\n"
		 "  - name: long.test\n    file: %s\n    provide-xfr: [\"10.0.0.0/8 NOKEY\"]\n"
		 "  - name: served.test\n    file: %s\n    primaries: [\"192.0.2.53 NOKEY\"]\n",
		 zone, long_zone, served);
	conf_init(&cfg);
	if (conf_load_file(&cfg, write_file("t.conf", text), err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	zonedb_t *db = NULL;
	if (unit_conf_build(&cfg, NULL, quiet, &db) < 0)
		return -1;
	zonedb_publish(&zones, db);
	transfer_init(&xfr, &cfg, &zones, &stats, 0, &ctx_udp, &ctx_tcp, on_notify, NULL);
	return 0;
}

static struct sockaddr_storage peer(const char *addr)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	in->sin_family = AF_INET;
	in->sin_port = htons(40000);
	inet_pton(AF_INET, addr, &in->sin_addr);
	return ss;
}

#define SA(ss) ((const struct sockaddr *)&(ss))

/* An SOA record of serial (after its owner), for IXFR and NOTIFY requests. */
static const uint8_t *soa_of(uint32_t serial)
{
	static uint8_t rec[64];
	static const uint8_t names[] = { 3, 'n', 's', '1', 0, 2, 'h', 'm', 0 };
	wire_t w;
	wire_init_write(&w, rec, sizeof(rec));
	wire_write_u16(&w, DNS_TYPE_SOA);
	wire_write_u16(&w, DNS_CLASS_IN);
	wire_write_u32(&w, 300);
	wire_write_u16(&w, sizeof(names) + 20);
	wire_write_bytes(&w, names, sizeof(names));
	wire_write_u32(&w, serial);
	for (int i = 0; i < 4; i++)
		wire_write_u32(&w, 60);
	return rec;
}

/* A request for zone (text) of qtype, ID 77, with the SOA of serial (IXFR, NOTIFY). */
static size_t request(uint8_t *buf, const char *zone, uint16_t qtype, enum dns_opcode op,
		      uint32_t serial)
{
	uint8_t apex[NAME_MAXLEN];
	CU_ASSERT_FATAL(name_from_text(zone, NULL, apex) > 0);
	bool soa = qtype == DNS_TYPE_IXFR || op == DNS_OPCODE_NOTIFY;
	int n = request_write(buf, 512, 77, op, op == DNS_OPCODE_NOTIFY ? DNS_FLAG_AA : 0, apex,
			      qtype,
			      op == DNS_OPCODE_NOTIFY ? DNS_SECTION_ANSWER : DNS_SECTION_AUTHORITY,
			      soa ? soa_of(serial) : NULL);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static uint16_t rcode_of(const uint8_t *m)
{
	return m[3] & DNS_RCODE_MASK;
}

static uint16_t count_of(const uint8_t *m, int section)
{
	return wire_get_u16(m + 4 + 2 * section);
}

static int tcp(const char *from, const uint8_t *q, size_t len, uint8_t *out, tcp_stream_t **s)
{
	struct sockaddr_storage p = peer(from);
	acl_client_t client = { .addr = SA(p) };
	*s = NULL;
	return transfer_tcp(&xfr, &client, q, len, out, DNS_TCP_MAX, s);
}

/* Pull every message of a stream; the records of them all. */
static int drain(tcp_stream_t *s, tsig_ctx_t *verify)
{
	static uint8_t m[DNS_TCP_MAX];
	int records = 0, n;
	while ((n = s->next(s, m, sizeof(m))) > 0) {
		CU_ASSERT_EQUAL(rcode_of(m), DNS_RCODE_NOERROR);
		CU_ASSERT_TRUE(m[2] & (DNS_FLAG_AA >> 8));
		records += count_of(m, 1);
		if (verify)
			CU_ASSERT_EQUAL(tsig_verify(verify, m, (size_t)n, NULL, time(NULL)), 0);
	}
	CU_ASSERT_EQUAL(n, 0);
	s->end(s, true);
	return records;
}

static void test_axfr_and_refusals(void)
{
	static uint8_t q[512], out[DNS_TCP_MAX];
	tcp_stream_t *s;
	size_t len = request(q, "x.test.", DNS_TYPE_AXFR, DNS_OPCODE_QUERY, 0);
	memset(&stats, 0, sizeof(stats));
	CU_ASSERT_EQUAL(tcp("10.1.2.3", q, len, out, &s), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(xfr.active, 1);
	/* transfers-out 1: a second one meanwhile is SERVFAIL */
	tcp_stream_t *s2;
	int n = tcp("10.1.2.4", q, len, out, &s2);
	CU_ASSERT_TRUE(n > 0);
	CU_ASSERT_PTR_NULL(s2);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_SERVFAIL);
	/* SOA, NS, 3 records, SOA */
	CU_ASSERT_EQUAL(drain(s, NULL), 6);
	CU_ASSERT_EQUAL(xfr.active, 0);
	CU_ASSERT_EQUAL(stats.done, 1);
	CU_ASSERT_EQUAL(stats.axfr, 1);

	/* not in provide-xfr: REFUSED; unsigned from the keyed block too */
	n = tcp("172.16.0.1", q, len, out, &s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_REFUSED);
	CU_ASSERT_PTR_NULL(s);
	n = tcp("192.0.2.9", q, len, out, &s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_REFUSED);
	/* not an apex, and a zone not served: NOTAUTH */
	len = request(q, "www.x.test.", DNS_TYPE_AXFR, DNS_OPCODE_QUERY, 0);
	n = tcp("10.1.2.3", q, len, out, &s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOTAUTH);
	len = request(q, "example.org.", DNS_TYPE_AXFR, DNS_OPCODE_QUERY, 0);
	n = tcp("10.1.2.3", q, len, out, &s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOTAUTH);
	/* a zone with no provide-xfr: nobody */
	len = request(q, "sec.test.", DNS_TYPE_AXFR, DNS_OPCODE_QUERY, 0);
	n = tcp("10.1.2.3", q, len, out, &s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_REFUSED);
	/* an ordinary query is not ours */
	len = request(q, "www.x.test.", DNS_TYPE_A, DNS_OPCODE_QUERY, 0);
	CU_ASSERT_EQUAL(tcp("10.1.2.3", q, len, out, &s), TCP_SPECIAL_PASS);
	CU_ASSERT_EQUAL(stats.refused, 6); /* transfers-out's SERVFAIL too */
}

static void test_tsig(void)
{
	static uint8_t q[1024], out[DNS_TCP_MAX];
	tsig_key_t key, wrong;
	CU_ASSERT_EQUAL_FATAL(tsig_key_init(&key, "k", "hmac-sha256", SECRET), 0);
	CU_ASSERT_EQUAL_FATAL(tsig_key_init(&wrong, "k", "hmac-sha256", WRONG_SECRET), 0);
	tsig_ctx_t c;
	tsig_init(&c, &key, TSIG_FUDGE_DEFAULT);
	size_t len = request(q, "x.test.", DNS_TYPE_AXFR, DNS_OPCODE_QUERY, 0);
	int n = tsig_sign(&c, q, len, sizeof(q), time(NULL));
	CU_ASSERT_FATAL(n > 0);
	tcp_stream_t *s;
	CU_ASSERT_EQUAL(tcp("192.0.2.9", q, (size_t)n, out, &s), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(drain(s, &c), 6); /* every message verifies */
	CU_ASSERT_EQUAL(tsig_verify_end(&c), 0);

	/* the wrong secret: NOTAUTH, BADSIG, from any address */
	tsig_init(&c, &wrong, TSIG_FUDGE_DEFAULT);
	len = request(q, "x.test.", DNS_TYPE_AXFR, DNS_OPCODE_QUERY, 0); /* ARCOUNT 0 again */
	n = tsig_sign(&c, q, len, sizeof(q), time(NULL));
	n = tcp("192.0.2.9", q, (size_t)n, out, &s);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOTAUTH);
	CU_ASSERT_EQUAL(tsig_verify(&c, out, (size_t)n, NULL, time(NULL)), SHOAL_ETSIG);
	CU_ASSERT_EQUAL(c.error, DNS_TSIG_BADSIG);

	/* the right key from outside its block: REFUSED, signed */
	tsig_init(&c, &key, TSIG_FUDGE_DEFAULT);
	len = request(q, "x.test.", DNS_TYPE_AXFR, DNS_OPCODE_QUERY, 0);
	n = tsig_sign(&c, q, len, sizeof(q), time(NULL));
	n = tcp("10.1.2.3", q, (size_t)n, out, &s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_REFUSED);
	CU_ASSERT_EQUAL(tsig_verify(&c, out, (size_t)n, NULL, time(NULL)), 0);

	/* an ordinary signed query: the usual answer, signed (over UDP) */
	tsig_init(&c, &key, TSIG_FUDGE_DEFAULT);
	len = request(q, "www.x.test.", DNS_TYPE_A, DNS_OPCODE_QUERY, 0);
	n = tsig_sign(&c, q, len, sizeof(q), time(NULL));
	struct sockaddr_storage p = peer("203.0.113.1");
	answer_info_t info = { .tsig = true };
	size_t m = transfer_udp(&xfr, zonedb_current(&zones), SA(p), q, (size_t)n, out, 1232, 0,
				&info);
	CU_ASSERT_TRUE(m > 0);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(count_of(out, 1), 1);
	CU_ASSERT_EQUAL(tsig_verify(&c, out, m, NULL, time(NULL)), 0);
	tsig_key_clear(&key);
	tsig_key_clear(&wrong);
}

static void test_ixfr_udp(void)
{
	static uint8_t q[512], out[1232];
	struct sockaddr_storage p = peer("10.9.9.9");
	const zonedb_t *db = zonedb_current(&zones);
	answer_info_t info;
	struct {
		uint32_t serial;
		uint16_t answers;
		bool tc;
	} cases[] = {
		{ 10, 1, false }, /* up to date: the SOA (RFC 1995 2) */
		{ 11, 1, false }, /* from the future: our SOA */
		{ 9, 0, true },   /* older: TC, ask over TCP */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len =
			request(q, "x.test.", DNS_TYPE_IXFR, DNS_OPCODE_QUERY, cases[i].serial);
		size_t n = transfer_udp(&xfr, db, SA(p), q, len, out, sizeof(out), 0, &info);
		CU_ASSERT_TRUE(n > 0);
		CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOERROR);
		CU_ASSERT_EQUAL(count_of(out, 1), cases[i].answers);
		CU_ASSERT_EQUAL(!!(out[2] & (DNS_FLAG_TC >> 8)), cases[i].tc);
		CU_ASSERT_EQUAL(info.truncated, cases[i].tc);
	}
	/* up to date, but the SOA does not fit 512 octets: TC, ask over TCP */
	size_t len = request(q, "long.test.", DNS_TYPE_IXFR, DNS_OPCODE_QUERY, 10);
	size_t n = transfer_udp(&xfr, db, SA(p), q, len, out, 512, 0, &info);
	CU_ASSERT_TRUE(n > 0);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(count_of(out, 1), 0);
	CU_ASSERT_TRUE(info.truncated);
	/* IXFR without the client's SOA: FORMERR (RFC 1995 3) */
	len = request(q, "x.test.", DNS_TYPE_IXFR, DNS_OPCODE_QUERY, 0);
	q[9] = 0; /* NSCOUNT 0: the SOA is not counted */
	transfer_udp(&xfr, db, SA(p), q, len, out, sizeof(out), 0, &info);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_FORMERR);
	/* a query transfer_udp is not for: the answer given stays */
	len = request(q, "www.x.test.", DNS_TYPE_A, DNS_OPCODE_QUERY, 0);
	CU_ASSERT_EQUAL(transfer_udp(&xfr, db, SA(p), q, len, out, sizeof(out), 42, &info), 42);
}

/* A name of len octets in wire form (at most 255), labels of the letter c. */
static void long_name(wire_t *w, size_t len, uint8_t c)
{
	uint8_t label[64];
	memset(label, c, sizeof(label));
	for (size_t left = len - 1; left > 0;) {
		size_t l = left - 1 > 63 ? 63 : left - 1;
		if (left - l - 1 == 1)
			l--; /* a label takes two octets at least: leave none of one */
		wire_write_u8(w, (uint8_t)l);
		wire_write_bytes(w, label + 1, l);
		left -= l + 1;
	}
	wire_write_u8(w, 0);
}

/*
 * "x.test. SOA" without EDNS, signed with a key no one has whose key and
 * algorithm names are len octets each: its BADKEY answer echoes both.
 */
static size_t long_tsig_query(uint8_t *q, size_t cap, size_t len)
{
	size_t n = request(q, "x.test.", DNS_TYPE_SOA, DNS_OPCODE_QUERY, 0);
	wire_t w;
	wire_init_write(&w, q, cap);
	w.pos = n;
	long_name(&w, len, 'k');
	wire_write_u16(&w, DNS_TYPE_TSIG);
	wire_write_u16(&w, DNS_CLASS_ANY);
	wire_write_u32(&w, 0);
	size_t rdlen_at = w.pos;
	wire_write_u16(&w, 0);
	long_name(&w, len, 'a');
	wire_write_u16(&w, 0);
	wire_write_u32(&w, (uint32_t)time(NULL));
	wire_write_u16(&w, 300);
	wire_write_u16(&w, 32); /* MAC size, then the MAC */
	for (int i = 0; i < 32; i++)
		wire_write_u8(&w, 0x5a);
	wire_write_u16(&w, 77); /* Original ID, Error, Other Len */
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 0);
	wire_put_u16_at(&w, rdlen_at, (uint16_t)(w.pos - rdlen_at - 2));
	wire_put_u16_at(&w, 10, 1);
	CU_ASSERT_FATAL(!w.err);
	return w.pos;
}

/*
 * RFC 8945 5.3: an answer the TSIG RR does not fit in goes truncated, TC
 * set and NOERROR, for the client to ask again over TCP: a BADKEY answer
 * echoing key and algorithm names of 245 octets takes 542 octets, over
 * the 512 of UDP without EDNS. Over TCP the whole answer goes.
 */
static void test_tsig_answer_too_big(void)
{
	static uint8_t q[1024], out[DNS_TCP_MAX];
	struct sockaddr_storage p = peer("10.9.9.9");
	const zonedb_t *db = zonedb_current(&zones);
	answer_info_t info = { .tsig = true };
	/* names of 200 octets: the answer fits, NOTAUTH with the TSIG RR */
	size_t len = long_tsig_query(q, sizeof(q), 200);
	size_t n = transfer_udp(&xfr, db, SA(p), q, len, out, 1232, 0, &info);
	CU_ASSERT(n > 400 && n <= 512);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOTAUTH);
	CU_ASSERT_EQUAL(count_of(out, 3), 1);
	/* 245: truncated, the question alone: the TSIG RR does not fit either */
	len = long_tsig_query(q, sizeof(q), 245);
	n = transfer_udp(&xfr, db, SA(p), q, len, out, 1232, 0, &info);
	CU_ASSERT(n > 0 && n <= 512);
	CU_ASSERT_FALSE(info.dropped);
	CU_ASSERT_TRUE(info.truncated);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOERROR);
	CU_ASSERT_TRUE(out[2] & (DNS_FLAG_TC >> 8));
	CU_ASSERT_EQUAL(count_of(out, 0), 1);
	CU_ASSERT_EQUAL(count_of(out, 3), 0);
	tcp_stream_t *s;
	int m = tcp("10.9.9.9", q, len, out, &s);
	CU_ASSERT(m > 512);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOTAUTH);
	CU_ASSERT_EQUAL(count_of(out, 3), 1);
}

static void test_notify_in(void)
{
	static uint8_t q[512], out[1232];
	const zonedb_t *db = zonedb_current(&zones);
	answer_info_t info;
	struct sockaddr_storage primary = peer("192.0.2.53"), other = peer("192.0.2.54");
	notified = 0;
	size_t len = request(q, "sec.test.", DNS_TYPE_SOA, DNS_OPCODE_NOTIFY, 2026);
	size_t n = transfer_udp(&xfr, db, SA(primary), q, len, out, sizeof(out), 0, &info);
	CU_ASSERT_TRUE(n > 0);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL((out[2] >> 3) & 0xf, DNS_OPCODE_NOTIFY); /* RFC 1996 4.7 */
	CU_ASSERT_EQUAL(notified, 1);
	CU_ASSERT_TRUE(notified_is("sec.test"));
	CU_ASSERT_TRUE(notified_has_serial);
	CU_ASSERT_EQUAL(notified_serial, 2026);
	/* not a primary: REFUSED, nothing handed on */
	transfer_udp(&xfr, db, SA(other), q, len, out, sizeof(out), 0, &info);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_REFUSED);
	CU_ASSERT_EQUAL(notified, 1);
	/* a zone that is no secondary: NOTAUTH */
	len = request(q, "x.test.", DNS_TYPE_SOA, DNS_OPCODE_NOTIFY, 2026);
	transfer_udp(&xfr, db, SA(primary), q, len, out, sizeof(out), 0, &info);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOTAUTH);
	/* allow-notify replaces the primaries: only signed, from its block */
	len = request(q, "sec2.test.", DNS_TYPE_SOA, DNS_OPCODE_NOTIFY, 7);
	transfer_udp(&xfr, db, SA(primary), q, len, out, sizeof(out), 0, &info);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_REFUSED);
	tsig_key_t key;
	tsig_ctx_t c;
	tsig_key_init(&key, "k", "hmac-sha256", SECRET);
	tsig_init(&c, &key, TSIG_FUDGE_DEFAULT);
	int m = tsig_sign(&c, q, len, sizeof(q), time(NULL));
	struct sockaddr_storage allowed = peer("198.51.100.7");
	n = transfer_udp(&xfr, db, SA(allowed), q, (size_t)m, out, sizeof(out), 0, &info);
	CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOERROR);
	CU_ASSERT_EQUAL(tsig_verify(&c, out, n, NULL, time(NULL)), 0);
	CU_ASSERT_EQUAL(notified, 2);
	CU_ASSERT_TRUE(notified_is("sec2.test"));
	CU_ASSERT_EQUAL(stats.notify_in, 2);
	CU_ASSERT_EQUAL(stats.notify_refused, 3);
	tsig_key_clear(&key);
}

/*
 * A NOTIFY whose serial is not newer than the one served (RFC 1982) is
 * answered and asks for nothing (issue 30: each one made a transfer); a
 * newer one, or one without a serial, is handed on.
 */
static void test_notify_not_newer(void)
{
	static uint8_t q[512], out[1232];
	const zonedb_t *db = zonedb_current(&zones);
	answer_info_t info;
	struct sockaddr_storage primary = peer("192.0.2.53");
	notified = 0;
	uint64_t ignored = stats.notify_ignored;
	static const uint32_t serials[] = { 10, 9, 11 };
	for (size_t k = 0; k < 3; k++) {
		size_t len =
			request(q, "served.test.", DNS_TYPE_SOA, DNS_OPCODE_NOTIFY, serials[k]);
		transfer_udp(&xfr, db, SA(primary), q, len, out, sizeof(out), 0, &info);
		CU_ASSERT_EQUAL(rcode_of(out), DNS_RCODE_NOERROR);
	}
	CU_ASSERT_EQUAL(stats.notify_ignored, ignored + 2);
	CU_ASSERT_EQUAL(notified, 1);
	CU_ASSERT_EQUAL(notified_serial, 11);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(tmpdir))
		return 99;
	rcu_register_thread();
	int rc = 99;
	if (setup() == 0) {
		static const unit_test_t tests[] = {
			UNIT_TEST(test_axfr_and_refusals),
			UNIT_TEST(test_tsig),
			UNIT_TEST(test_ixfr_udp),
			UNIT_TEST(test_tsig_answer_too_big),
			UNIT_TEST(test_notify_in),
			UNIT_TEST(test_notify_not_newer),
			UNIT_END,
		};
		rc = unit_run(argc, argv, "transfer", tests);
	}
	zonedb_publish(&zones, NULL);
	conf_clear(&cfg);
	rcu_unregister_thread();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0 && rc == 0)
		rc = 99;
	return rc;
}
