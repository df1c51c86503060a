/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The set of zones served: building with reload semantics, longest-match lookup, RCU publishing. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "proto/serial.h"
#include "zone/apply.h"
#include "zone/internal.h"
#include "zone/journal.h"

/*
 * Up to this many zones, a name's zone is found by comparing its tail with
 * each apex, longest first: cheaper than hashing suffixes, for the few
 * zones most servers carry. More zones use the hash of apexes.
 */
#define ZONEDB_SCAN_MAX 8

/*
 * What a zone match reads comes first, so that for an apex of up to 50
 * octets it is one cache line (entries are allocated on cache lines).
 */
typedef struct zentry {
	_Alignas(64) zone_t *zone; /* the version served, or NULL */
	uint32_t slot;             /* statistics slot, 0 for none (zonedb_zone_slot) */
	uint8_t apex_len;
	uint8_t apex[NAME_MAXLEN]; /* lowercase wire form */
	bool slot_fresh;           /* the slot is new to this zone */
	char *file;
	journal_t *journal;       /* shared with the sets before and after */
	char name[NAME_TEXT_MAX]; /* presentation form with the final dot */
	char last_error[512];
} zentry_t;
_Static_assert(offsetof(zentry_t, apex) <= 16, "a short apex shares the entry's first line");

/* A bucket of the apex hash: 0 idx means empty. */
typedef struct apex_slot {
	uint32_t tag; /* upper hash bits, to skip most compares */
	uint32_t idx; /* entry index + 1 */
} apex_slot_t;

/*
 * A zone match reads the first 64 octets only (the set is allocated on a
 * cache line): at a moderate load each query finds the caches cold.
 */
struct zonedb {
	_Alignas(64) zentry_t *entries;
	apex_slot_t *apex_hash; /* loaded zones by apex; idx = entry + 1 */
	uint32_t apex_mask;
	uint32_t scan_count;
	/* few zones: entries by apex length, longest first; lengths here, not in the entries */
	struct {
		uint8_t entry;
		uint8_t len;
	} scan[ZONEDB_SCAN_MAX];
	int max_labels;          /* deepest apex: where label stripping starts */
	const uint8_t *hash_key; /* zone_hash_key(), read without pthread_once */
	size_t count;
	uint32_t max_slot; /* the highest statistics slot of the entries */
	const void *owner; /* zonedb_set_owner */
};
_Static_assert(offsetof(zonedb_t, max_labels) <= 64, "a zone match reads one cache line");

/* A zeroed set with n zeroed entries, each on cache lines; NULL when out of memory. */
static zonedb_t *db_alloc(size_t n)
{
	size_t size = (n ? n : 1) * sizeof(zentry_t);
	zonedb_t *db = aligned_alloc(_Alignof(zonedb_t), sizeof(*db));
	zentry_t *e = aligned_alloc(_Alignof(zentry_t), size);
	if (!db || !e) {
		free(db);
		free(e);
		return NULL;
	}
	memset(db, 0, sizeof(*db));
	memset(e, 0, size);
	db->entries = e;
	return db;
}

/* Passes messages on and keeps the first error for zone_info. */
typedef struct msg_tap {
	zone_msg_fn fn;
	void *arg;
	char *first_error;
	size_t cap;
} msg_tap_t;

static void tap_msg(void *arg, bool is_error, const char *msg)
{
	msg_tap_t *t = arg;
	if (is_error && t->first_error[0] == '\0')
		snprintf(t->first_error, t->cap, "%s", msg);
	if (t->fn)
		t->fn(t->arg, is_error, msg);
}

/* Zone name text to lowercase wire; a missing final dot is implied. */
static int parse_zone_name(const char *text, uint8_t dst[NAME_MAXLEN])
{
	char buf[NAME_TEXT_MAX + 2];
	if (!text)
		return SHOAL_ENAME;
	size_t len = strlen(text);
	if (len == 0 || len > NAME_TEXT_MAX - 1)
		return SHOAL_ENAME;
	snprintf(buf, sizeof(buf), "%s%s", text, text[len - 1] == '.' ? "" : ".");
	int n = name_from_text(buf, NULL, dst);
	if (n > 0)
		name_lower(dst);
	return n;
}

static const zentry_t *find_entry(const zonedb_t *db, const uint8_t *apex)
{
	for (size_t i = 0; db && i < db->count; i++)
		if (name_equal(db->entries[i].apex, apex) && db->entries[i].apex_len)
			return &db->entries[i];
	return NULL;
}

