/* Per-worker counters: counting on the worker, summing and JSON on the reader. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "proto/error.h"
#include "server/stats.h"

void stats_count_udp(worker_stats_t *s, size_t in, bool answered, const answer_info_t *info)
{
	stats_add(&s->queries, 1);
	stats_add(&s->bytes_in, in);
	if (info->malformed)
		stats_add(&s->malformed, 1);
	if (!answered) {
		stats_add(&s->dropped, 1);
		return;
	}
	if (info->truncated)
		stats_add(&s->truncated, 1);
	if (info->rcode >= 0 && info->rcode < DNS_RCODE_MAX)
		stats_add(&s->answers[info->rcode], 1);
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void stats_read(const worker_stats_t *s, worker_stats_t *out)
{
	memset(out, 0, sizeof(*out));
	out->queries = LOAD(s->queries);
	for (size_t i = 0; i < DNS_RCODE_MAX; i++)
		out->answers[i] = LOAD(s->answers[i]);
	out->truncated = LOAD(s->truncated);
	out->dropped = LOAD(s->dropped);
	out->malformed = LOAD(s->malformed);
	out->bytes_in = LOAD(s->bytes_in);
	out->bytes_out = LOAD(s->bytes_out);
	out->rcvbuf_drops = LOAD(s->rcvbuf_drops);
#define TCP_READ(name) out->tcp.name = LOAD(s->tcp.name);
	TCP_STATS(TCP_READ)
#undef TCP_READ
}

void stats_sum(worker_stats_t *total, const worker_stats_t *a)
{
	total->queries += a->queries;
	for (size_t i = 0; i < DNS_RCODE_MAX; i++)
		total->answers[i] += a->answers[i];
	total->truncated += a->truncated;
	total->dropped += a->dropped;
	total->malformed += a->malformed;
	total->bytes_in += a->bytes_in;
	total->bytes_out += a->bytes_out;
	total->rcvbuf_drops += a->rcvbuf_drops;
#define TCP_SUM(name) total->tcp.name += a->tcp.name;
	TCP_STATS(TCP_SUM)
#undef TCP_SUM
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

static void json_counters(jbuf_t *b, const worker_stats_t *s)
{
	char name[DNS_RCODE_TEXT_MAX];
	jput(b, "\"queries\": %lu, \"answers\": {", (unsigned long)s->queries);
	bool first = true;
	for (size_t i = 0; i < DNS_RCODE_MAX; i++) {
		if (!s->answers[i])
			continue;
		jput(b, "%s\"%s\": %lu", first ? "" : ", ", dns_rcode_name((unsigned)i, name),
		     (unsigned long)s->answers[i]);
		first = false;
	}
	jput(b,
	     "}, \"truncated\": %lu, \"dropped\": %lu, \"malformed\": %lu, "
	     "\"bytes_in\": %lu, \"bytes_out\": %lu, \"rcvbuf_drops\": %lu, ",
	     (unsigned long)s->truncated, (unsigned long)s->dropped, (unsigned long)s->malformed,
	     (unsigned long)s->bytes_in, (unsigned long)s->bytes_out,
	     (unsigned long)s->rcvbuf_drops);
	const char *sep = "\"tcp\": {";
#define TCP_JSON(name)                                                    \
	jput(b, "%s\"" #name "\": %lu", sep, (unsigned long)s->tcp.name); \
	sep = ", ";
	TCP_STATS(TCP_JSON)
#undef TCP_JSON
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
