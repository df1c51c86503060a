/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/stats.c: counting, summing, and the table, JSON and Prometheus
 * outputs. */
#include "config.h"

#include <ctype.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/stats.h"
#include "tests/unit/man.h"
#include "unit.h"
#include "zone/answer.h"
#include "zone/zonedb.h"

static char tmpdir[] = "/tmp/shoal-stats-XXXXXX";
static char zfile[4096];
static zonedb_t *db; /* example.com (slot 1) and a"b.test (slot 2) */

static void test_layout(void)
{
	/* each worker's counters start on their own cache line */
	CU_ASSERT_EQUAL(alignof(worker_stats_t), 64);
	CU_ASSERT_EQUAL(sizeof(worker_stats_t) % 64, 0);
}

static void test_count(void)
{
	worker_stats_t s;
	memset(&s, 0, sizeof(s));
	answer_info_t ok = { .rcode = 3, .truncated = true, .qtype = DNS_TYPE_AAAA, .edns = true };
	answer_info_t bad = { .rcode = 1, .malformed = true, .qtype = 65000 };
	answer_info_t drop = { .dropped = true, .malformed = true };
	stats_count_udp(&s, 40, true, &ok);
	stats_count_udp(&s, 20, true, &bad);
	stats_count_udp(&s, 7, false, &drop);
	CU_ASSERT_EQUAL(s.queries, 3);
	CU_ASSERT_EQUAL(s.bytes_in, 67);
	CU_ASSERT_EQUAL(s.answers[3], 1);
	CU_ASSERT_EQUAL(s.answers[1], 1);
	CU_ASSERT_EQUAL(s.truncated, 1);
	CU_ASSERT_EQUAL(s.malformed, 2);
	CU_ASSERT_EQUAL(s.dropped, 1);
	/* what was asked: a query without a question has no type */
	CU_ASSERT_EQUAL(s.query.type[STATS_QTYPE_AAAA], 1);
	CU_ASSERT_EQUAL(s.query.type[STATS_QTYPE_OTHER], 1);
	CU_ASSERT_EQUAL(s.query.edns, 1);
	CU_ASSERT_EQUAL(s.query.dnssec_ok, 0);
	/* TCP: rcodes of what was answered, and the same query counters */
	answer_info_t tcp = { .rcode = 0, .qtype = DNS_TYPE_AXFR, .edns = true, .dnssec_ok = true };
	stats_count_tcp(&s, &s.tcp, true, &tcp);
	stats_count_tcp(&s, &s.tcp, false, &tcp);
	CU_ASSERT_EQUAL(s.tcp.rcode[0], 1);
	CU_ASSERT_EQUAL(s.query.type[STATS_QTYPE_AXFR], 2);
	CU_ASSERT_EQUAL(s.query.edns, 3);
	CU_ASSERT_EQUAL(s.query.dnssec_ok, 2);
}

/* The named types are counted by name, every other as other. */
static void test_qtype_index(void)
{
	CU_ASSERT_EQUAL(stats_qtype_index(DNS_TYPE_A), STATS_QTYPE_A);
	CU_ASSERT_EQUAL(stats_qtype_index(DNS_TYPE_CAA), STATS_QTYPE_CAA);
	CU_ASSERT_EQUAL(stats_qtype_index(DNS_TYPE_ANY), STATS_QTYPE_ANY);
	CU_ASSERT_EQUAL(stats_qtype_index(DNS_TYPE_HINFO), STATS_QTYPE_OTHER);
	CU_ASSERT_EQUAL(stats_qtype_index(0), STATS_QTYPE_OTHER);
	CU_ASSERT_STRING_EQUAL(stats_qtype_name(STATS_QTYPE_NSEC3PARAM), "NSEC3PARAM");
	CU_ASSERT_STRING_EQUAL(stats_qtype_name(STATS_QTYPE_OTHER), "other");
}

