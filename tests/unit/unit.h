/* A small frame for the CUnit test binaries: one binary per module. */
#ifndef SHOAL_TESTS_UNIT_H
#define SHOAL_TESTS_UNIT_H

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

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
 * Run one suite of tests in CUnit's basic mode and return the process exit
 * status: 0 when every assertion passed. The summary CUnit prints ends each
 * log, so a binary that ran nothing is visible.
 */
static inline int unit_run(const char *suite_name, const unit_test_t *tests)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
	if (!suite)
		return 99;
	for (const unit_test_t *t = tests; t->name; t++)
		if (!CU_add_test(suite, t->name, t->fn))
			return 99;
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