static int build_apex_hash(zonedb_t *db)
{
	size_t cap = 8;
	while (cap < db->count * 2)
		cap *= 2;
	db->apex_hash = calloc(cap, sizeof(apex_slot_t));
	if (!db->apex_hash)
		return SHOAL_ENOMEM;
	db->apex_mask = (uint32_t)(cap - 1);
	db->hash_key = zone_hash_key();
	for (size_t i = 0; i < db->count; i++) {
		const zentry_t *e = &db->entries[i];
		if (!e->apex_len)
			continue; /* a bad name; a zone that did not load stays (SERVFAIL) */
		uint64_t h = name_hash(e->apex, db->hash_key);
		uint32_t j = (uint32_t)h & db->apex_mask;
		while (db->apex_hash[j].idx)
			j = (j + 1) & db->apex_mask;
		db->apex_hash[j] = (apex_slot_t){ (uint32_t)(h >> 32), (uint32_t)(i + 1) };
		int labels = name_labels(e->apex);
		if (labels > db->max_labels)
			db->max_labels = labels;
		if (db->count <= ZONEDB_SCAN_MAX) {
			uint32_t k = db->scan_count++;
			for (; k > 0 && db->scan[k - 1].len < e->apex_len; k--)
				db->scan[k] = db->scan[k - 1];
			db->scan[k].entry = (uint8_t)i; /* i < ZONEDB_SCAN_MAX */
			db->scan[k].len = e->apex_len;
		}
	}
	return 0;
}

/*
 * Statistics slots: a zone of `old` keeps its own; a new one takes the
 * lowest slot free in both sets, as workers may count into old's slots
 * until the grace period after this set is published.
 */
static int assign_slots(zonedb_t *db, const zonedb_t *old)
{
	size_t cap = (old ? old->max_slot : 0) + db->count + 2;
	bool *used = calloc(cap, sizeof(bool));
	if (!used)
		return SHOAL_ENOMEM;
	used[0] = true;
	for (size_t i = 0; old && i < old->count; i++)
		used[old->entries[i].slot] = true;
	for (size_t i = 0; i < db->count; i++) {
		zentry_t *e = &db->entries[i];
		const zentry_t *prev = e->apex_len ? find_entry(old, e->apex) : NULL;
		if (prev && prev->slot)
			e->slot = prev->slot;
	}
	uint32_t next = 1;
	for (size_t i = 0; i < db->count; i++) {
		zentry_t *e = &db->entries[i];
		if (e->slot || !e->apex_len)
			continue;
		while (used[next])
			next++;
		e->slot = next;
		e->slot_fresh = true;
		used[next] = true;
	}
	for (size_t i = 0; i < db->count; i++)
		if (db->entries[i].slot > db->max_slot)
			db->max_slot = db->entries[i].slot;
	free(used);
	return 0;
}

/*
 * A reload brought serial `now` where `was` was served: record the
 * changes cs in the journal for IXFR when the serial went forward (RFC
 * 1982); otherwise the history no longer leads to what is served, and
 * goes. cs is NULL when the changes could not be had (err: bigger than
 * the journal and than what is worth applying, or no memory). Takes no
 * reference.
 */
static void record_change(zentry_t *e, const zone_t *was, uint32_t now, const changeset_t *cs,
			  int err, zone_msg_fn msg, void *msg_arg)
{
	journal_info_t ji;
	journal_get_info(e->journal, &ji);
	if (ji.max_octets == 0)
		return;
	if (!cs || cs->octets > ji.max_octets) {
		zone_report(msg, msg_arg, false, e->file, 0,
			    "the changes from serial %u to %u %s: "
			    "secondaries will transfer the whole zone",
			    was->serial, now,
			    cs || err == SHOAL_ESPACE ? "take more than the IXFR journal holds"
						      : "found no memory");
		journal_clear(e->journal);
		return;
	}
	bool changed = cs->del.rr_count > 1 || cs->add.rr_count > 1;
	if (serial_gt(now, was->serial)) {
		journal_add(e->journal, changeset_ref(cs));
		return;
	}
	if (!changed && now == was->serial)
		return; /* the same version read again */
	zone_report(msg, msg_arg, false, e->file, 0,
		    "the serial went from %u to %u, not forward "
		    "(RFC 1982)%s",
		    was->serial, now, changed ? ": secondaries will not see the changes" : "");
	journal_clear(e->journal);
}

/*
 * A reload of e's file where `was` is served: the file read and checked
 * as a load checks it, and its difference from `was` (zone_load_changes,
 * a merge walk of the records read and the version served) recorded in
 * the journal and applied to `was` (zone_apply): the version published
 * shares every node the file did not change, and the reload never holds
 * a second zone, only the records read beside the version served. A
 * difference bigger than a quarter of the zone's store (and than the
 * journal), or one that cannot be applied in place (the denial of
 * existence changes), loads the file whole instead, as before (its
 * warnings then said twice). Returns 0 and *out, or the load's error
 * (reported).
 */
