/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What zone/ shares between its own files: the arena, the store builder, messages. */
#ifndef SHOAL_ZONE_INTERNAL_H
#define SHOAL_ZONE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/changeset.h"
#include "zone/load.h"
#include "zone/sign_zone.h"
#include "zone/zone.h"
#include "zone/zonedb.h"

/*
 * A bump allocator: a few big blocks per zone, freed together. Not
 * thread-safe (only the loading thread allocates).
 */
typedef struct zarena zarena_t;

zarena_t *zarena_new(void);
/* n octets aligned for any object; NULL when out of memory. */
void *zarena_alloc(zarena_t *a, size_t n);
void zarena_free(zarena_t *a);
/* Move every block of `from` into a (the memory stays where it is) and free from. */
int zarena_adopt(zarena_t *a, zarena_t *from);

/* Give back the unused ends of the arena's blocks: it is full for good. */
void zarena_trim(zarena_t *a);
/* Octets the arena took from malloc (for measuring). */
size_t zarena_size(const zarena_t *a);

/* ---- versions: nodes, lineages, trees, the hash index ---- */

/*
 * What the versions that grew from one full build of a zone share (its
 * lineage): the arena its nodes lie in, freed with the last of them. A
 * version made by applying changes to another (zone/apply.c) joins that
 * one's lineage and shares its nodes; the nodes it makes itself are heap
 * blocks, freed when no version holds them. An arena node no version
 * holds any more is only counted (dead) until the lineage goes: once
 * half the arena is dead, the next change rebuilds the zone whole.
 */
typedef struct zlin {
	unsigned refs;     /* atomic: its versions */
	zarena_t *arena;   /* the build's nodes */
	size_t dead;       /* atomic: octets of arena nodes no version holds */
	size_t heap;       /* atomic: octets of heap nodes */
	size_t heap_count; /* atomic: heap nodes */
} zlin_t;

/* A lineage of one version (its first), taking over arena. NULL on ENOMEM. */
zlin_t *zlin_new(zarena_t *arena);
/* One version less; the last frees the arena. Any thread; NULL is fine. */
void zlin_unref(zlin_t *lin);

/*
 * A change being written (the build of a version): tree nodes, hash pages
 * and nodes it made carry its number, and only those it writes in place.
 */
typedef struct zwrite {
	uint64_t gen; /* zone_gen_next(): never the same twice */
	zlin_t *lin;
} zwrite_t;

uint64_t zone_gen_next(void);

/* Octets of node n's block before the node (RRSIG groups and RRsets). */
size_t znode_head(const znode_t *n);

/* Where n's block starts, and its size. */
static inline uint8_t *znode_block(const znode_t *n)
{
	return (uint8_t *)n - znode_head(n);
}
static inline size_t znode_size(const znode_t *n)
{
	return znode_head(n) + sizeof(znode_t) + n->tail;
}

/* n's link (ZNODE_LINKED): its NSEC3 node (zone_nsec3_match), or NULL. */
static inline const znode_t **znode_link(znode_t *n)
{
	return (const znode_t **)(void *)znode_ext(n);
}

/* A chain owner's way back (ZNODE_HASHED): the name node whose NSEC3 it is, or NULL. */
static inline const znode_t **znode_back(const znode_t *n)
{
	return (const znode_t **)(void *)(znode_ext(n) + sizeof(void *));
}

/* n's NSEC3 hash (ZNODE_HASHED), after the link and the way back. */
static inline const uint8_t *znode_hash(const znode_t *n)
{
	return znode_ext(n) + 2 * sizeof(void *);
}

/* The room after a block's name: nothing, a link, or a link, a way back and a hash. */
#define ZNODE_EXT_LINK 8
#define ZNODE_EXT_HASH (8 + 8 + 24)

/*
 * A heap block of head octets, a node (zeroed but for tail, flags
 * ZNODE_HEAP | ZNODE_FRESH, no holder) and tail octets; NULL on ENOMEM.
 */
znode_t *znode_alloc(zlin_t *lin, size_t head, size_t tail);

/* A heap copy of n (its RRsets pointing into the copy), fresh, no holder. */
znode_t *znode_copy(zlin_t *lin, const znode_t *n);

/*
 * One holder of n less; the last frees it (znode_free), unless defer: a
 * change frees the nodes it made itself once it is done. Any thread.
 */
