/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The counters: counting on the worker; reading, summing and the outputs on the reader. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "proto/name.h"
#include "server/common/sbuf.h"
#include "server/common/stats.h"
#include "zone/answer.h"
#include "zone/zone.h"
#include "zone/zonedb.h"

QUERY_PATH static void count_query(query_stats_t *q, const answer_info_t *info)
{
	if (info->qtype)
		stats_add(&q->type[stats_qtype_index(info->qtype)], 1);
	if (info->edns)
		stats_add(&q->edns, 1);
	if (info->dnssec_ok)
		stats_add(&q->dnssec_ok, 1);
}

QUERY_PATH void stats_count_udp(worker_stats_t *s, size_t in, bool answered,
				const answer_info_t *info)
{
	stats_add(&s->queries, 1);
	stats_add(&s->bytes_in, in);
	count_query(&s->query, info);
	if (info->malformed)
		stats_add(&s->malformed, 1);
	if (info->cookie != ANSWER_COOKIE_NONE)
		stats_add(info->cookie == ANSWER_COOKIE_CLIENT  ? &s->cookie_client
			  : info->cookie == ANSWER_COOKIE_VALID ? &s->cookie_valid
								: &s->cookie_invalid,
			  1);
	if (!answered) {
		stats_add(&s->dropped, 1);
		return;
	}
	if (info->truncated)
		stats_add(&s->truncated, 1);
	if (info->rcode >= 0 && info->rcode < DNS_RCODE_MAX)
		stats_add(&s->answers[info->rcode], 1);
}

void stats_count_tcp(worker_stats_t *s, tcp_stats_t *conn, bool answered, const answer_info_t *info)
{
	count_query(&s->query, info);
	if (answered && info->rcode >= 0 && info->rcode < DNS_RCODE_MAX)
		stats_add(&conn->rcode[info->rcode], 1);
}

QUERY_PATH void stats_count_zone(zone_stats_t *zones, size_t slots, bool answered,
				 const answer_info_t *info)
{
	uint32_t slot = info->zone_slot;
	if (!answered || slot == 0 || slot >= slots)
		return;
	stats_add(&zones[slot].answers, 1);
	if (info->rcode == DNS_RCODE_NXDOMAIN)
		stats_add(&zones[slot].nxdomain, 1);
}

const char *stats_qtype_name(unsigned i)
{
	static const char *const names[STATS_QTYPE_MAX] = {
#define QTYPE_NAME(t) #t,
		STATS_QTYPES(QTYPE_NAME)
#undef QTYPE_NAME
			"other",
	};
	return i < STATS_QTYPE_MAX ? names[i] : "other";
}

const char *const stats_format_names[] = { "text", "json", "prometheus", NULL };

/* Where a field's value is read from. */
enum field_src {
	SRC_WORKER,    /* worker_stats_t: a value per thread and their total */
	SRC_ZONE,      /* zone_stats_t: per zone, summed over the threads */
	SRC_SERVED,    /* stats_served_t: per zone that serves a version */
	SRC_SECONDARY, /* stats_secondary_t: per secondary zone */
	SRC_GROUP,     /* stats_groups_t: the total alone */
};

/*
 * The lists as one table of fields, each at its offset in its struct,
 * which every reader and output walks: the workers' first, then the
 * zones', then the groups'.
 */
typedef struct field {
	const char *list;   /* udp, tcp, query, xfr, zone, or a group's name */
	const char *name;   /* the table's and the JSON's */
	const char *metric; /* Prometheus: shoal_<metric>, a fixed label in {} after it */
	const char *help;
	enum stats_kind kind;
	enum field_src src;
	size_t offset;
} field_t;

