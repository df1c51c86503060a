/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/sign_refresh.c: batches refresh what is due, the oldest first, and verify. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/wire.h"
#include "tests/unit/sign_test.h"
#include "unit.h"
#include "zone/apply.h"
#include "zone/internal.h"
#include "zone/load.h"
#include "zone/sign_refresh.h"
#include "zone/sign_zone.h"
#include "zone/write.h"

static char tmpdir[] = "/tmp/shoal-test-sign-refresh.XXXXXX";
static const uint8_t APEX[] = "\7example\3com";

/* The first signing: expirations spread over the last hour of two (the jitter). */
#define FIRST_LIFETIME 7200
#define JITTER         3600
/* The refreshes': a day, so what they sign is never due again in a test. */
#define LIFETIME 86400

/* A zone of data, a secure and an insecure delegation, a wildcard, n names more. */
static zone_t *load_zone(unsigned names)
{
	char file[300];
	snprintf(file, sizeof(file), "%s/example.com.zone", tmpdir);
	FILE *f = fopen(file, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("$ORIGIN example.com.\n$TTL 3600\n"
	      "@ SOA ns1 hostmaster 1 3600 900 604800 300\n@ NS ns1\n@ A 192.0.2.1\n"
	      "ns1 A 192.0.2.53\n*.w TXT \"any\"\nsub NS ns.sub\nns.sub A 192.0.2.54\n"
	      "sec NS ns.sec\nns.sec A 192.0.2.55\nsec DS 12345 13 2 "
	      "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n",
	      f);
	for (unsigned i = 0; i < names; i++)
		fprintf(f, "n%u A 192.0.2.%u\nn%u TXT \"t%u\"\n", i, i % 250, i, i);
	fclose(f);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(zone_load(file, APEX, NULL, sign_test_msg, NULL, &z), 0);
	return z;
}

static zone_t *apply1(const zone_t *z, const changeset_t *cs)
{
	zone_apply_opts_t ao = { .label = "test", .msg = sign_test_msg };
	const changeset_t *sets[] = { cs };
	zone_t *out = NULL;
	int rc = zone_apply(z, sets, 1, &ao, &out);
	CU_ASSERT_EQUAL(rc, 0);
	return rc == 0 ? out : NULL;
}

/* What one run signs with: the keys, the options, the version served. */
typedef struct run {
	sign_keyset_t ks;
	sign_zone_opts_t o;
	sign_nsec3_t nsec3;
	zone_t *z;
	int64_t t0; /* the first signing */
} run_t;

static void run_start(run_t *r, bool nsec3, const char *label)
{
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/%s.keys", tmpdir, label);
	memset(r, 0, sizeof(*r));
	r->t0 = time(NULL);
	CU_ASSERT_EQUAL_FATAL(sign_keyset_create(&r->ks, dir, APEX, 13, r->t0, err, sizeof(err)),
			      0);
	r->o = (sign_zone_opts_t){ .times = sign_times_at(r->t0, FIRST_LIFETIME),
				   .jitter = JITTER,
				   .serial = 100,
				   .dnskey_ttl = 600,
				   .nsec3 = nsec3 ? &r->nsec3 : NULL,
				   .threads = 2 };
	zone_t *u = load_zone(60);
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL_FATAL(sign_zone(u, &r->ks, &r->o, &cs), 0);
	r->z = apply1(u, cs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->z);
	changeset_unref(cs);
	zone_unref(u);
	/* what the refreshes sign with from now on */
	r->o.times = sign_times_at(r->t0, LIFETIME);
}

static void run_end(run_t *r)
{
	zone_unref(r->z);
	sign_keyset_clear(&r->ks);
}

/* The earliest expiration of an RRset's RRSIGs (UNIX seconds, near the test's time). */
static int64_t expiry_of(const zrrset_t *rs)
{
	int64_t first = INT64_MAX;
	const uint8_t *p = rs->sigs->data, *end = p + rs->sigs->data_len;
	for (; p < end; p += 10 + wire_get_u16(p + 8)) {
		int64_t at = wire_get_u32(p + 18);
		first = at < first ? at : first;
	}
	return first;
}

/* Whether two RRsets carry the very same RRSIGs. */
static bool same_sigs(const zrrset_t *a, const zrrset_t *b)
{
	return a->sigs->data_len == b->sigs->data_len &&
	       !memcmp(a->sigs->data, b->sigs->data, a->sigs->data_len);
}

/* What comparing two versions found: RRsets signed anew, and the expirations seen. */
typedef struct diff {
	size_t resigned, kept, wrong;
	int64_t max_resigned_was, min_kept; /* the old expirations of each kind */
} diff_t;

/*
 * Walk was and now side by side (a refresh changes no record, so their
 * nodes and RRsets line up): each RRset whose RRSIGs changed was due
 * before `before` and now expires after it; each other was not due.
 */
static diff_t compare(const zone_t *was, const zone_t *now, int64_t before)
{
	diff_t d = { .min_kept = INT64_MAX };
	zone_iter_t ia, ib;
	const znode_t *a = zone_first(was, &ia), *b = zone_first(now, &ib);
	for (; a && b; a = zone_next(&ia), b = zone_next(&ib)) {
		CU_ASSERT_FATAL(a->rrset_count == b->rrset_count);
		for (uint16_t i = 0; i < a->rrset_count; i++) {
			const zrrset_t *x = &znode_rrsets(a)[i], *y = &znode_rrsets(b)[i];
			CU_ASSERT_FATAL(x->set.type == y->set.type && !x->sigs == !y->sigs);
			if (!x->sigs || (a->flags & ZNODE_APEX && x->set.type == DNS_TYPE_SOA))
				continue;
			int64_t old = expiry_of(x);
			if (same_sigs(x, y)) {
				d.kept++;
				d.min_kept = old < d.min_kept ? old : d.min_kept;
				continue;
			}
			d.resigned++;
			d.max_resigned_was = old > d.max_resigned_was ? old : d.max_resigned_was;
			if (old >= before || expiry_of(y) <= before)
				d.wrong++;
		}
	}
	CU_ASSERT(!a && !b);
	return d;
}

/* r's version written and checked by ldns-verify-zone (and dnssec-verify when bind). */
static bool verifies(const run_t *r, const char *label, bool bind)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s.signed", tmpdir, label);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(zone_write_fd(r->z, fd), 0);
	close(fd);
	return sign_test_verifies(path, bind);
}

