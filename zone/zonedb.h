/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The set of zones served: built whole from zone files, published with RCU. */
#ifndef SHOAL_ZONE_ZONEDB_H
#define SHOAL_ZONE_ZONEDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "zone/load.h"

/*
 * A zone to serve, as configured. Strings belong to the caller.
 * A secondary zone's data comes from its primaries (zonedb_replace puts
 * each transferred version in): its file, when it has one, is only where
 * transfers are saved, read at start so a restart answers at once. So a
 * missing or broken file does not fail the build (the zone serves nothing
 * until its first transfer), and a reload keeps the version served.
 */
typedef struct zone_spec {
	const char *name;     /* presentation format, "example.com" or "example.com." */
	const char *file;     /* path of the RFC 1035 master file; "" or NULL: none (secondary) */
	zone_limits_t limits; /* ZONE_LIMITS_DEFAULT, or the configuration's */
	bool secondary;
	/*
	 * A rebuild (zonedb_build with old) shares old's version of this zone
	 * instead of reading its file again: its data cannot have changed (a
	 * reconfiguration that left its file and limits as they were).
	 */
	bool keep;
	/* how the zone is signed (zone/sign_version.h), owned by the spec's holder; NULL: not */
	const struct zone_sign_spec *sign;
} zone_spec_t;

/*
 * An immutable set of zones. Readers (workers) use it without locks inside
 * rcu_read_lock(); it is freed only by zonedb_publish after a grace period.
 */
typedef struct zonedb zonedb_t;

struct zone;

/* What one zone of a set says about itself (for shoalctl zone-status). */
typedef struct zone_info {
	char name[1024]; /* presentation format with final dot */
	const char *file;
	bool loaded; /* a version of the zone is being served */
	uint32_t serial;
	size_t rr_count;
	time_t loaded_at;     /* when the version served was loaded */
	char last_error[512]; /* "" or why the last (re)load failed */
} zone_info_t;

/*
 * Build a new set from n specs. With `old` != NULL (a reload), zones whose
 * name is not `only` (when only != NULL) are shared with old, not re-read;
 * a zone that fails to load keeps old's version of it (and records the
 * error in its zone_info). Without old, a zone that fails is left out (its
 * names get SERVFAIL, as NSD and Knot answer) and the call returns
 * SHOAL_EZONE after building the rest. When `only` names no configured
 * zone, the set is built (all shared) and the call returns SHOAL_ENOTFOUND.
 * Messages go to msg. A cancelled load (zone_load_cancel) stops the build:
 * nothing is built and the call returns SHOAL_ETIMEOUT.
 * Runs on a thread that is not a worker; may allocate freely.
 * Returns 0 or a negative error; *out is set whenever the set was built.
 */
int zonedb_build(const zone_spec_t *specs, size_t n, const zonedb_t *old, const char *only,
		 zone_msg_fn msg, void *msg_arg, zonedb_t **out);

/* What zonedb_build_with builds from: zonedb_build's arguments, and how. */
typedef struct zonedb_build {
	const zone_spec_t *specs;
	size_t n;
	/*
	 * When not NULL, zone i's spec is spec_of(spec_arg, i) and specs is
	 * not read: a store that is no array (one that copies share a zone at
	 * a time) lends its specs without an array of n being made.
	 */
	const zone_spec_t *(*spec_of)(const void *spec_arg, size_t i);
	const void *spec_arg;
	const zonedb_t *old;
	const char *only;
	zone_msg_fn msg; /* called one message at a time, from any load thread */
	void *msg_arg;
	/*
	 * Zone files are read on this many threads (the caller's among them;
	 * 0 or 1: the caller's alone): small zones load side by side, each on
	 * one thread, as a big one does in ranges (zone/parallel.c).
	 */
	unsigned threads;
	/* NULL, or a count raised atomically as each zone is done (loaded, kept or failed) */
	size_t *loaded;
	/*
	 * Read no file: every zone that must be read is left serving nothing
	 * (SERVFAIL, as a configured zone that did not load) and listed for
	 * zonedb_load_pending, which reads them into the set once it is
	 * published. Without old only (the first load).
	 */
	bool defer;
	/*
	 * The folder of the zones' IXFR journal files (zone/jfile.h), NULL
	 * for journals in memory only: a zone's changes are written there
	 * before they are published, read back when the zone is first read,
	 * and a zone taken out of the set has its file removed
	 * (zonedb_remove_journals). A first build (no old) looks at the
	 * folder once: files of zones not in it, or left by a crash, go. The
	 * set keeps a copy, for the zones read into it later.
	 */
	const char *journal_dir;
	/* their bound together (ixfr-journal-total); NULL: none. Outlives every set. */
	struct journal_budget *journal_budget;
	/*
	 * specs are old's but for one zone (zone-add, zone-remove): the set is
	 * derived from old, at the cost of a copy of its entries' pointers and
	 * of its apex hash and the one zone (read when added), not a pointer,
	 * a reference and a hash insert per zone. ZONEDB_ADDED: the last spec
	 * is new; ZONEDB_REMOVED: old's zone `removed` is not in specs, which
	 * list the others in old's order. The set holds old's entries on
	 * old's references until it is published in old's place
	 * (zonedb_publish, by old's one writer), which hands them over.
	 */
	enum zonedb_change { ZONEDB_REBUILD, ZONEDB_ADDED, ZONEDB_REMOVED } change;
	size_t removed;
} zonedb_build_t;