#define W(list, n, k, m, h, at) \
	{ list, #n, m, h, STATS_##k, SRC_WORKER, offsetof(worker_stats_t, at) },
#define UDP_FIELD(n, k, m, h)      W("udp", n, k, m, h, n)
#define TCP_FIELD(n, k, m, h)      W("tcp", n, k, m, h, tcp.n)
#define QUERY_FIELD(n, k, m, h)    W("query", n, k, m, h, query.n)
#define XFR_FIELD(n, k, m, h)      W("xfr", n, k, m, h, xfr.n)
#define TLS_CONN_FIELD(n, k, m, h) W("tls", n, k, m, h, tls.conn.n)
#define TLS_FIELD(n, k, m, h)      W("tls", n, k, m, h, tls.n)
#define Z(n, k, m, h, src, type)   { "zone", #n, m, h, STATS_##k, src, offsetof(type, n) },
#define ZONE_FIELD(n, k, m, h)     Z(n, k, m, h, SRC_ZONE, zone_stats_t)
#define SERVED_FIELD(n, k, m, h)   Z(n, k, m, h, SRC_SERVED, stats_served_t)
#define SEC_FIELD(n, k, m, h)      Z(n, k, m, h, SRC_SECONDARY, stats_secondary_t)
#define GROUP_FIELD(g, n, k, m, h) \
	{ #g, #n, m, h, STATS_##k, SRC_GROUP, offsetof(stats_groups_t, g.n) },
#define GROUP(g, list) list(GROUP_FIELD, g)
/* the lists in the order of the outputs: the workers', the zones', the groups' */
#define CONN_LISTS   STATS_TCP(TCP_FIELD) STATS_CONN(TLS_CONN_FIELD, "TLS") STATS_TLS(TLS_FIELD)
#define WORKER_LISTS STATS_UDP(UDP_FIELD) CONN_LISTS STATS_QUERY(QUERY_FIELD) STATS_XFR(XFR_FIELD)
#define ZONE_LISTS   STATS_ZONE(ZONE_FIELD) STATS_SERVED(SERVED_FIELD) STATS_SECONDARY(SEC_FIELD)
static const field_t fields[] = { WORKER_LISTS ZONE_LISTS STATS_GROUPS(GROUP) };
#undef W
#undef Z
#undef GROUP

/* How many fields of each kind of source: the table is in that order. */
#define ONE_FIELD(...)       +1
#define ONE_GROUP(g, list)   list(ONE_GROUP_FIELD, g)
#define ONE_GROUP_FIELD(...) +1
enum {
	WORKER_FIELDS = 0 STATS_UDP(ONE_FIELD) STATS_TCP(ONE_FIELD) STATS_CONN(ONE_FIELD, "TLS")
		STATS_TLS(ONE_FIELD) STATS_QUERY(ONE_FIELD) STATS_XFR(ONE_FIELD),
	ZONE_FIELDS = 0 STATS_ZONE(ONE_FIELD),
	SERVED_FIELDS = 0 STATS_SERVED(ONE_FIELD),
	SECONDARY_FIELDS = 0 STATS_SECONDARY(ONE_FIELD),
	GROUP_FIELDS = 0 STATS_GROUPS(ONE_GROUP),
	FIELDS = WORKER_FIELDS + ZONE_FIELDS + SERVED_FIELDS + SECONDARY_FIELDS + GROUP_FIELDS,
};
_Static_assert(sizeof(fields) / sizeof(fields[0]) == FIELDS, "every field in the table");
#define ZONE_TABLE  (fields + WORKER_FIELDS)
#define GROUP_TABLE (fields + FIELDS - GROUP_FIELDS)

/* Counters in one field of this kind. */
static size_t kind_size(enum stats_kind kind)
{
	return kind == STATS_RCODES ? DNS_RCODE_MAX : kind == STATS_QTYPES ? STATS_QTYPE_MAX : 1;
}

/* Counter i of field f in the struct at base. */
static const uint64_t *counter_at(const void *base, const field_t *f, size_t i)
{
	return (const uint64_t *)((const char *)base + f->offset) + i;
}

static void read_fields(const field_t *f, size_t n, const void *in, void *out)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < kind_size(f[k].kind); i++)
			*(uint64_t *)counter_at(out, &f[k], i) =
				__atomic_load_n(counter_at(in, &f[k], i), __ATOMIC_RELAXED);
}

static void sum_fields(const field_t *f, size_t n, void *total, const void *a)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < kind_size(f[k].kind); i++)
			*(uint64_t *)counter_at(total, &f[k], i) += *counter_at(a, &f[k], i);
}

void stats_read(const worker_stats_t *s, worker_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	read_fields(fields, WORKER_FIELDS, s, out);
}

