/* The set of zones served: built whole from zone files, published with RCU. */
#ifndef SHOAL_ZONE_ZONEDB_H
#define SHOAL_ZONE_ZONEDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * Bounds on what one zone file may put at one name, as BIND's
 * max-types-per-name and max-records-per-type (a type and its signatures
 * count as two types). 0 means the default. The store counts RRsets per
 * name in 16 bits, so neither may pass ZONE_LIMIT_MAX.
 */
typedef struct zone_limits {
	uint32_t max_types_per_name;
	uint32_t max_records_per_type;
} zone_limits_t;

/*
 * Defaults: BIND's 100 types (about 90 types are in use; a signed name with
 * 50 of them is far beyond any real zone); 1000 records per RRset, not
 * BIND's 100, because an authoritative zone holds its own address pools and
 * TXT sets, and a set too big to answer is refused apart (it must fit one
 * 65535-octet TCP message with its signatures, about 4000 A records).
 */
#define ZONE_MAX_TYPES_DEFAULT 100
#define ZONE_MAX_RECORDS_DEFAULT 1000
#define ZONE_LIMIT_MAX 65535

/* A zone to serve, as configured. Strings belong to the caller. */
typedef struct zone_spec {
	const char *name;   /* presentation format, "example.com" or "example.com." */
	const char *file;   /* path of the RFC 1035 master file */
	zone_limits_t limits;
} zone_spec_t;

/*
 * How messages about zone files reach the caller (the daemon's log, or
 * shoal-checkzone's stderr). `is_error` false means a warning. msg has the
 * form "FILE:LINE: text" where a line is known. Called on the loading thread.
 */
typedef void (*zone_msg_fn)(void *arg, bool is_error, const char *msg);

/*
 * An immutable set of zones. Readers (workers) use it without locks inside
 * rcu_read_lock(); it is freed only by zonedb_publish after a grace period.
 */
typedef struct zonedb zonedb_t;

/* What one zone of a set says about itself (for shoalctl zone-status). */
typedef struct zone_info {
	char name[1024];        /* presentation format with final dot */
	const char *file;
	bool loaded;            /* a version of the zone is being served */
	uint32_t serial;
	size_t rr_count;
	time_t loaded_at;       /* when the version served was loaded */
	char last_error[512];   /* "" or why the last (re)load failed */
} zone_info_t;

/*
 * Build a new set from n specs. With `old` != NULL (a reload), zones whose
 * name is not `only` (when only != NULL) are shared with old, not re-read;
 * a zone that fails to load keeps old's version of it (and records the
 * error in its zone_info). Without old, a zone that fails is left out (its
 * names get SERVFAIL, as NSD and Knot answer) and the call returns
 * SHOAL_EZONE after building the rest. When `only` names no configured
 * zone, the set is built (all shared) and the call returns SHOAL_ENOTFOUND.
 * Messages go to msg.
 * Runs on a thread that is not a worker; may allocate freely.
 * Returns 0 or a negative error; *out is set whenever the set was built.
 */
int zonedb_build(const zone_spec_t *specs, size_t n, const zonedb_t *old,
		 const char *only, zone_msg_fn msg, void *msg_arg,
		 zonedb_t **out);

/* Free a set that was never published (zones shared with others stay). */
void zonedb_free(zonedb_t *db);

size_t zonedb_zone_count(const zonedb_t *db);
/* Copy the info of zone i (0 <= i < count) into *info. */
void zonedb_zone_info(const zonedb_t *db, size_t i, zone_info_t *info);

/*
 * The IXFR history each zone keeps until told otherwise, in octets of
 * changesets (RFC 1995 5 lets a server purge at any time): enough for
 * hundreds of small changes, a bounded share of a big zone.
 */
#define ZONE_JOURNAL_DEFAULT (1u << 20)

struct journal;

/*
 * The IXFR history of the zone whose apex is `apex` (lowercase wire), or
 * NULL for a zone db does not have. Each zone has one journal for as long
 * as it is configured: zonedb_build carries it from `old` to the new set
 * and, when a reload brings a newer serial, records the changes from the
 * version served to the one loaded (journal_set_max bounds it; 0 turns
 * recording off). Read-only on db; any thread inside a read-side section
 * of a published db (journal_ref to keep it after); O(zones).
 */
struct journal *zonedb_journal(const zonedb_t *db, const uint8_t *apex);

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
 * A read-side section (rcu_read_lock/rcu_read_unlock). In a ThreadSanitizer
 * build they also tell TSan what the grace period guarantees (that every
 * read of the old set happens before zonedb_publish frees it), which it
 * cannot see through liburcu's barriers.
 */
void zonedb_read_lock(void);
void zonedb_read_unlock(zonedb_ref_t *ref);

#endif
