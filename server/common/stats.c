/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The counters: counting on the worker; reading, summing and the outputs on the reader. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "proto/name.h"
#include "server/common/stats.h"
#include "zone/answer.h"
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

/*
 * The lists as one table of fields, each at its offset in worker_stats_t
 * (or zone_stats_t, stats_groups_t), which every reader and output walks.
 */
typedef struct field {
	const char *list; /* udp, tcp, query, xfr, zone, or a group's name */
	const char *name;
	const char *help;
	enum stats_kind kind;
	size_t offset;
	bool threads; /* a value per thread beside the total; a group's: the total alone */
} field_t;

#define UDP_FIELD(n, k, h)   { "udp", #n, h, STATS_##k, offsetof(worker_stats_t, n), true },
#define TCP_FIELD(n, k, h)   { "tcp", #n, h, STATS_##k, offsetof(worker_stats_t, tcp.n), true },
#define QUERY_FIELD(n, k, h) { "query", #n, h, STATS_##k, offsetof(worker_stats_t, query.n), true },
#define XFR_FIELD(n, k, h)   { "xfr", #n, h, STATS_##k, offsetof(worker_stats_t, xfr.n), true },
#define TLS_CONN_FIELD(n, k, h) \
	{ "tls", #n, h, STATS_##k, offsetof(worker_stats_t, tls.conn.n), true },
#define TLS_FIELD(n, k, h) { "tls", #n, h, STATS_##k, offsetof(worker_stats_t, tls.n), true },
static const field_t worker_fields[] = { STATS_UDP(UDP_FIELD) STATS_TCP(TCP_FIELD) STATS_CONN(
	TLS_CONN_FIELD, "TLS") STATS_TLS(TLS_FIELD) STATS_QUERY(QUERY_FIELD) STATS_XFR(XFR_FIELD) };
#undef UDP_FIELD
#undef TCP_FIELD
#undef TLS_CONN_FIELD
#undef TLS_FIELD
#undef QUERY_FIELD
#undef XFR_FIELD

static const field_t zone_fields[] = {
#define ZONE_FIELD(n, k, h) { "zone", #n, h, STATS_##k, offsetof(zone_stats_t, n), true },
	STATS_ZONE(ZONE_FIELD)
#undef ZONE_FIELD
};

static const field_t group_fields[] = {
#define GROUP_FIELD(g, n, k, h) { #g, #n, h, STATS_##k, offsetof(stats_groups_t, g.n), false },
#define GROUP(g, list)          list(GROUP_FIELD, g)
	STATS_GROUPS(GROUP)
#undef GROUP
#undef GROUP_FIELD
};

#define WORKER_FIELDS (sizeof(worker_fields) / sizeof(worker_fields[0]))
#define ZONE_FIELDS   (sizeof(zone_fields) / sizeof(zone_fields[0]))
#define GROUP_FIELDS  (sizeof(group_fields) / sizeof(group_fields[0]))

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

static void read_fields(const field_t *fields, size_t n, const void *in, void *out)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < kind_size(fields[k].kind); i++)
			*(uint64_t *)counter_at(out, &fields[k], i) =
				__atomic_load_n(counter_at(in, &fields[k], i), __ATOMIC_RELAXED);
}

static void sum_fields(const field_t *fields, size_t n, void *total, const void *a)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < kind_size(fields[k].kind); i++)
			*(uint64_t *)counter_at(total, &fields[k], i) +=
				*counter_at(a, &fields[k], i);
}

void stats_read(const worker_stats_t *s, worker_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	read_fields(worker_fields, WORKER_FIELDS, s, out);
}

void stats_sum(worker_stats_t *total, const worker_stats_t *a)
{
	sum_fields(worker_fields, WORKER_FIELDS, total, a);
}

/* ---- the outputs ---- */

/* A growing string that remembers running out of memory. */
typedef struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
} sbuf_t;

static void sput(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sput(sbuf_t *b, const char *fmt, ...)
{
	for (int tries = 0; !b->failed && tries < 2; tries++) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
		} else if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		} else {
			size_t cap = (b->cap ? b->cap : 4096) * 2;
			while (cap < b->len + (size_t)n + 1)
				cap *= 2;
			char *p = realloc(b->p, cap);
			if (!p)
				b->failed = true;
			else
				b->p = p, b->cap = cap;
		}
	}
}

/*
 * text with `"` and `\` escaped (and control characters, which zone names
 * never hold, as \u00XX in JSON or dropped in the exposition format).
 */