void stats_sum(worker_stats_t *total, const worker_stats_t *a)
{
	sum_fields(fields, WORKER_FIELDS, total, a);
}

/* ---- the outputs ---- */

/* One zone of the snapshot: its counters summed over the threads, what it serves, its timers. */
typedef struct snap_zone {
	char *name;
	zone_stats_t count;
	stats_served_t served;
	stats_secondary_t sec;
	bool has_served; /* it serves a version */
	bool secondary;
} snap_zone_t;

/*
 * What is rendered: a snapshot of every worker's counters, their total
 * after them (column `count`), the zones shown, and the groups.
 */
typedef struct snapshot {
	size_t count;      /* threads; columns are 0..count, the last the total */
	worker_stats_t *w; /* count + 1 */
	stats_groups_t g;  /* the groups: totals alone */
	size_t zones;      /* the zones shown */
	snap_zone_t *z;
	uint64_t *row; /* count + 1: one series across the columns */
} snapshot_t;

static void snapshot_clear(snapshot_t *s)
{
	free(s->w);
	for (size_t i = 0; s->z && i < s->zones; i++)
		free(s->z[i].name);
	free(s->z);
	free(s->row);
}

/* Whether any worker counted anything for the zone of slot (as rcodes and types, zeros are left
 * out). */
static bool zone_counted(const stats_source_t *src, size_t parts, uint32_t slot)
{
	for (size_t t = 0; t < src->count * parts; t++) {
		const uint64_t *c = (const uint64_t *)&src->zones[t][slot];
		for (size_t k = 0; k < sizeof(zone_stats_t) / sizeof(uint64_t); k++)
			if (__atomic_load_n(&c[k], __ATOMIC_RELAXED))
				return true;
	}
	return false;
}

/* The secondary zones found in the set: its index, its gauges. */
typedef struct sec_found {
	size_t index;
	stats_secondary_t g;
} sec_found_t;

typedef struct sec_list {
	const struct zonedb *db;
	sec_found_t *v;
	size_t n, cap;
	bool failed;
} sec_list_t;

/* stats_secondary_fn: one secondary zone, kept with its index in the set (one it has). */
static void sec_take(void *arg, const uint8_t *apex, const stats_secondary_t *g)
{
	sec_list_t *l = arg;
	long i = zonedb_index(l->db, apex);
	if (i < 0 || l->failed)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		sec_found_t *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->failed = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (sec_found_t){ .index = (size_t)i, .g = *g };
}

static int sec_found_cmp(const void *a, const void *b)
{
	size_t x = ((const sec_found_t *)a)->index, y = ((const sec_found_t *)b)->index;
	return x < y ? -1 : x > y;
}

/* The threads' counters of the zone of slot, summed into z. */
static void zone_sum(const stats_source_t *src, size_t parts, uint32_t slot, snap_zone_t *z)
{
	for (size_t t = 0; t < src->count * parts; t++) {
		zone_stats_t one;
		read_fields(ZONE_TABLE, ZONE_FIELDS, &src->zones[t][slot], &one);
		sum_fields(ZONE_TABLE, ZONE_FIELDS, &z->count, &one);
	}
}

/*
 * The zones to show, in the set's order: those a worker counted something
 * for (of a million zones most may have none: no series for them) and the
 * secondary zones (their timers matter whatever the traffic).
 */
