/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A producer's catalog zone (RFC 9432): its members, their unique ids, its serial, its file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "proto/serial.h"
#include "zone/catalog_gen.h"
#include "zone/changeset.h"

/*
 * The records every catalog has (RFC 9432 4.1, 4.2): the SOA and NS are
 * the zone's, never used to reach a server (NS invalid., RFC 9432 4.1),
 * so their timers are Knot's and BIND's examples'; TTL 0, as the RFC's
 * examples: a catalog is read by transfer only.
 */
#define CATGEN_SOA   "@ 0 IN SOA invalid. invalid. %" PRIu32 " 3600 600 2147483646 0\n"
#define CATGEN_PTR   "%s.zones 0 IN PTR %s\n"
#define CATGEN_GROUP "group.%s.zones 0 IN TXT \"%s\"\n"

int catgen_init(catgen_t *c, const char *apex)
{
	memset(c, 0, sizeof(*c));
	c->apex = strdup(apex);
	return c->apex ? 0 : SHOAL_ENOMEM;
}

static void members_free(catgen_member_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].name);
		free(m[i].group);
	}
	free(m);
}

void catgen_clear(catgen_t *c)
{
	members_free(c->members, c->count);
	free(c->apex);
	memset(c, 0, sizeof(*c));
}

static int member_cmp(const void *a, const void *b)
{
	return strcmp(((const catgen_member_t *)a)->name, ((const catgen_member_t *)b)->name);
}

static int want_cmp(const void *a, const void *b)
{
	return strcmp(((const catgen_want_t *)a)->name, ((const catgen_want_t *)b)->name);
}

/* One line of a file catgen_write made, into c (members appended unsorted). */
static int read_line(catgen_t *c, size_t *cap, const char *line)
{
	char id[CATGEN_ID_LEN + 1], name[1100], group[256];
	uint32_t serial;
	if (sscanf(line, CATGEN_SOA, &serial) == 1) {
		c->serial = serial;
		return 0;
	}
	if (sscanf(line, "group.%16[0-9a-f].zones 0 IN TXT \"%255[^\"]\"", id, group) == 2) {
		/* written right after its member's PTR */
		catgen_member_t *m = c->count ? &c->members[c->count - 1] : NULL;
		if (!m || strcmp(m->id, id) || m->group)
			return 0;
		m->group = strdup(group);
		return m->group ? 0 : SHOAL_ENOMEM;
	}
	if (sscanf(line, "%16[0-9a-f].zones 0 IN PTR %1099s", id, name) != 2 ||
	    strlen(id) != CATGEN_ID_LEN)
		return 0;
	if (c->count == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		catgen_member_t *m = realloc(c->members, n * sizeof(*m));
		if (!m)
			return SHOAL_ENOMEM;
		c->members = m;
		*cap = n;
	}
	catgen_member_t *m = &c->members[c->count];
	*m = (catgen_member_t){ .name = strdup(name) };
	memcpy(m->id, id, sizeof(m->id));
	if (!m->name)
		return SHOAL_ENOMEM;
	c->count++;
	return 0;
}

int catgen_read(catgen_t *c, const char *file)
{
	members_free(c->members, c->count);
	c->members = NULL;
	c->count = 0;
	c->serial = 0;
	FILE *f = fopen(file, "r");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	char *line = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;
	while (rc == 0 && getline(&line, &len, f) >= 0)
		rc = read_line(c, &cap, line);
	if (rc == 0 && ferror(f))
		rc = -EIO;
	free(line);
	fclose(f);
	if (c->count)
		qsort(c->members, c->count, sizeof(*c->members), member_cmp);
	return rc;
}

/* A unique id for member name made at serial (salt: another try): FNV-1a, 64 bits, in hex. */
static void make_id(const char *name, uint32_t serial, unsigned salt, char *id)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
	for (int i = 0; i < 4; i++)
		h = (h ^ (uint8_t)(serial >> (8 * i))) * 0x100000001b3ULL;
	h = (h ^ salt) * 0x100000001b3ULL;
	snprintf(id, CATGEN_ID_LEN + 1, "%016" PRIx64, h);
}

/* The serial after from for a change made at now (Knot's and BIND's unixtime policy). */
static uint32_t next_serial(uint32_t from, time_t now)
{
	uint32_t t = (uint32_t)now;
	return serial_gt(t, from) ? t : serial_add(from, 1);
}

/* A member's id and its place, to sort by id. */
typedef struct id_at {
	const char *id;
	size_t k;
} id_at_t;

static int id_cmp(const void *a, const void *b)
{
	return strcmp(((const id_at_t *)a)->id, ((const id_at_t *)b)->id);
}

/*
 * Whether the ids of m[0..n) are unique (1); when not, the new member of
 * each pair that shares one (is_new) is given another id (salt) and 0
 * returned, for the caller to look again; -1 when out of memory.
 */
