/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Zone transfer benchmark (not a test): AXFR out of a zone of N records
 * built in memory, at message limits of 65535 and 16383 octets; reports
 * messages per second, octets, and the longest single call (the most a
 * worker's loop waits for one message). Then the diff of that zone and a
 * version with 100 records changed (what a reload adds to the journal),
 * and the secondary's side: that AXFR received (xfr_in: parse, check,
 * build) and the IXFR of the 100 changes applied to the zone (zone_apply:
 * new nodes for the names changed, the rest shared), then the same for a
 * tenth of the records changed, and the zone written to a file (in
 * $TMPDIR, removed after): zone_write whole, then its lines alone.
 *
 *   tests/bench/xfr_bench [RECORDS]     (default 1000000)
 *
 * With -m, only the secondary's memory during an IXFR of a tenth of the
 * records changed: the octets malloc holds (mallinfo2) at each step, to
 * run under valgrind --tool=massif for the peak's breakdown by caller.
 *
 *   tests/bench/xfr_bench -m [RECORDS]
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "zone/changeset.h"
#include "zone/load.h"
#include "zone/write.h"
#include "zone/xfr_in.h"
#include "zone/xfr_out.h"
#include "zone/zone.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void quiet(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	if (is_error)
		fprintf(stderr, "%s\n", msg);
}

/*
 * The benchmark zone of tests/bench/genzone.sh, records counted: a host
 * name with an A record, every tenth with an AAAA too, until `records`;
 * `changed` A records spread over it get another address and the serial
 * goes up by one (a new version).
 */
static zone_t *build_zone(size_t records, size_t changed)
{
	static const uint8_t apex[] = "\5bench\4test";
	char path[] = "/tmp/shoal-xfr-bench.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f)
		return NULL;
	fprintf(f,
		"$ORIGIN bench.test.\n$TTL 3600\n"
		"@ SOA ns1 hm %u 7200 3600 1209600 300\n@ NS ns1\nns1 A 10.0.0.0\n",
		2026120301u + (changed ? 1 : 0));
	/* about 10 names in 11 records: `changed` names, one A record each */
	size_t every = changed ? records * 10 / 11 / changed : 0;
	size_t n = 3;
	for (size_t i = 0; n < records; i++) {
		unsigned first = every && i % every == every / 2 ? 11 : 10;
		fprintf(f, "h%zu A %u.%zu.%zu.%zu\n", i, first, (i >> 16) & 255, (i >> 8) & 255,
			i & 255);
		n++;
		if (i % 10 == 0 && n < records) {
			fprintf(f, "h%zu AAAA 2001:db8::%x:%x\n", i,
				(unsigned)(first << 8 | ((i >> 16) & 255)), (unsigned)(i & 0xffff));
			n++;
		}
	}
	fclose(f);
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	zone_t *z = NULL;
	int rc = zone_load(path, apex, &limits, quiet, NULL, &z);
	unlink(path);
	return rc == 0 ? z : NULL;
}

/* A request for bench.test. of qtype (IXFR: the client's SOA is not needed here). */
static bool request(query_t *query, uint16_t qtype)
{
	static uint8_t req[512];
	static const uint8_t q[] = "\0\1\0\0\0\1\0\0\0\0\0\0\5bench\4test\0\0\xfc\0\1";
	memcpy(req, q, sizeof(q) - 1);
	req[sizeof(q) - 4] = (uint8_t)qtype;
	return query_parse(query, req, sizeof(q) - 1) == QUERY_OK;
}

static void bench_axfr(const zone_t *z, size_t limit)
{
	static uint8_t buf[DNS_TCP_MAX];
	query_t query;
	xfr_out_t x;
	if (!request(&query, DNS_TYPE_AXFR) || xfr_out_axfr(&x, z, &query, limit, 0, NULL) < 0)
		return;
	size_t octets = 0;
	double worst = 0, start = now();
	int len;
	for (;;) {
		double t = now();
		len = xfr_out_next(&x, buf, sizeof(buf));
		t = now() - t;
		if (t > worst)
			worst = t;
		if (len <= 0)
			break;
		octets += (size_t)len;
	}
	double secs = now() - start;
	printf("AXFR limit %5zu: %s; %u messages, %lu records, %zu octets (%.1f per record) in "
	       "%.3f s: %.0f messages/s, %.0f records/s, %.1f MB/s; longest call %.3f ms\n",
	       limit, len == 0 ? "complete" : shoal_strerror(len), x.messages,
	       (unsigned long)x.records, octets, (double)octets / (double)x.records, secs,
	       x.messages / secs, (double)x.records / secs, (double)octets / secs / 1e6,
	       worst * 1e3);
	xfr_out_clear(&x);
}

