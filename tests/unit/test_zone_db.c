/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for zone/zonedb.c: building sets, reload semantics, RCU publishing. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/request.h"
#include "tests/unit/alloc_guard.h"
#include "tests/unit/unit.h"
#include "zone/answer.h"
#include "zone/journal.h"
#include "zone/zone.h"
#include "zone/zonedb.h"

static char tmpdir[] = "/tmp/shoal-zonedb-XXXXXX";
static char zfile[4096];
static char rfile[4096]; /* relative names only: loads as any zone */

static void write_zone(uint32_t serial, bool broken)
{
	FILE *f = fopen(zfile, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f,
		"$ORIGIN example.com.\n$TTL 300\n@ IN SOA ns1 hm %u 2 3 4 5\n"
		"  IN NS ns1\nns1 IN A 192.0.2.1\n%s",
		serial, broken ? "www IN A not-an-address\n" : "www IN A 192.0.2.2\n");
	fclose(f);
}

static void quiet(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	(void)is_error;
	(void)msg;
}

static void test_build_and_info(void)
{
	write_zone(1, false);
	zone_spec_t s = { .name = "example.com", .file = zfile, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, NULL, NULL, quiet, NULL, &db), 0);
	CU_ASSERT_EQUAL(zonedb_zone_count(db), 1);
	zone_info_t info;
	zonedb_zone_info(db, 0, &info);
	CU_ASSERT_STRING_EQUAL(info.name, "example.com.");
	CU_ASSERT_TRUE(info.loaded);
	CU_ASSERT_EQUAL(info.serial, 1);
	CU_ASSERT_EQUAL(info.rr_count, 4);
	CU_ASSERT_STRING_EQUAL(info.last_error, "");
	uint8_t w[NAME_MAXLEN];
	name_from_text("a.b.www.example.com.", NULL, w);
	CU_ASSERT_PTR_NOT_NULL(zonedb_find(db, w));
	name_from_text("example.org.", NULL, w);
	CU_ASSERT_PTR_NULL(zonedb_find(db, w));
	name_from_text("com.", NULL, w);
	CU_ASSERT_PTR_NULL(zonedb_find(db, w));
	zonedb_free(db);
}

static void test_failed_first_load(void)
{
	write_zone(1, true);
	zone_spec_t s[] = { { .name = "example.com", .file = zfile, .limits = ZONE_LIMITS_DEFAULT },
			    { .name = "bad..name", .file = zfile, .limits = ZONE_LIMITS_DEFAULT } };
	zonedb_t *db = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(s, 2, NULL, NULL, quiet, NULL, &db), SHOAL_EZONE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	zone_info_t info;
	zonedb_zone_info(db, 0, &info);
	CU_ASSERT_FALSE(info.loaded);
	CU_ASSERT_PTR_NOT_NULL(strstr(info.last_error, ":6: "));
	zonedb_zone_info(db, 1, &info);
	CU_ASSERT_FALSE(info.loaded);
	uint8_t w[NAME_MAXLEN];
	name_from_text("www.example.com.", NULL, w);
	CU_ASSERT_PTR_NULL(zonedb_find(db, w));
	zonedb_free(db);
}

static void test_reload_semantics(void)
{
	write_zone(1, false);
	zone_spec_t s = { .name = "example.com.", .file = zfile, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *v1 = NULL, *v2 = NULL, *v3 = NULL, *v4 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, NULL, NULL, quiet, NULL, &v1), 0);
	uint8_t w[NAME_MAXLEN];
	name_from_text("example.com.", NULL, w);
	const zone_t *z1 = zonedb_find(v1, w);

	/* reloading another zone only: this one is shared, not re-read */
	write_zone(2, false);
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, v1, "other.example.", quiet, NULL, &v2),
			      SHOAL_ENOTFOUND);
	CU_ASSERT_PTR_EQUAL(zonedb_find(v2, w), z1);
	CU_ASSERT_EQUAL(z1->refs,
			1); /* the zone's entry is shared whole: no copy, no new reference */

	/* reloading a zone that is not configured says so */
	zonedb_t *v2b = NULL;
	CU_ASSERT_EQUAL(zonedb_build(&s, 1, v2, "nosuch.example", quiet, NULL, &v2b),
			SHOAL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(v2b);
	zonedb_free(v2b);

	/* reloading it: a new version */
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, v2, "example.com", quiet, NULL, &v3), 0);
	CU_ASSERT_PTR_NOT_EQUAL(zonedb_find(v3, w), z1);
	CU_ASSERT_EQUAL(zonedb_find(v3, w)->serial, 2);

	/* a failed reload keeps the old version and says why */
	write_zone(3, true);
	CU_ASSERT_EQUAL(zonedb_build(&s, 1, v3, NULL, quiet, NULL, &v4), 0);
	CU_ASSERT_PTR_EQUAL(zonedb_find(v4, w), zonedb_find(v3, w));
	zone_info_t info;
	zonedb_zone_info(v4, 0, &info);
	CU_ASSERT_TRUE(info.loaded);
	CU_ASSERT_EQUAL(info.serial, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(info.last_error, zfile));

	zonedb_free(v1);
	CU_ASSERT_EQUAL(zonedb_find(v2, w)->refs, 1);
	zonedb_free(v2);
	zonedb_free(v3);
	zonedb_free(v4);
}

/*
 * Write the zone of test_reload_shares: serial 1, ns1 and 500 hosts;
 * then change what sed_cmd says.
 */
static void write_hosts(const char *sed_cmd)
{
	FILE *f = fopen(zfile, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\n"
		   "ns1 A 192.0.2.1\n");
	for (int i = 0; i < 500; i++)
		fprintf(f, "h%d A 192.0.2.%d\n", i, i % 250);
	fclose(f);
	if (!sed_cmd)
		return;
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), "sed -i '%s' %s", sed_cmd, zfile);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
}

/* z2, a reload of z1 with serial 2 and h7's address changed, shares every other node. */
static void check_shared(const zone_t *z1, const zone_t *z2)
{
	uint8_t h7[NAME_MAXLEN];
	name_from_text("h7.example.com.", NULL, h7);
	CU_ASSERT_EQUAL(z2->serial, 2);
	CU_ASSERT_EQUAL(z2->rr_count, z1->rr_count);
	size_t names = 0, kept = 0;
	zone_iter_t it;
	for (const znode_t *n = zone_first(z2, &it); n; n = zone_next(&it), names++)
		kept += zone_lookup(z1, znode_name(n)) == n;
	CU_ASSERT_EQUAL(names, 502);
	CU_ASSERT_EQUAL(kept, names - 2); /* the apex (its SOA) and h7 are new */
	CU_ASSERT_EQUAL(znode_rrset(zone_lookup(z2, h7), DNS_TYPE_A)->set.data[10], 198);
	CU_ASSERT_EQUAL(znode_rrset(zone_lookup(z1, h7), DNS_TYPE_A)->set.data[10], 192);
}