static int ids_unique(catgen_member_t *m, size_t n, const bool *is_new, uint32_t serial,
		      unsigned salt)
{
	id_at_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		return -1;
	for (size_t i = 0; i < n; i++)
		ids[i] = (id_at_t){ m[i].id, i };
	qsort(ids, n, sizeof(*ids), id_cmp);
	int unique = 1;
	for (size_t i = 1; i < n; i++) {
		if (strcmp(ids[i - 1].id, ids[i].id))
			continue;
		size_t k = is_new[ids[i].k] ? ids[i].k : ids[i - 1].k;
		make_id(m[k].name, serial, salt, m[k].id);
		unique = 0;
	}
	free(ids);
	return unique;
}

/* Whether two groups (NULL: none) differ. */
static bool group_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b));
}

/*
 * want (sorted) against c's members (sorted) into m: names and groups
 * copied, ids kept or made at serial, is_new set. Returns the count, or
 * -1 when out of memory (m's strings so far are the caller's to free).
 */
static long merge(const catgen_t *c, const catgen_want_t *want, size_t n, uint32_t serial,
		  catgen_member_t *m, bool *is_new, bool *changed)
{
	size_t k = 0, j = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(want[i].name, want[i - 1].name))
			continue;
		while (j < c->count && strcmp(c->members[j].name, want[i].name) < 0) {
			j++; /* a member that is no longer wanted */
			*changed = true;
		}
		const catgen_member_t *was =
			j < c->count && !strcmp(c->members[j].name, want[i].name) ? &c->members[j++]
										  : NULL;
		m[k] = (catgen_member_t){ .name = strdup(want[i].name) };
		if (want[i].group)
			m[k].group = strdup(want[i].group);
		if (!m[k].name || (want[i].group && !m[k].group))
			return -1;
		is_new[k] = !was;
		if (was)
			memcpy(m[k].id, was->id, sizeof(m[k].id));
		else
			make_id(want[i].name, serial, 0, m[k].id);
		*changed = *changed || !was || group_differs(was->group, want[i].group);
		k++;
	}
	*changed = *changed || j < c->count;
	return (long)k;
}

int catgen_update(catgen_t *c, const catgen_want_t *want, size_t n, time_t now, bool *changed)
{
	*changed = false;
	catgen_want_t *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	catgen_member_t *m = calloc(n ? n : 1, sizeof(*m));
	bool *is_new = calloc(n ? n : 1, sizeof(*is_new));
	int rc = SHOAL_ENOMEM;
	long count = 0;
	if (!sorted || !m || !is_new)
		goto done;
	if (n) /* want may be NULL when the catalog has no member */
		memcpy(sorted, want, n * sizeof(*want));
	qsort(sorted, n, sizeof(*sorted), want_cmp);
	uint32_t serial = next_serial(c->serial, now);
	count = merge(c, sorted, n, serial, m, is_new, changed);
	if (count < 0) {
		count = (long)n; /* every slot freed: calloc'd, the rest are NULL */
		goto done;
	}
	int unique = 0;
	for (unsigned salt = 1; unique == 0; salt++)
		unique = ids_unique(m, (size_t)count, is_new, serial, salt);
	if (unique < 0)
		goto done;
	rc = 0;
	if (!*changed)
		goto done; /* m is what c has: freed */
	members_free(c->members, c->count);
	c->members = m;
	c->count = (size_t)count;
	c->serial = serial;
	m = NULL;
done:
	if (m)
		members_free(m, (size_t)count);
	free(sorted);
	free(is_new);
	if (rc < 0)
		*changed = false;
	return rc;
}

/* The catalog's SOA RDATA at serial (CATGEN_SOA's) into rd; its length. */
static uint16_t soa_rdata(uint32_t serial, uint8_t *rd)
{
	static const uint8_t invalid[] = { 7, 'i', 'n', 'v', 'a', 'l', 'i', 'd', 0 };
	const uint32_t v[5] = { serial, 3600, 600, 2147483646, 0 };
	size_t n = 0;
	for (int k = 0; k < 2; k++, n += sizeof(invalid))
		memcpy(rd + n, invalid, sizeof(invalid));
	for (int k = 0; k < 5; k++, n += 4) {
		rd[n] = (uint8_t)(v[k] >> 24), rd[n + 1] = (uint8_t)(v[k] >> 16);
		rd[n + 2] = (uint8_t)(v[k] >> 8), rd[n + 3] = (uint8_t)v[k];
	}
	return (uint16_t)n;
}

/* Member m's PTR and group TXT (RFC 9432 4.1, 4.4.2) into one side of cs. */
static int member_records(changeset_t *cs, bool add, const uint8_t *apex, const catgen_member_t *m)
{
	char rel[CATGEN_ID_LEN + 16];
	uint8_t owner[NAME_MAXLEN], target[NAME_MAXLEN], txt[256];
	snprintf(rel, sizeof(rel), "%s.zones", m->id);
	int len = name_from_text(m->name, NULL, target);
	if (len < 0 || name_from_text(rel, apex, owner) < 0)
		return SHOAL_ENAME;
	int rc = changeset_add(cs, add, owner, DNS_TYPE_PTR, 0, target, (uint16_t)len);
	if (rc < 0 || !m->group)
		return rc;
	snprintf(rel, sizeof(rel), "group.%s.zones", m->id);
	if (name_from_text(rel, apex, owner) < 0)
		return SHOAL_ENAME;
	size_t glen = strlen(m->group);
	txt[0] = (uint8_t)glen;
	memcpy(txt + 1, m->group, glen);
	return changeset_add(cs, add, owner, DNS_TYPE_TXT, 0, txt, (uint16_t)(glen + 1));
}

