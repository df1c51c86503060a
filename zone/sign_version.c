/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's file version signed for serving: its keys, its signed serial, the signed version. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libdnssec/crypto.h>
#include <limits.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "proto/serial.h"
#include "proto/wire.h"
#include "zone/apply.h"
#include "zone/changeset.h"
#include "zone/internal.h"
#include "zone/sign_incr.h"
#include "zone/sign_key.h"
#include "zone/sign_refresh.h"
#include "zone/sign_version.h"
#include "zone/sign_zone.h"

/* What a zone's last signing left in keys-dir (NAME.signed). */
typedef struct sign_state {
	bool found;
	uint32_t serial;     /* the last serial signed */
	long long signed_at; /* when (UNIX seconds): its signatures' times follow */
	sign_nsec3_t nsec3;
	bool has_upstream; /* a secondary's: the primary's serial `serial` was signed from */
	uint32_t upstream;
} sign_state_t;

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

static void crypto_init(void)
{
	dnssec_crypto_init();
}

/*
 * The types a signer makes (RFC 4034 2-4, RFC 5155 3-4, RFC 7344 3), by
 * name; CDS and CDNSKEY only when the policy publishes them: otherwise a
 * zone's own (RFC 8078 4's "remove the DS") are its data, signed by the KSK.
 */
static const struct {
	uint16_t type;
	const char *name;
} signer_types[] = {
	{ DNS_TYPE_DNSKEY, "DNSKEY" },
	{ DNS_TYPE_RRSIG, "RRSIG" },
	{ DNS_TYPE_NSEC, "NSEC" },
	{ DNS_TYPE_NSEC3, "NSEC3" },
	{ DNS_TYPE_NSEC3PARAM, "NSEC3PARAM" },
	{ DNS_TYPE_CDS, "CDS" },
	{ DNS_TYPE_CDNSKEY, "CDNSKEY" },
};

/* The name of a type a signer makes as s says, or NULL for another type. */
static const char *signer_type_name(uint16_t type, const zone_sign_spec_t *s)
{
	if ((type == DNS_TYPE_CDS || type == DNS_TYPE_CDNSKEY) && !s->cds_cdnskey)
		return NULL;
	for (size_t i = 0; i < sizeof(signer_types) / sizeof(signer_types[0]); i++)
		if (signer_types[i].type == type)
			return signer_types[i].name;
	return NULL;
}

static bool signer_type(uint16_t type, const zone_sign_spec_t *s)
{
	return signer_type_name(type, s) != NULL;
}

/*
 * Whether z holds a record a signer makes: at *owner, of *type. The
 * server signs a zone with a policy itself, and signatures it did not make
 * (or a DNSKEY it does not hold the key of) would be served beside its own.
 */
static bool holds_dnssec(const zone_t *z, const zone_sign_spec_t *s, const uint8_t **owner,
			 uint16_t *type)
{
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it)) {
		*owner = znode_name(n);
		*type = DNS_TYPE_RRSIG;
		if (n->sig_groups)
			return true;
		for (uint16_t i = 0; i < n->rrset_count; i++) {
			*type = znode_rrsets(n)[i].set.type;
			if (signer_type(*type, s))
				return true;
		}
	}
	return false;
}

/* The last signing's state of apex from dir into *st (not found: st->found false). */
static int state_read(const char *dir, const uint8_t *apex, sign_state_t *st)
{
	char path[PATH_MAX], salt[2 * 255 + 2];
	memset(st, 0, sizeof(*st));
	if (zone_apex_path(dir, apex, ".signed", path, sizeof(path)) < 0)
		return SHOAL_EIO;
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : SHOAL_EIO;
	int got = fscanf(f, "%u %511s %lld %u", &st->serial, salt, &st->signed_at, &st->upstream);
	fclose(f);
	if (got < 3)
		return 0; /* torn or foreign: the file's serial and a new salt */
	st->found = true;
	st->has_upstream = got == 4;
	size_t len = 0;
	if (strcmp(salt, "-") && sodium_hex2bin(st->nsec3.salt, sizeof(st->nsec3.salt), salt,
						strlen(salt), NULL, &len, NULL) == 0)
		st->nsec3.salt_len = (uint8_t)len;
	return 0;
}

