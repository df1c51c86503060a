/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The IXFR history of a zone: a bounded list of changesets under a mutex. */
#include "config.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "zone/journal.h"

struct journal {
	pthread_mutex_t lock;
	unsigned refs; /* atomic */
	size_t max_octets, octets;
	const changeset_t **sets; /* oldest first */
	size_t count, cap;
};

journal_t *journal_new(size_t max_octets)
{
	journal_t *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	if (pthread_mutex_init(&j->lock, NULL) != 0) {
		free(j);
		return NULL;
	}
	j->refs = 1;
	j->max_octets = max_octets;
	return j;
}

journal_t *journal_ref(journal_t *j)
{
	unsigned was = __atomic_fetch_add(&j->refs, 1, __ATOMIC_RELAXED);
	assert(was > 0); /* the caller holds one */
	(void)was;
	return j;
}

/* Drop the oldest n changesets. Lock held. */
static void drop_oldest(journal_t *j, size_t n)
{
	assert(n <= j->count);
	if (n == 0)
		return; /* sets may be NULL */
	for (size_t i = 0; i < n; i++) {
		assert(j->sets[i]->octets <= j->octets); /* octets is the sum of the sets' */
		j->octets -= j->sets[i]->octets;
		changeset_unref(j->sets[i]);
	}
	memmove(j->sets, j->sets + n, (j->count - n) * sizeof(*j->sets));
	j->count -= n;
}

/* The oldest go until the rest fit. Lock held. */
static void trim(journal_t *j)
{
	size_t n = 0, octets = j->octets;
	while (n < j->count && octets > j->max_octets)
		octets -= j->sets[n++]->octets;
	drop_oldest(j, n);
}

void journal_unref(journal_t *j)
{
	if (!j)
		return;
	unsigned was = __atomic_fetch_sub(&j->refs, 1, __ATOMIC_ACQ_REL);
	assert(was > 0); /* one more unref than refs: freed already */
	if (was != 1)
		return;
	drop_oldest(j, j->count);
	free(j->sets);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

void journal_set_max(journal_t *j, size_t max_octets)
{
	pthread_mutex_lock(&j->lock);
	j->max_octets = max_octets;
	trim(j);
	pthread_mutex_unlock(&j->lock);
}

void journal_add(journal_t *j, const changeset_t *cs)
{
	pthread_mutex_lock(&j->lock);
	if (j->count && j->sets[j->count - 1]->to != cs->from)
		drop_oldest(j, j->count);
	if (cs->octets > j->max_octets || j->count == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 8;
		const changeset_t **sets =
			cs->octets > j->max_octets ? NULL : realloc(j->sets, cap * sizeof(*sets));
		if (!sets) {
			/* too big to keep (or no memory): the history ends here */
			drop_oldest(j, j->count);
			pthread_mutex_unlock(&j->lock);
			changeset_unref(cs);
			return;
		}
		j->sets = sets;
		j->cap = cap;
	}
	j->sets[j->count++] = cs;
	j->octets += cs->octets;
	trim(j);
	pthread_mutex_unlock(&j->lock);
}

void journal_clear(journal_t *j)
{
	pthread_mutex_lock(&j->lock);
	drop_oldest(j, j->count);
	pthread_mutex_unlock(&j->lock);
}

void journal_get_info(journal_t *j, journal_info_t *info)
{
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&j->lock);
	info->depth = j->count;
	info->octets = j->octets;
	info->max_octets = j->max_octets;
	if (j->count) {
		info->oldest = j->sets[0]->from;
		info->newest = j->sets[j->count - 1]->to;
	}
	pthread_mutex_unlock(&j->lock);
}

int journal_changes(journal_t *j, uint32_t from, uint32_t to, bool condense, xfr_changes_t *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&j->lock);
	/*
	 * Serials may repeat in a long history (they wrap): the newest
	 * changeset leaving `from` is the one that leads to the present.
	 */
	size_t first = j->count, last = j->count;
	for (size_t i = j->count; i-- > 0;) {
		if (last == j->count && j->sets[i]->to == to)
			last = i;
		if (last != j->count && j->sets[i]->from == from) {
			first = i;
			break;
		}
	}
	int err = SHOAL_ENOTFOUND;
	if (first < j->count && from != to) {
		assert(first <= last && last < j->count); /* last was found first, walking back */
		out->count = last - first + 1;
		out->sets = malloc(out->count * sizeof(*out->sets));
		if (out->sets) {
			for (size_t i = 0; i < out->count; i++)
				out->sets[i] = changeset_ref(j->sets[first + i]);
			err = 0;
		} else {
			out->count = 0;
			err = SHOAL_ENOMEM;
		}
	}
	pthread_mutex_unlock(&j->lock);
	if (err == 0 && condense && out->count > 1) {
		changeset_t *one;
		err = changeset_condense(out->sets, out->count, &one);
		xfr_changes_clear(out);
		if (err == 0) {
			out->sets = malloc(sizeof(*out->sets));
			if (out->sets) {
				out->sets[0] = one;
				out->count = 1;
			} else {
				changeset_unref(one);
				err = SHOAL_ENOMEM;
			}
		}
	}
	return err;
}