/* The changeset from serial `from` to `to` that adds (or deletes) member m. */
static int member_changeset(const catgen_t *c, const catgen_member_t *m, bool add, uint32_t from,
			    uint32_t to, changeset_t **out)
{
	uint8_t apex[NAME_MAXLEN], rd[64];
	changeset_t *cs = changeset_new();
	int rc = cs ? 0 : SHOAL_ENOMEM;
	if (rc == 0 && name_from_text(c->apex, NULL, apex) < 0)
		rc = SHOAL_ENAME;
	if (rc == 0)
		rc = changeset_add(cs, false, apex, DNS_TYPE_SOA, 0, rd, soa_rdata(from, rd));
	if (rc == 0 && !add)
		rc = member_records(cs, false, apex, m);
	if (rc == 0)
		rc = changeset_add(cs, true, apex, DNS_TYPE_SOA, 0, rd, soa_rdata(to, rd));
	if (rc == 0 && add)
		rc = member_records(cs, true, apex, m);
	if (rc == 0)
		rc = changeset_seal(cs);
	if (rc < 0) {
		changeset_unref(cs);
		cs = NULL;
	}
	*out = cs;
	return rc;
}

/* Where name is in c's members (sorted), or where it would go; *found says which. */
static size_t member_at(const catgen_t *c, const char *name, bool *found)
{
	size_t lo = 0, hi = c->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(c->members[mid].name, name);
		if (d == 0) {
			*found = true;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* Whether another member of c has id. O(members): only on a clash of 64-bit hashes' check. */
static bool id_taken(const catgen_t *c, const char *id)
{
	for (size_t i = 0; i < c->count; i++)
		if (!strcmp(c->members[i].id, id))
			return true;
	return false;
}

/* Member `at` of c freed and taken out. */
static void member_drop(catgen_t *c, size_t at)
{
	free(c->members[at].name);
	free(c->members[at].group);
	memmove(&c->members[at], &c->members[at + 1], (c->count - at - 1) * sizeof(*c->members));
	c->count--;
}

/* A new member at place `at` of c with its id made at serial. */
static int member_insert(catgen_t *c, size_t at, const char *name, const char *group,
			 uint32_t serial)
{
	catgen_member_t m = { .name = strdup(name), .group = group ? strdup(group) : NULL };
	catgen_member_t *grown = realloc(c->members, (c->count + 1) * sizeof(*grown));
	if (!m.name || (group && !m.group) || !grown) {
		free(m.name);
		free(m.group);
		if (grown)
			c->members = grown;
		return SHOAL_ENOMEM;
	}
	c->members = grown;
	make_id(name, serial, 0, m.id);
	for (unsigned salt = 1; id_taken(c, m.id); salt++)
		make_id(name, serial, salt, m.id);
	memmove(&c->members[at + 1], &c->members[at], (c->count - at) * sizeof(*c->members));
	c->members[at] = m;
	c->count++;
	return 0;
}

int catgen_change(catgen_t *c, const char *name, const char *group, bool add, time_t now,
		  changeset_t **out)
{
	*out = NULL;
	bool found;
	size_t at = member_at(c, name, &found);
	if (add == found)
		return add ? SHOAL_EEXIST : SHOAL_ENOTFOUND;
	uint32_t serial = next_serial(c->serial, now);
	int rc = add ? member_insert(c, at, name, group, serial) : 0;
	if (rc == 0)
		rc = member_changeset(c, &c->members[at], add, c->serial, serial, out);
	if (rc == 0 && !add)
		member_drop(c, at);
	else if (rc < 0 && add && at < c->count && !strcmp(c->members[at].name, name))
		member_drop(c, at); /* inserted, its changeset not made: c as it was */
	if (rc < 0)
		return rc;
	c->serial = serial;
	return 0;
}

int catgen_write_fd(const catgen_t *c, int fd)
{
	FILE *f = fdopen(dup(fd), "w");
	if (!f)
		return -errno;
	fprintf(f, "$ORIGIN %s\n" CATGEN_SOA "@ 0 IN NS invalid.\nversion 0 IN TXT \"2\"\n",
		c->apex, c->serial);
	for (size_t i = 0; i < c->count; i++) {
		fprintf(f, CATGEN_PTR, c->members[i].id, c->members[i].name);
		if (c->members[i].group)
			fprintf(f, CATGEN_GROUP, c->members[i].id, c->members[i].group);
	}
	int rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int catgen_write(const catgen_t *c, const char *file)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", file) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	int rc = catgen_write_fd(c, fd);
	if (rc == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0))
		rc = -errno;
	close(fd);
	if (rc == 0 && rename(tmp, file) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}