/* st to dir's NAME.signed, whole: a temporary file of mode 0600, fsync, rename. */
static int state_write(const char *dir, const uint8_t *apex, const sign_state_t *st)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], salt[2 * 255 + 1] = "-";
	if (zone_apex_path(dir, apex, ".signed", path, sizeof(path)) < 0)
		return SHOAL_EIO;
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (st->nsec3.salt_len)
		sodium_bin2hex(salt, sizeof(salt), st->nsec3.salt, st->nsec3.salt_len);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	char line[80 + sizeof(salt)], up[16] = "";
	if (st->has_upstream)
		snprintf(up, sizeof(up), " %u", st->upstream);
	int len =
		snprintf(line, sizeof(line), "%u %s %lld%s\n", st->serial, salt, st->signed_at, up);
	int rc = write(fd, line, (size_t)len) == len && fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

/* The zone's keys from dir, made there (of s's algorithm) when it has none yet. */
static int keys_get(sign_keyset_t *ks, const zone_sign_spec_t *s, const uint8_t *apex,
		    const char *file, zone_msg_fn msg, void *msg_arg)
{
	char err[512] = "";
	int rc = sign_keyset_load(ks, s->keys_dir, apex, true, err, sizeof(err));
	if (rc == SHOAL_ENOTFOUND) {
		rc = sign_keyset_create(ks, s->keys_dir, apex, s->algorithm, time(NULL), err,
					sizeof(err));
		if (rc == 0)
			zone_report(msg, msg_arg, false, file, 0,
				    "no keys in %s yet: a KSK (tag %u) and a ZSK (tag %u) made",
				    s->keys_dir, ks->keys[0].tag, ks->keys[1].tag);
	}
	if (rc < 0)
		zone_report(msg, msg_arg, true, file, 0, "cannot sign: %s",
			    err[0] ? err : shoal_strerror(rc));
	return rc;
}

/* --check: the zone's keys read when it has some (none: made at start), *out z itself. */
static int check_keys(const zone_t *z, const zone_sign_spec_t *s, const char *file, zone_msg_fn msg,
		      void *msg_arg, zone_t **out)
{
	char err[512] = "";
	sign_keyset_t ks;
	int rc = sign_keyset_load(&ks, s->keys_dir, znode_name(z->apex), true, err, sizeof(err));
	if (rc == 0)
		sign_keyset_clear(&ks);
	if (rc < 0 && rc != SHOAL_ENOTFOUND) {
		zone_report(msg, msg_arg, true, file, 0, "cannot sign: %s",
			    err[0] ? err : shoal_strerror(rc));
		return rc;
	}
	*out = (zone_t *)zone_ref(z);
	return 0;
}

/* The SOA record of a changeset's side but its serial equals the other side's. */
static bool soa_same_but_serial(const changeset_t *d)
{
	const uint8_t *a = xfr_part_soa(&d->del), *b = xfr_part_soa(&d->add);
	uint16_t alen = wire_get_u16(a + 8), blen = wire_get_u16(b + 8);
	/* TTL, RDLENGTH and the names alike; the serial is the 20th octet from the end */
	return alen == blen && alen >= 20 && !memcmp(a + 4, b + 4, 6u + alen - 20) &&
	       !memcmp(a + 10 + alen - 16, b + 10 + blen - 16, 16);
}

/* Whether a side of d holds a record of another type than a signer's (the SOA aside). */
static bool part_unsigned(const xfr_part_t *p, const zone_sign_spec_t *s)
{
	size_t at = 0;
	xfr_run_t run;
	xfr_part_next(p, &at, &run); /* the SOA */
	while (xfr_part_next(p, &at, &run))
		if (!signer_type(run.set.type, s))
			return true;
	return false;
}

/*
 * Whether `was` was signed with the denial s asks, and has CDS when s
 * publishes them (a policy changed: signed anew; the other way, the
 * change deletes them as the file's data).
 */
static bool same_denial(const zone_t *was, const zone_sign_spec_t *s)
{
	if (s->cds_cdnskey && !znode_rrset(was->apex, DNS_TYPE_CDS))
		return false;
	if (!s->nsec3)
		return was->denial == ZONE_DENIAL_NSEC;
	return was->denial == ZONE_DENIAL_NSEC3 && was->nsec3.iterations == s->nsec3_iterations &&
	       was->nsec3.salt_len == s->nsec3_salt_len &&
	       (was->nsec3.unmatched != 0) <= s->nsec3_opt_out;
}

