/* SPDX-License-Identifier: GPL-3.0-or-later */
/* An RRset in the wire form it is stored and sent in. */
#ifndef SHOAL_PROTO_RRSET_H
#define SHOAL_PROTO_RRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * `data` holds rr_count records back to back, each the part of an RR after
 * its owner name: type (2), class (2), TTL (4), RDLENGTH (2), RDATA, all in
 * network order, with any names in RDATA uncompressed. `names` lists, in
 * ascending order, the offsets into `data` of the RDATA names the writer may
 * compress (RFC 3597 4: only NS, CNAME, SOA, PTR, MX and the other RFC 1035
 * types; never for types defined later). The memory belongs to whoever built
 * the RRset (the zone store); the response writer only reads it.
 */
typedef struct rrset_wire {
	uint16_t type;
	uint16_t rr_count;
	uint32_t data_len;
	const uint8_t *data;
	const uint16_t *names;
	uint16_t name_count;
} rrset_wire_t;

/*
 * True when RDATA names of this type may be compressed on output
 * (RFC 3597 4 and RFC 1035 3.3).
 */
bool rrtype_compressible(uint16_t type);

/*
 * For building RRsets: the offsets (from the start of rdata) of the domain
 * names inside one RDATA of `type` (for example MX: 2; SOA: 0 and the second
 * name), counting only compressible types. Writes at most `max` offsets to
 * out and returns how many, or SHOAL_EMALFORMED when the rdata does not
 * fit the type's layout (rdata_walk in proto/rdata.h: the same table).
 */
int rrtype_rdata_names(uint16_t type, const uint8_t *rdata, uint16_t rdlen, uint16_t *out, int max);

#endif
