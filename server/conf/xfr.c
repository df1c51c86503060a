/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The transfer part of shoald's configuration: TSIG keys, and each zone's address lists. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/conf/internal.h"
#include "server/conf/update.h"

/* Entries in one zone's list: far more servers than any zone has. */
#define CONF_ACL_MAX 256
/* A secret file holds base64 text: a 1024-octet secret with line breaks fits. */
#define SECRET_FILE_MAX 4096

/* The key of cfg called name (text, any case, final dot or not): its index, or -1. */
static int key_index(const conf_t *cfg, const char *name)
{
	uint8_t wire[NAME_MAXLEN];
	if (name_from_text(name, NULL, wire) < 0)
		return -1;
	name_lower(wire);
	const tsig_key_t *k = tsig_key_find(cfg->keys, cfg->key_count, wire);
	return k ? (int)(k - cfg->keys) : -1;
}

/*
 * Read the base64 secret of a key from path into buf[0..cap): a regular
 * file that only its owner, root or the server's user, may read or write,
 * as the secret is worth as much as the zones it guards. Returns 0, or
 * SHOAL_ECONFIG with the reason in why.
 */
static int read_secret_file(const char *path, char *buf, size_t cap, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int rc = SHOAL_ECONFIG;
	if (fd < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s is not a regular file", path);
	} else if (st.st_mode & 077) {
		snprintf(why, whylen,
			 "%s may be read or written by others (mode %04o): make it 0600 or 0400",
			 path, (unsigned)(st.st_mode & 07777));
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, whylen, "%s belongs to uid %u, neither root nor this process", path,
			 (unsigned)st.st_uid);
	} else {
		ssize_t n = read(fd, buf, cap - 1);
		if (n < 0)
			snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		else if ((size_t)n == cap - 1)
			snprintf(why, whylen, "%s is longer than a secret (%zu octets)", path,
				 cap - 1);
		else {
			buf[n] = '\0';
			rc = 0;
		}
	}
	close(fd);
	return rc;
}

/* One item of keys:, set up into key. */
static int load_key(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *item, tsig_key_t *key)
{
	if (item->type != YAML_MAPPING_NODE)
		return conf_yerr(y, item,
				 "keys: each key is a mapping with name, algorithm "
				 "and secret (or secret-file)");
	const char *name = NULL, *alg = NULL, *secret = NULL, *file = NULL;
	yaml_node_t *secret_node = item;
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
		const char *kt = conf_scalar(k), *vt = conf_scalar(v);
		if (!kt)
			return conf_yerr(y, k, "keys: a key must be a plain word");
		if (!vt)
			return conf_yerr(y, v, "keys: %s must be a single value", kt);
		if (!strcmp(kt, "name")) {
			name = vt;
		} else if (!strcmp(kt, "algorithm")) {
			alg = vt;
		} else if (!strcmp(kt, "secret")) {
			secret = vt;
			secret_node = v;
		} else if (!strcmp(kt, "secret-file")) {
			file = vt;
			secret_node = v;
		} else {
			return conf_yerr(y, k,
					 "keys: unknown key \"%s\" (name, algorithm, secret, "
					 "secret-file)",
					 kt);
		}
	}
	if (!name || !alg || !secret == !file)
		return conf_yerr(y, item,
				 "keys: a key needs name, algorithm, and one of secret and "
				 "secret-file");
	if (key_index(cfg, name) >= 0)
		return conf_yerr(y, item, "keys: %s is given twice", name);
	char text[SECRET_FILE_MAX], why[PATH_MAX + 128];
	if (file && read_secret_file(file, text, sizeof(text), why, sizeof(why)) < 0)
		return conf_yerr(y, secret_node, "key %s: secret-file: %s", name, why);
	int rc = tsig_key_init(key, name, alg, file ? text : secret);
	sodium_memzero(text, sizeof(text));
	switch (rc) {
	case 0:
		return 0;
	case SHOAL_ENAME:
		return conf_yerr(y, item, "keys: \"%s\" is not a valid key name", name);
	case SHOAL_EUNSUPPORTED:
		return conf_yerr(y, item,
				 "key %s: algorithm \"%s\" is not supported (hmac-sha1, "
				 "hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512)",
				 name, alg);
	case SHOAL_ESYNTAX:
		return conf_yerr(y, secret_node, "key %s: the secret is not base64", name);
	default:
		return conf_yerr(y, secret_node,
				 "key %s: the secret is empty or longer than %d octets", name,
				 TSIG_SECRET_MAX);
	}
}