/* The records of run added to a side of cs (add: the additions). */
static int add_run(changeset_t *cs, bool add, const xfr_run_t *run)
{
	const uint8_t *p = run->set.data;
	for (uint16_t i = 0; i < run->set.rr_count; i++) {
		uint16_t len = wire_get_u16(p + 8);
		int rc = changeset_add(cs, add, run->owner, run->set.type, wire_get_u32(p + 4),
				       p + 10, len);
		if (rc < 0)
			return rc;
		p += 10u + len;
	}
	return 0;
}

/*
 * d (the diff of a signed version and a file's) less the records a signer
 * makes: the unsigned change, with both SOAs (sign_changes reads the new
 * one's fields), into *out (sealed, one reference).
 */
static int unsigned_change(const changeset_t *d, const zone_sign_spec_t *s, changeset_t **out)
{
	changeset_t *u = changeset_new();
	if (!u)
		return SHOAL_ENOMEM;
	const xfr_part_t *sides[2] = { &d->del, &d->add };
	int rc = 0;
	for (int add = 0; rc == 0 && add < 2; add++) {
		size_t at = 0;
		xfr_run_t run;
		while (rc == 0 && xfr_part_next(sides[add], &at, &run))
			if (run.set.type == DNS_TYPE_SOA || !signer_type(run.set.type, s))
				rc = add_run(u, add, &run);
	}
	if (rc == 0)
		rc = changeset_seal(u);
	if (rc < 0)
		changeset_unref(u);
	else
		*out = u;
	return rc;
}

/*
 * Whether the file's version z brings nothing to `was` (signed as s
 * says): the same records but those a signer makes, the same SOA but for
 * a serial not newer. Sets *changes false when so. When it brings
 * something and `was` is signed as s asks, *u (else NULL) is the unsigned
 * change to `was` that sign_changes signs alone.
 */
static int file_changes(const zone_t *was, const zone_t *z, const zone_sign_spec_t *s,
			bool *changes, changeset_t **u)
{
	*changes = true;
	*u = NULL;
	if (!same_denial(was, s))
		return 0;
	changeset_t *d = NULL;
	int rc = changeset_diff(was, z, 0, &d);
	if (rc < 0)
		return rc;
	*changes = serial_gt(z->serial, was->serial) || !soa_same_but_serial(d) ||
		   part_unsigned(&d->del, s) || part_unsigned(&d->add, s);
	if (*changes)
		rc = unsigned_change(d, s, u);
	changeset_unref(d);
	return rc;
}

/* The serial of the signed version: want if newer than the last signed (RFC 1982), else next. */
static uint32_t signed_serial(uint32_t want, const zone_t *was, const sign_state_t *st)
{
	bool known = was || st->found;
	uint32_t last = was ? was->serial : st->serial;
	/* a serial kept but never published (a reload that failed after) still counts */
	if (was && st->found && serial_gt(st->serial, last))
		last = st->serial;
	if (!known || serial_gt(want, last))
		return want;
	return serial_add(last, 1);
}

/* st's NSEC3 parameters as s asks: its salt kept while its length is the one asked. */
static void nsec3_params(const zone_sign_spec_t *s, sign_state_t *st)
{
	st->nsec3.iterations = s->nsec3_iterations;
	st->nsec3.opt_out = s->nsec3_opt_out;
	if (st->nsec3.salt_len != s->nsec3_salt_len) {
		st->nsec3.salt_len = s->nsec3_salt_len;
		randombytes_buf(st->nsec3.salt, st->nsec3.salt_len);
	}
}

/*
 * Whether the last signing's signatures reach their refresh point by now:
 * the earliest expires rrsig-lifetime less the jitter after it, and is
 * to be made anew rrsig-refresh before (RFC 6781 4.4.2).
 */
static bool refresh_due(const sign_state_t *st, const zone_sign_spec_t *s, int64_t now)
{
	int64_t keep = (int64_t)s->rrsig_lifetime - s->rrsig_refresh - s->rrsig_jitter;
	return !st->found || st->signed_at + keep <= now;
}

