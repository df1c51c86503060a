/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Loading one zone from its master file: the bounds on what it may hold and read, its messages. */
#ifndef SHOAL_ZONE_LOAD_H
#define SHOAL_ZONE_LOAD_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Bounds on one zone, whose files are outside input; each zone_spec_t
 * carries its own, passed to every load of the zone.
 * max_types_per_name, max_records_per_type: what one name may hold, as
 *   BIND's options of those names (a type and its signatures count as two
 *   types). The store counts RRsets per name in 16 bits, so a larger value
 *   counts as ZONE_LIMIT_MAX.
 * max_octets: the octets read from the zone's file and its $INCLUDEs, a
 *   file read twice counted twice (so no one file is larger either).
 * max_includes: the $INCLUDE directives followed (0: none); their nesting
 *   is bounded too, at 8 deep.
 * max_journal: the octets of IXFR history the zone keeps (0: none), see
 *   zonedb_journal; loads do not look at it.
 * max_nsec3_iterations: the most NSEC3 hash iterations (RFC 5155 5) the
 *   zone's NSEC3PARAM may ask for; every negative answer hashes names that
 *   many times over, so a zone that asks for more is refused.
 */
typedef struct zone_limits {
	uint32_t max_types_per_name;
	uint32_t max_records_per_type;
	uint64_t max_octets;
	uint32_t max_includes;
	uint64_t max_journal;
	uint32_t max_nsec3_iterations;
} zone_limits_t;

/*
 * Defaults: BIND's 100 types (about 90 types are in use; a signed name with
 * 50 of them is far beyond any real zone); 1000 records per RRset, not
 * BIND's 100, because an authoritative zone holds its own address pools and
 * TXT sets, and a set too big to answer is refused apart (it must fit one
 * 65535-octet TCP message with its signatures, about 4000 A records).
 */
#define ZONE_MAX_TYPES_DEFAULT    100
#define ZONE_MAX_RECORDS_DEFAULT  1000
#define ZONE_MAX_OCTETS_DEFAULT   (1024ull << 20)
#define ZONE_MAX_INCLUDES_DEFAULT 256u
#define ZONE_LIMIT_MAX            65535

/*
 * NSEC3 iterations: RFC 9276 3.1 asks for 0, and validators treat more
 * than 150 as insecure (RFC 9276 3.2, as BIND and Unbound do), so a zone
 * above 150 gains nothing and costs every NXDOMAIN answer. 2500 is the
 * most RFC 5155 10.3 ever allowed (4096-bit keys).
 */
#define ZONE_MAX_NSEC3_ITERATIONS_DEFAULT 150
#define ZONE_MAX_NSEC3_ITERATIONS_MAX     2500

/*
 * The IXFR history each zone keeps until told otherwise, in octets of
 * changesets (RFC 1995 5 lets a server purge at any time): enough for
 * hundreds of small changes, a bounded share of a big zone.
 */
#define ZONE_JOURNAL_DEFAULT (1u << 20)

#define ZONE_LIMITS_DEFAULT                                                                \
	{                                                                                  \
		ZONE_MAX_TYPES_DEFAULT, ZONE_MAX_RECORDS_DEFAULT, ZONE_MAX_OCTETS_DEFAULT, \
			ZONE_MAX_INCLUDES_DEFAULT, ZONE_JOURNAL_DEFAULT,                   \
			ZONE_MAX_NSEC3_ITERATIONS_DEFAULT                                  \
	}

/*
 * How messages about zone files reach the caller (the daemon's log, or
 * shoal-checkzone's stderr). `is_error` false means a warning. msg has the
 * form "FILE:LINE: text" where a line is known. Called on the loading thread.
 */
typedef void (*zone_msg_fn)(void *arg, bool is_error, const char *msg);

/*
 * With cancel true, loads in progress stop at their next record or read
 * (a read blocked in the kernel finishes first) or, while the records
 * read are checked, compiled, hashed for NSEC3 or compared with the
 * version served, within 1024 names; loads started while
 * it stays true stop at once: zone_load and zonedb_build return
 * SHOAL_ETIMEOUT and report "FILE: loading cancelled". false lets loads
 * run again. Any thread.
 */
void zone_load_cancel(bool cancel);

/* Which reader turns master file text into records (zone_load_set_reader). */
enum zone_reader {
	ZONE_READER_ZSCANNER, /* Knot's zone scanner, libzscanner: the default */
	ZONE_READER_LDNS,     /* ldns, the reference the other is tested against */
};

/* Choose the reader of the loads that start afterwards; not while one runs. */
void zone_load_set_reader(enum zone_reader reader);

/*
 * Load the master file `file` for the zone `origin` (uncompressed wire,
 * any case), check it and compile it within limits (NULL: the defaults).
 * Messages ("FILE:LINE: text") go to msg. Returns 0 and *out (refs = 1,
 * caller frees with zone_free), or SHOAL_EZONE (content errors, all
 * reported), SHOAL_EIO (unreadable file) or SHOAL_ENOMEM. Allocates
 * freely; one thread.
 */
struct zone;
int zone_load(const char *file, const uint8_t *origin, const zone_limits_t *limits, zone_msg_fn msg,
	      void *msg_arg, struct zone **out);

#endif