int conf_load_keys(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *list)
{
	if (list->type != YAML_SEQUENCE_NODE)
		return conf_yerr(y, list, "keys: expected a list of {name, algorithm, secret}");
	size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	if (n > CONF_KEYS_MAX)
		return conf_yerr(y, list, "keys: more than %d keys", CONF_KEYS_MAX);
	/* allocated once, so no copy of a keyed state is left behind by realloc */
	cfg->keys = calloc(n ? n : 1, sizeof(*cfg->keys));
	if (!cfg->keys)
		return SHOAL_ENOMEM;
	for (yaml_node_item_t *i = list->data.sequence.items.start;
	     i < list->data.sequence.items.top; i++) {
		int rc = load_key(cfg, y, yaml_document_get_node(y->doc, *i),
				  &cfg->keys[cfg->key_count]);
		if (rc < 0)
			return rc;
		cfg->key_count++;
	}
	return 0;
}

/* One "ADDR... KEY" entry of list `what`. */
static int load_entry(conf_t *cfg, yaml_ctx_t *y, const char *what, enum acl_kind kind, acl_t *list,
		      yaml_node_t *item)
{
	const char *text = conf_scalar(item);
	if (!text)
		return conf_yerr(y, item, "%s: each entry is \"ADDRESS KEY\" (or NOKEY)", what);
	if (list->count == CONF_ACL_MAX)
		return conf_yerr(y, item, "%s: more than %d entries", what, CONF_ACL_MAX);
	acl_entry_t e;
	char key[ACL_TEXT_MAX], why[ACL_TEXT_MAX + 128];
	if (acl_entry_parse(text, kind, &e, key, sizeof(key), why, sizeof(why)) < 0)
		return conf_yerr(y, item, "%s: %s", what, why);
	/* RFC 9103 protects transfers; NOTIFY stays on UDP and TCP */
	if (e.tls && strcmp(what, "provide-xfr") && strcmp(what, "primaries"))
		return conf_yerr(y, item, "%s: \"tls\" is for provide-xfr and primaries only",
				 what);
	if (key[0]) {
		e.key = key_index(cfg, key);
		if (e.key < 0)
			return conf_yerr(y, item, "%s: no key called \"%s\" (see keys:)", what,
					 key);
	}
	return acl_add(list, &e);
}

/* A zone's (or template's) auth for its TLS primaries, made on first use. */
static tls_auth_t *zone_tls(conf_zone_xfr_t *zx)
{
	if (!zx->primaries_tls)
		zx->primaries_tls = calloc(1, sizeof(*zx->primaries_tls));
	return zx->primaries_tls;
}

/* One pin of tls-pin. */
static int load_pin(conf_zone_xfr_t *zx, yaml_ctx_t *y, yaml_node_t *item)
{
	tls_auth_t *a = zone_tls(zx);
	const char *text = conf_scalar(item);
	if (!a)
		return SHOAL_ENOMEM;
	if (!text || tls_pin_parse(text, a->pins[a->pin_count]) < 0)
		return conf_yerr(y, item,
				 "tls-pin: \"%s\" is not an SPKI pin (base64 of SHA-256, 44 "
				 "characters; shoalctl tls-pin prints Shoal's)",
				 text ? text : "");
	if (a->pin_count == TLS_PINS_MAX)
		return conf_yerr(y, item, "tls-pin: more than %d pins", TLS_PINS_MAX);
	a->pin_count++;
	a->mode = TLS_AUTH_PIN;
	return 0;
}

/* tls-pin (a pin or a list) and tls-hostname: how the zone's TLS primaries are checked. */
static int load_zone_tls(conf_zone_xfr_t *zx, yaml_ctx_t *y, const char *key, yaml_node_t *v)
{
	tls_auth_t *a = zone_tls(zx);
	if (!a)
		return SHOAL_ENOMEM;
	if (a->mode != TLS_AUTH_OPPORTUNISTIC)
		return conf_yerr(y, v, "%s: a zone has tls-pin or tls-hostname, not both", key);
	if (!strcmp(key, "tls-hostname")) {
		const char *host = conf_scalar(v);
		if (!host || !host[0] || strlen(host) >= TLS_HOSTNAME_MAX)
			return conf_yerr(y, v, "tls-hostname: expected a host name");
		snprintf(a->hostname, sizeof(a->hostname), "%s", host);
		a->mode = TLS_AUTH_HOSTNAME;
		return 0;
	}
	if (conf_scalar(v))
		return load_pin(zx, y, v);
	if (v->type != YAML_SEQUENCE_NODE)
		return conf_yerr(y, v, "tls-pin: expected a pin or a list of pins");
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		int rc = load_pin(zx, y, yaml_document_get_node(y->doc, *it));
		if (rc < 0)
			return rc;
	}
	return 0;
}

