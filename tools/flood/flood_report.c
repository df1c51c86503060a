/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's final report: totals, latency percentiles, rcodes, NSID spreading; text or JSON. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tools/flood/flood.h"

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define SUM(field)                                                                  \
	atomic_store_explicit(&sum->field, LOAD(sum->field) + LOAD(t->stats.field), \
			      memory_order_relaxed)

void flood_stats_sum(flood_stats_t *sum, const flood_thread_t *threads, unsigned n)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < n; i++) {
		const flood_thread_t *t = &threads[i];
		SUM(sent);
		SUM(answered);
		SUM(lost);
		SUM(truncated);
		SUM(unexpected);
		SUM(send_errors);
		SUM(refused_icmp);
		SUM(nsid_other);
		SUM(nsid_missing);
		for (unsigned r = 0; r < 16; r++)
			SUM(rcode[r]);
		for (unsigned b = 0; b < FLOOD_HIST_BUCKETS; b++)
			SUM(hist[b]);
		for (unsigned k = 0; k < FLOOD_NSID_THREADS; k++)
			SUM(nsid_thread[k]);
		if (LOAD(t->stats.last_answer_ns) > LOAD(sum->last_answer_ns))
			atomic_store(&sum->last_answer_ns, LOAD(t->stats.last_answer_ns));
		if (LOAD(t->stats.max_latency_ns) > LOAD(sum->max_latency_ns))
			atomic_store(&sum->max_latency_ns, LOAD(t->stats.max_latency_ns));
		sum->sockets_answered += t->stats.sockets_answered;
		sum->sockets_sticky += t->stats.sockets_sticky;
		if (!sum->nsid_sample[0])
			memcpy(sum->nsid_sample, t->stats.nsid_sample, sizeof(sum->nsid_sample));
	}
}

/* What the report needs, computed once for both formats. */
typedef struct figures {
	uint64_t hist[FLOOD_HIST_BUCKETS];
	double qps, secs;
	double p50, p90, p99, p999, max; /* milliseconds */
	unsigned nsid_threads;           /* highest server thread index seen + 1 */
	uint64_t nsid_max, nsid_min;
} figures_t;