static int snapshot_zones(snapshot_t *s, const stats_source_t *src, size_t parts)
{
	size_t nz = src->db ? zonedb_zone_count(src->db) : 0;
	sec_list_t sec = { .db = src->db };
	if (nz && src->secondaries)
		src->secondaries(src->secondaries_from, sec_take, &sec);
	if (sec.n) /* none found: v may be NULL, which qsort must not be given (C11 7.1.4) */
		qsort(sec.v, sec.n, sizeof(*sec.v), sec_found_cmp);
	size_t next = 0, cap = 0;
	int rc = sec.failed ? SHOAL_ENOMEM : 0;
	for (size_t i = 0; i < nz && rc == 0; i++) {
		uint32_t slot = zonedb_zone_slot(src->db, i, NULL);
		bool counted = src->zones && slot && slot < src->zone_slots &&
			       zone_counted(src, parts, slot);
		bool secondary = next < sec.n && sec.v[next].index == i;
		if (!counted && !secondary)
			continue;
		if (s->zones == cap) {
			cap = cap ? cap * 2 : 64;
			snap_zone_t *z = realloc(s->z, cap * sizeof(*z));
			if (!z) {
				rc = SHOAL_ENOMEM;
				break;
			}
			s->z = z;
		}
		snap_zone_t *z = &s->z[s->zones];
		*z = (snap_zone_t){ .secondary = secondary };
		char name[NAME_TEXT_MAX];
		zonedb_zone_name(src->db, i, name, sizeof(name));
		if (!(z->name = strdup(name))) {
			rc = SHOAL_ENOMEM;
			break;
		}
		s->zones++;
		if (counted)
			zone_sum(src, parts, slot, z);
		if (secondary)
			z->sec = sec.v[next++].g;
		const struct zone *v = zonedb_zone(src->db, i);
		z->has_served = v != NULL;
		z->served.serial = v ? v->serial : 0;
	}
	free(sec.v);
	return rc;
}

static int snapshot_take(snapshot_t *s, const stats_source_t *src)
{
	memset(s, 0, sizeof(*s));
	s->count = src->count;
	s->w = aligned_alloc(64, (s->count + 1) * sizeof(worker_stats_t));
	s->row = calloc(s->count + 1, sizeof(uint64_t));
	if (!s->w || !s->row) {
		snapshot_clear(s);
		return SHOAL_ENOMEM;
	}
	if (src->groups)
		read_fields(GROUP_TABLE, GROUP_FIELDS, src->groups, &s->g);
	s->g.server.zones = src->db ? zonedb_zone_count(src->db) : 0;
	worker_stats_t *total = &s->w[s->count];
	memset(total, 0, sizeof(*total));
	size_t parts = src->parts ? src->parts : 1;
	for (size_t t = 0; t < s->count; t++) {
		memset(&s->w[t], 0, sizeof(s->w[t]));
		for (size_t p = 0; p < parts; p++) {
			worker_stats_t one;
			stats_read(&src->workers[t * parts + p], &one);
			stats_sum(&s->w[t], &one);
		}
		stats_sum(total, &s->w[t]);
	}
	if (snapshot_zones(s, src, parts) < 0) {
		snapshot_clear(s);
		return SHOAL_ENOMEM;
	}
	return 0;
}

/* One series: a counter (with its label, or none) across the columns, in s->row. */
typedef struct series {
	const field_t *f;
	const char *label; /* "rcode", "type", "zone", "version" or NULL */
	const char *value; /* the label's value */
} series_t;

typedef struct output {
	void (*series)(void *arg, const series_t *s, const uint64_t *row);
	void *arg;
} output_t;

/* Whether field f has a value per thread (and their total), not the total alone. */
static bool per_thread(const field_t *f)
{
	return f->src == SRC_WORKER;
}

/*
 * The series of field f of the workers or a group: counter i of column c
 * read at col0 + c * stride (a group's field: the total alone, at col0
 * with stride 0; the threads' columns 0). The elements of RCODES and
 * QTYPES fields only when their total is not 0, so a table shows what
 * happened rather than every rcode there is.
 */
static void walk_counters(snapshot_t *s, const output_t *o, const field_t *f, const char *col0,
			  size_t stride)
{
	char text[DNS_RCODE_TEXT_MAX];
	for (size_t i = 0; i < kind_size(f->kind); i++) {
		memset(s->row, 0, s->count * sizeof(*s->row));
		for (size_t c = per_thread(f) ? 0 : s->count; c <= s->count; c++)
			s->row[c] = *counter_at(col0 + c * stride, f, i);
		series_t one = { f, NULL, NULL };
		if (f->kind == STATS_RCODES)
			one = (series_t){ f, "rcode", dns_rcode_name((unsigned)i, text) };
		else if (f->kind == STATS_QTYPES)
			one = (series_t){ f, "type", stats_qtype_name((unsigned)i) };
		else if (f->kind == STATS_INFO)
			one = (series_t){ f, "version", PACKAGE_VERSION };
		if (f->kind == STATS_INFO)
			s->row[s->count] = 1;
		if (one.label && f->kind != STATS_INFO && s->row[s->count] == 0)
			continue;
		o->series(o->arg, &one, s->row);
	}
}

