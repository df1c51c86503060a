/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inside server/conf/: the YAML document being read, its errors, and the zones' storage. */
#ifndef SHOAL_SERVER_CONF_INTERNAL_H
#define SHOAL_SERVER_CONF_INTERNAL_H

#include <limits.h>
#include <yaml.h>

#include "server/conf/conf.h"

/* The document being loaded, and where its first error goes. */
typedef struct yaml_ctx {
	yaml_document_t *doc;
	const char *path;
	char *err;
	size_t errlen;
	char zones_base[PATH_MAX]; /* where relative zone file paths start */
	char state_base[PATH_MAX]; /* where a secondary's relative file lies: state-dir */
	char folder[PATH_MAX];     /* the file's folder: where a relative state-dir starts */
} yaml_ctx_t;

/* "FILE:LINE: reason" (the line of node n) into y->err; returns SHOAL_ECONFIG. */
int conf_yerr(yaml_ctx_t *y, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A scalar node's text, or NULL for any other node (or NULL). */
const char *conf_scalar(const yaml_node_t *n);

/*
 * conf_xfr.c: the keys: section (every key set up and checked), and one
 * transfer key of zone i's mapping (provide-xfr, notify, allow-notify,
 * primaries, ixfr-journal-size). Keys must be loaded before zones, so the
 * lists can name them. Each returns 0, SHOAL_ECONFIG with y->err, or
 * SHOAL_ENOMEM; conf_load_zone_key returns SHOAL_ENOTFOUND for a key that
 * is not one of its own.
 */
int conf_load_keys(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *list);
int conf_load_zone_key(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v);

/* The same for a zone's or a template's settings zx (no catalog-* key). */
int conf_load_xfr_key(conf_t *cfg, yaml_ctx_t *y, conf_zone_xfr_t *zx, const char *key,
		      yaml_node_t *v);

/*
 * After zone i's mapping is read: tls-pin or tls-hostname without a
 * primary asked over TLS is refused (item: the mapping, for the line).
 * Returns 0 or SHOAL_ECONFIG with y->err.
 */
int conf_zone_tls_check(const conf_t *cfg, yaml_ctx_t *y, size_t i, yaml_node_t *item);

/* The same for settings zx, named `what` ("zone example.com.", "template t1") in the message. */
int conf_xfr_tls_check(const conf_zone_xfr_t *zx, yaml_ctx_t *y, const char *what,
		       yaml_node_t *item);

/*
 * The list `what` (one "ADDR... KEY" entry or a list of them) at v,
 * appended to list; entries of kind. Returns as conf_load_keys.
 */
int conf_load_acl(conf_t *cfg, yaml_ctx_t *y, const char *what, enum acl_kind kind, acl_t *list,
		  yaml_node_t *v);

/*
 * catalog_member.c: catalog-member-of and catalog-group of zone i's
 * mapping (returns as conf_load_zone_key); once every zone of the list
 * zones is read, each member's catalog checked: a zone with catalog-role
 * producer, not the member itself (SHOAL_ECONFIG naming the line).
 * conf_member_copy gives x a copy of its member record (SHOAL_ENOMEM: none).
 */
int conf_load_member_key(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v);
int conf_catalog_check(const conf_t *cfg, yaml_ctx_t *y, yaml_node_t *zones);
int conf_member_copy(conf_zone_xfr_t *x);

/*
 * The file of producer catalog `name` when none is configured, relative to
 * state-dir: "catalog-NAME.zone" (no final dot) into buf; returns buf.
 */
const char *conf_catalog_file(const char *name, char *buf, size_t cap);

/*
 * update.c: allow-update, serial-policy or update-forward of zone i's mapping. Returns as
 * conf_load_keys, SHOAL_ENOTFOUND for another key.
 */
int conf_load_update_key(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v);

/* Free one zone's lists. */
void conf_zone_xfr_clear(conf_zone_xfr_t *zx);

/* Free the keys (wiped) and the global lists (each zone's go with it: conf_zones_clear). */
void conf_xfr_clear(conf_t *cfg);

/*
 * zones.c: a configuration's zones. Each zone (spec, transfer settings,
 * name and file) is allocated on its own and held, in order, by chunks of
 * pointers that the configuration's table of runs lists (with the index of
 * each chunk's first zone), and by the name index's parts; copies share
 * zones, chunks and parts, each counted, and copy one only to change it.
 */
typedef struct conf_zone conf_zone_t;
typedef struct conf_zone_run {
	struct conf_zone_chunk *chunk;
	size_t first; /* the index of its first zone */
} conf_zone_run_t;

/*
 * Append zone `name` (as it is: the caller makes it canonical) served from
 * `file` to cfg, with ZONE_LIMITS_DEFAULT and no transfer settings. The
 * thread that owns cfg. Returns 0 or SHOAL_ENOMEM (cfg is as it was).
 */
int conf_zones_append(conf_t *cfg, const char *name, const char *file);

/* dst's zones: src's, shared (a reference per chunk and part). False when out of memory. */
bool conf_zones_share(conf_t *dst, const conf_t *src);

/* Drop cfg's zones (what it alone held is freed) and leave it without any. Any thread. */
void conf_zones_clear(conf_t *cfg);

/* Whether zone i of a and zone j of b are the same zone, shared (one allocation). */
bool conf_zone_shared_with(const conf_t *a, size_t i, const conf_t *b, size_t j);

/* FNV-1a of a zone name (len octets) without case: the name index's key. */
uint64_t conf_zone_name_hash(const char *name, size_t len);

/* The length of name without a final dot (the root "." keeps it). */
size_t conf_zone_name_len(const char *name);

/* *dst = a copy of src's entries (its own). False when out of memory (dst is empty). */
bool conf_acl_dup(acl_t *dst, const acl_t *src);

/*
 * runtime.c: zx's address lists, TLS checks and catalog templates, which it
 * shares with the settings it was copied from, made copies of its own.
 * False when out of memory (what was not copied yet is left empty).
 */
bool conf_xfr_own(conf_zone_xfr_t *zx);

/*
 * catalog.c: catalog zones' part of the configuration (RFC 9432).
 * conf_load_templates reads templates: (after keys:, before zones:, which
 * name templates); conf_load_catalog_key one catalog-* key of a zone's
 * mapping; conf_zone_catalog_check zone i once its mapping is read (item:
 * the mapping, for the line). Each returns 0, SHOAL_ECONFIG with y->err,
 * or SHOAL_ENOMEM.
 */
int conf_load_templates(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *list);
int conf_load_catalog_key(conf_t *cfg, yaml_ctx_t *y, conf_zone_xfr_t *zx, const char *key,
			  yaml_node_t *v);
int conf_zone_catalog_check(const conf_t *cfg, yaml_ctx_t *y, size_t i, yaml_node_t *item);

/* dst's templates copied from src's (dst has none). False when out of memory. */
bool conf_templates_copy(conf_t *dst, const conf_t *src);

/* Free cfg's templates. */
void conf_templates_clear(conf_t *cfg);

/* Whether x and y have the same catalog-role and templates (by id and group). */
bool conf_catalog_same(const conf_t *a, const conf_zone_xfr_t *x, const conf_t *b,
		       const conf_zone_xfr_t *y);

/* A zone's transfer settings before any key of its mapping is read. */
static inline conf_zone_xfr_t conf_zone_xfr_default(void)
{
	return (conf_zone_xfr_t){ .journal_size = -1,
				  .zonefile_sync = -1,
				  .update_max_records = -1,
				  .update_rate_per_key = -1,
				  .dnssec_policy = -1 };
}

/*
 * Store the text `value` of option o (CONF_UINT, CONF_BOOL, CONF_ENUM or
 * CONF_STRING) at base + o->offset: conf_options' fields in a conf_t, a
 * policy's in a conf_dnssec_policy_t. Returns 0, SHOAL_ENOMEM, or
 * SHOAL_EINVAL with the reason (without location) in err.
 */
int conf_set_value(void *base, const conf_option_t *o, const char *value, char *err, size_t errlen);

/*
 * dnssec.c: the dnssec-policies: section (every policy read and checked;
 * before the zones, which name them), one zone key of zone i's mapping
 * (dnssec-policy; SHOAL_ENOTFOUND for a key that is not its own), and
 * keys-dir made absolute (relative: from the file's folder; node: its value, for the
 * line). Each returns
 * 0, SHOAL_ECONFIG with y->err, or SHOAL_ENOMEM.
 */
int conf_load_dnssec_policies(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *list);
int conf_load_zone_dnssec(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v);
int conf_keys_dir_resolve(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *node);

/* Checks of the policies against other options (max-nsec3-iterations). As conf_validate. */
int conf_dnssec_validate(const conf_t *cfg, char *err, size_t errlen);

/* A copy of src's policies and keys-dir into dst (whose own are not held). False: no memory. */
bool conf_dnssec_copy(conf_t *dst, const conf_t *src);

/* Free the policies and keys-dir. */
void conf_dnssec_clear(conf_t *cfg);

/*
 * What zone/ needs to sign each primary zone of cfg that names a policy
 * (zone/sign_version.h), from the policy and keys-dir: into its spec's
 * sign, held by its transfer settings' sign (one per policy, shared, read
 * only: conf_xfr_own takes a reference, conf_zone_xfr_clear drops one;
 * the spec points at it from set_zone_limits on). After every zone and
 * keys-dir are read, before the zones' limits are set; the thread that
 * loads the configuration. Returns 0 or SHOAL_ENOMEM.
 */
int conf_dnssec_bind(conf_t *cfg);

/* One more holder of sign (NULL is fine), or one less: the last frees it. Any thread. */
void conf_sign_ref(struct conf_sign *sign);
void conf_sign_unref(struct conf_sign *sign);

/* What zone/ reads of sign (for zone_spec_t.sign); NULL for NULL. */
const struct zone_sign_spec *conf_sign_spec(const struct conf_sign *sign);

/* A yes|no value (yes, true, on, 1; no, false, off, 0; any case) into *out: 0, or SHOAL_EINVAL. */
int conf_parse_bool(const char *s, bool *out);

#endif
