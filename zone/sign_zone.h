/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A whole zone signed with NSEC or NSEC3: the changeset that takes an unsigned version to its
 * signed one. */
#ifndef SHOAL_ZONE_SIGN_ZONE_H
#define SHOAL_ZONE_SIGN_ZONE_H

#include <stdbool.h>
#include <stdint.h>

#include "zone/changeset.h"
#include "zone/sign_key.h"
#include "zone/sign_rrset.h"
#include "zone/zone.h"

/* NSEC3's parameters (RFC 5155 4; RFC 9276 3.1: 0 iterations, no salt). */
typedef struct sign_nsec3 {
	uint16_t iterations;
	uint8_t salt_len;
	uint8_t salt[255];
	bool opt_out; /* RFC 5155 6: insecure delegations get no NSEC3 */
} sign_nsec3_t;

/*
 * The times of signatures made at now (UNIX seconds) to last lifetime:
 * inception an hour in the past, for validators whose clocks are behind
 * (RFC 6781 4.4.2.1), expiration now + lifetime (RFC 1982 arithmetic
 * past 2106).
 */
sign_times_t sign_times_at(int64_t now, uint32_t lifetime);

/* What a full signing needs beside the zone and its keys. */
typedef struct sign_zone_opts {
	sign_times_t times;        /* of every signature made, but for the jitter */
	uint32_t jitter;           /* each RRSIG expires up to this much earlier, at random */
	uint32_t serial;           /* the signed version's SOA serial (newer than z's, RFC 1982) */
	uint32_t dnskey_ttl;       /* of the DNSKEY RRset */
	const sign_nsec3_t *nsec3; /* NSEC3 with these parameters, or NULL: NSEC */
	unsigned threads; /* the signatures made on this many threads (0, 1: the caller's) */
	bool cds_cdnskey; /* publish each KSK's CDS and CDNSKEY at the apex (RFC 7344 4) */
} sign_zone_opts_t;

/*
 * The changeset from z (unsigned: no DNSKEY, no RRSIG, no NSEC or NSEC3)
 * to its signed version (RFC 4035 2): the SOA with o->serial; the DNSKEY
 * RRset of ks's keys at the apex, signed by each KSK; with o->cds_cdnskey
 * a CDS (SHA-256) and a CDNSKEY of each KSK there with the DNSKEY TTL,
 * signed by each KSK, in place of the zone's own; an RRSIG (each
 * expiring o->times.expiration less a random 0 to o->jitter seconds, so
 * their refreshes spread out) by each
 * ZSK on every authoritative RRset (not at or below a delegation but its
 * DS, not under a DNAME), by each KSK on the apex's CDS and CDNSKEY (RFC
 * 7344 4.1: a key of the parent's DS set signs them); an NSEC at every name with authoritative data
 * and at every delegation (RFC 4035 2.3), each to the next in canonical
 * order, the last to the apex, with the TTL min(SOA TTL, SOA MINIMUM)
 * (RFC 9077 3), and its RRSIG; or with o->nsec3 the NSEC3PARAM at the
 * apex and an NSEC3 for each of those names and each empty non-terminal
 * (RFC 5155 7.1) but, with opt-out, the insecure delegations (NS without
 * DS), chained in hash order, with that TTL, and their RRSIGs. zone_apply(z, out) makes the signed
 * version. Returns 0 and *out (sealed, one reference), SHOAL_EEXIST (z is
 * signed already), SHOAL_EINVAL (ks has no KSK or no ZSK with its private
 * key) or another sign_rrset or changeset_add error. Reads z (held by the
 * caller); any thread but a worker: it allocates and takes the time of a
 * signature per RRset. The signatures are made in batches, each spread
 * over o->threads threads that read z, ks and the batch and write only
 * their own results; everything else happens on the caller's thread.
 */
int sign_zone(const zone_t *z, const sign_keyset_t *ks, const sign_zone_opts_t *o,
	      changeset_t **out);

#endif
