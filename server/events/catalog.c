/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Consumer catalog zones (RFC 9432): each catalog's change made into one new configuration. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/events/catalog.h"
#include "zone/catalog.h"
#include "zone/zone.h"

/* Skips logged one by one per version read; the rest are counted. */
#define SKIPS_LOGGED 10

/* One consumer catalog and what of it is applied. */
typedef struct cat {
	char name[NAME_TEXT_MAX];  /* "catalog.example." as the configuration names it */
	uint8_t apex[NAME_MAXLEN]; /* lowercase wire */
	catalog_t read;            /* the version applied (empty: none yet) */
	bool *applied;             /* per member of read: served as this catalog's */
	const zone_t *refused;     /* the last version refused (held): not read again */
	bool look;                 /* look again at the version applied (another changed) */
	bool gone;                 /* no longer a consumer of the configuration served */
} cat_t;

/* A member another catalog gives up to the one stepped (coo, RFC 9432 4.3.1). */
typedef struct moved {
	size_t cat, member;
} moved_t;

struct catalogs {
	char *state_dir;
	cat_t *cats;
	size_t count;
	/* the step planned, until catalogs_commit */
	long step;          /* the catalog stepped, or -1 */
	catalog_t next;     /* its version read */
	bool *next_applied; /* per member of next */
	char **drop_files;  /* the files of the members it removes: room for every member */
	size_t drop_count;
	moved_t *moved; /* the members it takes over: room for each of next's */
	size_t moved_count;
	bool look_self, look_others;
};

int catalogs_new(const char *state_dir, catalogs_t **out)
{
	catalogs_t *c = calloc(1, sizeof(*c));
	if (!c || (state_dir && !(c->state_dir = strdup(state_dir)))) {
		free(c);
		return SHOAL_ENOMEM;
	}
	c->step = -1;
	*out = c;
	return 0;
}

static void cat_clear(cat_t *k)
{
	catalog_clear(&k->read);
	free(k->applied);
	zone_unref(k->refused);
}

/* Forget the step planned. */
static void step_clear(catalogs_t *c)
{
	catalog_clear(&c->next);
	free(c->next_applied);
	for (size_t i = 0; i < c->drop_count; i++)
		free(c->drop_files[i]);
	free(c->drop_files);
	free(c->moved);
	c->next_applied = NULL;
	c->drop_files = NULL;
	c->moved = NULL;
	c->drop_count = c->moved_count = 0;
	c->look_self = c->look_others = false;
	c->step = -1;
}

void catalogs_free(catalogs_t *c)
{
	if (!c)
		return;
	step_clear(c);
	for (size_t i = 0; i < c->count; i++)
		cat_clear(&c->cats[i]);
	free(c->cats);
	free(c->state_dir);
	free(c);
}

/* "a.example." of a wire name, lowercase: the form the configuration names zones in. */
static void name_text(const uint8_t *wire, char *buf, size_t cap)
{
	uint8_t lower[NAME_MAXLEN];
	memcpy(lower, wire, name_length(wire));
	name_lower(lower);
	name_to_text(lower, buf, cap);
}

/*
 * A file name for any zone name: letters, digits, '-', '_' and '.' as
 * they are (lowercase), every other octet as %XX, a leading '.' too (the
 * root); a name too long for that is its hash.
 */
static void safe_name(const char *name, char *buf, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; name[i] && k + 4 < cap; i++) {
		unsigned char ch = (unsigned char)name[i];
		bool plain = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
			     ch == '_' || (ch == '.' && i > 0);
		k += (size_t)snprintf(buf + k, cap - k, plain ? "%c" : "%%%02x", ch);
	}
	if (k + 4 < cap && strlen(name) * 3 < cap)
		return;
	uint64_t h = 14695981039346656037ull; /* FNV-1a: a stable name across restarts */
	for (size_t i = 0; name[i]; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	snprintf(buf, cap, "hash-%016llx", (unsigned long long)h);
}

