/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What zone/ shares between its own files: the arena, the store builder, messages. */
#ifndef SHOAL_ZONE_INTERNAL_H
#define SHOAL_ZONE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/load.h"
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

/*
 * DNSSEC tables of a compiled zone (nodes, hash and neg_soa built): the
 * denial mode, the NSEC predecessor index or the NSEC3 chain with every
 * node's hash, and the RRSIGs of the negative SOA. Problems (NSEC3 owners
 * that do not fit the NSEC3PARAM, an unknown hash) are warnings naming
 * `file`. Stops hashing once *cancel (NULL: never) is set. Returns 0,
 * SHOAL_ETIMEOUT or SHOAL_ENOMEM.
 */
int zone_dnssec_build(zone_t *z, zarena_t *a, uint32_t max_iterations, zone_msg_fn msg,
		      void *msg_arg, const char *file, const bool *cancel);

#endif