#define H7_CHANGED "s/ hm 1 / hm 2 /; s/^h7 A .*/h7 A 198.51.100.7/"

/*
 * A reload publishes what changed in the file, applied to the version
 * served (zone/apply.h), not a second zone, whether a new set reads it
 * (zonedb_build) or the one zone is read (zonedb_load_zone, shoalctl
 * reload ZONE): every name the file did not change keeps its node, and
 * the version served is as it was. The change goes to the journal as
 * before.
 */
static void test_reload_shares(void)
{
	write_hosts(NULL);
	zone_spec_t s = { .name = "example.com.", .file = zfile, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *v1 = NULL, *v2 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, NULL, NULL, quiet, NULL, &v1), 0);
	write_hosts(H7_CHANGED);
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, v1, NULL, quiet, NULL, &v2), 0);
	uint8_t apex[NAME_MAXLEN];
	name_from_text("example.com.", NULL, apex);
	check_shared(zonedb_find(v1, apex), zonedb_find(v2, apex));
	journal_info_t ji;
	journal_get_info(zonedb_journal(v2, apex), &ji);
	CU_ASSERT_EQUAL(ji.depth, 1);
	CU_ASSERT_EQUAL(ji.newest, 2);
	zonedb_free(v2);
	/* the one zone read anew, no set built: the same */
	zone_t *z = NULL;
	char error[512];
	CU_ASSERT_EQUAL_FATAL(zonedb_load_zone(v1, 0, &s, quiet, NULL, &z, error, sizeof(error)),
			      0);
	check_shared(zonedb_find(v1, apex), z);
	journal_get_info(zonedb_journal(v1, apex), &ji);
	CU_ASSERT_EQUAL(ji.depth, 1);
	CU_ASSERT_EQUAL(ji.newest, 2);
	zone_unref(z);
	zonedb_free(v1);
}

/*
 * A reconfig's rebuild: a spec marked keep shares the version served (its
 * file is not read again), one not marked is loaded; a zone old lacks is
 * loaded whatever keep says; the owner is carried by zonedb_replace.
 */
static void test_keep_and_owner(void)
{
	write_zone(1, false);
	zone_spec_t s = { .name = "example.com", .file = zfile, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *v1 = NULL, *v2 = NULL, *v3 = NULL, *v4 = NULL, *v5 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, NULL, NULL, quiet, NULL, &v1), 0);
	int owner_a, owner_b;
	CU_ASSERT_PTR_NULL(zonedb_owner(v1));
	zonedb_set_owner(v1, &owner_a);
	CU_ASSERT_PTR_EQUAL(zonedb_owner(v1), &owner_a);
	uint8_t w[NAME_MAXLEN];
	name_from_text("example.com.", NULL, w);
	write_zone(2, false);
	s.keep = true;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, v1, NULL, quiet, NULL, &v2), 0);
	CU_ASSERT_PTR_EQUAL(zonedb_find(v2, w), zonedb_find(v1, w));
	CU_ASSERT_EQUAL(zonedb_find(v2, w)->serial, 1);
	CU_ASSERT_PTR_NULL(zonedb_owner(v2)); /* a build's owner is its builder's to set */
	s.keep = false;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, v2, NULL, quiet, NULL, &v3), 0);
	CU_ASSERT_EQUAL(zonedb_find(v3, w)->serial, 2);
	/* new to the set: loaded, keep or not */
	s.keep = true;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, NULL, NULL, quiet, NULL, &v4), 0);
	CU_ASSERT_EQUAL(zonedb_find(v4, w)->serial, 2);
	zonedb_set_owner(v4, &owner_b);
	CU_ASSERT_EQUAL_FATAL(zonedb_replace(v4, 0, NULL, "expired", &v5), 0);
	CU_ASSERT_PTR_EQUAL(zonedb_owner(v5), &owner_b);
	zonedb_free(v1);
	zonedb_free(v2);
	zonedb_free(v3);
	zonedb_free(v4);
	zonedb_free(v5);
}

