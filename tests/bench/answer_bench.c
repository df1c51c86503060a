/*
 * answer-bench: answer_query over a query file with no network, the cost
 * of the answer path alone. Run under valgrind --tool=callgrind with
 * --toggle-collect=answer_rounds, its instruction count over the answers
 * is a figure that a busy machine does not move (tests/bench/answer_cost.sh).
 *
 * Usage: answer-bench ZONEFILE ORIGIN QUERYFILE ROUNDS [DO]
 *   QUERYFILE as shoal-flood -d reads it; every query with EDNS (1232), and
 *   with DO when a fifth argument is given.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "proto/dns.h"
#include "tools/flood.h"
#include "zone/answer.h"
#include "zone/load.h"
#include "zone/zonedb.h"

/* Every query of qs, rounds times: what callgrind counts (noinline: it is named). */
__attribute__((noinline)) static size_t answer_rounds(const zonedb_t *db, const flood_queries_t *qs,
						      unsigned rounds, const answer_ctx_t *ctx)
{
	static uint8_t out[DNS_TCP_MAX];
	size_t octets = 0;
	for (unsigned r = 0; r < rounds; r++) {
		for (size_t i = 0; i < qs->count; i++) {
			answer_info_t info;
			octets +=
				answer_query(db, qs->q[i].pkt, qs->q[i].len, out, 1232, ctx, &info);
		}
	}
	return octets;
}

static void on_msg(void *arg, bool is_error, const char *text)
{
	(void)arg;
	(void)is_error;
	fprintf(stderr, "answer-bench: %s\n", text);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: answer-bench ZONEFILE ORIGIN QUERYFILE ROUNDS [DO]\n");
		return 2;
	}
	zone_spec_t spec = { .name = argv[2], .file = argv[1], .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db = NULL;
	if (zonedb_build(&spec, 1, NULL, NULL, on_msg, NULL, &db) != 0) {
		fprintf(stderr, "answer-bench: %s does not load\n", argv[1]);
		zonedb_free(db);
		return 1;
	}
	flood_opts_t o = { .datafile = argv[3], .edns = 1232, .dnssec_ok = argc > 5 };
	flood_queries_t qs;
	if (flood_queries_load(&qs, &o) != 0) {
		zonedb_free(db);
		return 1;
	}
	unsigned rounds = (unsigned)atoi(argv[4]);
	answer_ctx_t ctx = { .edns_size = 1232 };
	size_t octets = answer_rounds(db, &qs, rounds, &ctx);
	printf("answers %zu octets %zu\n", qs.count * rounds, octets);
	flood_queries_free(&qs);
	zonedb_free(db);
	return 0;
}
