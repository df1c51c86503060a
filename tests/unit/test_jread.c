/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/events/jread.c and server/common/waker.c: reads off the loop, rung back. */
#include "config.h"

#include <stdlib.h>
#include <time.h>
#include <uv.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "server/common/waker.h"
#include "server/events/jread.h"
#include "unit.h"

static char tmpdir[] = "/tmp/shoal-jread-XXXXXX";
static int rings;

static void on_ring(void *arg)
{
	(*(int *)arg)++;
}

/* A changeset of j.test from..to: the two SOAs and one TXT record. */
static changeset_t *make_cs(uint32_t from, uint32_t to)
{
	changeset_t *cs = changeset_new();
	uint8_t apex[NAME_MAXLEN], soa[22] = { 0 }, txt[] = { 3, 'a', 'b', 'c' };
	name_from_text("j.test.", NULL, apex);
	soa[5] = (uint8_t)from;
	changeset_add(cs, false, apex, DNS_TYPE_SOA, 60, soa, 22);
	soa[5] = (uint8_t)to;
	changeset_add(cs, true, apex, DNS_TYPE_SOA, 60, soa, 22);
	txt[1] = (uint8_t)('a' + to);
	changeset_add(cs, true, apex, DNS_TYPE_TXT, 60, txt, sizeof(txt));
	changeset_seal(cs);
	return cs;
}

/* A journal of j.test from serial 1 to 4; in the file path when not NULL. */
static journal_t *history(const char *path)
{
	journal_t *j = journal_new(1 << 20);
	if (path)
		CU_ASSERT_EQUAL(journal_set_file(j, path, NULL), 0);
	for (uint32_t s = 1; s < 4; s++)
		CU_ASSERT_EQUAL(journal_add(j, make_cs(s, s + 1)), 0);
	return j;
}

/* Run loop until *count reaches want, 10 s at most. */
static bool run_until(uv_loop_t *loop, int *count, int want)
{
	for (int i = 0; i < 1000 && *count < want; i++) {
		uv_run(loop, UV_RUN_NOWAIT);
		struct timespec gap = { 0, 10 * 1000000L };
		nanosleep(&gap, NULL);
	}
	return *count >= want;
}

/* Wait until job is done (10 s at most); its rc and changes. */
static bool wait_done(jread_job_t *job, int *rc, xfr_changes_t *out)
{
	for (int i = 0; i < 1000; i++) {
		if (jread_done(job, rc, out))
			return true;
		struct timespec gap = { 0, 10 * 1000000L };
		nanosleep(&gap, NULL);
	}
	return false;
}

/* A read is done on the reader, the loop's waker rung, the changes condensed (RFC 1995 6). */
static void test_read_rings_the_loop(void)
{
	uv_loop_t loop;
	uv_loop_init(&loop);
	rings = 0;
	waker_t *w = waker_new(&loop, on_ring, &rings);
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	journal_t *j = history(NULL);
	jread_t *r = jread_start(4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	int err = 0, rc = -1;
	jread_job_t *job = jread_post(r, j, 1, 4, w, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(job);
	CU_ASSERT_TRUE(run_until(&loop, &rings, 1));
	xfr_changes_t got;
	CU_ASSERT_TRUE(jread_done(job, &rc, &got));
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(got.count, 1); /* 1 to 4 in one */
	xfr_changes_clear(&got);
	jread_job_unref(job);
	/* a history that does not lead there: said as journal_changes says it */
	job = jread_post(r, j, 7, 9, w, &err);
	CU_ASSERT_TRUE(run_until(&loop, &rings, 2));
	CU_ASSERT_TRUE(jread_done(job, &rc, &got));
	CU_ASSERT_EQUAL(rc, SHOAL_ENOTFOUND);
	jread_job_unref(job);
	/* a job let go before it is read: the reader drops its result */
	jread_job_unref(jread_post(r, j, 1, 4, w, &err));
	jread_stop(r);
	journal_unref(j);
	/* rung after the loop closed it: nothing runs, nothing breaks */
	waker_ref(w);
	waker_close(w);
	uv_run(&loop, UV_RUN_DEFAULT);
	int before = rings;
	waker_wake(w);
	uv_run(&loop, UV_RUN_NOWAIT);
	CU_ASSERT_EQUAL(rings, before);
	waker_unref(w);
	CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
}

/*
 * Reads of a journal file while one is held (SHOAL_TEST_JOURNAL_READ_HOLD):
 * one more waits in the queue, the next past its bound is refused
 * (SHOAL_ESPACE); released, each is done, none lost.
 */
static void test_queue_bound(void)
{
	char path[256], hold[256], held[256];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/j.journal", tmpdir);
	snprintf(hold, sizeof(hold), "%s/hold", tmpdir);
	snprintf(held, sizeof(held), "%s/hold.held", tmpdir);
	journal_t *j = history(path);
	close(open(hold, O_WRONLY | O_CREAT, 0600));
	setenv("SHOAL_TEST_JOURNAL_READ_HOLD", hold, 1);
	jread_t *r = jread_start(1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	int err = 0, rc[2] = { -1, -1 };
	jread_job_t *first = jread_post(r, j, 1, 4, NULL, &err);
	for (int i = 0; i < 1000 && access(held, F_OK) != 0; i++)
		usleep(10000);
	CU_ASSERT_EQUAL(access(held, F_OK), 0); /* the reader holds the first */
	jread_job_t *second = jread_post(r, j, 2, 4, NULL, &err);
	CU_ASSERT_PTR_NOT_NULL(second);
	CU_ASSERT_PTR_NULL(jread_post(r, j, 3, 4, NULL, &err));
	CU_ASSERT_EQUAL(err, SHOAL_ESPACE);
	unlink(hold);
	xfr_changes_t got[2];
	CU_ASSERT_TRUE(wait_done(first, &rc[0], &got[0]));
	CU_ASSERT_TRUE(wait_done(second, &rc[1], &got[1]));
	CU_ASSERT_EQUAL(rc[0], 0);
	CU_ASSERT_EQUAL(rc[1], 0);
	CU_ASSERT_EQUAL(got[0].count, 1);
	xfr_changes_clear(&got[0]);
	xfr_changes_clear(&got[1]);
	jread_job_unref(first);
	jread_job_unref(second);
	jread_stop(r);
	unsetenv("SHOAL_TEST_JOURNAL_READ_HOLD");
	journal_drop_file(j);
	journal_unref(j);
	unlink(held);
	rmdir(tmpdir);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_read_rings_the_loop),
		UNIT_TEST(test_queue_bound),
		UNIT_END,
	};
	return unit_run(argc, argv, "jread", tests);
}
