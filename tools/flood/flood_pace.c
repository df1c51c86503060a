/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's pacing: when each sender thread's queries are due at -Q, evenly or at random. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tools/flood/flood.h"

/*
 * A fixed seed, not libsodium's randomness: a benchmark wants a repeatable
 * schedule, so two runs of the same command (and two servers measured in
 * turn) get the same gaps, and only the servers differ.
 */
#define PACE_SEED 0x73686f616c2d666cu /* "shoal-fl" */

/*
 * Random arrivals draw at most this many queries ahead of those sent, so a
 * call after a long stall stays short; the rest are due at once (wait 0)
 * and come on the following calls.
 */
#define PACE_AHEAD 65536

static const char *const arrivals_names[] = {
	[FLOOD_ARRIVALS_EVEN] = "even",
	[FLOOD_ARRIVALS_RANDOM] = "random",
};
#define ARRIVALS (sizeof(arrivals_names) / sizeof(arrivals_names[0]))

const char *flood_arrivals_name(flood_arrivals_t a)
{
	return (size_t)a < ARRIVALS ? arrivals_names[a] : "?";
}

int flood_arrivals_parse(const char *name)
{
	for (size_t i = 0; i < ARRIVALS; i++)
		if (strcmp(name, arrivals_names[i]) == 0)
			return (int)i;
	return -1;
}

/*
 * SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): one 64-bit word of state
 * and full-period, well-mixed output; small enough to live in the thread.
 */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void flood_pace_init(flood_thread_t *t)
{
	t->due = 0;
	t->next_due_ns = 0; /* the first query at the start, as with an even spacing */
	/* Each thread its own stream: seeds this close lie far apart in the
	 * generator's sequence, since its step is a large odd constant. */
	t->prng = PACE_SEED ^ t->index;
}

/*
 * The gap to the next query: exponential with mean 1/rate (inverse transform:
 * -ln U / rate for U uniform in (0, 1]), so the arrivals are a Poisson
 * process, as many independent clients make.
 */
static double exp_gap_ns(flood_thread_t *t)
{
	/* 53 random bits plus one: never 0, so the logarithm stays finite */
	double u = (double)((splitmix64(&t->prng) >> 11) + 1) * 0x1p-53;
	return -log(u) * 1e9 / t->rate;
}

static uint64_t random_budget(flood_thread_t *t, uint64_t sent, uint64_t now, uint64_t *wait_ns)
{
	double elapsed = (double)(now - t->start_ns);
	uint64_t ahead = t->count - sent > PACE_AHEAD ? sent + PACE_AHEAD : t->count;
	while (t->due < ahead && t->next_due_ns <= elapsed) {
		t->due++;
		t->next_due_ns += exp_gap_ns(t);
	}
	/* t->due <= t->count, so this is never more than what is left */
	uint64_t budget = t->due > sent ? t->due - sent : 0;
	if (t->due < t->count) {
		double until = t->next_due_ns - elapsed;
		uint64_t ns = until > 0 ? (uint64_t)ceil(until) : 0;
		if (ns < *wait_ns)
			*wait_ns = ns;
	}
	return budget;
}

uint64_t flood_budget(flood_thread_t *t, uint64_t sent, uint64_t now, uint64_t *wait_ns)
{
	uint64_t left = t->count - sent;
	if (t->rate <= 0)
		return left;
	if (t->arrivals == FLOOD_ARRIVALS_RANDOM)
		return random_budget(t, sent, now, wait_ns);
	/* Query k is due at start + k/rate: an even spacing, so the server sees a
	 * steady stream rather than a burst at each tick. */
	uint64_t due = (uint64_t)((double)(now - t->start_ns) * t->rate / 1e9) + 1;
	uint64_t budget = due > sent ? due - sent : 0;
	if (budget > left)
		budget = left;
	uint64_t next = t->start_ns + (uint64_t)((double)(sent + budget) * 1e9 / t->rate);
	uint64_t until = next > now ? next - now : 0;
	if (until < *wait_ns)
		*wait_ns = until;
	return budget;
}
