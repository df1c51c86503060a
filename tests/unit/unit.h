/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A small frame for the CUnit test binaries: one binary per module, one case or all. */
#ifndef SHOAL_TESTS_UNIT_H
#define SHOAL_TESTS_UNIT_H

#include <CUnit/Basic.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* One test: a name and a function. */
typedef struct unit_test {
	const char *name;
	void (*fn)(void);
} unit_test_t;

#define UNIT_TEST(fn)   \
	{               \
#fn, fn \
	}
#define UNIT_END           \
	{                  \
		NULL, NULL \
	}

/*
 * The path of rel, a file of the source tree, written into buf[0..cap):
 * under $SHOAL_SRCDIR (make check sets it), else under the current folder.
 * Returns buf.
 */
static inline char *unit_src_path(char *buf, size_t cap, const char *rel)
{
	const char *src = getenv("SHOAL_SRCDIR");
	snprintf(buf, cap, "%s/%s", src ? src : ".", rel);
	return buf;
}

/*
 * Write text[0..len) to a new file named after the template path
 * ("/tmp/shoal-x.XXXXXX", completed in place, as mkstemp does). Returns 0,
 * or -1 when it cannot. The caller removes the file.
 */
static inline int unit_temp_file(char *path, const void *text, size_t len)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	bool whole = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return whole ? 0 : -1;
}

/*
 * Run fn(arg) in a forked child and return its wait status (the child
 * exits 0 when fn returns; 10 s at most): how a case shows that an
 * assert fires without ending the binary. The child writes no core file,
 * and its stderr (the assert's message) is discarded.
 */
static inline int unit_in_child(void (*fn)(void *arg), void *arg)
{
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		alarm(10);
		fn(arg);
		_exit(0);
	}
	int status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/*
 * A child's status (unit_in_child) says an assert stopped it: SIGABRT. With
 * NDEBUG the asserts are compiled out and the child ends normally instead.
 */
static inline bool unit_aborted(int status)
{
#ifdef NDEBUG
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
#else
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
#endif
}

/* A case's name as run and listed: without the "test_" its function has. */
static inline const char *unit_name(const char *name)
{
	return strncmp(name, "test_", 5) == 0 ? name + 5 : name;
}

/* The case called `arg` (with or without "test_"), or NULL. */
static inline const unit_test_t *unit_find(const unit_test_t *tests, const char *arg)
{
	for (const unit_test_t *t = tests; t->name; t++)
		if (strcmp(unit_name(t->name), unit_name(arg)) == 0)
			return t;
	return NULL;
}

/*
 * Run the cases of one binary in CUnit's basic mode and return the process
 * exit status: 0 when every assertion passed. The command line chooses:
 *   (nothing)      every case, as make check runs them
 *   NAME...        only these cases (as --list prints them, or with "test_")
 *   --list         print the names, one a line, and run nothing
 *   -h, --help     say so
 * A name that is no case's is a usage error (status 2). The summary CUnit
 * prints ends each log, so a binary that ran nothing is visible.
 */
static inline int unit_run(int argc, char **argv, const char *suite_name, const unit_test_t *tests)
{
	static const char usage[] = "usage: %s [CASE... | --list]\n";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf(usage, argv[0]);
			return 0;
		}
		if (strcmp(argv[i], "--list") == 0) {
			for (const unit_test_t *t = tests; t->name; t++)
				printf("%s\n", unit_name(t->name));
			return 0;
		}
		if (argv[i][0] == '-' || !unit_find(tests, argv[i])) {
			fprintf(stderr, usage, argv[0]);
			fprintf(stderr, "%s: no case %s (--list names them)\n", suite_name,
				argv[i]);
			return 2;
		}
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
	if (!suite)
		return 99;
	for (const unit_test_t *t = tests; t->name; t++) {
		bool chosen = argc < 2;
		for (int i = 1; i < argc && !chosen; i++)
			chosen = unit_find(tests, argv[i]) == t;
		if (chosen && !CU_add_test(suite, unit_name(t->name), t->fn))
			return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
	unsigned run = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	if (run == 0) {
		fprintf(stderr, "%s: no test ran\n", suite_name);
		return 1;
	}
	return failed ? 1 : 0;
}

#endif
