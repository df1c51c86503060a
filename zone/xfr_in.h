/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Incoming zone transfers: a received AXFR or IXFR stream checked and made into a zone_t. */
#ifndef SHOAL_ZONE_XFR_IN_H
#define SHOAL_ZONE_XFR_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/changeset.h"
#include "zone/journal.h"
#include "zone/zone.h"

/*
 * Bounds on what one transfer may bring, each driven by the primary: the
 * octets of all its messages together (max-zone-size), its records, its
 * messages. 0: no bound. A message is never more than 65535 octets
 * (RFC 1035 4.2.2), whatever is set.
 */
typedef struct xfr_in_limits {
	size_t max_octets;
	size_t max_records;
	size_t max_messages;
} xfr_in_limits_t;

/* What the primary's answer turned out to be (RFC 1995 4). */
enum xfr_in_kind {
	XFR_IN_PENDING = 0, /* not known yet */
	XFR_IN_AXFR,        /* the whole zone: an AXFR, or an IXFR answered AXFR-style */
	XFR_IN_IXFR,        /* changesets from the version served */
	XFR_IN_UPTODATE,    /* the primary has the version served: nothing newer */
	XFR_IN_OUTDATED,    /* the primary's version is older, or 2^31 away: nothing taken */
};

/*
 * One transfer in progress. The caller owns the connection: it sends the
 * request (query ID id, type AXFR or IXFR for the zone apex, with
 * current's SOA for IXFR), verifies TSIG on each received message
 * (proto/tsig.h), and hands every message to xfr_in_feed, then calls
 * xfr_in_finish. One thread at a time (a transfer thread, not a worker:
 * feeding allocates, finishing builds a whole zone).
 */
typedef struct xfr_in xfr_in_t;

/*
 * Start receiving the answer to a request of qtype (DNS_TYPE_AXFR or
 * DNS_TYPE_IXFR) with ID id for the zone apex (wire form, any case).
 * current is the version served (NULL when there is none): an IXFR is
 * applied to it; it is referenced, not copied. limits and zone_limits may
 * be NULL (no bounds, the default per-name bounds). label names the source
 * in every message ("primary 192.0.2.1@53"), as FILE:LINE does for a file
 * (copied). Messages go to msg. NULL on ENOMEM or a bad qtype.
 */
xfr_in_t *xfr_in_new(const uint8_t *apex, uint16_t qtype, uint16_t id, const zone_t *current,
		     const xfr_in_limits_t *limits, const zone_limits_t *zone_limits,
		     const char *label, zone_msg_fn msg, void *msg_arg);

/*
 * Take the answer's version whatever its serial, as a forced transfer
 * does (shoalctl retransfer, as Knot's zone-retransfer). Without this call,
 * when there is a version served, the answer's first SOA decides (RFC 1982
 * 3.2): a serial equal to the one served ends the answer as
 * XFR_IN_UPTODATE, an older one, or one exactly 2^31 away (whose order is
 * undefined), as XFR_IN_OUTDATED, both at that first record, whatever the
 * form of the answer (IXFR, IXFR answered AXFR-style, AXFR): a secondary
 * never goes back to an older version unless asked to. Before the first
 * xfr_in_feed.
 */
void xfr_in_take_any_serial(xfr_in_t *x);

/*
 * A signer's transfer (the bump-in-the-wire, zone/sign_version.h): the
 * answer is judged against serial, the upstream (unsigned) serial, not
 * against current's (the signed version served), an IXFR's changesets
 * start from it, and xfr_in_finish leaves them unapplied for
 * xfr_in_changesets (*out NULL); nothing is journalled by it then. An
 * AXFR is built as always. Before the first xfr_in_feed.
 */
void xfr_in_set_base(xfr_in_t *x, uint32_t serial);

/*
 * After xfr_in_finish of an IXFR with xfr_in_set_base: its changesets in
 * order (*count of them, each sealed; held by x until xfr_in_free);
 * otherwise *count 0.
 */
const changeset_t *const *xfr_in_changesets(const xfr_in_t *x, size_t *count);

/*
 * Take the next message of the answer, msg[0..len). Checks: the header
 * (the request's ID, QR, opcode QUERY, no TC, RCODE NOERROR), the question
 * when there is one (the zone, the type asked, class IN), the limits; each
 * answer record parses, is class IN, in the zone, of a type that may be
 * zone data, with RDATA of its type's layout once its names are expanded
 * (proto/rdata.h); the first is the zone's SOA; an AXFR ends with that
 * SOA again and nothing after it; an IXFR's changesets start at the
 * served version's serial and follow each other, each to a newer serial
 * (RFC 1982), the last to the first SOA's. Authority and additional
 * records (OPT, TSIG) are not looked at. The first SOA's serial is
 * judged at once (xfr_in_take_any_serial): an answer that ends there is
 * complete, and the rest of its message is not read.
 * Returns 0 when more messages are due, 1 when the answer is complete
 * (then xfr_in_finish), or a negative error, reported through msg with
 * the label: SHOAL_EMALFORMED (the stream breaks the protocol),
 * SHOAL_EZONE (a record that is not zone data of this zone), SHOAL_ESPACE
 * (a limit passed), SHOAL_ENOMEM. After an error every call returns it.
 */
int xfr_in_feed(xfr_in_t *x, const uint8_t *msg, size_t len);

/* The kind of answer, known once the first records are in. */
enum xfr_in_kind xfr_in_kind(const xfr_in_t *x);

/*
 * Make the new version: after xfr_in_feed returned 1, an AXFR goes
 * through the store builder with the checks of a file load (zone/build.c;
 * its messages name the label), an IXFR is applied to `current` (every
 * deletion must be there) and the result rebuilt the same way. The
 * journal, when not NULL, records the change: an IXFR's changesets as
 * received, for an AXFR the diff from `current` when the serial went
 * forward; otherwise its history is cleared. Returns 0 and *out (one
 * reference; NULL for XFR_IN_UPTODATE and XFR_IN_OUTDATED); SHOAL_EMALFORMED when the stream
 * did not end (truncated: the primary stopped before the final SOA);
 * SHOAL_EZONE (reported) or SHOAL_ENOMEM; or the error feeding met.
 * The version served is never touched.
 */
int xfr_in_finish(xfr_in_t *x, journal_t *journal, zone_t **out);

/* The serial the answer brings (its first SOA), once known; 0 before. */
uint32_t xfr_in_serial(const xfr_in_t *x);

/* Free x and all it holds (the reference to current too). NULL is fine. */
void xfr_in_free(xfr_in_t *x);

#endif