bool sign_due(const zone_sign_spec_t *s, const uint8_t *apex, int64_t now)
{
	sign_state_t st;
	return state_read(s->keys_dir, apex, &st) == 0 && st.found && refresh_due(&st, s, now);
}

/* The signer's options for signatures made at `at` as s says, serial st->serial. */
static sign_zone_opts_t sign_opts(const zone_sign_spec_t *s, const sign_state_t *st, int64_t at)
{
	return (sign_zone_opts_t){ .times = sign_times_at(at, s->rrsig_lifetime),
				   .jitter = s->rrsig_jitter,
				   .serial = st->serial,
				   .dnskey_ttl = s->dnskey_ttl,
				   .nsec3 = s->nsec3 ? &st->nsec3 : NULL,
				   .cds_cdnskey = s->cds_cdnskey,
				   .threads = s->threads };
}

/*
 * The change u to `was` signed alone (sign_changes) at now and applied to
 * `was` into *out, the signed change into *signed_cs (one reference) when
 * not NULL; SHOAL_EUNSUPPORTED when it is not local (the caller signs
 * whole), another error reported.
 */
static int sign_change(const zone_t *was, const changeset_t *u, const sign_keyset_t *ks,
		       const zone_sign_spec_t *s, const sign_state_t *st, int64_t now,
		       const char *file, const zone_limits_t *limits, zone_msg_fn msg,
		       void *msg_arg, zone_t **out, changeset_t **signed_cs)
{
	sign_zone_opts_t o = sign_opts(s, st, now);
	changeset_t *cs = NULL;
	int rc = sign_changes(was, u, ks, &o, &cs);
	if (rc == SHOAL_EUNSUPPORTED)
		return rc;
	if (rc < 0) {
		zone_report(msg, msg_arg, true, file, 0, "cannot sign the change: %s",
			    shoal_strerror(rc));
		return rc;
	}
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t ao = { .label = file,
				 .limits = limits,
				 .msg = msg,
				 .msg_arg = msg_arg,
				 .cancel = zload_cancel_flag() };
	rc = zone_apply(was, sets, 1, &ao, out);
	if (rc == 0 && signed_cs)
		*signed_cs = cs;
	else
		changeset_unref(cs);
	return rc;
}

/* z signed whole with ks as s says, serial st->serial, at st->signed_at, into *out. */
static int sign_whole(const zone_t *z, const sign_keyset_t *ks, const zone_sign_spec_t *s,
		      const sign_state_t *st, const char *file, const zone_limits_t *limits,
		      zone_msg_fn msg, void *msg_arg, zone_t **out)
{
	sign_zone_opts_t o = sign_opts(s, st, st->signed_at);
	changeset_t *cs = NULL;
	int rc = sign_zone(z, ks, &o, &cs);
	if (rc < 0) {
		zone_report(msg, msg_arg, true, file, 0, "cannot sign: %s", shoal_strerror(rc));
		return rc;
	}
	const changeset_t *sets[1] = { cs };
	zone_apply_opts_t ao = { .label = file,
				 .limits = limits,
				 .msg = msg,
				 .msg_arg = msg_arg,
				 .cancel = zload_cancel_flag() };
	rc = zone_apply(z, sets, 1, &ao, out);
	changeset_unref(cs);
	return rc;
}

/*
 * st kept in keys-dir before *out (signed with it) is published; when it
 * cannot be, *out and *cs (when not NULL) are dropped and the error said.
 */
static int keep_state(const zone_sign_spec_t *s, const uint8_t *apex, const sign_state_t *st,
		      const char *file, zone_msg_fn msg, void *msg_arg, zone_t **out,
		      changeset_t **cs)
{
	int rc = state_write(s->keys_dir, apex, st);
	if (rc == 0)
		return 0;
	zone_report(msg, msg_arg, true, file, 0, "cannot keep the signed serial %u in %s: %s",
		    st->serial, s->keys_dir, shoal_strerror(rc));
	zone_unref(*out);
	*out = NULL;
	if (cs) {
		changeset_unref(*cs);
		*cs = NULL;
	}
	return rc;
}

/*
 * sign_version, for a secondary with *upstream (else NULL): the primary's
 * serial z has, kept in NAME.signed with the signed serial (sign_upstream).
 */