/*
 * Where member `name` of catalog k keeps its file: state_dir/catalog/K/M.zone,
 * the folders made; "" without a state_dir (or when they cannot be made:
 * the member is then served from memory, and the log says why).
 */
static void member_file(const catalogs_t *c, const cat_t *k, const char *name, char *buf,
			size_t cap)
{
	char cs[256], ms[256], dir[4096];
	buf[0] = '\0';
	if (!c->state_dir)
		return;
	safe_name(k->name, cs, sizeof(cs));
	safe_name(name, ms, sizeof(ms));
	snprintf(dir, sizeof(dir), "%s/catalog", c->state_dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		log_error("catalog %s: cannot make %s: %s", k->name, dir, strerror(errno));
		return;
	}
	snprintf(dir, sizeof(dir), "%s/catalog/%s", c->state_dir, cs);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		log_error("catalog %s: cannot make %s: %s", k->name, dir, strerror(errno));
		return;
	}
	if (snprintf(buf, cap, "%s/%s.zone", dir, ms) >= (int)cap)
		buf[0] = '\0'; /* a state-dir that long: served from memory */
}

/* The catalog called name in c, or NULL. */
static cat_t *cat_find(const catalogs_t *c, const char *name)
{
	for (size_t i = 0; i < c->count; i++)
		if (!strcmp(c->cats[i].name, name))
			return &c->cats[i];
	return NULL;
}

/*
 * c's catalogs as zcfg has them: one for each consumer, those it no longer
 * has marked gone. Returns 0 or SHOAL_ENOMEM.
 */
static int cats_reconcile(catalogs_t *c, const conf_t *zcfg)
{
	for (size_t i = 0; i < c->count; i++)
		c->cats[i].gone = true;
	for (size_t i = 0; i < zcfg->zone_count; i++) {
		if (conf_zone_xfr(zcfg, i)->catalog_role != CONF_CATALOG_CONSUMER)
			continue;
		cat_t *k = cat_find(c, conf_zone_spec(zcfg, i)->name);
		if (!k) {
			cat_t *more = realloc(c->cats, (c->count + 1) * sizeof(*more));
			if (!more)
				return SHOAL_ENOMEM;
			c->cats = more;
			k = &c->cats[c->count++];
			*k = (cat_t){ .look = true };
			snprintf(k->name, sizeof(k->name), "%s", conf_zone_spec(zcfg, i)->name);
			if (name_from_text(k->name, NULL, k->apex) < 0)
				k->apex[0] = 0; /* never matches a version: no zone loads */
			name_lower(k->apex);
		}
		k->gone = false;
	}
	return 0;
}

/* The version of catalog k served now (a reference, the caller's), or NULL. */
static const zone_t *served(zonedb_ref_t *zones, const cat_t *k)
{
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(zones);
	long i = db ? zonedb_index(db, k->apex) : -1;
	const zone_t *z = i >= 0 ? zonedb_zone(db, (size_t)i) : NULL;
	if (z)
		z = zone_ref(z);
	zonedb_read_unlock(zones);
	return z;
}

/* The catalog (not k) that serves member m now, with its member's index in *at; or NULL. */
static cat_t *owner_of(const catalogs_t *c, const cat_t *k, const catalog_member_t *m, size_t *at)
{
	for (size_t i = 0; i < c->count; i++) {
		cat_t *o = &c->cats[i];
		const catalog_member_t *x = o == k ? NULL : catalog_find(&o->read, m->apex);
		if (x && o->applied[x - o->read.members]) {
			*at = (size_t)(x - o->read.members);
			return o;
		}
	}
	return NULL;
}

/* The template settings of member m of catalog k in cfg (whose zone ci k is). */
static const conf_zone_xfr_t *template_of(const conf_t *cfg, size_t ci, const catalog_member_t *m)
{
	char group[CONF_CATALOG_GROUP_MAX + 1];
	if (m->group)
		snprintf(group, sizeof(group), "%.*s", m->group[0], (const char *)m->group + 1);
	uint32_t t = conf_catalog_template(conf_zone_xfr(cfg, ci), m->group ? group : NULL);
	return &cfg->templates[t].xfr;
}