/* Build a set of the zones names[0..n) from one relative zone file, over old. */
static zonedb_t *build_named(const char *const *names, size_t n, const zonedb_t *old)
{
	zone_spec_t s[16];
	for (size_t i = 0; i < n && i < 16; i++)
		s[i] = (zone_spec_t){ .name = names[i],
				      .file = rfile,
				      .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *db = NULL;
	zonedb_build(s, n, old, NULL, quiet, NULL, &db);
	return db;
}

/* Zone i's slot, and whether it is fresh (as the bool 1, else 0, times 100). */
static unsigned slot_of(const zonedb_t *db, size_t i)
{
	bool fresh;
	uint32_t slot = zonedb_zone_slot(db, i, &fresh);
	return slot + (fresh ? 100u : 0u);
}

/* The zone match for the names below, in a set whose first four zones are ., test, bench.test,
 * x.bench.test. */
static void check_matches(const zonedb_t *db)
{
	static const struct {
		const char *wire;
		size_t len;
		int zone; /* index in the set */
	} cases[] = {
		{ "\3www\1x\5bench\4test", 18, 3 },
		{ "\1x\5bench\4test", 14, 3 },
		{ "\5bench\4test", 12, 2 },
		{ "\2aa\5bench\4test", 15, 2 },
		{ "\7aabench\4test", 14, 1 },
		/* the last 12 octets read as bench.test but start inside a label */
		{ "\7a\5bench\4test", 14, 1 },
		{ "\7a\5bench\4tesu", 14, 0 },
		{ "\4test", 6, 1 },
		{ "", 1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t w[NAME_MAXLEN];
		memcpy(w, cases[i].wire, cases[i].len);
		CU_ASSERT_EQUAL_FATAL(name_length(w), cases[i].len);
		bool configured = false;
		uint32_t slot;
		const void *policy = NULL;
		const zone_t *z = zonedb_match_slot(db, w, &configured, &slot, &policy);
		CU_ASSERT_PTR_NOT_NULL(z);
		CU_ASSERT_TRUE(configured);
		if (z != zonedb_zone(db, (size_t)cases[i].zone))
			CU_FAIL("the longest matching apex at a label boundary");
	}
}

/*
 * The zone of a name: the longest apex it ends in at a label boundary,
 * whether found by comparing tails (a few zones) or by hashing suffixes.
 */
static void test_match_longest(void)
{
	static const char *const names[] = { ".",         "test",      "bench.test", "x.bench.test",
					     "a.example", "b.example", "c.example",  "d.example",
					     "e.example", "f.example", "g.example",  "h.example" };
	for (size_t n = 4; n <= 12; n += 8) {
		zonedb_t *db = build_named(names, n, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(db);
		CU_ASSERT_EQUAL(zonedb_zone_count(db), n);
		check_matches(db);
		uint8_t w[NAME_MAXLEN];
		name_from_text("www.h.example.", NULL, w);
		CU_ASSERT_PTR_EQUAL(zonedb_find(db, w),
				    n > 11 ? zonedb_zone(db, 11) : zonedb_zone(db, 0));
		zonedb_free(db);
	}
}

/*
 * Statistics slots: a zone keeps its slot across sets; a new zone takes
 * the lowest slot that neither the new set nor the one it replaces uses
 * (workers may still count into the old set's slots), so a removed zone's
 * slot is given again only one set later, fresh.
 */
static void test_stats_slots(void)
{
	static const char *const v1n[] = { "a.test", "b.test", "c.test" };
	static const char *const v2n[] = { "b.test", "d.test", "c.test", "bad..name" };
	static const char *const v3n[] = { "b.test", "d.test", "e.test" };
	zonedb_t *v1 = build_named(v1n, 3, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v1);
	CU_ASSERT_EQUAL(slot_of(v1, 0), 101);
	CU_ASSERT_EQUAL(slot_of(v1, 1), 102);
	CU_ASSERT_EQUAL(slot_of(v1, 2), 103);
	char text[NAME_TEXT_MAX];
	zonedb_zone_name(v1, 1, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(text, "b.test.");
	zonedb_t *v2 = build_named(v2n, 4, v1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v2);
	CU_ASSERT_EQUAL(slot_of(v2, 0), 2);   /* b keeps its slot */
	CU_ASSERT_EQUAL(slot_of(v2, 1), 104); /* d: 1 is a's until v2's grace period */
	CU_ASSERT_EQUAL(slot_of(v2, 2), 3);
	CU_ASSERT_EQUAL(slot_of(v2, 3), 0); /* no zone name, no slot */
	zonedb_t *v3 = build_named(v3n, 3, v2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v3);
	CU_ASSERT_EQUAL(slot_of(v3, 0), 2);
	CU_ASSERT_EQUAL(slot_of(v3, 1), 4);
	CU_ASSERT_EQUAL(slot_of(v3, 2), 101); /* a's slot again, counting from zero */
	/* the answer path finds the slot with the zone */
	uint8_t w[NAME_MAXLEN];
	uint32_t slot = 99;
	const void *policy = NULL;
	name_from_text("www.d.test.", NULL, w);
	CU_ASSERT_PTR_NOT_NULL(zonedb_match_slot(v3, w, NULL, &slot, &policy));
	CU_ASSERT_EQUAL(slot, 4);
	name_from_text("www.c.test.", NULL, w);
	CU_ASSERT_PTR_NULL(zonedb_match_slot(v3, w, NULL, &slot, &policy));
	CU_ASSERT_EQUAL(slot, 0);
	zonedb_free(v1);
	zonedb_free(v2);
	zonedb_free(v3);
}

/* allow-query as the answer path sees it: the policies below, and whether the client may. */
static const char policy_open[] = "open", policy_closed[] = "closed";

static const void *policy_of(const void *arg, size_t i)
{
	const void *const *by_index = arg;
	return by_index[i];
}

static bool allow_open(const void *policy, const struct answer_ctx *ctx)
{
	(void)ctx;
	return policy == policy_open;
}

/* The rcode of the answer from db to an A query for name (text), with ctx. */
static int rcode_for(const zonedb_t *db, const char *name, const answer_ctx_t *ctx)
{
	uint8_t qname[NAME_MAXLEN], q[512], out[1232];
	CU_ASSERT_FATAL(name_from_text(name, NULL, qname) > 0);
	int len = request_write(q, sizeof(q), 1, DNS_OPCODE_QUERY, 0, qname, DNS_TYPE_A, 0, NULL);
	CU_ASSERT_FATAL(len > 0);
	answer_info_t info;
	size_t n = answer_query(db, q, (size_t)len, out, sizeof(out), ctx, &info);
	CU_ASSERT_FATAL(n >= DNS_HEADER_SIZE);
	return out[3] & 0x0f;
}

/*
 * A zone's policy comes back with its match, loaded or not; a client the
 * allow function refuses gets REFUSED, a zone without a policy answers
 * everyone, a set without policies costs nothing, and zonedb_replace keeps
 * them. With no allow function a zone with a policy answers no one.
 */
static void test_policies(void)
{
	static const char *const names[] = { "a.test", "b.test", "c.test" };
	const void *by_index[] = { policy_closed, NULL, policy_open };
	zonedb_t *db = build_named(names, 3, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(db);
	answer_ctx_t ctx = { .edns_size = 1232, .allow = allow_open, .tsig_key = -1 };
	/* before: everyone is answered */
	CU_ASSERT_EQUAL(rcode_for(db, "www.a.test.", &ctx), DNS_RCODE_NXDOMAIN);
	CU_ASSERT_EQUAL(zonedb_set_policies(db, policy_of, by_index), 0);
	uint8_t w[NAME_MAXLEN];
	uint32_t slot;
	const void *policy = NULL;
	name_from_text("www.a.test.", NULL, w);
	CU_ASSERT_PTR_NOT_NULL(zonedb_match_slot(db, w, NULL, &slot, &policy));
	CU_ASSERT_PTR_EQUAL(policy, policy_closed);
	name_from_text("b.test.", NULL, w);
	CU_ASSERT_PTR_NOT_NULL(zonedb_match_slot(db, w, NULL, &slot, &policy));
	CU_ASSERT_PTR_NULL(policy);
	/* no zone matched: left as it was */
	policy = policy_open;
	name_from_text("www.nosuch.", NULL, w);
	CU_ASSERT_PTR_NULL(zonedb_match_slot(db, w, NULL, &slot, &policy));
	CU_ASSERT_PTR_EQUAL(policy, policy_open);
	CU_ASSERT_EQUAL(rcode_for(db, "www.a.test.", &ctx), DNS_RCODE_REFUSED);
	CU_ASSERT_EQUAL(rcode_for(db, "www.b.test.", &ctx), DNS_RCODE_NXDOMAIN);
	CU_ASSERT_EQUAL(rcode_for(db, "www.c.test.", &ctx), DNS_RCODE_NXDOMAIN);
	/* a copy with one zone not loaded keeps the lists: refused before SERVFAIL shows */
	zonedb_t *v2 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_replace(db, 0, NULL, "gone", &v2), 0);
	CU_ASSERT_EQUAL(rcode_for(v2, "www.a.test.", &ctx), DNS_RCODE_REFUSED);
	CU_ASSERT_EQUAL(rcode_for(v2, "www.c.test.", &ctx), DNS_RCODE_NXDOMAIN);
	ctx.allow = NULL;
	CU_ASSERT_EQUAL(rcode_for(v2, "www.c.test.", &ctx), DNS_RCODE_REFUSED);
	CU_ASSERT_EQUAL(rcode_for(v2, "www.b.test.", &ctx), DNS_RCODE_NXDOMAIN);
	zonedb_free(v2);
	zonedb_free(db);
}

/* A reader thread: loops in read-side sections until it sees serial 2. */
static zonedb_ref_t ref;
static int reader_saw; /* written by the reader, read by the test: atomics */

static void *reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	uint8_t w[NAME_MAXLEN];
	name_from_text("example.com.", NULL, w);
	for (int i = 0; i < 2000000 && __atomic_load_n(&reader_saw, __ATOMIC_ACQUIRE) != 2; i++) {
		zonedb_read_lock();
		const zonedb_t *db = zonedb_current(&ref);
		const zone_t *z = db ? zonedb_find(db, w) : NULL;
		if (z)
			__atomic_store_n(&reader_saw, (int)z->serial, __ATOMIC_RELEASE);
		zonedb_read_unlock(&ref);
		if ((i & 1023) == 0)
			usleep(100);
	}
	rcu_unregister_thread();
	return NULL;
}

static void test_publish_swaps(void)
{
	write_zone(1, false);
	zone_spec_t s = { .name = "example.com.", .file = zfile, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *v1 = NULL, *v2 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, NULL, NULL, quiet, NULL, &v1), 0);
	zonedb_publish(&ref, v1); /* frees the NULL that was there */
	pthread_t t;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, reader, NULL), 0);
	for (int i = 0; i < 10000 && __atomic_load_n(&reader_saw, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(1000);
	CU_ASSERT_EQUAL(__atomic_load_n(&reader_saw, __ATOMIC_ACQUIRE), 1);
	write_zone(2, false);
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, v1, NULL, quiet, NULL, &v2), 0);
	zonedb_publish(&ref, v2); /* waits for the reader's grace period, frees v1 */
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(__atomic_load_n(&reader_saw, __ATOMIC_ACQUIRE), 2);
	zonedb_publish(&ref, NULL);
}

