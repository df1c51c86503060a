/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tests for server/events/reload.c: a reconfig the main loop never heard of is answered at close;
 * the first load; one zone; a reconfig reads the files changed on disk. */
#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>
#include <uv.h>

#include "proto/error.h"
#include "server/conf/conf.h"
#include "server/events/reload.h"
#include "unit.h"
#include "zone/zonedb.h"

typedef struct done_seen {
	int calls;
	int rc;
	char changed[256];
} done_seen_t;

static void on_done(void *arg, const reload_result_t *res)
{
	done_seen_t *d = arg;
	d->calls++;
	d->rc = res->rc;
	snprintf(d->changed, sizeof(d->changed), "%s", res->changed);
}

/* r set up for cfg's zones, loaded and published in *zones, attached to loop (made). */
static void loaded(reload_t *r, const conf_t *cfg, zonedb_ref_t *zones, uv_loop_t *loop)
{
	reload_init(r, cfg, zones);
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(reload_load(r, false, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(loop), 0);
	CU_ASSERT_EQUAL_FATAL(reload_attach(r, loop), 0);
}

/* Whether the set served is owned by cfg (the reload thread published it). */
static bool owned_by(zonedb_ref_t *zones, const conf_t *cfg)
{
	zonedb_read_lock();
	bool is = zonedb_owner(zonedb_current(zones)) == cfg;
	zonedb_read_unlock(zones);
	return is;
}

/*
 * The reconfig's thread publishes its set, then the server stops before
 * its main loop ran again (on_reload_done never came): reload_close calls
 * done once, with r->cfg the reconfig's, so the caller frees what the
 * request owns exactly once.
 */
static void test_close_answers_published_reconfig(void)
{
	rcu_register_thread();
	conf_t cfg, next;
	char path[4096];
	CU_ASSERT_EQUAL_FATAL(conf_init(&cfg), 0);
	unit_src_path(path, sizeof(path), "examples/example.com.zone");
	CU_ASSERT_EQUAL_FATAL(conf_zone_add(&cfg, "example.com", path), 0);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&next, &cfg), 0);
	zonedb_ref_t zones = { 0 };
	reload_t r;
	uv_loop_t loop;
	loaded(&r, &cfg, &zones, &loop);
	done_seen_t seen = { 0 };
	CU_ASSERT_EQUAL_FATAL(reload_reconfig(&r, &next, false, on_done, &seen), 0);
	/* the thread publishes; the loop is not run, as after uv_stop */
	for (int i = 0; i < 6000 && !owned_by(&zones, &next); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000L }, NULL);
	CU_ASSERT_FATAL(owned_by(&zones, &next));
	CU_ASSERT_EQUAL(seen.calls, 0);
	r.stopping = true;
	CU_ASSERT_FALSE(reload_close(&r));
	CU_ASSERT_EQUAL(seen.calls, 1);
	CU_ASSERT_EQUAL(seen.rc, 0);
	CU_ASSERT_PTR_EQUAL(r.cfg, &next);
	uv_run(&loop, UV_RUN_DEFAULT); /* the handles' close callbacks */
	CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
	reload_clear(&r);
	conf_clear(&next);
	conf_clear(&cfg);
	rcu_unregister_thread();
}

/* Run the loop until *flag is set (the reload's results arrive there), for at most 60 s. */
static void run_until(uv_loop_t *loop, const bool *flag)
{
	for (int i = 0; i < 6000 && !*flag; i++) {
		uv_run(loop, UV_RUN_NOWAIT);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000L }, NULL);
	}
}

static void set_flag(void *arg)
{
	*(bool *)arg = true;
}

/* The version zone i of the set served, inside a read section. */
static const struct zone *served(zonedb_ref_t *zones, size_t i)
{
	zonedb_read_lock();
	const struct zone *z = zonedb_zone(zonedb_current(zones), i);
	zonedb_read_unlock(zones);
	return z;
}

static const zonedb_t *current(zonedb_ref_t *zones)
{
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(zones);
	zonedb_read_unlock(zones);
	return db;
}

/*
 * Many zones at start: the set is published before any file is read (every
 * zone configured, serving nothing: SERVFAIL), then the zones are read on
 * the reload thread, each served as it loads, with the progress counted;
 * done comes once all are. A reload of one zone then swaps that zone's
 * version in the set served: the set is the same, and every other zone
 * keeps its version, pointer for pointer; so does a transfer's
 * reload_replace_zone.
 */