/*
 * Add member m of catalog k (zone ci of cfg) to cfg, its file the one was
 * has for it (a reconfig moves no file; was may be NULL), else one of
 * k's. Returns as conf_zone_add.
 */
static int member_add(const catalogs_t *c, const cat_t *k, conf_t *cfg, size_t ci,
		      const catalog_member_t *m, const conf_t *was)
{
	char name[NAME_TEXT_MAX], file[4096];
	name_text(m->apex, name, sizeof(name));
	long wi = was ? conf_zone_index(was, name) : -1;
	if (wi >= 0)
		snprintf(file, sizeof(file), "%s", conf_zone_spec(was, wi)->file);
	else
		member_file(c, k, name, file, sizeof(file));
	return conf_zone_add_from(cfg, name, file, template_of(cfg, ci, m));
}

/* Plan the removal of member `name` from cfg: its file goes at the commit. */
static int member_remove(catalogs_t *c, conf_t *cfg, const char *name)
{
	long i = conf_zone_index(cfg, name);
	if (i < 0)
		return 0;
	char *file = NULL;
	if (conf_zone_spec(cfg, i)->file[0] && !(file = strdup(conf_zone_spec(cfg, i)->file)))
		return SHOAL_ENOMEM;
	if (file)
		c->drop_files[c->drop_count++] = file;
	conf_zone_remove(cfg, (size_t)i);
	c->look_others = true; /* a member another catalog was refused may be its now */
	return 1;
}

/* What a step did, for its log line and the kind of derivation. */
typedef struct tally {
	size_t added, removed, reset, moved, regrouped, refused, by_hand;
	char last_removed[NAME_TEXT_MAX]; /* the name of the one removed, if one */
} tally_t;

/* Zone `name` of cfg takes the settings of its member m's template (catalog zone ci). */
static int member_settings(conf_t *cfg, size_t ci, const char *name, const catalog_member_t *m)
{
	long i = conf_zone_index(cfg, name);
	return i < 0 ? 0 : conf_zone_set_from(cfg, (size_t)i, template_of(cfg, ci, m));
}

/* Remove member m (its name) from cfg for the step, counted. */
static int plan_remove(catalogs_t *c, conf_t *cfg, const catalog_member_t *m, tally_t *t)
{
	char name[NAME_TEXT_MAX];
	name_text(m->apex, name, sizeof(name));
	int rc = member_remove(c, cfg, name);
	if (rc > 0) {
		t->removed++;
		snprintf(t->last_removed, sizeof(t->last_removed), "%s", name);
	}
	return rc < 0 ? rc : 0;
}

/*
 * Member j of the version read (c->next), not served as k's yet: taken
 * over from the catalog that hands it here (coo), refused when another
 * has it, skipped when configured by hand, else added.
 */
static int plan_new(catalogs_t *c, cat_t *k, conf_t *cfg, size_t ci, size_t j, tally_t *t)
{
	const catalog_member_t *m = &c->next.members[j];
	char name[NAME_TEXT_MAX];
	name_text(m->apex, name, sizeof(name));
	size_t at;
	cat_t *o = owner_of(c, k, m, &at);
	if (o) {
		const catalog_member_t *om = &o->read.members[at];
		/* RFC 9432 4.3.1: only the catalog that has it may hand it over */
		if (!om->coo || !name_equal(om->coo, k->apex)) {
			log_warning("catalog %s: member %s refused: catalog %s has it (no coo "
				    "from there to here)",
				    k->name, name, o->name);
			t->refused++;
			return 0;
		}
		c->moved[c->moved_count++] = (moved_t){ (size_t)(o - c->cats), at };
		t->moved++;
		if (!catalog_same_id(om, m)) {
			/* a new unique id with the move: reset (RFC 9432 4.3.1), added again next
			 */
			c->look_self = true;
			return plan_remove(c, cfg, om, t);
		}
		c->next_applied[j] = true;
		return member_settings(cfg, ci, name, m);
	}
	if (m->coo && !name_equal(m->coo, k->apex)) {
		/* RFC 9432 4.3.1: handed to another catalog, which has it or takes it */
		t->refused++;
		return 0;
	}
	if (conf_zone_index(cfg, name) >= 0) {
		log_warning("catalog %s: member %s is configured by hand: skipped", k->name, name);
		t->by_hand++;
		return 0;
	}
	int rc = member_add(c, k, cfg, ci, m, NULL);
	if (rc == 0) {
		c->next_applied[j] = true;
		t->added++;
	}
	return rc;
}