static int sign_version_from(const zone_t *z, const zone_t *was, const zone_sign_spec_t *s,
			     const char *file, const zone_limits_t *limits, zone_msg_fn msg,
			     void *msg_arg, const uint32_t *upstream, zone_t **out)
{
	const uint8_t *apex = znode_name(z->apex), *owner = apex;
	uint16_t type = z->denial == ZONE_DENIAL_NSEC3 ? DNS_TYPE_NSEC3PARAM : DNS_TYPE_NSEC;
	char name[NAME_TEXT_MAX];
	*out = NULL;
	pthread_once(&crypto_once, crypto_init);
	if (z->denial != ZONE_DENIAL_NONE || holds_dnssec(z, s, &owner, &type)) {
		name_to_text(owner, name, sizeof(name));
		zone_report(msg, msg_arg, true, file, 0,
			    "%s holds DNSSEC records (%s): the zone has a dnssec-policy, "
			    "and the server signs it itself",
			    name, signer_type_name(type, s));
		return SHOAL_EZONE;
	}
	if (s->check_only)
		return check_keys(z, s, file, msg, msg_arg, out);
	sign_state_t st;
	if (state_read(s->keys_dir, apex, &st) < 0)
		zone_report(msg, msg_arg, false, file, 0,
			    "cannot read the last signed serial in %s: the file's serial is used",
			    s->keys_dir);
	bool new_upstream = upstream && (!st.has_upstream || st.upstream != *upstream);
	st.has_upstream = upstream != NULL;
	st.upstream = upstream ? *upstream : 0;
	int64_t now = time(NULL);
	bool changes = true;
	changeset_t *u = NULL;
	int rc = was ? file_changes(was, z, s, &changes, &u) : 0;
	bool due = refresh_due(&st, s, now);
	if (rc < 0 || (!changes && !due)) {
		/* a primary's serial moved with nothing else: kept, or it looks newer forever */
		if (rc == 0 && new_upstream && st.found && st.serial == was->serial)
			rc = state_write(s->keys_dir, apex, &st);
		if (rc == 0)
			*out = (zone_t *)zone_ref(was);
		changeset_unref(u);
		return rc;
	}
	sign_keyset_t ks;
	rc = keys_get(&ks, s, apex, file, msg, msg_arg);
	if (rc < 0) {
		changeset_unref(u);
		return rc;
	}
	st.serial = signed_serial(z->serial, was, &st);
	nsec3_params(s, &st);
	/*
	 * A change signed alone leaves the older signatures as they were:
	 * signed_at stays the last whole signing's, when they were made, and
	 * a signing past its refresh point is whole.
	 */
	rc = u && !due
		     ? sign_change(was, u, &ks, s, &st, now, file, limits, msg, msg_arg, out, NULL)
		     : SHOAL_EUNSUPPORTED;
	changeset_unref(u);
	if (rc == SHOAL_EUNSUPPORTED) {
		st.signed_at = now;
		rc = sign_whole(z, &ks, s, &st, file, limits, msg, msg_arg, out);
	}
	sign_keyset_clear(&ks);
	return rc == 0 ? keep_state(s, apex, &st, file, msg, msg_arg, out, NULL) : rc;
}

int sign_version(const zone_t *z, const zone_t *was, const zone_sign_spec_t *s, const char *file,
		 const zone_limits_t *limits, zone_msg_fn msg, void *msg_arg, zone_t **out)
{
	return sign_version_from(z, was, s, file, limits, msg, msg_arg, NULL, out);
}

bool sign_upstream(const zone_sign_spec_t *s, const uint8_t *apex, uint32_t served,
		   uint32_t *upstream)
{
	sign_state_t st;
	if (state_read(s->keys_dir, apex, &st) < 0 || !st.has_upstream || st.serial != served)
		return false;
	*upstream = st.upstream;
	return true;
}

/*
 * The changesets of an IXFR from the primary condensed into one unsigned
 * change (RFC 1995 6) into *out; SHOAL_EZONE, said, when they carry a
 * record a signer makes: the primary's zone is to be unsigned.
 */
