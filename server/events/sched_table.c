/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scheduler's tables: secondary zones' entries by apex, a configuration's table of them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/name.h"
#include "server/events/internal.h"

/* A new entry for apex, on the list of every entry; NULL when out of memory. Main thread. */
sec_zone_t *sched_entry_new(sched_t *s, const uint8_t *apex)
{
	size_t len = name_length(apex);
	sec_zone_t *z = calloc(1, sizeof(*z) + len);
	if (!z)
		return NULL;
	z->apex_len = (uint8_t)len;
	memcpy(z->apex, apex, len);
	name_lower(z->apex);
	z->fresh = true;
	pthread_mutex_lock(&s->all_lock);
	z->next = s->all;
	if (s->all)
		s->all->prev = z;
	s->all = z;
	pthread_mutex_unlock(&s->all_lock);
	return z;
}

/* Free entry z, off the list. No thread may reach it any more. */
void sched_entry_free(sched_t *s, sec_zone_t *z)
{
	pthread_mutex_lock(&s->all_lock);
	if (z->prev)
		z->prev->next = z->next;
	else
		s->all = z->next;
	if (z->next)
		z->next->prev = z->prev;
	pthread_mutex_unlock(&s->all_lock);
	if (__atomic_load_n(&z->unsaved, __ATOMIC_ACQUIRE))
		stats_add_shared(&s->counters->unsaved, (uint64_t)-1); /* gone: no longer counted */
	free(z->source);
	free(z->last_error);
	free(z->save_error);
	free(z);
}

/* The place of apex's entry in t->zones, or -1. */
long sched_table_pos(const sched_t *s, const sec_table_t *t, const uint8_t *apex)
{
	if (!t || !t->cap)
		return -1;
	size_t i = (size_t)name_hash(apex, s->key) & (t->cap - 1);
	for (; t->slots[i]; i = (i + 1) & (t->cap - 1))
		if (name_equal(t->zones[t->slots[i] - 1]->apex, apex))
			return (long)t->slots[i] - 1;
	return -1;
}

/* The entry of apex in t, or NULL. */
sec_zone_t *sched_table_find(const sched_t *s, const sec_table_t *t, const uint8_t *apex)
{
	long k = sched_table_pos(s, t, apex);
	return k < 0 ? NULL : t->zones[k];
}

/* Free table t (not its entries). */
void sched_table_free(sec_table_t *t)
{
	if (!t)
		return;
	conf_clear(&t->cfg);
	free(t->zones);
	free(t->index);
	free(t->slots);
	free(t);
}

/*
 * Entries made fresh for t, or for the tables it skipped (t->skipped and
 * on), that keep is not to have: freed, each once. A table derived from
 * another carries the other's fresh entries on, so two tables of the
 * chain may hold one entry: all are listed before any is freed. NULL keep:
 * all of them.
 */
void sched_table_drop_fresh(sched_t *s, sec_table_t *t, const sec_table_t *keep)
{
	sec_zone_t *gone = NULL;
	for (; t; t = t->skipped)
		for (size_t k = 0; k < t->count; k++) {
			sec_zone_t *z = t->zones[k];
			if (z->fresh && !(keep && sched_table_find(s, keep, z->apex) == z)) {
				z->fresh = false; /* listed: the next table that holds it passes it
						     by */
				z->gone_next = gone;
				gone = z;
			}
		}
	while (gone) {
		sec_zone_t *next = gone->gone_next;
		sched_entry_free(s, gone);
		gone = next;
	}
}

/* Put entry z of cfg's zone i into t, found again by apex. */
static void table_add(sched_t *s, sec_table_t *t, sec_zone_t *z, size_t i)
{
	t->zones[t->count] = z;
	t->index[t->count++] = i;
	size_t at = (size_t)name_hash(z->apex, s->key) & (t->cap - 1);
	while (t->slots[at])
		at = (at + 1) & (t->cap - 1);
	t->slots[at] = t->count;
}

/*
 * The secondary zones of cfg with a copy of it: the entries of `from`
 * (the table shown) for the zones it has, new ones for the others. NULL
 * when out of memory (nothing made is left). Main thread.
 */
/* Zone i of cfg into t when it is a secondary: from's entry for it, or a fresh one. */
static bool table_put(sched_t *s, sec_table_t *t, const conf_t *cfg, size_t i,
		      const sec_table_t *from)
{
	uint8_t apex[NAME_MAXLEN];
	if (!conf_zone_is_secondary(cfg, i) ||
	    name_from_text(conf_zone_spec(cfg, i)->name, NULL, apex) < 0)
		return true;
	sec_zone_t *z = sched_table_find(s, from, apex);
	if (!z && !(z = sched_entry_new(s, apex)))
		return false;
	table_add(s, t, z, i);
	return true;
}

/*
 * t from `from`, cfg being from's configuration with one change: from's
 * entries at their indices (those past `removed` lowered, its own left
 * out), and a zone added looked at. False when out of memory.
 */
static bool table_derive(sched_t *s, sec_table_t *t, const conf_t *cfg, const sec_table_t *from,
			 enum zonedb_change change, size_t removed)
{
	t->removed = removed;
	for (size_t k = 0; k < from->count; k++) {
		size_t i = from->index[k];
		if (change == ZONEDB_REMOVED && i == removed) {
			t->gone = from->zones[k];
			continue;
		}
		table_add(s, t, from->zones[k], i - (change == ZONEDB_REMOVED && i > removed));
	}
	return change != ZONEDB_ADDED || table_put(s, t, cfg, cfg->zone_count - 1, from);
}

sec_table_t *sched_table_new(sched_t *s, const conf_t *cfg, const sec_table_t *from,
			     enum zonedb_change change, size_t removed)
{
	/* one change from the table shown, whose configuration it was made from */
	bool derived = from && change != ZONEDB_REBUILD &&
		       from->cfg.zone_count + (change == ZONEDB_ADDED) ==
			       cfg->zone_count + (change == ZONEDB_REMOVED);
	size_t n = derived ? from->count + 1 : conf_secondary_count(cfg), cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	sec_table_t *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cap = cap;
	t->zones = malloc((n ? n : 1) * sizeof(*t->zones));
	t->index = malloc((n ? n : 1) * sizeof(*t->index));
	t->slots = calloc(cap, sizeof(*t->slots));
	bool ok = t->zones && t->index && t->slots && conf_copy(&t->cfg, cfg) == 0;
	if (ok && derived) {
		t->base = from;
		t->change = change;
		ok = table_derive(s, t, cfg, from, change, removed);
	}
	for (size_t i = 0; ok && !derived && i < cfg->zone_count; i++)
		ok = table_put(s, t, cfg, i, from);
	if (!ok) {
		sched_table_drop_fresh(s, t, from);
		sched_table_free(
			t); /* a configuration not copied is zeroed: cleared all the same */
		return NULL;
	}
	return t;
}

/* The table t lost a user: freed when no refresh uses it and it is no longer worked on. */
void sched_table_unref(sec_table_t *t)
{
	if (--t->refs == 0)
		sched_table_free(t);
}