/*
 * The secondary's side: the answer x writes, received by xfr_in over
 * `current`, and the new version built. Returns it (or NULL).
 */
static zone_t *receive(xfr_out_t *x, uint16_t qtype, const zone_t *current, const char *what)
{
	static uint8_t buf[DNS_TCP_MAX];
	xfr_in_t *in = xfr_in_new((const uint8_t *)"\5bench\4test", qtype, 1, current, NULL, NULL,
				  "primary bench", quiet, NULL);
	double t = now(), fed = 0;
	int len, rc = 0;
	while (rc == 0 && (len = xfr_out_next(x, buf, sizeof(buf))) > 0) {
		double f = now();
		rc = xfr_in_feed(in, buf, (size_t)len);
		fed += now() - f;
	}
	double written = now() - t - fed;
	t = now();
	zone_t *z = NULL;
	if (rc != 1 || xfr_in_finish(in, NULL, &z) < 0)
		fprintf(stderr, "%s: the transfer failed\n", what);
	else
		printf("%s in: %u messages written in %.3f s, parsed and checked in %.3f s, the "
		       "new version made in %.3f s\n",
		       what, x->messages, written, fed, now() - t);
	xfr_in_free(in);
	xfr_out_clear(x);
	return z;
}

/* A line of /proc/self/status in MB (VmRSS, VmHWM), or -1. */
static double status_mb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, field, strlen(field)) == 0)
			kb = strtod(line + strlen(field) + 1, NULL);
	if (f)
		fclose(f);
	return kb / 1e3;
}

/* Start a new peak: VmHWM is VmRSS again (proc(5), clear_refs). */
static void reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

/* What malloc holds now, in MB, mapped chunks included. */
static double held_mb(void)
{
	struct mallinfo2 m = mallinfo2();
	return (double)(m.uordblks + m.hblkhd) / 1e6;
}

/*
 * The secondary's memory at each step of an IXFR of a tenth of the
 * records of a zone changed: RSS and its peak, and what malloc holds.
 * The IXFR's messages are written first, the primary's version dropped.
 */