static int reload_zone(zentry_t *e, const zone_t *was, const zone_limits_t *limits, zone_msg_fn msg,
		       void *msg_arg, zone_t **out)
{
	journal_info_t ji;
	journal_get_info(e->journal, &ji);
	size_t worth = zone_memory(was) / 4;
	changeset_t *cs = NULL;
	int err = zone_load_changes(e->file, was, limits, msg, msg_arg,
				    worth > ji.max_octets ? worth : ji.max_octets, &cs);
	if (err < 0 && err != SHOAL_ESPACE)
		return err;
	err = SHOAL_EUNSUPPORTED;
	if (cs && cs->octets <= worth) {
		const changeset_t *sets[1] = { cs };
		zone_apply_opts_t o = { .label = e->file,
					.limits = limits,
					.msg = msg,
					.msg_arg = msg_arg,
					.cancel = zload_cancel_flag(),
					.no_rebuild = true };
		err = zone_apply(was, sets, 1, &o, out);
	}
	if (err == SHOAL_EUNSUPPORTED)
		err = zone_load(e->file, e->apex, limits, msg, msg_arg, out);
	if (err == 0)
		record_change(e, was, (*out)->serial, cs, cs ? 0 : SHOAL_ESPACE, msg, msg_arg);
	changeset_unref(cs);
	return err;
}

int zonedb_build(const zone_spec_t *specs, size_t n, const zonedb_t *old, const char *only,
		 zone_msg_fn msg, void *msg_arg, zonedb_t **out)
{
	uint8_t only_apex[NAME_MAXLEN];
	if (only && parse_zone_name(only, only_apex) < 0)
		return SHOAL_EINVAL;
	zonedb_t *db = db_alloc(n);
	if (!db)
		return SHOAL_ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < n; i++, db->count++) {
		zentry_t *e = &db->entries[i];
		snprintf(e->name, sizeof(e->name), "%s", specs[i].name ? specs[i].name : "");
		if (!(e->file = strdup(specs[i].file ? specs[i].file : ""))) {
			rc = SHOAL_ENOMEM;
			db->count++;
			break;
		}
		int len = parse_zone_name(specs[i].name, e->apex);
		if (len < 0 || find_entry(db, e->apex)) {
			snprintf(e->last_error, sizeof(e->last_error), "%.400s: %s", e->name,
				 len < 0 ? "not a valid zone name" : "zone configured twice");
			if (msg)
				msg(msg_arg, true, e->last_error);
			memset(e->apex, 0, sizeof(e->apex));
			rc = SHOAL_EZONE;
			continue;
		}
		name_to_text(e->apex, e->name, sizeof(e->name));
		const zentry_t *prev = find_entry(old, e->apex);
		size_t journal_max = (size_t)specs[i].limits.max_journal;
		e->journal = prev ? journal_ref(prev->journal) : journal_new(journal_max);
		if (!e->journal) {
			rc = SHOAL_ENOMEM;
			db->count++;
			break;
		}
		if (prev)
			journal_set_max(e->journal, journal_max);
		const char *file = specs[i].file;
		bool secondary = specs[i].secondary;
		if (secondary && (prev || !file || !*file || access(file, F_OK) != 0)) {
			/* its versions come from the primaries; none saved yet, or one served */
			e->zone = prev && prev->zone ? (zone_t *)zone_ref(prev->zone) : NULL;
			if (prev)
				memcpy(e->last_error, prev->last_error, sizeof(e->last_error));
			e->apex_len = (uint8_t)len;
			continue;
		}
		if (prev && prev->zone &&
		    (specs[i].keep || (only && !name_equal(only_apex, e->apex)))) {
			/* not asked to reload: share the version being served */
			e->zone = (zone_t *)zone_ref(prev->zone);
			memcpy(e->last_error, prev->last_error, sizeof(e->last_error));
			e->apex_len = (uint8_t)len;
			continue;
		}
		e->apex_len = (uint8_t)len;
		msg_tap_t tap = { msg, msg_arg, e->last_error, sizeof(e->last_error) };
		int err = prev && prev->zone ? reload_zone(e, prev->zone, &specs[i].limits, tap_msg,
							   &tap, &e->zone)
					     : zone_load(e->file, e->apex, &specs[i].limits,
							 tap_msg, &tap, &e->zone);
		if (err == 0)
			continue;
		if (e->last_error[0] == '\0')
			snprintf(e->last_error, sizeof(e->last_error), "%s: %s", e->file,
				 shoal_strerror(err));
		if (prev && prev->zone) {
			/* a failed reload keeps serving the old version */
			e->zone = (zone_t *)zone_ref(prev->zone);
		} else if (!secondary) {
			/* a secondary's saved copy is only a head start: it transfers anew */
			rc = SHOAL_EZONE;
		}
		if (err == SHOAL_ENOMEM || err == SHOAL_ETIMEOUT) {
			/* out of memory, or abandoned: the set being served stays */
			rc = err;
			db->count++;
			break;
		}
	}
	if (rc != SHOAL_ENOMEM && rc != SHOAL_ETIMEOUT &&
	    (build_apex_hash(db) < 0 || assign_slots(db, old) < 0))
		rc = SHOAL_ENOMEM;
	if (rc == 0 && only && !find_entry(db, only_apex)) {
		/* nothing was reloaded: say so rather than report success */
		char text[600];
		snprintf(text, sizeof(text), "%s: no such zone is configured", only);
		if (msg)
			msg(msg_arg, true, text);
		rc = SHOAL_ENOTFOUND;
	}
	if (rc == SHOAL_ENOMEM || rc == SHOAL_ETIMEOUT) {
		zonedb_free(db);
		return rc;
	}
	*out = db;
	return rc;
}