/*
 * Readers that leave their read-side sections while a grace period waits
 * for them: liburcu's rcu_read_unlock then wakes the waiting writer
 * through the grace-period futex (urcu_common_wake_up_gp), two readers at
 * once reading and clearing it with volatile accesses that
 * ThreadSanitizer does not model (tests/tsan.supp says why that is
 * sound). shoald's transfer threads and its main loop meet there; in a
 * TSan build without the suppression this test reports the race.
 */
static int gp_stop; /* set by the writer: atomics */

static void *gp_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	while (!__atomic_load_n(&gp_stop, __ATOMIC_ACQUIRE)) {
		zonedb_read_lock();
		usleep(20); /* long enough for synchronize_rcu to sleep on the futex */
		zonedb_read_unlock(&ref);
	}
	rcu_unregister_thread();
	return NULL;
}

static void test_readers_wake_writer(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, gp_reader, NULL), 0);
	for (int i = 0; i < 300; i++)
		zonedb_synchronize(&ref);
	__atomic_store_n(&gp_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(pthread_join(t[i], NULL), 0);
}

/*
 * A zone transfer's thread: it takes a reference inside a read-side
 * section, leaves the section, and reads the zone for as long as it likes
 * while reloads publish new sets and free the old ones.
 */
static zonedb_ref_t xfr_ref;
static int xfr_stage; /* atomics: 1 reference taken, 2 the set is replaced, 3 done */
static uint32_t xfr_serial;
static uint64_t xfr_sum;

/* A sum over every octet of every RRset of z. */
static uint64_t zone_sum(const zone_t *z)
{
	uint64_t sum = 0;
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it))
		for (uint16_t k = 0; k < n->rrset_count; k++) {
			const rrset_wire_t *s = &znode_rrsets(n)[k].set;
			for (uint32_t j = 0; j < s->data_len; j++)
				sum = sum * 31 + s->data[j];
		}
	return sum;
}

static void wait_stage(int want)
{
	for (int i = 0; i < 20000 && __atomic_load_n(&xfr_stage, __ATOMIC_ACQUIRE) < want; i++)
		usleep(500);
}

static void *transfer(void *arg)
{
	(void)arg;
	rcu_register_thread();
	uint8_t w[NAME_MAXLEN];
	name_from_text("example.com.", NULL, w);
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(&xfr_ref);
	const zone_t *z = zone_ref(zonedb_find(db, w));
	zonedb_read_unlock(&xfr_ref);
	__atomic_store_n(&xfr_stage, 1, __ATOMIC_RELEASE);
	wait_stage(2);
	/* the set that served z is gone: every octet must still be there */
	xfr_sum = zone_sum(z);
	xfr_serial = z->serial;
	zone_unref(z); /* the last reference: frees it here */
	__atomic_store_n(&xfr_stage, 3, __ATOMIC_RELEASE);
	rcu_unregister_thread();
	return NULL;
}