static int memory_steps(size_t records)
{
	zone_t *z = build_zone(records, 0), *z3 = build_zone(records, records / 10);
	changeset_t *cs = NULL;
	if (!z || !z3 || changeset_diff(z, z3, 0, &cs) < 0)
		return 1;
	xfr_changes_t c = { .sets = malloc(sizeof(*c.sets)), .count = 1 };
	c.sets[0] = cs;
	query_t q;
	xfr_out_t x;
	if (!request(&q, DNS_TYPE_IXFR) || xfr_out_ixfr(&x, z3, &c, &q, DNS_TCP_MAX, 0, NULL) < 0)
		return 1;
	size_t count = 0, total = 0;
	uint8_t **msg = NULL, buf[DNS_TCP_MAX];
	int len;
	while ((len = xfr_out_next(&x, buf, sizeof(buf))) > 0) {
		uint8_t **more = realloc(msg, (count + 1) * sizeof(*msg));
		if (!more || !(more[count] = malloc((size_t)len + 2)))
			return 1;
		msg = more;
		msg[count][0] = (uint8_t)(len >> 8);
		msg[count][1] = (uint8_t)len;
		memcpy(msg[count++] + 2, buf, (size_t)len);
		total += (size_t)len;
	}
	xfr_out_clear(&x);
	zone_unref(z3);
	malloc_trim(0);
	printf("zone of %zu records: zone_memory %.1f MB; changeset %zu octets, %zu messages of "
	       "%zu octets\n",
	       z->rr_count, (double)zone_memory(z) / 1e6, cs->octets, count, total);
	double rss = status_mb("VmRSS"), held = held_mb();
	printf("RSS %.1f MB, malloc %.1f MB (messages included)\n", rss, held);
	reset_peak();
	xfr_in_t *in = xfr_in_new((const uint8_t *)"\5bench\4test", DNS_TYPE_IXFR, 1, z, NULL, NULL,
				  "primary bench", quiet, NULL);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < count; i++)
		rc = xfr_in_feed(in, msg[i] + 2, (size_t)(msg[i][0] << 8 | msg[i][1]));
	printf("parsed: malloc +%.1f MB, RSS peak +%.1f MB\n", held_mb() - held,
	       status_mb("VmHWM") - rss);
	zone_t *next = NULL;
	if (rc != 1 || xfr_in_finish(in, NULL, &next) < 0)
		return 1;
	printf("applied: malloc +%.1f MB, RSS peak +%.1f MB\n", held_mb() - held,
	       status_mb("VmHWM") - rss);
	xfr_in_free(in);
	printf("transfer freed, both versions held: malloc +%.1f MB; the new version's "
	       "zone_memory %.1f MB\n",
	       held_mb() - held, (double)zone_memory(next) / 1e6);
	zone_unref(z);
	printf("old version dropped: malloc +%.1f MB\n", held_mb() - held);
	zone_unref(next);
	for (size_t i = 0; i < count; i++)
		free(msg[i]);
	free(msg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "-m") == 0)
		return memory_steps(argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000);
	size_t records = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	double t = now();
	zone_t *z = build_zone(records, 0);
	if (!z) {
		fprintf(stderr, "cannot build the zone\n");
		return 1;
	}
	printf("zone of %zu records, %zu nodes, built in %.2f s\n", z->rr_count, z->node_count,
	       now() - t);
	bench_axfr(z, DNS_TCP_MAX);
	bench_axfr(z, 16383);
	zone_t *z2 = build_zone(records, 100);
	changeset_t *cs = NULL;
	t = now();
	if (!z2 || changeset_diff(z, z2, 0, &cs) < 0) {
		fprintf(stderr, "cannot diff\n");
		return 1;
	}
	printf("diff of two versions (serial %u to %u): %zu deleted, %zu added, %zu octets, "
	       "%.3f s\n",
	       cs->from, cs->to, cs->del.rr_count - 1, cs->add.rr_count - 1, cs->octets, now() - t);
	query_t q;
	xfr_out_t x;
	if (request(&q, DNS_TYPE_AXFR) && xfr_out_axfr(&x, z2, &q, DNS_TCP_MAX, 0, NULL) == 0)
		zone_unref(receive(&x, DNS_TYPE_AXFR, NULL, "AXFR"));
	xfr_changes_t c = { .sets = malloc(sizeof(*c.sets)), .count = 1 };
	c.sets[0] = cs;
	if (request(&q, DNS_TYPE_IXFR) && xfr_out_ixfr(&x, z2, &c, &q, DNS_TCP_MAX, 0, NULL) == 0)
		zone_unref(receive(&x, DNS_TYPE_IXFR, z, "IXFR of 100 changes"));
	/* a tenth of the records changed */
	size_t many = records / 10;
	zone_t *z3 = build_zone(records, many);
	cs = NULL;
	if (z3 && changeset_diff(z, z3, 0, &cs) == 0) {
		char what[64];
		snprintf(what, sizeof(what), "IXFR of %zu changes", many);
		c = (xfr_changes_t){ .sets = malloc(sizeof(*c.sets)), .count = 1 };
		c.sets[0] = cs;
		if (request(&q, DNS_TYPE_IXFR) &&
		    xfr_out_ixfr(&x, z3, &c, &q, DNS_TCP_MAX, 0, NULL) == 0)
			zone_unref(receive(&x, DNS_TYPE_IXFR, z, what));
	}
	zone_unref(z3);
	char path[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%s/xfr_bench.%d.zone", dir ? dir : "/tmp", (int)getpid());
	t = now();
	int err = zone_write(z2, path, "xfr_bench", NULL, NULL, NULL);
	printf("zone_write of %zu records: %s in %.3f s\n", z2->rr_count, shoal_strerror(err),
	       now() - t);
	/* the lines alone (zone_write_fd), without the read-back, compare and syncs */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	t = now();
	err = fd < 0 ? -errno : zone_write_fd(z2, fd);
	printf("zone_write_fd of %zu records: %s in %.3f s\n", z2->rr_count, shoal_strerror(err),
	       now() - t);
	if (fd >= 0)
		close(fd);
	unlink(path);
	zone_unref(z2);
	zone_unref(z);
	return 0;
}
