/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/events/sched.c: which zone a NOTIFY, refresh or status reaches. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/conf/conf.h"
#include "server/events/reload.h"
#include "server/events/sched.h"
#include "tests/unit/alloc_guard.h"
#include "tests/unit/conf_text.h"
#include "unit.h"

/* How long a test waits for the transfer threads to do what they must: generous, never reached. */
#define WAIT_MS 20000

/* A zone's primary: a loopback TCP listener that takes each connection and closes it. */
typedef struct primary {
	const char *zone;
	int fd;
	uint16_t port;
} primary_t;

static int primary_open(primary_t *p, const char *zone)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(in);
	p->zone = zone;
	p->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0 || bind(p->fd, (struct sockaddr *)&in, len) < 0 || listen(p->fd, 16) < 0 ||
	    getsockname(p->fd, (struct sockaddr *)&in, &len) < 0)
		return -1;
	p->port = ntohs(in.sin_port);
	return 0;
}

/*
 * The zone whose primary the transfer thread connects to next, within
 * ms; NULL when none does. The connection is closed at once: the
 * transfer fails, and the zone waits its retry time (an hour here).
 */
static const char *next_transfer(primary_t *p, size_t n, int ms)
{
	struct pollfd pf[8];
	for (size_t k = 0; k < n; k++)
		pf[k] = (struct pollfd){ .fd = p[k].fd, .events = POLLIN };
	if (poll(pf, (nfds_t)n, ms) <= 0)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		if (!(pf[k].revents & POLLIN))
			continue;
		int c = accept(p[k].fd, NULL, NULL);
		if (c >= 0)
			close(c);
		return p[k].zone;
	}
	return NULL;
}

/* s, or "(none)" for NULL: what the assertions compare. */
static const char *str(const char *s)
{
	return s ? s : "(none)";
}

/*
 * A configuration into c whose secondary zones are named by the letters
 * of `zones` in order ('a' a.test, 'b' b.test, 'n' n.test), each with its
 * primary of p; every check that fails waits an hour before the next.
 */
static int conf_make(conf_t *c, const char *zones, const primary_t *p)
{
	char text[2048];
	int len = snprintf(text, sizeof(text),
			   "min-refresh-time: 3600\nmin-retry-time: 3600\nzones:\n");
	for (const char *z = zones; *z; z++) {
		const primary_t *q = &p[*z - 'a' < 2 ? *z - 'a' : 2];
		len += snprintf(text + len, sizeof(text) - (size_t)len,
				"  - name: %s\n    primaries: [\"127.0.0.1@%u NOKEY\"]\n", q->zone,
				(unsigned)q->port);
	}
	return unit_conf_text(c, text, (size_t)len);
}

/* The zone loader's errors, shown; its notes, not. */
static void quiet(void *arg, bool is_error, const char *msg)
{
	if (is_error)
		fprintf(stderr, "  %s\n", msg);
}

/* The pieces a sched_t needs: a served set (nothing loaded yet) and its reload. */
typedef struct world {
	primary_t p[3]; /* a.test, b.test, n.test */
	conf_t was, now;
	zonedb_ref_t zones;
	reload_t reload;
	stats_xfr_in_t counters;
	stats_sched_t sched_counters;
	sched_t *s;
} world_t;

/*
 * Zones a.test and b.test served as secondaries and checked once (both
 * primaries failed); w->now is the next configuration, with n.test
 * inserted first, so that each zone's index differs from w->was's.
 */
