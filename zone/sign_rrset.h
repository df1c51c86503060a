/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One RRset signed: its canonical form (RFC 4034 6) and the RRSIG RDATA a key makes of it. */
#ifndef SHOAL_ZONE_SIGN_RRSET_H
#define SHOAL_ZONE_SIGN_RRSET_H

#include <stddef.h>
#include <stdint.h>

#include "proto/rrset.h"
#include "zone/sign_key.h"

/* The validity of the signatures made: RFC 4034 3.1.5 times, serial arithmetic (RFC 1982). */
typedef struct sign_times {
	uint32_t inception;
	uint32_t expiration;
} sign_times_t;

/*
 * The RRSIG RDATA (RFC 4034 3.1) of the RRset rs at owner (wire, any
 * case) in the zone apex (the signer's name, lowercase wire), made with
 * k's private key, into out[0..cap). The signed data is RFC 4034 3.1.8.1's:
 * the RRSIG RDATA without its signature, then each record in canonical
 * form (owner lowercased, the names of the types RFC 4034 6.2 lists
 * lowercased, records in canonical order, duplicates once), with the
 * original TTL, the first record's. Labels (RFC 4034 3.1.3) leave out a
 * wildcard owner's "*". Returns the RDATA's length, SHOAL_ESPACE,
 * SHOAL_EMALFORMED (a record's RDATA does not fit its type), SHOAL_EINVAL
 * (k has no private key) or SHOAL_ENOMEM. Any thread, each with its own
 * keys or the same keys read-only; allocates: never on the query path.
 */
int sign_rrset(const sign_key_t *k, const uint8_t *apex, const uint8_t *owner,
	       const rrset_wire_t *rs, sign_times_t times, uint8_t *out, size_t cap);

#endif
