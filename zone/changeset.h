/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The difference between two versions of a zone (RFC 1995 4): built, computed, condensed. */
#ifndef SHOAL_ZONE_CHANGESET_H
#define SHOAL_ZONE_CHANGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/rrset.h"
#include "zone/zone.h"

/*
 * Records of one owner and type in the wire form the answer writer reads
 * (proto/rrset.h), so an IXFR answer copies them as an AXFR copies the
 * zone's RRsets: a view into a changeset, filled by xfr_part_next. A run
 * holds at most 65535 octets; a longer stretch of one owner and type
 * takes several runs.
 */
typedef struct xfr_run {
	const uint8_t *owner; /* uncompressed, lowercase */
	rrset_wire_t set;
} xfr_run_t;

/*
 * One side of a changeset: the SOA of a version, alone in the first run,
 * then records. The runs lie one after another in one buffer, read in
 * order with xfr_part_next: per run 6 octets (records, octets of wire,
 * compressible names: 16 bits each), the owner, the records' wire and the
 * offsets of their compressible names, 2-aligned. A run of one record
 * costs its owner, its wire and 6 or 7 octets.
 */
typedef struct xfr_part {
	const uint8_t *runs;
	size_t len; /* octets of runs */
	size_t run_count;
	size_t rr_count; /* records, the SOA included */
} xfr_part_t;

/*
 * The run at offset *at of p (0: the first, the SOA) into *run, and *at
 * moved to the next; false past the last. run points into p. Any thread
 * holding a reference to the changeset.
 */
bool xfr_part_next(const xfr_part_t *p, size_t *at, xfr_run_t *run);

/* The SOA record of a side, its wire as in a run (type, class, TTL, RDLENGTH, RDATA). */
const uint8_t *xfr_part_soa(const xfr_part_t *p);

/*
 * The changes that take a zone from serial `from` to serial `to`: the
 * records deleted (after the SOA of `from`) and those added (after the SOA
 * of `to`), each in canonical order. A modified record is deleted and
 * added again (RFC 1995 4), a changed TTL too. Built by one thread
 * (changeset_new, changeset_add, changeset_seal), then immutable and
 * shared by reference: a journal holds one, and so does each IXFR answer
 * that sends it, on any thread.
 */
typedef struct changeset {
	uint32_t from, to;
	xfr_part_t del, add;
	size_t octets;          /* memory held, counted against a journal's size */
	unsigned refs;          /* atomic: changeset_ref, changeset_unref */
	struct cs_store *store; /* the memory behind the runs */
} changeset_t;

/* An empty changeset (one reference, the caller's), or NULL on ENOMEM. */
changeset_t *changeset_new(void);

/*
 * Append one record to the deletions (add false) or the additions: owner
 * uncompressed (any case: it is lowercased), RDATA uncompressed. The
 * first record of each side must be its version's SOA, and no other SOA
 * may follow. Records of one owner and type in a row share a run. Returns
 * 0; SHOAL_EINVAL (an SOA out of place, after changeset_seal);
 * SHOAL_EMALFORMED (RDATA that does not fit its type, proto/rdata.h);
 * SHOAL_ENOMEM.
 */
int changeset_add(changeset_t *cs, bool add, const uint8_t *owner, uint16_t type, uint32_t ttl,
		  const uint8_t *rdata, uint16_t rdlen);

/*
 * Finish building: from and to are read from the two SOAs. Returns 0, or
 * SHOAL_EINVAL when a side has no SOA (or it was sealed already).
 */
int changeset_seal(changeset_t *cs);

/* Take a reference; any thread holding one already (or the journal's lock). */
const changeset_t *changeset_ref(const changeset_t *cs);

/* Drop a reference; the last one frees. Any thread; NULL is fine. */
void changeset_unref(const changeset_t *cs);

/*
 * The changeset from `old` to `new` (two versions of one zone): a merge
 * walk over both in canonical order, each RRset's records compared by
 * RDATA and TTL. The SOAs are the versions' own, whatever their serials;
 * the caller decides what the serials allow. O(records of both); reads
 * both zones (held by the caller), writes only the new changeset, which
 * stops growing past max_octets (0: no bound; a journal's size: a change
 * it could not keep is not worth building).
 * Returns 0 and *out (sealed, one reference), SHOAL_ESPACE (bigger than
 * max_octets) or SHOAL_ENOMEM.
 */
int changeset_diff(const zone_t *old, const zone_t *new, size_t max_octets, changeset_t **out);

/*
 * changeset_diff that stops with SHOAL_ETIMEOUT once *cancel is set
 * (looked at every 1024 names; NULL: never), for a reload that may be
 * abandoned.
 */
int changeset_diff_watch(const zone_t *old, const zone_t *new, size_t max_octets,
			 const bool *cancel, changeset_t **out);

/*
 * RFC 1995 6: sets[0..n) (consecutive: each one's `to` the next one's
 * `from`) condensed into one changeset from sets[0]->from to
 * sets[n-1]->to: a record added and deleted again in between is not sent,
 * nor one deleted and added back unchanged. Returns 0 and *out (sealed,
 * one reference), SHOAL_EINVAL (n is 0, or the sets do not follow each
 * other) or SHOAL_ENOMEM.
 */
int changeset_condense(const changeset_t *const *sets, size_t n, changeset_t **out);

/* Changesets to send, one reference each: a journal's answer (zone/journal.h). */
typedef struct xfr_changes {
	const changeset_t **sets;
	size_t count;
} xfr_changes_t;

/* Drop the references and the array; a zeroed struct is fine. */
void xfr_changes_clear(xfr_changes_t *c);

/*
 * For zone/ itself (xfr_in applies changesets with it): every record of
 * sets[0..n) but the SOAs as an operation, sorted by record (canonical
 * owner key, type, RDATA: the order of a zone's records) and, for one
 * record, by when it happens.
 */
typedef struct xfr_op {
	const uint8_t *owner;
	const uint8_t *rr;  /* type, class, TTL, RDLENGTH, RDATA */
	const uint8_t *key; /* zone_name_key of the owner */
	uint16_t key_len;
	uint32_t seq; /* 2 * changeset index, + 1 for an addition */
} xfr_op_t;

typedef struct xfr_ops {
	xfr_op_t *ops;
	size_t count;
	uint8_t *keys; /* the owner keys the ops point into */
	size_t octets; /* memory held: the ops and the keys */
} xfr_ops_t;

/* Collect and sort; 0 or SHOAL_ENOMEM. Free with xfr_ops_clear. */
int xfr_ops_collect(const changeset_t *const *sets, size_t n, xfr_ops_t *out);
void xfr_ops_clear(xfr_ops_t *ops);

/* Whether an op adds its record. */
static inline bool xfr_op_is_add(const xfr_op_t *op)
{
	return op->seq & 1;
}

/*
 * Order of a record (canonical owner key, then the record's type and
 * RDATA, rr as in xfr_op_t) against op's, ignoring TTL and time: <0, 0,
 * >0.
 */
int xfr_op_cmp(const uint8_t *key, size_t key_len, const uint8_t *rr, const xfr_op_t *op);

#endif