void znode_drop(zlin_t *lin, const znode_t *n, bool defer);

/* Free n: a heap block goes back to malloc, an arena block is counted dead. */
void znode_free(zlin_t *lin, znode_t *n);

/* How a tree is ordered (ztree_t.kind). */
enum ztree_kind {
	ZTREE_NAMES,  /* owner names, canonical order (RFC 4034 6.1) */
	ZTREE_HASHES, /* NSEC3 hashes (znode_hash) */
};

/* What a tree is searched by: a name (lowercase wire) with its labels, or a hash. */
typedef struct zkey {
	const uint8_t *name;
	const uint8_t *hash;
	int labels;
	uint8_t off[NAME_MAXLABELS];
} zkey_t;

void zkey_name(zkey_t *k, const uint8_t *name);
void zkey_hash(zkey_t *k, const uint8_t *hash);
/* Node n's own key in a tree of that kind. */
void zkey_of(zkey_t *k, enum ztree_kind kind, const znode_t *n);

/* An empty tree. owns: it holds a reference on each node it holds. */
void ztree_init(ztree_t *t, enum ztree_kind kind, bool owns);

/*
 * t (empty, initialised) made of nodes[0..n), in t's order, no two alike,
 * its tree nodes in arena (a build's: never written, copied by a change)
 * or, NULL, from malloc. 0 or SHOAL_ENOMEM.
 */
int ztree_build(ztree_t *t, const znode_t *const *nodes, size_t n, uint64_t gen, zarena_t *arena);

/* The last node at or before k, or NULL. Any thread; no allocation. */
const znode_t *ztree_find_le(const ztree_t *t, const zkey_t *k);
/* The last node before k, or NULL. Any thread; no allocation. */
const znode_t *ztree_find_lt(const ztree_t *t, const zkey_t *k);
/* The node at k, or NULL. */
const znode_t *ztree_find(const ztree_t *t, const zkey_t *k);
/* The last node, or NULL for an empty tree. */
const znode_t *ztree_last(const ztree_t *t);

/* A walk over t (zone_iter_t): the first node, then the next, NULL at the end. */
const znode_t *ztree_first(const ztree_t *t, zone_iter_t *it);
const znode_t *ztree_next(zone_iter_t *it);
/* The walk from the first node after k. */
const znode_t *ztree_seek_gt(const ztree_t *t, const zkey_t *k, zone_iter_t *it);

/* dst holds what src holds (one more holder on its root). */
void ztree_share(ztree_t *dst, const ztree_t *src);

/*
 * Set k to node n in t, or remove k (n NULL), copying the tree nodes on
 * the path that the change w does not own yet. The caller keeps every
 * tree it writes valid for reading between two calls. 0 or SHOAL_ENOMEM
 * (t is still a valid tree then, to be released).
 */
int ztree_set(ztree_t *t, const zkey_t *k, const znode_t *n, const zwrite_t *w);

/* Drop t's hold on its tree nodes (and theirs on its nodes); defer as znode_drop. */
void ztree_release(ztree_t *t, zlin_t *lin, bool defer);

/*
 * Free t, which no other version shares (the last of its lineage): no
 * counts looked at. heap_nodes: free its heap nodes too (a tree of names).
 */
void ztree_free_alone(ztree_t *t, zlin_t *lin, bool heap_nodes);

/* Octets of t's tree nodes from malloc (those in an arena are counted with it). */
size_t ztree_memory(const ztree_t *t);

/*
 * z's hash index for the nodes of z->names, at a load of 3/4 (more pages
 * when one would be too full), its directory and pages in z's lineage's
 * arena (a build's: copied by a change before it writes them). 0,
 * SHOAL_ETIMEOUT (*cancel), SHOAL_ENOMEM or SHOAL_EUNSUPPORTED (a node
 * at an address a slot cannot hold).
 */
int zhash_build(zone_t *z, uint64_t gen, const bool *cancel);

/* dst's directory holds src's pages (one more holder on each). 0 or SHOAL_ENOMEM. */
int zhash_share(zone_t *dst, const zone_t *src);

/*
 * Point name at node n in z's index, or remove it (n NULL), copying the
 * page first when another change (or a build) made it. A page too full
 * (or an index past 7/8) makes the whole index anew with twice the
 * slots, from z->names, which must hold n already. 0 or SHOAL_ENOMEM.
 */
