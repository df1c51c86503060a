/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lookup-bench: the latency of a positive zone lookup, one waiting on the
 * other. Every node of the zone is looked up once per round in a shuffled
 * order, and the next lookup's name depends on what the answer read from
 * the last one (its flags and its A RRset's last octet), so the lookups
 * cannot overlap and each pays its dependent cache misses in full, as one
 * query's lookup does between the kernel's work on the next packets. The
 * names are hashed beforehand: the figure is memory latency, not SipHash.
 * Thread CPU time, so time spent descheduled on a busy machine is not in it.
 *
 * Usage: lookup-bench ZONEFILE ORIGIN ROUNDS
 *   prints the nanoseconds per lookup of each round
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "zone/load.h"
#include "zone/zone.h"

static void on_msg(void *arg, bool is_error, const char *text)
{
	(void)arg;
	if (is_error)
		fprintf(stderr, "lookup-bench: %s\n", text);
}

static double thread_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One round over the n names in order; returns what the answers read, so nothing is elided. */
__attribute__((noinline)) static unsigned lookup_round(const zone_t *z,
						       const uint8_t (*names)[NAME_MAXLEN],
						       const uint8_t *len, const uint64_t *hash,
						       size_t n)
{
	unsigned sum = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const znode_t *x = zone_lookup_hashed(z, names[k], len[k], hash[k]);
		unsigned v = x ? x->flags : 0;
		const zrrset_t *rs = x ? znode_rrset(x, DNS_TYPE_A) : NULL;
		if (rs)
			v += rs->set.data[rs->set.data_len - 1];
		sum += v;
		k = (i + 1 + (v >> 16)) % n; /* v < 2^16: the next name waits for this answer */
	}
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: lookup-bench ZONEFILE ORIGIN ROUNDS\n");
		return 2;
	}
	uint8_t origin[NAME_MAXLEN];
	zone_t *z = NULL;
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	if (name_from_text(argv[2], NULL, origin) < 0 ||
	    zone_load(argv[1], origin, &limits, on_msg, NULL, &z) != 0) {
		fprintf(stderr, "lookup-bench: %s does not load as %s\n", argv[1], argv[2]);
		return 1;
	}
	size_t n = z->node_count;
	uint8_t(*names)[NAME_MAXLEN] = malloc(n * NAME_MAXLEN);
	uint64_t *hash = malloc(n * sizeof(*hash));
	uint32_t *order = malloc(n * sizeof(*order));
	uint8_t *len = malloc(n);
	const znode_t **nodes = malloc(n * sizeof(*nodes));
	if (!names || !hash || !order || !len || !nodes) {
		fprintf(stderr, "lookup-bench: out of memory\n");
		return 1;
	}
	zone_iter_t it;
	size_t k = 0;
	for (const znode_t *x = zone_first(z, &it); x && k < n; x = zone_next(&it))
		nodes[k++] = x;
	/* a fixed shuffle, the same for every build */
	uint64_t seed = 7;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		size_t j = (size_t)(seed >> 33) % (i + 1);
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		const znode_t *x = nodes[order[i]];
		memcpy(names[i], znode_name(x), x->name_len);
		len[i] = x->name_len;
		hash[i] = name_hash(names[i], z->hash_key);
	}
	for (int r = 0; r < atoi(argv[3]); r++) {
		double t0 = thread_ns();
		unsigned sum = lookup_round(z, (const uint8_t(*)[NAME_MAXLEN])names, len, hash, n);
		printf("%.1f ns per lookup (%zu names, check %u)\n", (thread_ns() - t0) / (double)n,
		       n, sum);
	}
	free(names);
	free(hash);
	free(order);
	free(len);
	free(nodes);
	zone_free(z);
	return 0;
}
