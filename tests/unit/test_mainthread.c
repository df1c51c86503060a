/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/mainthread.c: a main-thread function called from another thread
 * aborts. */
#include "config.h"

#include <pthread.h>

#include "server/common/mainthread.h"
#include "server/net/socket.h"
#include "unit.h"

/* A function whose header comment says "Main thread": closing no set does nothing else. */
static void *call_main_only(void *arg)
{
	(void)arg;
	socket_set_close(NULL);
	return NULL;
}

/* How the child calls it: after main_thread_set or not, from another thread or not. */
typedef struct how {
	bool set, other;
} how_t;

static void child(void *arg)
{
	const how_t *how = arg;
	if (how->set)
		main_thread_set();
	pthread_t t;
	if (!how->other)
		call_main_only(NULL);
	else if (pthread_create(&t, NULL, call_main_only, NULL) != 0 || pthread_join(t, NULL) != 0)
		_exit(3);
}

static int child_calls(bool set, bool other)
{
	how_t how = { set, other };
	return unit_in_child(child, &how);
}

/* Another thread calling a main-thread function aborts the process. */
static void test_other_thread_aborts(void)
{
	CU_ASSERT_TRUE(unit_aborted(child_calls(true, true)));
}

/* The main thread itself passes. */
static void test_main_thread_passes(void)
{
	int status = child_calls(true, false);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Before main_thread_set every thread passes: what unit tests without a daemon rely on. */
static void test_unset_passes(void)
{
	int status = child_calls(false, true);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_TRUE(main_thread_is_current());
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_other_thread_aborts),
		UNIT_TEST(test_main_thread_passes),
		UNIT_TEST(test_unset_passes),
		UNIT_END,
	};
	return unit_run(argc, argv, "mainthread", tests);
}
