/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalog zones this server produces (RFC 9432): each made from its members, before a load. */
#ifndef SHOAL_SERVER_EVENTS_PRODUCER_H
#define SHOAL_SERVER_EVENTS_PRODUCER_H

#include <stddef.h>
#include <time.h>

#include "server/conf/conf.h"
#include "server/events/reload.h"

/*
 * Every zone of cfg with catalog-role producer made from the zones that
 * name it in catalog-member-of (zone/catalog_gen.h): the ids and serial
 * its file holds kept, the file written anew when its members changed
 * (now: the time a new serial starts from) and the change logged. The
 * load that follows reads the file as any primary's: a change becomes a
 * journalled changeset (IXFR) and a NOTIFY. O(zones + members log
 * members). Returns 0, or a negative error with err ("catalog NAME: ...");
 * a catalog left as it was. Main thread (or the one that loads zones at
 * start), before the load of cfg's zones.
 */
int producer_make(const conf_t *cfg, time_t now, char *err, size_t errlen);

/*
 * After a zone-add or zone-remove that changed the members of `catalog`
 * in cfg (the configuration r serves now): the catalog made again as
 * producer_make makes it and, when it changed, read again by r alone
 * (reload_start: its change journalled, NOTIFY after), done(arg, ...)
 * called when that ends. O(zones + members log members). Returns 1 when
 * the reload was started, 0 when the catalog did not change (or is no
 * longer a producer), or a negative error with err. Main thread.
 */
int producer_follow(reload_t *r, const conf_t *cfg, const char *catalog, reload_done_fn done,
		    void *arg, char *err, size_t errlen);

#endif
