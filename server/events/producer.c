/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalog zones this server produces (RFC 9432): each made from its members, before a load. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/common/log.h"
#include "server/events/producer.h"
#include "server/events/reload.h"
#include "zone/catalog_gen.h"
#include "zone/changeset.h"

/* A member of catalog `catalog` (the catalog's zone index), to sort by catalog. */
typedef struct member_of {
	size_t catalog;
	catgen_want_t want;
} member_of_t;

static int member_of_cmp(const void *a, const void *b)
{
	size_t x = ((const member_of_t *)a)->catalog, y = ((const member_of_t *)b)->catalog;
	return (x > y) - (x < y);
}

/* The catalogs made, as they were made last: what the next change starts from. */
struct producer {
	catgen_t *cats;
	size_t count;
};

producer_t *producer_new(void)
{
	return calloc(1, sizeof(producer_t));
}

void producer_free(producer_t *p)
{
	for (size_t i = 0; p && i < p->count; i++)
		catgen_clear(&p->cats[i]);
	if (p)
		free(p->cats);
	free(p);
}

/* Catalog `name` as p holds it, or NULL. */
static catgen_t *held(producer_t *p, const char *name)
{
	for (size_t i = 0; i < p->count; i++)
		if (!strcmp(p->cats[i].apex, name))
			return &p->cats[i];
	return NULL;
}

/*
 * Catalog `name` as p holds it, read from file the first time. NULL with
 * *rc: out of memory, or a file that cannot be read (not held: it is not
 * made anew over ids and a serial it could not see).
 */
static catgen_t *hold(producer_t *p, const char *name, const char *file, int *rc)
{
	catgen_t *cat = held(p, name);
	if (cat)
		return cat;
	catgen_t *grown = realloc(p->cats, (p->count + 1) * sizeof(*grown));
	*rc = grown ? catgen_init(&grown[p->count], name) : SHOAL_ENOMEM;
	if (grown)
		p->cats = grown;
	if (*rc < 0)
		return NULL;
	cat = &p->cats[p->count];
	*rc = catgen_read(cat, file);
	if (*rc < 0) {
		catgen_clear(cat);
		return NULL;
	}
	p->count++;
	return cat;
}

/* Catalog c of cfg made from want[0..n) and written when it changed (*changed). */
static int make_one(producer_t *p, const conf_t *cfg, size_t c, const catgen_want_t *want, size_t n,
		    time_t now, bool *changed, char *err, size_t errlen)
{
	const char *name = conf_zone_spec(cfg, c)->name, *file = conf_zone_spec(cfg, c)->file;
	int rc = 0;
	*changed = false;
	catgen_t *cat = hold(p, name, file, &rc);
	if (rc < 0 && rc != SHOAL_ENOMEM)
		snprintf(err, errlen, "catalog %s: cannot read %s: %s", name, file,
			 shoal_strerror(rc));
	size_t had = cat ? cat->count : 0;
	if (rc == 0)
		rc = catgen_update(cat, want, n, now, changed);
	if (rc == 0 && *changed && (rc = catgen_write(cat, file)) < 0)
		snprintf(err, errlen, "catalog %s: cannot write %s: %s", name, file,
			 shoal_strerror(rc));
	if (rc == SHOAL_ENOMEM)
		snprintf(err, errlen, "catalog %s: out of memory", name);
	if (rc == 0 && *changed)
		log_info("catalog %s: %zu members (had %zu), serial %u", name, cat->count, had,
			 (unsigned)cat->serial);
	return rc;
}

int producer_make(producer_t *p, const conf_t *cfg, time_t now, char *err, size_t errlen)
{
	member_of_t *m = malloc((cfg->zone_count ? cfg->zone_count : 1) * sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "catalogs: out of memory");
		return SHOAL_ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const conf_member_t *cm = conf_zone_xfr(cfg, i)->member;
		long c = cm ? conf_zone_index(cfg, cm->catalog) : -1;
		if (c >= 0) /* the loader checked that it is a producer */
			m[n++] = (member_of_t){ (size_t)c,
						{ conf_zone_spec(cfg, i)->name, cm->group } };
	}
	qsort(m, n, sizeof(*m), member_of_cmp);
	/* each catalog's members are a run of m, in the catalogs' order; a catalog with none too */
	catgen_want_t *want = malloc((n ? n : 1) * sizeof(*want));
	int rc = want ? 0 : SHOAL_ENOMEM;
	size_t at = 0;
	bool changed;
	for (size_t c = 0; rc == 0 && c < cfg->zone_count; c++) {
		if (conf_zone_xfr(cfg, c)->catalog_role != CONF_CATALOG_PRODUCER)
			continue;
		size_t k = 0;
		while (at < n && m[at].catalog < c)
			at++;
		for (; at < n && m[at].catalog == c; at++)
			want[k++] = m[at].want;
		rc = make_one(p, cfg, c, want, k, now, &changed, err, errlen);
	}
	if (!want)
		snprintf(err, errlen, "catalogs: out of memory");
	free(want);
	free(m);
	return rc;
}

int producer_follow(producer_t *p, reload_t *r, const conf_t *cfg, const char *catalog,
		    const char *member, bool add, reload_done_fn done, void *arg, char *err,
		    size_t errlen)
{
	long c = conf_zone_index(cfg, catalog), m = add ? conf_zone_index(cfg, member) : -1;
	if (c < 0 || conf_zone_xfr(cfg, c)->catalog_role != CONF_CATALOG_PRODUCER)
		return 0; /* gone with the change (zone-remove of the catalog itself) */
	const char *name = conf_zone_spec(cfg, c)->name, *file = conf_zone_spec(cfg, c)->file;
	const conf_member_t *cm = m >= 0 ? conf_zone_xfr(cfg, m)->member : NULL;
	int rc = 0;
	catgen_t *cat = hold(p, name, file, &rc);
	changeset_t *cs = NULL;
	if (rc == 0)
		rc = catgen_change(cat, member, cm ? cm->group : NULL, add, time(NULL), &cs);
	if (rc == SHOAL_EEXIST || rc == SHOAL_ENOTFOUND)
		return 0; /* listed already, or never */
	if (rc == 0 && (rc = catgen_write(cat, file)) < 0)
		log_error("catalog %s: cannot write %s: %s; served, not kept across a restart",
			  name, file, shoal_strerror(rc));
	if (cs)
		rc = reload_apply(r, name, cs, done, arg);
	changeset_unref(cs);
	if (rc < 0)
		snprintf(err, errlen, "catalog %s: %s", name, shoal_strerror(rc));
	else
		log_info("catalog %s: %s %s, serial %u", name, member, add ? "added" : "removed",
			 (unsigned)cat->serial);
	return rc < 0 ? rc : 1;
}
