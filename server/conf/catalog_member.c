/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The producer's side of catalog zones in the configuration: catalog-member-of, catalog-group. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/conf/conf.h"
#include "server/conf/internal.h"

/* A member record of catalog and group (either may be NULL: none) in one allocation. */
static conf_member_t *member_new(const char *catalog, const char *group)
{
	size_t lc = catalog ? strlen(catalog) + 1 : 0, lg = group ? strlen(group) + 1 : 0;
	size_t size = sizeof(conf_member_t) + lc + lg;
	conf_member_t *m = calloc(1, size);
	if (!m)
		return NULL;
	char *at = (char *)(m + 1);
	m->size = size;
	if (catalog)
		m->catalog = memcpy(at, catalog, lc);
	if (group)
		m->group = memcpy(at + lc, group, lg);
	return m;
}

/* zone x's member record with catalog or group (NULL: as it was) set; x NULL: out of memory. */
static int member_set(conf_zone_xfr_t *x, const char *catalog, const char *group)
{
	if (!x)
		return SHOAL_ENOMEM; /* conf_zone_xfr_mut could not copy the zone */
	conf_member_t *was = x->member;
	conf_member_t *m = member_new(catalog ? catalog
				      : was   ? was->catalog
					      : NULL,
				      group ? group
				      : was ? was->group
					    : NULL);
	if (!m)
		return SHOAL_ENOMEM;
	free(was);
	x->member = m;
	return 0;
}

int conf_load_member_key(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v)
{
	const char *t = conf_scalar(v);
	char canonical[NAME_TEXT_MAX + 2];
	if (!strcmp(key, "catalog-member-of")) {
		if (!t || name_zone_text(t, canonical, sizeof(canonical)) <= 0)
			return conf_yerr(y, v, "catalog-member-of: \"%s\" is not a zone name",
					 t ? t : "");
		return member_set(conf_zone_xfr_mut(cfg, i), canonical, NULL);
	}
	if (!strcmp(key, "catalog-group")) {
		/* RFC 9432 4.4.2: a TXT string, one <character-string> */
		if (!t || !t[0] || strlen(t) > 255 || strpbrk(t, "\"\\"))
			return conf_yerr(y, v,
					 "catalog-group: \"%s\" is not a name of 1 to 255 "
					 "characters without quotes or backslashes",
					 t ? t : "");
		return member_set(conf_zone_xfr_mut(cfg, i), NULL, t);
	}
	return SHOAL_ENOTFOUND;
}

/* The value node of key in zone mapping item, or NULL. */
static yaml_node_t *item_value(yaml_ctx_t *y, yaml_node_t *item, const char *key)
{
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top;
	     p++) {
		const char *k = conf_scalar(yaml_document_get_node(y->doc, p->key));
		if (k && !strcmp(k, key))
			return yaml_document_get_node(y->doc, p->value);
	}
	return NULL;
}

/* One zone mapping's catalog keys against the zones read (the line of the key in errors). */
static int member_check(const conf_t *cfg, yaml_ctx_t *y, yaml_node_t *item)
{
	yaml_node_t *name = item_value(y, item, "name"),
		    *of = item_value(y, item, "catalog-member-of");
	long i = conf_zone_index(cfg, conf_scalar(name));
	if (i < 0 || !conf_zone_xfr(cfg, i)->member)
		return 0;
	const conf_member_t *m = conf_zone_xfr(cfg, i)->member;
	if (!m->catalog)
		return conf_yerr(y, item_value(y, item, "catalog-group"),
				 "zone %s: catalog-group without catalog-member-of",
				 conf_zone_spec(cfg, i)->name);
	long c = conf_zone_index(cfg, m->catalog);
	if (c == i)
		return conf_yerr(y, of, "zone %s: catalog-member-of names the zone itself",
				 conf_zone_spec(cfg, i)->name);
	if (c < 0 || conf_zone_xfr(cfg, c)->catalog_role != CONF_CATALOG_PRODUCER)
		return conf_yerr(y, of,
				 "zone %s: catalog-member-of: %s is not a zone with catalog-role: "
				 "producer",
				 conf_zone_spec(cfg, i)->name, m->catalog);
	return 0;
}

int conf_catalog_check(const conf_t *cfg, yaml_ctx_t *y, yaml_node_t *zones)
{
	for (yaml_node_item_t *it = zones->data.sequence.items.start;
	     it < zones->data.sequence.items.top; it++) {
		int rc = member_check(cfg, y, yaml_document_get_node(y->doc, *it));
		if (rc < 0)
			return rc;
	}
	return 0;
}

int conf_member_copy(conf_zone_xfr_t *x)
{
	if (!x->member)
		return 0;
	conf_member_t *m = member_new(x->member->catalog, x->member->group);
	x->member = m;
	return m ? 0 : SHOAL_ENOMEM;
}

const char *conf_catalog_file(const char *name, char *buf, size_t cap)
{
	size_t len = strlen(name);
	if (len > 1 && name[len - 1] == '.')
		len--;
	snprintf(buf, cap, "catalog-%.*s.zone", (int)len, name);
	return buf;
}

int conf_zone_set_catalog(conf_t *cfg, size_t i, const char *catalog, char *err, size_t errlen)
{
	long c = conf_zone_index(cfg, catalog);
	if (c < 0 || conf_zone_xfr(cfg, c)->catalog_role != CONF_CATALOG_PRODUCER ||
	    (size_t)c == i) {
		snprintf(err, errlen, "%s is not a zone with catalog-role: producer", catalog);
		return SHOAL_EINVAL;
	}
	/* who reads the catalog transfers its members: the catalog's lists are the member's */
	const conf_zone_xfr_t *cx = conf_zone_xfr(cfg, c);
	conf_zone_xfr_t *x = conf_zone_xfr_mut(cfg, i);
	if (!x)
		return SHOAL_ENOMEM;
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < cx->provide_xfr.count; k++)
		rc = acl_add(&x->provide_xfr, &cx->provide_xfr.entries[k]);
	for (size_t k = 0; rc == 0 && k < cx->notify.count; k++)
		rc = acl_add(&x->notify, &cx->notify.entries[k]);
	return rc < 0 ? rc : member_set(x, conf_zone_spec(cfg, c)->name, NULL);
}
