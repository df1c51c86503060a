/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sign-zone-bench: a full signature of a generated zone through
 * zone/sign_zone.c, in CPU time of the process and wall time: the
 * changeset made (keys made beforehand) on THREADS signing threads, then
 * zone_apply building the signed version. A zone of NAMES names under
 * the apex, each with one A record (a tenth with an AAAA too), so an
 * NSEC zone needs about NAMES * 2.1 signatures. The signatures a second it prints, set beside
 * sign-bench's figure for the same algorithm, say how much of the time
 * is the signatures themselves.
 *
 * Usage: sign-zone-bench [-n NAMES] [-a ALGORITHM] [-t THREADS] [-3]   (-3: NSEC3, RFC 9276)
 */
#include "config.h"

#include <getopt.h>
#include <libdnssec/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zone/apply.h"
#include "zone/load.h"
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

int main(int argc, char **argv)
{
	unsigned names = 100000, alg = 13, threads = 1;
	bool nsec3 = false;
	int c;
	while ((c = getopt(argc, argv, "n:a:t:3")) != -1) {
		if (c == 'n')
			names = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 'a')
			alg = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == 't')
			threads = (unsigned)strtoul(optarg, NULL, 10);
		else if (c == '3')
			nsec3 = true;
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
	size_t sigs = 0;
	xfr_run_t run;
	for (size_t at = 0; xfr_part_next(&cs->add, &at, &run);)
		sigs += run.set.type == 46 ? run.set.rr_count : 0;
	printf("names %u, algorithm %u, %s, %u threads: %zu signatures\n", names, alg,
	       nsec3 ? "NSEC3" : "NSEC", threads, sigs);
	printf("sign_zone  %.2f s CPU  %.2f s wall  (%.0f signatures/s of CPU)\n", t1 - t0, w1 - w0,
	       (double)sigs / (t1 - t0));
	printf("zone_apply %.2f s CPU\n", t2 - t1);
	changeset_unref(cs);
	zone_unref(signed_z);
	zone_unref(z);
	sign_keyset_clear(&ks);
	dnssec_crypto_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