/* The value of zone field f for zone z, if z has one. */
static bool zone_value(const snap_zone_t *z, const field_t *f, uint64_t *v)
{
	const void *base = f->src == SRC_ZONE     ? (const void *)&z->count
			   : f->src == SRC_SERVED ? (const void *)&z->served
						  : (const void *)&z->sec;
	if ((f->src == SRC_SERVED && !z->has_served) || (f->src == SRC_SECONDARY && !z->secondary))
		return false;
	*v = *counter_at(base, f, 0);
	return true;
}

/* Every series of field f: the workers', a zone's for each zone that has it, a group's. */
static void field_series(snapshot_t *s, const output_t *o, const field_t *f)
{
	if (f->src == SRC_WORKER) {
		walk_counters(s, o, f, (const char *)s->w, sizeof(s->w[0]));
	} else if (f->src == SRC_GROUP) {
		walk_counters(s, o, f, (const char *)&s->g, 0);
	} else {
		memset(s->row, 0, (s->count + 1) * sizeof(*s->row));
		for (size_t i = 0; i < s->zones; i++) {
			series_t one = { f, "zone", s->z[i].name };
			if (zone_value(&s->z[i], f, &s->row[s->count]))
				o->series(o->arg, &one, s->row);
		}
	}
}

/* ---- Prometheus text exposition format 0.0.4 ---- */

typedef struct prom {
	sbuf_t *b;
	size_t count;
} prom_t;

static bool grows(enum stats_kind kind)
{
	return kind != STATS_GAUGE && kind != STATS_INFO;
}

/* The length of f's metric name, before a fixed label. */
static size_t family_len(const field_t *f)
{
	return strcspn(f->metric, "{");
}

static bool same_family(const field_t *a, const field_t *b)
{
	size_t n = family_len(a);
	return n == family_len(b) && !strncmp(a->metric, b->metric, n);
}

static void prom_name(sbuf_t *b, const field_t *f)
{
	sbuf_put(b, STATS_METRIC_PREFIX "%.*s%s", (int)family_len(f), f->metric,
		 grows(f->kind) ? "_total" : "");
}

static void prom_header(sbuf_t *b, const field_t *f)
{
	sbuf_put(b, "# HELP ");
	prom_name(b, f);
	sbuf_put(b, " %s\n# TYPE ", f->help);
	prom_name(b, f);
	sbuf_put(b, " %s\n", grows(f->kind) ? "counter" : "gauge");
}

/*
 * A sample: the thread's (thread < count) or a total, with its labels: the
 * thread, the protocol of a UDP, TCP or TLS field, the metric's fixed label,
 * the series' own (rcode, type, zone, version).
 */
static void prom_sample(prom_t *p, const series_t *s, size_t thread, uint64_t v)
{
	const field_t *f = s->f;
	prom_name(p->b, f);
	const char *sep = "{";
	if (thread < p->count) {
		sbuf_put(p->b, "%sthread=\"%zu\"", sep, thread);
		sep = ",";
	}
	if (!strcmp(f->list, "udp") || !strcmp(f->list, "tcp") || !strcmp(f->list, "tls")) {
		sbuf_put(p->b, "%sprotocol=\"%s\"", sep, f->list);
		sep = ",";
	}
	const char *fixed = f->metric + family_len(f);
	if (*fixed) {
		sbuf_put(p->b, "%s%.*s", sep, (int)strlen(fixed) - 2, fixed + 1);
		sep = ",";
	}
	if (s->label) {
		sbuf_put(p->b, "%s%s=\"", sep, s->label);
		sbuf_put_escaped(p->b, s->value, false);
		sbuf_put(p->b, "\"");
		sep = ",";
	}
	sbuf_put(p->b, "%s %llu\n", *sep == ',' ? "}" : "", (unsigned long long)v);
}

static void prom_series(void *arg, const series_t *s, const uint64_t *row)
{
	prom_t *p = arg;
	if (!per_thread(s->f)) {
		prom_sample(p, s, p->count, row[p->count]);
		return;
	}
	for (size_t t = 0; t < p->count; t++)
		prom_sample(p, s, t, row[t]);
}