void zonedb_set_owner(zonedb_t *db, const void *owner)
{
	db->owner = owner;
}

const void *zonedb_owner(const zonedb_t *db)
{
	return db ? db->owner : NULL;
}

void zonedb_free(zonedb_t *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < db->count; i++) {
		zentry_t *e = &db->entries[i];
		zone_unref(e->zone);
		journal_unref(e->journal);
		free(e->file);
	}
	free(db->entries);
	free(db->apex_hash);
	free(db);
}

size_t zonedb_zone_count(const zonedb_t *db)
{
	return db ? db->count : 0;
}

void zonedb_zone_info(const zonedb_t *db, size_t i, zone_info_t *info)
{
	const zentry_t *e = &db->entries[i];
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", e->name);
	info->file = e->file;
	info->loaded = e->zone != NULL;
	if (e->zone) {
		info->serial = e->zone->serial;
		info->rr_count = e->zone->rr_count;
		info->loaded_at = e->zone->loaded_at;
	}
	snprintf(info->last_error, sizeof(info->last_error), "%s", e->last_error);
}

long zonedb_index(const zonedb_t *db, const uint8_t *apex)
{
	if (!db || !db->apex_hash)
		return -1;
	uint64_t h = name_hash(apex, db->hash_key);
	uint32_t tag = (uint32_t)(h >> 32);
	for (uint32_t j = (uint32_t)h & db->apex_mask; db->apex_hash[j].idx;
	     j = (j + 1) & db->apex_mask) {
		uint32_t i = db->apex_hash[j].idx - 1;
		if (db->apex_hash[j].tag == tag && name_equal(db->entries[i].apex, apex))
			return (long)i;
	}
	return -1;
}

const zone_t *zonedb_zone(const zonedb_t *db, size_t i)
{
	return db && i < db->count ? db->entries[i].zone : NULL;
}

int zonedb_replace(const zonedb_t *old, size_t i, const zone_t *z, const char *error,
		   zonedb_t **out)
{
	if (!old || i >= old->count || !old->entries[i].apex_len)
		return SHOAL_EINVAL;
	zonedb_t *db = db_alloc(old->count);
	if (!db)
		return SHOAL_ENOMEM;
	for (size_t k = 0; k < old->count; k++, db->count++) {
		const zentry_t *o = &old->entries[k];
		zentry_t *e = &db->entries[k];
		*e = *o;
		e->file = strdup(o->file);
		e->journal = o->journal ? journal_ref(o->journal) : NULL;
		e->slot_fresh = false; /* the same zones in the same statistics slots */
		const zone_t *keep = k == i ? z : o->zone;
		e->zone = keep ? (zone_t *)zone_ref(keep) : NULL;
		if (k == i)
			snprintf(e->last_error, sizeof(e->last_error), "%s", error ? error : "");
		if (!e->file) {
			db->count++;
			zonedb_free(db);
			return SHOAL_ENOMEM;
		}
	}
	db->max_slot = old->max_slot;
	db->owner = old->owner;
	if (build_apex_hash(db) < 0) {
		zonedb_free(db);
		return SHOAL_ENOMEM;
	}
	*out = db;
	return 0;
}

const char *zonedb_zone_name(const zonedb_t *db, size_t i)
{
	return db->entries[i].name;
}

