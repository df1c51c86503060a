/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A configuration's zones: allocated one by one, shared with its copies, changed copy-on-write. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "server/conf/conf.h"
#include "server/conf/internal.h"

/*
 * Three levels, each shared between a configuration and its copies and
 * copied only where one of them changes it: the zone (spec, transfer
 * settings, name and file in one allocation), chunks of up to CHUNK_ZONES
 * zone pointers in order (the configuration's table of chunks is its
 * own), and NAME_PARTS parts of the name index, split by the name's hash.
 * So conf_copy costs a pointer per chunk and per part, and a zone-add or
 * zone-remove one zone, one chunk and one part, at any number of zones.
 * Every count is atomic: the last configuration to drop a piece, on any
 * thread, frees it; a piece held by one configuration is changed in place.
 */
#define CHUNK_ZONES 512
#define NAME_PARTS  1024
#define NAME_SHIFT  54 /* a name's part: the hash's upper 10 bits */

struct conf_zone {
	zone_spec_t spec;
	conf_zone_xfr_t xfr;
	/*
	 * When the zone was made, from its configuration's counter (which its
	 * copies carry on): a configuration only ever appends new zones and
	 * removes some, so its zones stand in this order, and a zone's index
	 * is found by a binary search on it. A copy made to change a shared
	 * zone keeps it.
	 */
	uint64_t seq;
	uint64_t hash; /* conf_zone_name_hash of its name */
	uint32_t refs; /* the chunks that hold it */
	char text[];   /* the name, then the file */
};

typedef struct conf_zone_chunk {
	uint32_t refs; /* the configurations that hold it */
	uint32_t count;
	conf_zone_t *zone[CHUNK_ZONES];
} zone_chunk_t;

/* One part of the name index: open addressing over the zones (NULL: empty), at most half full. */
typedef struct conf_name_part {
	uint32_t refs; /* the configurations that hold it */
	uint32_t count;
	size_t mask;
	const conf_zone_t *slot[];
} name_part_t;

static bool shared(const uint32_t *refs)
{
	return __atomic_load_n(refs, __ATOMIC_ACQUIRE) > 1;
}

/* Drop one reference; true when it was the last (acquire-release: the freer sees every write). */
static bool unref(uint32_t *refs)
{
	return __atomic_sub_fetch(refs, 1, __ATOMIC_ACQ_REL) == 0;
}

static void ref(uint32_t *refs)
{
	__atomic_add_fetch(refs, 1, __ATOMIC_RELAXED);
}

uint64_t conf_zone_name_hash(const char *name, size_t len)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a, without case */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)tolower((unsigned char)name[i])) * 1099511628211ull;
	return h;
}

size_t conf_zone_name_len(const char *name)
{
	size_t len = strlen(name);
	return len > 1 && name[len - 1] == '.' ? len - 1 : len;
}

static void zone_unref(conf_zone_t *z)
{
	if (!unref(&z->refs))
		return;
	conf_zone_xfr_clear(&z->xfr);
	free(z);
}

/* A zone of its own (refs 1) made seq-th, its strings copied in; NULL when out of memory. */
static conf_zone_t *zone_new(const char *name, const char *file, uint64_t seq)
{
	size_t nlen = strlen(name) + 1, flen = strlen(file) + 1;
	conf_zone_t *z = malloc(sizeof(*z) + nlen + flen);
	if (!z)
		return NULL;
	memcpy(z->text, name, nlen);
	memcpy(z->text + nlen, file, flen);
	z->spec = (zone_spec_t){ .name = z->text,
				 .file = z->text + nlen,
				 .limits = ZONE_LIMITS_DEFAULT };
	z->xfr = conf_zone_xfr_default();
	z->seq = seq;
	z->hash = conf_zone_name_hash(name, conf_zone_name_len(name));
	z->refs = 1;
	return z;
}

/* A zone like z (its name, limits, flags and creation number) served from `file`, with default
 * settings. NULL when out of memory. */
