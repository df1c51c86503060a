/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Catalog zones in the configuration (RFC 9432): templates, catalog-role and a consumer's
 * templates. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "server/conf/internal.h"

const char *const conf_catalog_role_names[] = { "none", "consumer", "producer", NULL };

/* catalog-template not given yet (the loader's mark; a loaded consumer always has one) */
#define TEMPLATE_UNSET UINT32_MAX

/* The index of the template called id in cfg, or -1. */
static long template_index(const conf_t *cfg, const char *id)
{
	for (size_t i = 0; i < cfg->template_count; i++)
		if (cfg->templates[i].id && !strcmp(cfg->templates[i].id, id))
			return (long)i;
	return -1;
}

/* One key of a template's mapping: any zone key but name, file and catalog-*. */
static int load_template_key(conf_t *cfg, yaml_ctx_t *y, conf_template_t *t, yaml_node_t *k,
			     yaml_node_t *v)
{
	const char *key = conf_scalar(k);
	if (!key)
		return conf_yerr(y, k, "templates: a key must be a plain word");
	if (!strcmp(key, "id"))
		return 0;
	int rc = SHOAL_ENOTFOUND;
	if (strcmp(key, "name") && strcmp(key, "file") && strncmp(key, "catalog-", 8))
		rc = conf_load_xfr_key(cfg, y, &t->xfr, key, v);
	if (rc == SHOAL_ENOTFOUND)
		return conf_yerr(y, k,
				 "templates: \"%s\" is not a key a template may have (a zone's "
				 "keys but name, file and catalog-*)",
				 key);
	return rc;
}

/* The id of a template's mapping: a word no other template has. */
static int load_template_id(conf_t *cfg, yaml_ctx_t *y, conf_template_t *t, yaml_node_t *item)
{
	yaml_node_t *idn = NULL;
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top;
	     p++) {
		const char *key = conf_scalar(yaml_document_get_node(y->doc, p->key));
		if (key && !strcmp(key, "id"))
			idn = yaml_document_get_node(y->doc, p->value);
	}
	const char *id = conf_scalar(idn);
	if (!id || !id[0])
		return conf_yerr(y, idn ? idn : item, "templates: each template needs an id");
	if (template_index(cfg, id) >= 0)
		return conf_yerr(y, idn, "templates: id \"%s\" is given twice", id);
	t->id = strdup(id);
	return t->id ? 0 : SHOAL_ENOMEM;
}

/* One entry of templates: (its id, its keys, primaries given, TLS checks that apply). */
static int load_template(conf_t *cfg, yaml_ctx_t *y, conf_template_t *t, yaml_node_t *item)
{
	if (item->type != YAML_MAPPING_NODE)
		return conf_yerr(y, item, "templates: each template is a mapping with id");
	int rc = load_template_id(cfg, y, t, item);
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start;
	     rc == 0 && p < item->data.mapping.pairs.top; p++)
		rc = load_template_key(cfg, y, t, yaml_document_get_node(y->doc, p->key),
				       yaml_document_get_node(y->doc, p->value));
	if (rc < 0)
		return rc;
	/* a catalog's members are secondaries: from where, the template says */
	if (!t->xfr.primaries.count)
		return conf_yerr(y, item,
				 "template %s: needs primaries (its members are secondaries)",
				 t->id);
	char what[64 + CONF_CATALOG_GROUP_MAX];
	snprintf(what, sizeof(what), "template %s", t->id);
	return conf_xfr_tls_check(&t->xfr, y, what, item);
}

int conf_load_templates(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *list)
{
	/* "templates:" with every item commented out is an empty list */
	if (conf_scalar(list) && !conf_scalar(list)[0])
		return 0;
	if (list->type != YAML_SEQUENCE_NODE)
		return conf_yerr(y, list, "templates: expected a list of {id, zone keys}");
	size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	cfg->templates = calloc(n ? n : 1, sizeof(*cfg->templates));
	if (!cfg->templates)
		return SHOAL_ENOMEM;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		conf_template_t *t = &cfg->templates[cfg->template_count++];
		t->xfr = conf_zone_xfr_default();
		yaml_node_t *item =
			yaml_document_get_node(y->doc, list->data.sequence.items.start[i]);
		rc = load_template(cfg, y, t, item);
	}
	return rc;
}

/* zx's templates, made on first use. NULL when out of memory. */
static conf_catalog_t *catalog_of(conf_zone_xfr_t *zx)
{
	if (!zx->catalog && (zx->catalog = calloc(1, sizeof(*zx->catalog))))
		zx->catalog->template = TEMPLATE_UNSET;
	return zx->catalog;
}

/* A template's id at v: its index in *at. */
static int template_at(const conf_t *cfg, yaml_ctx_t *y, const char *key, yaml_node_t *v,
		       uint32_t *at)
{
	const char *id = conf_scalar(v);
	long i = id ? template_index(cfg, id) : -1;
	if (!id)
		return conf_yerr(y, v, "%s: expected a template's id", key);
	if (i < 0)
		return conf_yerr(y, v, "%s: no template \"%s\" (see templates:)", key, id);
	*at = (uint32_t)i;
	return 0;
}

