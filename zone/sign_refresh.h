/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Signatures refreshed in batches: the RRsets of a signed version whose RRSIGs expire soonest. */
#ifndef SHOAL_ZONE_SIGN_REFRESH_H
#define SHOAL_ZONE_SIGN_REFRESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/changeset.h"
#include "zone/sign_key.h"
#include "zone/sign_zone.h"
#include "zone/zone.h"

/*
 * The RRsets one batch signs anew at most: 2,000 RRsets are 2,000 to
 * 4,000 signatures (a ZSK each, a KSK for the apex's keys), a tenth to a
 * fifth of a second at the 24,000 P-256 signatures a second one core
 * makes, so a batch never holds the zone's writer for long.
 */
#define SIGN_REFRESH_BATCH 2000

/* What a batch did, and when the next is due. */
typedef struct sign_refresh_result {
	size_t resigned; /* RRsets signed anew (the SOA among them) */
	bool more;       /* RRsets due were left to the next batch by the cap */
	/*
	 * The earliest expiration (UNIX seconds) of the RRSIGs the batch
	 * leaves as they were, INT64_MAX when none: the next batch falls due
	 * rrsig-refresh before it (RFC 6781 4.4.2).
	 */
	int64_t next_expiry;
} sign_refresh_result_t;

/*
 * The changeset that signs anew the RRsets of served (a version sign_zone
 * or sign_changes made with ks's keys and o's denial) whose RRSIGs expire
 * before due_before (UNIX seconds; an RRset's earliest RRSIG counts), the
 * earliest first, at most cap of them (0: SIGN_REFRESH_BATCH): each one's
 * RRSIGs deleted and new ones made with o's times and jitter (by the KSKs
 * for the DNSKEY RRset and the apex's CDS and CDNSKEY, by the ZSKs for the
 * rest, as sign_zone signs them), and served's SOA moved to o->serial and
 * signed, so zone_apply(served, {*out}) makes the next version and the
 * journal and IXFR carry the new signatures alone. Nothing else changes:
 * no record, no chain.
 *
 * Returns 0 with *out (sealed, one reference) and *res; or 0 with *out
 * NULL when nothing is due (res->next_expiry says when something is);
 * SHOAL_EINVAL (served is not signed, ks cannot sign, o->serial is not
 * newer than served's, RFC 1982), SHOAL_EUNSUPPORTED (served's DNSKEY
 * RRset is not ks's, or its denial not o's: a rollover or a policy
 * changed, to be signed whole), or a signing or changeset error. Reads
 * served (held by the caller) whole once, so a batch costs a walk of the
 * zone and its signatures; any thread but a worker: it allocates.
 */
int sign_refresh(const zone_t *served, const sign_keyset_t *ks, const sign_zone_opts_t *o,
		 int64_t due_before, size_t cap, changeset_t **out, sign_refresh_result_t *res);

#endif