static void test_count_zone(void)
{
	zone_stats_t z[4];
	memset(z, 0, sizeof(z));
	answer_info_t nx = { .rcode = DNS_RCODE_NXDOMAIN, .zone_slot = 2 };
	answer_info_t ok = { .rcode = 0, .zone_slot = 2 };
	answer_info_t none = { .rcode = DNS_RCODE_REFUSED };
	answer_info_t past = { .rcode = 0, .zone_slot = 4 };
	stats_count_zone(z, 4, true, &nx);
	stats_count_zone(z, 4, true, &ok);
	stats_count_zone(z, 4, false, &ok); /* not sent: not an answer */
	stats_count_zone(z, 4, true, &none);
	stats_count_zone(z, 4, true, &past);
	CU_ASSERT_EQUAL(z[2].answers, 2);
	CU_ASSERT_EQUAL(z[2].nxdomain, 1);
	CU_ASSERT_EQUAL(z[0].answers, 0);
}

/* Two workers with a few counters, and zone arrays of 3 slots. */
typedef struct fixture {
	worker_stats_t *w;
	zone_stats_t zones[2][3];
	zone_stats_t *zp[2];
	stats_groups_t groups;
	stats_source_t src;
} fixture_t;

static void fixture_init(fixture_t *fx)
{
	memset(fx, 0, sizeof(*fx));
	fx->w = aligned_alloc(64, 2 * sizeof(*fx->w));
	CU_ASSERT_PTR_NOT_NULL_FATAL(fx->w);
	memset(fx->w, 0, 2 * sizeof(*fx->w));
	fx->w[0].queries = 5;
	fx->w[0].answers[0] = 5;
	fx->w[1].queries = 7;
	fx->w[1].answers[0] = 6;
	fx->w[1].answers[5] = 1;
	fx->w[1].tcp.queries = 2;
	fx->w[1].tcp.rcode[3] = 2;
	fx->w[0].query.type[STATS_QTYPE_A] = 4;
	fx->w[1].query.type[STATS_QTYPE_A] = 3;
	fx->w[1].query.type[STATS_QTYPE_OTHER] = 1;
	fx->w[0].query.dnssec_ok = 2;
	fx->zones[0][1].answers = 3;
	fx->zones[1][1].answers = 4;
	fx->zones[1][1].nxdomain = 1;
	fx->zones[1][2].answers = 9;
	fx->zp[0] = fx->zones[0];
	fx->zp[1] = fx->zones[1];
	fx->groups.notify_out.sent = 4;
	fx->groups.xfr_in.bytes_in = 123456;
	fx->src = (stats_source_t){ .workers = fx->w,
				    .count = 2,
				    .zones = fx->zp,
				    .zone_slots = 3,
				    .db = db,
				    .parts = 1,
				    .groups = &fx->groups };
}

/* The scheduler's part: two secondary zones, one the set has (its gauges shown), one not. */
static void two_secondaries(const void *from, stats_secondary_fn each, void *arg)
{
	(void)from;
	stats_secondary_t g = { .next_refresh = 1800000000, .expires = 1800000600, .unsaved = 1 };
	each(arg, (const uint8_t *)"\4none\4test", &g);
	each(arg, (const uint8_t *)"\3a\"b\4test", &g);
}

static char *render(const stats_source_t *src, enum stats_format f)
{
	char *out = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL_FATAL(stats_render(src, f, &out, &len), 0);
	CU_ASSERT_EQUAL(len, strlen(out));
	return out;
}

