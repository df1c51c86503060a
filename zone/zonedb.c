/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The set of zones served: building with reload semantics, longest-match lookup, RCU publishing. */
#include "config.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
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
#include "zone/jfile.h"
#include "zone/journal.h"
#include "zone/sign_version.h"
#include "zone/slab.h"
#include "zone/write.h"

/*
 * Up to this many zones, a name's zone is found by comparing its tail with
 * each apex, longest first: cheaper than hashing suffixes, for the few
 * zones most servers carry. More zones use the hash of apexes.
 */
#define ZONEDB_SCAN_MAX 8
static_assert(ZONEDB_SCAN_MAX <= UINT8_MAX, "a scan entry's index fits its octet");

/* Zone loads of one build run on this many threads at most (zonedb_build_t.threads). */
#define ZONEDB_LOAD_THREADS_MAX 16

/*
 * One zone of a set, allocated on its own and shared by every set that
 * holds it unchanged (a reload of another zone, a reconfig that keeps it):
 * a new set costs a pointer per zone it keeps, not a copy. What a zone
 * match reads comes first (version, slot, apex); the entry is allocated
 * on a cache line. The version and the error are the two fields that
 * change in place (zonedb_swap), published with RCU: a transfer in or the
 * reload of one zone touches that zone alone, never the set.
 */
typedef struct zentry {
	zone_t *zone;       /* RCU: the version served, or NULL */
	uint32_t slot;      /* statistics slot, 0 for none (zonedb_zone_slot) */
	uint32_t refs;      /* the sets that hold it: their one writer's (atomic) */
	char *error;        /* RCU: NULL, or why the last (re)load failed */
	char *file;         /* "" for none: in the entry's own allocation, after the apex */
	char *bad_name;     /* a name that is no zone name, as configured (inline too); else NULL */
	journal_t *journal; /* RCU: NULL until a change is recorded (a secondary's: at once) */
	bool jfile;         /* a journal file was found for it at start (sweep_journals) */
	uint8_t apex_len;   /* 0: a name that is no zone name (not matched) */
	uint8_t apex[];     /* apex_len octets, lowercase wire form */
} zentry_t;

/*
 * A bucket of the apex hash: e NULL means empty. Two to a cache line, on
 * line boundaries: a match reads one line of the hash.
 */
typedef struct apex_slot {
	uint32_t tag; /* upper hash bits, to skip most compares */
	uint32_t idx; /* the entry's index in the set */
	zentry_t *e;
	/*
	 * The version e served when it was last put here (slot_hint): only
	 * prefetched, never read through, so one that is stale costs a
	 * wasted prefetch. At a tag match the match asks for it while it
	 * reads the entry: among a million zones the entry's miss and the
	 * version's overlap instead of following each other.
	 */
	const zone_t *hint;
	uint64_t unused; /* a power of two: a slot never straddles two lines */
} apex_slot_t;
static_assert(sizeof(apex_slot_t) == 32, "two apex slots a cache line");

/*
 * A zone match reads the first 64 octets (and, for few zones, the scan's
 * entries in the next line): the set is allocated on a cache line, as at
 * a moderate load each query finds the caches cold.
 */
struct zonedb {
	_Alignas(64) apex_slot_t *apex_hash; /* zones with a valid name, by apex */
	uint32_t apex_mask;
	uint32_t scan_count;
	/* few zones: apex lengths longest first; their entries in scan_entry */
	uint8_t scan_len[ZONEDB_SCAN_MAX];
	int max_labels;          /* deepest apex: where label stripping starts */
	const uint8_t *hash_key; /* zone_hash_key(), read without pthread_once */
	zentry_t **entries;      /* count of them, in the order of the specs */
	size_t count;
	/* zonedb_set_policies: by statistics slot (max_slot + 1), or NULL when no zone has one */
	const void **policy;
	_Alignas(64) zentry_t *scan_entry[ZONEDB_SCAN_MAX];
	uint32_t max_slot; /* the highest statistics slot of the entries */
	const void *owner; /* zonedb_set_owner */
	void *apex_raw;    /* the allocation apex_hash lies in, on a line boundary */
	uint32_t *fresh;   /* the slots new to this set (zonedb_fresh_slots) */
	size_t fresh_count;
	uint64_t *fresh_bits; /* by entry index: its slot is fresh */
	size_t *pending;      /* zonedb_build_t.defer: the entries still to read */
	size_t pending_count;
	char *journal_dir;                /* zonedb_build_t.journal_dir (a copy), or NULL */
	journal_budget_t *journal_budget; /* zonedb_build_t.journal_budget */
	uint64_t *slot_bits;              /* the statistics slots its entries use, by slot */
	size_t slot_words;
	/*
	 * A set derived from heir_of by one change (zonedb_build_t.change)
	 * holds heir_of's entries without a reference each: all but `own`
	 * (the one it added; SIZE_MAX: none). Published in heir_of's place it
	 * takes over their references (heir_of then drops only the one it had
	 * and this set has not: given_back); freed unpublished, it drops own.
	 */
	const zonedb_t *heir_of;
	size_t own;
	bool handed_over;  /* its entries' references went to the set that replaced it */
	size_t given_back; /* handed_over: the one entry it still drops (SIZE_MAX: none) */
};
_Static_assert(offsetof(zonedb_t, max_labels) <= 64, "a zone match reads one cache line");

/* Spec i of a build: from its store (spec_of) or its array. */
static const zone_spec_t *build_spec(const zonedb_build_t *b, size_t i)
{
	return b->spec_of ? b->spec_of(b->spec_arg, i) : &b->specs[i];
}

static zone_t *entry_zone(const zentry_t *e)
{
	return __atomic_load_n(&e->zone, __ATOMIC_ACQUIRE);
}

static const char *entry_error(const zentry_t *e)
{
	const char *err = __atomic_load_n(&e->error, __ATOMIC_ACQUIRE);
	return err ? err : "";
}

/*
 * A new entry for apex (len octets; 0 and bad_name for a name that is no
 * zone name) with refs 1, its file and bad name in the same allocation:
 * one allocation per zone, on cache lines. NULL when out of memory.
 */
/* The octets of an entry for an apex of len octets, its file and bad name (NULL: none). */
static size_t entry_size(size_t len, const char *file, const char *bad_name)
{
	return sizeof(zentry_t) + len + strlen(file) + 1 + (bad_name ? strlen(bad_name) + 1 : 0);
}

static zentry_t *entry_new(const uint8_t *apex, size_t len, const char *bad_name, const char *file)
{
	file = file ? file : "";
	size_t flen = strlen(file) + 1, blen = bad_name ? strlen(bad_name) + 1 : 0;
	/* a million entries read at random: packed on huge pages, not a page walk each */
	zentry_t *e = zslab_alloc(entry_size(len, file, bad_name));
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->refs = 1;
	e->apex_len = (uint8_t)len;
	if (len)
		memcpy(e->apex, apex, len);
	e->file = (char *)e->apex + len;
	memcpy(e->file, file, flen);
	if (bad_name) {
		e->bad_name = e->file + flen;
		memcpy(e->bad_name, bad_name, blen);
	}
	return e;
}

static zentry_t *entry_ref(zentry_t *e)
{
	__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
	return e;
}

static void entry_unref(zentry_t *e)
{
	if (!e || __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL))
		return;
	zone_unref(e->zone);
	journal_unref(e->journal);
	free(e->error);
	zslab_free(e, entry_size(e->apex_len, e->file, e->bad_name));
}

/*
 * Set an entry's error to text (released: readers of a published set may
 * take it); the entry is unpublished, or its error NULL, so no reader holds
 * what is freed. False when out of memory.
 */
static bool entry_set_error(zentry_t *e, const char *text)
{
	char *now = text && *text ? strdup(text) : NULL;
	free(__atomic_exchange_n(&e->error, now, __ATOMIC_ACQ_REL));
	return !text || !*text || now;
}

/* Slots of an apex hash for n zones: at most half full. */
static size_t hash_cap(size_t n)
{
	size_t cap = 8;
	while (cap < n * 2)
		cap *= 2;
	return cap;
}