static conf_zone_t *zone_like(const conf_zone_t *z, const char *file)
{
	conf_zone_t *c = zone_new(z->spec.name, file, z->seq);
	if (!c)
		return NULL;
	c->spec.limits = z->spec.limits;
	c->spec.secondary = z->spec.secondary;
	c->spec.keep = z->spec.keep;
	c->spec.sign = z->spec.sign; /* held by z's settings, which the caller moves or copies */
	return c;
}

/* A copy of z that one configuration may change: its lists its own. NULL when out of memory. */
static conf_zone_t *zone_copy(const conf_zone_t *z)
{
	conf_zone_t *c = zone_like(z, z->spec.file);
	if (!c)
		return NULL;
	c->xfr = z->xfr;
	/* its lists, TLS checks, a consumer's templates and a member record: copies of its own */
	if (!conf_xfr_own(&c->xfr)) {
		zone_unref(c);
		return NULL;
	}
	return c;
}

static void chunk_unref(zone_chunk_t *c)
{
	if (!c || !unref(&c->refs))
		return;
	for (uint32_t k = 0; k < c->count; k++)
		zone_unref(c->zone[k]);
	free(c);
}

static void part_unref(name_part_t *p)
{
	if (p && unref(&p->refs))
		free(p);
}

/* The run (table entry) that holds zone i: its chunks full, at once; else a binary search. */
static size_t run_of(const conf_t *cfg, size_t i)
{
	size_t k = i / CHUNK_ZONES;
	const conf_zone_run_t *r = cfg->zone_runs;
	if (k < cfg->zone_run_count && r[k].first <= i && i - r[k].first < r[k].chunk->count)
		return k;
	size_t lo = 0, hi = cfg->zone_run_count; /* the last run with first <= i */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static conf_zone_t *zone_at(const conf_t *cfg, size_t i)
{
	const conf_zone_run_t *r = &cfg->zone_runs[run_of(cfg, i)];
	return r->chunk->zone[i - r->first];
}

const zone_spec_t *conf_zone_spec(const conf_t *cfg, size_t i)
{
	return &zone_at(cfg, i)->spec;
}

const conf_zone_xfr_t *conf_zone_xfr(const conf_t *cfg, size_t i)
{
	return &zone_at(cfg, i)->xfr;
}

/* Where z stands in cfg, which holds it: by its seq, run then chunk. */
static size_t zone_index(const conf_t *cfg, const conf_zone_t *z)
{
	const conf_zone_run_t *r = cfg->zone_runs;
	size_t lo = 0, hi = cfg->zone_run_count;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].chunk->zone[0]->seq <= z->seq)
			lo = mid;
		else
			hi = mid;
	}
	const zone_chunk_t *c = r[lo].chunk;
	size_t a = 0, b = c->count;
	while (b - a > 1) {
		size_t mid = a + (b - a) / 2;
		if (c->zone[mid]->seq <= z->seq)
			a = mid;
		else
			b = mid;
	}
	return r[lo].first + a;
}

long conf_zone_index(const conf_t *cfg, const char *name)
{
	if (!cfg->zone_names)
		return -1;
	size_t len = conf_zone_name_len(name);
	uint64_t h = conf_zone_name_hash(name, len);
	const name_part_t *p = cfg->zone_names[h >> NAME_SHIFT];
	for (size_t j = p ? (size_t)h & p->mask : 0; p && p->slot[j]; j = (j + 1) & p->mask) {
		const conf_zone_t *z = p->slot[j];
		/* the hash first: a name is read only where it may be the one */
		if (z->hash == h && conf_zone_name_len(z->spec.name) == len &&
		    !strncasecmp(z->spec.name, name, len))
			return (long)zone_index(cfg, z);
	}
	return -1;
}