/*
 * Every metric once, its HELP and TYPE first, then the samples of every
 * field that shares it (the exposition format wants a metric's samples
 * together: UDP's and TCP's queries are one metric).
 */
static void render_prom(sbuf_t *b, snapshot_t *s)
{
	prom_t p = { b, s->count };
	output_t o = { prom_series, &p };
	for (size_t k = 0; k < FIELDS; k++) {
		bool seen = false;
		for (size_t j = 0; j < k && !seen; j++)
			seen = same_family(&fields[j], &fields[k]);
		if (seen)
			continue;
		prom_header(b, &fields[k]);
		for (size_t j = k; j < FIELDS; j++)
			if (same_family(&fields[j], &fields[k]))
				field_series(s, &o, &fields[j]);
	}
}

/* ---- the table of shoalctl stats ---- */

typedef struct table {
	sbuf_t *b;
	size_t count;
	size_t label_width;
	size_t *width; /* count + 1 columns: the total first, then the threads */
	bool measure;  /* the first pass: widths only */
} table_t;

/* The row's label: "udp queries", "udp answers NOERROR", "zone example.com. answers". */
static int row_label(char *buf, size_t cap, const series_t *s)
{
	if (!s->label)
		return snprintf(buf, cap, "%s %s", s->f->list, s->f->name);
	if (!strcmp(s->label, "zone"))
		return snprintf(buf, cap, "%s %s %s", s->f->list, s->value, s->f->name);
	return snprintf(buf, cap, "%s %s %s", s->f->list, s->f->name, s->value);
}

static void table_series(void *arg, const series_t *s, const uint64_t *row)
{
	table_t *t = arg;
	char label[NAME_TEXT_MAX + 64];
	int n = row_label(label, sizeof(label), s);
	size_t len = n < 0 ? 0 : (size_t)n >= sizeof(label) ? sizeof(label) - 1 : (size_t)n;
	/* a zone's or a group's row: the total alone */
	size_t columns = per_thread(s->f) ? t->count : 0;
	if (t->measure) {
		if (len > t->label_width)
			t->label_width = len;
		for (size_t c = 0; c <= columns; c++) {
			char num[24];
			size_t w = (size_t)snprintf(
				num, sizeof(num), "%llu",
				(unsigned long long)row[c == 0 ? t->count : c - 1]);
			if (w > t->width[c])
				t->width[c] = w;
		}
		return;
	}
	sbuf_put(t->b, "%-*s", (int)t->label_width, label);
	for (size_t c = 0; c <= columns; c++)
		sbuf_put(t->b, "  %*llu", (int)t->width[c],
			 (unsigned long long)row[c == 0 ? t->count : c - 1]);
	sbuf_put(t->b, "\n");
}

static void render_table(sbuf_t *b, snapshot_t *s)
{
	size_t width[s->count + 1];
	table_t t = { b, s->count, strlen("counter"), width, true };
	width[0] = strlen("total");
	for (size_t c = 1; c <= s->count; c++)
		width[c] = (size_t)snprintf(NULL, 0, "thread %zu", c - 1);
	output_t o = { table_series, &t };
	for (size_t k = 0; k < FIELDS; k++)
		field_series(s, &o, &fields[k]);
	sbuf_put(b, "%-*s  %*s", (int)t.label_width, "counter", (int)width[0], "total");
	for (size_t c = 1; c <= s->count; c++) {
		char head[32];
		snprintf(head, sizeof(head), "thread %zu", c - 1);
		sbuf_put(b, "  %*s", (int)width[c], head);
	}
	sbuf_put(b, "\n");
	t.measure = false;
	for (size_t k = 0; k < FIELDS; k++)
		field_series(s, &o, &fields[k]);
}

/* ---- JSON ---- */

/*
 * One field as "name": value, or for RCODES, QTYPES and INFO "name":
 * {"LABEL": n, ...} without the zeros.
 */