static int world_start(world_t *w)
{
	memset(w, 0, sizeof(*w));
	if (primary_open(&w->p[0], "a.test") < 0 || primary_open(&w->p[1], "b.test") < 0 ||
	    primary_open(&w->p[2], "n.test") < 0 || conf_make(&w->was, "ab", w->p) < 0 ||
	    conf_make(&w->now, "nab", w->p) < 0)
		return -1;
	zonedb_t *db = NULL;
	if (unit_conf_build(&w->was, NULL, quiet, &db) < 0)
		return -1;
	zonedb_publish(&w->zones, db);
	reload_init(&w->reload, &w->was, &w->zones);
	sched_env_t env = { .zones = &w->zones,
			    .reload = &w->reload,
			    .xfr_in = &w->counters,
			    .counters = &w->sched_counters,
			    .transfers_in = 10 };
	if (sched_new(&w->was, &env, &w->s) < 0 || !w->s || sched_start(w->s) < 0)
		return -1;
	/* each zone is checked at start; then nothing is due for an hour */
	const char *first = next_transfer(w->p, 2, WAIT_MS);
	const char *second = next_transfer(w->p, 2, WAIT_MS);
	if (!first || !second || !strcmp(first, second))
		return -1;
	for (int ms = 0; ms < WAIT_MS; ms += 10) {
		if (__atomic_load_n(&w->counters.failed, __ATOMIC_RELAXED) == 2)
			return 0;
		usleep(10000);
	}
	return -1;
}

static void world_stop(world_t *w)
{
	sched_free(w->s);
	zonedb_publish(&w->zones, NULL);
	conf_clear(&w->was);
	conf_clear(&w->now);
	for (size_t k = 0; k < 3; k++)
		if (w->p[k].fd > 0)
			close(w->p[k].fd);
}

/*
 * The apex of zone `name` in wire form, as the server's parts name it to
 * the secondary: a worker answering from the set of `served` (its NOTIFY),
 * control following `served` (refresh, zone-status).
 */
static const uint8_t *apex_of(const conf_t *served, const char *name)
{
	static uint8_t apex[NAME_MAXLEN];
	long i = conf_zone_index(served, name);
	if (i < 0 || name_from_text(conf_zone_spec(served, i)->name, NULL, apex) < 0)
		return (const uint8_t *)"";
	return apex;
}

static void notify_zone(sched_t *s, const conf_t *served, const char *name)
{
	sched_notify(s, apex_of(served, name), false, 0);
}

static int refresh_zone(sched_t *s, const conf_t *served, const char *name)
{
	return sched_refresh(s, apex_of(served, name), false);
}

static void status_zone(sched_t *s, const conf_t *served, const char *name, char *buf, size_t cap)
{
	sched_state_t st;
	snprintf(buf, cap, "source %s",
		 sched_state(s, apex_of(served, name), &st) ? st.source : "(not a secondary)");
}

/*
 * A zone-add and a zone-remove reach the scheduler as one change
 * (sched_reconfig_one): its table is the one shown with the indices moved,
 * not made from a pass over every zone; a NOTIFY reaches the zone it names
 * after each, and the zone removed is no secondary any more.
 */
static void test_reconfig_one(void)
{
	world_t w;
	CU_ASSERT_FATAL(world_start(&w) == 0);
	conf_t added, removed;
	CU_ASSERT_EQUAL_FATAL(conf_copy(&added, &w.was), 0);
	CU_ASSERT_EQUAL_FATAL(conf_zone_add(&added, "p.test", "p.zone"), 0);
	CU_ASSERT_EQUAL(conf_secondary_count(&added), 2);
	CU_ASSERT_EQUAL(sched_reconfig_one(w.s, &added, ZONEDB_ADDED, 0), 0);
	notify_zone(w.s, &added, "b.test");
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "b.test");
	/* a.test goes: b.test is zone 0 now, p.test zone 1 (no primaries) */
	CU_ASSERT_EQUAL_FATAL(conf_copy(&removed, &added), 0);
	CU_ASSERT_EQUAL_FATAL(conf_zone_remove(&removed, 0), 0);
	CU_ASSERT_EQUAL(conf_secondary_count(&removed), 1);
	CU_ASSERT_EQUAL(sched_reconfig_one(w.s, &removed, ZONEDB_REMOVED, 0), 0);
	notify_zone(w.s, &removed, "b.test");
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "b.test");
	char buf[256];
	status_zone(w.s, &w.was, "a.test", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "source (not a secondary)");
	status_zone(w.s, &removed, "b.test", buf, sizeof(buf));
	CU_ASSERT_STRING_NOT_EQUAL(buf, "source (not a secondary)");
	world_stop(&w);
	conf_clear(&added);
	conf_clear(&removed);
}

/*
 * A reconfig inserts n.test before a.test and b.test: the workers answer
 * from the new set at once, the secondary follows when the main loop
 * applies the reconfig. A NOTIFY in between reaches the zone it names:
 * not the zone that had its index before, and not nothing.
 */