static void test_reference_outlives_set(void)
{
	write_zone(1, false);
	zone_spec_t s = { .name = "example.com.", .file = zfile, .limits = ZONE_LIMITS_DEFAULT };
	zonedb_t *v1 = NULL, *v2 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, NULL, NULL, quiet, NULL, &v1), 0);
	uint8_t w[NAME_MAXLEN];
	name_from_text("example.com.", NULL, w);
	uint64_t sum = zone_sum(zonedb_find(v1, w));
	zonedb_publish(&xfr_ref, v1);
	pthread_t t;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, transfer, NULL), 0);
	wait_stage(1);
	CU_ASSERT_EQUAL(__atomic_load_n(&xfr_stage, __ATOMIC_ACQUIRE), 1);
	/*
	 * A reload publishes a new version and frees v1: the grace period
	 * does not wait for the transfer, which holds no read-side section.
	 */
	write_zone(2, false);
	CU_ASSERT_EQUAL_FATAL(zonedb_build(&s, 1, v1, NULL, quiet, NULL, &v2), 0);
	zonedb_publish(&xfr_ref, v2);
	__atomic_store_n(&xfr_stage, 2, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(xfr_stage, 3);
	CU_ASSERT_EQUAL(xfr_serial, 1);
	CU_ASSERT_EQUAL(xfr_sum, sum);
	zonedb_publish(&xfr_ref, NULL);
}

/*
 * A secondary zone: no file yet is no error (nothing served, the name
 * configured: SERVFAIL); zonedb_replace puts a transferred version in and
 * takes it out again (expiry); a reload keeps the version served even
 * when the file on disk says otherwise; a broken saved file does not stop
 * the first build.
 */
static void test_secondary(void)
{
	char missing[4200];
	snprintf(missing, sizeof(missing), "%s/not-yet.zone", tmpdir);
	write_zone(7, false);
	zone_spec_t s[] = {
		{ .name = "example.net",
		  .file = missing,
		  .limits = ZONE_LIMITS_DEFAULT,
		  .secondary = true },
		{ .name = "example.com", .file = zfile, .limits = ZONE_LIMITS_DEFAULT },
	};
	uint8_t net[NAME_MAXLEN], com[NAME_MAXLEN], www[NAME_MAXLEN];
	name_from_text("example.net.", NULL, net);
	name_from_text("example.com.", NULL, com);
	name_from_text("www.example.net.", NULL, www);
	zonedb_t *db = NULL, *db2 = NULL, *db3 = NULL, *db4 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(s, 2, NULL, NULL, quiet, NULL, &db), 0);
	CU_ASSERT_EQUAL(zonedb_index(db, net), 0);
	CU_ASSERT_EQUAL(zonedb_index(db, com), 1);
	CU_ASSERT_EQUAL(zonedb_index(db, www), -1);
	CU_ASSERT_PTR_NULL(zonedb_zone(db, 0));
	bool configured = false;
	CU_ASSERT_PTR_NULL(zonedb_match(db, www, &configured));
	CU_ASSERT_TRUE(configured);

	/* a transfer brings a version: example.com's zone stands in for it */
	const zone_t *com_zone = zonedb_zone(db, 1);
	CU_ASSERT_EQUAL_FATAL(zonedb_replace(db, 0, com_zone, NULL, &db2), 0);
	CU_ASSERT_PTR_EQUAL(zonedb_zone(db2, 0), com_zone);
	CU_ASSERT_PTR_EQUAL(zonedb_zone(db2, 1), com_zone);
	CU_ASSERT_PTR_EQUAL(zonedb_journal(db2, net), zonedb_journal(db, net));
	CU_ASSERT_EQUAL(zonedb_replace(db, 2, com_zone, NULL, &db3), SHOAL_EINVAL);

	/* a reload, the saved file now broken: the version served stays */
	FILE *f = fopen(missing, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("this is not a zone\n", f);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(zonedb_build(s, 2, db2, NULL, quiet, NULL, &db3), 0);
	CU_ASSERT_PTR_EQUAL(zonedb_zone(db3, 0), com_zone);

	/* expiry: nothing served, and why */
	CU_ASSERT_EQUAL_FATAL(zonedb_replace(db3, 0, NULL, "expired", &db4), 0);
	CU_ASSERT_PTR_NULL(zonedb_zone(db4, 0));
	zone_info_t info;
	zonedb_zone_info(db4, 0, &info);
	CU_ASSERT_FALSE(info.loaded);
	CU_ASSERT_STRING_EQUAL(info.last_error, "expired");
	zonedb_free(db);
	zonedb_free(db2);
	zonedb_free(db3);
	zonedb_free(db4);

	/* the first build over a broken saved file: reported, not fatal */
	CU_ASSERT_EQUAL_FATAL(zonedb_build(s, 2, NULL, NULL, quiet, NULL, &db), 0);
	CU_ASSERT_PTR_NULL(zonedb_zone(db, 0));
	zonedb_zone_info(db, 0, &info);
	CU_ASSERT_PTR_NOT_NULL(strstr(info.last_error, "not-yet.zone"));
	zonedb_free(db);
	unlink(missing);
}

/* Specs of n zones z0.many. .. from rfile (names kept in names[]). */
static zone_spec_t *many_specs(size_t n, char (*names)[32])
{
	zone_spec_t *s = calloc(n, sizeof(*s));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "z%zu.many", i);
		s[i] = (zone_spec_t){ .name = names[i],
				      .file = rfile,
				      .limits = ZONE_LIMITS_DEFAULT };
	}
	return s;
}

/* How many of db's first n zones serve the version `before` had, pointer for pointer. */
static size_t same_versions(const zonedb_t *db, const zone_t *const *before, size_t n)
{
	size_t same = 0;
	for (size_t i = 0; i < n; i++)
		same += zonedb_zone(db, i) == before[i];
	return same;
}

/*
 * Many zones (past the old bound of 4096) load on several threads; every
 * zone is found by its names; a reload of one zone, a reconfig that adds
 * one and one that removes one touch that zone alone: every other zone
 * keeps its version (the same zone_t) and its statistics slot, and only
 * the added zone's slot is fresh. zonedb_swap changes one zone of the
 * published set in place.
 */
