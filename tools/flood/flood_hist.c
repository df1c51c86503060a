/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's latency histogram: log-linear buckets, fixed size, no allocation. */
#include "config.h"

#include "tools/flood/flood.h"

/*
 * Values below 2^SUB_BITS ns have a bucket each; above, every power of two
 * is split into 2^SUB_BITS equal buckets, so a bucket is at most ~3% wide
 * at any scale (the layout HdrHistogram made common). 64 powers cover any
 * uint64_t, so no value falls outside.
 */
#define SUB (1u << FLOOD_HIST_SUB_BITS)

unsigned flood_hist_bucket(uint64_t ns)
{
	if (ns < SUB)
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* ns >= SUB, so e >= SUB_BITS */
	unsigned m = (unsigned)(ns >> (e - FLOOD_HIST_SUB_BITS)) & (SUB - 1);
	return ((e - FLOOD_HIST_SUB_BITS + 1) << FLOOD_HIST_SUB_BITS) | m;
}

uint64_t flood_hist_value(unsigned b)
{
	if (b < SUB)
		return b;
	unsigned e = (b >> FLOOD_HIST_SUB_BITS) + FLOOD_HIST_SUB_BITS - 1;
	uint64_t m = b & (SUB - 1);
	uint64_t low = (SUB | m) << (e - FLOOD_HIST_SUB_BITS);
	uint64_t width = (uint64_t)1 << (e - FLOOD_HIST_SUB_BITS);
	return low + width / 2;
}

uint64_t flood_hist_quantile(const uint64_t *hist, double q)
{
	uint64_t total = 0;
	for (unsigned b = 0; b < FLOOD_HIST_BUCKETS; b++)
		total += hist[b];
	if (total == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* The smallest value with at least q of the samples at or below it. */
	uint64_t rank = (uint64_t)(q * (double)total + 0.999999);
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < FLOOD_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank)
			return flood_hist_value(b);
	}
	return 0; /* not reached: seen ends at total */
}