static void test_notify_before_reconfig_applied(void)
{
	world_t w;
	CU_ASSERT_FATAL(world_start(&w) == 0);
	notify_zone(w.s, &w.now, "a.test");
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "a.test");
	notify_zone(w.s, &w.now, "b.test");
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "b.test");
	/* applied: the new table has the NOTIFYs and zones of the new configuration */
	CU_ASSERT_EQUAL(sched_reconfig(w.s, &w.now), 0);
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "n.test");
	notify_zone(w.s, &w.now, "a.test");
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "a.test");
	world_stop(&w);
}

/*
 * Out of memory at each allocation of a reconfig: it fails whole, and the
 * table kept still acts on the zones named by the configuration the rest
 * of the server follows (refresh, zone-status, NOTIFY).
 */
static void test_reconfig_out_of_memory(void)
{
	world_t w;
	CU_ASSERT_FATAL(world_start(&w) == 0);
	alloc_guard_fail_at(1);
	CU_ASSERT_EQUAL(sched_reconfig(w.s, &w.now), SHOAL_ENOMEM);
	alloc_guard_fail_at(0);
	CU_ASSERT_EQUAL(refresh_zone(w.s, &w.now, "a.test"), 0);
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "a.test");
	char buf[512];
	status_zone(w.s, &w.now, "b.test", buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "source none"));
	CU_ASSERT_EQUAL(refresh_zone(w.s, &w.now, "n.test"), SHOAL_ENOTFOUND);
	notify_zone(w.s, &w.now, "b.test");
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "b.test");
	/* every other allocation failing in turn: ENOMEM each time, nothing leaked */
	int rc = SHOAL_ENOMEM;
	for (size_t n = 2; n < 1000 && rc == SHOAL_ENOMEM; n++) {
		alloc_guard_fail_at(n);
		rc = sched_reconfig(w.s, &w.now);
		alloc_guard_fail_at(0);
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "n.test");
	world_stop(&w);
}

/*
 * A thread that looks zones up in the table shown (control's
 * zone-status, as the flush thread's record does) while the main loop applies reconfigs,
 * each publishing a new table: the publication is a release store that the
 * lookups' loads pair with. In a TSan build a publication by
 * rcu_assign_pointer (a volatile store TSan does not see as atomic) was
 * reported as a race with the lookup.
 */
static int lookups_stop;

static void *lookups(void *arg)
{
	sched_t *s = arg;
	uint8_t apex[NAME_MAXLEN];
	if (name_from_text("a.test", NULL, apex) < 0)
		return NULL;
	rcu_register_thread();
	while (!__atomic_load_n(&lookups_stop, __ATOMIC_ACQUIRE)) {
		sched_state_t st;
		(void)sched_state(s, apex, &st);
	}
	rcu_unregister_thread();
	return NULL;
}