static void test_many_zones(void)
{
	enum { N = 20000 };
	char(*names)[32] = calloc(N + 1, sizeof(*names));
	zone_spec_t *s = many_specs(N + 1, names);
	const zone_t **before = calloc(N + 1, sizeof(*before));
	CU_ASSERT_PTR_NOT_NULL_FATAL(before);
	size_t loaded = 0;
	zonedb_build_t b = { .specs = s, .n = N, .msg = quiet, .threads = 4, .loaded = &loaded };
	zonedb_t *v1 = NULL, *v2 = NULL, *v3 = NULL, *v4 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v1), 0);
	CU_ASSERT_EQUAL(loaded, N);
	CU_ASSERT_EQUAL(zonedb_zone_count(v1), N);
	size_t nfresh;
	zonedb_fresh_slots(v1, &nfresh);
	CU_ASSERT_EQUAL(nfresh, N);
	uint8_t w[NAME_MAXLEN];
	for (size_t i = 0; i < N; i++) {
		before[i] = zonedb_zone(v1, i);
		CU_ASSERT_PTR_NOT_NULL_FATAL(before[i]);
		char text[64];
		snprintf(text, sizeof(text), "www.z%zu.many.", i);
		name_from_text(text, NULL, w);
		CU_ASSERT_PTR_EQUAL(zonedb_find(v1, w), before[i]);
		CU_ASSERT_EQUAL(zonedb_index(v1, w + 4), (long)i);
	}

	/* a reload of one zone (a set built over v1 with only) reads that zone alone */
	b.old = v1;
	b.only = "z77.many";
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v2), 0);
	CU_ASSERT_PTR_NOT_EQUAL(zonedb_zone(v2, 77), before[77]);
	CU_ASSERT_EQUAL(same_versions(v2, before, N), N - 1);
	zonedb_fresh_slots(v2, &nfresh);
	CU_ASSERT_EQUAL(nfresh, 0);
	CU_ASSERT_EQUAL(zonedb_zone_slot(v2, 77, NULL), zonedb_zone_slot(v1, 77, NULL));

	/* a reconfig that adds a zone (the others keep): one fresh slot, nothing else read */
	for (size_t i = 0; i < N + 1; i++)
		s[i].keep = i < N;
	b.old = v2;
	b.only = NULL;
	b.n = N + 1;
	before[77] = zonedb_zone(v2, 77);
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v3), 0);
	CU_ASSERT_EQUAL(same_versions(v3, before, N), N);
	CU_ASSERT_PTR_NOT_NULL(zonedb_zone(v3, N));
	const uint32_t *fresh = zonedb_fresh_slots(v3, &nfresh);
	CU_ASSERT_EQUAL_FATAL(nfresh, 1);
	CU_ASSERT_EQUAL(fresh[0], zonedb_zone_slot(v3, N, NULL));

	/* one that removes zone 0: every other keeps its version and slot */
	b.old = v3;
	b.specs = s + 1;
	b.n = N;
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v4), 0);
	CU_ASSERT_EQUAL(same_versions(v4, before + 1, N - 1), N - 1);
	CU_ASSERT_EQUAL(zonedb_zone_slot(v4, 9, NULL), zonedb_zone_slot(v1, 10, NULL));
	name_from_text("z0.many.", NULL, w);
	CU_ASSERT_EQUAL(zonedb_index(v4, w), -1);

	/* in place: one zone's version and error change, the set and the others stay */
	zonedb_retired_t retired;
	const zone_t *other = zonedb_zone(v4, 1);
	CU_ASSERT_EQUAL_FATAL(zonedb_swap(v4, 5, other, "a test", &retired), 0);
	CU_ASSERT_PTR_EQUAL(retired.zone, before[6]);
	CU_ASSERT_PTR_EQUAL(zonedb_zone(v4, 5), other);
	CU_ASSERT_EQUAL(same_versions(v4, before + 1, 5), 5);
	zone_info_t info;
	zonedb_zone_info(v4, 5, &info);
	CU_ASSERT_STRING_EQUAL(info.last_error, "a test");
	zonedb_retired_free(&retired);
	CU_ASSERT_EQUAL(zonedb_swap(v4, N, other, NULL, &retired), SHOAL_EINVAL);

	/* read one zone anew without a set: the version to swap in */
	zone_t *z = NULL;
	char error[512];
	CU_ASSERT_EQUAL_FATAL(zonedb_load_zone(v4, 8, &s[9], quiet, NULL, &z, error, sizeof(error)),
			      0);
	CU_ASSERT_PTR_NOT_NULL(z);
	CU_ASSERT_PTR_NOT_EQUAL(z, before[9]);
	CU_ASSERT_PTR_EQUAL(zonedb_zone(v4, 8), before[9]); /* nothing published yet */
	zone_unref(z);
	zonedb_free(v1);
	zonedb_free(v2);
	zonedb_free(v3);
	zonedb_free(v4);
	free(before);
	free(s);
	free(names);
}

/* Whether every zone of db is found at its index by its apex, and how many are. */
static size_t found_at_index(const zonedb_t *db)
{
	size_t found = 0;
	for (size_t i = 0; i < zonedb_zone_count(db); i++) {
		char text[1024];
		uint8_t w[NAME_MAXLEN];
		zonedb_zone_name(db, i, text, sizeof(text));
		found += name_from_text(text, NULL, w) > 0 && zonedb_index(db, w) == (long)i;
	}
	return found;
}

/* policy_of over a table, each call counted. */
static size_t policy_calls;

static const void *policy_counted(const void *arg, size_t i)
{
	policy_calls++;
	return ((const void *const *)arg)[i];
}

/* How many zones of db match with the policy by_index gives them. */
static size_t policies_right(const zonedb_t *db, const void *const *by_index)
{
	size_t right = 0;
	for (size_t i = 0; i < zonedb_zone_count(db); i++) {
		char text[1024];
		uint8_t w[NAME_MAXLEN];
		uint32_t slot;
		const void *policy = policy_open;
		zonedb_zone_name(db, i, text, sizeof(text));
		right += name_from_text(text, NULL, w) > 0 &&
			 zonedb_match_slot(db, w, NULL, &slot, &policy) && policy == by_index[i];
	}
	return right;
}

/*
 * A set of n zones with policies (a third their own, a third the global
 * one, a third none), then a zone added and one removed by derived sets
 * whose owner moved the global policy: returns the policy_of calls
 * zonedb_derive_policies made for both, after checking every zone's.
 */
