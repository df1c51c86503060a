/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inside server/conf/: the YAML document being read, its errors, and the zones' string pool. */
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

/*
 * After zone i's mapping is read: tls-pin or tls-hostname without a
 * primary asked over TLS is refused (item: the mapping, for the line).
 * Returns 0 or SHOAL_ECONFIG with y->err.
 */
int conf_zone_tls_check(const conf_t *cfg, yaml_ctx_t *y, size_t i, yaml_node_t *item);

/*
 * The list `what` (one "ADDR... KEY" entry or a list of them) at v,
 * appended to list; entries of kind. Returns as conf_load_keys.
 */
int conf_load_acl(conf_t *cfg, yaml_ctx_t *y, const char *what, enum acl_kind kind, acl_t *list,
		  yaml_node_t *v);

/*
 * update.c: allow-update or serial-policy of zone i's mapping. Returns as
 * conf_load_keys, SHOAL_ENOTFOUND for another key.
 */
int conf_load_update_key(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v);

/* Free one zone's lists. */
void conf_zone_xfr_clear(conf_zone_xfr_t *zx);

/* Free the keys (wiped), the global lists and every zone's lists. */
void conf_xfr_clear(conf_t *cfg);

/*
 * strings.c: the zones' names and file paths of a configuration, cut from
 * blocks that its copies share (conf_copy takes a reference, not a copy of
 * each string), freed with the last holder. Strings are added by the main
 * thread (or the one loading a configuration of its own); a reference is
 * dropped by any thread.
 */
typedef struct conf_strings conf_strings_t;

/* A pool holding nothing, with one reference (the caller's); NULL when out of memory. */
conf_strings_t *conf_strings_new(void);

/* One more reference to s; returns s. */
conf_strings_t *conf_strings_ref(conf_strings_t *s);

/* Drop one reference (s may be NULL); the last frees every string of the pool. */
void conf_strings_unref(conf_strings_t *s);

/* A copy of text in s, alive as long as s; NULL when out of memory. */
const char *conf_strings_dup(conf_strings_t *s, const char *text);

/*
 * Whether a copy of a configuration whose zones' strings take `held`
 * octets of s may share s, or should take a pool of its own (what zones
 * removed left behind has grown as large as what is held).
 */
bool conf_strings_shareable(const conf_strings_t *s, size_t held);

/* A zone's transfer settings before any key of its mapping is read. */
static inline conf_zone_xfr_t conf_zone_xfr_default(void)
{
	return (conf_zone_xfr_t){ .journal_size = -1, .zonefile_sync = -1 };
}

#endif
