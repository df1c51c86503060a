/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sign-zone-bench: a full signature of a generated zone through
 * zone/sign_zone.c, in CPU time of the process and wall time: the
 * changeset made (keys made beforehand) on THREADS signing threads, then
 * zone_apply building the signed version. A zone of NAMES names under
 * the apex, each with one A record (a tenth with an AAAA too), so an
 * NSEC zone needs about NAMES * 2.1 signatures. The signatures a second it prints, set beside
 * sign-bench's figure for the same algorithm, say how much of the time
 * is the signatures themselves. With -c CHANGES, then a change of that
 * many records spread over the zone (half of them A records replaced, a
 * quarter new names, a quarter names deleted) signed alone by
 * zone/sign_incr.c and applied: the incremental road against the full
 * one. With -r, then one refresh batch (zone/sign_refresh.c) of the
 * signed zone with every RRSIG due, SIGN_REFRESH_BATCH RRsets: the walk
 * of the zone and its signatures that every batch costs, and the batch.
 *
 * Usage: sign-zone-bench [-n NAMES] [-a ALGORITHM] [-t THREADS] [-3] [-c CHANGES] [-r]
 *        (-3: NSEC3, RFC 9276)
 */
#include "config.h"

#include <getopt.h>
#include <libdnssec/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "proto/wire.h"
#include "zone/apply.h"
#include "zone/load.h"
#include "zone/sign_incr.h"
#include "zone/sign_refresh.h"
#include "zone/sign_zone.h"

static const uint8_t APEX[] = "\5bench\4test";

static void on_msg(void *arg, bool is_error, const char *text)
{
	(void)arg;
	if (is_error)
		fprintf(stderr, "sign-zone-bench: %s\n", text);
}

/* CPU seconds of the process (the signing threads' too), or wall seconds. */
static double seconds(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The zone's file in dir. */
static int write_zone(const char *path, unsigned names)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "$ORIGIN bench.test.\n$TTL 3600\n@ SOA ns hostmaster 1 3600 900 604800 300\n"
		   "@ NS ns\nns A 192.0.2.1\n");
	for (unsigned i = 0; i < names; i++) {
		fprintf(f, "h%u A 192.0.%u.%u\n", i, (i >> 8) & 0xff, i & 0xff);
		if (i % 10 == 0)
			fprintf(f, "h%u AAAA 2001:db8::%x\n", i, i & 0xffff);
	}
	return fclose(f);
}

static int die(const char *what, int rc)
{
	fprintf(stderr, "sign-zone-bench: %s failed (%d)\n", what, rc);
	exit(1);
}

/* The RRSIGs cs adds. */
static size_t count_sigs(const changeset_t *cs)
{
	size_t sigs = 0;
	xfr_run_t run;
	for (size_t at = 0; xfr_part_next(&cs->add, &at, &run);)
		sigs += run.set.type == DNS_TYPE_RRSIG ? run.set.rr_count : 0;
	return sigs;
}

/* One record of name (text, relative) added to or deleted from cs. */
static void change(changeset_t *cs, bool add, const char *name, uint16_t type, const uint8_t *rdata,
		   uint16_t len)
{
	uint8_t owner[256];
	int rc = name_from_text(name, APEX, owner);
	if (rc < 0 || (rc = changeset_add(cs, add, owner, type, 3600, rdata, len)) < 0)
		die("changeset_add", rc);
}

/*
 * The unsigned change of `changes` records to z (of `names` names, serial
 * 1, to 3), spread over the zone: half h<i>'s A replaced, a quarter new
 * names h<i>x, a quarter names h<i> deleted (i % 10 == 1: no AAAA).
 */
static changeset_t *make_change(const zone_t *z, unsigned names, unsigned changes)
{
	changeset_t *cs = changeset_new();
	const uint8_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA)->set.data;
	uint16_t len = wire_get_u16(soa + 8);
	uint8_t rdata[600];
	memcpy(rdata, soa + 10, len);
	if (!cs || changeset_add(cs, false, APEX, DNS_TYPE_SOA, 3600, rdata, len) < 0)
		die("changeset_add", -1);
	wire_t w;
	wire_init_write(&w, rdata, sizeof(rdata));
	wire_seek(&w, len - 20u);
	wire_write_u32(&w, 3);
	if (changeset_add(cs, true, APEX, DNS_TYPE_SOA, 3600, rdata, len) < 0)
		die("changeset_add", -1);
	for (unsigned k = 0; k < changes; k++) {
		unsigned i = k * (names / changes) + 1;
		char name[32];
		uint8_t old[4] = { 192, 0, (uint8_t)(i >> 8), (uint8_t)i };
		uint8_t fresh[4] = { 198, 51, (uint8_t)(k >> 8), (uint8_t)k };
		snprintf(name, sizeof(name), "h%u%s", i, k % 4 == 2 ? "x" : "");
		if (k % 4 != 2)
			change(cs, false, name, DNS_TYPE_A, old, 4);
		if (k % 4 < 3)
			change(cs, true, name, DNS_TYPE_A, fresh, 4);
	}
	if (changeset_seal(cs) < 0)
		die("changeset_seal", -1);
	return cs;
}

