/* SPDX-License-Identifier: GPL-3.0-or-later */
/* NOTIFY out (RFC 1996): telling secondaries of a new serial, with retries, on the main loop. */
#ifndef SHOAL_SERVER_EVENTS_NOTIFY_OUT_H
#define SHOAL_SERVER_EVENTS_NOTIFY_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "server/common/stats.h"
#include "server/conf/conf.h"
#include "server/events/state.h"
#include "zone/zonedb.h"

typedef struct notify_out notify_out_t;

/*
 * NOTIFY sends awaiting their answer at most, each on a UDP socket of its
 * own (server/events/requestor.h): the descriptors the budget sets aside
 * for NOTIFY out (server/daemon/fdbudget.c). More wait for one to end.
 */
#define NOTIFY_OUT_PARALLEL 32

/*
 * A notifier for cfg's zones (their notify lists and keys) served from
 * *zones, on loop, counting into *counters (the caller's, kept until
 * notify_out_free; the notifier is their one writer), keeping the serial
 * each zone's secondaries were last told of in st (NULL: nowhere; st must
 * outlive the notifier). Each send opens its own socket. Returns 0 and
 * *out or SHOAL_ENOMEM. Main thread.
 */
int notify_out_new(uv_loop_t *loop, const conf_t *cfg, zonedb_ref_t *zones, state_t *st,
		   stats_notify_out_t *counters, notify_out_t **out);

/*
 * A new set was published: NOTIFY the secondaries of every zone whose
 * serial differs from the one last seen. The first call compares with
 * the serials kept across restarts (a zone changed while shoald was down
 * is told); a zone with none kept is only recorded. Main thread.
 */
void notify_out_published(notify_out_t *n);

/*
 * NOTIFY the secondaries of zone i (its index in cfg) of the serial
 * served now, changed or not (shoalctl notify). Returns how many
 * secondaries were told, SHOAL_ENOTFOUND when nothing is served for the
 * zone. Main thread.
 */
int notify_out_zone(notify_out_t *n, size_t i);

/*
 * Use cfg's zones and notify lists from now on (a reconfig): the serials
 * seen carry over by zone name, a zone new to cfg is notified at the next
 * publication (as a changed serial), and NOTIFY not yet answered is
 * dropped (its retries named the old configuration's entries). Returns 0
 * or SHOAL_ENOMEM (nothing changed). Main thread.
 */
int notify_out_reconfig(notify_out_t *n, const conf_t *cfg);

/*
 * notify_out_reconfig for a cfg that is the configuration used with one
 * zone added (change ZONEDB_ADDED: cfg's last) or zone `removed` taken
 * out (ZONEDB_REMOVED), as zone-add and zone-remove make it: the serials
 * seen move with their zones without a name looked up, so it costs a copy
 * of them and the NOTIFY jobs in flight, not a lookup per zone. Main
 * thread.
 */
int notify_out_reconfig_one(notify_out_t *n, const conf_t *cfg, enum zonedb_change change,
			    size_t removed);

/* Close the sockets and timers, drop what is pending; then the loop frees them. Main thread. */
void notify_out_close(notify_out_t *n);

/* Free a closed notifier once the loop ran the close callbacks; NULL is fine. */
void notify_out_free(notify_out_t *n);

#endif