int conf_zone_tls_check(const conf_t *cfg, yaml_ctx_t *y, size_t i, yaml_node_t *item)
{
	char what[NAME_TEXT_MAX + 8];
	snprintf(what, sizeof(what), "zone %s", conf_zone_spec(cfg, i)->name);
	return conf_xfr_tls_check(conf_zone_xfr(cfg, i), y, what, item);
}

int conf_xfr_tls_check(const conf_zone_xfr_t *zx, yaml_ctx_t *y, const char *what,
		       yaml_node_t *item)
{
	bool tls = false;
	for (size_t k = 0; k < zx->primaries.count; k++)
		tls = tls || zx->primaries.entries[k].tls;
	if (zx->primaries_tls && zx->primaries_tls->mode != TLS_AUTH_OPPORTUNISTIC && !tls)
		return conf_yerr(y, item,
				 "%s: tls-pin and tls-hostname check primaries asked over "
				 "TLS, and none is (\"ADDR KEY tls\")",
				 what);
	return 0;
}

bool conf_tls_mutual(const conf_t *cfg)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const acl_t *a = &conf_zone_xfr(cfg, i)->provide_xfr;
		for (size_t k = 0; k < a->count; k++)
			if (a->entries[k].tls == ACL_TLS_PIN || a->entries[k].tls == ACL_TLS_CA)
				return true;
	}
	return false;
}

bool conf_tls_hostnames(const conf_t *cfg)
{
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const tls_auth_t *a = conf_zone_xfr(cfg, i)->primaries_tls;
		if (a && a->mode == TLS_AUTH_HOSTNAME)
			return true;
	}
	return false;
}

/* The keys a zone (or a template) may set its own value of, over the global option's. */
static const struct own_uint {
	const char *key;
	size_t offset; /* of an int64_t in conf_zone_xfr_t: -1 until set */
} own_uints[] = {
	{ "ixfr-journal-size", offsetof(conf_zone_xfr_t, journal_size) },
	{ "zonefile-sync", offsetof(conf_zone_xfr_t, zonefile_sync) },
	{ "update-max-records", offsetof(conf_zone_xfr_t, update_max_records) },
	{ "update-rate-per-key", offsetof(conf_zone_xfr_t, update_rate_per_key) },
};

/*
 * A zone's own value of global option key, within that option's range
 * (conf_options). SHOAL_ENOTFOUND when key is none of own_uints.
 */
static int load_own_uint(yaml_ctx_t *y, conf_zone_xfr_t *zx, const char *key, yaml_node_t *v)
{
	const struct own_uint *own = NULL;
	for (size_t k = 0; !own && k < sizeof(own_uints) / sizeof(own_uints[0]); k++)
		own = strcmp(own_uints[k].key, key) ? NULL : &own_uints[k];
	const conf_option_t *o = NULL;
	for (size_t k = 0; own && !o && k < conf_option_count; k++)
		o = strcmp(conf_options[k].name, key) ? NULL : &conf_options[k];
	if (!o)
		return SHOAL_ENOTFOUND;
	const char *t = conf_scalar(v);
	char *end;
	errno = 0;
	unsigned long long n = t ? strtoull(t, &end, 10) : 0;
	if (!t || errno || end == t || *end || t[0] == '-' || n < o->min || n > o->max)
		return conf_yerr(y, v, "%s: \"%s\" is not a number from %u to %u", key, t ? t : "",
				 (unsigned)o->min, (unsigned)o->max);
	*(int64_t *)(void *)((char *)zx + own->offset) = (int64_t)n;
	return 0;
}

/* A zone's own value where it has one (own >= 0), else the global one. */
static uint32_t own_or_global(int64_t own, uint32_t global)
{
	return own >= 0 ? (uint32_t)own : global;
}

uint32_t conf_zone_sync(const conf_t *cfg, size_t i)
{
	return own_or_global(conf_zone_xfr(cfg, i)->zonefile_sync, cfg->zonefile_sync);
}

