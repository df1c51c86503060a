/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Changes applied to a version: the one way a zone's next version is made from the one served. */
#ifndef SHOAL_ZONE_APPLY_H
#define SHOAL_ZONE_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "zone/changeset.h"
#include "zone/load.h"
#include "zone/zone.h"

/* Who applies, and how it is told about what it applies. */
typedef struct zone_apply_opts {
	const char *label;           /* names the source in messages: "primary 192.0.2.1@53" */
	const zone_limits_t *limits; /* the zone's (NULL: the defaults) */
	zone_msg_fn msg;             /* errors and warnings, "LABEL: ZONE: text"; may be NULL */
	void *msg_arg;
	const bool *cancel; /* stop with SHOAL_ETIMEOUT once set (NULL: never) */
	/*
	 * When the changes cannot be applied in place (the denial of
	 * existence changes, an NSEC3 link no change names), return
	 * SHOAL_EUNSUPPORTED instead of building the version whole: a caller
	 * that has that version built already (a reload) uses it.
	 */
	bool no_rebuild;
	/*
	 * Called at most once, on the applying thread, when the changesets
	 * are read for the last time: their records are in the builder of
	 * the new nodes, not made yet, and nothing can send the change to a
	 * whole build (which reads them again): not in an NSEC3 zone, where
	 * a link no change names may, nor when they touch the apex's NSEC or
	 * NSEC3PARAM; otherwise never. The caller may free them then (those
	 * its journal will not keep), so the peak of a big change, which
	 * comes after, is lower by their size. zone_apply reads no changeset
	 * after it, whatever it returns. NULL: not told.
	 */
	void (*sets_read)(void *arg);
	void *sets_arg;
} zone_apply_opts_t;

/*
 * The version that follows base after the changesets sets[0..n), each
 * from the serial the one before ends at, the first from base's (RFC 1995
 * 4): what they delete must be there, what they add is checked as a load
 * checks a zone file (every record inside the zone, CNAME alone, the
 * per-name limits, RDATA of its type's layout). The new version is made
 * in time and memory that follow the size of the changes: it has a new
 * node for every name whose records or flags change and shares every
 * other node, tree node and hash page with base (copy on write), so base,
 * which is never written, goes on answering until the new version is
 * published. When that cannot be done in place (the NSEC or NSEC3
 * parameters change; half of the nodes base's build made are no longer
 * held) it is built whole, from base's records and the changes, unless
 * o->no_rebuild. Any thread but a worker (it allocates), base held by
 * the caller. Returns 0 and *out (one reference); SHOAL_EZONE (a check
 * failed: reported through o->msg), SHOAL_EINVAL (the changesets do not
 * start at base's serial or do not follow each other), SHOAL_ETIMEOUT,
 * SHOAL_EUNSUPPORTED (no_rebuild) or SHOAL_ENOMEM.
 */
int zone_apply(const zone_t *base, const changeset_t *const *sets, size_t n,
	       const zone_apply_opts_t *o, zone_t **out);

#endif
