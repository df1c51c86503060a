/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Secondary zones: transfers in from the primaries, on a thread of their own. */
#ifndef SHOAL_SERVER_EVENTS_SECONDARY_H
#define SHOAL_SERVER_EVENTS_SECONDARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/stats.h"
#include "server/conf/conf.h"
#include "server/events/reload.h"
#include "zone/zonedb.h"

typedef struct secondary secondary_t;

/*
 * The secondary zones of cfg (those with primaries; s keeps a copy of cfg,
 * so the caller may free it), served from *zones, published through r
 * (reload_replace_zone). published(arg) is called on
 * the secondary thread after each new version is published (NOTIFY out
 * follows); it must not block. The thread counts into *counters (the
 * caller's, kept until secondary_free; the thread is their one writer).
 * Returns 0 and *out (NULL when cfg has no secondary zone), or
 * SHOAL_ENOMEM. Main thread, before start.
 */
int secondary_new(const conf_t *cfg, zonedb_ref_t *zones, reload_t *r, void (*published)(void *arg),
		  void *arg, stats_xfr_in_t *counters, secondary_t **out);

/* Start the thread: each zone is checked with its primaries at once. Returns 0 or -errno. */
int secondary_start(secondary_t *s);

/*
 * Serve the secondary zones of cfg from now on (a copy of it is kept). A
 * zone that cfg keeps alike (conf_zone_same_transfer_in) keeps its
 * refresh, retry and expire timers, its version and its transfer in
 * flight; a zone added or changed is checked with its primaries at once;
 * the transfer of a zone changed or removed is given up. zone-status,
 * NOTIFY and refresh reach cfg's zones on return; the thread carries the
 * state over between two zones. Returns 0 or SHOAL_ENOMEM: nothing
 * changed, and as zones are named, not numbered, the table kept acts on
 * the zones it has only. Main thread, after start.
 */
int secondary_reconfig(secondary_t *s, const conf_t *cfg);

/*
 * Zones are named by their apex (wire form, any case), never by index:
 * the callers' configuration (a worker's set, control's) may be newer than
 * the one s follows, with other indexes, until secondary_reconfig.
 */

/*
 * A NOTIFY for the zone `apex` was let in: check the primaries soon.
 * Nothing when it is not a secondary of s: a zone a reconfig adds is
 * checked at once when applied. Any thread (a worker's): no lock, no
 * allocation. s may be NULL.
 */
void secondary_notify(secondary_t *s, const uint8_t *apex);

/*
 * Check the primaries of zone `apex` now (refresh), or transfer it whole
 * whatever its serial (retransfer). Returns 0, or SHOAL_ENOTFOUND when it
 * is not a secondary. Any thread.
 */
int secondary_refresh(secondary_t *s, const uint8_t *apex, bool retransfer);

/*
 * The transfer state of zone `apex` for zone-status (" source ...
 * last-refresh ... next-refresh ... expires ... last-error ..."), or ""
 * for a zone that is not a secondary. Any thread.
 */
void secondary_status(secondary_t *s, const uint8_t *apex, char *buf, size_t cap);

/*
 * Stop the thread (a transfer running is given up) and free s, once no
 * thread may call in any more (after a grace period). NULL is fine. Main
 * thread.
 */
void secondary_free(secondary_t *s);

#endif