/* One GROUP: ID of catalog-group-templates, added to zx's catalog. */
static int load_group(const conf_t *cfg, yaml_ctx_t *y, conf_zone_xfr_t *zx, yaml_node_t *k,
		      yaml_node_t *v)
{
	const char *key = "catalog-group-templates", *group = conf_scalar(k);
	if (!group || !group[0] || strlen(group) > CONF_CATALOG_GROUP_MAX)
		return conf_yerr(y, k, "%s: a group is a string of 1 to %d octets", key,
				 CONF_CATALOG_GROUP_MAX);
	conf_catalog_t *c = catalog_of(zx);
	for (size_t i = 0; c && i < c->group_count; i++)
		if (!strcmp(c->groups[i].name, group))
			return conf_yerr(y, k, "%s: group \"%s\" is given twice", key, group);
	if (c)
		c = realloc(c, sizeof(*c) + (c->group_count + 1) * sizeof(c->groups[0]));
	if (!c)
		return SHOAL_ENOMEM;
	zx->catalog = c;
	conf_catalog_group_t *g = &c->groups[c->group_count];
	snprintf(g->name, sizeof(g->name), "%s", group);
	int rc = template_at(cfg, y, key, v, &g->template);
	c->group_count += rc == 0;
	return rc;
}

int conf_load_catalog_key(conf_t *cfg, yaml_ctx_t *y, conf_zone_xfr_t *zx, const char *key,
			  yaml_node_t *v)
{
	if (!strcmp(key, "catalog-role")) {
		const char *role = conf_scalar(v);
		for (uint32_t i = 0; role && conf_catalog_role_names[i]; i++)
			if (!strcasecmp(role, conf_catalog_role_names[i]))
				return zx->catalog_role = i, 0;
		return conf_yerr(y, v, "catalog-role: \"%s\" is not none, consumer or producer",
				 role ? role : "");
	}
	if (!strcmp(key, "catalog-template"))
		return catalog_of(zx) ? template_at(cfg, y, key, v, &zx->catalog->template)
				      : SHOAL_ENOMEM;
	if (strcmp(key, "catalog-group-templates"))
		return SHOAL_ENOTFOUND;
	if (v->type != YAML_MAPPING_NODE)
		return conf_yerr(y, v, "%s: expected a mapping of GROUP: ID", key);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
	     p++) {
		int rc = load_group(cfg, y, zx, yaml_document_get_node(y->doc, p->key),
				    yaml_document_get_node(y->doc, p->value));
		if (rc < 0)
			return rc;
	}
	return 0;
}

int conf_zone_catalog_check(const conf_t *cfg, yaml_ctx_t *y, size_t i, yaml_node_t *item)
{
	const conf_zone_xfr_t *zx = conf_zone_xfr(cfg, i);
	const char *name = conf_zone_spec(cfg, i)->name;
	bool consumer = zx->catalog_role == CONF_CATALOG_CONSUMER;
	if (zx->catalog && !consumer)
		return conf_yerr(y, item,
				 "zone %s: catalog-template and catalog-group-templates are for "
				 "a zone with catalog-role: consumer",
				 name);
	/* RFC 9432 5.1: every member is configured from somewhere; a group may be unknown */
	if (consumer && (!zx->catalog || zx->catalog->template == TEMPLATE_UNSET))
		return conf_yerr(y, item,
				 "zone %s: a catalog-role: consumer zone needs catalog-template "
				 "(the template of members without a known group)",
				 name);
	return 0;
}

uint32_t conf_catalog_template(const conf_zone_xfr_t *zx, const char *group)
{
	const conf_catalog_t *c = zx->catalog;
	for (size_t i = 0; group && i < c->group_count; i++)
		if (!strcmp(c->groups[i].name, group))
			return c->groups[i].template;
	return c->template;
}

bool conf_templates_copy(conf_t *dst, const conf_t *src)
{
	if (!src->template_count)
		return true;
	dst->templates = calloc(src->template_count, sizeof(*dst->templates));
	if (!dst->templates)
		return false;
	/* each left owned or empty, never src's, for conf_templates_clear */
	dst->template_count = src->template_count;
	bool ok = true;
	for (size_t i = 0; ok && i < src->template_count; i++) {
		conf_template_t *t = &dst->templates[i];
		t->xfr = src->templates[i].xfr;
		ok = conf_xfr_own(&t->xfr) && (t->id = strdup(src->templates[i].id));
	}
	return ok;
}

void conf_templates_clear(conf_t *cfg)
{
	for (size_t i = 0; i < cfg->template_count; i++) {
		conf_zone_xfr_clear(&cfg->templates[i].xfr);
		free(cfg->templates[i].id);
	}
	free(cfg->templates);
	cfg->templates = NULL;
	cfg->template_count = 0;
}

/* Whether templates i of a and j of b have the same id (settings are compared apart). */
static bool template_same(const conf_t *a, uint32_t i, const conf_t *b, uint32_t j)
{
	return !strcmp(a->templates[i].id, b->templates[j].id);
}

bool conf_catalog_same(const conf_t *a, const conf_zone_xfr_t *x, const conf_t *b,
		       const conf_zone_xfr_t *y)
{
	const conf_catalog_t *p = x->catalog, *q = y->catalog;
	if (x->catalog_role != y->catalog_role || !p != !q)
		return false;
	if (!p)
		return true;
	if (p->group_count != q->group_count || !template_same(a, p->template, b, q->template))
		return false;
	for (size_t k = 0; k < p->group_count; k++)
		if (strcmp(p->groups[k].name, q->groups[k].name) ||
		    !template_same(a, p->groups[k].template, b, q->groups[k].template))
			return false;
	return true;
}
