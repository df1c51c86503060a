/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Domain names in wire form: unpack with compression, compare, hash, text. */
#ifndef SHOAL_PROTO_NAME_H
#define SHOAL_PROTO_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

#define NAME_MAXLEN    255 /* RFC 1035 2.3.4, wire form with the root label */
#define NAME_MAXLABELS 128
#define NAME_TEXT_MAX  1024 /* worst case of \DDD escapes, plus NUL */

/*
 * Names handled here are uncompressed wire form: length-prefixed labels
 * ending with the zero root label. "Canonical" means lowercase ASCII
 * (RFC 4034 6.2). None of these functions allocate.
 */

/*
 * Read a possibly compressed name at w's position (w reads a whole message,
 * so pointers can be followed). Writes the uncompressed name to dst, and
 * lowercases it when `lower`. Advances w past the name as it stands in the
 * message (past the first pointer). Rejects pointer loops and forward
 * pointers, names over 255 octets and label types other than 00.
 * Returns the name's length, or SHOAL_EMALFORMED (also recorded in w->err).
 */
int name_unpack(wire_t *w, uint8_t dst[NAME_MAXLEN], bool lower);

/* Skip a possibly compressed name at w's position; 0 or SHOAL_EMALFORMED. */
int name_skip(wire_t *w);

/* Length of a well-formed uncompressed name (including the root label). */
size_t name_length(const uint8_t *name);

/* Number of labels, not counting the root ("." has 0). */
int name_labels(const uint8_t *name);

/* One octet of a name lowercased: ASCII letters only (RFC 4343 3). */
static inline uint8_t name_lower_octet(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

/* Lowercase a name in place (ASCII only, RFC 4343). */
void name_lower(uint8_t *name);

/* Case-insensitive equality of two uncompressed names. */
bool name_equal(const uint8_t *a, const uint8_t *b);

/* True when name is equal to or below parent (case-insensitive). */
bool name_is_subdomain(const uint8_t *name, const uint8_t *parent);

/* The name with its first label removed; "." for ".". Points into name. */
const uint8_t *name_parent(const uint8_t *name);

/* True when the first label is the single octet "*". */
bool name_is_wildcard(const uint8_t *name);

/*
 * Compare in canonical DNS order (RFC 4034 6.1): by labels from the root,
 * case-insensitive. Returns <0, 0 or >0.
 */
int name_compare(const uint8_t *a, const uint8_t *b);

/* Where each label of name starts (offsets from the first octet, leftmost first); the count. */
int name_label_offsets(const uint8_t *name, uint8_t off[NAME_MAXLABELS]);

/*
 * 64-bit keyed hash (SipHash via libsodium's crypto_shorthash) of the
 * lowercased name. key is crypto_shorthash_KEYBYTES (16) octets, chosen at
 * start-up with randombytes so clients cannot aim at hash collisions.
 */
uint64_t name_hash(const uint8_t *name, const uint8_t key[16]);

/*
 * name_hash of a name of length len that is lowercase already (as
 * name_unpack with lower and the zone store leave names), hashed where it
 * lies: the query path's form, without name_hash's copy.
 */
uint64_t name_hash_lower(const uint8_t *name, size_t len, const uint8_t key[16]);

/*
 * Parse presentation format ("www.Example.com." or relative to origin when
 * origin != NULL and the text has no final dot; "@" is the origin) into
 * dst. Handles \. and \DDD escapes. Returns the length or SHOAL_ENAME.
 */
int name_from_text(const char *text, const uint8_t *origin, uint8_t dst[NAME_MAXLEN]);

/*
 * Write a name in presentation format with a final dot, escaping as
 * RFC 1035 5.1 does: letters, digits, "-", "_", "/" and "*" bare, the other printable
 * characters as \X, the rest as \DDD, which every master file reader
 * (Knot's zone scanner, ldns, NSD, BIND) reads back as the same name.
 * Returns the text length or SHOAL_ESPACE.
 */
int name_to_text(const uint8_t *name, char *dst, size_t cap);

/*
 * A zone's name as an operator types it (with or without the final dot,
 * in any case) in the one form logs, replies and zone-status show it:
 * lowercase, with the final dot ("Example.COM" -> "example.com."). Returns
 * the text length, SHOAL_ENAME when it is not a name, or SHOAL_ESPACE.
 */
int name_zone_text(const char *text, char *dst, size_t cap);

#endif