static void test_first_load_and_one_zone(void)
{
	enum { N = 2000 };
	rcu_register_thread();
	conf_t cfg;
	char path[4096], name[32];
	CU_ASSERT_EQUAL_FATAL(conf_init(&cfg), 0);
	/* relative names only: one file loads as any zone */
	char dir[] = "/tmp/shoal-reload-XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/relative.zone", dir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("$TTL 300\n@ IN SOA ns1 hm 1 2 3 4 5\n@ IN NS ns1\nns1 IN A 192.0.2.1\n", f);
	fclose(f);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "z%d.test", i);
		CU_ASSERT_EQUAL_FATAL(conf_zone_add(&cfg, name, path), 0);
	}
	zonedb_ref_t zones = { 0 };
	reload_t r;
	reload_init(&r, &cfg, &zones);
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(reload_load(&r, true, err, sizeof(err)), 0);
	uint8_t apex[] = "\2z7\4test";
	bool configured = false;
	zonedb_read_lock();
	CU_ASSERT_PTR_NULL(zonedb_match(zonedb_current(&zones), apex, &configured));
	zonedb_read_unlock(&zones);
	CU_ASSERT_TRUE(configured); /* configured, not loaded: SERVFAIL */
	uv_loop_t loop;
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
	CU_ASSERT_EQUAL_FATAL(reload_attach(&r, &loop), 0);
	bool loaded = false;
	CU_ASSERT_EQUAL_FATAL(reload_load_rest(&r, set_flag, &loaded), 0);
	size_t done, total;
	CU_ASSERT_TRUE(reload_loading(&r, &done, &total));
	CU_ASSERT_EQUAL(total, N);
	run_until(&loop, &loaded);
	CU_ASSERT_FATAL(loaded);
	CU_ASSERT_FALSE(reload_loading(&r, &done, &total));
	CU_ASSERT_EQUAL(done, N);
	const struct zone *before[N];
	for (size_t i = 0; i < N; i++) {
		before[i] = served(&zones, i);
		CU_ASSERT_PTR_NOT_NULL(before[i]);
	}
	const zonedb_t *set = current(&zones);

	/* one zone reloaded: in place, the others untouched */
	done_seen_t seen = { 0 };
	CU_ASSERT_EQUAL_FATAL(reload_start(&r, "Z1234.test.", on_done, &seen), 0);
	for (int i = 0; i < 6000 && !seen.calls; i++) {
		uv_run(&loop, UV_RUN_NOWAIT);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000L }, NULL);
	}
	CU_ASSERT_EQUAL(seen.calls, 1);
	CU_ASSERT_EQUAL(seen.rc, 0);
	CU_ASSERT_PTR_EQUAL(current(&zones), set);
	size_t same = 0;
	for (size_t i = 0; i < N; i++)
		same += served(&zones, i) == before[i];
	CU_ASSERT_EQUAL(same, N - 1);
	CU_ASSERT_PTR_NOT_EQUAL(served(&zones, 1234), before[1234]);
	CU_ASSERT_PTR_NOT_NULL(served(&zones, 1234));

	/* a transfer's version (zone 1's stands in), and an expiry: the same */
	uint8_t z5[] = "\2z5\4test";
	CU_ASSERT_EQUAL(reload_replace_zone(&r, z5, before[1], NULL, NULL), 0);
	CU_ASSERT_PTR_EQUAL(served(&zones, 5), before[1]);
	CU_ASSERT_EQUAL(reload_replace_zone(&r, z5, NULL, "expired", NULL), 0);
	CU_ASSERT_PTR_NULL(served(&zones, 5));
	CU_ASSERT_PTR_EQUAL(current(&zones), set);
	same = 0;
	for (size_t i = 0; i < N; i++)
		same += served(&zones, i) == before[i];
	CU_ASSERT_EQUAL(same, N - 2);
	uint8_t none[] = "\4none\4test";
	CU_ASSERT_EQUAL(reload_replace_zone(&r, none, NULL, NULL, NULL), SHOAL_ENOTFOUND);

	CU_ASSERT_FALSE(reload_close(&r));
	uv_run(&loop, UV_RUN_DEFAULT);
	CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
	reload_clear(&r);
	conf_clear(&cfg);
	unlink(path);
	rmdir(dir);
	rcu_unregister_thread();
}