/*
 * A zeroed set for n zones, its apex hash of cap slots (a power of two,
 * at least hash_cap(n)), its journals' folder a copy of journal_dir
 * (NULL: none) and their bound budget; NULL when out of memory.
 */
static zonedb_t *db_alloc_cap(size_t n, size_t cap, const char *journal_dir,
			      journal_budget_t *budget)
{
	zonedb_t *db = aligned_alloc(_Alignof(zonedb_t), sizeof(*db));
	if (!db)
		return NULL;
	memset(db, 0, sizeof(*db));
	db->entries = calloc(n ? n : 1, sizeof(*db->entries));
	/* calloc's fresh pages are zero without a write: aligned by hand */
	db->apex_raw = calloc(cap * sizeof(apex_slot_t) + 64, 1);
	db->apex_hash = (apex_slot_t *)(((uintptr_t)db->apex_raw + 63) & ~(uintptr_t)63);
	db->fresh_bits = calloc(n / 64 + 1, sizeof(uint64_t));
	db->journal_dir = journal_dir ? strdup(journal_dir) : NULL;
	db->journal_budget = budget;
	if (!db->entries || !db->apex_raw || !db->fresh_bits || (journal_dir && !db->journal_dir)) {
		zonedb_free(db);
		return NULL;
	}
	db->apex_mask = (uint32_t)(cap - 1);
	db->hash_key = zone_hash_key();
	/* a million zones' slots are 64 MiB read at random: one TLB entry per 2 MiB, not 4 KiB */
	zone_huge_pages(db->apex_hash, cap * sizeof(apex_slot_t));
	db->own = db->given_back = SIZE_MAX;
	return db;
}

/* A zeroed set for n zones, its apex hash sized for them, as db_alloc_cap. */
static zonedb_t *db_alloc(size_t n, const char *journal_dir, journal_budget_t *budget)
{
	return db_alloc_cap(n, hash_cap(n), journal_dir, budget);
}

/*
 * db->slot_bits for slots 0..max_slot (and from's words): from's bits, or
 * none but slot 0 set. False when out of memory.
 */
static bool slot_bits_alloc(zonedb_t *db, const uint64_t *from, size_t from_words)
{
	db->slot_words = db->max_slot / 64 + 1;
	if (db->slot_words < from_words)
		db->slot_words = from_words;
	db->slot_bits = calloc(db->slot_words, sizeof(uint64_t));
	if (db->slot_bits && from)
		memcpy(db->slot_bits, from, from_words * sizeof(uint64_t));
	if (db->slot_bits)
		db->slot_bits[0] |= 1; /* slot 0 is none: never given */
	return db->slot_bits != NULL;
}

/*
 * The slot of apex in db's hash: its entry's, or the empty one where it
 * would go. *tag: the tag it has or would have. Reads only.
 */
static apex_slot_t *hash_slot(const zonedb_t *db, const uint8_t *apex, size_t len, uint32_t *tag)
{
	uint64_t h = name_hash_lower(apex, len, db->hash_key);
	*tag = (uint32_t)(h >> 32);
	uint32_t j = (uint32_t)h & db->apex_mask;
	for (; db->apex_hash[j].e; j = (j + 1) & db->apex_mask) {
		const zentry_t *e = db->apex_hash[j].e;
		if (db->apex_hash[j].tag == *tag && e->apex_len == len &&
		    memcmp(e->apex, apex, len) == 0)
			break;
	}
	return &db->apex_hash[j];
}

/*
 * Entry e of db serves a new version: its slot's hint follows (a relaxed
 * store: readers only prefetch it). The writer, or a load thread of db.
 */
static void slot_hint(const zonedb_t *db, const zentry_t *e)
{
	uint32_t tag;
	apex_slot_t *slot = e->apex_len ? hash_slot(db, e->apex, e->apex_len, &tag) : NULL;
	if (slot && slot->e == e)
		__atomic_store_n(&slot->hint, entry_zone(e), __ATOMIC_RELAXED);
}

/* The entry of db whose apex is apex (lowercase wire), or NULL. db may be NULL. */
static zentry_t *find_entry(const zonedb_t *db, const uint8_t *apex)
{
	uint32_t tag;
	return db && db->apex_hash ? hash_slot(db, apex, name_length(apex), &tag)->e : NULL;
}

/*
 * Append e to db (its hash has room): entry db->count. slot: where its
 * apex goes in the hash (hash_slot's, found empty), or NULL to find it.
 */
static void db_add(zonedb_t *db, zentry_t *e, apex_slot_t *slot, uint32_t tag)
{
	size_t i = db->count++;
	db->entries[i] = e;
	if (!e->apex_len)
		return; /* a bad name; a zone that did not load stays (SERVFAIL) */
	if (!slot)
		slot = hash_slot(db, e->apex, e->apex_len, &tag);
	*slot = (apex_slot_t){ tag, (uint32_t)i, e, entry_zone(e), 0 };
	int labels = name_labels(e->apex);
	if (labels > db->max_labels)
		db->max_labels = labels;
}

/* Few zones: the scan table, apexes longest first. After every entry is in. */
static void db_scan_table(zonedb_t *db)
{
	db->scan_count = 0;
	if (db->count > ZONEDB_SCAN_MAX)
		return;
	for (size_t i = 0; i < db->count; i++) {
		zentry_t *e = db->entries[i];
		if (!e->apex_len)
			continue;
		uint32_t k = db->scan_count++;
		for (; k > 0 && db->scan_len[k - 1] < e->apex_len; k--) {
			db->scan_len[k] = db->scan_len[k - 1];
			db->scan_entry[k] = db->scan_entry[k - 1];
		}
		db->scan_len[k] = e->apex_len;
		db->scan_entry[k] = e;
	}
}

/* Passes messages on (one at a time: loads run on several threads) and keeps the first error. */
typedef struct msg_tap {
	zone_msg_fn fn;
	void *arg;
	pthread_mutex_t *lock;
	char first_error[512];
} msg_tap_t;