static void json_field(sbuf_t *b, const char **sep, const field_t *f, const void *base)
{
	sbuf_put(b, "%s\"%s\": ", *sep, f->name);
	*sep = ", ";
	if (f->kind == STATS_INFO) {
		sbuf_put(b, "{\"%s\": 1}", PACKAGE_VERSION);
		return;
	}
	if (f->kind != STATS_RCODES && f->kind != STATS_QTYPES) {
		sbuf_put(b, "%llu", (unsigned long long)*counter_at(base, f, 0));
		return;
	}
	char text[DNS_RCODE_TEXT_MAX];
	const char *inner = "";
	sbuf_put(b, "{");
	for (size_t i = 0; i < kind_size(f->kind); i++) {
		uint64_t v = *counter_at(base, f, i);
		if (!v)
			continue;
		const char *name = f->kind == STATS_RCODES ? dns_rcode_name((unsigned)i, text)
							   : stats_qtype_name((unsigned)i);
		sbuf_put(b, "%s\"%s\": %llu", inner, name, (unsigned long long)v);
		inner = ", ";
	}
	sbuf_put(b, "}");
}

/* One column: the UDP fields, then "tcp": {...}, "tls": {...}, "query": {...}, "xfr": {...}. */
static void json_column(sbuf_t *b, const snapshot_t *s, size_t c)
{
	const char *sep = "", *list = fields[0].list;
	for (size_t k = 0; k < WORKER_FIELDS; k++) {
		const field_t *f = &fields[k];
		if (strcmp(f->list, list)) {
			/* the first list's fields are the column's own; the others nest */
			sbuf_put(b, "%s, \"%s\": {", list == fields[0].list ? "" : "}", f->list);
			list = f->list;
			sep = "";
		}
		json_field(b, &sep, f, &s->w[c]);
	}
	sbuf_put(b, "%s", list == fields[0].list ? "" : "}");
}

/* "zones": {"<zone>": {its counters, then what it serves and its timers}, ...} */
static void json_zones(sbuf_t *b, const snapshot_t *s)
{
	sbuf_put(b, ",\n \"zones\": {");
	for (size_t i = 0; i < s->zones; i++) {
		sbuf_put(b, "%s\"", i ? ", " : "");
		sbuf_put_escaped(b, s->z[i].name, true);
		sbuf_put(b, "\": {");
		const char *sep = "";
		for (size_t k = 0; k < ZONE_FIELDS + SERVED_FIELDS + SECONDARY_FIELDS; k++) {
			uint64_t v;
			if (!zone_value(&s->z[i], &ZONE_TABLE[k], &v))
				continue;
			sbuf_put(b, "%s\"%s\": %llu", sep, ZONE_TABLE[k].name,
				 (unsigned long long)v);
			sep = ", ";
		}
		sbuf_put(b, "}");
	}
	sbuf_put(b, "}");
}

static void render_json(sbuf_t *b, const snapshot_t *s)
{
	sbuf_put(b, "{\"threads\": [");
	for (size_t t = 0; t < s->count; t++) {
		sbuf_put(b, "%s\n  {\"thread\": %zu, ", t ? "," : "", t);
		json_column(b, s, t);
		sbuf_put(b, "}");
	}
	sbuf_put(b, "],\n \"total\": {");
	json_column(b, s, s->count);
	sbuf_put(b, "}");
	json_zones(b, s);
	const char *list = "", *sep = "";
	for (size_t k = 0; k < GROUP_FIELDS; k++) {
		const field_t *f = &GROUP_TABLE[k];
		if (strcmp(f->list, list)) {
			sbuf_put(b, "%s,\n \"%s\": {", *list ? "}" : "", f->list);
			list = f->list;
			sep = "";
		}
		json_field(b, &sep, f, &s->g);
	}
	sbuf_put(b, "%s}\n", *list ? "}" : "");
}

int stats_render(const stats_source_t *src, enum stats_format f, char **out, size_t *len)
{
	snapshot_t s;
	if (snapshot_take(&s, src) < 0)
		return SHOAL_ENOMEM;
	sbuf_t b = { 0 };
	sbuf_put(&b, "%s", ""); /* an empty output is still a string */
	if (f == STATS_FORMAT_JSON)
		render_json(&b, &s);
	else if (f == STATS_FORMAT_PROMETHEUS)
		render_prom(&b, &s);
	else
		render_table(&b, &s);
	snapshot_clear(&s);
	if (b.failed) {
		free(b.p);
		return SHOAL_ENOMEM;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
