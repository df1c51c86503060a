/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalog zones this server produces (RFC 9432): each made from its members, before a load. */
#ifndef SHOAL_SERVER_EVENTS_PRODUCER_H
#define SHOAL_SERVER_EVENTS_PRODUCER_H

#include <stddef.h>
#include <time.h>

#include "server/conf/conf.h"

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

#endif
