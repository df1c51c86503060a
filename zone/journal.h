/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The IXFR history of one zone: successive changesets, bounded in octets. */
#ifndef SHOAL_ZONE_JOURNAL_H
#define SHOAL_ZONE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/changeset.h"

/*
 * A journal keeps the changesets between the versions of a zone, oldest
 * first, each one's `to` the next one's `from`, and drops the oldest when
 * they take more than its size (ixfr-journal-size): RFC 1995 5 lets a
 * server purge history at any time. It outlives the zone versions and the
 * zone sets: each set that serves the zone holds a reference (zonedb.c
 * carries it from one set to the next). Kept in memory only: after a
 * restart IXFR answers start from the version loaded.
 *
 * Threads: a mutex guards the list, so the reload (or transfer) thread may
 * add while transfer threads read; readers get their own references to
 * the changesets they send, and send them without the lock.
 */
typedef struct journal journal_t;

/* A journal of at most max_octets (0: keeps nothing). One reference; NULL on ENOMEM. */
journal_t *journal_new(size_t max_octets);

/* Take a reference (a holder of one may); returns j. */
journal_t *journal_ref(journal_t *j);

/* Drop a reference; the last one frees the journal and its changesets. NULL is fine. */
void journal_unref(journal_t *j);

/* Change the bound; the oldest changesets go until the rest fit. */
void journal_set_max(journal_t *j, size_t max_octets);

/*
 * Append cs (sealed), taking over the caller's reference. A changeset
 * that does not follow the last one (its `from` is not the last `to`)
 * starts the history again: what was before cannot lead to it. Then the
 * oldest go until the rest fit; a changeset bigger than the whole bound
 * is not kept at all (clients of older versions get an AXFR).
 */
void journal_add(journal_t *j, const changeset_t *cs);

/* Forget every changeset (the history no longer leads to the zone served). */
void journal_clear(journal_t *j);

/* What the journal holds, for zone-status. */
typedef struct journal_info {
	size_t depth; /* changesets */
	size_t octets;
	size_t max_octets;
	uint32_t oldest; /* serial the history reaches back to (depth > 0) */
	uint32_t newest; /* serial it leads up to */
} journal_info_t;

void journal_get_info(journal_t *j, journal_info_t *info);

/*
 * The changes from serial `from` up to serial `to` (the version the caller
 * serves, which may be older than the newest changeset: a reload adds
 * before it publishes). With condense, several changesets come as one
 * (RFC 1995 6). Returns 0 and out (references the caller drops with
 * xfr_changes_clear); SHOAL_ENOTFOUND when the history does not lead from
 * `from` to `to` (the caller answers with the whole zone, RFC 1995 4);
 * SHOAL_ENOMEM.
 */
int journal_changes(journal_t *j, uint32_t from, uint32_t to, bool condense, xfr_changes_t *out);

#endif