/* One batch due before `before`, at most cap; applied. Returns the comparison. */
static diff_t batch(run_t *r, int64_t before, size_t cap, sign_refresh_result_t *res)
{
	r->o.serial++;
	changeset_t *cs = NULL;
	CU_ASSERT_EQUAL_FATAL(sign_refresh(r->z, &r->ks, &r->o, before, cap, &cs, res), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cs);
	zone_t *next = apply1(r->z, cs);
	changeset_unref(cs);
	CU_ASSERT_PTR_NOT_NULL_FATAL(next);
	CU_ASSERT_EQUAL(next->serial, r->o.serial);
	diff_t d = compare(r->z, next, before);
	zone_unref(r->z);
	r->z = next;
	return d;
}

/*
 * Refreshes at successive times across the jitter's hour: each signs
 * anew exactly the RRsets due by then (the others keep their very
 * RRSIGs), the zone verifies after each, and after the last every RRSIG
 * expires after it. With NSEC and NSEC3.
 */
static void test_successive(void)
{
	for (int nsec3 = 0; nsec3 < 2; nsec3++) {
		run_t r;
		run_start(&r, nsec3, nsec3 ? "succ3" : "succ");
		int64_t first = r.t0 + FIRST_LIFETIME - JITTER;
		sign_refresh_result_t res;
		changeset_t *cs = NULL;
		/* nothing due yet: no change, and when the first falls due */
		r.o.serial++;
		CU_ASSERT_EQUAL(sign_refresh(r.z, &r.ks, &r.o, first, 0, &cs, &res), 0);
		CU_ASSERT_PTR_NULL(cs);
		CU_ASSERT(res.next_expiry >= first && res.next_expiry <= first + JITTER);
		size_t total = 0;
		for (int k = 1; k <= 4; k++) {
			int64_t before = first + k * (JITTER / 4) + (k == 4);
			diff_t d = batch(&r, before, 0, &res);
			CU_ASSERT_EQUAL(d.wrong, 0);
			CU_ASSERT(d.resigned > 0 &&
				  res.resigned - d.resigned <= 1); /* and the SOA */
			CU_ASSERT(d.min_kept >= before);
			CU_ASSERT(!res.more);
			CU_ASSERT(res.next_expiry >= before);
			total += d.resigned;
			CU_ASSERT(verifies(&r, nsec3 ? "succ3" : "succ", k == 4));
			if (k == 4)
				CU_ASSERT_EQUAL(d.kept, total - d.resigned);
		}
		/* every RRSIG now expires a day on: the next batch is that far */
		CU_ASSERT(res.next_expiry > first + JITTER);
		run_end(&r);
	}
}

