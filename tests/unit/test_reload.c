/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tests for server/events/reload.c: a reconfig the main loop never heard of is answered at close.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
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
} done_seen_t;

static void on_done(void *arg, int rc, const char *messages)
{
	done_seen_t *d = arg;
	d->calls++;
	d->rc = rc;
	(void)messages;
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
	reload_init(&r, &cfg, &zones);
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(reload_load(&r, err, sizeof(err)), 0);
	uv_loop_t loop;
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
	CU_ASSERT_EQUAL_FATAL(reload_attach(&r, &loop), 0);
	done_seen_t seen = { 0 };
	CU_ASSERT_EQUAL_FATAL(reload_reconfig(&r, &next, on_done, &seen), 0);
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

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_close_answers_published_reconfig),
		UNIT_END,
	};
	return unit_run(argc, argv, "reload", tests);
}