/* Member j of next, which k serves as old: kept, its settings regrouped, or reset. */
static int plan_kept(catalogs_t *c, conf_t *cfg, size_t ci, const catalog_member_t *old, size_t j,
		     tally_t *t)
{
	const catalog_member_t *m = &c->next.members[j];
	if (!catalog_same_id(old, m)) {
		/* RFC 9432 5: a new unique id resets the member: removed now, added next */
		c->look_self = true;
		t->reset++;
		return plan_remove(c, cfg, old, t);
	}
	c->next_applied[j] = true;
	bool coo_same =
		(!old->coo && !m->coo) || (old->coo && m->coo && name_equal(old->coo, m->coo));
	if (!coo_same)
		c->look_others = true; /* the catalog it is handed to may take it now */
	if (catalog_same_group(old->group, m->group))
		return 0;
	char name[NAME_TEXT_MAX];
	name_text(m->apex, name, sizeof(name));
	t->regrouped++;
	return member_settings(cfg, ci, name, m);
}

/* The walk over k's version applied and the one read (both by apex), into cfg. */
static int plan_diff(catalogs_t *c, cat_t *k, conf_t *cfg, size_t ci, tally_t *t)
{
	const catalog_t *old = &k->read, *new = &c->next;
	size_t i = 0, j = 0;
	int rc = 0;
	while (rc == 0 && (i < old->member_count || j < new->member_count)) {
		int cmp = i == old->member_count ? 1
			  : j == new->member_count
				  ? -1
				  : name_compare(old->members[i].apex, new->members[j].apex);
		bool mine = cmp <= 0 && k->applied[i];
		if (cmp < 0)
			rc = mine ? plan_remove(c, cfg, &old->members[i], t) : 0;
		else if (cmp == 0 && mine)
			rc = plan_kept(c, cfg, ci, &old->members[i], j, t);
		else
			rc = plan_new(c, k, cfg, ci, j, t);
		i += cmp <= 0;
		j += cmp >= 0;
	}
	return rc;
}

/* Log what of version z of k was skipped, the first SKIPS_LOGGED one by one. */
static void log_skipped(const cat_t *k, const catalog_t *r)
{
	for (size_t i = 0; i < r->skipped_count && i < SKIPS_LOGGED; i++) {
		char owner[NAME_TEXT_MAX];
		name_to_text(r->skipped[i].owner, owner, sizeof(owner));
		log_warning("catalog %s: %s skipped: %s", k->name, owner,
			    catalog_skip_text(r->skipped[i].why));
	}
	if (r->skipped_count > SKIPS_LOGGED)
		log_warning("catalog %s: and %zu more records skipped", k->name,
			    r->skipped_count - SKIPS_LOGGED);
}

/*
 * Read version z of catalog k into c->next. Returns 1, 0 when it is
 * refused (logged once, its members kept), or SHOAL_ENOMEM.
 */
static int read_version(catalogs_t *c, cat_t *k, const zone_t *z)
{
	char err[256];
	int rc = catalog_read(z, &c->next, err, sizeof(err));
	if (rc == SHOAL_ENOMEM)
		return rc;
	if (rc < 0) {
		log_error("catalog %s (serial %u) refused: %s; its %zu members stay as they were",
			  k->name, z->serial, err, k->read.member_count);
		zone_unref(k->refused);
		k->refused = zone_ref(z);
		return 0;
	}
	log_skipped(k, &c->next);
	c->next_applied = calloc(c->next.member_count + 1, sizeof(bool));
	return c->next_applied ? 1 : SHOAL_ENOMEM;
}