static void sput_escaped(sbuf_t *b, const char *text, bool json)
{
	for (const char *c = text; *c; c++) {
		if (*c == '"' || *c == '\\')
			sput(b, "\\%c", *c);
		else if ((unsigned char)*c < 0x20 && json)
			sput(b, "\\u%04x", (unsigned)(unsigned char)*c);
		else if ((unsigned char)*c >= 0x20)
			sput(b, "%c", *c);
	}
}

/*
 * What is rendered: a snapshot of every worker's counters, their total
 * after them (column `count`), and of every zone's per worker and total.
 */
typedef struct snapshot {
	size_t count;      /* threads; columns are 0..count, the last the total */
	worker_stats_t *w; /* count + 1 */
	stats_groups_t g;  /* the groups: totals alone */
	size_t zones;      /* zones of the set with a slot */
	char **zone_name;  /* zones, each the snapshot's own */
	zone_stats_t *z;   /* (count + 1) * zones, column-major: z[col * zones + zone] */
	uint64_t *row;     /* count + 1: one series across the columns */
	uint32_t *slot;    /* zones: each zone's slot in the workers' arrays */
} snapshot_t;

static void snapshot_clear(snapshot_t *s)
{
	free(s->w);
	for (size_t i = 0; s->zone_name && i < s->zones; i++)
		free(s->zone_name[i]);
	free(s->zone_name);
	free(s->z);
	free(s->row);
	free(s->slot);
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

static int snapshot_take(snapshot_t *s, const stats_source_t *src)
{
	memset(s, 0, sizeof(*s));
	s->count = src->count;
	size_t nz = src->db && src->zones ? zonedb_zone_count(src->db) : 0;
	s->w = aligned_alloc(64, (s->count + 1) * sizeof(worker_stats_t));
	s->zone_name = calloc(nz + 1, sizeof(*s->zone_name));
	s->z = calloc((s->count + 1) * (nz + 1), sizeof(zone_stats_t));
	s->row = calloc(s->count + 1, sizeof(uint64_t));
	s->slot = calloc(nz + 1, sizeof(uint32_t));
	if (!s->w || !s->zone_name || !s->z || !s->row || !s->slot) {
		snapshot_clear(s);
		return SHOAL_ENOMEM;
	}
	if (src->groups)
		read_fields(group_fields, GROUP_FIELDS, src->groups, &s->g);
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
	for (size_t i = 0; i < nz; i++) {
		uint32_t slot = zonedb_zone_slot(src->db, i, NULL);
		if (slot == 0 || slot >= src->zone_slots)
			continue; /* a name that is no zone name, or past the arrays */
		if (!zone_counted(src, parts, slot))
			continue; /* no traffic: no row (of a million zones, most may have none) */
		char name[NAME_TEXT_MAX];
		zonedb_zone_name(src->db, i, name, sizeof(name));
		if (!(s->zone_name[s->zones] = strdup(name))) {
			snapshot_clear(s);
			return SHOAL_ENOMEM;
		}
		s->slot[s->zones++] = slot;
	}
	for (size_t t = 0; t < s->count; t++) {
		for (size_t i = 0; i < s->zones; i++) {
			zone_stats_t *col = &s->z[t * s->zones + i];
			for (size_t p = 0; p < parts; p++) {
				zone_stats_t one;
				read_fields(zone_fields, ZONE_FIELDS,
					    &src->zones[t * parts + p][s->slot[i]], &one);
				sum_fields(zone_fields, ZONE_FIELDS, col, &one);
			}
			sum_fields(zone_fields, ZONE_FIELDS, &s->z[s->count * s->zones + i], col);
		}
	}
	return 0;
}

/* One series: a counter (with its label, or none) across the columns, in s->row. */
typedef struct series {
	const field_t *f;
	const char *label; /* "rcode", "type", "zone" or NULL */
	const char *value; /* the label's value */
} series_t;

typedef struct output {
	void (*field)(void *arg, const field_t *f); /* a new field: before its series */
	void (*series)(void *arg, const series_t *s, const uint64_t *row);
	void *arg;
} output_t;

/*
 * Field f and its series: counter i of column c read at col0 + c * stride
 * (a group's field: the total alone, at col0 with stride 0; the threads'
 * columns 0).
 * The elements of RCODES and QTYPES fields only when their total is not
 * 0, so a table shows what happened rather than every rcode there is.
 */
static void walk_field(snapshot_t *s, const output_t *o, const field_t *f, const char *col0,
		       size_t stride)
{
	char text[DNS_RCODE_TEXT_MAX];
	o->field(o->arg, f);
	for (size_t i = 0; i < kind_size(f->kind); i++) {
		memset(s->row, 0, s->count * sizeof(*s->row));
		for (size_t c = f->threads ? 0 : s->count; c <= s->count; c++)
			s->row[c] = *counter_at(col0 + c * stride, f, i);
		series_t one = { f, NULL, NULL };
		if (f->kind == STATS_RCODES)
			one = (series_t){ f, "rcode", dns_rcode_name((unsigned)i, text) };
		else if (f->kind == STATS_QTYPES)
			one = (series_t){ f, "type", stats_qtype_name((unsigned)i) };
		if (one.label && s->row[s->count] == 0)
			continue;
		o->series(o->arg, &one, s->row);
	}
}

/* Every series of s in table order: the workers' fields, the zones', the groups'. */
static void walk(snapshot_t *s, const output_t *o)
{
	for (size_t k = 0; k < WORKER_FIELDS; k++)
		walk_field(s, o, &worker_fields[k], (const char *)s->w, sizeof(s->w[0]));
	for (size_t k = 0; k < ZONE_FIELDS; k++) {
		const field_t *f = &zone_fields[k];
		o->field(o->arg, f);
		for (size_t i = 0; i < s->zones; i++) {
			for (size_t c = 0; c <= s->count; c++)
				s->row[c] = *counter_at(&s->z[c * s->zones + i], f, 0);
			series_t one = { f, "zone", s->zone_name[i] };
			o->series(o->arg, &one, s->row);
		}
	}
	for (size_t k = 0; k < GROUP_FIELDS; k++)
		walk_field(s, o, &group_fields[k], (const char *)&s->g, 0);
}

/* ---- Prometheus text exposition format 0.0.4 ---- */

typedef struct prom {
	sbuf_t *b;
	size_t count;
} prom_t;

static bool grows(enum stats_kind kind)
{
	return kind != STATS_GAUGE;
}

static void prom_name(sbuf_t *b, const field_t *f)
{
	sput(b, STATS_METRIC_PREFIX "%s_%s%s", f->list, f->name, grows(f->kind) ? "_total" : "");
}

static void prom_field(void *arg, const field_t *f)
{
	prom_t *p = arg;
	sput(p->b, "# HELP ");
	prom_name(p->b, f);
	sput(p->b, " %s\n# TYPE ", f->help);
	prom_name(p->b, f);
	sput(p->b, " %s\n", grows(f->kind) ? "counter" : "gauge");
}

/* A sample: the thread's (thread < count) or a group's total, with the series' label. */
static void prom_sample(prom_t *p, const series_t *s, size_t thread, uint64_t v)
{
	prom_name(p->b, s->f);
	const char *sep = "{";
	if (thread < p->count) {
		sput(p->b, "{thread=\"%zu\"", thread);
		sep = ",";
	}
	if (s->label) {
		sput(p->b, "%s%s=\"", sep, s->label);
		sput_escaped(p->b, s->value, false);
		sput(p->b, "\"");
	}
	sput(p->b, "%s %llu\n", thread < p->count || s->label ? "}" : "", (unsigned long long)v);
}

static void prom_series(void *arg, const series_t *s, const uint64_t *row)
{
	prom_t *p = arg;
	if (!s->f->threads) {
		prom_sample(p, s, p->count, row[p->count]);
		return;
	}
	for (size_t t = 0; t < p->count; t++)
		prom_sample(p, s, t, row[t]);
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

static void table_field(void *arg, const field_t *f)
{
	(void)arg;
	(void)f;
}

static void table_series(void *arg, const series_t *s, const uint64_t *row)
{
	table_t *t = arg;
	char label[NAME_TEXT_MAX + 64];
	int n = row_label(label, sizeof(label), s);
	size_t len = n < 0 ? 0 : (size_t)n >= sizeof(label) ? sizeof(label) - 1 : (size_t)n;
	/* a group's row: the total alone */
	size_t columns = s->f->threads ? t->count : 0;
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
	sput(t->b, "%-*s", (int)t->label_width, label);
	for (size_t c = 0; c <= columns; c++)
		sput(t->b, "  %*llu", (int)t->width[c],
		     (unsigned long long)row[c == 0 ? t->count : c - 1]);
	sput(t->b, "\n");
}

static void render_table(sbuf_t *b, snapshot_t *s)
{
	size_t width[s->count + 1];
	table_t t = { b, s->count, strlen("counter"), width, true };
	width[0] = strlen("total");
	for (size_t c = 1; c <= s->count; c++)
		width[c] = (size_t)snprintf(NULL, 0, "thread %zu", c - 1);
	output_t o = { table_field, table_series, &t };
	walk(s, &o);
	sput(b, "%-*s  %*s", (int)t.label_width, "counter", (int)width[0], "total");
	for (size_t c = 1; c <= s->count; c++) {
		char head[32];
		snprintf(head, sizeof(head), "thread %zu", c - 1);
		sput(b, "  %*s", (int)width[c], head);
	}
	sput(b, "\n");
	t.measure = false;
	walk(s, &o);
}

/* ---- JSON ---- */

/* One field as "name": value, or for RCODES and QTYPES "name": {"LABEL": n, ...} without the zeros.
 */
static void json_field(sbuf_t *b, const char **sep, const field_t *f, const void *base)
{
	sput(b, "%s\"%s\": ", *sep, f->name);
	*sep = ", ";
	if (f->kind != STATS_RCODES && f->kind != STATS_QTYPES) {
		sput(b, "%llu", (unsigned long long)*counter_at(base, f, 0));
		return;
	}
	char text[DNS_RCODE_TEXT_MAX];
	const char *inner = "";
	sput(b, "{");
	for (size_t i = 0; i < kind_size(f->kind); i++) {
		uint64_t v = *counter_at(base, f, i);
		if (!v)
			continue;
		const char *name = f->kind == STATS_RCODES ? dns_rcode_name((unsigned)i, text)
							   : stats_qtype_name((unsigned)i);
		sput(b, "%s\"%s\": %llu", inner, name, (unsigned long long)v);
		inner = ", ";
	}
	sput(b, "}");
}

/* One column: the UDP fields, then "tcp": {...}, "query": {...}, "zones": {...}. */
static void json_column(sbuf_t *b, const snapshot_t *s, size_t c)
{
	const char *sep = "", *list = worker_fields[0].list;
	for (size_t k = 0; k < WORKER_FIELDS; k++) {
		const field_t *f = &worker_fields[k];
		if (strcmp(f->list, list)) {
			/* the first list's fields are the column's own; the others nest */
			sput(b, "%s, \"%s\": {", list == worker_fields[0].list ? "" : "}", f->list);
			list = f->list;
			sep = "";
		}
		json_field(b, &sep, f, &s->w[c]);
	}
	sput(b, "%s, \"zones\": {", list == worker_fields[0].list ? "" : "}");
	for (size_t i = 0; i < s->zones; i++) {
		sput(b, "%s\"", i ? ", " : "");
		sput_escaped(b, s->zone_name[i], true);
		sput(b, "\": {");
		sep = "";
		for (size_t k = 0; k < ZONE_FIELDS; k++)
			json_field(b, &sep, &zone_fields[k], &s->z[c * s->zones + i]);
		sput(b, "}");
	}
	sput(b, "}");
}

static void render_json(sbuf_t *b, const snapshot_t *s)
{
	sput(b, "{\"threads\": [");
	for (size_t t = 0; t < s->count; t++) {
		sput(b, "%s\n  {\"thread\": %zu, ", t ? "," : "", t);
		json_column(b, s, t);
		sput(b, "}");
	}
	sput(b, "],\n \"total\": {");
	json_column(b, s, s->count);
	sput(b, "}");
	const char *list = "", *sep = "";
	for (size_t k = 0; k < GROUP_FIELDS; k++) {
		const field_t *f = &group_fields[k];
		if (strcmp(f->list, list)) {
			sput(b, "%s,\n \"%s\": {", *list ? "}" : "", f->list);
			list = f->list;
			sep = "";
		}
		json_field(b, &sep, f, &s->g);
	}
	sput(b, "%s}\n", *list ? "}" : "");
}

int stats_render(const stats_source_t *src, enum stats_format f, char **out, size_t *len)
{
	snapshot_t s;
	if (snapshot_take(&s, src) < 0)
		return SHOAL_ENOMEM;
	sbuf_t b = { 0 };
	sput(&b, "%s", ""); /* an empty output is still a string */
	if (f == STATS_FORMAT_JSON) {
		render_json(&b, &s);
	} else if (f == STATS_FORMAT_PROMETHEUS) {
		prom_t p = { &b, s.count };
		output_t o = { prom_field, prom_series, &p };
		walk(&s, &o);
	} else {
		render_table(&b, &s);
	}
	snapshot_clear(&s);
	if (b.failed) {
		free(b.p);
		return SHOAL_ENOMEM;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
