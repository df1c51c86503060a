/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's IXFR journal on disk: an append-only file of checksummed changeset records. */
#ifndef SHOAL_ZONE_JFILE_H
#define SHOAL_ZONE_JFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/name.h"
#include "zone/changeset.h"

/*
 * One file per zone that has changed (a zone that never changes has
 * none), records appended oldest first, each one changeset:
 *
 *   "SJR1"  magic (4)
 *   LENGTH  of the body (4, network order)
 *   FROM    serial (4), TO serial (4)
 *   HASH    BLAKE2b-128 (libsodium crypto_generichash) of the 16 octets
 *           above and the body (16)
 *   BODY    the count of deleted records (4), of added ones (4), then
 *           each record (deleted first, each side's SOA first): owner
 *           (uncompressed wire), type, class, TTL, RDLENGTH, RDATA
 *
 * Each record follows the one before (its FROM is the other's TO). A
 * record is complete and checked before it counts: a write torn by a crash
 * leaves a tail that fails its length or its hash, and the reader keeps
 * what comes before it. Nothing is rewritten in place: compaction writes
 * the newest records to a temporary file and renames it over the old one.
 */

/* Octets a record of cs takes in the file. */
size_t jfile_record_size(const changeset_t *cs);

/*
 * Append sets[0..n) (sealed, each following the one before), one record
 * each, to the file at path (made 0600 if missing, its folder then
 * synced) with one write and one fdatasync: when this returns 0 they
 * survive a crash or a power cut. When the file then holds more than
 * max_octets, the oldest records go until it holds three quarters of it
 * (the newest stays, whatever its size; jfile_compact): a rewrite every
 * quarter of the bound, not every change. Returns 0 and the file's size
 * in *size, or a negative error (-errno; the file may then end in a torn
 * record, which the reader cuts off; *size as it was, or the size after
 * the append when the compaction failed). The one writer of the file.
 *
 * For the crash tests only: when the environment has
 * SHOAL_TEST_JOURNAL_EXIT=N, the process writes only the first N octets
 * of the records (all of them when N is larger), then ends with
 * _exit(75) before the sync, as a crash would leave it.
 */
int jfile_append(const char *path, const changeset_t *const *sets, size_t n, size_t max_octets,
		 size_t *size);

/*
 * Keep the newest records of the file at path that fit in max_octets
 * (at least the newest one), written to a temporary file beside it,
 * synced and renamed over it. Returns 0 (also when it fits already) and
 * the size kept in *size, or a negative error (the file is then as it
 * was).
 */
int jfile_compact(const char *path, size_t max_octets, size_t *size);

/*
 * The records of data[0..len), oldest first, as changesets (one
 * reference each) in out; *good is the octets of the records that are
 * whole and well formed and follow each other: reading stops at the first
 * that is not (torn, bad hash, bad record, a gap in the serials). Returns
 * 0 (even when *good < len) or SHOAL_ENOMEM. Pure: any thread.
 */
int jfile_parse(const uint8_t *data, size_t len, xfr_changes_t *out, size_t *good);

/*
 * Read the file at path (jfile_parse) and cut a bad tail off it, so the
 * next record appended follows the last good one: *cut gets the octets
 * dropped (0: none). Returns 0; -ENOENT when there is no file; another
 * negative error.
 */
int jfile_read(const char *path, xfr_changes_t *out, size_t *cut);

/* Where a record lies in a file, and the serials it must have. */
typedef struct jfile_span {
	size_t off, len;
	uint32_t from, to;
} jfile_span_t;

/*
 * The changeset of the record at span in the open file fd (one pread of
 * span->len octets: its size, as jfile_record_size gave it) into *out,
 * one reference. Returns 0; SHOAL_EIO when the file is short there or the
 * record is not whole, fails its hash or has other serials (the file
 * went bad, or moved); SHOAL_ENOMEM. Any thread.
 */
int jfile_read_span(int fd, const jfile_span_t *span, changeset_t **out);

/*
 * Cut the file at path after its first n records, sets[0..n) as
 * jfile_read gave them (a record's size is its changeset's, read back
 * or not), and sync it. Returns 0 or -errno.
 */
int jfile_keep(const char *path, const changeset_t *const *sets, size_t n);

/*
 * Remove the file at path; durable: and sync its folder, so a power cut
 * cannot bring it back (not for many files at once: a start's sweep
 * removes any that come back). 0 also when there was none, else -errno.
 */
int jfile_remove(const char *path, bool durable);

/*
 * The file name of apex's journal (lowercase wire) in dir:
 * "DIR/NAME.journal", NAME the apex's labels joined by dots, each octet
 * other than a letter, digit, '-' or '_' as %XX (the root: "DIR/.journal").
 * Returns 0, or SHOAL_ESPACE when it does not fit cap.
 */
int jfile_path(const char *dir, const uint8_t *apex, char *dst, size_t cap);

/*
 * The apex (wire, into apex) whose journal file is named `file` (a name
 * in the folder, as jfile_path makes it). Returns its length, or
 * SHOAL_ENAME for a name jfile_path does not make (a temporary file left
 * by a crash, anything else).
 */
int jfile_apex(const char *file, uint8_t apex[NAME_MAXLEN]);

#endif