int zhash_put(zone_t *z, const uint8_t *name, const znode_t *n, const zwrite_t *w);

/* Drop z's hold on its pages (alone: no other version holds them) and its directory. */
void zhash_release(zone_t *z, bool alone);

/* Octets of z's pages and directory from malloc (those in the arena are counted with it). */
size_t zhash_memory(const zone_t *z);

/*
 * Ask for huge pages under p[0..n) (an allocation of 2 MiB or more about
 * to be filled; nothing for smaller ones): the advice covers the pages
 * the allocation touches, so a mapping of its own stays one mapping.
 */
void zone_huge_pages(void *p, size_t n);

/*
 * Make the array *p of *cap elements of elem octets hold at least need,
 * doubling. False (and *p unchanged) when out of memory.
 */
bool zone_grow(void **p, size_t *cap, size_t need, size_t elem);

/*
 * A new file beside path, named path.XXXXXXXX (tmp, cap octets): made
 * with O_EXCL, never through a link, and 0666 less the umask as any file
 * the process makes (mkstemp's are 0600 whatever the umask). Returns its
 * descriptor, or -errno. Any thread (zone/write.c, zone/jfile.c).
 */
int zone_make_temp(const char *path, char *tmp, size_t cap);

/*
 * Finish the temporary file tmp (descriptor fd, from zone_make_temp)
 * written for path: unless err (the writing's result) is already an
 * error, fsync it, close it, rename it over path and sync the folder, so
 * path is the old file or the new one whatever a crash interrupts. fd is
 * closed and, on an error, tmp removed. Returns 0 or the first error.
 */
int zone_temp_commit(int fd, const char *tmp, const char *path, int err);

/* Make a new name, a rename or a removal durable: sync the folder of path; 0 or -errno. */
int zone_sync_folder(const char *path);

/*
 * Report a message about a zone file through fn: "FILE:LINE: text", or
 * "FILE: text" when line is 0. printf-style.
 */