static void test_json(void)
{
	fixture_t fx;
	fixture_init(&fx);
	char *buf = render(&fx.src, STATS_FORMAT_JSON);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "{\"thread\": 0, \"queries\": 5, \"answers\": {\"NOERROR\": 5}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf,
		"{\"thread\": 1, \"queries\": 7, \"answers\": {\"NOERROR\": 6, \"REFUSED\": 1}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf,
		"\"total\": {\"queries\": 12, \"answers\": {\"NOERROR\": 11, \"REFUSED\": 1}"));
	/* the lists nest after the UDP counters, in table order */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"cookie_invalid\": 0, \"tcp\": {\"accepted\": 0"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "\"rcode\": {\"NXDOMAIN\": 2}}, \"tls\": {\"accepted\": 0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"handshakes_evicted\": 0}, \"query\": {"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "\"query\": {\"type\": {\"A\": 7, \"other\": 1}, \"edns\": 0, "
			    "\"dnssec_ok\": 2, \"dnstap_queued\": 0, \"dnstap_dropped\": 0}, "
			    "\"xfr\": {\"requests\": 0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"notify_refused\": 0}},\n \"zones\": {"));
	/* zones by name, the name's quote and backslash escaped, summed over the threads */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n \"zones\": {\"example.com.\": {\"answers\": 7, "
					   "\"nxdomain\": 1, \"serial\": 1}, \"a\\\\\\\"b.test.\": "
					   "{\"answers\": 9, \"nxdomain\": 0, \"serial\": 1}},\n"));
	/* the groups after them, each an object of its own, in table order */
	char version[64];
	snprintf(version, sizeof(version), "\"build_info\": {\"%s\": 1}},\n", PACKAGE_VERSION);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "}},\n \"server\": {\"zones\": 2, \"start_time\": 0, "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, version));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "},\n \"notify_out\": {\"sent\": 4, \"answered\": 0, "
					   "\"refused\": 0, \"unanswered\": 0},\n \"xfr_in\": {"
					   "\"checks\": 0, "));
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf, "\"bytes_in\": 123456, \"expired\": 0, \"save_failed\": 0},\n \"sched\": {"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"state_save_errors\": 0, \"unsaved\": 0}}\n"));
	free(buf);
	/* a secondary zone: its gauges, whatever its traffic; one the set lacks is not shown */
	fx.src.secondaries = two_secondaries;
	memset(fx.zones, 0, sizeof(fx.zones));
	buf = render(&fx.src, STATS_FORMAT_JSON);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf,
				      "\n \"zones\": {\"a\\\\\\\"b.test.\": {\"answers\": 0, "
				      "\"nxdomain\": 0, \"serial\": 1, \"next_refresh\": "
				      "1800000000, \"expires\": 1800000600, \"last_refresh\": 0, "
				      "\"last_failure\": 0, \"unsaved\": 1}},\n"));
	free(buf);
	/* without a zone set: no zones; without the groups: theirs are 0 */
	fx.src.db = NULL;
	fx.src.groups = NULL;
	buf = render(&fx.src, STATS_FORMAT_JSON);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n \"zones\": {},\n \"server\": {\"zones\": 0, "));
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf, "\"bytes_in\": 0, \"expired\": 0, \"save_failed\": 0},\n \"sched\": {"));
	free(buf);
	free(fx.w);
}

/*
 * A worker whose threads count apart (its loop, its UDP receivers) is one
 * column: its parts summed, in the thread's own figures and the zones'.
 */
static void test_parts(void)
{
	fixture_t fx;
	fixture_init(&fx);
	fx.src.count = 1;
	fx.src.parts = 2;
	char *buf = render(&fx.src, STATS_FORMAT_JSON);
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf,
		"{\"thread\": 0, \"queries\": 12, \"answers\": {\"NOERROR\": 11, \"REFUSED\": 1}"));
	CU_ASSERT_PTR_NULL(strstr(buf, "\"thread\": 1,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf,
		"\"total\": {\"queries\": 12, \"answers\": {\"NOERROR\": 11, \"REFUSED\": 1}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"zones\": {\"example.com.\": {\"answers\": 7, "
					   "\"nxdomain\": 1, \"serial\": 1}, \"a\\\\\\\"b.test.\": "
					   "{\"answers\": 9, \"nxdomain\": 0, \"serial\": 1}},\n"));
	free(buf);
	free(fx.w);
}

