/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for answer_query: any packet against a zone set with every answering rule. */
#include <ldns/ldns.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "tests/fuzz/fuzz_answer_check.h"
#include "zone/answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_msg(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	if (is_error)
		fprintf(stderr, "fuzz_answer: %s\n", msg);
}

/*
 * The zone set, loaded on the first call: tests/unit/zones/example.zone
 * (wildcards, CNAME chains and loops, DNAME, delegations with and without
 * glue, a DS at a cut, an $INCLUDE), its child sub.example.com served
 * beside it, tcp.test with an RRset too big for UDP, and the signed zones
 * of tests/diff/dnssec (NSEC, NSEC3 with opt-out, a signed child) for the
 * DNSSEC answers. The zone files are
 * found through $SHOAL_SRCDIR (make check and run.sh set it). A set that
 * does not load ends the program: fuzzing an empty set finds nothing.
 */
static const zonedb_t *fuzz_db(void)
{
	static zonedb_t *db;
	if (db != NULL)
		return db;
	const char *src = getenv("SHOAL_SRCDIR");
	if (src == NULL)
		src = ".";
	static char files[6][4096];
	snprintf(files[0], sizeof(files[0]), "%s/tests/unit/zones/example.zone", src);
	snprintf(files[1], sizeof(files[1]), "%s/tests/unit/zones/child.zone", src);
	snprintf(files[2], sizeof(files[2]), "%s/tests/integration/zones/tcp-big.zone", src);
	snprintf(files[3], sizeof(files[3]), "%s/tests/diff/dnssec/secure.test.zone", src);
	snprintf(files[4], sizeof(files[4]), "%s/tests/diff/dnssec/secure3.test.zone", src);
	snprintf(files[5], sizeof(files[5]), "%s/tests/diff/dnssec/signed.secure.test.zone", src);
	const zone_spec_t specs[] = {
		{ .name = "example.com.", .file = files[0], .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "sub.example.com.", .file = files[1], .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "tcp.test.", .file = files[2], .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "secure.test.", .file = files[3], .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "secure3.test.", .file = files[4], .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "signed.secure.test.", .file = files[5], .limits = ZONE_LIMITS_DEFAULT },
	};
	if (zonedb_build(specs, sizeof(specs) / sizeof(specs[0]), NULL, NULL, on_msg, NULL, &db) !=
	    0) {
		fprintf(stderr, "fuzz_answer: the zones under %s do not load (set SHOAL_SRCDIR)\n",
			src);
		exit(1);
	}
	return db;
}

/*
 * Answer the input with one transport setting into a buffer of exactly
 * `cap` octets (so ASan sees any write past it) and check the answer: no
 * longer than the transport allows, and when there is one, a message ldns
 * reads whose ID is the query's and whose QR bit is set.
 */
static void answer_once(const zonedb_t *db, const uint8_t *data, size_t size, uint8_t *out,
			size_t cap, const answer_ctx_t *ctx)
{
	answer_info_t info;
	size_t n = answer_query(db, data, size, out, cap, ctx, &info);
	if (n > 0)
		ldns_pkt_free(
			fuzz_answer_parse("fuzz_answer", data, size, out, n, cap, ctx, &info));
}

/*
 * One input is one query packet, answered three ways (UDP with the server
 * advertising 512 and 1232 octets, and TCP), and once without a zone set.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t nsid[] = "fuzz/0";
	static uint8_t *out_512, *out_1232, *out_tcp;
	/* CHAOS texts: the longest identity (one full character-string) */
	static uint8_t identity[UINT8_MAX];
	static const uint8_t version[] = "fuzz 1.0";
	if (out_512 == NULL) {
		memset(identity, 'i', sizeof(identity));
		out_512 = malloc(DNS_UDP_MIN);
		out_1232 = malloc(DNS_EDNS_DEFAULT);
		out_tcp = malloc(DNS_TCP_MAX);
		if (out_512 == NULL || out_1232 == NULL || out_tcp == NULL)
			abort();
	}
	const zonedb_t *db = fuzz_db();
	const answer_ctx_t udp_512 = { .edns_size = DNS_UDP_MIN,
				       .nsid = nsid,
				       .nsid_len = sizeof(nsid) - 1,
				       .identity = identity,
				       .identity_len = sizeof(identity) };
	const answer_ctx_t udp_1232 = { .edns_size = DNS_EDNS_DEFAULT };
	const answer_ctx_t tcp = { .edns_size = DNS_EDNS_DEFAULT,
				   .tcp = true,
				   .nsid = nsid,
				   .nsid_len = sizeof(nsid) - 1,
				   .identity = identity,
				   .identity_len = sizeof(identity),
				   .version = version,
				   .version_len = sizeof(version) - 1 };
	answer_once(db, data, size, out_512, DNS_UDP_MIN, &udp_512);
	answer_once(db, data, size, out_1232, DNS_EDNS_DEFAULT, &udp_1232);
	answer_once(db, data, size, out_tcp, DNS_TCP_MAX, &tcp);
	answer_once(NULL, data, size, out_1232, DNS_EDNS_DEFAULT, &udp_1232);
	return 0;
}
