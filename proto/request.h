/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing the requests a server sends: NOTIFY, and the SOA, AXFR and IXFR queries of a secondary.
 */
#ifndef SHOAL_PROTO_REQUEST_H
#define SHOAL_PROTO_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "proto/dns.h"
#include "proto/name.h"

/*
 * The longest request request_write writes: a header, the longest
 * question, and an SOA record owned by it (a pointer) whose MNAME and
 * RNAME are the longest names (RFC 1035 3.3.13). A buffer of this size
 * never fails for space, whatever the zone's SOA; TSIG comes on top
 * (TSIG_RR_MAX).
 */
#define REQUEST_MAX (DNS_HEADER_SIZE + NAME_MAXLEN + 4 + 2 + 10 + 2 * NAME_MAXLEN + 20)

/*
 * Write into buf[0..cap) a request with ID id, opcode (enum dns_opcode)
 * and header flags (DNS_FLAG_AA for NOTIFY, RFC 1996 3.7), the question
 * qname (uncompressed wire) qtype class IN, and, when soa is not NULL,
 * one SOA record owned by qname in `section`: the answer for NOTIFY
 * (RFC 1996 3.7), the authority for IXFR (RFC 1995 3). soa is the record
 * after its owner (type, class, TTL, RDLENGTH, RDATA, as in rrset_wire_t
 * data, RDATA names uncompressed); its owner is written as a pointer to
 * the question. Returns the length, or SHOAL_ESPACE (never with a cap of
 * REQUEST_MAX). No allocation; any thread.
 */
int request_write(uint8_t *buf, size_t cap, uint16_t id, enum dns_opcode opcode, uint16_t flags,
		  const uint8_t *qname, uint16_t qtype, enum dns_section section,
		  const uint8_t *soa);

#endif
