/* What zone/ shares between its own files: the arena, the store builder, messages. */
#ifndef SHOAL_ZONE_INTERNAL_H
#define SHOAL_ZONE_INTERNAL_H

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
/* Octets the arena took from malloc (for measuring). */
size_t zarena_size(const zarena_t *a);

/*
 * Report a message about a zone file through fn: "FILE:LINE: text", or
 * "FILE: text" when line is 0. printf-style.
 */
void zone_report(zone_msg_fn fn, void *arg, bool is_error, const char *file, unsigned line,
		 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

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
 * Append every record of `from` (built for the same zone, for example from
 * one stretch of a file read on another thread) after those of b, in its
 * order, and free `from`. Returns 0 or SHOAL_ENOMEM (from is freed too).
 */
int zbuild_merge(zbuild_t *b, zbuild_t *from);

/* The zone's apex, lowercase wire form. */
const uint8_t *zbuild_origin(const zbuild_t *b);

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
 * `file`. Returns 0 or SHOAL_ENOMEM.
 */
int zone_dnssec_build(zone_t *z, zarena_t *a, zone_msg_fn msg, void *msg_arg, const char *file);

#endif