static int upstream_change(const changeset_t *const *sets, size_t n, const zone_sign_spec_t *s,
			   const char *label, zone_msg_fn msg, void *msg_arg, changeset_t **out)
{
	int rc = changeset_condense(sets, n, out);
	if (rc < 0)
		return rc;
	const xfr_part_t *sides[2] = { &(*out)->del, &(*out)->add };
	for (int k = 0; k < 2; k++) {
		size_t at = 0;
		xfr_run_t run;
		while (xfr_part_next(sides[k], &at, &run)) {
			if (!signer_type(run.set.type, s))
				continue;
			char name[NAME_TEXT_MAX];
			name_to_text(run.owner, name, sizeof(name));
			zone_report(msg, msg_arg, true, label, 0,
				    "the IXFR %s DNSSEC records (%s %s): the zone has a "
				    "dnssec-policy, and the server signs it itself: refused",
				    k ? "adds" : "deletes", name,
				    signer_type_name(run.set.type, s));
			changeset_unref(*out);
			*out = NULL;
			return SHOAL_EZONE;
		}
	}
	return 0;
}

/*
 * u, the primary's change to serial upstream, signed alone against `was`
 * (sign_changes) into *out and *cs; SHOAL_EUNSUPPORTED when it is not
 * local, `was` is not signed as s asks, or its signatures are due for
 * refresh: the caller signs a whole transfer instead.
 */
static int sign_ixfr(const zone_t *was, const changeset_t *u, uint32_t upstream,
		     const zone_sign_spec_t *s, const char *label, const zone_limits_t *limits,
		     zone_msg_fn msg, void *msg_arg, zone_t **out, changeset_t **cs)
{
	const uint8_t *apex = znode_name(was->apex);
	sign_state_t st;
	int64_t now = time(NULL);
	if (state_read(s->keys_dir, apex, &st) < 0 || !same_denial(was, s) ||
	    refresh_due(&st, s, now))
		return SHOAL_EUNSUPPORTED;
	sign_keyset_t ks;
	int rc = keys_get(&ks, s, apex, label, msg, msg_arg);
	if (rc < 0)
		return rc;
	st.serial = signed_serial(upstream, was, &st);
	st.has_upstream = true;
	st.upstream = upstream;
	nsec3_params(s, &st);
	rc = sign_change(was, u, &ks, s, &st, now, label, limits, msg, msg_arg, out, cs);
	sign_keyset_clear(&ks);
	return rc == 0 ? keep_state(s, apex, &st, label, msg, msg_arg, out, cs) : rc;
}

/*
 * What a transfer signed changed, into journal (NULL: none): cs (the
 * caller's reference taken), else the difference from `was` to z; a
 * version that went back or whose difference is bigger than the journal
 * clears it.
 */
static void journal_signed(journal_t *journal, const zone_t *was, const zone_t *z, changeset_t *cs,
			   zone_msg_fn msg, void *msg_arg)
{
	if (!journal || z == was) {
		changeset_unref(cs);
		return;
	}
	journal_info_t ji;
	journal_get_info(journal, &ji);
	if (!cs && was && serial_gt(z->serial, was->serial) && ji.max_octets &&
	    changeset_diff(was, z, ji.max_octets, &cs) < 0)
		cs = NULL;
	if (cs)
		journal_report(journal, journal_add(journal, cs), msg, msg_arg);
	else
		journal_clear(journal);
}

int sign_transfer(const zone_t *was, const sign_transfer_t *in, const zone_sign_spec_t *s,
		  const char *label, const zone_limits_t *limits, journal_t *journal,
		  zone_msg_fn msg, void *msg_arg, zone_t **out)
{
	*out = NULL;
	pthread_once(&crypto_once, crypto_init);
	if (in->axfr) {
		int rc = sign_version_from(in->axfr, was, s, label, limits, msg, msg_arg,
					   &in->upstream, out);
		if (rc == 0)
			journal_signed(journal, was, *out, NULL, msg, msg_arg);
		return rc;
	}
	if (!was)
		return SHOAL_EUNSUPPORTED;
	changeset_t *u = NULL, *cs = NULL;
	int rc = upstream_change(in->sets, in->set_count, s, label, msg, msg_arg, &u);
	if (rc == 0)
		rc = sign_ixfr(was, u, in->upstream, s, label, limits, msg, msg_arg, out, &cs);
	changeset_unref(u);
	if (rc == 0)
		journal_signed(journal, was, *out, cs, msg, msg_arg);
	return rc;
}

/* ---- dynamic updates, and the unsigned data for the zone file ---- */

bool sign_spec_owns(const zone_sign_spec_t *s, uint16_t type)
{
	return signer_type(type, s);
}