/* How the set is derived from the one served for cfg, from what the step did. */
static void derivation(const conf_t *zcfg, const tally_t *t, enum zonedb_change *change,
		       size_t *removed)
{
	size_t ops = t->added + t->removed + t->moved + t->regrouped;
	*change = ZONEDB_REBUILD;
	*removed = 0;
	if (ops == 1 && t->added == 1) {
		*change = ZONEDB_ADDED;
	} else if (ops == 1 && t->removed == 1) {
		*change = ZONEDB_REMOVED;
		*removed = (size_t)conf_zone_index(zcfg, t->last_removed);
	}
}

/*
 * Plan catalog k's step into *out. Returns 1 with *out, 0 when nothing
 * changed in the configuration (the step is committed), or SHOAL_ENOMEM.
 */
static int plan_cat(catalogs_t *c, cat_t *k, const conf_t *zcfg, const zone_t *z, conf_t **out,
		    enum zonedb_change *change, size_t *removed)
{
	long ci = conf_zone_index(zcfg, k->name);
	c->step = (long)(k - c->cats);
	int rc = k->gone ? 1 : read_version(c, k, z);
	if (rc <= 0) {
		c->step = -1;
		return rc;
	}
	/* a member is removed once at most: an old one, or a new one's other id (coo) */
	c->drop_files = calloc(k->read.member_count + c->next.member_count + 1, sizeof(char *));
	c->moved = calloc(c->next.member_count + 1, sizeof(*c->moved));
	if (!c->drop_files || !c->moved)
		return SHOAL_ENOMEM;
	conf_t *cfg = calloc(1, sizeof(*cfg));
	if (!cfg || conf_copy(cfg, zcfg) < 0) {
		free(cfg);
		return SHOAL_ENOMEM;
	}
	tally_t t = { 0 };
	for (size_t i = 0; k->gone && rc >= 0 && i < k->read.member_count; i++)
		rc = k->applied[i] ? plan_remove(c, cfg, &k->read.members[i], &t) : 0;
	if (!k->gone)
		rc = plan_diff(c, k, cfg, (size_t)ci, &t);
	if (rc < 0) {
		conf_clear(cfg);
		free(cfg);
		return rc;
	}
	bool said = t.added + t.removed + t.moved + t.regrouped + t.refused + t.by_hand ||
		    k->gone || c->next.version != k->read.version;
	log_msg(said ? LOG_LEVEL_INFO : LOG_LEVEL_DEBUG,
		"catalog %s%s: %zu members; %zu added, %zu removed (%zu reset), %zu taken over, "
		"%zu regrouped, %zu refused, %zu configured by hand",
		k->name, k->gone ? " (no longer a consumer)" : "", c->next.member_count, t.added,
		t.removed, t.reset, t.moved, t.regrouped, t.refused, t.by_hand);
	if (t.added + t.removed + t.moved + t.regrouped == 0) {
		conf_clear(cfg);
		free(cfg);
		catalogs_commit(c, true);
		return 0;
	}
	derivation(zcfg, &t, change, removed);
	*out = cfg;
	return 1;
}

int catalogs_step(catalogs_t *c, const conf_t *zcfg, zonedb_ref_t *zones, conf_t **out,
		  enum zonedb_change *change, size_t *removed, char *what, size_t cap)
{
	assert(c->step < 0);
	int rc = cats_reconcile(c, zcfg);
	for (size_t i = 0; rc == 0 && i < c->count; i++) {
		cat_t *k = &c->cats[i];
		const zone_t *z = k->gone ? NULL : served(zones, k);
		bool changed = z && z != k->read.version && z != k->refused;
		if (k->gone || changed || (z && k->look)) {
			snprintf(what, cap, "catalog %s", k->name);
			rc = plan_cat(c, k, zcfg, z, out, change, removed);
		}
		zone_unref(z);
		if (rc != 0)
			break;
		if (c->step < 0 && k->gone)
			i--; /* committed: the catalogs after it moved down */
	}
	if (rc < 0)
		step_clear(c);
	return rc;
}

