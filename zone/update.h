/* SPDX-License-Identifier: GPL-3.0-or-later */
/* An UPDATE evaluated against a zone version: prerequisites, then one changeset (RFC 2136 3). */
#ifndef SHOAL_ZONE_UPDATE_H
#define SHOAL_ZONE_UPDATE_H

#include <stdint.h>
#include <time.h>

#include "proto/update.h"
#include "zone/changeset.h"
#include "zone/zone.h"

/* How an update that changes a zone sets its new SOA serial (`serial-policy`). */
enum zone_serial_policy {
	ZONE_SERIAL_INCREMENT = 0, /* the old serial plus one (RFC 2136 3.6) */
	ZONE_SERIAL_UNIXTIME,      /* the time in seconds since 1970, or plus one when not newer */
	ZONE_SERIAL_DATESERIAL,    /* YYYYMMDDnn of the UTC day, or plus one when not newer */
};

/*
 * The serial that follows `old` under policy p at time now: always newer
 * than old in RFC 1982's order. No state; any thread.
 */
uint32_t zone_serial_next(uint32_t old, enum zone_serial_policy p, time_t now);

/*
 * RFC 2136 3.2: the prerequisites of m (update_parse accepted it) against
 * version z, in order, the first false one deciding. Returns the rcode:
 * DNS_RCODE_NOERROR when all hold, else YXDOMAIN, YXRRSET, NXDOMAIN or
 * NXRRSET as 3.2.5 has them; a negative code (SHOAL_ENOMEM) when it
 * cannot tell. z held by the caller; any thread but a worker (allocates).
 */
int zone_update_prereq(const zone_t *z, const update_msg_t *m);

/*
 * RFC 2136 3.4.2: the update section of m made into one changeset from
 * z: each update applied in order to the records it names, with 3.4.2's
 * rules (the apex SOA and NS are never deleted whole, the last apex NS
 * never; an SOA only replaces one with an older serial; a CNAME is not
 * added beside other data nor other data beside a CNAME; deleting what
 * is not there and adding what is are no change, but for the TTL, which
 * an addition sets on its whole RRset, RFC 2181 5.2). The SOA serial is
 * the update's own when it sets a newer one, else zone_serial_next(p,
 * now) (3.6). Checks as a load makes them (limits, layouts) are
 * zone_apply's, on the changeset. Returns 0 and *out (sealed, one
 * reference), or NULL when the update changes nothing; SHOAL_ENOMEM.
 * z held by the caller; any thread but a worker.
 */
int zone_update_changes(const zone_t *z, const update_msg_t *m, enum zone_serial_policy p,
			time_t now, changeset_t **out);

#endif