/* The change that deletes every record of z a signer makes as s says (both SOAs z's). */
static int signer_records(const zone_t *z, const zone_sign_spec_t *s, changeset_t **out)
{
	changeset_t *cs = changeset_new();
	if (!cs)
		return SHOAL_ENOMEM;
	xfr_run_t run = { .owner = znode_name(z->apex),
			  .set = znode_rrset(z->apex, DNS_TYPE_SOA)->set };
	int rc = add_run(cs, false, &run);
	if (rc == 0)
		rc = add_run(cs, true, &run);
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); rc == 0 && n; n = zone_next(&it)) {
		for (uint16_t k = 0; rc == 0 && k < n->rrset_count; k++) {
			run = (xfr_run_t){ .owner = znode_name(n), .set = znode_rrsets(n)[k].set };
			if (signer_type(run.set.type, s))
				rc = add_run(cs, false, &run);
		}
	}
	if (rc == 0)
		rc = changeset_seal(cs);
	if (rc < 0)
		changeset_unref(cs);
	else
		*out = cs;
	return rc;
}

/* sets[0..n) applied to base into *out, as a load checks them. */
static int apply_sets(const zone_t *base, const changeset_t *const *sets, size_t n,
		      const char *label, const zone_limits_t *limits, zone_msg_fn msg,
		      void *msg_arg, zone_t **out)
{
	zone_apply_opts_t ao = { .label = label, .limits = limits, .msg = msg, .msg_arg = msg_arg };
	return zone_apply(base, sets, n, &ao, out);
}

int sign_unsigned(const zone_t *z, const zone_sign_spec_t *s, const char *label,
		  const zone_limits_t *limits, zone_msg_fn msg, void *msg_arg, zone_t **out)
{
	*out = NULL;
	changeset_t *strip = NULL;
	int rc = signer_records(z, s, &strip);
	if (rc < 0)
		return rc;
	const changeset_t *sets[1] = { strip };
	rc = apply_sets(z, sets, 1, label, limits, msg, msg_arg, out);
	changeset_unref(strip);
	return rc;
}

/*
 * u (unsigned, to served) applied to served's unsigned data and signed
 * whole as sign_version signs a file (sign_whole) into *out, and the
 * change from served into *journal when it takes at most journal_max
 * octets (else NULL: secondaries transfer the whole zone).
 */
static int update_whole(const zone_t *served, const changeset_t *u, const sign_keyset_t *ks,
			const zone_sign_spec_t *s, const sign_state_t *st, const char *label,
			const zone_limits_t *limits, size_t journal_max, zone_msg_fn msg,
			void *msg_arg, zone_t **out, changeset_t **journal)
{
	zone_t *bare = NULL, *next = NULL;
	int rc = sign_unsigned(served, s, label, limits, msg, msg_arg, &bare);
	const changeset_t *sets[1] = { u };
	if (rc == 0)
		rc = apply_sets(bare, sets, 1, label, limits, msg, msg_arg, &next);
	if (rc == 0)
		rc = sign_whole(next, ks, s, st, label, limits, msg, msg_arg, out);
	zone_unref(bare);
	zone_unref(next);
	if (rc == 0 && journal_max) {
		int derr = changeset_diff(served, *out, journal_max, journal);
		rc = derr == SHOAL_ESPACE ? 0 : derr;
	}
	if (rc < 0) {
		zone_unref(*out);
		*out = NULL;
	}
	return rc;
}