/* A part of its own with room for `want` zones, p's zones but `drop` in it. NULL: no memory. */
static name_part_t *part_copy(const name_part_t *p, size_t want, const conf_zone_t *drop)
{
	size_t cap = 4;
	while (cap < want * 2)
		cap *= 2;
	name_part_t *n = calloc(1, sizeof(*n) + cap * sizeof(n->slot[0]));
	if (!n)
		return NULL;
	n->refs = 1;
	n->mask = cap - 1;
	for (size_t j = 0; p && j <= p->mask; j++) {
		const conf_zone_t *z = p->slot[j];
		if (!z || z == drop)
			continue;
		size_t k = (size_t)z->hash & n->mask;
		while (n->slot[k])
			k = (k + 1) & n->mask;
		n->slot[k] = z;
		n->count++;
	}
	return n;
}

/*
 * cfg's own part for z's name, with room for one more zone when `grow`,
 * without `drop` (or NULL). NULL when out of memory (cfg is as it was).
 */
static name_part_t *part_own(conf_t *cfg, const conf_zone_t *z, bool grow, const conf_zone_t *drop)
{
	name_part_t **at = &cfg->zone_names[z->hash >> NAME_SHIFT];
	name_part_t *p = *at;
	size_t want = (p ? p->count : 0) + grow;
	if (p && !drop && !shared(&p->refs) && want * 2 <= p->mask + 1)
		return p;
	name_part_t *n = part_copy(p, want, drop);
	if (!n)
		return NULL;
	part_unref(p);
	*at = n;
	return n;
}

static void part_put(name_part_t *p, const conf_zone_t *z)
{
	size_t k = (size_t)z->hash & p->mask;
	while (p->slot[k])
		k = (k + 1) & p->mask;
	p->slot[k] = z;
	p->count++;
}

/* A chunk of its own (refs 1) with zones [from, to) of c, each one more reference. */
static zone_chunk_t *chunk_copy(const zone_chunk_t *c, uint32_t from, uint32_t to)
{
	zone_chunk_t *n = malloc(sizeof(*n));
	if (!n)
		return NULL;
	n->refs = 1;
	n->count = 0;
	for (uint32_t k = from; c && k < to; k++) {
		ref(&c->zone[k]->refs);
		n->zone[n->count++] = c->zone[k];
	}
	return n;
}

/* cfg's own chunk of run k (a copy when shared). NULL when out of memory. */
static zone_chunk_t *chunk_own(conf_t *cfg, size_t k)
{
	zone_chunk_t *c = cfg->zone_runs[k].chunk;
	if (!shared(&c->refs))
		return c;
	zone_chunk_t *n = chunk_copy(c, 0, c->count);
	if (!n)
		return NULL;
	chunk_unref(c);
	cfg->zone_runs[k].chunk = n;
	return n;
}

/* One more run at the end of cfg's table, with an empty chunk. False when out of memory. */
static bool run_push(conf_t *cfg)
{
	if (cfg->zone_run_count == cfg->zone_run_cap) {
		size_t cap = cfg->zone_run_cap ? cfg->zone_run_cap * 2 : 4;
		conf_zone_run_t *r = realloc(cfg->zone_runs, cap * sizeof(*r));
		if (!r)
			return false;
		cfg->zone_runs = r;
		cfg->zone_run_cap = cap;
	}
	zone_chunk_t *c = chunk_copy(NULL, 0, 0);
	if (!c)
		return false;
	cfg->zone_runs[cfg->zone_run_count++] =
		(conf_zone_run_t){ .chunk = c, .first = cfg->zone_count };
	return true;
}

/* Run k's chunk went empty, or is merged into run k - 1: out of the table. */
static void run_drop(conf_t *cfg, size_t k)
{
	chunk_unref(cfg->zone_runs[k].chunk);
	memmove(&cfg->zone_runs[k], &cfg->zone_runs[k + 1],
		(cfg->zone_run_count - k - 1) * sizeof(cfg->zone_runs[0]));
	cfg->zone_run_count--;
}

