/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The zone-event scheduler: secondary zones' refresh and expiry timers, and the transfer pool. */
#ifndef SHOAL_SERVER_EVENTS_SCHED_H
#define SHOAL_SERVER_EVENTS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "server/common/stats.h"
#include "server/common/tls.h"
#include "server/conf/conf.h"
#include "server/events/reload.h"
#include "server/events/state.h"
#include "zone/zonedb.h"

/*
 * Each secondary zone has its due times (the next refresh or retry, the
 * expiry of the version served); one thread, the scheduler, keeps them in
 * two heaps keyed by due time (O(log n) per event, nothing scanned per
 * tick), expires zones when due, and hands refreshes due to a pool of
 * transfers-in threads, at most serial-query-rate a second (BIND's
 * option: every refresh asks an SOA first). A refresh asks the SOA over
 * UDP, then transfers over TCP only when the primary's serial is newer
 * (or the UDP answer is truncated or does not come). NOTIFY in, shoalctl
 * refresh and retransfer, and reconfig only mark a zone due: a zone has
 * one refresh pending and one running at most. A new version's file is
 * written zonefile-sync after it, by one flush thread (server/events/
 * flush.c), never a transfer's. The timers are kept in
 * state-dir (server/events/state.h) and resumed at start.
 */
typedef struct sched sched_t;

/* What the scheduler works with, the caller's, kept until sched_free. */
typedef struct sched_env {
	zonedb_ref_t *zones; /* the set served */
	reload_t *reload;    /* where a zone is published (reload_replace_zone) */
	/* where the timers are resumed from and kept: NULL, or one that keeps nothing */
	state_t *state;
	/*
	 * Called on a pool thread after each new version is published (NOTIFY
	 * out follows); it must not block. NULL: nothing.
	 */
	void (*published)(void *arg);
	void *published_arg;
	stats_xfr_in_t *xfr_in; /* the groups it counts into */
	stats_sched_t *counters;
	/* refreshes at once at most: the configuration of the start's (the descriptor budget) */
	unsigned transfers_in;
	tls_ctx_t *tls; /* what sessions to TLS primaries start from; must outlive the scheduler */
} sched_env_t;

/*
 * Whether cfg has zones for the scheduler: secondaries, or zones that
 * sign (their re-sign events). A pass over the zones when none is a
 * secondary. Any thread that holds cfg.
 */
bool sched_wanted(const conf_t *cfg);

/*
 * The secondary zones of cfg (those with primaries; a copy of cfg is kept,
 * so the caller may free it) and its signing zones' re-sign events, with
 * env (copied). Returns 0 and *out (NULL when sched_wanted says cfg has
 * no zone for it), or SHOAL_ENOMEM. Main thread, before start.
 */
int sched_new(const conf_t *cfg, const sched_env_t *env, sched_t **out);

/*
 * Start the scheduler's thread, the sign thread (re-sign events, one batch
 * of a zone's signatures at a time) and min(transfers-in, zones) of the pool's;
 * the refreshes due at start are spread over a window that grows with
 * their number. s may be NULL. Returns 0 or -errno.
 */
int sched_start(sched_t *s);

/*
 * Serve the secondary zones of cfg from now on (a copy of it is kept). A
 * zone cfg keeps with the same data and primaries keeps its timers, its
 * version and its transfer in flight (other options, the timers' bounds
 * among them, apply from its next refresh); a zone added or whose
 * primaries changed is refreshed soon; the transfer of a zone changed or
 * removed is given up. NOTIFY, refresh and zone-status reach cfg's zones
 * on return; the scheduler takes the rest over between two events.
 * Returns 0 or SHOAL_ENOMEM: nothing changed. Main thread, after start.
 */
int sched_reconfig(sched_t *s, const conf_t *cfg);

/*
 * sched_reconfig for a cfg that is the one s follows with one zone added
 * (change ZONEDB_ADDED: the last) or zone `removed` taken out: the same,
 * at the cost of the secondary zones, not of every zone. Main thread.
 */
int sched_reconfig_one(sched_t *s, const conf_t *cfg, enum zonedb_change change, size_t removed);

/*
 * Zones are named by their apex (wire form, any case), never by index:
 * the callers' configuration (a worker's set, control's) may be newer
 * than the one s follows, with other indexes, until sched_reconfig.
 */

/*
 * A NOTIFY for the zone `apex` was let in (with the serial of its SOA when
 * has_serial): its refresh is due soon, at most once a second for
 * NOTIFYs, and not at all when the serial is not newer than the one
 * served by then. Returns true when this NOTIFY made the refresh due,
 * false when one was pending already (coalesced) or the zone is none of
 * s's (a zone a reconfig adds is checked when applied). Any thread (a
 * worker's): no lock, no allocation. s may be NULL.
 */
bool sched_notify(sched_t *s, const uint8_t *apex, bool has_serial, uint32_t serial);

/*
 * Refresh zone `apex` now (refresh), or transfer it whole whatever its
 * serial (retransfer). Returns 0, or SHOAL_ENOTFOUND when it is not a
 * secondary. Any thread.
 */
int sched_refresh(sched_t *s, const uint8_t *apex, bool retransfer);

/* A secondary zone's transfer state, for zone-status. Times: seconds since the epoch, 0: none. */
typedef struct sched_state {
	char source[160]; /* where the version served came from: "file", "primary ADDR", "none" */
	time_t last_refresh; /* the last refresh that succeeded */
	time_t last_failure; /* the last that failed */
	time_t next_refresh; /* when the primaries are asked next */
	time_t expires;      /* when the version served expires (RFC 1035 3.3.13); 0: none served */
	char last_error[256]; /* why the last refresh failed, or "" */
	char save_error[640]; /* why the last save to its file failed, or "" (unsaved) */
} sched_state_t;

/*
 * The transfer state of zone `apex` into *out: true, or false for a zone
 * that is not a secondary (s may be NULL). Any thread.
 */
bool sched_state(sched_t *s, const uint8_t *apex, sched_state_t *out);

/*
 * The gauges of every secondary zone (stats_secondaries_fn): `from` is the
 * address of a sched_t pointer, read at the call (NULL, or pointing to
 * NULL: no secondary zone), so the caller's follows a reconfig that starts
 * or stops the scheduler. Its next refresh, expiry, last refresh, last
 * failure and whether its file holds the version served, per zone in the
 * table shown. Main thread (the scheduler starts and stops there),
 * registered with RCU.
 */
void sched_secondaries(const void *from, stats_secondary_fn each, void *arg);

/*
 * Whether every secondary zone of cfg with a file can save its transfers
 * there: a temporary file is made and removed in each folder, with the
 * caller's effective ids (the service user's). Returns 0, or the first
 * failure (-errno: EACCES, EROFS, ENOENT...) with err naming the zone, the
 * folder and the cause. Main thread, at start and for --check.
 */
int sched_check_files(const conf_t *cfg, char *err, size_t errlen);

/*
 * When a zone's file is written next (ms): at `planned` when a write is
 * planned already (planned >= 0; changes meanwhile go with it), else
 * `sync` seconds (zonefile-sync) from now. Any thread.
 */
int64_t sched_flush_due(int64_t planned, int64_t now, uint32_t sync);

/*
 * Stop the threads (transfers running are given up) and free s, once no
 * thread may call in any more (after a grace period). The timers are in
 * the state given to sched_new, which the caller saves. NULL is fine.
 * Main thread.
 */
void sched_free(sched_t *s);

#endif
