/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target: a zone built from fuzzed text, then fuzzed and derived queries answered from it. */
#include <ldns/ldns.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "proto/rdata.h"
#include "tests/fuzz/fuzz_answer_check.h"
#include "tests/fuzz/fuzz_file.h"
#include "zone/answer.h"
#include "zone/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NODES_ASKED 12 /* nodes of the zone asked about, each with its own types */
#define TYPES_ASKED 4  /* of each node's types */
#define QUERIES_MAX 64 /* fuzzed queries read from one input */

static const uint8_t origin[] = "\4fuzz\4test";

/* A broken promise of answer_query: say which, then crash (the finding). */
static void fail(const char *why, const answer_ctx_t *ctx, size_t n)
{
	fuzz_answer_fail("fuzz_zone_answer", why, ctx, n);
}

/*
 * Every record sent has RDATA of its type's layout (ldns reads an empty
 * RDATA of any type, so the check is ours: the one table of proto/rdata.h).
 */
static void check_records(const ldns_rr_list *list, const answer_ctx_t *ctx, size_t n)
{
	static ldns_buffer *buf;
	if (!buf && !(buf = ldns_buffer_new(1024)))
		abort();
	for (size_t i = 0; i < ldns_rr_list_rr_count(list); i++) {
		const ldns_rr *rr = ldns_rr_list_rr(list, i);
		ldns_buffer_clear(buf);
		if (ldns_rr_rdata2buffer_wire(buf, rr) != LDNS_STATUS_OK)
			abort();
		const char *why = NULL;
		if (rdata_walk((uint16_t)ldns_rr_get_type(rr), ldns_buffer_begin(buf),
			       ldns_buffer_position(buf), NULL, 0, &why) < 0) {
			fprintf(stderr, "fuzz_zone_answer: type %u: %s\n", ldns_rr_get_type(rr),
				why);
			fail("a record sent with RDATA that is not its type's", ctx, n);
		}
	}
}

/*
 * Answer one query into a buffer of exactly the transport's size (so ASan
 * sees any write past it): no longer than allowed, the query's ID and QR,
 * a message ldns reads, records whose RDATA fits their type, and over TCP
 * never TC with nothing in it.
 */
static void ask(const zonedb_t *db, const uint8_t *q, size_t qlen, const answer_ctx_t *ctx)
{
	static uint8_t *out_udp, *out_tcp;
	if (!out_udp) {
		out_udp = malloc(DNS_UDP_MIN);
		out_tcp = malloc(DNS_TCP_MAX);
		if (!out_udp || !out_tcp)
			abort();
	}
	size_t cap = ctx->tcp ? DNS_TCP_MAX : DNS_UDP_MIN;
	answer_info_t info;
	size_t n = answer_query(db, q, qlen, ctx->tcp ? out_tcp : out_udp, cap, ctx, &info);
	if (n == 0)
		return;
	ldns_pkt *p = fuzz_answer_parse("fuzz_zone_answer", q, qlen, ctx->tcp ? out_tcp : out_udp,
					n, cap, ctx, &info);
	/* over TCP, TC with nothing in it means a set that no message can carry */
	if (ctx->tcp && ldns_pkt_tc(p) && ldns_pkt_ancount(p) + ldns_pkt_nscount(p) == 0)
		fail("TC over TCP with no records", ctx, n);
	check_records(ldns_pkt_answer(p), ctx, n);
	check_records(ldns_pkt_authority(p), ctx, n);
	check_records(ldns_pkt_additional(p), ctx, n);
	ldns_pkt_free(p);
}

