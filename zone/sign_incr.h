/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A change to a signed version signed alone: the changeset that makes the next signed version. */
#ifndef SHOAL_ZONE_SIGN_INCR_H
#define SHOAL_ZONE_SIGN_INCR_H

#include "zone/changeset.h"
#include "zone/sign_key.h"
#include "zone/sign_zone.h"
#include "zone/zone.h"

/*
 * The changeset that takes served (a version signed by sign_zone, or by
 * an earlier sign_changes, with the same keys and denial) to the signed
 * version of cs's changes, so that zone_apply(served, {*out}) makes it:
 *
 * - cs's records, deleted and added as they are;
 * - served's SOA deleted and one added with the fields of cs's new SOA
 *   and o->serial (cs's own serials are not read), and its RRSIG;
 * - for every RRset cs changes at an authoritative name, its RRSIGs
 *   deleted and, if it remains, new ones made (at a delegation only the
 *   DS is signed, as sign_zone does);
 * - the chain repaired around the names cs touches: with NSEC a name
 *   that gets authoritative data gets its NSEC, one that loses it loses
 *   it, a name whose types change gets its bitmap redone, and the
 *   NSEC before each name that came or went points past it (RFC 4035
 *   2.3); with NSEC3 the same by hash, for the names and for the empty
 *   non-terminals they make or leave (RFC 5155 7.1), insecure delegations
 *   left out with opt-out; each NSEC or NSEC3 rewritten is signed anew.
 *
 * Nothing else is signed: the work follows the change, not the zone.
 * What is local: records of any type but those below added and deleted
 * at existing or new names, names and empty non-terminals made or
 * removed, wildcards, a DS added or removed at a delegation (with
 * opt-out the delegation joins or leaves the chain), glue (records below
 * a cut are passed on unsigned), a cut's NS changed, and a delegation
 * made or removed at a name with no other data and no name below it in
 * served. Not local, SHOAL_EUNSUPPORTED, for the caller to sign whole:
 * a delegation made or removed where names below it in served would
 * become occluded or visible, or where the name holds other types; a
 * DNAME added or deleted; the apex's NS; cs's SOA with another TTL or
 * MINIMUM (every NSEC's TTL follows them, RFC 9077 3); served not signed
 * with ks's keys (its DNSKEY RRset is not ks's, or not at o's TTL: a
 * rollover) or with other NSEC3 parameters or opt-out, or NSEC where o
 * asks for NSEC3 or the reverse.
 *
 * Returns 0 and *out (sealed, one reference), SHOAL_EINVAL (cs is not
 * sealed, served is not signed, ks cannot sign, o->serial is not newer than served's (RFC
 * 1982), or cs holds DNSSEC records: DNSKEY, RRSIG, NSEC, NSEC3,
 * NSEC3PARAM), SHOAL_EZONE (a record outside the zone),
 * SHOAL_EUNSUPPORTED, or a signing or changeset error. cs's deletions
 * are taken to be in served (zone_apply refuses the result otherwise).
 * Reads served and cs (held by the caller); any thread but a worker: it
 * allocates. The signatures are made as sign_zone makes them, in batches
 * over o->threads threads, added in order: the result does not depend
 * on the thread count.
 */
int sign_changes(const zone_t *served, const changeset_t *cs, const sign_keyset_t *ks,
		 const sign_zone_opts_t *o, changeset_t **out);

#endif
