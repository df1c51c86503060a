/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/mainthread.c: a main-thread function called from another thread
 * aborts. */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/*
 * In a child (the abort must not end the test binary): make its thread
 * the main one when `set`, then call a main-thread function from a new
 * thread when `other`, else from the main thread. Returns the child's
 * wait status.
 */
static int child_calls(bool set, bool other)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none); /* no core file from the expected abort */
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDERR_FILENO); /* nor the assert's message in the log */
		alarm(10);
		if (set)
			main_thread_set();
		pthread_t t;
		if (!other)
			call_main_only(NULL);
		else if (pthread_create(&t, NULL, call_main_only, NULL) != 0 ||
			 pthread_join(t, NULL) != 0)
			_exit(3);
		_exit(0);
	}
	int status = -1;
	CU_ASSERT_FATAL(pid > 0);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	return status;
}

/* Another thread calling a main-thread function aborts the process. */
static void test_other_thread_aborts(void)
{
	int status = child_calls(true, true);
#ifdef NDEBUG
	CU_ASSERT_TRUE(WIFEXITED(status) &&
		       WEXITSTATUS(status) == 0); /* the check is compiled out */
#else
	CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
#endif
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