/*
 * Everything due, at most 25 RRsets a batch: each batch takes the 25
 * that expire first, says more are left and when the first of them
 * expires; the batches together sign every RRset once, and the zone
 * verifies after each.
 */
static void test_cap(void)
{
	run_t r;
	run_start(&r, false, "cap");
	int64_t before = r.t0 + FIRST_LIFETIME + 1;
	sign_refresh_result_t res = { .more = true };
	size_t batches = 0, resigned = 0;
	while (res.more && batches < 100) {
		diff_t d = batch(&r, before, 25, &res);
		batches++;
		resigned += d.resigned;
		CU_ASSERT_EQUAL(d.wrong, 0);
		CU_ASSERT(d.resigned <= 25);
		/* the oldest first: none left behind expires before one taken */
		if (d.kept && d.min_kept < before)
			CU_ASSERT(d.max_resigned_was <= d.min_kept);
		if (res.more)
			CU_ASSERT(res.next_expiry < before);
		CU_ASSERT(verifies(&r, "cap", false));
	}
	CU_ASSERT(!res.more);
	CU_ASSERT(batches > 5);
	CU_ASSERT(res.next_expiry > before);
	/* a zone of ~140 signed RRsets: each once */
	CU_ASSERT(resigned > 100 && resigned < 25 * batches);
	run_end(&r);
}

/* Keys other than those the version was signed with: not for a refresh (a rollover). */
static void test_other_keys(void)
{
	run_t r;
	run_start(&r, false, "keys");
	sign_keyset_t other;
	char dir[300], err[512] = "";
	snprintf(dir, sizeof(dir), "%s/other.keys", tmpdir);
	CU_ASSERT_EQUAL_FATAL(sign_keyset_create(&other, dir, APEX, 13, r.t0, err, sizeof(err)), 0);
	changeset_t *cs = NULL;
	sign_refresh_result_t res;
	r.o.serial++;
	CU_ASSERT_EQUAL(sign_refresh(r.z, &other, &r.o, r.t0 + FIRST_LIFETIME + 1, 0, &cs, &res),
			SHOAL_EUNSUPPORTED);
	CU_ASSERT_PTR_NULL(cs);
	/* a serial not newer than the one served: a secondary would not take it (RFC 1982) */
	r.o.serial = 100;
	CU_ASSERT_EQUAL(sign_refresh(r.z, &r.ks, &r.o, r.t0 + FIRST_LIFETIME + 1, 0, &cs, &res),
			SHOAL_EINVAL);
	sign_keyset_clear(&other);
	run_end(&r);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_successive),
		UNIT_TEST(test_cap),
		UNIT_TEST(test_other_keys),
		UNIT_END,
	};
	return sign_test_main(argc, argv, "sign_refresh", tests, tmpdir);
}