static void test_lookups_during_reconfig(void)
{
	world_t w;
	CU_ASSERT_FATAL(world_start(&w) == 0);
	__atomic_store_n(&lookups_stop, 0, __ATOMIC_RELEASE);
	pthread_t t;
	CU_ASSERT_FATAL(pthread_create(&t, NULL, lookups, w.s) == 0);
	for (int k = 0; k < 40; k++)
		CU_ASSERT_EQUAL(sched_reconfig(w.s, k % 2 ? &w.was : &w.now), 0);
	__atomic_store_n(&lookups_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	world_stop(&w);
}

/* Until the scheduler times `zones` secondary zones (it took the table posted). */
static bool zones_become(const stats_sched_t *c, uint64_t zones)
{
	for (int ms = 0; ms < WAIT_MS; ms++) {
		if (__atomic_load_n(&c->zones, __ATOMIC_ACQUIRE) == zones)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * The zones the scheduler looks at (sched_zones_taken) as it takes one
 * zone added to n secondaries, into *added, then one removed from the
 * middle, into *removed. No pool thread: nothing is ever transferred.
 */
static void taken_by_one(size_t n, uint64_t *added, uint64_t *removed)
{
	static const char text[] = "zones:\n  - name: z0.test\n"
				   "    primaries: [\"127.0.0.1@9 NOKEY\"]\n";
	conf_t c, plus, minus;
	zonedb_ref_t zones = { 0 };
	reload_t reload;
	stats_xfr_in_t xfr = { 0 };
	stats_sched_t counters = { 0 };
	sched_t *s = NULL;
	char name[32];
	*added = *removed = UINT64_MAX;
	CU_ASSERT_EQUAL_FATAL(unit_conf_text(&c, text, sizeof(text) - 1), 0);
	int rc = 0;
	for (size_t i = 1; rc == 0 && i < n; i++) {
		snprintf(name, sizeof(name), "z%zu.test", i);
		rc = conf_zone_add_from(&c, name, "", conf_zone_xfr(&c, 0));
	}
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	reload_init(&reload, &c, &zones);
	sched_env_t env = {
		.zones = &zones, .reload = &reload, .xfr_in = &xfr, .counters = &counters
	};
	CU_ASSERT_FATAL(sched_new(&c, &env, &s) == 0 && s && sched_start(s) == 0);
	CU_ASSERT_FATAL(zones_become(&counters, n));
	CU_ASSERT_EQUAL_FATAL(conf_copy(&plus, &c), 0);
	CU_ASSERT_EQUAL_FATAL(conf_zone_add_from(&plus, "new.test", "", conf_zone_xfr(&c, 0)), 0);
	uint64_t was = __atomic_load_n(&counters.zones_taken, __ATOMIC_ACQUIRE);
	CU_ASSERT_EQUAL(sched_reconfig_one(s, &plus, ZONEDB_ADDED, 0), 0);
	CU_ASSERT_FATAL(zones_become(&counters, n + 1));
	*added = __atomic_load_n(&counters.zones_taken, __ATOMIC_ACQUIRE) - was;
	CU_ASSERT_EQUAL_FATAL(conf_copy(&minus, &plus), 0);
	CU_ASSERT_EQUAL_FATAL(conf_zone_remove(&minus, n / 2), 0);
	was = __atomic_load_n(&counters.zones_taken, __ATOMIC_ACQUIRE);
	CU_ASSERT_EQUAL(sched_reconfig_one(s, &minus, ZONEDB_REMOVED, n / 2), 0);
	CU_ASSERT_FATAL(zones_become(&counters, n));
	*removed = __atomic_load_n(&counters.zones_taken, __ATOMIC_ACQUIRE) - was;
	/* the zone removed is no secondary any more; the last one, past it, still is */
	char buf[256];
	snprintf(name, sizeof(name), "z%zu.test", n / 2);
	status_zone(s, &plus, name, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "source (not a secondary)");
	status_zone(s, &minus, "new.test", buf, sizeof(buf));
	CU_ASSERT_STRING_NOT_EQUAL(buf, "source (not a secondary)");
	sched_free(s);
	conf_clear(&c);
	conf_clear(&plus);
	conf_clear(&minus);
}

/*
 * One zone added to, then removed from, the secondaries (a zone-add, a
 * catalog's one member) costs the scheduler that zone: as many zones
 * looked at with 100,000 secondaries as with 1,000 (issue 32: each
 * change re-armed and compared every zone's timers and primaries).
 */
static void test_reconfig_one_costs_one(void)
{
	uint64_t small_added, small_removed, large_added, large_removed;
	taken_by_one(1000, &small_added, &small_removed);
	taken_by_one(100000, &large_added, &large_removed);
	CU_ASSERT_EQUAL(small_added, 1);
	CU_ASSERT_EQUAL(small_removed, 1);
	CU_ASSERT_EQUAL(large_added, small_added);
	CU_ASSERT_EQUAL(large_removed, small_removed);
	if (large_added != 1 || large_removed != 1)
		fprintf(stderr,
			"\n  zones looked at: %llu, %llu at 1000 zones; %llu, %llu at 100000\n",
			(unsigned long long)small_added, (unsigned long long)small_removed,
			(unsigned long long)large_added, (unsigned long long)large_removed);
}

/*
 * The same with zone-add and zone-remove (sched_reconfig_one), which the
 * catalogs' members make often: the scheduler frees each table it replaces
 * after a grace period, while the lookups (as the flush thread's) read the
 * table shown. In a TSan build the free was reported as a race with a
 * lookup (catalog_consumer.sh): TSan does not see liburcu's grace period,
 * so each read section's end must be a release the free acquires.
 */
static void test_lookups_during_reconfig_one(void)
{
	world_t w;
	CU_ASSERT_FATAL(world_start(&w) == 0);
	__atomic_store_n(&lookups_stop, 0, __ATOMIC_RELEASE);
	pthread_t t;
	CU_ASSERT_FATAL(pthread_create(&t, NULL, lookups, w.s) == 0);
	/* ab -> b (a out) -> ba (a in, last) -> a (b out) -> ab (b in): one zone a step */
	static const char *const steps[] = { "b", "ba", "a", "ab" };
	conf_t c[4];
	for (int k = 0; k < 4; k++)
		CU_ASSERT_EQUAL_FATAL(conf_make(&c[k], steps[k], w.p), 0);
	for (int round = 0; round < 50; round++)
		for (int k = 0; k < 4; k++) {
			enum zonedb_change ch = k % 2 ? ZONEDB_ADDED : ZONEDB_REMOVED;
			CU_ASSERT_EQUAL(sched_reconfig_one(w.s, &c[k], ch, 0), 0);
			usleep(200);
		}
	__atomic_store_n(&lookups_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	world_stop(&w);
	for (int k = 0; k < 4; k++)
		conf_clear(&c[k]);
}

/*
 * NOTIFYs coalesce: the first makes the zone's refresh due, the ones that
 * find it pending are counted and change nothing, and the zone is asked
 * once (issue 30: every NOTIFY made a transfer).
 */
static void test_notify_coalesced(void)
{
	world_t w;
	CU_ASSERT_FATAL(world_start(&w) == 0);
	uint8_t apex[NAME_MAXLEN];
	CU_ASSERT_FATAL(name_from_text("a.test", NULL, apex) > 0);
	CU_ASSERT_TRUE(sched_notify(w.s, apex, true, 7));
	for (int k = 0; k < 50; k++)
		CU_ASSERT_FALSE(sched_notify(w.s, apex, true, 7));
	CU_ASSERT_STRING_EQUAL(str(next_transfer(w.p, 3, WAIT_MS)), "a.test");
	CU_ASSERT_EQUAL(__atomic_load_n(&w.sched_counters.notify_coalesced, __ATOMIC_RELAXED), 50);
	/* asked once: nothing more comes within the NOTIFY gap and a half */
	CU_ASSERT_PTR_NULL(next_transfer(w.p, 3, 1500));
	world_stop(&w);
}

/*
 * A zone's file write (zonefile-sync): the first new version plans it
 * sync seconds on; versions published before it fires keep that time (one
 * write for them all, never put off by a stream of changes); with sync 0
 * it is due at once.
 */
static void test_flush_coalesced(void)
{
	int64_t now = 1000000;
	int64_t planned = sched_flush_due(-1, now, 3);
	CU_ASSERT_EQUAL(planned, now + 3000);
	for (int64_t later = now; later < planned; later += 500)
		CU_ASSERT_EQUAL(sched_flush_due(planned, later, 3), planned);
	CU_ASSERT_EQUAL(sched_flush_due(-1, now, 0), now);
	CU_ASSERT_EQUAL(sched_flush_due(-1, now, CONF_ZONEFILE_SYNC_MAX),
			now + (int64_t)CONF_ZONEFILE_SYNC_MAX * 1000);
}

int main(int argc, char **argv)
{
	rcu_register_thread();
	static const unit_test_t tests[] = {
		UNIT_TEST(test_notify_before_reconfig_applied),
		UNIT_TEST(test_reconfig_one),
		UNIT_TEST(test_reconfig_one_costs_one),
		UNIT_TEST(test_reconfig_out_of_memory),
		UNIT_TEST(test_notify_coalesced),
		UNIT_TEST(test_lookups_during_reconfig),
		UNIT_TEST(test_lookups_during_reconfig_one),
		UNIT_TEST(test_flush_coalesced),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "sched", tests);
	rcu_unregister_thread();
	return rc;
}
