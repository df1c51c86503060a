/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A producer's catalog zone (RFC 9432): its members, their unique ids, its serial, its file. */
#ifndef SHOAL_ZONE_CATALOG_GEN_H
#define SHOAL_ZONE_CATALOG_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A unique id: 16 hex digits, one label (RFC 9432 4.1) */
#define CATGEN_ID_LEN 16

/* One member as the configuration lists it: names as name_zone_text writes them. */
typedef struct catgen_want {
	const char *name;  /* "member.example." */
	const char *group; /* its group property (RFC 9432 4.4.2), or NULL */
} catgen_want_t;

/* One member of the catalog as made: strings owned by the catalog. */
typedef struct catgen_member {
	char *name;
	char *group; /* NULL: none */
	char id[CATGEN_ID_LEN + 1];
} catgen_member_t;

/*
 * A catalog zone being made: its apex, serial and members (sorted by
 * name). Caller memory (catgen_init, catgen_clear); one thread at a time.
 */
typedef struct catgen {
	char *apex;      /* "catalog.example." */
	uint32_t serial; /* 0 with no member set made yet */
	catgen_member_t *members;
	size_t count;
} catgen_t;

/* An empty catalog for apex (copied). Returns 0 or SHOAL_ENOMEM. */
int catgen_init(catgen_t *c, const char *apex);

/* Free what c holds. */
void catgen_clear(catgen_t *c);

/*
 * The serial and members (ids, groups) of the catalog that file holds, as
 * catgen_write made it, read into c (its members replaced): what a
 * restart keeps. A file that is not there leaves c empty. Lines of
 * another shape are passed over. Returns 0, SHOAL_ENOMEM, or -errno
 * (the file cannot be read).
 */
int catgen_read(catgen_t *c, const char *file);

/*
 * Make c's members want[0..n) (any order; a name twice counts once): a
 * member c has keeps its id, a new one gets a new id (derived from its
 * name and the new serial, so a member removed and added back later gets
 * another: RFC 9432 5.4), a member c has that want lacks goes. When
 * anything changed (a member, a group), the serial moves on: to now
 * (seconds) when that is ahead in serial arithmetic (RFC 1982), else by
 * one; *changed says so. O(n log n). Returns 0 or SHOAL_ENOMEM (c as it
 * was).
 */
int catgen_update(catgen_t *c, const catgen_want_t *want, size_t n, time_t now, bool *changed);

struct changeset;

/*
 * One member added to c (add: `name` with group, which may be NULL; a
 * new id as catgen_update makes one) or removed (!add: `name`), and
 * the serial moved on as catgen_update moves it: c changed, and *out the
 * changeset from the old serial to the new (RFC 1995 4: the old SOA and
 * the member's PTR and group TXT deleted, or the new SOA and its records
 * added), to apply to the version served (zone_apply) instead of reading
 * the catalog whole. O(log members) but for the move of the members
 * after it in c (pointers). Returns 0, SHOAL_EEXIST (added: a member
 * already), SHOAL_ENOTFOUND (removed: not a member), SHOAL_ENAME (a name
 * too long for an owner under zones) or SHOAL_ENOMEM (c as it was).
 */
int catgen_change(catgen_t *c, const char *name, const char *group, bool add, time_t now,
		  struct changeset **out);

/*
 * c as a zone file (RFC 9432 4: SOA, NS invalid., version TXT "2", one PTR
 * per member under zones, its group TXT) written to out. Returns 0 or
 * -errno.
 */
int catgen_write_fd(const catgen_t *c, int fd);

/*
 * c written to file: a temporary file beside it, synced, renamed over it,
 * so a crash leaves the old catalog or the new one whole. Returns 0 or
 * -errno.
 */
int catgen_write(const catgen_t *c, const char *file);

#endif