/*
 * zonedb_build, with threads and progress. A new set shares with old every
 * zone it does not read again (no copy: a reference), so its cost is a
 * pointer and a hash slot per zone kept, and one load per zone read.
 */
int zonedb_build_with(const zonedb_build_t *b, zonedb_t **out);

/*
 * Read the zones a deferred build (b->defer) left, on b->threads threads,
 * each put into db in place as soon as it has loaded (readers take it
 * with acquire: the zone answers from then on), with b's messages and
 * progress; b is the build's description (its specs, old NULL). A zone
 * that fails keeps serving nothing, its error shown. For the one writer
 * of db, published or not. Returns 0; SHOAL_EZONE when a primary zone
 * failed; SHOAL_ETIMEOUT when cancelled (zone_load_cancel) or
 * SHOAL_ENOMEM (the zones not reached serve nothing until a reload reads
 * them); SHOAL_EINVAL when b is not db's build. Once: nothing is pending
 * after it.
 */
int zonedb_load_pending(zonedb_t *db, const zonedb_build_t *b);

/* How many zones of db a deferred build left to read (0 once zonedb_load_pending read them). */
size_t zonedb_pending(const zonedb_t *db);

/*
 * The owner of a set: an opaque pointer its builder hangs on it (the
 * configuration the set was built from, whose per-zone settings are
 * indexed as the set's zones), for readers to take with the set in the
 * same read section. zonedb_replace carries it over. NULL until set.
 */
void zonedb_set_owner(zonedb_t *db, const void *owner);
const void *zonedb_owner(const zonedb_t *db);

/* The policy of zone i of a set (zonedb_set_policies): arg is the caller's. */
typedef const void *(*zonedb_policy_fn)(const void *arg, size_t i);

/*
 * Hang on each zone of db an opaque policy, policy_of(arg, i) for zone i
 * (NULL: none), that a zone match hands back (zonedb_match_slot) with no
 * lookup of its own: the server's allow-query list, which lives as long
 * as the owner does. Kept per set (not per zone entry, which sets share),
 * so a reconfig that builds a set with new lists leaves the old set's
 * readers theirs; zonedb_replace carries them over. Before publishing,
 * by the set's builder. Returns 0 or SHOAL_ENOMEM (none is set).
 */
int zonedb_set_policies(zonedb_t *db, zonedb_policy_fn policy_of, const void *arg);

/*
 * zonedb_set_policies for a set derived by one change (zonedb_build_t.change)
 * before it is published, at the cost of the change: the policies of the
 * set it was derived from carried over by statistics slot (its zones are
 * the same, and so are their policies: the owner's copy shares them), with
 * `was` read as `now` wherever it stood (the one policy the owner's copy
 * moved: the server's global allow-query list; a pass over the slots only
 * when they differ), and the zone added asked of policy_of. A set not
 * derived gets zonedb_set_policies. Returns 0 or SHOAL_ENOMEM (none set).
 */
int zonedb_derive_policies(zonedb_t *db, const void *was, const void *now,
			   zonedb_policy_fn policy_of, const void *arg);

/* Free a set that was never published (zones shared with others stay). */
void zonedb_free(zonedb_t *db);

size_t zonedb_zone_count(const zonedb_t *db);
/* Copy the info of zone i (0 <= i < count) into *info. */
void zonedb_zone_info(const zonedb_t *db, size_t i, zone_info_t *info);

/*
 * Zone i's last error ("" for none), without zonedb_zone_info's copies:
 * valid inside the read section it was taken in (the writer: until its
 * next zonedb_swap).
 */
const char *zonedb_zone_error(const zonedb_t *db, size_t i);

