/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a compiled zone back to a master file, atomically. */
#ifndef SHOAL_ZONE_WRITE_H
#define SHOAL_ZONE_WRITE_H

#include "zone/zone.h"

/*
 * Write every record of z to `path` in presentation format (RFC 1035 5,
 * one record a line with its full owner name, TTL and class, as
 * proto/rrtext.h writes it: RFC 3597's generic form where the readers
 * would not read a type's own form back the same): the SOA first, then the
 * rest in canonical order, after `comment` (may be NULL; each of its lines
 * becomes a ';' comment line). The file is written to a temporary file in
 * the same folder, flushed to disk (fsync), and renamed over path, then
 * the folder is synced: a reader or a crash sees the old file or the new
 * one, never a part. An existing file's permissions are kept; a new one
 * gets 0644. Loading the file gives the same zone (the same records, the
 * same TTLs), with either reader.
 * Returns 0; -errno when a file operation fails (path is untouched and no
 * temporary file is left, except when only the last step, syncing the
 * folder, failed: the new file is in place then); or SHOAL_ENOMEM. Reads
 * z only: any thread that holds a reference (a transfer thread after
 * xfr_in_finish, or the reload thread); blocking file I/O, never on a
 * worker.
 */
int zone_write(const zone_t *z, const char *path, const char *comment);

#endif
