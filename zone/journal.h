/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The IXFR history of one zone: successive changesets, bounded in octets. */
#ifndef SHOAL_ZONE_JOURNAL_H
#define SHOAL_ZONE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/changeset.h"
#include "zone/load.h"

/*
 * A journal keeps the changesets between the versions of a zone, oldest
 * first, each one's `to` the next one's `from`, and drops the oldest when
 * they take more than its size (ixfr-journal-size): RFC 1995 5 lets a
 * server purge history at any time. It outlives the zone versions and the
 * zone sets: each set that serves the zone holds a reference (zonedb.c
 * carries it from one set to the next). Kept in memory, or in a file
 * when it has one (journal_set_file, zone/jfile.h): each change is
 * written and synced there before journal_add returns, that is before the
 * version it leads to is published, and read back at start
 * (journal_restore), so a restarted server still answers IXFR. A change
 * the file holds leaves memory, which keeps only where it lies there
 * (journal_changes reads it back): the history is then what the file
 * holds, within ixfr-journal-total too.
 *
 * Threads: a mutex guards the list, so the reload (or transfer) thread may
 * add while transfer threads read; readers get their own references to
 * the changesets they send, and send them without the lock. One thread at
 * a time changes a journal (the zone's reload or transfer): its file is
 * written under a lock of its own, which readers never take.
 */
typedef struct journal journal_t;

/*
 * The bound of every zone's journal file together (ixfr-journal-total):
 * max octets, used counted atomically by each journal with a file. A
 * change that would pass it drops the oldest changes of its own zone's
 * file first, never another zone's; when even the change alone does not
 * fit, the zone's file goes (its history on disk starts again later).
 * Zeroed but for max; outlives every journal that counts against it.
 */
typedef struct journal_budget {
	size_t max;
	size_t used; /* atomic */
} journal_budget_t;

/* A journal of at most max_octets (0: keeps nothing). One reference; NULL on ENOMEM. */
journal_t *journal_new(size_t max_octets);

/* Take a reference (a holder of one may); returns j. */
journal_t *journal_ref(journal_t *j);

/* Drop a reference; the last one frees the journal and its changesets. NULL is fine. */
void journal_unref(journal_t *j);

/*
 * Change the bound; the oldest changesets go until the rest fit (the
 * file shrinks at the next change, or goes when nothing is left).
 */
void journal_set_max(journal_t *j, size_t max_octets);

/*
 * Keep the history in the file at path too (copied), from the next
 * change on, counted against budget (NULL: no total bound). Once, before
 * any change; 0 or SHOAL_ENOMEM.
 */
int journal_set_file(journal_t *j, const char *path, journal_budget_t *budget);

/* Remove j's file and keep none from now on (its zone left the configuration). Any thread. */
void journal_drop_file(journal_t *j);

/* The file set by journal_set_file (kept after journal_drop_file), or NULL. */
const char *journal_file(const journal_t *j);

/* What journal_restore found in the file. */
typedef struct journal_restored {
	size_t found;    /* changesets read (whole, checked, following each other) */
	size_t cut;      /* octets of a torn or damaged tail cut off the file */
	uint32_t oldest; /* the serials they lead from and to, when found */
	uint32_t newest;
	/* changesets past the serial loaded (the zone saved is older): cut off, or kept (_ahead) */
	size_t ahead;
} journal_restored_t;

/*
 * At start: read j's file (journal_set_file) into j, whose history it
 * replaces, when a changeset in it leads to `serial` (the version just
 * loaded): normally the newest; those after it are cut off the file (a
 * secondary's zone saved before the change it wrote here). Returns 0
 * (read, or no file); 1 when the history leads elsewhere (the zone file
 * was edited while the server was down): the file is removed; a negative
 * error (the file is removed). r says what was found. The zone's loading
 * thread, before the version is published.
 */
int journal_restore(journal_t *j, uint32_t serial, journal_restored_t *r);

/*
 * As journal_restore, but the changesets past `serial` are kept, in the
 * file and in j (r->ahead says how many): a secondary's zone file written
 * after its journal (zonefile-sync) lags it after a crash, and the caller
 * applies them onto the version loaded (journal_changes from `serial` to
 * r->newest). A caller that cannot calls journal_restore again, which
 * cuts them. The zone's loading thread, before the version is published.
 */
int journal_restore_ahead(journal_t *j, uint32_t serial, journal_restored_t *r);

/*
 * Append cs (sealed), taking over the caller's reference. A changeset
 * that does not follow the last one (its `from` is not the last `to`)
 * starts the history again: what was before cannot lead to it. Then the
 * oldest go until the rest fit; a changeset bigger than the whole bound
 * is not kept at all (clients of older versions get an AXFR). With a
 * file, cs is written and synced there first. Returns 0, or the file's
 * error (the memory has cs all the same; the file is removed, so a
 * restart starts the history afresh): SHOAL_ESPACE when the budget has
 * no room for cs alone.
 */
int journal_add(journal_t *j, const changeset_t *cs);

/*
 * journal_add of sets[0..n) (sealed, each following the one before: an
 * IXFR's changesets), each given a reference of the journal's own; on
 * disk with one write and one sync for them all. Returns as journal_add.
 */
int journal_add_all(journal_t *j, const changeset_t *const *sets, size_t n);

/*
 * Say what journal_add's error err (0: nothing to say) means to an
 * operator, through msg: the file could not be written, or
 * ixfr-journal-total is reached. The caller of journal_add.
 */
void journal_report(const journal_t *j, int err, zone_msg_fn msg, void *msg_arg);

/* Forget every changeset (the history no longer leads to the zone served); the file goes. */
void journal_clear(journal_t *j);

/* What the journal holds, for zone-status. */
typedef struct journal_info {
	size_t depth; /* changesets */
	size_t octets;
	size_t max_octets;
	uint32_t oldest;    /* serial the history reaches back to (depth > 0) */
	uint32_t newest;    /* serial it leads up to */
	size_t file_octets; /* of its file (0: none) */
} journal_info_t;

void journal_get_info(journal_t *j, journal_info_t *info);

/*
 * The changes from serial `from` up to serial `to` (the version the caller
 * serves, which may be older than the newest changeset: a reload adds
 * before it publishes). With condense, several changesets come as one
 * (RFC 1995 6). Returns 0 and out (references the caller drops with
 * xfr_changes_clear); SHOAL_ENOTFOUND when the history does not lead from
 * `from` to `to` (the caller answers with the whole zone, RFC 1995 4);
 * SHOAL_EIO when the file holds one of them and it cannot be read back
 * whole (the caller says so, and answers with the whole zone); SHOAL_ENOMEM.
 * Reads the file (one pread a change) outside the journal's locks; waits
 * for the writer's lock only to read again after a read that failed (a
 * compaction may have just moved the records).
 */
int journal_changes(journal_t *j, uint32_t from, uint32_t to, bool condense, xfr_changes_t *out);

#endif
