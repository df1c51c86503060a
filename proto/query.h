/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Parsing a received DNS query: header, question, EDNS. */
#ifndef SHOAL_PROTO_QUERY_H
#define SHOAL_PROTO_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/name.h"

/* What the parser says should happen to a message. */
enum query_verdict {
	QUERY_OK = 0,      /* a well-formed query: answer it */
	QUERY_DROP = 1,    /* send nothing: shorter than a header, QR set */
	QUERY_FORMERR = 2, /* answer FORMERR (question echoed if it parsed) */
	QUERY_BADVERS = 3, /* EDNS version > 0: answer BADVERS with an OPT */
	QUERY_NOTIMP = 4,  /* opcode other than QUERY: answer NOTIMP */
};

/*
 * A parsed query. The struct lives in caller memory (on the stack or in a
 * worker); it points into the packet, which must outlive it.
 */
typedef struct query {
	const uint8_t *pkt;
	size_t len;
	uint16_t id;
	uint16_t flags; /* the raw header flags word */
	uint8_t opcode;
	uint16_t qdcount, ancount, nscount, arcount;

	bool has_question;          /* the question parsed: qname.. are valid */
	uint8_t qname[NAME_MAXLEN]; /* uncompressed, lowercased */
	uint8_t qname_len;
	uint16_t qtype;
	uint16_t qclass;
	size_t question_end; /* offset past the question; [12, end) is echoed */

	bool edns; /* an OPT record was present and well formed */
	uint8_t edns_version;
	uint16_t edns_udp_size; /* requester's payload size, as sent */
	bool edns_do;           /* DNSSEC OK bit */
	bool nsid_requested;    /* an NSID option was present (RFC 5001) */
	const uint8_t *cookie;  /* the first COOKIE option's data (RFC 7873), or NULL */
	uint8_t cookie_len;
	bool tsig; /* a TSIG RR is in the additional section (tsig_find checks it) */
} query_t;

/*
 * Parse a message received from a client into q. Rules: shorter than a
 * header or QR set: QUERY_DROP. Opcode other than QUERY: QUERY_NOTIMP.
 * QDCOUNT other than 1, a question that does not parse (truncated, bad label,
 * compression loop), two OPT records, an OPT outside the additional section
 * or not owned by the root, a malformed OPT, or a malformed first COOKIE
 * option (then with edns set, as the OPT itself is sound): QUERY_FORMERR.
 * EDNS version above 0: QUERY_BADVERS. Trailing bytes after the records are
 * ignored.
 * Records other than OPT in the answer/authority/additional sections are
 * skipped (TSIG is recognised later). Allocates nothing.
 */
enum query_verdict query_parse(query_t *q, const uint8_t *pkt, size_t len);

/*
 * The UDP payload size an answer to q may use: the requester's EDNS size
 * (raised to 512) capped by `server_max`, or 512 without EDNS.
 */
uint16_t query_udp_limit(const query_t *q, uint16_t server_max);

#endif