/*
 * The name of zone i (0 <= i < count), presentation format with the final
 * dot (a name that is no zone name: as configured), into buf[0..cap)
 * (NAME_TEXT_MAX holds any). Any thread with db.
 */
void zonedb_zone_name(const zonedb_t *db, size_t i, char *buf, size_t cap);

/*
 * Zone i's statistics slot: a small number, 1 and up (0 for a configured
 * name that is no zone name), that stays the zone's while it is
 * configured: a reload carries it to the new set. A zone new to the set
 * gets the lowest slot that neither this set nor `old` (which workers may
 * still count into until its grace period ends) uses, so slots stay below
 * the zones of two sets together; *fresh (when not NULL) tells such a
 * zone, whose counters start at zero. Per-worker counter arrays indexed by
 * slot need no lock and no allocation on the query path.
 */
uint32_t zonedb_zone_slot(const zonedb_t *db, size_t i, bool *fresh);

/*
 * The zone of db that holds name (lowercase wire), longest match first
 * (label stripping over a hash of the apexes), or NULL. Read-only; any
 * thread inside rcu_read_lock; no allocation.
 */
const struct zone *zonedb_find(const zonedb_t *db, const uint8_t *name);

/*
 * zonedb_find, telling apart a name in no configured zone (*configured
 * false) from one whose longest-matching zone is configured but did not
 * load (NULL with *configured true: NSD and Knot answer SERVFAIL).
 * configured may be NULL.
 */
const struct zone *zonedb_match(const zonedb_t *db, const uint8_t *name, bool *configured);

/*
 * The key names are hashed with for db's zones: zone_hash_key(), which
 * every zone's hash_key copies, so a name can be hashed for a zone's
 * lookup before the zone itself is read. Any thread; db not NULL.
 */
const uint8_t *zonedb_hash_key(const zonedb_t *db);

/*
 * zonedb_match, also giving the zone's statistics slot in *slot (0 when
 * none) and the matched zone's policy (zonedb_set_policies; NULL for
 * none) in *policy, loaded or not; *policy is left as it was when no zone
 * matches (the caller sets it first: answer_query's is zeroed with its plan).
 */
const struct zone *zonedb_match_slot(const zonedb_t *db, const uint8_t *name, bool *configured,
				     uint32_t *slot, const void **policy);

/*
 * The index (as in zonedb_zone_info, and the specs it was built from) of
 * the zone whose apex is exactly `apex` (lowercase wire), loaded or not;
 * -1 when no such zone is configured. Any thread inside rcu_read_lock;
 * no allocation; one hash lookup.
 */
long zonedb_index(const zonedb_t *db, const uint8_t *apex);

/* The version zone i (from zonedb_index) serves, or NULL. As zonedb_index. */
const struct zone *zonedb_zone(const zonedb_t *db, size_t i);

/*
 * A new set like old, but zone i serves z (a reference is taken; NULL:
 * nothing, its names get SERVFAIL, as an expired secondary) and its last
 * error becomes `error` (NULL or "": none). The other zones, and every
 * journal, are shared with old. For the one writer, as zonedb_build.
 * Returns 0 and *out (publish it), SHOAL_EINVAL (no zone i) or
 * SHOAL_ENOMEM. O(zones): a set published anew. zonedb_swap changes one
 * zone of the published set in place, at the cost of that zone alone.
 */
int zonedb_replace(const zonedb_t *old, size_t i, const struct zone *z, const char *error,
		   zonedb_t **out);

/* What zonedb_swap took out of a set: freed after a grace period. */
typedef struct zonedb_retired {
	struct zone *zone;
	char *error;
} zonedb_retired_t;

/*
 * Zone i of db serves z from now on (a reference is taken; NULL: nothing,
 * SERVFAIL) and its last error becomes `error` (NULL or "": none), in
 * place: every set holding the zone's entry sees it at once (readers load
 * the version with acquire; the set itself, its other zones, the zone's
 * statistics slot and journal stay as they are). What it replaced goes
 * into *retired, for zonedb_retired_free after a grace period
 * (synchronize_rcu). For the one writer of the published set (reload's
 * writer lock), as zonedb_build. Returns 0, SHOAL_EINVAL (no zone i) or
 * SHOAL_ENOMEM (nothing changed).
 */
int zonedb_swap(zonedb_t *db, size_t i, const struct zone *z, const char *error,
		zonedb_retired_t *retired);

/* Drop what zonedb_swap retired, once no reader can hold it. Any thread. */
void zonedb_retired_free(zonedb_retired_t *retired);