void catalogs_commit(catalogs_t *c, bool published)
{
	if (c->step < 0)
		return;
	cat_t *k = &c->cats[c->step];
	if (!published) {
		/* not read again until it changes: a step that cannot publish is not retried */
		zone_unref(k->refused);
		k->refused = c->next.version ? zone_ref(c->next.version) : NULL;
		step_clear(c);
		return;
	}
	for (size_t i = 0; i < c->moved_count; i++)
		c->cats[c->moved[i].cat].applied[c->moved[i].member] = false;
	for (size_t i = 0; i < c->drop_count; i++)
		if (unlink(c->drop_files[i]) < 0 && errno != ENOENT)
			log_warning("catalog %s: cannot remove %s: %s", k->name, c->drop_files[i],
				    strerror(errno));
	for (size_t i = 0; c->look_others && i < c->count; i++)
		c->cats[i].look = true;
	if (k->gone) {
		cat_clear(k);
		memmove(k, k + 1, (c->count - (size_t)c->step - 1) * sizeof(*k));
		c->count--;
	} else {
		catalog_clear(&k->read);
		free(k->applied);
		k->read = c->next;
		k->applied = c->next_applied;
		memset(&c->next, 0, sizeof(c->next));
		c->next_applied = NULL;
		k->look = c->look_self;
	}
	step_clear(c);
}

int catalogs_files(const catalogs_t *c, conf_t *cfg)
{
	char dir[4096], cs[256], file[4096];
	if (!c->state_dir)
		return 0;
	snprintf(dir, sizeof(dir), "%s/catalog", c->state_dir);
	for (size_t i = 0; i < cfg->zone_count; i++) {
		if (conf_zone_xfr(cfg, i)->catalog_role != CONF_CATALOG_CONSUMER ||
		    !conf_zone_spec(cfg, i)->secondary || conf_zone_spec(cfg, i)->file[0])
			continue;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			log_error("catalog %s: cannot make %s: %s", conf_zone_spec(cfg, i)->name,
				  dir, strerror(errno));
			return 0;
		}
		safe_name(conf_zone_spec(cfg, i)->name, cs, sizeof(cs));
		if (snprintf(file, sizeof(file), "%s/%s.zone", dir, cs) >= (int)sizeof(file))
			continue; /* a state-dir that long: served from memory */
		int rc = conf_zone_set_file(cfg, i, file);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int catalogs_into(catalogs_t *c, conf_t *cfg, const conf_t *was)
{
	int rc = catalogs_files(c, cfg);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < c->count; i++) {
		cat_t *k = &c->cats[i];
		long ci = conf_zone_index(cfg, k->name);
		bool kept =
			ci >= 0 && conf_zone_xfr(cfg, ci)->catalog_role == CONF_CATALOG_CONSUMER;
		for (size_t j = 0; j < k->read.member_count; j++) {
			const catalog_member_t *m = &k->read.members[j];
			char name[NAME_TEXT_MAX];
			name_text(m->apex, name, sizeof(name));
			if (!k->applied[j])
				continue;
			if (conf_zone_index(cfg, name) >= 0) {
				/* the operator's now: never removed as a member */
				log_warning(
					"catalog %s: member %s is configured by hand from now on",
					k->name, name);
				k->applied[j] = false;
				continue;
			}
			/* a catalog dropped: its members go with it */
			rc = kept ? member_add(c, k, cfg, (size_t)ci, m, was) : 0;
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

bool catalogs_member_of(const catalogs_t *c, const char *name, char *buf, size_t cap)
{
	uint8_t wire[NAME_MAXLEN];
	if (name_from_text(name, NULL, wire) < 0)
		return false;
	for (size_t i = 0; i < c->count; i++) {
		const cat_t *k = &c->cats[i];
		const catalog_member_t *m = catalog_find(&k->read, wire);
		if (m && k->applied[m - k->read.members]) {
			snprintf(buf, cap, "%s", k->name);
			return true;
		}
	}
	return false;
}