/* A query for name/qtype, with EDNS (and DO) when asked; its length. */
static size_t make_query(uint8_t *q, const uint8_t *name, uint16_t qtype, bool edns, bool dnssec)
{
	size_t len = name_length(name);
	memcpy(q, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", DNS_HEADER_SIZE);
	q[11] = edns;
	memcpy(q + DNS_HEADER_SIZE, name, len);
	uint8_t *p = q + DNS_HEADER_SIZE + len;
	*p++ = (uint8_t)(qtype >> 8);
	*p++ = (uint8_t)qtype;
	*p++ = 0;
	*p++ = DNS_CLASS_IN;
	if (edns) {
		static const uint8_t opt[] = { 0, 0, 41, 0x10, 0, 0, 0, 0x80, 0, 0, 0 };
		memcpy(p, opt, sizeof(opt));
		if (!dnssec)
			p[7] = 0;
		p += sizeof(opt);
	}
	return (size_t)(p - q);
}

/* name over UDP (512, no EDNS), UDP with EDNS and DO, and TCP with DO. */
static void ask_all_ways(const zonedb_t *db, const uint8_t *name, uint16_t qtype)
{
	static const answer_ctx_t udp = { .edns_size = DNS_UDP_MIN };
	static const answer_ctx_t tcp = { .edns_size = DNS_UDP_MIN, .tcp = true };
	uint8_t q[DNS_HEADER_SIZE + NAME_MAXLEN + 4 + 11];
	ask(db, q, make_query(q, name, qtype, false, false), &udp);
	ask(db, q, make_query(q, name, qtype, true, true), &udp);
	ask(db, q, make_query(q, name, qtype, true, true), &tcp);
}

/*
 * The queries the zone itself suggests: each of its first nodes with the
 * first types it holds and with A, ANY, RRSIG and DS, and a name below it
 * (for wildcards, cuts and DNAMEs).
 */
static void ask_zone(const zonedb_t *db, const zone_t *z)
{
	static const uint16_t extra[] = { DNS_TYPE_A, DNS_TYPE_ANY, DNS_TYPE_RRSIG, DNS_TYPE_DS };
	zone_iter_t it;
	size_t i = 0;
	for (const znode_t *n = zone_first(z, &it); n && i < NODES_ASKED; n = zone_next(&it), i++) {
		for (uint16_t k = 0; k < n->rrset_count && k < TYPES_ASKED; k++)
			ask_all_ways(db, znode_name(n), znode_rrsets(n)[k].set.type);
		for (size_t k = 0; k < sizeof(extra) / sizeof(extra[0]); k++)
			ask_all_ways(db, znode_name(n), extra[k]);
		uint8_t below[NAME_MAXLEN];
		if (n->name_len + 2 <= NAME_MAXLEN) {
			memcpy(below, "\1q", 2);
			memcpy(below + 2, znode_name(n), n->name_len);
			ask_all_ways(db, below, DNS_TYPE_A);
		}
	}
}

/*
 * The queries the fuzzer writes, after the zone text: each is a type (two
 * octets), a length octet and that many octets of a name in text, relative
 * to fuzz.test. (absolute with a final dot).
 */
static void ask_fuzzed(const zonedb_t *db, const uint8_t *p, size_t left)
{
	for (int count = 0; left >= 3 && count < QUERIES_MAX; count++) {
		uint16_t qtype = (uint16_t)(p[0] << 8 | p[1]);
		size_t len = p[2];
		p += 3;
		left -= 3;
		if (len > left)
			len = left;
		char text[256];
		memcpy(text, p, len);
		text[len] = '\0';
		p += len;
		left -= len;
		uint8_t name[NAME_MAXLEN];
		if (strlen(text) == len && name_from_text(text, origin, name) > 0)
			ask_all_ways(db, name, qtype);
	}
}

/*
 * One input: a master file for fuzz.test., then (after a NUL octet, when
 * there is one) fuzzed queries. The zone is built as shoald builds it; a
 * zone that does not load is fine (that is most inputs). One that loads
 * is asked the queries it suggests and the fuzzed ones, each over UDP
 * and TCP, with and without DNSSEC; every answer must be a well-formed
 * message within its transport's size.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t text_len = nul ? (size_t)(nul - data) : size;
	/* an $INCLUDE could name a device that never ends: not zone data to fuzz */
	for (size_t i = 0; i + 8 <= text_len; i++)
		if ((data[i] == '$') && strncasecmp((const char *)data + i, "$INCLUDE", 8) == 0)
			return 0;
	const char *path = fuzz_file_write("zone-answer.zone", data, text_len);
	zone_spec_t spec = { .name = "fuzz.test.", .file = path, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db = NULL;
	zone_load_set_threads(1, 0);
	int rc = zonedb_build(&spec, 1, NULL, NULL, NULL, NULL, &db);
	zone_load_set_threads(0, 0);
	if (rc == 0 && db) {
		const zone_t *z = zonedb_find(db, origin);
		if (!z)
			abort(); /* built without an error, so the zone is there */
		ask_zone(db, z);
		if (nul)
			ask_fuzzed(db, nul + 1, size - text_len - 1);
	}
	if (db)
		zonedb_free(db);
	return 0;
}