uint32_t conf_zone_update_max_records(const conf_t *cfg, size_t i)
{
	return own_or_global(conf_zone_xfr(cfg, i)->update_max_records, cfg->update_max_records);
}

uint32_t conf_zone_update_rate(const conf_t *cfg, size_t i)
{
	return own_or_global(conf_zone_xfr(cfg, i)->update_rate_per_key, cfg->update_rate_per_key);
}

int conf_load_zone_key(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v)
{
	if (!strcmp(key, "catalog-member-of") || !strcmp(key, "catalog-group"))
		return conf_load_member_key(cfg, y, i, key, v);
	conf_zone_xfr_t *zx = conf_zone_xfr_mut(cfg, i);
	if (!zx)
		return SHOAL_ENOMEM;
	if (!strncmp(key, "catalog-", 8))
		return conf_load_catalog_key(cfg, y, zx, key, v);
	/* a zone's own, not a template's: its rules' names are relative to its apex */
	int rc = conf_load_update_key(cfg, y, i, key, v);
	if (rc != SHOAL_ENOTFOUND)
		return rc;
	return conf_load_xfr_key(cfg, y, zx, key, v);
}

int conf_load_xfr_key(conf_t *cfg, yaml_ctx_t *y, conf_zone_xfr_t *zx, const char *key,
		      yaml_node_t *v)
{
	if (!strcmp(key, "tls-pin") || !strcmp(key, "tls-hostname"))
		return load_zone_tls(zx, y, key, v);
	int rc = load_own_uint(y, zx, key, v);
	if (rc != SHOAL_ENOTFOUND)
		return rc;
	acl_t *list;
	enum acl_kind kind = ACL_TARGET;
	if (!strcmp(key, "allow-query")) {
		list = &zx->allow_query.list;
		kind = ACL_MATCH;
		zx->allow_query.set = true;
	} else if (!strcmp(key, "provide-xfr")) {
		list = &zx->provide_xfr;
		kind = ACL_MATCH;
	} else if (!strcmp(key, "allow-notify")) {
		list = &zx->allow_notify;
		kind = ACL_MATCH;
		zx->allow_notify_set = true;
	} else if (!strcmp(key, "notify")) {
		list = &zx->notify;
	} else if (!strcmp(key, "primaries")) {
		list = &zx->primaries;
	} else {
		return SHOAL_ENOTFOUND;
	}
	return conf_load_acl(cfg, y, key, kind, list, v);
}

int conf_load_acl(conf_t *cfg, yaml_ctx_t *y, const char *key, enum acl_kind kind, acl_t *list,
		  yaml_node_t *v)
{
	if (conf_scalar(v))
		return load_entry(cfg, y, key, kind, list, v);
	if (v->type != YAML_SEQUENCE_NODE)
		return conf_yerr(y, v, "%s: expected a list of \"ADDRESS KEY\"", key);
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		int rc = load_entry(cfg, y, key, kind, list, yaml_document_get_node(y->doc, *it));
		if (rc < 0)
			return rc;
	}
	return 0;
}

void conf_xfr_clear(conf_t *cfg)
{
	for (size_t i = 0; i < cfg->key_count; i++)
		tsig_key_clear(&cfg->keys[i]);
	free(cfg->keys);
	cfg->keys = NULL;
	cfg->key_count = 0;
	acl_clear(&cfg->allow_query.list);
}

void conf_zone_xfr_clear(conf_zone_xfr_t *zx)
{
	acl_clear(&zx->provide_xfr);
	acl_clear(&zx->notify);
	acl_clear(&zx->primaries);
	acl_clear(&zx->allow_notify);
	acl_clear(&zx->allow_query.list);
	free(zx->primaries_tls);
	zx->primaries_tls = NULL;
	free(zx->member);
	zx->member = NULL;
	free(zx->catalog);
	zx->catalog = NULL;
	conf_update_unref(zx->update);
	zx->update = NULL;
	conf_sign_unref(zx->sign);
	zx->sign = NULL;
}

const void *conf_zone_allow_query(const void *arg, size_t i)
{
	const conf_t *cfg = arg;
	const conf_acl_t *own = &conf_zone_xfr(cfg, i)->allow_query;
	return own->set ? &own->list : conf_allow_query_global(cfg);
}

const void *conf_allow_query_global(const conf_t *cfg)
{
	return cfg->allow_query.set ? &cfg->allow_query.list : NULL;
}
