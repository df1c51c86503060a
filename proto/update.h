/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The UPDATE message (RFC 2136): its zone, prerequisite and update sections read and checked. */
#ifndef SHOAL_PROTO_UPDATE_H
#define SHOAL_PROTO_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/name.h"
#include "proto/wire.h"

/*
 * What one record of an UPDATE asks, by section, class, type and RDATA
 * (RFC 2136 2.4 for the prerequisites, 2.5 for the updates).
 */
enum update_op {
	UPDATE_PREREQ_YXRRSET = 0,   /* ANY, type: an RRset of the type exists (2.4.1) */
	UPDATE_PREREQ_YXRRSET_RDATA, /* zone class, type, RDATA: the RRset is exactly these (2.4.2)
				      */
	UPDATE_PREREQ_NXRRSET,       /* NONE, type: no RRset of the type (2.4.3) */
	UPDATE_PREREQ_YXDOMAIN,      /* ANY, ANY: the name owns some record (2.4.4) */
	UPDATE_PREREQ_NXDOMAIN,      /* NONE, ANY: the name owns no record (2.4.5) */
	UPDATE_ADD,                  /* zone class: add to an RRset (2.5.1) */
	UPDATE_DEL_RRSET,            /* ANY, type: delete an RRset (2.5.2) */
	UPDATE_DEL_NAME,             /* ANY, ANY: delete all RRsets of a name (2.5.3) */
	UPDATE_DEL_RR,               /* NONE, type, RDATA: delete one RR (2.5.4) */
};

/* The sections an iterator walks. */
enum update_section {
	UPDATE_SECTION_PREREQ = 0,
	UPDATE_SECTION_UPDATE = 1,
};

/*
 * A checked UPDATE. Lives in caller memory and points into the packet,
 * which must outlive it. The zone section is the question's place
 * (RFC 2136 2.3), the prerequisites the answer's, the updates the
 * authority's; the additional section (TSIG, OPT, data RFC 2136 2.6
 * lets a server ignore) is not read here.
 */
typedef struct update_msg {
	const uint8_t *pkt;
	size_t len;
	uint16_t id;
	uint8_t zone[NAME_MAXLEN]; /* ZNAME, uncompressed, lowercase */
	uint8_t zone_len;
	uint16_t zclass;
	uint16_t prcount, upcount;
	size_t prereq_at; /* offset of the first prerequisite */
	size_t update_at; /* offset of the first update */
} update_msg_t;

/* One record of either section, uncompressed. */
typedef struct update_rr {
	uint8_t owner[NAME_MAXLEN]; /* lowercase */
	uint8_t owner_len;
	uint16_t type, rclass;
	uint32_t ttl;
	uint16_t rdlen;
	uint8_t op; /* enum update_op */
	uint8_t rdata[65535];
} update_rr_t;

/* A walk over one section's records, each read and checked again. */
typedef struct update_iter {
	const update_msg_t *msg;
	wire_t w;
	uint16_t left;
	uint8_t section; /* enum update_section */
} update_iter_t;

/*
 * Read and check the UPDATE in pkt[0..len) into m: header with opcode
 * UPDATE and QR clear, exactly one zone of type SOA (RFC 2136 3.1.1),
 * every prerequisite and update well formed and of a kind RFC 2136 2.4
 * and 3.4.1.3 allow (class, TTL, RDATA length, meta types), each owner
 * inside the zone (3.2, 3.4.1.3: NOTZONE). rr is scratch for the walk.
 * Returns the rcode: DNS_RCODE_NOERROR, DNS_RCODE_FORMERR or
 * DNS_RCODE_NOTZONE; *why (when why != NULL) a static text for a log.
 * Allocates nothing; any thread.
 */
int update_parse(update_msg_t *m, const uint8_t *pkt, size_t len, update_rr_t *rr,
		 const char **why);

/* Start a walk over section s of m, a message update_parse accepted. */
void update_iter_init(update_iter_t *it, const update_msg_t *m, enum update_section s);

/*
 * The next record of the walk into rr, classified (rr->op). Returns 1,
 * 0 past the last, or the rcode of a malformed or misplaced one negated
 * (-DNS_RCODE_FORMERR, -DNS_RCODE_NOTZONE; *why set when why != NULL).
 */
int update_iter_next(update_iter_t *it, update_rr_t *rr, const char **why);

/* The name of an op for logs and tests ("add", "delete RRset"). Static storage. */
const char *update_op_name(enum update_op op);

#endif
