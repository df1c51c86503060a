/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A secondary's dynamic updates forwarded to its primaries (RFC 2136 6), on the update thread. */
#ifndef SHOAL_SERVER_EVENTS_UPDATE_FORWARD_H
#define SHOAL_SERVER_EVENTS_UPDATE_FORWARD_H

#include <stdbool.h>
#include <stddef.h>

#include "server/conf/conf.h"
#include "server/events/update.h"

/* Where a batch's updates go: zone i's primaries (and their keys) as the configuration said. */
typedef struct forward_plan forward_plan_t;

/*
 * A new plan of zone i of cfg's primaries, those over TLS left out (the
 * update thread holds no TLS context), each with a copy of its key, so
 * the plan outlives cfg. NULL when out of memory. The update thread,
 * under the zone set's writer lock (cfg is the one published).
 */
forward_plan_t *forward_plan_new(const conf_t *cfg, size_t i);

/* Wipe the plan's keys and free it. NULL is fine. */
void forward_plan_free(forward_plan_t *p);

/*
 * Forward r to p's primaries in turn, as the client sent it but for its
 * TSIG RR and with an ID of its own (RFC 2136 6; the requestor's), signed
 * with the primary's key: the client was authenticated here (its TSIG,
 * allow-update), the primary authenticates this server, so it need not
 * know the clients' keys. A primary that does not answer is marked in p
 * and not asked again with p. Returns the first answer's rcode, or -1
 * with why[0..cap) saying why none came. stop(stop_arg) ends a wait
 * early (the server stops). The update thread, the writer's lock let go:
 * each primary may take FORWARD_TOTAL_MS.
 */
int forward_update(forward_plan_t *p, const update_req_t *r, bool (*stop)(void *), void *stop_arg,
		   char *why, size_t cap);

#endif
