/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * answer-bench: answer_query over a query file with no network, the cost
 * of the answer path alone. Run under valgrind --tool=callgrind with
 * --toggle-collect=answer_rounds, its instruction count over the answers
 * is a figure that a busy machine does not move (tests/bench/answer_cost.sh).
 *
 * With -c KIB it measures what one answer costs on a cold CPU, as at a
 * moderate load where each query wakes the server and the kernel's work
 * since the last answer has evicted the caches: before each answer it
 * writes KIB kibibytes of another buffer and makes a system call, then
 * times the answer alone. It prints the median and mean in nanoseconds,
 * warm (answers back to back), cold, and cold without the system call:
 * where the kernel runs with page-table isolation and no PCID a system
 * call drops the TLB, and the difference is its page walks. Under
 * callgrind's cache simulation, --toggle-collect=answer_cold counts the
 * cache lines a cold answer misses (tests/bench/answer_cost.sh -c).
 *
 * Usage: answer-bench [-c KIB] ZONEFILE ORIGIN QUERYFILE ROUNDS [DO]
 *   QUERYFILE as shoal-flood -d reads it; every query with EDNS (1232), and
 *   with DO when a fifth argument is given.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "server/conf/acl.h"
#include "tools/flood/flood.h"
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

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One answer after the caches were evicted: what callgrind counts with -c (noinline: named). */
__attribute__((noinline)) static void answer_cold(const zonedb_t *db, const flood_query_t *q,
						  uint8_t *out, const answer_ctx_t *ctx)
{
	answer_info_t info;
	answer_query(db, q->pkt, q->len, out, 1232, ctx, &info);
}

/*
 * Each query of qs answered once and timed alone; when evict > 0, after
 * writing `evict` octets of another buffer and, with `syscall`, a system
 * call. Prints the median and mean under `label`. Returns 0, or -1 when
 * out of memory.
 */
static int answer_timed(const zonedb_t *db, const flood_queries_t *qs, const answer_ctx_t *ctx,
			size_t evict, bool syscall, const char *label)
{
	static uint8_t out[DNS_TCP_MAX];
	uint64_t *t = calloc(qs->count, sizeof(*t));
	uint8_t *junk = evict ? malloc(evict) : NULL;
	int rc = -1;
	if (!t || (evict && !junk))
		goto done;
	uint64_t sum = 0;
	for (size_t i = 0; i < qs->count; i++) {
		if (junk) {
			memset(junk, (int)i, evict);
			if (syscall)
				(void)getppid(); /* a kernel entry and exit, as each wake-up has */
		}
		uint64_t t0 = now_ns();
		if (junk && syscall) {
			answer_cold(db, &qs->q[i], out, ctx);
		} else {
			answer_info_t info;
			answer_query(db, qs->q[i].pkt, qs->q[i].len, out, 1232, ctx, &info);
		}
		t[i] = now_ns() - t0;
		sum += t[i];
	}
	qsort(t, qs->count, sizeof(*t), cmp_u64);
	printf("%s: median %" PRIu64 " ns, mean %.0f ns per answer\n", label, t[qs->count / 2],
	       (double)sum / (double)qs->count);
	rc = 0;
done:
	free(t);
	free(junk);
	return rc;
}

static const void *the_acl(const void *arg, size_t i)
{
	(void)i;
	return arg;
}

/*
 * allow-query as shoald sets it: acl (192.0.2.0/24 NOKEY, then 127.0.0.0/8
 * NOKEY) hung on the zone, the server's check in ctx, client as the client's
 * address. Returns 0 or -1.
 */
static int allow_query_setup(zonedb_t *db, acl_t *acl, answer_ctx_t *ctx, const uint8_t *client)
{
	static const char *const entries[] = { "192.0.2.0/24 NOKEY", "127.0.0.0/8 NOKEY" };
	for (size_t i = 0; i < 2; i++) {
		acl_entry_t e;
		char key[ACL_TEXT_MAX], err[ACL_TEXT_MAX + 128];
		if (acl_entry_parse(entries[i], ACL_MATCH, &e, key, sizeof(key), err, sizeof(err)) <
			    0 ||
		    acl_add(acl, &e) < 0)
			return -1;
	}
	ctx->allow = acl_allow_query;
	ctx->tsig_key = ACL_NOKEY;
	ctx->client_ip = client;
	ctx->client_ip_len = 4;
	return zonedb_set_policies(db, the_acl, acl) < 0 ? -1 : 0;
}

static void on_msg(void *arg, bool is_error, const char *text)
{
	(void)arg;
	(void)is_error;
	fprintf(stderr, "answer-bench: %s\n", text);
}

int main(int argc, char **argv)
{
	size_t evict = 0;
	bool allow = false;
	for (int opt; (opt = getopt(argc, argv, "ac:")) != -1;) {
		if (opt == 'a')
			allow = true;
		else if (opt == 'c')
			evict = (size_t)strtoul(optarg, NULL, 10) * 1024;
		else
			goto usage;
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc < 5) {
	usage:
		fprintf(stderr,
			"usage: answer-bench [-a] [-c KIB] ZONEFILE ORIGIN QUERYFILE ROUNDS [DO]\n");
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
	/* -a: the zone has allow-query with two entries, the client (127.0.0.1) in the second */
	acl_t acl = { 0 };
	static const uint8_t client[4] = { 127, 0, 0, 1 };
	if (allow && allow_query_setup(db, &acl, &ctx, client) < 0) {
		flood_queries_free(&qs);
		zonedb_free(db);
		return 1;
	}
	int rc = 0;
	if (evict) {
		/* only the cold run with the system call goes through answer_cold */
		if (answer_timed(db, &qs, &ctx, 0, false, "warm") < 0 ||
		    answer_timed(db, &qs, &ctx, evict, true, "cold") < 0 ||
		    answer_timed(db, &qs, &ctx, evict, false, "cold, no system call") < 0)
			rc = 1;
	} else {
		size_t octets = answer_rounds(db, &qs, rounds, &ctx);
		printf("answers %zu octets %zu\n", qs.count * rounds, octets);
	}
	flood_queries_free(&qs);
	zonedb_free(db);
	acl_clear(&acl);
	return rc;
}