static void tap_msg(void *arg, bool is_error, const char *msg)
{
	msg_tap_t *t = arg;
	if (is_error && t->first_error[0] == '\0')
		snprintf(t->first_error, sizeof(t->first_error), "%s", msg);
	if (!t->fn)
		return;
	pthread_mutex_lock(t->lock);
	t->fn(t->arg, is_error, msg);
	pthread_mutex_unlock(t->lock);
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

/*
 * Statistics slots: a zone of `old` keeps its own; a new one takes the
 * lowest slot free in both sets, as workers may count into old's slots
 * until the grace period after this set is published.
 */
static int assign_slots(zonedb_t *db, const zonedb_t *old)
{
	size_t cap = (old ? old->max_slot : 0) + db->count + 2;
	bool *used = calloc(cap, sizeof(bool));
	db->fresh = calloc(db->count + 1, sizeof(*db->fresh));
	if (!used || !db->fresh) {
		free(used);
		return SHOAL_ENOMEM;
	}
	used[0] = true;
	for (size_t i = 0; old && i < old->count; i++)
		used[old->entries[i]->slot] = true;
	uint32_t next = 1;
	for (size_t i = 0; i < db->count; i++) {
		zentry_t *e = db->entries[i];
		if (e->slot || !e->apex_len)
			continue;
		while (used[next])
			next++;
		assert(next < cap); /* count + 1 slots more than old uses: one is free */
		e->slot = next;
		used[next] = true;
		db->fresh[db->fresh_count++] = next;
		db->fresh_bits[i / 64] |= 1ull << (i % 64);
	}
	for (size_t i = 0; i < db->count; i++)
		if (db->entries[i]->slot > db->max_slot)
			db->max_slot = db->entries[i]->slot;
	free(used);
	if (!slot_bits_alloc(db, NULL, 0))
		return SHOAL_ENOMEM;
	for (size_t i = 0; i < db->count; i++)
		db->slot_bits[db->entries[i]->slot / 64] |= 1ull << (db->entries[i]->slot % 64);
	return 0;
}

/*
 * Where the journal of one zone lives: the entry's pointer to it (NULL
 * until it has one), the folder of its file (NULL: memory only), the
 * zone's apex and its bound (ixfr-journal-size).
 */
typedef struct jplace {
	journal_t **jp;
	const char *dir;
	const uint8_t *apex;
	size_t max;
	journal_budget_t *budget; /* ixfr-journal-total */
	bool *found;              /* the entry's jfile: a file to read back at its first load */
} jplace_t;

/*
 * A new journal for the zone at p, with its file when p has a folder
 * (and the path fits); NULL when out of memory (secondaries then
 * transfer the whole zone).
 */
static journal_t *journal_for(const jplace_t *p)
{
	journal_t *j = journal_new(p->max);
	char path[4096];
	/* a name too long for a path in the folder keeps its history in memory only */
	if (j && p->dir && jfile_path(p->dir, p->apex, path, sizeof(path)) == 0 &&
	    journal_set_file(j, path, p->budget) < 0) {
		journal_unref(j);
		j = NULL;
	}
	return j;
}

/* The journal at p, made (and released to readers: zonedb_journal) when it has none yet. */
static journal_t *place_journal(const jplace_t *p)
{
	if (!*p->jp) {
		journal_t *j = journal_for(p);
		if (j)
			__atomic_store_n(p->jp, j, __ATOMIC_RELEASE);
	}
	return *p->jp;
}

/*
 * A secondary's journal leads past *z, the version its file holds (the
 * file is written after the journal, zonefile-sync later): the changes
 * r->ahead are applied onto *z, which becomes the newest version the
 * journal had (*z replaced), and written to the file. Returns 0 or the
 * error of the apply (*z untouched: the caller cuts them).
 */
static int apply_ahead(journal_t *j, const char *file, const zone_limits_t *limits,
		       const journal_restored_t *r, zone_t **z, zone_msg_fn msg, void *msg_arg)
{
	xfr_changes_t c;
	int err = journal_changes(j, (*z)->serial, r->newest, false, &c);
	if (err < 0)
		return err;
	zone_apply_opts_t o = { .label = file,
				.limits = limits,
				.msg = msg,
				.msg_arg = msg_arg,
				.cancel = zload_cancel_flag() };
	zone_t *next = NULL;
	err = zone_apply(*z, c.sets, c.count, &o, &next);
	xfr_changes_clear(&c);
	if (err < 0)
		return err;
	zone_report(msg, msg_arg, false, file, 0,
		    "%zu changes past its serial %u (to %u), not written to it yet, applied from "
		    "the journal",
		    r->ahead, (*z)->serial, next->serial);
	zone_unref(*z);
	*z = next;
	/* the file catches up now (a rare start: after a crash); one that fails is said, and
	 * the journal still leads from it */
	zone_write(next, file, "applied from the journal at start", limits, msg, msg_arg);
	return 0;
}

/*
 * The zone at p was just read with no version served before it: its
 * journal file, when the start found one (sweep_journals), read back
 * (journal_restore) if its history leads to z's serial, or removed, and
 * said so. Once: a zone with no file costs nothing, not even a stat.
 */
static void restore_journal(const jplace_t *p, const char *file, const zone_spec_t *spec,
			    zone_t **zp, zone_msg_fn msg, void *msg_arg)
{
	const zone_t *z = *zp;
	char path[4096];
	if (!p->dir || !*p->found || jfile_path(p->dir, p->apex, path, sizeof(path)) < 0)
		return;
	*p->found = false;
	journal_t *j = p->max ? place_journal(p) : NULL;
	if (!j) {
		jfile_remove(path, true); /* it keeps no history (or no memory for one) */
		return;
	}
	journal_restored_t r;
	/* a secondary's newer changes are applied onto its file, when they can be */
	int rc = spec->secondary ? journal_restore_ahead(j, z->serial, &r)
				 : journal_restore(j, z->serial, &r);
	if (rc == 0 && spec->secondary && r.ahead &&
	    apply_ahead(j, file, &spec->limits, &r, zp, msg, msg_arg) == 0)
		r.ahead = 0;
	else if (rc == 0 && spec->secondary && r.ahead)
		rc = journal_restore(j, z->serial, &r); /* cut, as for a primary */
	if (r.cut)
		zone_report(msg, msg_arg, false, path, 0,
			    "%zu octets of a torn or damaged change cut off its end", r.cut);
	if (r.ahead)
		zone_report(
			msg, msg_arg, false, path, 0,
			"%zu changes past serial %u (to %u) were never saved with the zone: cut",
			r.ahead, z->serial, r.newest);
	if (rc == 1)
		zone_report(msg, msg_arg, false, path, 0,
			    "its history leads to serial %u, not to the serial %u of %s: "
			    "removed (secondaries will transfer the whole zone)",
			    r.newest, z->serial, file);
	else if (rc < 0)
		zone_report(msg, msg_arg, false, path, 0, "cannot read it: %s: removed",
			    shoal_strerror(rc));
}

/* What the journal j of a zone holds at most (max, the zone's limit, when it has none yet). */
static size_t journal_limit(journal_t *j, size_t max)
{
	journal_info_t ji = { .max_octets = max };
	if (j)
		journal_get_info(j, &ji);
	return ji.max_octets;
}

/*
 * A reload brought serial `now` where `was` was served: record the
 * changes cs in the journal at p (made on the first change to keep,
 * bounded by p->max; a zone that never changes keeps none) for IXFR when
 * the serial went forward (RFC 1982); otherwise the history no longer
 * leads to what is served, and goes. cs is NULL when the changes could
 * not be had (err: bigger than the journal and than what is worth
 * applying, or no memory). Takes no reference on cs. *p->jp may be read
 * meanwhile (zonedb_journal): a new journal is released. With a file,
 * the change is on disk when this returns: before the version is published.
 */
static void record_change(const jplace_t *p, const char *file, const zone_t *was, uint32_t now,
			  const changeset_t *cs, int err, zone_msg_fn msg, void *msg_arg)
{
	journal_t *journal = *p->jp;
	size_t limit = journal_limit(journal, p->max);
	if (limit == 0)
		return;
	if (!cs || cs->octets > limit) {
		zone_report(msg, msg_arg, false, file, 0,
			    "the changes from serial %u to %u %s: "
			    "secondaries will transfer the whole zone",
			    was->serial, now,
			    cs || err == SHOAL_ESPACE ? "take more than the IXFR journal holds"
						      : "found no memory");
		if (journal)
			journal_clear(journal);
		return;
	}
	bool changed = cs->del.rr_count > 1 || cs->add.rr_count > 1;
	if (serial_gt(now, was->serial)) {
		/* no memory for a journal: secondaries transfer the whole zone */
		journal = place_journal(p);
		if (journal)
			journal_report(journal, journal_add(journal, changeset_ref(cs)), msg,
				       msg_arg);
		return;
	}
	if (!changed && now == was->serial)
		return; /* the same version read again */
	zone_report(msg, msg_arg, false, file, 0,
		    "the serial went from %u to %u, not forward "
		    "(RFC 1982)%s",
		    was->serial, now, changed ? ": secondaries will not see the changes" : "");
	if (journal)
		journal_clear(journal);
}

/*
 * A reload of zone apex from file where `was` is served: the file read
 * and checked as a load checks it, and its difference from `was`
 * (zone_load_changes, a merge walk of the records read and the version
 * served) recorded in the journal at p (as record_change) and applied to
 * `was` (zone_apply): the version published shares every node the file
 * did not change, and the reload never holds a second zone, only the
 * records read beside the version served. A difference bigger than a
 * quarter of the zone's store (and than the journal), or one that cannot
 * be applied in place (the denial of existence changes), loads the file
 * whole instead, as before (its warnings then said twice). Returns 0 and
 * *out, or the load's error (reported).
 */
static int reload_zone(const jplace_t *p, const char *file, const zone_t *was,
		       const zone_limits_t *limits, zone_msg_fn msg, void *msg_arg, zone_t **out)
{
	size_t limit = journal_limit(*p->jp, p->max), worth = zone_memory(was) / 4;
	changeset_t *cs = NULL;
	int err = zone_load_changes(file, was, limits, msg, msg_arg, worth > limit ? worth : limit,
				    &cs);
	if (err < 0 && err != SHOAL_ESPACE)
		return err;
	err = SHOAL_EUNSUPPORTED;
	if (cs && cs->octets <= worth) {
		const changeset_t *sets[1] = { cs };
		zone_apply_opts_t o = { .label = file,
					.limits = limits,
					.msg = msg,
					.msg_arg = msg_arg,
					.cancel = zload_cancel_flag(),
					.no_rebuild = true };
		err = zone_apply(was, sets, 1, &o, out);
		if (err == SHOAL_ETIMEOUT)
			zone_report(msg, msg_arg, true, file, 0, "loading cancelled");
	}
	if (err == SHOAL_EUNSUPPORTED)
		err = zone_load(file, p->apex, limits, msg, msg_arg, out);
	if (err == 0)
		record_change(p, file, was, (*out)->serial, cs, cs ? 0 : SHOAL_ESPACE, msg,
			      msg_arg);
	changeset_unref(cs);
	return err;
}

/*
 * *z, the file's version of a zone spec signs, replaced by its signed
 * version (sign_version; NULL on an error, reported), and the change from
 * `was` recorded at p as a reload's (record_change): the signatures made
 * anew are part of it.
 */
static int sign_entry(const jplace_t *p, const char *file, const zone_spec_t *spec,
		      const zone_t *was, zone_msg_fn msg, void *msg_arg, zone_t **z)
{
	zone_t *done = NULL;
	int err = sign_version(*z, was, spec->sign, file, &spec->limits, msg, msg_arg, &done);
	zone_unref(*z);
	*z = done;
	if (err < 0 || !was || done == was)
		return err;
	size_t limit = journal_limit(*p->jp, p->max);
	changeset_t *cs = NULL;
	int derr = limit ? changeset_diff(was, done, limit, &cs) : 0;
	record_change(p, file, was, done->serial, cs, derr, msg, msg_arg);
	changeset_unref(cs);
	return 0;
}

/*
 * Read the zone of entry e from its file into *z (was: the version
 * served, NULL for none, whose journal records the change; with none,
 * the journal kept in db's folder is read back). Returns 0, or a negative error
 * with its text in error[0..cap) (*z NULL). Any thread; messages go to
 * msg one at a time under lock.
 */
static int load_entry(zentry_t *e, const zonedb_t *db, const zone_spec_t *spec, const zone_t *was,
		      pthread_mutex_t *lock, zone_msg_fn msg, void *msg_arg, zone_t **z,
		      char *error, size_t cap)
{
	msg_tap_t tap = { msg, msg_arg, lock, "" };
	*z = NULL;
	error[0] = '\0';
	const char *file = e->file;
	jplace_t p = {
		&e->journal,        db->journal_dir, e->apex, (size_t)spec->limits.max_journal,
		db->journal_budget, &e->jfile
	};
	/*
	 * A signing primary's file is unsigned: diffed against the signed
	 * version served, it would delete every signature; it is read whole
	 * and signed (sign_entry). A secondary's holds the version it served,
	 * signed already when it signs its transfers (sign_transfer).
	 */
	bool signs = spec->sign && !spec->secondary;
	int err = was && !signs ? reload_zone(&p, file, was, &spec->limits, tap_msg, &tap, z)
				: zone_load(file, e->apex, &spec->limits, tap_msg, &tap, z);
	if (err == 0 && signs)
		err = sign_entry(&p, file, spec, was, tap_msg, &tap, z);
	if (err == 0 && !was)
		restore_journal(&p, file, spec, z, tap_msg, &tap);
	if (err == 0)
		return 0;
	if (tap.first_error[0] == '\0')
		snprintf(tap.first_error, sizeof(tap.first_error), "%s: %s", file,
			 shoal_strerror(err));
	snprintf(error, cap, "%s", tap.first_error);
	return err;
}

/* What the load threads of one build share. */
typedef struct load_run {
	const zonedb_build_t *b;
	zonedb_t *db;
	const size_t *todo; /* entry indices to load */
	size_t count;
	size_t next;          /* atomic: the next of todo to take */
	int stop;             /* atomic: out of memory or cancelled: take no more */
	int rc;               /* under lock: SHOAL_EZONE, or the error that stopped it */
	pthread_mutex_t lock; /* messages, rc */
} load_run_t;

/* Load entry i of run's set (a spec's zone that must be read). Any load thread. */
static void load_one(load_run_t *run, size_t i)
{
	const zonedb_build_t *b = run->b;
	zentry_t *e = run->db->entries[i];
	const zentry_t *prev = find_entry(b->old, e->apex);
	const zone_t *was = prev ? entry_zone(prev) : NULL;
	zone_t *z = NULL;
	char error[512];
	int err = load_entry(e, run->db, build_spec(b, i), was, &run->lock, b->msg, b->msg_arg, &z,
			     error, sizeof(error));
	if (!entry_set_error(e, error) && err == 0) {
		zone_unref(z);
		z = NULL;
		err = SHOAL_ENOMEM;
	}
	/* released: in a published set (zonedb_load_pending) a reader may take it at once */
	if (err == 0)
		__atomic_store_n(&e->zone, z, __ATOMIC_RELEASE);
	else if (was) /* a failed reload keeps serving the old version */
		__atomic_store_n(&e->zone, (zone_t *)zone_ref(was), __ATOMIC_RELEASE);
	slot_hint(run->db, e);
	if (err == SHOAL_ENOMEM || err == SHOAL_ETIMEOUT) {
		/* out of memory, or abandoned: the set being served stays */
		__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
	}
	bool zone_error = err < 0 && !was && !build_spec(b, i)->secondary;
	if (zone_error || err == SHOAL_ENOMEM || err == SHOAL_ETIMEOUT) {
		pthread_mutex_lock(&run->lock);
		if (run->rc != SHOAL_ENOMEM && run->rc != SHOAL_ETIMEOUT)
			run->rc = zone_error && err != SHOAL_ENOMEM && err != SHOAL_ETIMEOUT
					  ? SHOAL_EZONE
					  : err;
		pthread_mutex_unlock(&run->lock);
	}
	if (b->loaded)
		__atomic_add_fetch(b->loaded, 1, __ATOMIC_RELAXED);
}

static void *load_thread(void *arg)
{
	load_run_t *run = arg;
	for (;;) {
		size_t k = __atomic_fetch_add(&run->next, 1, __ATOMIC_RELAXED);
		if (k >= run->count || __atomic_load_n(&run->stop, __ATOMIC_RELAXED))
			break;
		load_one(run, run->todo[k]);
	}
	return NULL;
}

/*
 * Load every zone of todo on up to b->threads threads (this one among
 * them: fewer when they would each get few zones, or when one cannot be
 * started). Returns 0, SHOAL_EZONE, SHOAL_ENOMEM or SHOAL_ETIMEOUT.
 */
static int load_all(const zonedb_build_t *b, zonedb_t *db, const size_t *todo, size_t count)
{
	load_run_t run = { .b = b, .db = db, .todo = todo, .count = count };
	pthread_mutex_init(&run.lock, NULL);
	unsigned want = b->threads ? b->threads : 1;
	if (want > ZONEDB_LOAD_THREADS_MAX)
		want = ZONEDB_LOAD_THREADS_MAX;
	if (want > count / 64 + 1)
		want = (unsigned)(count / 64 + 1); /* a thread is worth 64 small zones or so */
	pthread_t threads[ZONEDB_LOAD_THREADS_MAX];
	unsigned started = 0;
	/* the threads take no signals: the calling thread's loop handles them */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (started + 1 < want &&
	       pthread_create(&threads[started], NULL, load_thread, &run) == 0)
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	load_thread(&run);
	for (unsigned t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	pthread_mutex_destroy(&run.lock);
	return run.rc;
}

/*
 * The entry a build makes for spec i (apex of len octets, prev: old's
 * entry of the same apex or NULL): old's own when nothing of it changes
 * (shared, no copy), else a new one. *load tells whether its file must be
 * read. NULL when out of memory.
 */
static zentry_t *plan_entry(const zonedb_build_t *b, size_t i, const uint8_t *apex, size_t len,
			    zentry_t *prev, const uint8_t *only_apex, bool *load)
{
	const zone_spec_t *spec = build_spec(b, i);
	const char *file = spec->file ? spec->file : "";
	zone_t *served = prev ? entry_zone(prev) : NULL;
	bool same_file = prev && !strcmp(prev->file, file);
	*load = false;
	if (spec->secondary && (prev || !*file || access(file, F_OK) != 0)) {
		/* its versions come from the primaries; none saved yet, or one served */
	} else if (served && (spec->keep || (only_apex && !name_equal(only_apex, apex)))) {
		/* not asked to reload: share the version being served */
	} else {
		*load = true;
	}
	size_t journal_max = (size_t)spec->limits.max_journal;
	if (prev && prev->journal)
		journal_set_max(prev->journal, journal_max);
	/* a secondary's journal is there from the start: its transfers in record into it */
	bool want_journal = spec->secondary && (!prev || !prev->journal);
	if (!*load && same_file && !want_journal)
		return entry_ref(prev);
	zentry_t *e = entry_new(apex, len, NULL, file);
	if (!e)
		return NULL;
	jplace_t place = { &e->journal, b->journal_dir,    e->apex,
			   journal_max, b->journal_budget, NULL };
	e->journal = prev && prev->journal ? journal_ref(prev->journal)
		     : want_journal        ? journal_for(&place)
					   : NULL;
	e->slot = prev ? prev->slot : 0;
	e->jfile = prev && prev->jfile; /* a zone not read yet still has its file to read */
	if ((want_journal && !e->journal) ||
	    (!*load && prev && !entry_set_error(e, entry_error(prev)))) {
		entry_unref(e);
		return NULL;
	}
	if (!*load && served)
		e->zone = (zone_t *)zone_ref(served);
	return e;
}

/* An entry for spec i that is no zone (a bad name, or one configured twice). */
static zentry_t *bad_entry(const zonedb_build_t *b, size_t i, bool twice)
{
	const zone_spec_t *spec = build_spec(b, i);
	const char *name = spec->name ? spec->name : "";
	zentry_t *e = entry_new(NULL, 0, name, spec->file);
	char text[512];
	snprintf(text, sizeof(text), "%.400s: %s", name,
		 twice ? "zone configured twice" : "not a valid zone name");
	if (b->msg)
		b->msg(b->msg_arg, true, text);
	if (e && !entry_set_error(e, text)) {
		entry_unref(e);
		e = NULL;
	}
	return e;
}

/*
 * old's entry of apex (len octets), or NULL. A reconfig mostly lists the
 * zones in old's order (zone-add appends one, zone-remove takes one out):
 * old's entry at *at, read in order, is tried before the hash, whose
 * slot would be a cache miss of its own for each of a million zones.
 * *at moves past the entry found.
 */
static zentry_t *old_entry(const zonedb_t *old, const uint8_t *apex, size_t len, size_t *at)
{
	if (!old)
		return NULL;
	for (size_t k = *at; k < old->count && k < *at + 2; k++) {
		zentry_t *o = old->entries[k];
		if (o->apex_len == len && !memcmp(o->apex, apex, len)) {
			*at = k + 1;
			return o;
		}
	}
	return find_entry(old, apex);
}

/*
 * Every spec's entry into db, in order; the indices of those whose file
 * must be read into todo (*count). Returns 0, SHOAL_EZONE (a bad or twice
 * configured name) or SHOAL_ENOMEM.
 */
static int plan_all(const zonedb_build_t *b, zonedb_t *db, const uint8_t *only_apex, size_t *todo,
		    size_t *count)
{
	int rc = 0;
	*count = 0;
	size_t at = 0; /* where spec i's zone is expected in old: after the last one found */
	for (size_t i = 0; i < b->n; i++) {
		uint8_t apex[NAME_MAXLEN];
		int len = parse_zone_name(build_spec(b, i)->name, apex);
		zentry_t *e;
		bool load = false;
		uint32_t tag = 0;
		/* where it goes, found once: an entry there already has its name */
		apex_slot_t *slot = len < 0 ? NULL : hash_slot(db, apex, (size_t)len, &tag);
		if (len < 0 || slot->e) {
			e = bad_entry(b, i, len >= 0);
			slot = NULL;
			rc = SHOAL_EZONE;
		} else {
			zentry_t *prev = old_entry(b->old, apex, (size_t)len, &at);
			e = plan_entry(b, i, apex, (size_t)len, prev, only_apex, &load);
		}
		if (!e)
			return SHOAL_ENOMEM;
		db_add(db, e, slot, tag);
		if (load)
			todo[(*count)++] = i;
		else if (b->loaded)
			__atomic_add_fetch(b->loaded, 1, __ATOMIC_RELAXED);
	}
	return rc;
}

/*
 * The first build's look at the journal folder, before any zone is read:
 * one readdir marks the entries that have a file (restore_journal reads
 * those alone) and removes the rest: the files of zones taken out of the
 * configuration while the server was down, temporary files a crash left
 * in a compaction. Said through b's messages.
 */
static void sweep_journals(const zonedb_build_t *b, zonedb_t *db)
{
	DIR *dir = opendir(db->journal_dir);
	if (!dir)
		return; /* made by the server; without it every write says why */
	unsigned long removed = 0;
	for (struct dirent *de; (de = readdir(dir));) {
		uint8_t apex[NAME_MAXLEN];
		zentry_t *e = jfile_apex(de->d_name, apex) > 0 ? find_entry(db, apex) : NULL;
		if (e)
			e->jfile = true;
		else if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			 unlinkat(dirfd(dir), de->d_name, 0) == 0)
			removed++;
	}
	closedir(dir);
	if (removed)
		zone_report(b->msg, b->msg_arg, false, db->journal_dir, 0,
			    "%lu file(s) of zones not configured, or left by a crash, removed",
			    removed);
}

/*
 * db's apex hash, of old's size, from old's: the indices past `removed`
 * lowered, the removed zone's slot emptied (the slots after it in its
 * run moved back where their probe allows, as linear probing deletes).
 * removed SIZE_MAX: a copy. One pass in memory order.
 */
static void hash_copy(zonedb_t *db, const zonedb_t *old, size_t removed)
{
	size_t cap = (size_t)old->apex_mask + 1, hole = SIZE_MAX;
	for (size_t j = 0; j < cap; j++) {
		apex_slot_t a = old->apex_hash[j];
		if (a.e && removed != SIZE_MAX && a.idx >= removed) {
			if (a.idx == removed) {
				hole = j;
				a = (apex_slot_t){ 0 };
			} else {
				a.idx--;
			}
		}
		db->apex_hash[j] = a;
	}
	uint32_t mask = db->apex_mask;
	for (size_t k = (hole + 1) & mask; hole != SIZE_MAX && db->apex_hash[k].e;
	     k = (k + 1) & mask) {
		const zentry_t *e = db->apex_hash[k].e;
		size_t home = (size_t)name_hash_lower(e->apex, e->apex_len, db->hash_key) & mask;
		if (((k - home) & mask) >= ((k - hole) & mask)) {
			db->apex_hash[hole] = db->apex_hash[k];
			db->apex_hash[k] = (apex_slot_t){ 0 };
			hole = k;
		}
	}
}

/* The lowest statistics slot that db's slot bits leave free (slot 0 is always set). */
static uint32_t free_slot(const zonedb_t *db)
{
	size_t w = 0;
	while (w < db->slot_words && db->slot_bits[w] == UINT64_MAX)
		w++;
	uint64_t bits = w < db->slot_words ? db->slot_bits[w] : 0;
	return (uint32_t)(64 * w + (size_t)__builtin_ctzll(~bits));
}

/* Slot s marked used in db (its bits grown when s is past them). False when out of memory. */
static bool slot_mark(zonedb_t *db, uint32_t s)
{
	size_t w = s / 64;
	if (w >= db->slot_words) {
		uint64_t *bits = realloc(db->slot_bits, (w + 1) * sizeof(uint64_t));
		if (!bits)
			return false;
		memset(bits + db->slot_words, 0, (w + 1 - db->slot_words) * sizeof(uint64_t));
		db->slot_bits = bits;
		db->slot_words = w + 1;
	}
	db->slot_bits[w] |= 1ull << (s % 64);
	if (s > db->max_slot)
		db->max_slot = s;
	return true;
}

/*
 * Spec b->n - 1 into db, derived from b->old: its entry appended (db
 * holds a reference to it alone), a statistics slot neither set uses, its
 * file read. Returns 0, SHOAL_EZONE (a bad name, or one configured
 * twice: the entry says why), SHOAL_ENOMEM or SHOAL_ETIMEOUT.
 */
static int derive_add(const zonedb_build_t *b, zonedb_t *db)
{
	size_t i = b->n - 1;
	uint8_t apex[NAME_MAXLEN];
	int len = parse_zone_name(build_spec(b, i)->name, apex);
	uint32_t tag = 0;
	apex_slot_t *slot = len < 0 ? NULL : hash_slot(db, apex, (size_t)len, &tag);
	bool bad = len < 0 || slot->e, load = false;
	zentry_t *e = bad ? bad_entry(b, i, len >= 0)
			  : plan_entry(b, i, apex, (size_t)len, NULL, NULL, &load);
	db->fresh = calloc(2, sizeof(*db->fresh));
	if (!e || !db->fresh) {
		entry_unref(e);
		return SHOAL_ENOMEM;
	}
	db_add(db, e, bad ? NULL : slot, tag);
	db->own = i;
	if (!bad) {
		e->slot = free_slot(db);
		if (!slot_mark(db, e->slot))
			return SHOAL_ENOMEM;
		db->fresh[db->fresh_count++] = e->slot;
		db->fresh_bits[i / 64] |= 1ull << (i % 64);
	}
	int rc = bad ? SHOAL_EZONE : 0;
	if (load) {
		int lrc = load_all(b, db, &i, 1);
		rc = lrc < 0 ? lrc : rc;
	} else if (b->loaded) {
		__atomic_add_fetch(b->loaded, 1, __ATOMIC_RELAXED);
	}
	return rc;
}

/*
 * The set old makes with spec b->n - 1 added (its entry appended, read
 * when it must be, a statistics slot neither set uses) or old's zone
 * b->removed taken out, holding old's other entries without references
 * (zonedb_build_t.change). Returns as zonedb_build_with.
 */
static int derive(const zonedb_build_t *b, zonedb_t **out)
{
	const zonedb_t *old = b->old;
	bool add = b->change == ZONEDB_ADDED;
	size_t n = add ? old->count + 1 : old->count - 1, removed = add ? SIZE_MAX : b->removed;
	/* old's hash size unless it must grow: a zone-remove at a power of two rebuilds nothing */
	size_t cap = (size_t)old->apex_mask + 1;
	bool grow = hash_cap(n) > cap;
	zonedb_t *db =
		db_alloc_cap(n, grow ? hash_cap(n) : cap, old->journal_dir, old->journal_budget);
	if (!db)
		return SHOAL_ENOMEM;
	db->heir_of = old;
	db->given_back = removed;
	size_t kept = add ? old->count : removed;
	memcpy(db->entries, old->entries, kept * sizeof(*db->entries));
	if (!add)
		memcpy(db->entries + kept, old->entries + kept + 1,
		       (n - kept) * sizeof(*db->entries));
	db->count = grow ? 0 : kept + (add ? 0 : n - kept);
	if (grow) { /* a power of two passed: every apex hashed again (once per doubling) */
		for (size_t i = 0; i < old->count; i++)
			db_add(db, old->entries[i], NULL, 0);
	} else {
		hash_copy(db, old, removed);
	}
	db->max_labels = old->max_labels;
	db->max_slot = old->max_slot;
	db->owner = old->owner;
	int rc = slot_bits_alloc(db, old->slot_bits, old->slot_words) ? 0 : SHOAL_ENOMEM;
	if (rc == 0 && !add) {
		/* its slot is free in the set that follows this one (old is gone by then) */
		uint32_t slot = old->entries[removed]->slot;
		db->slot_bits[slot / 64] &= ~(1ull << (slot % 64));
	}
	if (rc == 0 && add)
		rc = derive_add(b, db);
	if (rc == SHOAL_ENOMEM || rc == SHOAL_ETIMEOUT) {
		zonedb_free(db);
		return rc;
	}
	db_scan_table(db);
	*out = db;
	return rc;
}

int zonedb_build_with(const zonedb_build_t *b, zonedb_t **out)
{
	if (b->change != ZONEDB_REBUILD) {
		bool fits = b->old &&
			    (b->change == ZONEDB_ADDED
				     ? b->n == b->old->count + 1
				     : b->removed < b->old->count && b->n + 1 == b->old->count);
		if (!fits || b->only || b->defer)
			return SHOAL_EINVAL;
		return derive(b, out);
	}
	uint8_t only_apex[NAME_MAXLEN];
	if (b->only && parse_zone_name(b->only, only_apex) < 0)
		return SHOAL_EINVAL;
	zonedb_t *db = db_alloc(b->n, b->journal_dir, b->journal_budget);
	size_t *todo = calloc(b->n + 1, sizeof(*todo));
	size_t count = 0;
	int rc = db && todo ? plan_all(b, db, b->only ? only_apex : NULL, todo, &count)
			    : SHOAL_ENOMEM;
	if (rc != SHOAL_ENOMEM && !b->old && db->journal_dir)
		sweep_journals(b, db);
	if (rc != SHOAL_ENOMEM && b->defer) {
		db->pending = todo; /* zonedb_load_pending reads them */
		db->pending_count = count;
		todo = NULL;
	} else if (rc != SHOAL_ENOMEM) {
		int lrc = load_all(b, db, todo, count);
		if (lrc < 0 && (rc == 0 || lrc != SHOAL_EZONE))
			rc = lrc;
	}
	free(todo);
	if (rc != SHOAL_ENOMEM && rc != SHOAL_ETIMEOUT) {
		db_scan_table(db);
		if (assign_slots(db, b->old) < 0)
			rc = SHOAL_ENOMEM;
	}
	if (rc == 0 && b->only && !find_entry(db, only_apex)) {
		/* nothing was reloaded: say so rather than report success */
		char text[600];
		snprintf(text, sizeof(text), "%s: no such zone is configured", b->only);
		if (b->msg)
			b->msg(b->msg_arg, true, text);
		rc = SHOAL_ENOTFOUND;
	}
	if (rc == SHOAL_ENOMEM || rc == SHOAL_ETIMEOUT) {
		zonedb_free(db);
		return rc;
	}
	*out = db;
	return rc;
}

int zonedb_load_pending(zonedb_t *db, const zonedb_build_t *b)
{
	if (!db->pending_count)
		return 0;
	/* the specs are the ones db was planned from, index for index */
	if (b->n != db->count || b->old)
		return SHOAL_EINVAL;
	int rc = load_all(b, db, db->pending, db->pending_count);
	/* once: zones a cancel left unread stay unloaded until a reload reads them */
	free(db->pending);
	db->pending = NULL;
	db->pending_count = 0;
	return rc;
}

size_t zonedb_pending(const zonedb_t *db)
{
	return db ? db->pending_count : 0;
}

int zonedb_build(const zone_spec_t *specs, size_t n, const zonedb_t *old, const char *only,
		 zone_msg_fn msg, void *msg_arg, zonedb_t **out)
{
	zonedb_build_t b = {
		.specs = specs, .n = n, .old = old, .only = only, .msg = msg, .msg_arg = msg_arg
	};
	return zonedb_build_with(&b, out);
}

void zonedb_set_owner(zonedb_t *db, const void *owner)
{
	db->owner = owner;
}

const void *zonedb_owner(const zonedb_t *db)
{
	return db ? db->owner : NULL;
}

/*
 * A zeroed policy table for db's slots (db->policy), on huge pages when
 * big enough: a million zones' table is read at random, one TLB entry per
 * 2 MiB, not a page walk an answer. False when out of memory.
 */
static bool policy_alloc(zonedb_t *db)
{
	db->policy = calloc(db->max_slot + 1, sizeof(*db->policy));
	if (db->policy)
		zone_huge_pages(db->policy, (db->max_slot + 1) * sizeof(*db->policy));
	return db->policy != NULL;
}

/* db->policy made from by_index (db->count of them), or left NULL when all are. */
static int policy_table(zonedb_t *db, const void *const *by_index)
{
	free(db->policy);
	db->policy = NULL;
	for (size_t i = 0; i < db->count; i++) {
		if (!by_index[i])
			continue;
		if (!db->policy && !policy_alloc(db))
			return SHOAL_ENOMEM;
		/* a name that is no zone name (slot 0) is never matched: its policy is moot */
		db->policy[db->entries[i]->slot] = by_index[i];
	}
	return 0;
}

int zonedb_set_policies(zonedb_t *db, zonedb_policy_fn policy_of, const void *arg)
{
	const void **by_index = calloc(db->count ? db->count : 1, sizeof(*by_index));
	if (!by_index)
		return SHOAL_ENOMEM;
	for (size_t i = 0; i < db->count; i++)
		by_index[i] = db->entries[i]->apex_len ? policy_of(arg, i) : NULL;
	int rc = policy_table(db, by_index);
	free(by_index);
	return rc;
}

int zonedb_derive_policies(zonedb_t *db, const void *was, const void *now,
			   zonedb_policy_fn policy_of, const void *arg)
{
	const zonedb_t *old = db->heir_of;
	if (!old)
		return zonedb_set_policies(db, policy_of, arg);
	size_t i = db->own; /* the zone added, SIZE_MAX for none */
	const void *added = i < db->count && db->entries[i]->apex_len ? policy_of(arg, i) : NULL;
	free(db->policy);
	db->policy = NULL;
	if (!old->policy && !added && !now)
		return 0;
	/* old's slots are db's but the one added (db->max_slot covers it) */
	if (!policy_alloc(db))
		return SHOAL_ENOMEM;
	if (old->policy)
		memcpy(db->policy, old->policy, (old->max_slot + 1) * sizeof(*db->policy));
	for (size_t s = 0; was != now && s <= db->max_slot; s++)
		if (db->policy[s] == was)
			db->policy[s] = now;
	if (db->given_back < old->count) /* the zone removed: its slot is free, its policy gone */
		db->policy[old->entries[db->given_back]->slot] = NULL;
	if (added)
		db->policy[db->entries[i]->slot] = added;
	return 0;
}

void zonedb_free(zonedb_t *db)
{
	if (!db)
		return;
	/* the entries this set holds a reference to: all, or one (derived, or handed over) */
	size_t one = db->heir_of ? db->own : db->handed_over ? db->given_back : SIZE_MAX;
	if (db->heir_of || db->handed_over) {
		if (one != SIZE_MAX)
			entry_unref(db->entries[one]);
	} else {
		for (size_t i = 0; i < db->count; i++)
			entry_unref(db->entries[i]);
	}
	free(db->slot_bits);
	free(db->entries);
	free(db->apex_raw);
	free(db->fresh);
	free(db->fresh_bits);
	free(db->pending);
	free(db->journal_dir);
	free(db->policy);
	free(db);
}

size_t zonedb_zone_count(const zonedb_t *db)
{
	return db ? db->count : 0;
}

void zonedb_zone_info(const zonedb_t *db, size_t i, zone_info_t *info)
{
	const zentry_t *e = db->entries[i];
	const zone_t *z = entry_zone(e);
	info->file = e->file;
	info->loaded = z != NULL;
	info->serial = z ? z->serial : 0;
	info->rr_count = z ? z->rr_count : 0;
	info->loaded_at = z ? z->loaded_at : 0;
	zonedb_zone_name(db, i, info->name, sizeof(info->name));
	snprintf(info->last_error, sizeof(info->last_error), "%s", entry_error(e));
}

long zonedb_index(const zonedb_t *db, const uint8_t *apex)
{
	if (!db || !db->apex_hash)
		return -1;
	uint32_t tag;
	const apex_slot_t *slot = hash_slot(db, apex, name_length(apex), &tag);
	return slot->e ? (long)slot->idx : -1;
}

const zone_t *zonedb_zone(const zonedb_t *db, size_t i)
{
	return db && i < db->count ? entry_zone(db->entries[i]) : NULL;
}

int zonedb_replace(const zonedb_t *old, size_t i, const zone_t *z, const char *error,
		   zonedb_t **out)
{
	if (!old || i >= old->count || !old->entries[i]->apex_len)
		return SHOAL_EINVAL;
	const zentry_t *o = old->entries[i];
	zonedb_t *db = db_alloc(old->count, old->journal_dir, old->journal_budget);
	zentry_t *e = db ? entry_new(o->apex, o->apex_len, NULL, o->file) : NULL;
	if (!e || !entry_set_error(e, error)) {
		entry_unref(e);
		zonedb_free(db);
		return SHOAL_ENOMEM;
	}
	e->slot = o->slot;
	e->journal = o->journal ? journal_ref(o->journal) : NULL;
	e->zone = z ? (zone_t *)zone_ref(z) : NULL;
	/* the same zones in the same statistics slots: none is fresh */
	for (size_t k = 0; k < old->count; k++)
		db_add(db, k == i ? e : entry_ref(old->entries[k]), NULL, 0);
	db_scan_table(db);
	db->max_slot = old->max_slot;
	db->owner = old->owner;
	if (!slot_bits_alloc(db, old->slot_bits, old->slot_words)) {
		zonedb_free(db);
		return SHOAL_ENOMEM;
	}
	if (old->policy) {
		if (!policy_alloc(db)) {
			zonedb_free(db);
			return SHOAL_ENOMEM;
		}
		memcpy(db->policy, old->policy, (db->max_slot + 1) * sizeof(*db->policy));
	}
	*out = db;
	return 0;
}

int zonedb_swap(zonedb_t *db, size_t i, const zone_t *z, const char *error,
		zonedb_retired_t *retired)
{
	memset(retired, 0, sizeof(*retired));
	if (!db || i >= db->count || !db->entries[i]->apex_len)
		return SHOAL_EINVAL;
	char *text = error && *error ? strdup(error) : NULL;
	if (error && *error && !text)
		return SHOAL_ENOMEM;
	zentry_t *e = db->entries[i];
	zone_t *now = z ? (zone_t *)zone_ref(z) : NULL;
	retired->zone = __atomic_exchange_n(&e->zone, now, __ATOMIC_ACQ_REL);
	retired->error = __atomic_exchange_n(&e->error, text, __ATOMIC_ACQ_REL);
	slot_hint(db, e);
	return 0;
}

void zonedb_retired_free(zonedb_retired_t *retired)
{
	zone_unref(retired->zone);
	free(retired->error);
	memset(retired, 0, sizeof(*retired));
}

int zonedb_load_zone(const zonedb_t *db, size_t i, const zone_spec_t *spec, zone_msg_fn msg,
		     void *msg_arg, zone_t **z, char *error, size_t cap)
{
	*z = NULL;
	error[0] = '\0';
	if (!db || i >= db->count || !db->entries[i]->apex_len)
		return SHOAL_EINVAL;
	zentry_t *e = db->entries[i];
	const zone_t *was = entry_zone(e);
	const char *file = spec->file ? spec->file : "";
	if (strcmp(file, e->file))
		return SHOAL_EINVAL; /* a reconfig changes a zone's file, by a new entry */
	if (spec->secondary && (was || !*file || access(file, F_OK) != 0))
		return 1; /* a secondary's version comes from its primaries */
	if (e->journal)
		journal_set_max(e->journal, (size_t)spec->limits.max_journal);
	/* nothing of the entry changes here but its journal: zonedb_swap publishes the zone */
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	return load_entry(e, db, spec, was, &lock, msg, msg_arg, z, error, cap);
}

int zonedb_apply_zone(const zonedb_t *db, size_t i, const zone_spec_t *spec, const changeset_t *cs,
		      zone_msg_fn msg, void *msg_arg, zone_t **z, char *error, size_t cap)
{
	*z = NULL;
	error[0] = '\0';
	if (!db || i >= db->count || !entry_zone(db->entries[i]))
		return SHOAL_EINVAL;
	zentry_t *e = db->entries[i];
	const zone_t *was = entry_zone(e);
	jplace_t p = {
		&e->journal,        db->journal_dir, e->apex, (size_t)spec->limits.max_journal,
		db->journal_budget, &e->jfile
	};
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t o = {
		.label = e->file, .limits = &spec->limits, .msg = msg, .msg_arg = msg_arg
	};
	int err = zone_apply(was, sets, 1, &o, z);
	if (err == 0)
		record_change(&p, e->file, was, (*z)->serial, cs, 0, msg, msg_arg);
	else
		snprintf(error, cap, "%s: %s", e->file, shoal_strerror(err));
	return err;
}

const uint32_t *zonedb_fresh_slots(const zonedb_t *db, size_t *n)
{
	*n = db ? db->fresh_count : 0;
	return db ? db->fresh : NULL;
}

const char *zonedb_zone_error(const zonedb_t *db, size_t i)
{
	return entry_error(db->entries[i]);
}

void zonedb_zone_name(const zonedb_t *db, size_t i, char *buf, size_t cap)
{
	const zentry_t *e = db->entries[i];
	/* from the apex: a million zones keep no second copy of their names as text */
	if (e->bad_name || name_to_text(e->apex, buf, cap) < 0)
		snprintf(buf, cap, "%s", e->bad_name ? e->bad_name : "");
}

uint32_t zonedb_zone_slot(const zonedb_t *db, size_t i, bool *fresh)
{
	assert(i < db->count);
	if (fresh)
		*fresh = (db->fresh_bits[i / 64] >> (i % 64)) & 1;
	return db->entries[i]->slot;
}

/* The history of old's entry e, taken out of the set: its file removed, and no more writes to it.
 */
static void remove_journal(const zonedb_t *old, const zentry_t *e)
{
	char path[4096];
	journal_t *j = __atomic_load_n(&e->journal, __ATOMIC_ACQUIRE);
	if (j)
		journal_drop_file(j);
	else if (jfile_path(old->journal_dir, e->apex, path, sizeof(path)) == 0)
		jfile_remove(path, false);
}

void zonedb_remove_journals(const zonedb_t *old, const zonedb_t *db)
{
	if (!old || !old->journal_dir)
		return;
	for (size_t i = 0; i < old->count; i++) {
		const zentry_t *e = old->entries[i];
		if (e->apex_len && !find_entry(db, e->apex))
			remove_journal(old, e);
	}
}

void zonedb_remove_journal_at(const zonedb_t *old, size_t i)
{
	if (old && old->journal_dir && i < old->count && old->entries[i]->apex_len)
		remove_journal(old, old->entries[i]);
}

journal_t *zonedb_journal_make(const zonedb_t *db, size_t i, size_t max_octets)
{
	if (i >= db->count || !db->entries[i]->apex_len || max_octets == 0)
		return NULL;
	zentry_t *e = db->entries[i];
	jplace_t p = { &e->journal, db->journal_dir,    e->apex,
		       max_octets,  db->journal_budget, &e->jfile };
	return place_journal(&p);
}

journal_t *zonedb_journal(const zonedb_t *db, const uint8_t *apex)
{
	const zentry_t *e = find_entry(db, apex);
	return e ? __atomic_load_n(&e->journal, __ATOMIC_ACQUIRE) : NULL;
}

const zone_t *zonedb_find(const zonedb_t *db, const uint8_t *name)
{
	return zonedb_match(db, name, NULL);
}

const zone_t *zonedb_match(const zonedb_t *db, const uint8_t *name, bool *configured)
{
	uint32_t slot;
	const void *policy;
	return zonedb_match_slot(db, name, configured, &slot, &policy);
}

QUERY_PATH const uint8_t *zonedb_hash_key(const zonedb_t *db)
{
	return db ? db->hash_key : zone_hash_key();
}

static const zone_t *matched(const zonedb_t *db, const zentry_t *e, bool *configured,
			     uint32_t *slot, const void **policy)
{
	if (configured)
		*configured = true;
	/* before the version is looked at: a client refused learns nothing of it */
	*policy = db->policy ? db->policy[e->slot] : NULL;
	const zone_t *z = entry_zone(e);
	*slot = z ? e->slot : 0;
	__builtin_prefetch(z); /* its first line, which the lookup reads next */
	return z;
}

QUERY_PATH const zone_t *zonedb_match_slot(const zonedb_t *db, const uint8_t *name,
					   bool *configured, uint32_t *slot, const void **policy)
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
		off[labels++] = (uint8_t)p; /* p < NAME_MAXLEN (name.c) */
	off[labels] = (uint8_t)p;
	size_t len = p + 1;
	if (db->count <= ZONEDB_SCAN_MAX) {
		/* longer apexes first, so their tails start earlier: one pass over off */
		int k = 0;
		for (uint32_t i = 0; i < db->scan_count; i++) {
			size_t alen = db->scan_len[i];
			if (alen > len)
				continue;
			size_t at = len - alen;
			while (off[k] < at)
				k++;
			/* a tail starting inside a label is no suffix, however its octets read */
			const zentry_t *e = db->scan_entry[i];
			if (off[k] == at && memcmp(name + at, e->apex, alen) == 0)
				return matched(db, e, configured, slot, policy);
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
		for (uint32_t j = (uint32_t)h & db->apex_mask; db->apex_hash[j].e;
		     j = (j + 1) & db->apex_mask) {
			const apex_slot_t *s = &db->apex_hash[j];
			if (s->tag != tag)
				continue;
			/* the version's line on its way while the entry's is read */
			__builtin_prefetch(__atomic_load_n(&s->hint, __ATOMIC_RELAXED));
			if (s->e->apex_len == slen && memcmp(s->e->apex, suffix, slen) == 0)
				return matched(db, s->e, configured, slot, policy);
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

/*
 * db, derived from db->heir_of, replaces old: it takes over the
 * references to the entries it shares. old is heir_of (one writer builds
 * and publishes under its lock), so old drops only the entry db has not;
 * were it not, db takes a reference of its own to each. The writer.
 */
static void take_over(zonedb_t *db, zonedb_t *old)
{
	if (db->heir_of == old) {
		old->handed_over = true;
		old->given_back = db->given_back;
	} else {
		for (size_t i = 0; i < db->count; i++)
			if (i != db->own)
				entry_ref(db->entries[i]);
	}
	db->heir_of = NULL;
	db->given_back = SIZE_MAX;
}

void zonedb_publish(zonedb_ref_t *ref, zonedb_t *db)
{
#ifdef ZONEDB_TSAN
	zonedb_t *old = __atomic_exchange_n(&ref->db, db, __ATOMIC_ACQ_REL);
#else
	zonedb_t *old = rcu_xchg_pointer(&ref->db, db);
#endif
	if (db && db->heir_of)
		take_over(db, old);
	/* readers that saw old finish their read-side section before it goes */
	synchronize_rcu();
#ifdef ZONEDB_TSAN
	__tsan_acquire(ref);
#endif
	zonedb_free(old);
}

void zonedb_synchronize(zonedb_ref_t *ref)
{
	/* readers that saw what was swapped out finish their read-side section */
	synchronize_rcu();
#ifdef ZONEDB_TSAN
	__tsan_acquire(ref);
#else
	(void)ref;
#endif
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
