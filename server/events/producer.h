/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalog zones this server produces (RFC 9432): each made from its members, before a load. */
#ifndef SHOAL_SERVER_EVENTS_PRODUCER_H
#define SHOAL_SERVER_EVENTS_PRODUCER_H

#include <stddef.h>
#include <time.h>

#include "server/conf/conf.h"
#include "server/events/reload.h"

/*
 * The catalogs this server makes, as made last: what a change of one
 * member starts from. Main thread.
 */
typedef struct producer producer_t;

/* An empty one (NULL when out of memory); producer_free frees it (NULL is fine). */
producer_t *producer_new(void);
void producer_free(producer_t *p);

/*
 * Every zone of cfg with catalog-role producer made from the zones that
 * name it in catalog-member-of (zone/catalog_gen.h): from what p holds of
 * it, or the first time from its file (the ids and serial a restart
 * keeps), the file written anew when its members changed (now: the time
 * a new serial starts from) and the change logged; p keeps it. The load
 * that follows reads the file as any primary's: a change becomes a
 * journalled changeset (IXFR) and a NOTIFY. O(zones + members log
 * members). Returns 0, or a negative error with err ("catalog NAME:
 * ..."). Main thread (or the one that loads zones at start), before the
 * load of cfg's zones.
 */
int producer_make(producer_t *p, const conf_t *cfg, time_t now, char *err, size_t errlen);

/*
 * After a zone-add (add) or zone-remove of zone `member` of `catalog` in
 * cfg (the configuration r serves now): the one member added to or taken
 * from the catalog p holds (catgen_change), its file written, and the
 * change applied to the version served by r (reload_apply: journalled,
 * published, NOTIFY after), done(arg, ...) called when that ends: the
 * cost of one member but for the file's write. Returns 1 when the
 * reload was started, 0 when there is nothing to change (the catalog
 * gone, the member listed already or not at all), or a negative error
 * with err. Main thread.
 */
int producer_follow(producer_t *p, reload_t *r, const conf_t *cfg, const char *catalog,
		    const char *member, bool add, reload_done_fn done, void *arg, char *err,
		    size_t errlen);

#endif
