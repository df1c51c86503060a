/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What survives a restart (state-dir): each zone's refresh and expiry times, its last NOTIFY. */
#ifndef SHOAL_SERVER_EVENTS_STATE_H
#define SHOAL_SERVER_EVENTS_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/conf/conf.h"

/* The file in state-dir, and its first line (a format of another number is not read). */
#define STATE_FILE   "timers"
#define STATE_FORMAT "shoal-state 1"

/*
 * What is kept of one zone. Times are wall-clock seconds (time(2)): they
 * must mean the same after a restart, a reboot included.
 */
typedef struct state_zone {
	/* a secondary's timers (the scheduler's) */
	bool timers;        /* the three below are set */
	bool have;          /* a version was served: serial and expire_at are its */
	uint32_t serial;    /* the version the timers are for */
	int64_t refresh_at; /* when its primaries are asked next */
	int64_t expire_at;  /* when that version expires (RFC 1035 3.3.13), past or not */
	/* NOTIFY out's (a zone with a notify list) */
	bool notified_set;
	uint32_t notified; /* the serial its secondaries were last told of */
} state_zone_t;

typedef struct state state_t;

/*
 * The state kept in folder dir (read from dir/STATE_FILE when there is
 * one), or with dir NULL, a state that keeps nothing: state_get finds
 * nothing, state_save writes nothing. The folder is the caller's to check
 * (path_own_folder). A line that cannot be read is passed over and
 * counted in one warning; a file of another format is not read (warned).
 * Returns 0 and *out, or a negative error with err (SHOAL_ENOMEM; a file
 * there that cannot be opened: -errno). Main thread, at start.
 */
int state_open(const char *dir, state_t **out, char *err, size_t errlen);

/* Whether st keeps anything (a folder), and which; NULL when not. Any thread. */
const char *state_dir(const state_t *st);

/* What st holds of zone `apex` (wire, any case): true with *out, false when nothing. Any thread. */
bool state_get(state_t *st, const uint8_t *apex, state_zone_t *out);

/*
 * Keep the timers of zone apex (z's timers part; its notified part is
 * left as it was). Any thread; no effect when st keeps nothing.
 */
void state_set_timers(state_t *st, const uint8_t *apex, const state_zone_t *z);

/* Keep serial as the last one zone apex's secondaries were told of. Any thread. */
void state_set_notified(state_t *st, const uint8_t *apex, uint32_t serial);

/*
 * Forget the zones cfg does not have (a zone removed, then added back
 * later, starts afresh). O(zones). Any thread.
 */
void state_retain(state_t *st, const conf_t *cfg);

/*
 * Forget zone (its name as configured) alone, as state_retain does for a
 * configuration that no longer has it (zone-remove): O(1). Any thread.
 */
void state_forget(state_t *st, const char *zone);

/* Whether something changed since the last save. Any thread. */
bool state_dirty(state_t *st);

/*
 * Write what st holds to dir/STATE_FILE when it changed: a temporary file
 * beside it, fsync, rename over the old one, the folder synced, so a
 * crash leaves the old file or the new one whole. Returns 0 (saved, or
 * nothing to do), or a negative error with err (st stays dirty). Any
 * thread; writers wait only while the text is made, not for the disk.
 */
int state_save(state_t *st, char *err, size_t errlen);

/* Free st (nothing is saved). NULL is fine. */
void state_free(state_t *st);

#endif
