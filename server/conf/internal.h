/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inside server/conf/conf.c and server/conf/xfr.c: the YAML document being read, and its errors. */
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

/* Free the keys (wiped) and every zone's lists. */
void conf_xfr_clear(conf_t *cfg);

/* A zone's transfer settings before any key of its mapping is read. */
static inline conf_zone_xfr_t conf_zone_xfr_default(void)
{
	return (conf_zone_xfr_t){ .journal_size = -1, .zonefile_sync = -1 };
}

#endif
