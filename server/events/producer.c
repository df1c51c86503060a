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

/* Catalog c of cfg made from want[0..n) and written when it changed (*changed). */
static int make_one(const conf_t *cfg, size_t c, const catgen_want_t *want, size_t n, time_t now,
		    bool *changed, char *err, size_t errlen)
{
	const char *name = cfg->zones[c].name, *file = cfg->zones[c].file;
	catgen_t cat;
	size_t had = 0;
	*changed = false;
	int rc = catgen_init(&cat, name);
	if (rc == 0 && (rc = catgen_read(&cat, file)) < 0)
		snprintf(err, errlen, "catalog %s: cannot read %s: %s", name, file,
			 shoal_strerror(rc));
	had = cat.count;
	if (rc == 0)
		rc = catgen_update(&cat, want, n, now, changed);
	if (rc == 0 && *changed && (rc = catgen_write(&cat, file)) < 0)
		snprintf(err, errlen, "catalog %s: cannot write %s: %s", name, file,
			 shoal_strerror(rc));
	if (rc == SHOAL_ENOMEM)
		snprintf(err, errlen, "catalog %s: out of memory", name);
	if (rc == 0 && *changed)
		log_info("catalog %s: %zu members (had %zu), serial %u", name, cat.count, had,
			 (unsigned)cat.serial);
	catgen_clear(&cat);
	return rc;
}

int producer_make(const conf_t *cfg, time_t now, char *err, size_t errlen)
{
	member_of_t *m = malloc((cfg->zone_count ? cfg->zone_count : 1) * sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "catalogs: out of memory");
		return SHOAL_ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const conf_member_t *cm = cfg->zone_xfr[i].member;
		long c = cm ? conf_zone_index(cfg, cm->catalog) : -1;
		if (c >= 0) /* the loader checked that it is a producer */
			m[n++] = (member_of_t){ (size_t)c, { cfg->zones[i].name, cm->group } };
	}
	qsort(m, n, sizeof(*m), member_of_cmp);
	/* each catalog's members are a run of m, in the catalogs' order; a catalog with none too */
	catgen_want_t *want = malloc((n ? n : 1) * sizeof(*want));
	int rc = want ? 0 : SHOAL_ENOMEM;
	size_t at = 0;
	bool changed;
	for (size_t c = 0; rc == 0 && c < cfg->zone_count; c++) {
		if (cfg->zone_xfr[c].catalog_role != CONF_CATALOG_PRODUCER)
			continue;
		size_t k = 0;
		while (at < n && m[at].catalog < c)
			at++;
		for (; at < n && m[at].catalog == c; at++)
			want[k++] = m[at].want;
		rc = make_one(cfg, c, want, k, now, &changed, err, errlen);
	}
	if (!want)
		snprintf(err, errlen, "catalogs: out of memory");
	free(want);
	free(m);
	return rc;
}

int producer_follow(reload_t *r, const conf_t *cfg, const char *catalog, reload_done_fn done,
		    void *arg, char *err, size_t errlen)
{
	long c = conf_zone_index(cfg, catalog);
	if (c < 0 || cfg->zone_xfr[c].catalog_role != CONF_CATALOG_PRODUCER)
		return 0; /* gone with the change (zone-remove of the catalog itself) */
	catgen_want_t *want = malloc((cfg->zone_count ? cfg->zone_count : 1) * sizeof(*want));
	if (!want) {
		snprintf(err, errlen, "catalog %s: out of memory", catalog);
		return SHOAL_ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const conf_member_t *cm = cfg->zone_xfr[i].member;
		if (cm && conf_zone_index(cfg, cm->catalog) == c)
			want[k++] = (catgen_want_t){ cfg->zones[i].name, cm->group };
	}
	bool changed = false;
	int rc = make_one(cfg, (size_t)c, want, k, time(NULL), &changed, err, errlen);
	free(want);
	if (rc < 0 || !changed)
		return rc;
	rc = reload_start(r, cfg->zones[c].name, done, arg);
	if (rc < 0)
		snprintf(err, errlen, "catalog %s: cannot read it again: %s", catalog,
			 shoal_strerror(rc));
	return rc < 0 ? rc : 1;
}
