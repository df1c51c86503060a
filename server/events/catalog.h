/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Consumer catalog zones (RFC 9432): members served as secondaries, applied as their catalogs
 * change. */
#ifndef SHOAL_SERVER_EVENTS_CATALOG_H
#define SHOAL_SERVER_EVENTS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "server/conf/conf.h"
#include "zone/zonedb.h"

/*
 * Every consumer catalog's members as applied: the catalog version they
 * come from, which of its members this server serves (a member claimed by
 * another catalog, or configured by hand, is not), and the change planned
 * and not yet published. Main thread only.
 */
typedef struct catalogs catalogs_t;

/*
 * Members' files go under state_dir/catalog/CATALOG/ (state_dir NULL: a
 * member keeps no file). Returns 0 and *out, or SHOAL_ENOMEM.
 */
int catalogs_new(const char *state_dir, catalogs_t **out);

/* Free c (NULL is fine): the versions it holds are dropped. */
void catalogs_free(catalogs_t *c);

/*
 * One step of the consumer: the first catalog of zcfg (the configuration
 * served) whose version served changed, or that another's change asked to
 * look again, is read (zone/catalog.h) and its difference from what is
 * applied made into *out, a new configuration: zcfg with the members
 * added (secondaries configured from their template, their file in
 * state_dir) and removed. A catalog that is refused (a version other than
 * 2) keeps its members, logged once per version. *change and *removed
 * say how the set is derived: ZONEDB_ADDED or ZONEDB_REMOVED (zone
 * `removed` of zcfg) for one member, else ZONEDB_REBUILD with every other
 * zone marked keep: one derivation for the catalog's whole change. *what
 * names it for the log ("catalog example.: 2 added (a., b.)"). Returns 1
 * with *out (the caller's, to conf_clear and free), 0 when nothing is to
 * be done, or SHOAL_ENOMEM. The caller publishes *out and then calls
 * catalogs_commit. zones is read in a read-side section. Main thread, no
 * reload running.
 */
int catalogs_step(catalogs_t *c, const conf_t *zcfg, zonedb_ref_t *zones, conf_t **out,
		  enum zonedb_change *change, size_t *removed, char *what, size_t cap);

/*
 * The configuration of the last catalogs_step was published (true: the
 * members it removed lose their files, those it added are applied) or
 * not (false: nothing of it is kept, and the step is tried again at the
 * next catalog change). Main thread.
 */
void catalogs_commit(catalogs_t *c, bool published);

/*
 * A consumer catalog that is a secondary without a file of its own is
 * given one in state_dir/catalog/ (CATALOG.zone): its members are known
 * at the next start before its primaries answer. For cfg at start and at
 * each reconfig (catalogs_into calls it). Returns 0 or SHOAL_ENOMEM.
 * Main thread.
 */
int catalogs_files(const catalogs_t *c, conf_t *cfg);

/*
 * A configuration read anew (reconfig): add to cfg the members applied
 * for its catalogs that are still consumers in it, configured from its
 * templates, each with the file `was` (the configuration served) gives
 * it; a member cfg configures by hand stays its own, and the
 * members of a catalog it no longer has are left out (the reconfig
 * removes them; the next catalogs_step forgets them). Returns 0 or
 * SHOAL_ENOMEM. Main thread.
 */
int catalogs_into(catalogs_t *c, conf_t *cfg, const conf_t *was);

/*
 * The catalog zone member `name` (text, any case) came from, into
 * buf[0..cap) ("catalog.example."), or false when it is no member. Main
 * thread.
 */
bool catalogs_member_of(const catalogs_t *c, const char *name, char *buf, size_t cap);

#endif
