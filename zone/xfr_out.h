/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Outgoing zone transfers: the messages of an AXFR or IXFR answer, written one at a time. */
#ifndef SHOAL_ZONE_XFR_OUT_H
#define SHOAL_ZONE_XFR_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dns.h"
#include "proto/query.h"
#include "proto/response.h"
#include "zone/changeset.h"
#include "zone/zone.h"

/*
 * Where a transfer stands. It lives in caller memory (a connection's
 * state, about 940 octets) and holds a reference to the zone it streams,
 * so the caller leaves the RCU read-side section as soon as it is set up:
 * the zone stays whole while reloads publish and free the sets around it.
 * Nothing of the zone is copied; the state is a few indexes. One thread
 * at a time (the one sending); another may continue it later.
 */
typedef struct xfr_out {
	const zone_t *zone;    /* referenced until xfr_out_clear */
	xfr_changes_t changes; /* IXFR: the changesets sent, referenced until xfr_out_clear */
	bool ixfr;             /* changes, not the zone's RRsets, make the body */
	query_t query;         /* the request, its packet copied into qpkt */
	uint8_t qpkt[DNS_HEADER_SIZE + NAME_MAXLEN + 4];
	response_edns_t edns; /* the OPT of the first message (present false: none) */
	size_t limit;         /* the usual largest message, TSIG RR included */
	size_t reserve;       /* octets each message leaves free for a TSIG RR */
	uint32_t messages;    /* written so far */
	uint64_t records;     /* written so far */
	int phase;            /* enum xfr_phase (xfr_out.c) */
	size_t node;          /* IXFR: the changeset being written */
	zone_iter_t walk;     /* AXFR: the walk over the zone's nodes */
	const znode_t *at;    /* AXFR: the node being written (NULL: the walk has not begun) */
	size_t rrset;         /* its RRset (IXFR: run, deletions then additions) */
	xfr_run_t run;        /* IXFR: run number run_next - 1 of changeset run_node */
	size_t run_node;      /* (SIZE_MAX: none yet) */
	size_t run_next;      /* the run at run_at */
	size_t run_at;        /* where it lies in its side */
	rrset_pos_t pos;      /* the next record of that RRset */
} xfr_out_t;

/*
 * Start the AXFR answer (RFC 5936) to q, a parsed request for the apex of
 * z (or the AXFR-style answer to an IXFR, RFC 1995 4: the same records
 * with the question echoed as it came). Called inside the read-side
 * section z was found in: takes a reference to z. limit is the size of
 * a message (512 to 65535), which only a record too big for it passes
 * (xfr_out_next); reserve the octets to keep free at the end of each
 * message for the TSIG RR the caller signs it with (tsig_space(ctx), 0
 * without TSIG). edns, when not NULL, is the OPT
 * record the first message carries (RFC 5936 2.2.5; its nsid must outlive
 * the transfer). q's packet is copied: it may go after the call.
 * Returns 0, or SHOAL_EINVAL when limit - reserve leaves no room for a
 * header and the question.
 */
int xfr_out_axfr(xfr_out_t *x, const zone_t *z, const query_t *q, size_t limit, size_t reserve,
		 const response_edns_t *edns);

/*
 * Start the IXFR answer (RFC 1995 4) to q for the zone z: changes are the
 * changesets from the client's serial to z's (journal_changes; taken
 * over: *changes is left empty). The body is, per changeset, the SOA of
 * its old version, the deletions, the SOA of its new version and the
 * additions; z's SOA comes first and last. With no changes (the client's
 * serial is z's or newer, RFC 1995 2) the answer is z's SOA alone.
 * Otherwise as xfr_out_axfr; SHOAL_EINVAL too when the changes do not
 * lead to z's serial (changes are dropped then).
 */
int xfr_out_ixfr(xfr_out_t *x, const zone_t *z, xfr_changes_t *changes, const query_t *q,
		 size_t limit, size_t reserve, const response_edns_t *edns);

/*
 * The serial of the client's version in an IXFR request q: the SOA in
 * its authority section (RFC 1995 3), owned by the zone asked for.
 * Returns 0; SHOAL_ENOTFOUND when there is no authority record;
 * SHOAL_EMALFORMED when the record is not such an SOA or does not parse
 * (both answered FORMERR). Reads q's packet only.
 */
int xfr_request_serial(const query_t *q, uint32_t *serial);

/*
 * Write the next message of the transfer into buf[0..cap): the SOA first,
 * then every RRset of the zone as loaded (occluded data and glue, RRSIGs,
 * NSEC and NSEC3 records included), the SOA last; as many records per
 * message as fit in x->limit - reserve, names compressed, the question
 * only in the first message (RFC 5936 2.2), AA set. An RRset may continue
 * in the next message. A record that does not fit an empty message of
 * x->limit gets a message of up to cap octets (at most 65535, the room for
 * TSIG still kept): a TCP caller passes a buffer of 65535, so any record
 * the zone could load is sent. Each call writes one message: bounded
 * work, so a worker may send one per turn of its loop.
 * Returns the message length; 0 when the transfer is complete (nothing
 * written); SHOAL_ESPACE when one record does not fit an empty message of
 * cap octets (less the reserve); SHOAL_EINVAL for a stored RRset that does
 * not parse. After an error the transfer cannot go on.
 */
int xfr_out_next(xfr_out_t *x, uint8_t *buf, size_t cap);

/* True once the message with the final SOA has been written. */
bool xfr_out_done(const xfr_out_t *x);

/* Drop the references to the zone and the changes. Any thread; a cleared or zeroed x is fine. */
void xfr_out_clear(xfr_out_t *x);

#endif