static void test_text(void)
{
	fixture_t fx;
	fixture_init(&fx);
	char *buf = render(&fx.src, STATS_FORMAT_TEXT);
	/* a header, then each counter with the total first; zero rcodes and types left out */
	CU_ASSERT_EQUAL(strncmp(buf, "counter ", 8), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  total  thread 0  thread 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nudp queries "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "     12         5         7\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nudp answers REFUSED "));
	CU_ASSERT_PTR_NULL(strstr(buf, "SERVFAIL"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ntcp rcode NXDOMAIN "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nquery type other "));
	CU_ASSERT_PTR_NULL(strstr(buf, "query type AAAA"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nzone example.com. nxdomain "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nzone a\\\"b.test. answers "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nzone example.com. serial "));
	/* every line as wide as the header; the zones' and the groups' after them, the total alone
	 */
	size_t width = strcspn(buf, "\n"), total = width - strlen("  thread 0  thread 1");
	char *zones = strstr(buf, "\nzone "), *groups = strstr(buf, "\nnotify_out sent ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(zones);
	CU_ASSERT_PTR_NOT_NULL_FATAL(groups);
	for (char *line = buf; *line; line += strcspn(line, "\n") + 1)
		CU_ASSERT_EQUAL(strcspn(line, "\n"), line < zones ? width : total);
	CU_ASSERT_PTR_NOT_NULL(strstr(groups, "\nnotify_out sent "));
	CU_ASSERT_PTR_NOT_NULL(strstr(groups, "      4\nnotify_out answered "));
	CU_ASSERT_PTR_NOT_NULL(strstr(groups, "\nxfr_in bytes_in "));
	CU_ASSERT_PTR_NOT_NULL(strstr(groups, " 123456\nxfr_in expired "));
	free(buf);
	free(fx.w);
}

/*
 * A small reader of the text exposition format: every line is a HELP or
 * TYPE comment or a sample; a metric is typed once, and its samples follow
 * its TYPE, before any other metric's; labels are name="value" with
 * escapes, values integers. Returns the number of samples (-1 on a bad
 * line) and sums the samples of `metric` whose labels contain `with` into
 * *sum, counting their threads.
 */
static int prom_parse(const char *text, const char *metric, const char *with, uint64_t *sum)
{
	char typed[256][96];
	int ntyped = 0, samples = 0;
	*sum = 0;
	for (const char *line = text; *line; line += strcspn(line, "\n") + 1) {
		size_t len = strcspn(line, "\n");
		char l[2048];
		if (len >= sizeof(l))
			return -1;
		memcpy(l, line, len);
		l[len] = '\0';
		char name[96], kind[16];
		if (!strncmp(l, "# HELP ", 7)) {
			if (sscanf(l, "# HELP %95s %*s", name) != 1)
				return -1;
			continue;
		}
		if (!strncmp(l, "# TYPE ", 7)) {
			if (sscanf(l, "# TYPE %95s %15s", name, kind) != 2 ||
			    (strcmp(kind, "counter") && strcmp(kind, "gauge")) || ntyped == 256)
				return -1;
			for (int i = 0; i < ntyped; i++)
				if (!strcmp(typed[i], name))
					return -1; /* typed twice */
			snprintf(typed[ntyped++], sizeof(typed[0]), "%s", name);
			continue;
		}
		size_t nlen = strcspn(l, "{ ");
		if (nlen == 0 || nlen >= sizeof(name))
			return -1;
		memcpy(name, l, nlen);
		name[nlen] = '\0';
		if (!ntyped || strcmp(typed[ntyped - 1], name))
			return -1; /* not the metric typed last */
		/* labels, if any: name="value" pairs, commas between, backslash escapes */
		const char *p = l + nlen + (l[nlen] == '{');
		while (l[nlen] == '{' && *p != '}') {
			size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
			if (k == 0 || p[k] != '=' || p[k + 1] != '"')
				return -1;
			p += k + 2;
			while (*p && *p != '"')
				p += *p == '\\' && p[1] ? 2 : 1;
			if (*p != '"')
				return -1;
			p++;
			if (*p == ',')
				p++;
		}
		p += l[nlen] == '{'; /* the labels' end */
		char *end;
		unsigned long long v = strtoull(p + 1, &end, 10);
		if (p[0] != ' ' || *end)
			return -1;
		if (!strcmp(name, metric) && strstr(l, with))
			*sum += v;
		samples++;
	}
	return samples;
}

static void test_prometheus(void)
{
	fixture_t fx;
	fixture_init(&fx);
	fx.src.secondaries = two_secondaries;
	char *buf = render(&fx.src, STATS_FORMAT_PROMETHEUS);
	uint64_t sum;
	CU_ASSERT(prom_parse(buf, "shoal_queries_total", "protocol=\"udp\"", &sum) > 0);
	CU_ASSERT_EQUAL(sum, 12);
	/* the protocol a label: UDP's and TCP's queries one metric, its samples together */
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "# HELP shoal_queries_total queries received, by protocol (UDP: "
			    "datagrams)\n# TYPE shoal_queries_total counter\n"
			    "shoal_queries_total{thread=\"0\",protocol=\"udp\"} 5\n"
			    "shoal_queries_total{thread=\"1\",protocol=\"udp\"} 7\n"
			    "shoal_queries_total{thread=\"0\",protocol=\"tcp\"} 0\n"
			    "shoal_queries_total{thread=\"1\",protocol=\"tcp\"} 2\n"));
	prom_parse(buf, "shoal_answers_total", "protocol=\"udp\",rcode=\"NOERROR\"", &sum);
	CU_ASSERT_EQUAL(sum, 11);
	prom_parse(buf, "shoal_answers_total", "protocol=\"tcp\",rcode=\"NXDOMAIN\"", &sum);
	CU_ASSERT_EQUAL(sum, 2);
	prom_parse(buf, "shoal_query_types_total", "type=\"A\"", &sum);
	CU_ASSERT_EQUAL(sum, 7);
	/* a fixed label: related counters one metric */
	CU_ASSERT_PTR_NOT_NULL(strstr(
		buf,
		"shoal_closed_connections_total{thread=\"1\",protocol=\"tcp\",reason=\"idle\"} 0\n"));
	/* a zone's: one sample, no thread (zones x threads was too many) */
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "\nshoal_zone_answers_total{zone=\"example.com.\"} 7\n"));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "shoal_zone_answers_total{zone=\"a\\\\\\\"b.test.\"} 9\n"));
	CU_ASSERT_PTR_NULL(strstr(buf, "shoal_zone_answers_total{thread"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nshoal_zone_serial{zone=\"example.com.\"} 1\n"));
	/* a secondary's gauges, for it alone */
	CU_ASSERT_PTR_NOT_NULL(
		strstr(buf, "# TYPE shoal_zone_expiry_timestamp_seconds gauge\n"
			    "shoal_zone_expiry_timestamp_seconds{zone=\"a\\\\\\\"b.test.\"} "
			    "1800000600\n# HELP "));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "shoal_zone_unsaved{zone=\"a\\\\\\\"b.test.\"} 1\n"));
	/* a zero rcode is left out, as in the table */
	CU_ASSERT_PTR_NULL(strstr(buf, "rcode=\"SERVFAIL\""));
	/* a group's counter: one sample, no thread; bytes named so */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "# HELP shoal_xfr_in_received_bytes_total octets of "
					   "transfer messages received\n"
					   "# TYPE shoal_xfr_in_received_bytes_total counter\n"
					   "shoal_xfr_in_received_bytes_total 123456\n"));
	prom_parse(buf, "shoal_notify_out_sent_total", "", &sum);
	CU_ASSERT_EQUAL(sum, 4);
	/* the process: the zones, its version */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nshoal_zones 2\n"));
	char info[96];
	snprintf(info, sizeof(info), "\nshoal_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, info));
	free(buf);
	free(fx.w);
}