static size_t derive_policy_calls(size_t n)
{
	static const char own[] = "own", was[] = "global", now[] = "global, copied";
	char(*names)[32] = calloc(n + 1, sizeof(*names));
	zone_spec_t *s = many_specs(n + 1, names), *t = calloc(n, sizeof(*t));
	const void **before = calloc(n + 1, sizeof(*before)),
		   **after = calloc(n + 1, sizeof(*after));
	CU_ASSERT_FATAL(t && before && after);
	for (size_t i = 0; i <= n; i++) {
		before[i] = i % 3 == 0 ? own : i % 3 == 1 ? was : NULL;
		after[i] = before[i] == was ? now : before[i];
	}
	zonedb_build_t b = { .specs = s, .n = n, .msg = quiet };
	zonedb_t *v1 = NULL, *v2 = NULL, *v3 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v1), 0);
	CU_ASSERT_EQUAL_FATAL(zonedb_set_policies(v1, policy_counted, before), 0);
	zonedb_publish(&ref, v1);
	b = (zonedb_build_t){
		.specs = s, .n = n + 1, .old = v1, .msg = quiet, .change = ZONEDB_ADDED
	};
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v2), 0);
	policy_calls = 0;
	CU_ASSERT_EQUAL_FATAL(zonedb_derive_policies(v2, was, now, policy_counted, after), 0);
	size_t calls = policy_calls;
	CU_ASSERT_EQUAL(policies_right(v2, after), n + 1);
	zonedb_publish(&ref, v2);
	/* the middle zone removed: the others' as they were */
	size_t gone = n / 2;
	for (size_t i = 0, k = 0; i <= n; i++)
		if (i != gone) {
			t[k] = s[i];
			after[k++] = after[i];
		}
	b = (zonedb_build_t){ .specs = t,
			      .n = n,
			      .old = v2,
			      .msg = quiet,
			      .change = ZONEDB_REMOVED,
			      .removed = gone };
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v3), 0);
	policy_calls = 0;
	CU_ASSERT_EQUAL_FATAL(zonedb_derive_policies(v3, now, now, policy_counted, after), 0);
	calls += policy_calls;
	CU_ASSERT_EQUAL(policies_right(v3, after), n);
	/* what a set derived cost before: a call per zone */
	policy_calls = 0;
	CU_ASSERT_EQUAL(zonedb_set_policies(v3, policy_counted, after), 0);
	CU_ASSERT_EQUAL(policy_calls, n);
	zonedb_publish(&ref, v3);
	zonedb_publish(&ref, NULL);
	free(s);
	free(t);
	free(before);
	free(after);
	free(names);
	return calls;
}

/*
 * The allow-query lists of a set derived by zone-add or zone-remove
 * (issue 30) are the served set's, carried over by slot, the global one
 * replaced where it moved: one policy asked for (the zone added), at 100
 * zones as at 10,000, where zonedb_set_policies asks one per zone.
 */
static void test_derive_policies(void)
{
	CU_ASSERT_EQUAL(derive_policy_calls(100), 1);
	CU_ASSERT_EQUAL(derive_policy_calls(10000), 1);
}

/*
 * A set of n zones, then one derived from it with a zone added
 * (zonedb_build_t.change) and published in its place; returns the
 * allocations and frees of the derivation and the publication.
 */
static size_t derive_allocations(size_t n)
{
	char(*names)[32] = calloc(n + 1, sizeof(*names));
	zone_spec_t *s = many_specs(n + 1, names);
	zonedb_build_t b = { .specs = s, .n = n, .msg = quiet };
	zonedb_t *v1 = NULL, *v2 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v1), 0);
	zonedb_publish(&ref, v1);
	b = (zonedb_build_t){
		.specs = s, .n = n + 1, .old = v1, .msg = quiet, .change = ZONEDB_ADDED
	};
	alloc_guard_begin();
	int rc = zonedb_build_with(&b, &v2);
	if (rc == 0)
		zonedb_publish(&ref, v2);
	alloc_guard_counts_t c = alloc_guard_end();
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(found_at_index(v2), n + 1);
	zonedb_publish(&ref, NULL);
	free(s);
	free(names);
	return c.allocations + c.frees;
}

/*
 * zone-add and zone-remove derive the set from the one served (issue 30):
 * every other zone's entry is old's (its version, its slot), found at its
 * index, the added zone read and given the lowest slot neither set uses
 * (a removed zone's, once that set is gone), and the cost is that zone's:
 * a set of 8 times the zones takes as many allocations and frees. A
 * derived set freed unpublished leaves old whole; one published frees
 * old's removed zone with old.
 */
static void test_derive(void)
{
	enum { N = 3000 };
	char(*names)[32] = calloc(N + 2, sizeof(*names));
	zone_spec_t *s = many_specs(N + 2, names);
	const zone_t **before = calloc(N + 1, sizeof(*before));
	CU_ASSERT_PTR_NOT_NULL_FATAL(before);
	zonedb_build_t b = { .specs = s, .n = N, .msg = quiet };
	zonedb_t *v1 = NULL, *v2 = NULL, *v3 = NULL, *v4 = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v1), 0);
	for (size_t i = 0; i < N; i++)
		before[i] = zonedb_zone(v1, i);
	zonedb_publish(&ref, v1);

	/* added: N shared, the new one read, its slot fresh */
	b = (zonedb_build_t){
		.specs = s, .n = N + 1, .old = v1, .msg = quiet, .change = ZONEDB_ADDED
	};
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v2), 0);
	CU_ASSERT_EQUAL(same_versions(v2, before, N), N);
	CU_ASSERT_PTR_NOT_NULL(zonedb_zone(v2, N));
	CU_ASSERT_EQUAL(found_at_index(v2), N + 1);
	size_t nfresh;
	const uint32_t *fresh = zonedb_fresh_slots(v2, &nfresh);
	CU_ASSERT_EQUAL_FATAL(nfresh, 1);
	CU_ASSERT_EQUAL(fresh[0], N + 1); /* slots 1..N are v1's */
	/* not published: freed, v1 serves on whole */
	zonedb_free(v2);
	CU_ASSERT_EQUAL(same_versions(v1, before, N), N);
	CU_ASSERT_EQUAL(found_at_index(v1), N);

	/* removed: zone 5 goes, the zones after it move down one, keeping version and slot */
	b = (zonedb_build_t){ .specs = s,
			      .n = N - 1,
			      .old = v1,
			      .msg = quiet,
			      .change = ZONEDB_REMOVED,
			      .removed = 5 };
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v3), 0);
	CU_ASSERT_EQUAL(same_versions(v3, before, 5), 5);
	size_t moved = 0;
	for (size_t i = 5; i + 1 < N; i++)
		moved += zonedb_zone(v3, i) == before[i + 1] &&
			 zonedb_zone_slot(v3, i, NULL) == zonedb_zone_slot(v1, i + 1, NULL);
	CU_ASSERT_EQUAL(moved, N - 6);
	CU_ASSERT_EQUAL(found_at_index(v3), N - 1);
	uint8_t w[NAME_MAXLEN];
	name_from_text("z5.many.", NULL, w);
	CU_ASSERT_EQUAL(zonedb_index(v3, w), -1);
	uint32_t gone = zonedb_zone_slot(v1, 5, NULL);
	zonedb_fresh_slots(v3, &nfresh);
	CU_ASSERT_EQUAL(nfresh, 0);
	zonedb_publish(&ref, v3); /* v1 freed, and with it zone 5 alone */

	/* added again: the removed zone's slot, free in both sets now */
	zone_spec_t *t = calloc(N, sizeof(*t));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	memcpy(t, s, 5 * sizeof(*t));
	memcpy(t + 5, s + 6, (N - 6) * sizeof(*t));
	t[N - 1] = s[N + 1];
	b = (zonedb_build_t){ .specs = t, .n = N, .old = v3, .msg = quiet, .change = ZONEDB_ADDED };
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &v4), 0);
	CU_ASSERT_EQUAL(zonedb_zone_slot(v4, N - 1, NULL), gone);
	CU_ASSERT_EQUAL(found_at_index(v4), N);
	/* a name the set has already: refused with the entry that says so, v3 untouched */
	zonedb_t *v5 = NULL;
	t[N - 1] = s[7];
	CU_ASSERT_EQUAL(zonedb_build_with(&b, &v5), SHOAL_EZONE);
	CU_ASSERT_EQUAL(zonedb_zone_slot(v5, N - 1, NULL), 0);
	zonedb_free(v5);
	zonedb_publish(&ref, v4);
	CU_ASSERT_EQUAL(found_at_index(v4), N);
	zonedb_publish(&ref, NULL);
	free(t);
	free(before);
	free(s);
	free(names);

	/* the cost is the zone's: as many allocations and frees at 8 times the zones */
	CU_ASSERT_EQUAL(derive_allocations(500), derive_allocations(4000));
}