/* A change of `changes` records to z signed alone onto signed_z, and applied: times. */
static void sign_alone(const zone_t *z, const zone_t *signed_z, const sign_keyset_t *ks,
		       sign_zone_opts_t *o, unsigned names, unsigned changes)
{
	changeset_t *cs = make_change(z, names, changes), *out = NULL;
	zone_t *next = NULL;
	o->serial = 3;
	double t0 = seconds(CLOCK_PROCESS_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
	int rc = sign_changes(signed_z, cs, ks, o, &out);
	if (rc < 0)
		die("sign_changes", rc);
	double t1 = seconds(CLOCK_PROCESS_CPUTIME_ID), w1 = seconds(CLOCK_MONOTONIC);
	const changeset_t *sets[] = { out };
	zone_apply_opts_t ao = { .label = "bench", .msg = on_msg };
	if ((rc = zone_apply(signed_z, sets, 1, &ao, &next)))
		die("zone_apply", rc);
	double t2 = seconds(CLOCK_PROCESS_CPUTIME_ID), w2 = seconds(CLOCK_MONOTONIC);
	printf("%u changed records signed alone: %zu records out, %zu signatures\n", changes,
	       out->del.rr_count + out->add.rr_count, count_sigs(out));
	printf("sign_changes %.3f s CPU  %.3f s wall\n", t1 - t0, w1 - w0);
	printf("zone_apply   %.3f s CPU  %.3f s wall\n", t2 - t1, w2 - w1);
	printf("both         %.3f s CPU  %.3f s wall\n", t2 - t0, w2 - w0);
	changeset_unref(cs);
	changeset_unref(out);
	zone_unref(next);
}

/* One refresh batch of signed_z with every RRSIG due, and its apply: times. */
static void refresh_batch(const zone_t *signed_z, const sign_keyset_t *ks, sign_zone_opts_t *o)
{
	changeset_t *out = NULL;
	zone_t *next = NULL;
	sign_refresh_result_t res;
	o->serial = 4;
	double t0 = seconds(CLOCK_PROCESS_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
	int rc = sign_refresh(signed_z, ks, o, (int64_t)time(NULL) + 100 * 86400, 0, &out, &res);
	if (rc < 0 || !out)
		die("sign_refresh", rc);
	double t1 = seconds(CLOCK_PROCESS_CPUTIME_ID), w1 = seconds(CLOCK_MONOTONIC);
	const changeset_t *sets[] = { out };
	zone_apply_opts_t ao = { .label = "bench", .msg = on_msg };
	if ((rc = zone_apply(signed_z, sets, 1, &ao, &next)))
		die("zone_apply", rc);
	double t2 = seconds(CLOCK_PROCESS_CPUTIME_ID), w2 = seconds(CLOCK_MONOTONIC);
	printf("refresh batch: %zu RRsets, %zu signatures\n", res.resigned, count_sigs(out));
	printf("sign_refresh %.3f s CPU  %.3f s wall\n", t1 - t0, w1 - w0);
	printf("zone_apply   %.3f s CPU  %.3f s wall\n", t2 - t1, w2 - w1);
	changeset_unref(out);
	zone_unref(next);
}

int main(int argc, char **argv)
{
	unsigned names = 100000, alg = 13, threads = 1, changes = 0;
	bool nsec3 = false, refresh = false;
	int c;
	while ((c = getopt(argc, argv, "n:a:t:3c:r")) != -1) {
		if (c == 'n')
			names = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 'a')
			alg = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 't')
			threads = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == '3')
			nsec3 = true;
		else if (c == 'c')
			changes = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 'r')
			refresh = true;
		else
			return 2;
	}
	char dir[] = "/tmp/sign-zone-bench.XXXXXX", path[64], keys[64], err[512] = "", cmd[128];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/bench.zone", dir);
	snprintf(keys, sizeof(keys), "%s/keys", dir);
	dnssec_crypto_init();
	if (write_zone(path, names) != 0)
		die("writing the zone", -1);
	zone_t *z = NULL, *signed_z = NULL;
	int rc = zone_load(path, APEX, NULL, on_msg, NULL, &z);
	if (rc < 0)
		die("zone_load", rc);
	sign_keyset_t ks;
	if ((rc = sign_keyset_create(&ks, keys, APEX, (uint8_t)alg, time(NULL), err, sizeof(err))))
		die(err, rc);
	static const sign_nsec3_t plain = { 0 };
	sign_zone_opts_t o = { .times = sign_times_at(time(NULL), 14 * 86400),
			       .jitter = 43200,
			       .serial = 2,
			       .dnskey_ttl = 3600,
			       .nsec3 = nsec3 ? &plain : NULL,
			       .threads = threads };
	changeset_t *cs = NULL;
	double t0 = seconds(CLOCK_PROCESS_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
	if ((rc = sign_zone(z, &ks, &o, &cs)))
		die("sign_zone", rc);
	double t1 = seconds(CLOCK_PROCESS_CPUTIME_ID), w1 = seconds(CLOCK_MONOTONIC);
	const changeset_t *sets[] = { cs };
	zone_apply_opts_t ao = { .label = "bench", .msg = on_msg };
	if ((rc = zone_apply(z, sets, 1, &ao, &signed_z)))
		die("zone_apply", rc);
	double t2 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	size_t sigs = count_sigs(cs);
	printf("names %u, algorithm %u, %s, %u threads: %zu signatures\n", names, alg,
	       nsec3 ? "NSEC3" : "NSEC", threads, sigs);
	printf("sign_zone  %.2f s CPU  %.2f s wall  (%.0f signatures/s of CPU)\n", t1 - t0, w1 - w0,
	       (double)sigs / (t1 - t0));
	printf("zone_apply %.2f s CPU\n", t2 - t1);
	if (changes && changes <= names)
		sign_alone(z, signed_z, &ks, &o, names, changes);
	if (refresh)
		refresh_batch(signed_z, &ks, &o);
	changeset_unref(cs);
	zone_unref(signed_z);
	zone_unref(z);
	sign_keyset_clear(&ks);
	dnssec_crypto_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
