/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's file version signed for serving: its keys, its signed serial, the signed version. */
#ifndef SHOAL_ZONE_SIGN_VERSION_H
#define SHOAL_ZONE_SIGN_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#include "zone/changeset.h"
#include "zone/load.h"
#include "zone/zone.h"

/*
 * How one zone is signed: what zone/ needs of its dnssec-policy and of
 * keys-dir, filled by the configuration (server/) and carried by the
 * zone's spec (zone_spec_t.sign), so zone/ never reads server/'s types.
 */
typedef struct zone_sign_spec {
	const char *keys_dir;    /* the keys and the signing state (zone/sign_key.h) */
	uint8_t algorithm;       /* of the keys made on first use (RFC 8624 number) */
	uint32_t rrsig_lifetime; /* inception to expiration */
	uint32_t rrsig_refresh;  /* signed anew this long before they expire */
	uint32_t rrsig_jitter;   /* expirations spread over up to this much less */
	uint32_t dnskey_ttl;
	bool cds_cdnskey;   /* CDS and CDNSKEY of the KSKs published (RFC 7344) */
	bool nsec3;         /* NSEC3 (RFC 5155), else NSEC */
	bool nsec3_opt_out; /* RFC 5155 6 */
	uint16_t nsec3_iterations;
	uint8_t nsec3_salt_len;
	unsigned threads; /* a full signing's threads */
	bool check_only;  /* shoald --check: the file and the keys checked, nothing written */
} zone_sign_spec_t;

/*
 * The version to serve of a zone signed as s says, its file just read as
 * z (unsigned; the caller keeps its reference) where `was` is served (a
 * version this made; NULL: none). The keys are read from s->keys_dir, or
 * made there on the zone's first signing. The serial is z's when it is
 * newer (RFC 1982) than the last this zone was signed with (was's, else
 * the one kept in keys-dir, so a restart never goes back), else that one
 * plus one; it is kept in keys-dir (NAME.signed, with an NSEC3 salt) before
 * this returns, so before the version is published. A file that changes
 * nothing of `was` but DNSSEC records and the SOA serial (not to a newer
 * one) gives `was` again: the same file read twice is the same version,
 * until the signatures reach their refresh point (rrsig-lifetime less
 * rrsig-refresh and rrsig-jitter after the last signing, which a refresh
 * batch moves to say when the next batch is due): then it is signed anew.
 * With s->check_only, z itself once the file and the keys there are read.
 * Returns 0 and *out (one reference); or, reported through msg as errors
 * naming `file`, SHOAL_EZONE (the file holds DNSSEC records: the server
 * signs the zone itself), the keys' errors (a key file missing or
 * unreadable: SHOAL_EIO), or those of sign_zone and zone_apply; *out NULL.
 * Any thread but a worker: it reads and writes files, and signs.
 */
int sign_version(const zone_t *z, const zone_t *was, const zone_sign_spec_t *s, const char *file,
		 const zone_limits_t *limits, zone_msg_fn msg, void *msg_arg, zone_t **out);

/*
 * One batch of served's signatures refreshed at now (UNIX seconds), as s
 * says (sign_refresh, zone/sign_refresh.h): the RRsets whose RRSIGs reach
 * their refresh point (expire within rrsig-refresh) in the next `window`
 * seconds, the oldest first and SIGN_REFRESH_BATCH at most, signed anew
 * with the keys of keys-dir (none made: missing keys are an error), the
 * SOA at the next serial (past the one kept in keys-dir too). *cs is the
 * change (for the journal) and *out the version it makes (zone_apply,
 * limits and msg as a load's), each one reference; both NULL when nothing
 * is due. The state in keys-dir gets the serial, and a signing time that
 * says when the earliest RRSIG left expires (a reload finds the refresh
 * due when a batch is, not because the last whole signing is old).
 * *next_at is when the next batch is due: the earliest RRSIG left less
 * rrsig-refresh, now when the cap left some due, and never later than
 * what a batch made now falls due (rrsig-lifetime less the jitter and
 * rrsig-refresh), whatever is signed meanwhile. Returns 0; SHOAL_EINVAL
 * or SHOAL_EUNSUPPORTED (served not signed with these keys and denial:
 * a rollover, a policy changed) as sign_refresh; the keys' errors (said
 * through msg); or zone_apply's or the state's. Any thread but a worker.
 */
int sign_version_refresh(const zone_t *served, const zone_sign_spec_t *s, int64_t now,
			 int64_t window, const zone_limits_t *limits, zone_msg_fn msg,
			 void *msg_arg, changeset_t **cs, zone_t **out, int64_t *next_at);

#endif