int conf_zones_append(conf_t *cfg, const char *name, const char *file)
{
	if (!cfg->zone_names && !(cfg->zone_names = calloc(NAME_PARTS, sizeof(*cfg->zone_names))))
		return SHOAL_ENOMEM;
	conf_zone_t *z = zone_new(name, file, cfg->zone_seq);
	if (!z)
		return SHOAL_ENOMEM;
	size_t k = cfg->zone_run_count;
	zone_chunk_t *c = NULL;
	if (k && cfg->zone_runs[k - 1].chunk->count < CHUNK_ZONES)
		c = chunk_own(cfg, k - 1);
	else if (run_push(cfg))
		c = cfg->zone_runs[k].chunk;
	name_part_t *p = c ? part_own(cfg, z, true, NULL) : NULL;
	if (!p) {
		zone_unref(z);
		if (c && !c->count)
			run_drop(cfg, k); /* every chunk holds a zone: zone_index reads the first */
		return SHOAL_ENOMEM;
	}
	c->zone[c->count++] = z;
	part_put(p, z);
	cfg->zone_count++;
	cfg->zone_seq++;
	return 0;
}

/*
 * Runs k and k + 1 in one chunk when they fit it: so any two neighbours
 * hold more than a chunk's zones, and the table stays under two runs a
 * chunk of zones however zones come and go. Best effort (no memory: left).
 */
static void runs_merge(conf_t *cfg, size_t k)
{
	if (k + 1 >= cfg->zone_run_count)
		return;
	zone_chunk_t *a = cfg->zone_runs[k].chunk, *b = cfg->zone_runs[k + 1].chunk;
	if (a->count + b->count > CHUNK_ZONES)
		return;
	zone_chunk_t *n = chunk_copy(a, 0, a->count);
	if (!n)
		return;
	for (uint32_t j = 0; j < b->count; j++) {
		ref(&b->zone[j]->refs);
		n->zone[n->count++] = b->zone[j];
	}
	chunk_unref(a);
	cfg->zone_runs[k].chunk = n;
	run_drop(cfg, k + 1);
}

int conf_zone_remove(conf_t *cfg, size_t i)
{
	size_t k = run_of(cfg, i);
	conf_zone_t *z = zone_at(cfg, i);
	zone_chunk_t *c = chunk_own(cfg, k);
	if (!c || !part_own(cfg, z, false, z))
		return SHOAL_ENOMEM;
	size_t at = i - cfg->zone_runs[k].first;
	cfg->zone_secondaries -= z->xfr.primaries.count > 0;
	memmove(&c->zone[at], &c->zone[at + 1], (c->count - at - 1) * sizeof(c->zone[0]));
	c->count--;
	zone_unref(z);
	cfg->zone_count--;
	for (size_t r = k + 1; r < cfg->zone_run_count; r++)
		cfg->zone_runs[r].first--;
	if (!c->count) {
		run_drop(cfg, k);
		return 0;
	}
	runs_merge(cfg, k);
	if (k)
		runs_merge(cfg, k - 1);
	return 0;
}

/* Zone i of cfg, cfg's own (its chunk, its name's part and itself copied when shared). */
/*
 * n in the place of z, zone i of cfg, whose chunk is cfg's own: in the
 * chunk and in the name index; z dropped. False when out of memory (cfg
 * as it was; n still the caller's).
 */
static bool zone_replace(conf_t *cfg, size_t i, conf_zone_t *z, conf_zone_t *n)
{
	name_part_t *p = part_own(cfg, z, false, z);
	if (!p)
		return false;
	part_put(p, n);
	size_t k = run_of(cfg, i);
	cfg->zone_runs[k].chunk->zone[i - cfg->zone_runs[k].first] = n;
	zone_unref(z);
	return true;
}

static conf_zone_t *zone_own(conf_t *cfg, size_t i)
{
	size_t k = run_of(cfg, i);
	conf_zone_t *z = zone_at(cfg, i);
	if (!shared(&z->refs) && !shared(&cfg->zone_runs[k].chunk->refs))
		return z;
	if (!chunk_own(cfg, k))
		return NULL;
	if (!shared(&z->refs))
		return z;
	conf_zone_t *n = zone_copy(z);
	if (!n || !zone_replace(cfg, i, z, n)) {
		if (n)
			zone_unref(n);
		return NULL;
	}
	return n;
}

