/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The wire layout of each known type's RDATA: one table for checking it and finding its names. */
#ifndef SHOAL_PROTO_RDATA_H
#define SHOAL_PROTO_RDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

/* The kinds of field an RDATA is made of, in wire order. */
enum rdata_field {
	RDATA_END = 0, /* no more fields: the RDATA must end here */
	RDATA_U8,      /* fixed-size integers (and opaque fixed fields: EUI48 is U48) */
	RDATA_U16,
	RDATA_U32,
	RDATA_U48,
	RDATA_U64,
	RDATA_A,         /* IPv4 address, 4 octets */
	RDATA_AAAA,      /* IPv6 address, 16 octets */
	RDATA_NAME_C,    /* uncompressed domain name the writer may compress (RFC 3597 4) */
	RDATA_NAME,      /* uncompressed domain name, never compressed */
	RDATA_STRING,    /* one <character-string>: a length octet, then that many octets */
	RDATA_STRINGS,   /* one or more character-strings, up to the end (TXT) */
	RDATA_SALT,      /* octets after a one-octet length, maybe none (NSEC3 salt) */
	RDATA_HASH,      /* octets after a one-octet length, at least one (NSEC3 next hash) */
	RDATA_REST,      /* the octets that remain, maybe none (keys, digests) */
	RDATA_BITMAP,    /* type bit maps (RFC 4034 4.1.2), maybe none */
	RDATA_SVCPARAMS, /* SvcParams (RFC 9460 2.2), maybe none */
	RDATA_GATEWAY,   /* IPSECKEY gateway of the kind in RDATA octet 1 (RFC 4025 2.3, 2.5) */
	RDATA_RELAY,     /* AMTRELAY relay, kind in RDATA octet 1's low 7 bits (RFC 8777 4.2) */
	RDATA_A6,        /* prefix length, address suffix, prefix name (RFC 2874 3.1.1) */
	RDATA_APL,       /* address prefix items (RFC 3123 4) */
	RDATA_HIP,       /* HIT and public key with their lengths, then names (RFC 8005 5) */
};

#define RDATA_FIELDS_MAX 10

/* One known type: its mnemonic and its fields, ended by RDATA_END. */
typedef struct rdata_desc {
	uint16_t type;
	const char *name;
	uint8_t fields[RDATA_FIELDS_MAX]; /* enum rdata_field */
} rdata_desc_t;

/*
 * The layout of `type`, or NULL for a type Shoal does not know (its RDATA
 * is opaque, RFC 3597) and for meta types. Static storage; any thread.
 */
const rdata_desc_t *rdata_desc(uint16_t type);

/*
 * True for type numbers that never belong in zone data: 0 (reserved,
 * RFC 6895 3.1), OPT and the types that exist only in queries or
 * transactions (TKEY, TSIG, IXFR, AXFR, MAILB, MAILA, ANY).
 */
bool rdata_type_is_meta(uint16_t type);

/*
 * The type a mnemonic of the table names ("TXT", any case), or RFC 3597's
 * TYPEnnn for one it does not know; -1 for any other text and for meta
 * types. Static table; any thread.
 */
int rdata_type_from_text(const char *text);

/*
 * Walk rdata[0..rdlen) of `type` field by field, each checked to lie
 * inside the RDATA: fixed fields whole, names well-formed (labels of at
 * most 63 octets, no compression pointer, at most 255 octets, ending inside
 * the RDATA), character-strings within it, nothing left over. Writes the
 * offsets of the first `max` compressible names to names (may be NULL when
 * max is 0). Returns the number of compressible names, or SHOAL_EMALFORMED
 * with *why (when why != NULL) a static text saying what is wrong. An
 * unknown type has no names and is never malformed. No allocation.
 */
int rdata_walk(uint16_t type, const uint8_t *rdata, size_t rdlen, uint16_t *names, int max,
	       const char **why);

/*
 * Put rdata[0..rdlen) of `type` in canonical form in place (RFC 4034 6.2):
 * the domain names of the types RFC 4034 6.2 lists (less NSEC, RFC 6840
 * 5.1) lowercased; others are left as they are. Returns 0, or
 * SHOAL_EMALFORMED (as rdata_walk) with rdata unchanged. No allocation.
 */
int rdata_canonical(uint16_t type, uint8_t *rdata, size_t rdlen);

/*
 * Length of the uncompressed domain name at rdata[off], or -1 when it is
 * not one that ends inside rdata[0..rdlen) (for walks over stored records:
 * each is bounded by its own RDATA).
 */
int rdata_name_length(const uint8_t *rdata, size_t rdlen, size_t off);

/*
 * Copy the rdlen octets of RDATA of `type` at w's position in a received
 * message into out[0..cap) with every domain name uncompressed, and move w
 * past them. w reads the whole message, so a name's compression pointers
 * are followed (backwards only, as name_unpack does): RFC 3597 4 has
 * receivers expand them in the types of RFC 1035 and some later ones, and
 * any name field of the layout is read so, since a pointer there cannot
 * mean anything else. Fields after the first of variable kind other than
 * names and character-strings are copied as they are (names inside them
 * are never compressed). The result is then checked with rdata_walk.
 * Unknown types are copied as they are. Returns the uncompressed length;
 * SHOAL_EMALFORMED (w->err set; *why, when why != NULL, a static text) or
 * SHOAL_ESPACE (out too small). No allocation.
 */
int rdata_unpack(uint16_t type, wire_t *w, uint16_t rdlen, uint8_t *out, size_t cap,
		 const char **why);

#endif
