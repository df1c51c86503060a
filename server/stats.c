/* Per-worker counters: counting on the worker, summing and JSON on the reader. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "proto/error.h"
#include "server/stats.h"
#include "zone/answer.h"

void stats_count_udp(worker_stats_t *s, size_t in, bool answered, const answer_info_t *info)
{
	stats_add(&s->queries, 1);
	stats_add(&s->bytes_in, in);
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

/* Counters per field: 1, or DNS_RCODE_MAX for RCODES. */
#define STATS_COUNT(field) (sizeof(field) / sizeof(uint64_t))

static void read_counters(uint64_t *out, const uint64_t *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = __atomic_load_n(&in[i], __ATOMIC_RELAXED);
}

static void sum_counters(uint64_t *total, const uint64_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		total[i] += a[i];
}

/*
 * Each expansion names its structs s, out, total and a, so it serves the
 * UDP list on a worker_stats_t and the TCP list on its tcp_stats_t.
 */
#define READ(name, kind, help) \
	read_counters((uint64_t *)&out->name, (const uint64_t *)&s->name, STATS_COUNT(s->name));
#define SUM(name, kind, help) \
	sum_counters((uint64_t *)&total->name, (const uint64_t *)&a->name, STATS_COUNT(a->name));

static void tcp_read(const tcp_stats_t *s, tcp_stats_t *out)
{
	STATS_TCP(READ)
}

void stats_read(const worker_stats_t *s, worker_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	STATS_UDP(READ)
	tcp_read(&s->tcp, &out->tcp);
}

static void tcp_sum(tcp_stats_t *total, const tcp_stats_t *a)
{
	STATS_TCP(SUM)
}

void stats_sum(worker_stats_t *total, const worker_stats_t *a)
{
	STATS_UDP(SUM)
	tcp_sum(&total->tcp, &a->tcp);
}

/* A small appender that remembers running out of room. */
typedef struct jbuf {
	char *p;
	size_t cap, len;
	bool full;
} jbuf_t;

static void jput(jbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jput(jbuf_t *b, const char *fmt, ...)
{
	if (b->full)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len)
		b->full = true;
	else
		b->len += (size_t)n;
}

/* One field as "name": value, or for RCODES "name": {"RCODE": n, ...} without the zeros. */
static void json_field(jbuf_t *b, const char **sep, const char *name, enum stats_kind kind,
		       const uint64_t *v)
{
	jput(b, "%s\"%s\": ", *sep, name);
	*sep = ", ";
	if (kind != STATS_RCODES) {
		jput(b, "%lu", (unsigned long)v[0]);
		return;
	}
	char text[DNS_RCODE_TEXT_MAX];
	const char *inner = "";
	jput(b, "{");
	for (unsigned i = 0; i < DNS_RCODE_MAX; i++) {
		if (!v[i])
			continue;
		jput(b, "%s\"%s\": %lu", inner, dns_rcode_name(i, text), (unsigned long)v[i]);
		inner = ", ";
	}
	jput(b, "}");
}

#define JSON(name, kind, help) json_field(b, &sep, #name, STATS_##kind, (const uint64_t *)&s->name);

static void json_tcp(jbuf_t *b, const tcp_stats_t *s)
{
	const char *sep = "";
	STATS_TCP(JSON)
}

static void json_counters(jbuf_t *b, const worker_stats_t *s)
{
	const char *sep = "";
	STATS_UDP(JSON)
	jput(b, "%s\"tcp\": {", sep);
	json_tcp(b, &s->tcp);
	jput(b, "}");
}

int stats_json(const worker_stats_t *workers, size_t n, char *buf, size_t cap)
{
	jbuf_t b = { buf, cap, 0, cap == 0 };
	worker_stats_t total, one;
	memset(&total, 0, sizeof(total));
	jput(&b, "{\"threads\": [");
	for (size_t i = 0; i < n; i++) {
		stats_read(&workers[i], &one);
		stats_sum(&total, &one);
		jput(&b, "%s\n  {\"thread\": %zu, ", i ? "," : "", i);
		json_counters(&b, &one);
		jput(&b, "}");
	}
	jput(&b, "],\n \"total\": {");
	json_counters(&b, &total);
	jput(&b, "}}\n");
	return b.full ? SHOAL_ESPACE : (int)b.len;
}
