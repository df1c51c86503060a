/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing an answer: header, echoed question, RRsets with compression, OPT. */
#ifndef SHOAL_PROTO_RESPONSE_H
#define SHOAL_PROTO_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "proto/query.h"
#include "proto/rrset.h"
#include "proto/wire.h"

#define RESPONSE_COMPRESS_MAX 128 /* names remembered for compression */

#define RESPONSE_PATH_NAMES 256 /* names in RDATA a path remembers (a power of 2) */

/*
 * Compression for names written in canonical order (RFC 4034 6.1), as a
 * zone transfer writes its owners: the suffixes of the last owner written,
 * one per count of labels from the root, with where each stands in the
 * message. That order puts a name's parent, and every ancestor of it that
 * the message holds, among those suffixes (each name is followed by its
 * descendants), so an owner is written as the labels it does not share
 * with the last one and a pointer to the longest suffix they share
 * (RFC 1035 4.1.4): no search, its labels compared once. A name in RDATA
 * is compressed against the same suffixes, or against a name in RDATA
 * before it (a delegation's name servers under another zone), remembered
 * by a hash of its labels, the last one of each hash kept. Names compare
 * octet for octet, so a name keeps its case. Caller memory (about 4.5 KiB),
 * one message: response_path_init starts it empty; response_add_rrs
 * writes with it.
 */
typedef struct response_path {
	const uint8_t *owner;             /* the last owner written; its memory must stay */
	uint8_t labels;                   /* owner's labels */
	uint8_t at[NAME_MAXLABELS + 1];   /* at[d]: where owner's suffix of d labels starts */
	uint16_t off[NAME_MAXLABELS + 1]; /* where the message holds it; 0: nowhere to point */
	struct response_path_name {
		const uint8_t *name; /* a suffix of a name in RDATA (caller memory) */
		uint16_t off;        /* where the message holds it */
		uint8_t len;         /* its length; 0: an empty slot */
	} names[RESPONSE_PATH_NAMES];
} response_path_t;

/*
 * A response being written into a caller's buffer. Lives in caller memory
 * (a worker's stack); allocates nothing. Sections must be filled in order
 * (answer, authority, additional).
 */
typedef struct response {
	wire_t w;           /* w.len is the room for records (limit - OPT) */
	size_t cap;         /* the caller's buffer size */
	size_t limit;       /* size the message must fit, OPT included */
	size_t base_pos;    /* end of the echoed question */
	size_t opt_reserve; /* octets kept back for the OPT record */
	uint16_t counts[4]; /* per enum dns_section */
	int section;        /* section being written */
	uint16_t flags;
	uint16_t rcode; /* extended rcode (12 bits) */
	bool truncated;
	const query_t *query;
	/* compression table: packet offsets of names already written */
	uint16_t comp_off[RESPONSE_COMPRESS_MAX];
	uint8_t comp_len[RESPONSE_COMPRESS_MAX]; /* expanded length of that name */
	int comp_count;
	int base_comp; /* entries of the question name */
} response_t;

/*
 * Start the response to q in buf[0..cap). `limit` is the largest message
 * allowed (query_udp_limit() over UDP, 65535 over TCP), `opt_reserve` the
 * size of the OPT record that response_finish will add (0 without EDNS).
 * Copies ID, opcode and RD from the query (not CD, as NSD and Knot), sets QR, and echoes the
 * question byte for byte (0x20 case survives). Returns 0 or SHOAL_ESPACE.
 * For a query without a parsed question, writes the header only.
 */
int response_init(response_t *r, const query_t *q, uint8_t *buf, size_t cap, size_t limit,
		  size_t opt_reserve);

/* Set header flags (DNS_FLAG_AA, DNS_FLAG_TC, ...). */
void response_set_flags(response_t *r, uint16_t flags);

/* Set the (possibly extended) rcode. */
void response_set_rcode(response_t *r, uint16_t rcode);

/*
 * Append every RR of `set` to `section` with `owner` (uncompressed wire) as
 * owner, compressing the owner and the compressible RDATA names against
 * names already in the message. On SHOAL_ESPACE the message is left exactly
 * as before the call. Returns 0 or SHOAL_ESPACE.
 */
int response_add_rrset(response_t *r, enum dns_section section, const uint8_t *owner,
		       const rrset_wire_t *set);

/*
 * How far a partial write of an RRset has come (response_add_rrs): the
 * records written, where the next one starts in set->data, and the index
 * in set->names of its first name. Zero it to start a set.
 */
typedef struct rrset_pos {
	uint32_t off;
	uint16_t rr;
	uint16_t name;
} rrset_pos_t;

/* Empty p for a new message. */
void response_path_init(response_path_t *p);

/*
 * Append the records of `set` from *pos on, one by one, as many as fit;
 * *pos moves past each record written (the message keeps them). For zone
 * transfers, where an RRset may continue in the next message (RFC 5936
 * 2.2). Names are compressed by path when path is not NULL (owners in
 * canonical order: p must have been emptied for this message, and every
 * owner and RRset written must stay in place until it is finished, the
 * path pointing into them), else as response_add_rrset does. A record
 * that does not fit is taken back from the path too; a caller that rolls
 * back records written with a path empties it. Returns 0 when the set is
 * complete, SHOAL_ESPACE when the next record does not fit (or the
 * section's count is full), SHOAL_EINVAL for a set whose records do not
 * lie inside it or a section out of order (the bad record is not written).
 */
int response_add_rrs(response_t *r, response_path_t *path, enum dns_section section,
		     const uint8_t *owner, const rrset_wire_t *set, rrset_pos_t *pos);

/* A position to roll back to (see response_rollback). */
typedef struct response_mark {
	size_t pos;
	uint16_t counts[4];
	int comp_count;
	int section;
} response_mark_t;

response_mark_t response_mark(const response_t *r);
void response_rollback(response_t *r, const response_mark_t *m);

/*
 * Drop every record and set TC: the answer becomes the header and question
 * only, as NSD and Knot send when the answer does not fit (RFC 2181 9).
 */
void response_truncate(response_t *r);

/* EDNS to add at the end (RFC 6891 6.1.2). */
typedef struct response_edns {
	bool present;        /* add an OPT record */
	uint16_t udp_size;   /* server's advertised payload size */
	bool do_bit;         /* echo DO */
	const uint8_t *nsid; /* NSID payload to add, or NULL */
	uint16_t nsid_len;
	/* COOKIE option data to add (RFC 7873 4: client cookie, then server cookie), or NULL */
	const uint8_t *cookie;
	uint8_t cookie_len;
} response_edns_t;

/* Octets the OPT record for `e` takes (0 when !e->present). */
size_t response_opt_size(const response_edns_t *e);

/*
 * Turn the finished message msg[0..len) into its truncated form in place:
 * the header with TC set, the question, and the OPT record if it has one
 * (with its cookie); every other record goes. Response rate limiting sends
 * this instead of a limited answer, so that a real client retries over TCP.
 * Returns the new length, or SHOAL_EMALFORMED when msg does not parse (it
 * is then left as it was). Allocates nothing.
 */
int response_strip(uint8_t *msg, size_t len);

/*
 * Write the counts, the rcode (upper bits in the OPT TTL) and the OPT record.
 * Returns the message length, or SHOAL_ESPACE when even the header and
 * question do not fit.
 */
int response_finish(response_t *r, const response_edns_t *e);

#endif
