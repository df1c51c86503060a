/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's file version signed for serving: its keys, its signed serial, the signed version. */
#ifndef SHOAL_ZONE_SIGN_VERSION_H
#define SHOAL_ZONE_SIGN_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#include "zone/changeset.h"
#include "zone/journal.h"
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
 * Whether records of type are the signer's as s says: DNSKEY, RRSIG,
 * NSEC, NSEC3, NSEC3PARAM, and CDS and CDNSKEY when s publishes them.
 * A zone's data (its file, an update) may not hold them. Any thread.
 */
bool sign_spec_owns(const zone_sign_spec_t *s, uint16_t type);

/*
 * z's unsigned data: every record a signer makes as s says left out
 * (sign_spec_owns; s's other fields are not read), the SOA as it is, into
 * *out (one reference), applied as a load checks a file within limits
 * (messages through msg, labelled label). What a zone file of a signed
 * zone holds, which sign_version reads back as the same version. Returns
 * 0 or zone_apply's errors. z held by the caller; any thread but a
 * worker (it allocates a version of z's size).
 */
int sign_unsigned(const zone_t *z, const zone_sign_spec_t *s, const char *label,
		  const zone_limits_t *limits, zone_msg_fn msg, void *msg_arg, zone_t **out);

/*
 * A dynamic update's change to served (a version sign_version or this
 * made, signed as s says) signed: change (sealed, from served, the
 * update's changeset: its records of the signer's types, which a name
 * deleted whole takes with it, are left out) signed alone by
 * sign_changes and applied to served into *out; when it is not local
 * (SHOAL_EUNSUPPORTED) or the signatures are past their refresh point,
 * served's unsigned data with the change signed whole, as sign_version
 * signs a file. The serial is change's new one when newer than the last
 * signed (served's, or the one kept in keys-dir), else that one plus one;
 * it is kept in keys-dir (NAME.signed) before this returns, so the next
 * reload or restart does not go back. *journal (one reference) is the
 * signed change from served for the journal; NULL when it would take
 * more than journal_max octets (a whole signing; 0: not made).
 * The keys are read from keys-dir for each call (a few files: see
 * doc/design.md "Dynamic updates"). Returns 0; the keys' errors, those
 * of sign_changes, sign_zone and zone_apply (SHOAL_EZONE: a check a load
 * makes failed), each reported through msg labelled label; *out NULL.
 * The update thread (any thread but a worker: it reads files and signs).
 */
int sign_update(const zone_t *served, const changeset_t *change, const zone_sign_spec_t *s,
		const char *label, const zone_limits_t *limits, size_t journal_max, zone_msg_fn msg,
		void *msg_arg, zone_t **out, changeset_t **journal);

/*
 * The bump-in-the-wire signer: what one transfer in of a secondary with
 * a policy brought from its (hidden, unsigned) primary. The version
 * served is signed; the primary's serial, `upstream`, is kept apart
 * from it, in keys-dir's NAME.signed beside the signed serial.
 */
typedef struct sign_transfer {
	const zone_t *axfr;             /* an AXFR's whole unsigned version, or NULL: */
	const changeset_t *const *sets; /* an IXFR's changesets from the last upstream serial */
	size_t set_count;
	uint32_t upstream; /* the primary's serial the transfer leads to */
} sign_transfer_t;

/*
 * The version to serve after transfer in, `was` served (signed by this,
 * or NULL, or unsigned: signed whole then). An AXFR goes sign_version's
 * road (its serial for the file's: the upstream when newer than the last
 * signed, else that plus one; only its difference from `was` signed
 * when local). An IXFR's changesets, condensed, are signed alone by
 * sign_changes against `was` at the next serial; SHOAL_EUNSUPPORTED
 * (not local, a policy or keys changed, signatures due for refresh, no
 * `was`) asks the caller for an AXFR. A transfer that carries a record a
 * signer makes is refused, SHOAL_EZONE, said through msg naming label.
 * The signed change goes into journal (when not NULL), so that the
 * zone's own secondaries get it by IXFR, and upstream into NAME.signed,
 * before this returns. Returns 0 and *out (one reference; `was` again
 * when nothing but the upstream serial moved), or an error as
 * sign_version's. Any thread but a worker.
 */
int sign_transfer(const zone_t *was, const sign_transfer_t *in, const zone_sign_spec_t *s,
		  const char *label, const zone_limits_t *limits, journal_t *journal,
		  zone_msg_fn msg, void *msg_arg, zone_t **out);

/*
 * The primary's serial that signed serial `served` of zone apex came
 * from (sign_transfer kept it): true and *upstream, or false when
 * NAME.signed holds none for that serial (a version signed otherwise,
 * or saved before its state: the next transfer is whole). Reads a file;
 * any thread but a worker.
 */
bool sign_upstream(const zone_sign_spec_t *s, const uint8_t *apex, uint32_t served,
		   uint32_t *upstream);

/*
 * Whether zone apex's signatures reached their refresh point at now (UNIX
 * seconds), as its NAME.signed in keys-dir says: rrsig-lifetime less
 * rrsig-refresh and rrsig-jitter after its last whole signing (or what a
 * batch made of it). False when there is no state. Reads a file; any
 * thread but a worker.
 */
bool sign_due(const zone_sign_spec_t *s, const uint8_t *apex, int64_t now);

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