static void compute(figures_t *f, const flood_stats_t *s, uint64_t elapsed_ns)
{
	for (unsigned b = 0; b < FLOOD_HIST_BUCKETS; b++)
		f->hist[b] = LOAD(s->hist[b]);
	f->secs = (double)elapsed_ns / 1e9;
	f->qps = f->secs > 0 ? (double)LOAD(s->answered) / f->secs : 0;
	f->p50 = (double)flood_hist_quantile(f->hist, 0.50) / 1e6;
	f->p90 = (double)flood_hist_quantile(f->hist, 0.90) / 1e6;
	f->p99 = (double)flood_hist_quantile(f->hist, 0.99) / 1e6;
	f->p999 = (double)flood_hist_quantile(f->hist, 0.999) / 1e6;
	f->max = (double)LOAD(s->max_latency_ns) / 1e6;
	/* A bucket's middle can lie above the largest sample in it. */
	double *pct[] = { &f->p50, &f->p90, &f->p99, &f->p999 };
	for (unsigned i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		if (*pct[i] > f->max)
			*pct[i] = f->max;
	f->nsid_threads = 0;
	for (unsigned k = 0; k < FLOOD_NSID_THREADS; k++)
		if (LOAD(s->nsid_thread[k]))
			f->nsid_threads = k + 1;
	f->nsid_max = 0;
	f->nsid_min = UINT64_MAX;
	for (unsigned k = 0; k < f->nsid_threads; k++) {
		uint64_t v = LOAD(s->nsid_thread[k]);
		if (v > f->nsid_max)
			f->nsid_max = v;
		if (v < f->nsid_min)
			f->nsid_min = v;
	}
	if (f->nsid_threads == 0)
		f->nsid_min = 0;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

/*
 * The figures of the report, in the order the text gives them; the JSON
 * has the same, keyed. label: the text's (11 columns wide); key: the
 * JSON's; counter: the flood_stats_t field the kind reads, if any.
 */
enum field_kind {
	FIELD_COUNT,   /* a counter */
	FIELD_LOSS,    /* a counter, and in the text its share of sent */
	FIELD_QPS,     /* answers per second */
	FIELD_LATENCY, /* the percentiles and the largest, in milliseconds */
	FIELD_RCODES,  /* answers by rcode, zeros left out */
	FIELD_RARE,    /* a counter the text shows, on one line with the RARE ones
			  next to it, only when one of them is not zero */
};

typedef struct report_field {
	const char *label;
	const char *key;
	enum field_kind kind;
	size_t counter; /* offsetof(flood_stats_t, ...) */
} report_field_t;

#define COUNTER(field) offsetof(flood_stats_t, field)
static const report_field_t report_fields[] = {
	{ "sent", "sent", FIELD_COUNT, COUNTER(sent) },
	{ "answered", "answered", FIELD_COUNT, COUNTER(answered) },
	{ "lost", "lost", FIELD_LOSS, COUNTER(lost) },
	{ "qps", "qps", FIELD_QPS, 0 },
	{ "latency ms", "latency_ms", FIELD_LATENCY, 0 },
	{ "rcodes", "rcodes", FIELD_RCODES, COUNTER(rcode) },
	{ "truncated", "truncated", FIELD_COUNT, COUNTER(truncated) },
	{ "unexpected", "unexpected", FIELD_RARE, COUNTER(unexpected) },
	{ "send errors", "send_errors", FIELD_RARE, COUNTER(send_errors) },
	{ "icmp refused", "icmp_refused", FIELD_RARE, COUNTER(refused_icmp) },
};
#define REPORT_FIELDS (sizeof(report_fields) / sizeof(report_fields[0]))

/* The counter a field reads (for RCODES, the first of 16). */
static const _Atomic uint64_t *field_counter(const report_field_t *fd, const flood_stats_t *s)
{
	return (const _Atomic uint64_t *)((const char *)s + fd->counter);
}

static void text_field(const report_field_t *fd, const flood_stats_t *s, const figures_t *f)
{
	const _Atomic uint64_t *c = field_counter(fd, s);
	char name[DNS_RCODE_TEXT_MAX];
	switch (fd->kind) {
	case FIELD_COUNT:
		printf("  %-11s %llu\n", fd->label, (unsigned long long)LOAD(*c));
		break;
	case FIELD_LOSS:
		printf("  %-11s %llu (%.3f%%)\n", fd->label, (unsigned long long)LOAD(*c),
		       100 * ratio(LOAD(*c), LOAD(s->sent)));
		break;
	case FIELD_QPS:
		printf("  %-11s %.1f\n", fd->label, f->qps);
		break;
	case FIELD_LATENCY:
		printf("  %-11s p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n", fd->label,
		       f->p50, f->p90, f->p99, f->p999, f->max);
		break;
	case FIELD_RCODES:
		printf("  %-11s", fd->label);
		for (unsigned r = 0; r < 16; r++)
			if (LOAD(c[r]))
				printf(" %s %llu", dns_rcode_name(r, name),
				       (unsigned long long)LOAD(c[r]));
		printf("\n");
		break;
	case FIELD_RARE: {
		/* the first of a run of RARE fields prints the run */
		if (fd > report_fields && fd[-1].kind == FIELD_RARE)
			break;
		const report_field_t *end = fd, *last = report_fields + REPORT_FIELDS;
		bool any = false;
		for (; end < last && end->kind == FIELD_RARE; end++)
			any |= LOAD(*field_counter(end, s)) != 0;
		for (const report_field_t *r = fd; any && r < end; r++)
			printf("  %-11s %llu", r->label,
			       (unsigned long long)LOAD(*field_counter(r, s)));
		if (any)
			printf("\n");
		break;
	}
	}
}

static void json_field(const report_field_t *fd, const flood_stats_t *s, const figures_t *f)
{
	const _Atomic uint64_t *c = field_counter(fd, s);
	char name[DNS_RCODE_TEXT_MAX];
	printf(",\"%s\":", fd->key);
	switch (fd->kind) {
	case FIELD_COUNT:
	case FIELD_LOSS:
	case FIELD_RARE:
		printf("%llu", (unsigned long long)LOAD(*c));
		break;
	case FIELD_QPS:
		printf("%.1f", f->qps);
		break;
	case FIELD_LATENCY:
		printf("{\"p50\":%.4f,\"p90\":%.4f,\"p99\":%.4f,\"p99.9\":%.4f,\"max\":%.4f}",
		       f->p50, f->p90, f->p99, f->p999, f->max);
		break;
	case FIELD_RCODES: {
		const char *sep = "";
		printf("{");
		for (unsigned r = 0; r < 16; r++) {
			if (LOAD(c[r])) {
				printf("%s\"%s\":%llu", sep, dns_rcode_name(r, name),
				       (unsigned long long)LOAD(c[r]));
				sep = ",";
			}
		}
		printf("}");
		break;
	}
	}
}

/* How the queries were spaced: "unpaced" without -Q, else the --arrivals kind. */
static const char *arrivals(const flood_opts_t *o)
{
	return o->rate > 0 ? flood_arrivals_name(o->arrivals) : "unpaced";
}

static void report_text(const flood_opts_t *o, const flood_stats_t *s, const figures_t *f)
{
	uint64_t answered = LOAD(s->answered);
	printf("shoal-flood: %s port %u, %s, %u thread%s x %u %s, ", o->server_text, o->port,
	       o->tcp_pipeline ? "tcp" : "udp", o->threads, o->threads == 1 ? "" : "s", o->sockets,
	       o->tcp_pipeline ? "connections" : "sockets");
	if (o->rate > 0)
		printf("%s arrivals at %g q/s", arrivals(o), o->rate);
	else
		printf("unpaced");
	printf(", %.2f s\n", f->secs);
	for (size_t i = 0; i < REPORT_FIELDS; i++)
		text_field(&report_fields[i], s, f);
	if (!o->nsid)
		return;
	printf("  nsid        %s\n", s->nsid_sample[0] ? s->nsid_sample : "(none)");
	if (f->nsid_threads == 0) {
		printf("  per thread  none: no NSID ended in /N (%llu answers without)\n",
		       (unsigned long long)(LOAD(s->nsid_other) + LOAD(s->nsid_missing)));
		return;
	}
	printf("  per thread ");
	for (unsigned k = 0; k < f->nsid_threads; k++)
		printf(" %u: %llu (%.1f%%)", k, (unsigned long long)LOAD(s->nsid_thread[k]),
		       100 * ratio(LOAD(s->nsid_thread[k]), answered));
	if (f->nsid_min)
		printf("\n  max/min     %.3f\n", ratio(f->nsid_max, f->nsid_min));
	else
		printf("\n  max/min     inf\n");
	if (LOAD(s->nsid_other) || LOAD(s->nsid_missing))
		printf("  no thread   %llu  no nsid %llu\n",
		       (unsigned long long)LOAD(s->nsid_other),
		       (unsigned long long)LOAD(s->nsid_missing));
	if (!o->tcp_pipeline)
		printf("  sticky      %llu of %llu sockets (%.1f%%)\n",
		       (unsigned long long)s->sockets_sticky,
		       (unsigned long long)s->sockets_answered,
		       100 * ratio(s->sockets_sticky, s->sockets_answered));
}

/* JSON string of printable ASCII: the NSID sample is already reduced to that. */
static void json_string(const char *text)
{
	putchar('"');
	for (const char *p = text; *p; p++) {
		if (*p == '"' || *p == '\\')
			putchar('\\');
		putchar(*p);
	}
	putchar('"');
}

static void report_json(const flood_opts_t *o, const flood_stats_t *s, const figures_t *f)
{
	printf("{\"server\":");
	json_string(o->server_text);
	printf(",\"port\":%u,\"transport\":\"%s\",\"threads\":%u,\"sockets\":%u,\"rate\":%g,"
	       "\"arrivals\":\"%s\",\"seconds\":%.6f",
	       o->port, o->tcp_pipeline ? "tcp" : "udp", o->threads, o->sockets, o->rate,
	       arrivals(o), f->secs);
	for (size_t i = 0; i < REPORT_FIELDS; i++)
		json_field(&report_fields[i], s, f);
	if (o->nsid) {
		printf(",\"nsid\":{\"sample\":");
		json_string(s->nsid_sample);
		printf(",\"threads\":[");
		for (unsigned k = 0; k < f->nsid_threads; k++)
			printf("%s%llu", k ? "," : "", (unsigned long long)LOAD(s->nsid_thread[k]));
		printf("],\"max_min\":");
		if (f->nsid_min)
			printf("%.4f", ratio(f->nsid_max, f->nsid_min));
		else
			printf("null");
		printf(",\"no_thread\":%llu,\"missing\":%llu",
		       (unsigned long long)LOAD(s->nsid_other),
		       (unsigned long long)LOAD(s->nsid_missing));
		if (!o->tcp_pipeline)
			printf(",\"sockets_answered\":%llu,\"sockets_sticky\":%llu,\"stickiness\":%.4f",
			       (unsigned long long)s->sockets_answered,
			       (unsigned long long)s->sockets_sticky,
			       ratio(s->sockets_sticky, s->sockets_answered));
		printf("}");
	}
	printf("}\n");
}

void flood_report(const flood_opts_t *o, const flood_stats_t *sum, uint64_t elapsed_ns)
{
	static figures_t f; /* main thread, once: too big for the stack comfortably */
	compute(&f, sum, elapsed_ns);
	if (o->json)
		report_json(o, sum, &f);
	else
		report_text(o, sum, &f);
	fflush(stdout);
}