void zone_report(zone_msg_fn fn, void *arg, bool is_error, const char *file, unsigned line,
		 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * The messages of one load or transfer, bounded: a file of 10^5 bad
 * records must not write 10^5 lines. The first LOAD_MAX_ERRORS errors and
 * as many warnings go on to fn; the rest are only counted, and
 * zone_msgs_end says how many were not shown. Counts are atomic, so the
 * threads of one load may share it.
 */
typedef struct zone_msgs {
	zone_msg_fn fn;
	void *arg;
	unsigned errors, warnings; /* seen, shown or not */
} zone_msgs_t;

/* Start counting for fn(arg) (fn may be NULL: nothing is shown). */
void zone_msgs_init(zone_msgs_t *m, zone_msg_fn fn, void *arg);

/* A zone_msg_fn with a zone_msgs_t as its arg: pass msg on within the bound. */
void zone_msgs_pass(void *arg, bool is_error, const char *msg);

/* Count n messages that were never formatted (a stretch's beyond its own bound). */
void zone_msgs_skip(zone_msgs_t *m, bool is_error, unsigned n);

/* Say "FILE: N more warnings/errors not shown" for those held back, once. */
void zone_msgs_end(zone_msgs_t *m, const char *file);

/*
 * The store builder: collects records (in any order) from the loader, then
 * sorts, checks and compiles them into a zone_t. One thread.
 */
typedef struct zbuild zbuild_t;

/*
 * file: the zone's main file (named in zone-wide messages); origin: the apex
 * (wire form, any case). Both copied. NULL on ENOMEM.
 */
zbuild_t *zbuild_new(const char *file, const uint8_t *origin, zone_msg_fn msg, void *msg_arg);

/* Bound what one name may hold (see zone_limits_t); NULL: the defaults. */
void zbuild_set_limits(zbuild_t *b, const zone_limits_t *limits);

/*
 * Add one record read from file:line; text is the record's first line as
 * written (to see RFC 3597's generic form "\# N" there), or NULL. owner
 * and rdata are uncompressed wire (owner any case; names in rdata as
 * written). Records outside the zone are
 * ignored with a warning; a class other than IN, a meta type and RDATA that
 * does not fit its type's layout (proto/rdata.h) are errors. Returns 0,
 * SHOAL_EZONE (reported, loading goes on to find more errors) or
 * SHOAL_ENOMEM.
 */
int zbuild_add(zbuild_t *b, const char *file, unsigned line, const char *text, const uint8_t *owner,
	       uint16_t type, uint16_t rclass, uint32_t ttl, const uint8_t *rdata, uint16_t rdlen);

/*
 * The length a record in RFC 3597's generic form declares ("\# N" on its
 * first line `text`, outside quotes and comments), or -1; *data (when data
 * is not NULL) is where the octets' hex starts.
 */
long zbuild_generic_length(const char *text, const char **data);

/*
 * Append every record of `from` (built for the same zone, for example from
 * one stretch of a file read on another thread) after those of b, in its
 * order, and free `from`. Returns 0 or SHOAL_ENOMEM (from is freed too).
 */
int zbuild_merge(zbuild_t *b, zbuild_t *from);

/* The zone's apex, lowercase wire form. */
const uint8_t *zbuild_origin(const zbuild_t *b);

/*
 * Make zbuild_finish stop with SHOAL_ETIMEOUT once *cancel is set (looked
 * at every ZONE_CANCEL_EVERY names; the flag must outlive b). NULL: never.
 */
void zbuild_watch(zbuild_t *b, const bool *cancel);

/* Note an error found by the loader, so zbuild_finish fails. */
void zbuild_fail(zbuild_t *b);

/*
 * Check and compile (RFC 1034 rules: one SOA at the apex, NS at the apex,
 * CNAME alone, glue under cuts; the limits; every RRset with its
 * signatures small enough for one TCP message), reporting through msg.
 * Frees b in all cases. Returns 0 and *out, SHOAL_EZONE or SHOAL_ENOMEM.
 */
int zbuild_finish(zbuild_t *b, zone_t **out);

void zbuild_free(zbuild_t *b);

/*
 * For zone/apply.c: the nodes of b's records (no zone around them): sorted
 * and checked as zbuild_finish does (duplicates, TTLs, SOA at the apex,
 * CNAME alone, one DNAME, the limits: reported), then one heap block of
 * lineage lin for each name, fn(arg, node) called in canonical order with
 * each (ZNODE_FRESH, no holder; its own flags not set yet). linked: every
 * node gets a link (an NSEC3 zone's), a chain owner's place a hash too.
 * Frees b. Returns 0, SHOAL_EZONE, SHOAL_ENOMEM, SHOAL_ETIMEOUT, or what
 * fn returned (which stops it).
 */
int zbuild_nodes(zbuild_t *b, zlin_t *lin, bool linked, int (*fn)(void *arg, znode_t *n),
		 void *arg);

/*
 * For a reload: b's records, sorted and checked as zbuild_finish checks
 * them (reported; the warnings of a compile, glue and NSEC3, are left to
 * zone_apply, for what changes), against the version `served`
 * of the same zone: *out (sealed, one reference) the changes from served
 * to them, in changeset_diff's form. Frees b. Returns 0, SHOAL_EZONE,
 * SHOAL_ESPACE (more than max_octets of changes; 0: no bound),
 * SHOAL_ETIMEOUT or SHOAL_ENOMEM.
 */
int zbuild_diff(zbuild_t *b, const zone_t *served, size_t max_octets, changeset_t **out);

/*
 * zone_load's read of zone file `file` for a reload of the version
 * served: the file's records, checked, diffed against served's
 * (zbuild_diff) instead of compiled, so the reload holds the version
 * served and the records read, not a second zone. As zone_load for
 * the rest (messages, limits, cancel). (load.c)
 */
int zone_load_changes(const char *file, const zone_t *served, const zone_limits_t *limits,
		      zone_msg_fn msg, void *msg_arg, size_t max_octets, changeset_t **out);

/* An empty non-terminal of lineage lin named name (lowercase), fresh; NULL on ENOMEM. */
znode_t *zbuild_ent(zlin_t *lin, const uint8_t *name, bool linked);

/* "www.example.com. A" (TYPEnnn for a type with no mnemonic) into buf; returns buf. */
const char *zone_rr_text(const uint8_t *owner, uint16_t type, char *buf, size_t cap);

/*
 * The records of names after changes (zone/merge.c): base's records of a
 * name, the changes' deletions replayed on them (a deletion of a record
 * not there is an error, reported "LABEL: ZONE: ..."), their additions
 * added, all into the builder b, which checks them as a load does. The
 * apex gets the new SOA `soa` (type, class, TTL, RDLENGTH, RDATA) in place
 * of base's. One thread.
 */
typedef struct zmerge {
	const zone_t *base;
	zbuild_t *b;
	const xfr_ops_t *ops; /* the changes (changeset.h), in record order */
	const uint8_t *soa;
	const char *label;
	zone_msg_fn msg;
	void *msg_arg;
	const uint8_t **added; /* the records one name's changes add, added last */
	size_t added_count, added_cap;
} zmerge_t;

/*
 * The records of owner (old: base's node of it, or NULL) after the ops
 * from *i on that are owner's (none: the apex gets its SOA all the same),
 * into the builder: those kept first, those the changes add after (so
 * their TTL is the RRset's, RFC 2181 5.2). *i ends past owner's ops.
 * Returns 0, SHOAL_EZONE (reported) or SHOAL_ENOMEM.
 */
int zmerge_name(zmerge_t *m, const uint8_t *owner, const znode_t *old, size_t *i);

/* 0 when the owner of op i lies inside the zone; SHOAL_EZONE (reported) when not. */
int zmerge_inside(zmerge_t *m, size_t i);

/* Every name of base and of the changes, in canonical order: the whole new zone. */
int zmerge_whole(zmerge_t *m);

/* Free what m holds (not b). */
void zmerge_clear(zmerge_t *m);

#define LOAD_MAX_ERRORS  50   /* stop reading a hopeless file after this many */
#define LOAD_DEFAULT_TTL 3600 /* without $TTL, as NSD does */

/*
 * What one zone has used of the limits: the octets of every file read
 * (a file included twice counts twice) and the $INCLUDEs followed. Shared
 * by the threads reading stretches of one file, hence atomic.
 */
typedef struct load_budget {
	uint64_t octets;
	uint32_t includes;
} load_budget_t;

struct ldns_struct_buffer;

/* One zone (or one stretch of its file) being read: load.c and its readers. */
typedef struct loader {
	zbuild_t *b;
	zone_msg_fn msg;
	void *msg_arg;
	struct ldns_struct_buffer *rdata; /* the ldns reader's RDATA buffer, or NULL */
	zone_msgs_t *msgs; /* the whole load's bound (msg is zone_msgs_pass), or NULL */
	int errors;
	zone_limits_t limits;
	load_budget_t *budget;
} loader_t;

/* Report a reading error at file:line, count it and fail the zone. */
void zload_error(loader_t *L, const char *file, unsigned line, const char *text);

/* True once zone_load_cancel(true) asked loads to stop. Any thread. */
bool zload_cancelled(void);

/* The flag zone_load_cancel sets, for a build of a load to watch. */
const bool *zload_cancel_flag(void);

/*
 * Names a long step of a build (checks, nodes, hash, NSEC3 hashes, the
 * changes since the last version) goes through between two looks at its
 * cancel flag: a cancelled build stops within this many, so an abandoned
 * reload does not hold the next one back until it ends. A transfer's
 * build watches no flag (NULL): a reload abandoned meanwhile is no reason
 * to drop it.
 */
#define ZONE_CANCEL_EVERY 1024

/* At step i of such a step: is it the time to look, and is *cancel set? */
static inline bool zone_stop_at(const bool *cancel, size_t i)
{
	return cancel && i % ZONE_CANCEL_EVERY == 0 && __atomic_load_n(cancel, __ATOMIC_RELAXED);
}

/* The same, at any step. */
static inline bool zone_stopped(const bool *cancel)
{
	return zone_stop_at(cancel, 0);
}

/*
 * Follow an $INCLUDE of `path` (already resolved against the including
 * file's folder) found at file:line, with `origin` (wire) in force inside
 * it, within the zone's include count, nesting and octet limits. A file
 * that cannot be read is an error counted at file:line. Returns 0,
 * SHOAL_ENOMEM or SHOAL_ETIMEOUT.
 */
int zload_include(loader_t *L, const char *file, unsigned line, const char *path,
		  const uint8_t *origin, int depth);

/*
 * Read text[0..size) of `file` (writable: CR before LF becomes a blank),
 * which starts after its line first_line, with Knot's zone scanner into
 * L->b: `origin` (wire) and *ttl in force at its start, and set to those
 * in force at its end; $INCLUDE nesting depth `depth`. Messages name each
 * record's first line, as the ldns reader's do. Returns 0, SHOAL_ENOMEM
 * or SHOAL_ETIMEOUT. (load_zs.c)
 */
int zload_zs(loader_t *L, const char *file, char *text, size_t size, unsigned first_line,
	     uint8_t origin[NAME_MAXLEN], uint32_t *ttl, int depth);

/*
 * For the ldns reader, which wraps numbers too big for their field: the
 * scanner's words for the first number of the record text[0..len) (its
 * TTL, or a numeric RDATA field before any field of many words) too big
 * for its field, or NULL. directive: text is a $TTL line. (load_range.c)
 */
const char *zload_range_error(const char *text, size_t len, bool directive, uint16_t type);

#define LOAD_THREADS_MAX 4

/* The threads a load may use: zone_load_set_threads, or the CPUs online; 1 to 4. */
int zload_threads(void);

/*
 * Run fn(arg, from, to) over [0, n), cut into k equal ranges (range i is
 * [n * i / k, n * (i + 1) / k)), one per thread a load may use (fewer for
 * small n); the caller's thread runs the first. Returns k when all have
 * run. fn must touch only its range's items. (parallel.c)
 */
size_t zone_parallel(size_t n, void (*fn)(void *arg, size_t from, size_t to), void *arg);

/* How many ranges zone_parallel cuts n items into (1: it runs fn once, on the caller's thread). */
size_t zone_parallel_ranges(size_t n);

/* The most threads zone_parallel_n runs a loop on. */
#define ZONE_PARALLEL_MAX 256

/*
 * zone_parallel over `threads` ranges (1 to ZONE_PARALLEL_MAX) whatever n
 * is: for loops whose items are costly (a signature each). (parallel.c)
 */
size_t zone_parallel_n(size_t n, size_t threads, void (*fn)(void *arg, size_t from, size_t to),
		       void *arg);

/*
 * Start fn(arg) on a helper thread of a load with every signal blocked: a
 * process's signals are its main thread's. fn calls zone_thread_name
 * first. The daemon starts its own threads so with thread_start
 * (server/common/thread.c), which zone/ cannot include. True when it
 * started. (parallel.c)
 */
bool zone_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Name the calling helper thread n of a load "zone-load-N", as ps -L and top -H show it. */
void zone_thread_name(unsigned n);

/*
 * How many threads zone_load may read one big file with (at most 4; 0, the
 * default: the CPUs online; 1: one), and from how many octets of records
 * a file is split (0: the default, 4 MiB). For tests; set before loading.
 */
void zone_load_set_threads(int n, size_t split_min);

/* ---- what a version's nodes are, for the build and for changes ---- */

/* The flags a node's own RRsets give it: DATA, DELEG (not at the apex), DNAME, CNAME, APEX. */
uint16_t znode_own_flags(const znode_t *n, bool apex);

/* Whether a node with these flags hides the names below it: a cut, a DNAME, or below one. */
static inline bool zflags_hide_below(uint16_t flags)
{
	return (flags & (ZNODE_DELEG | ZNODE_DNAME | ZNODE_OCCLUDED)) != 0;
}

/*
 * RFC 9471: whether the name server in the NS RDATA rdata[0..rdlen) of
 * the cut `cut` lies below it with no address in z; its name to text.
 */
bool zone_glue_missing(const zone_t *z, const znode_t *cut, const uint8_t *rdata, uint16_t rdlen,
		       char text[NAME_TEXT_MAX]);

/*
 * z's negative SOA (TTL = min(TTL, MINIMUM), RFC 2308 3) and its RRSIGs
 * with that TTL, in the version's own memory (in arena, a build's, or
 * NULL: malloc'd), in place of those it had, and its serial, from the
 * apex's SOA. 0, SHOAL_EZONE (no SOA that fits) or SHOAL_ENOMEM.
 */
int zone_neg_soa(zone_t *z, zarena_t *arena);

/* Free z's negative SOA's copies (unless in the arena); none left. */
void zone_neg_soa_free(zone_t *z);

/*
 * DNSSEC of a version being built whole (nodes[0..node_count) filled,
 * flagged, in the tree and the index): the denial mode; the NSEC owners'
 * tree, or the NSEC3 chain with every node's link. Problems (NSEC3 owners
 * that do not fit the NSEC3PARAM, an unknown hash) are warnings naming
 * `file`. Stops hashing once *cancel (NULL: never) is set. Returns 0,
 * SHOAL_EZONE (more iterations than max_iterations), SHOAL_ETIMEOUT or
 * SHOAL_ENOMEM.
 */
int zone_dnssec_build(zone_t *z, znode_t **nodes, uint64_t gen, uint32_t max_iterations,
		      zone_msg_fn msg, void *msg_arg, const char *file, const bool *cancel);

/*
 * z's NSEC3 parameters from its apex's first usable NSEC3PARAM: the
 * iterations, and the salt pointed at in the apex's block (no copy: a
 * version holds its apex, and a version with a new apex points at it
 * again). False when the apex has none.
 */
bool zone_nsec3_params(zone_t *z);

/* An NSEC3PARAM RDATA the server uses: hash 1 (SHA-1), flags 0 (RFC 5155 4.1.2). */
bool zone_nsec3param_usable(const uint8_t *rdata, uint16_t rdlen);

/* Only NSEC3 and RRSIG RRsets at n (and some). */
bool znode_only_nsec3(const znode_t *n);

/*
 * Whether n (writable) owns an NSEC3 of z's chain (room for a hash, a
 * label of base32hex right below the apex, an NSEC3 of z's parameters):
 * then its hash is written and ZNODE_CHAIN set, and ZNODE_NSEC3 when
 * that is all it holds.
 */
bool zone_nsec3_owner(const zone_t *z, znode_t *n);

/* Whether n has an NSEC3 of its own to match (not occluded, not a pure chain owner). */
bool znode_matchable(const znode_t *n);

/* Link name node n (writable) to its NSEC3 x (or NULL), and x (writable) back to n. */
void zone_nsec3_link(znode_t *n, znode_t *x);

/* z's chain owner of hash h, or NULL. */
const znode_t *zone_nsec3_owner_of(const zone_t *z, const uint8_t h[ZONE_NSEC3_HASH_LEN]);

/* Whether n belongs in the tree of NSEC owners: an NSEC, not occluded. */
bool znode_nsec_owner(const znode_t *n);

/*
 * The file of apex (lowercase wire) in dir with suffix: "DIR/NAME" SUFFIX,
 * NAME the apex's labels joined by dots, each octet other than a letter,
 * digit, '-' or '_' as %XX (the root: "DIR/" SUFFIX); the journal's
 * (jfile_path) and the keys' list (sign_key.c) are named so. Returns 0,
 * or SHOAL_ESPACE when it does not fit cap.
 */
int zone_apex_path(const char *dir, const uint8_t *apex, const char *suffix, char *dst, size_t cap);

/* ---- signing: what the full signer (sign_zone.c) shares with the incremental one ---- */

struct sign_job;
struct wire;

/* One signing's state: where the records go, with what, and scratch allocated once. */
typedef struct sign_ctx {
	changeset_t *cs;
	const sign_keyset_t *ks;
	const sign_zone_opts_t *o;
	const uint8_t *apex;
	uint32_t nsec_ttl;
	uint16_t *types; /* a node's types for its NSEC: 65536 + 3 */
	uint8_t *buf;    /* an RRset built here: SIGN_RRSET_BUF */
	/* the batch of signatures to make: what to sign, its copies, the RRSIGs made */
	struct sign_job *jobs; /* SIGN_BATCH */
	size_t job_count;
	uint8_t *arena; /* owners, and the RRsets built in buf */
	size_t arena_len, arena_cap;
	bool arena_failed;
	uint8_t *sigs; /* SIGN_BATCH slots of RRSIG_MAX */
} sign_ctx_t;

/* RFC 4034 4.1.2: 256 windows of at most 32 octets, each after its number and length. */
#define SIGN_BITMAP_MAX (256 * 34)
/* One RRset built in sign_ctx_t.buf: a record's 10 octets and its RDATA, per key or the NSEC. */
#define SIGN_RRSET_BUF (SIGN_KEYS_MAX * (10 + 2048) + 10 + NAME_MAXLEN + SIGN_BITMAP_MAX)

/*
 * A signing context for ks and o (read, not copied: they outlive it) in
 * the zone apex, with an empty changeset; NULL on ENOMEM. The caller's
 * thread; sign_ctx_free frees it and its changeset unless taken (cs set
 * to NULL).
 */
sign_ctx_t *sign_ctx_new(const sign_keyset_t *ks, const sign_zone_opts_t *o, const uint8_t *apex);
void sign_ctx_free(sign_ctx_t *c);

/*
 * The end of a signing that went as far as rc says: when 0, the batch
 * signed (sign_flush) and the changeset sealed into *out (one reference);
 * c freed either way. Returns rc, or the error of those steps.
 */
int sign_ctx_finish(sign_ctx_t *c, int rc, changeset_t **out);

/* Whether ks has a KSK and a ZSK that can sign. */
bool sign_keys_usable(const sign_keyset_t *ks);

/*
 * The SOA record old (wire: type, class, TTL, RDLENGTH, RDATA) deleted, and
 * one made of base with o->serial added and signed; c->nsec_ttl from base
 * (RFC 9077 3). Both sides' SOAs must come first.
 */
int sign_replace_soa(sign_ctx_t *c, const uint8_t *old, const uint8_t *base);

/*
 * An RRSIG by every key of role on rs at owner queued (rs's records copied
 * when they lie in c->buf, which the next RRset built reuses; else read
 * until sign_flush); a full batch signed and added first. 0 or an error.
 */
int sign_add_rrsigs(sign_ctx_t *c, const uint8_t *owner, const rrset_wire_t *rs,
		    sign_key_role_t role);

/*
 * The role of the keys that sign an RRset of type (at the apex or not):
 * the apex's CDS and CDNSKEY by the KSK (RFC 7344 4.1), all else by the ZSK.
 */
sign_key_role_t sign_signer_role(bool apex, uint16_t type);

/* One record of type with rdata[0..len) at owner, added and signed by the ZSKs. */
int sign_add_signed(sign_ctx_t *c, const uint8_t *owner, uint16_t type, uint32_t ttl,
		    const uint8_t *rdata, size_t len);

/* The batch signed over o->threads, its RRSIGs added in order on this thread. */
int sign_flush(sign_ctx_t *c);

/* Append one record of type, TTL and rdata to the RRset being built in w. */
void sign_put_record(struct wire *w, uint16_t type, uint32_t ttl, const uint8_t *rdata, size_t len);

/* Insert type t into the sorted types[0..*n). */
void sign_types_insert(uint16_t *types, size_t *n, uint16_t t);

/* The type bit maps (RFC 4034 4.1.2) of the sorted types[0..n) into w. */
void sign_put_bitmap(struct wire *w, const uint16_t *types, size_t n);

/* Where an NSEC or NSEC3 RDATA is put together: the end of c->buf. */
void sign_rdata_writer(sign_ctx_t *c, struct wire *r);

/* NSEC3PARAM's RDATA (RFC 5155 4.2) or the start of an NSEC3's (3.2) into w. */
void sign_put_nsec3_params(struct wire *w, const sign_nsec3_t *p, bool nsec3);

/* The NSEC3 hash of name (lowercase wire, RFC 5155 5) into out: 0 or SHOAL_ENOMEM. */
int sign_nsec3_hash(const sign_nsec3_t *p, const uint8_t *name, uint8_t *out);

/* The owner of the NSEC3 of hash: its base32hex label (RFC 5155 3) over the apex. */
void sign_nsec3_owner(const sign_ctx_t *c, const uint8_t *hash, uint8_t *owner);

/* Every record of set (wire) at owner deleted (sign_incr.c). 0 or a changeset error. */
int sign_del_records(sign_ctx_t *c, const uint8_t *owner, const rrset_wire_t *set);

/*
 * Whether z can be changed in place with ks and o (sign_incr.c): 0; or
 * SHOAL_EINVAL (z is not signed, ks cannot sign, o->serial is not newer
 * than z's, RFC 1982), SHOAL_EUNSUPPORTED (z's DNSKEY RRset is not ks's at
 * o's TTL, or its denial not o's: to be signed whole).
 */
int sign_check_served(const zone_t *z, const sign_keyset_t *ks, const sign_zone_opts_t *o);

#endif