int sign_update(const zone_t *served, const changeset_t *change, const zone_sign_spec_t *s,
		const char *label, const zone_limits_t *limits, size_t journal_max, zone_msg_fn msg,
		void *msg_arg, zone_t **out, changeset_t **journal)
{
	const uint8_t *apex = znode_name(served->apex);
	*out = NULL;
	*journal = NULL;
	pthread_once(&crypto_once, crypto_init);
	sign_state_t st;
	if (state_read(s->keys_dir, apex, &st) < 0)
		zone_report(msg, msg_arg, false, label, 0,
			    "cannot read the last signed serial in %s", s->keys_dir);
	/* a name deleted whole (RFC 2136 2.5.3) takes its NSEC and RRSIGs: the signer's */
	changeset_t *u = NULL;
	int rc = unsigned_change(change, s, &u);
	if (rc < 0)
		return rc;
	sign_keyset_t ks;
	rc = keys_get(&ks, s, apex, label, msg, msg_arg);
	if (rc < 0) {
		changeset_unref(u);
		return rc;
	}
	st.serial = signed_serial(u->to, served, &st);
	nsec3_params(s, &st);
	int64_t now = time(NULL);
	/* as a reload's change: alone, unless not local or the signatures are due */
	rc = refresh_due(&st, s, now) ? SHOAL_EUNSUPPORTED
				      : sign_change(served, u, &ks, s, &st, now, label, limits, msg,
						    msg_arg, out, journal);
	if (rc == SHOAL_EUNSUPPORTED) {
		st.signed_at = now;
		rc = update_whole(served, u, &ks, s, &st, label, limits, journal_max, msg, msg_arg,
				  out, journal);
	}
	sign_keyset_clear(&ks);
	changeset_unref(u);
	return rc == 0 ? keep_state(s, apex, &st, label, msg, msg_arg, out, journal) : rc;
}

/*
 * The keys-dir state after a batch: its signing time moved on to when a
 * whole signing would have left the earliest expiration served (RFC 6781
 * 4.4.2: that expiration is what a refresh waits for), so a reload finds
 * the refresh due only when a batch is, never because the last whole
 * signing is old.
 */
static int64_t batch_signed_at(const zone_sign_spec_t *s, int64_t now, int64_t next_expiry)
{
	int64_t since = next_expiry - ((int64_t)s->rrsig_lifetime - s->rrsig_jitter);
	return since < now ? since : now;
}

int sign_version_refresh(const zone_t *served, const zone_sign_spec_t *s, int64_t now,
			 int64_t window, const zone_limits_t *limits, zone_msg_fn msg,
			 void *msg_arg, changeset_t **cs, zone_t **out, int64_t *next_at)
{
	const uint8_t *apex = znode_name(served->apex);
	int64_t after = (int64_t)s->rrsig_lifetime - s->rrsig_jitter - s->rrsig_refresh;
	*cs = NULL;
	*out = NULL;
	/* what a batch signs expires rrsig-lifetime less the jitter on: due again after that */
	*next_at = now + after;
	pthread_once(&crypto_once, crypto_init);
	sign_state_t st;
	sign_keyset_t ks;
	char err[512] = "";
	int rc = state_read(s->keys_dir, apex, &st);
	/* the keys the version was signed with: none made here, a rollover is not a refresh */
	if (rc == 0)
		rc = sign_keyset_load(&ks, s->keys_dir, apex, true, err, sizeof(err));
	if (rc < 0) {
		if (msg)
			msg(msg_arg, true, err[0] ? err : shoal_strerror(rc));
		return rc;
	}
	/* the chain's salt is the version's: a refresh changes no NSEC3 */
	st.nsec3.salt_len = served->nsec3.salt_len;
	if (st.nsec3.salt_len) /* an NSEC zone has no salt to point at */
		memcpy(st.nsec3.salt, served->nsec3.salt, st.nsec3.salt_len);
	nsec3_params(s, &st);
	bool kept_newer = st.found && serial_gt(st.serial, served->serial);
	st.serial = serial_add(kept_newer ? st.serial : served->serial, 1);
	sign_zone_opts_t o = sign_opts(s, &st, now);
	sign_refresh_result_t res;
	rc = sign_refresh(served, &ks, &o, now + s->rrsig_refresh + window, 0, cs, &res);
	sign_keyset_clear(&ks);
	if (rc == 0 && res.next_expiry - s->rrsig_refresh < *next_at)
		*next_at = res.next_expiry - s->rrsig_refresh;
	if (rc < 0 || !*cs)
		return rc;
	const changeset_t *sets[1] = { *cs };
	zone_apply_opts_t ao = {
		.label = "re-sign", .limits = limits, .msg = msg, .msg_arg = msg_arg
	};
	rc = zone_apply(served, sets, 1, &ao, out);
	st.signed_at = batch_signed_at(s, now, res.next_expiry);
	if (rc == 0)
		rc = state_write(s->keys_dir, apex, &st);
	if (rc < 0) {
		zone_unref(*out);
		*out = NULL;
		changeset_unref(*cs);
		*cs = NULL;
	}
	return rc;
}
