/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a compiled zone back to a master file, atomically, replaced only once it reads back. */
#ifndef SHOAL_ZONE_WRITE_H
#define SHOAL_ZONE_WRITE_H

#include "zone/load.h"
#include "zone/zone.h"

/*
 * Write every record of z to `path` in presentation format (RFC 1035 5,
 * one record a line with its full owner name, TTL and class, as
 * proto/rrtext.h writes it: RFC 3597's generic form where the readers
 * would not read a type's own form back the same): the SOA first, then the
 * rest in canonical order, after `comment` (may be NULL; each of its lines
 * becomes a ';' comment line).
 *
 * The file is written to a temporary file in the same folder, then read
 * back with zone_load (the reader this process loads zones with, so the
 * one that reads the file at the next start) within `limits` (the zone's,
 * as that start applies them; NULL: the defaults) and compared with z,
 * record for record; only a file that reads back as z is flushed to disk
 * (fsync) and renamed over path, then the folder is synced: a reader or a
 * crash sees the old file or the new one, never a part, and never one the
 * next start would refuse or read otherwise. The read-back is a load: it
 * takes the zone's memory again while it runs, and a few times as long as
 * the writing (1M records: 0.4 s written, 1.6 s read back and compared).
 *
 * An existing file keeps its permissions; a new one is made 0666 less the
 * process's umask, as any file the process creates (shoald.service sets
 * none: 0644 under systemd's default 0022).
 *
 * Returns 0; SHOAL_EZONE when the file does not read back as z (msg is
 * told why, once, as "PATH: ..."; the temporary file is removed, path is
 * untouched); -errno when a file operation fails (path is untouched and
 * no temporary file is left, except when only the last step, syncing the
 * folder, failed: the new file is in place then); or SHOAL_ENOMEM.
 * msg may be NULL. Reads z only: any thread that holds a reference (a
 * transfer thread after xfr_in_finish, or the reload thread); blocking
 * file I/O, never on a worker. Not while zone_load_set_reader runs.
 */
int zone_write(const zone_t *z, const char *path, const char *comment, const zone_limits_t *limits,
	       zone_msg_fn msg, void *msg_arg);

/*
 * Write every record of z to fd, the lines zone_write writes (the SOA
 * first, then canonical order) without a comment, read-back or sync: the
 * records served, for shoalctl zone-read. fd is the caller's. Returns 0,
 * -errno when a write fails, or SHOAL_ENOMEM. Reads z only: any thread
 * that holds a reference; blocking I/O, never on a worker.
 */
int zone_write_fd(const zone_t *z, int fd);

#endif