/*
 * Read zone i of db anew from spec's file, as zonedb_build with only
 * would, without building a set: *z gets the new version (the journal
 * records its changes from the version served), for zonedb_swap. Returns
 * 0; 1 when there is nothing to read (a secondary: its versions come from
 * its primaries); or a negative error with the first "FILE:LINE: reason"
 * in error[0..cap) (the version served stays: swap it back in with the
 * error to show it). SHOAL_EINVAL when spec's file is not zone i's.
 * The writer's thread; messages go to msg.
 */
int zonedb_load_zone(const zonedb_t *db, size_t i, const zone_spec_t *spec, zone_msg_fn msg,
		     void *msg_arg, struct zone **z, char *error, size_t cap);

/*
 * The statistics slots new to db (zones it has that the set it was built
 * over did not), *n of them: the counters to zero before it is published.
 * Valid as long as db.
 */
/*
 * zonedb_load_zone with the changes cs (from the serial served) applied to
 * zone i's version served (zone_apply) instead of reading its file: *z
 * the next version, cs recorded in its journal for IXFR, at the cost of
 * the changes, not of the zone. Returns 0, or as zonedb_load_zone
 * (SHOAL_EINVAL: nothing served, or cs does not start at its serial).
 * The writer's thread.
 */
struct changeset;
int zonedb_apply_zone(const zonedb_t *db, size_t i, const zone_spec_t *spec,
		      const struct changeset *cs, zone_msg_fn msg, void *msg_arg, struct zone **z,
		      char *error, size_t cap);

const uint32_t *zonedb_fresh_slots(const zonedb_t *db, size_t *n);

struct journal;

/*
 * Remove the journal files (zonedb_build_t.journal_dir) of the zones of
 * old that db, about to replace it, no longer has: a zone removed from
 * the configuration keeps no history on disk. O(zones of old); the one
 * writer, before db is published.
 */
void zonedb_remove_journals(const zonedb_t *old, const zonedb_t *db);

/*
 * The same for old's zone i alone, which a zone-remove took out (a set
 * derived with ZONEDB_REMOVED): one zone's cost, not a lookup per zone.
 * The writer's thread, as zonedb_remove_journals.
 */
void zonedb_remove_journal_at(const zonedb_t *old, size_t i);

/*
 * The IXFR history of the zone whose apex is `apex` (lowercase wire), or
 * NULL for a zone db does not have or that has none yet. Each zone has at
 * most one journal for as long as it is configured: zonedb_build carries
 * it from `old` to the new set and, when a reload brings a newer serial,
 * records the changes from the version served to the one loaded (its
 * spec's limits.max_journal bounds it; 0 turns recording off). A primary
 * zone's is made with its first change kept (a million zones that never
 * change keep none); a secondary's at once, for its transfers in. Read-only on db; any thread
 * inside a read-side section of a published db (journal_ref to keep it after); one hash lookup.
 */
struct journal *zonedb_journal(const zonedb_t *db, const uint8_t *apex);

/*
 * Zone i's journal, made (with its file in the set's folder) when it has
 * none yet, bounded by max_octets (its ixfr-journal-size: 0 keeps none,
 * NULL); NULL too when out of memory. For a change the writer records
 * itself (a dynamic update) before it publishes. The one writer.
 */
struct journal *zonedb_journal_make(const zonedb_t *db, size_t i, size_t max_octets);

/*
 * The RCU-published current set. Readers (threads registered with liburcu):
 * zonedb_read_lock(); db = zonedb_current(&ref); ... zonedb_read_unlock(&ref).
 * The writer (one thread at a time) calls zonedb_publish: it swaps the
 * pointer, waits for a grace period (synchronize_rcu) and frees the
 * previous set.
 */
typedef struct zonedb_ref {
	zonedb_t *db;
} zonedb_ref_t;

const zonedb_t *zonedb_current(zonedb_ref_t *ref);
void zonedb_publish(zonedb_ref_t *ref, zonedb_t *db);

/*
 * Wait for a grace period of the readers of ref (after zonedb_swap into
 * the set published there: then zonedb_retired_free). In a
 * ThreadSanitizer build it also tells TSan what the grace period
 * guarantees, as zonedb_publish does. The writer's thread.
 */
void zonedb_synchronize(zonedb_ref_t *ref);

/*
 * A read-side section (rcu_read_lock/rcu_read_unlock). In a ThreadSanitizer
 * build they also tell TSan what the grace period guarantees (that every
 * read of the old set happens before zonedb_publish frees it), which it
 * cannot see through liburcu's barriers.
 */
void zonedb_read_lock(void);
void zonedb_read_unlock(zonedb_ref_t *ref);

#endif