/* Write zone NAME with SERIAL to dir/NAME.zone, modified at `when` (seconds). */
static void write_zone(const char *dir, const char *name, unsigned serial, time_t when)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s.zone", dir, name);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hm %u 3600 600 86400 300\n@ NS ns1\n", name,
		serial);
	fprintf(f, "ns1 A 192.0.2.1\n");
	fclose(f);
	struct timespec t[2] = { { .tv_sec = when }, { .tv_sec = when } };
	CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* A reconfig of cfg (a copy of from with every zone kept) with check_files; its result. */
static void reconfig_kept(reload_t *r, uv_loop_t *loop, conf_t *cfg, const conf_t *from,
			  bool check_files, done_seen_t *seen)
{
	CU_ASSERT_EQUAL_FATAL(conf_copy(cfg, from), 0);
	for (size_t i = 0; i < cfg->zone_count; i++)
		conf_zone_spec_mut(cfg, i)->keep =
			true; /* as zones_compare marks a zone whose settings stay */
	*seen = (done_seen_t){ 0 };
	CU_ASSERT_EQUAL_FATAL(reload_reconfig(r, cfg, check_files, on_done, seen), 0);
	for (int i = 0; i < 6000 && !seen->calls; i++) {
		uv_run(loop, UV_RUN_NOWAIT);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000L }, NULL);
	}
	CU_ASSERT_EQUAL(seen->calls, 1);
	CU_ASSERT_EQUAL(seen->rc, 0);
}

/*
 * A reconfig reads again a zone its configuration keeps when the file
 * changed on disk since the version served was loaded, and names it with
 * its serials; a zone whose file is older keeps its version, pointer for
 * pointer. The control run: without check_files (zone-add's), the change
 * on disk is not seen.
 */
static void test_reconfig_reads_changed_files(void)
{
	rcu_register_thread();
	char dir[] = "/tmp/shoal-test-reload.XXXXXX", path[600];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	time_t now = time(NULL);
	write_zone(dir, "a.test", 1, now - 100);
	write_zone(dir, "b.test", 1, now - 100);
	conf_t cfg, next, next2;
	CU_ASSERT_EQUAL_FATAL(conf_init(&cfg), 0);
	for (const char *const *n = (const char *const[]){ "a.test", "b.test", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s.zone", dir, *n);
		CU_ASSERT_EQUAL_FATAL(conf_zone_add(&cfg, *n, path), 0);
	}
	zonedb_ref_t zones = { 0 };
	reload_t r;
	uv_loop_t loop;
	loaded(&r, &cfg, &zones, &loop);
	const struct zone *a = served(&zones, 0), *b = served(&zones, 1);
	write_zone(dir, "b.test", 2, now + 2);
	done_seen_t seen;
	reconfig_kept(&r, &loop, &next, &cfg, false, &seen);
	CU_ASSERT_STRING_EQUAL(seen.changed, "");
	CU_ASSERT_PTR_EQUAL(served(&zones, 1), b); /* the loss the check is for */
	reconfig_kept(&r, &loop, &next2, &next, true, &seen);
	CU_ASSERT_STRING_EQUAL(seen.changed, "b.test. (serial 1 -> 2)");
	CU_ASSERT_PTR_EQUAL(served(&zones, 0), a);
	CU_ASSERT_PTR_NOT_EQUAL(served(&zones, 1), b);
	CU_ASSERT_FALSE(reload_close(&r));
	uv_run(&loop, UV_RUN_DEFAULT);
	CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
	reload_clear(&r);
	conf_clear(&cfg);
	conf_clear(&next);
	conf_clear(&next2);
	for (const char *const *n = (const char *const[]){ "a.test", "b.test", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s.zone", dir, *n);
		unlink(path);
	}
	rmdir(dir);
	rcu_unregister_thread();
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_close_answers_published_reconfig),
		UNIT_TEST(test_first_load_and_one_zone),
		UNIT_TEST(test_reconfig_reads_changed_files),
		UNIT_END,
	};
	return unit_run(argc, argv, "reload", tests);
}