uint32_t zonedb_zone_slot(const zonedb_t *db, size_t i, bool *fresh)
{
	if (fresh)
		*fresh = db->entries[i].slot_fresh;
	return db->entries[i].slot;
}

journal_t *zonedb_journal(const zonedb_t *db, const uint8_t *apex)
{
	const zentry_t *e = find_entry(db, apex);
	return e ? e->journal : NULL;
}

const zone_t *zonedb_find(const zonedb_t *db, const uint8_t *name)
{
	return zonedb_match(db, name, NULL);
}

const zone_t *zonedb_match(const zonedb_t *db, const uint8_t *name, bool *configured)
{
	uint32_t slot;
	return zonedb_match_slot(db, name, configured, &slot);
}

static const zone_t *matched(const zentry_t *e, bool *configured, uint32_t *slot)
{
	if (configured)
		*configured = true;
	*slot = e->zone ? e->slot : 0;
	return e->zone;
}

QUERY_PATH const zone_t *zonedb_match_slot(const zonedb_t *db, const uint8_t *name,
					   bool *configured, uint32_t *slot)
{
	*slot = 0;
	if (configured)
		*configured = false;
	if (!db || !db->apex_hash)
		return NULL;
	/* where each label starts; off[labels] is the final zero octet */
	uint8_t off[NAME_MAXLABELS + 1];
	int labels = 0;
	size_t p = 0;
	for (; name[p] && labels < NAME_MAXLABELS; p += name[p] + 1)
		off[labels++] = (uint8_t)p;
	off[labels] = (uint8_t)p;
	size_t len = p + 1;
	if (db->scan_count) {
		/* longer apexes first, so their tails start earlier: one pass over off */
		int k = 0;
		for (uint32_t i = 0; i < db->scan_count; i++) {
			size_t alen = db->scan[i].len;
			if (alen > len)
				continue;
			size_t at = len - alen;
			while (off[k] < at)
				k++;
			/* a tail starting inside a label is no suffix, however its octets read */
			const zentry_t *e = &db->entries[db->scan[i].entry];
			if (off[k] == at && memcmp(name + at, e->apex, alen) == 0)
				return matched(e, configured, slot);
		}
		return NULL;
	}
	/* the longest match first: start no deeper than the deepest apex */
	int skip = labels > db->max_labels ? labels - db->max_labels : 0;
	const uint8_t *key = db->hash_key;
	for (int k = skip; k <= labels; k++) {
		const uint8_t *suffix = name + off[k];
		size_t slen = len - off[k];
		uint64_t h = name_hash_lower(suffix, slen, key);
		uint32_t tag = (uint32_t)(h >> 32);
		for (uint32_t j = (uint32_t)h & db->apex_mask; db->apex_hash[j].idx;
		     j = (j + 1) & db->apex_mask) {
			const zentry_t *e = &db->entries[db->apex_hash[j].idx - 1];
			if (db->apex_hash[j].tag == tag && e->apex_len == slen &&
			    memcmp(e->apex, suffix, slen) == 0)
				return matched(e, configured, slot);
		}
	}
	return NULL;
}

/*
 * ThreadSanitizer does not see the ordering liburcu gets from membarrier
 * and its own fences: under TSan the pointer is read and swapped with
 * C11-style atomics it understands, and each reader's section end is a
 * release that the publisher acquires after the grace period. Nothing of
 * this is compiled in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define ZONEDB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ZONEDB_TSAN 1
#endif
#endif
#ifdef ZONEDB_TSAN
#include <sanitizer/tsan_interface.h>
#endif

QUERY_PATH const zonedb_t *zonedb_current(zonedb_ref_t *ref)
{
#ifdef ZONEDB_TSAN
	return __atomic_load_n(&ref->db, __ATOMIC_ACQUIRE);
#else
	return rcu_dereference(ref->db);
#endif
}

void zonedb_publish(zonedb_ref_t *ref, zonedb_t *db)
{
#ifdef ZONEDB_TSAN
	zonedb_t *old = __atomic_exchange_n(&ref->db, db, __ATOMIC_ACQ_REL);
#else
	zonedb_t *old = rcu_xchg_pointer(&ref->db, db);
#endif
	/* readers that saw old finish their read-side section before it goes */
	synchronize_rcu();
#ifdef ZONEDB_TSAN
	__tsan_acquire(ref);
#endif
	zonedb_free(old);
}

QUERY_PATH void zonedb_read_lock(void)
{
	rcu_read_lock();
}

QUERY_PATH void zonedb_read_unlock(zonedb_ref_t *ref)
{
#ifdef ZONEDB_TSAN
	__tsan_release(ref);
#else
	(void)ref;
#endif
	rcu_read_unlock();
}