int conf_zone_set_file(conf_t *cfg, size_t i, const char *file)
{
	conf_zone_t *z = zone_own(cfg, i); /* and its chunk cfg's own */
	if (!z)
		return SHOAL_ENOMEM;
	if (!strcmp(z->spec.file, file))
		return 0;
	/* the file lies in the zone's allocation: a new one, which takes over z's settings */
	conf_zone_t *n = zone_like(z, file);
	if (!n)
		return SHOAL_ENOMEM;
	n->xfr = z->xfr;
	z->xfr = conf_zone_xfr_default();
	if (!zone_replace(cfg, i, z, n)) {
		z->xfr = n->xfr; /* given back: n frees none of them */
		n->xfr = conf_zone_xfr_default();
		zone_unref(n);
		return SHOAL_ENOMEM;
	}
	return 0;
}

zone_spec_t *conf_zone_spec_mut(conf_t *cfg, size_t i)
{
	conf_zone_t *z = zone_own(cfg, i);
	return z ? &z->spec : NULL;
}

conf_zone_xfr_t *conf_zone_xfr_mut(conf_t *cfg, size_t i)
{
	cfg->zone_secondaries_stale = true; /* its primaries may change */
	conf_zone_t *z = zone_own(cfg, i);
	return z ? &z->xfr : NULL;
}

bool conf_zones_share(conf_t *dst, const conf_t *src)
{
	dst->zone_runs = NULL;
	dst->zone_run_count = dst->zone_run_cap = 0;
	dst->zone_names = NULL;
	dst->zone_count = 0;
	if (!src->zone_names)
		return true;
	dst->zone_names = malloc(NAME_PARTS * sizeof(*dst->zone_names));
	size_t cap = src->zone_run_count ? src->zone_run_count : 1;
	dst->zone_runs = malloc(cap * sizeof(*dst->zone_runs));
	if (!dst->zone_names || !dst->zone_runs) {
		free(dst->zone_names);
		free(dst->zone_runs);
		dst->zone_names = NULL;
		dst->zone_runs = NULL;
		return false;
	}
	for (size_t p = 0; p < NAME_PARTS; p++) {
		dst->zone_names[p] = src->zone_names[p];
		if (dst->zone_names[p])
			ref(&dst->zone_names[p]->refs);
	}
	memcpy(dst->zone_runs, src->zone_runs, src->zone_run_count * sizeof(*src->zone_runs));
	for (size_t k = 0; k < src->zone_run_count; k++)
		ref(&src->zone_runs[k].chunk->refs);
	dst->zone_run_count = src->zone_run_count;
	dst->zone_run_cap = cap;
	dst->zone_count = src->zone_count;
	return true;
}

void conf_zones_clear(conf_t *cfg)
{
	for (size_t k = 0; k < cfg->zone_run_count; k++)
		chunk_unref(cfg->zone_runs[k].chunk);
	free(cfg->zone_runs);
	for (size_t p = 0; cfg->zone_names && p < NAME_PARTS; p++)
		part_unref(cfg->zone_names[p]);
	free(cfg->zone_names);
	cfg->zone_runs = NULL;
	cfg->zone_run_count = cfg->zone_run_cap = 0;
	cfg->zone_names = NULL;
	cfg->zone_count = 0;
}

bool conf_zone_shared_with(const conf_t *a, size_t i, const conf_t *b, size_t j)
{
	return zone_at(a, i) == zone_at(b, j);
}

size_t conf_secondary_count(const conf_t *cfg)
{
	if (!cfg->zone_secondaries_stale)
		return cfg->zone_secondaries;
	size_t n = 0;
	for (size_t i = 0; i < cfg->zone_count; i++)
		n += conf_zone_is_secondary(cfg, i);
	return n;
}

const zone_spec_t *conf_spec_of(const void *cfg, size_t i)
{
	return conf_zone_spec(cfg, i);
}