/*
 * A reader matching a name of a set of 20 zones (the hash of apexes, whose
 * slots carry a prefetch hint of each version) while the writer swaps that
 * zone's version back and forth: the reader gets the old version or the
 * new one, never another, and the match after each swap gives the new.
 */
static int swap_stop, swap_bad, swap_seen; /* atomics */
static const zone_t *swap_a, *swap_b;

static void *swap_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	uint8_t w[NAME_MAXLEN];
	name_from_text("www.z5.many.", NULL, w);
	while (!__atomic_load_n(&swap_stop, __ATOMIC_ACQUIRE)) {
		zonedb_read_lock();
		const zone_t *z = zonedb_find(zonedb_current(&ref), w);
		if (z != swap_a && z != swap_b)
			__atomic_add_fetch(&swap_bad, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&swap_seen, 1, __ATOMIC_RELAXED);
		zonedb_read_unlock(&ref);
	}
	rcu_unregister_thread();
	return NULL;
}

static void test_swap_seen_by_reader(void)
{
	enum { N = 20 };
	char(*names)[32] = calloc(N, sizeof(*names));
	zone_spec_t *s = many_specs(N, names);
	zonedb_t *db = NULL;
	CU_ASSERT_EQUAL_FATAL(zonedb_build(s, N, NULL, NULL, quiet, NULL, &db), 0);
	swap_a = zone_ref(zonedb_zone(db, 5)); /* kept while it is swapped out */
	swap_b = zonedb_zone(db, 1);
	zonedb_publish(&ref, db);
	pthread_t t;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, swap_reader, NULL), 0);
	uint8_t w[NAME_MAXLEN];
	name_from_text("host.z5.many.", NULL, w);
	for (int i = 0; i < 200; i++) {
		const zone_t *now = i % 2 ? swap_a : swap_b;
		zonedb_retired_t retired;
		CU_ASSERT_EQUAL_FATAL(zonedb_swap(db, 5, now, NULL, &retired), 0);
		CU_ASSERT_PTR_EQUAL(zonedb_find(db, w), now);
		zonedb_synchronize(&ref);
		zonedb_retired_free(&retired);
	}
	for (int i = 0; i < 10000 && __atomic_load_n(&swap_seen, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(1000);
	__atomic_store_n(&swap_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CU_ASSERT(__atomic_load_n(&swap_seen, __ATOMIC_ACQUIRE) > 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&swap_bad, __ATOMIC_ACQUIRE), 0);
	CU_ASSERT_PTR_EQUAL(zonedb_find(db, w), swap_a);
	/* the others keep their own versions, found through their slots */
	for (size_t i = 0; i < N; i++) {
		char text[64];
		snprintf(text, sizeof(text), "a.z%zu.many.", i);
		name_from_text(text, NULL, w);
		CU_ASSERT_PTR_EQUAL(zonedb_find(db, w), zonedb_zone(db, i));
	}
	zone_unref((zone_t *)swap_a);
	zonedb_publish(&ref, NULL);
	free(s);
	free(names);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	snprintf(zfile, sizeof(zfile), "%s/example.zone", tmpdir);
	snprintf(rfile, sizeof(rfile), "%s/relative.zone", tmpdir);
	FILE *f = fopen(rfile, "w");
	if (!f)
		return 99;
	fputs("$TTL 300\n@ IN SOA ns1 hm 1 2 3 4 5\n@ IN NS ns1\nns1 IN A 192.0.2.1\n", f);
	fclose(f);
	rcu_register_thread();
	static const unit_test_t tests[] = {
		UNIT_TEST(test_build_and_info),
		UNIT_TEST(test_failed_first_load),
		UNIT_TEST(test_reload_semantics),
		UNIT_TEST(test_reload_shares),
		UNIT_TEST(test_keep_and_owner),
		UNIT_TEST(test_publish_swaps),
		UNIT_TEST(test_swap_seen_by_reader),
		UNIT_TEST(test_reference_outlives_set),
		UNIT_TEST(test_readers_wake_writer),
		UNIT_TEST(test_secondary),
		UNIT_TEST(test_stats_slots),
		UNIT_TEST(test_match_longest),
		UNIT_TEST(test_policies),
		UNIT_TEST(test_many_zones),
		UNIT_TEST(test_derive),
		UNIT_TEST(test_derive_policies),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "zone_db", tests);
	rcu_unregister_thread();
	unlink(zfile);
	unlink(rfile);
	rmdir(tmpdir);
	return rc;
}
