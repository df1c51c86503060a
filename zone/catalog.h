/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading a catalog zone (RFC 9432): its member list, and what was skipped and why. */
#ifndef SHOAL_ZONE_CATALOG_H
#define SHOAL_ZONE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zone;

/* The schema version a consumer understands (RFC 9432 4.2.1). */
#define CATALOG_VERSION "2"

/*
 * Why a record of a catalog was left out, X(name, text): the rest of the
 * catalog applies (RFC 9432 3: a consumer ignores what it cannot use).
 */
#define CATALOG_SKIPS(X)                                                                    \
	X(CATALOG_SKIP_OUTSIDE, "a PTR that is not under zones. (RFC 9432 4.1)")            \
	X(CATALOG_SKIP_DEEP, "a PTR under zones. that is neither a member nor its coo")     \
	X(CATALOG_SKIP_PTRS, "a member node with more than one PTR (RFC 9432 4.1)")         \
	X(CATALOG_SKIP_SELF, "a member that is the catalog itself")                         \
	X(CATALOG_SKIP_TWICE, "a member listed under another unique id too (RFC 9432 4.1)") \
	X(CATALOG_SKIP_COO, "a coo property of more than one PTR (RFC 9432 4.3.1)")         \
	X(CATALOG_SKIP_GROUP, "a group property past the member's first (RFC 9432 4.3.2)")  \
	X(CATALOG_SKIP_ORPHAN, "a property of a unique id that has no member (RFC 9432 4.3)")

#define CATALOG_SKIP_ENUM(name, text) name,
enum catalog_skip { CATALOG_SKIPS(CATALOG_SKIP_ENUM) CATALOG_SKIP_COUNT };
#undef CATALOG_SKIP_ENUM

/* Why, as text (static storage); "?" for a value out of range. */
const char *catalog_skip_text(enum catalog_skip why);

/*
 * One member zone. Every pointer points into the catalog's version, which
 * the catalog_t holds.
 */
typedef struct catalog_member {
	const uint8_t *apex;  /* its apex: the PTR's target, wire form as the catalog has it */
	const uint8_t *node;  /* its member node, <unique-N>.zones.CATZ (lowercase wire) */
	const uint8_t *group; /* its group: a character-string (length octet first), or NULL */
	const uint8_t *coo;   /* the catalog its coo property hands it to (wire), or NULL */
} catalog_member_t;

/* One record left out: its owner (lowercase wire, in the version) and why. */
typedef struct catalog_skipped {
	const uint8_t *owner;
	enum catalog_skip why;
} catalog_skipped_t;

/*
 * A catalog's member list read from one of its versions. members are in
 * canonical order of their apexes (RFC 4034 6.1), without two equal
 * apexes: two catalogs' lists, or two versions', are compared by a walk
 * over both. skipped is in the order of the version's names.
 */
typedef struct catalog {
	const struct zone *version; /* held (a reference) while the catalog is */
	catalog_member_t *members;
	size_t member_count;
	catalog_skipped_t *skipped;
	size_t skipped_count;
} catalog_t;

/*
 * Read version z of the catalog zone whose apex is z's into *out (caller
 * memory, to catalog_clear). The version property must be one TXT RR of
 * the one string "2" (RFC 9432 4.2.1): else the whole catalog is refused,
 * *out is left empty and err[0..errlen) says why; the caller keeps the
 * member set it applied before. Members are the single PTRs at
 * <unique-N>.zones (4.1), with their group (4.3.2) and coo (4.3.1)
 * properties; what breaks a rule is in out->skipped and the rest is read.
 * Takes a reference on z (zone_ref's rules: the caller holds one, or is
 * in a read section of a set serving z). Returns 0, SHOAL_EUNSUPPORTED (a
 * version other than 2), SHOAL_EZONE (no version, or not one string) or
 * SHOAL_ENOMEM. Any thread; allocates; O(names log members).
 */
int catalog_read(const struct zone *z, catalog_t *out, char *err, size_t errlen);

/* Free what c holds and drop its version; c is then empty. NULL-safe fields. */
void catalog_clear(catalog_t *c);

/*
 * The member of c whose apex is `apex` (wire form, any case), or NULL.
 * O(log members); any thread holding c.
 */
const catalog_member_t *catalog_find(const catalog_t *c, const uint8_t *apex);

/*
 * Whether members a and b (of any catalogs) have the same unique id: the
 * first label of their member nodes (RFC 9432 4.1; a change of it resets
 * the member, 4.3.1).
 */
bool catalog_same_id(const catalog_member_t *a, const catalog_member_t *b);

/*
 * Whether group a and b (a member's group field) are the same: both NULL,
 * or the same string (case counts).
 */
bool catalog_same_group(const uint8_t *a, const uint8_t *b);

#endif