/* Every counter of every worker at its largest. */
static worker_stats_t *stats_full(size_t n)
{
	worker_stats_t *w = aligned_alloc(64, n * sizeof(*w));
	if (w)
		memset(w, 0xff, n * sizeof(*w));
	return w;
}

/*
 * The outputs grow with the threads: 256 threads with every counter at
 * its largest render whole (a fixed 64 KiB reply once refused them).
 */
static void test_any_thread_count(void)
{
	enum { THREADS_MAX = 256 };
	worker_stats_t *w = stats_full(THREADS_MAX);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	stats_source_t src = { .workers = w, .count = THREADS_MAX, .parts = 1 };
	for (int f = 0; f < 3; f++) {
		char *buf = render(&src, (enum stats_format)f);
		CU_ASSERT(strlen(buf) > 64 * 1024);
		free(buf);
	}
	free(w);
}

/*
 * The tables are the counters: every field of the structs is a line of
 * a list, and each line is in every output with its name.
 */
static void test_table_is_every_counter(void)
{
#define COUNT(type, name)             +sizeof(((const type *)0)->name) / sizeof(uint64_t)
#define UDP_COUNT(name, kind, m, h)   COUNT(worker_stats_t, name)
#define TCP_COUNT(name, kind, m, h)   COUNT(tcp_stats_t, name)
#define QUERY_COUNT(name, kind, m, h) COUNT(query_stats_t, name)
#define ZONE_COUNT(name, kind, m, h)  COUNT(zone_stats_t, name)
#define XFR_COUNT(name, kind, m, h)   COUNT(xfr_stats_t, name)
#define TLS_COUNT(name, kind, m, h)   COUNT(tls_stats_t, name)
	size_t udp = 0 STATS_UDP(UDP_COUNT), tcp = 0 STATS_TCP(TCP_COUNT);
	size_t query = 0 STATS_QUERY(QUERY_COUNT), zone = 0 STATS_ZONE(ZONE_COUNT);
	size_t xfr = 0 STATS_XFR(XFR_COUNT), tls = tcp STATS_TLS(TLS_COUNT);
	CU_ASSERT_EQUAL(sizeof(xfr_stats_t), xfr * sizeof(uint64_t));
	CU_ASSERT_EQUAL(sizeof(tcp_stats_t), tcp * sizeof(uint64_t));
	CU_ASSERT_EQUAL(sizeof(tls_stats_t), tls * sizeof(uint64_t));
	CU_ASSERT_EQUAL(sizeof(query_stats_t), query * sizeof(uint64_t));
	CU_ASSERT_EQUAL(sizeof(zone_stats_t), zone * sizeof(uint64_t));
	size_t octets = (udp + tcp + tls + query + xfr) * sizeof(uint64_t);
	CU_ASSERT_EQUAL(sizeof(worker_stats_t), (octets + 63) / 64 * 64);
	fixture_t fx;
	fixture_init(&fx);
	fx.src.secondaries = two_secondaries;
	char *json = render(&fx.src, STATS_FORMAT_JSON);
	char *prom = render(&fx.src, STATS_FORMAT_PROMETHEUS);
	char *text = render(&fx.src, STATS_FORMAT_TEXT);
	uint64_t sum;
	CU_ASSERT(prom_parse(prom, "", "", &sum) > 0); /* the whole exposition reads */
	char *total = strstr(json, "\"total\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(total);
	const char *part = total;
#define NAMED(list, name, kind, metric)                                                    \
	do {                                                                               \
		char key[128];                                                             \
		snprintf(key, sizeof(key), "\"%s\": ", #name);                             \
		CU_ASSERT_PTR_NOT_NULL(strstr(part, key));                                 \
		snprintf(key, sizeof(key), "# TYPE shoal_%.*s", (int)strcspn(metric, "{"), \
			 metric);                                                          \
		CU_ASSERT_PTR_NOT_NULL(strstr(prom, key));                                 \
		snprintf(key, sizeof(key), "\n%s %s ", list, #name);                       \
		if (STATS_##kind == STATS_COUNTER)                                         \
			CU_ASSERT_PTR_NOT_NULL(strstr(text, key));                         \
	} while (0);
#define UDP_NAMED(name, kind, m, h) NAMED("udp", name, kind, m)
	STATS_UDP(UDP_NAMED)
	part = strstr(total, "\"tcp\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
#define TCP_NAMED(name, kind, m, h) NAMED("tcp", name, kind, m)
	STATS_TCP(TCP_NAMED)
	part = strstr(total, "\"tls\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
#define TLS_NAMED(name, kind, m, h) NAMED("tls", name, kind, m)
	STATS_CONN(TLS_NAMED, "TLS")
	STATS_TLS(TLS_NAMED)
	part = strstr(total, "\"query\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
#define QUERY_NAMED(name, kind, m, h) NAMED("query", name, kind, m)
	STATS_QUERY(QUERY_NAMED)
	part = strstr(total, "\"xfr\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
#define XFR_NAMED(name, kind, m, h) NAMED("xfr", name, kind, m)
	STATS_XFR(XFR_NAMED)
	part = strstr(json, "\n \"zones\": {");
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
#define ZONE_NAMED(name, kind, m, h)                             \
	CU_ASSERT_PTR_NOT_NULL(strstr(part, "\"" #name "\": ")); \
	CU_ASSERT_PTR_NOT_NULL(strstr(prom, "# TYPE shoal_" m)); \
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " " #name " "));
	STATS_ZONE(ZONE_NAMED)
	STATS_SERVED(ZONE_NAMED)
	STATS_SECONDARY(ZONE_NAMED)
	/* each group: its struct is its list, and each counter is in every output */
#define GROUP_COUNT(g, name, kind, m, h) COUNT(stats_##g##_t, name)
#define GROUP_NAMED(g, name, kind, m, h) NAMED(#g, name, kind, m)
#define GROUP_CHECK(g, list)                                                                 \
	CU_ASSERT_EQUAL(sizeof(stats_##g##_t), (0 list(GROUP_COUNT, g)) * sizeof(uint64_t)); \
	part = strstr(json, "\n \"" #g "\": {");                                             \
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);                                                  \
	list(GROUP_NAMED, g)
	STATS_GROUPS(GROUP_CHECK)
	free(json);
	free(prom);
	free(text);
	free(fx.w);
}

/* Does word stand in text as a word of its own (not part of a longer name)? */
static bool has_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
		bool before = p == text || !(p[-1] == '_' || isalnum((unsigned char)p[-1]));
		bool after = !(p[n] == '_' || isalnum((unsigned char)p[n]));
		if (before && after)
			return true;
	}
	return false;
}

/* Whether page names metric m (shoal_<m before a label>[_total]); says so when not. */
static bool names_metric(const char *page, const char *m, bool counter)
{
	char name[128];
	snprintf(name, sizeof(name), "shoal_%.*s%s", (int)strcspn(m, "{"), m,
		 counter ? "_total" : "");
	if (!has_word(page, name))
		fprintf(stderr, "\n  shoalctl(8) does not name the metric %s\n", name);
	return has_word(page, name);
}

/*
 * shoalctl(8) names every counter, its Prometheus metric, and every query
 * type counted by name.
 */
static void test_man_page_names_every_counter(void)
{
	static char page[131072];
	CU_ASSERT_FATAL(man_read("shoalctl.8.in", page, sizeof(page)) > 0);
#define IN_PAGE(name, kind, m, h)                                                         \
	CU_ASSERT(has_word(page, #name));                                                 \
	if (!has_word(page, #name))                                                       \
		fprintf(stderr, "\n  shoalctl(8) does not name the counter %s\n", #name); \
	CU_ASSERT(names_metric(page, m, STATS_##kind != STATS_GAUGE && STATS_##kind != STATS_INFO));
	STATS_UDP(IN_PAGE)
	STATS_TCP(IN_PAGE)
	STATS_TLS(IN_PAGE)
	STATS_QUERY(IN_PAGE)
	STATS_ZONE(IN_PAGE)
	STATS_SERVED(IN_PAGE)
	STATS_SECONDARY(IN_PAGE)
#define GROUP_IN_PAGE(g, name, kind, m, h) IN_PAGE(name, kind, m, h)
#define GROUP(g, list)                     CU_ASSERT(has_word(page, #g)) list(GROUP_IN_PAGE, g)
	STATS_GROUPS(GROUP)
#undef GROUP
#undef GROUP_IN_PAGE
#undef IN_PAGE
	for (unsigned i = 0; i < STATS_QTYPE_MAX; i++)
		CU_ASSERT(has_word(page, stats_qtype_name(i)));
}

static void quiet(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	(void)is_error;
	(void)msg;
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	snprintf(zfile, sizeof(zfile), "%s/relative.zone", tmpdir);
	FILE *f = fopen(zfile, "w");
	if (!f)
		return 99;
	fputs("$TTL 300\n@ IN SOA ns1 hm 1 2 3 4 5\n@ IN NS ns1\nns1 IN A 192.0.2.1\n", f);
	fclose(f);
	zone_spec_t specs[] = {
		{ .name = "example.com", .file = zfile, .limits = ZONE_LIMITS_DEFAULT },
		{ .name = "a\\\"b.test", .file = zfile, .limits = ZONE_LIMITS_DEFAULT },
	};
	int built = zonedb_build(specs, 2, NULL, NULL, quiet, NULL, &db);
	unlink(zfile);
	rmdir(tmpdir);
	if (built != 0)
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_layout),
		UNIT_TEST(test_count),
		UNIT_TEST(test_qtype_index),
		UNIT_TEST(test_count_zone),
		UNIT_TEST(test_json),
		UNIT_TEST(test_parts),
		UNIT_TEST(test_text),
		UNIT_TEST(test_prometheus),
		UNIT_TEST(test_any_thread_count),
		UNIT_TEST(test_table_is_every_counter),
		UNIT_TEST(test_man_page_names_every_counter),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "stats", tests);
	zonedb_free(db);
	return rc;
}
