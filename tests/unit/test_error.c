/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/error.c: Shoal's own codes and system errors, apart and named. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proto/error.h"
#include "tests/unit/unit.h"

/* Every code of the table, for the loops below. */
static const int own[] = {
#define OWN(name, n, msg) name,
	SHOAL_ERRORS(OWN)
#undef OWN
};
#define OWN_COUNT (sizeof(own) / sizeof(own[0]))

static void test_own_codes(void)
{
	CU_ASSERT_STRING_EQUAL(shoal_strerror(0), "success");
	CU_ASSERT_STRING_EQUAL(shoal_errname(0), "SHOAL_OK");
	CU_ASSERT_STRING_EQUAL(shoal_strerror(SHOAL_ESPACE), "no space left in buffer");
	CU_ASSERT_STRING_EQUAL(shoal_strerror(SHOAL_ENOMEM), "out of memory");
	CU_ASSERT_STRING_EQUAL(shoal_errname(SHOAL_EMALFORMED), "SHOAL_EMALFORMED");
	CU_ASSERT_EQUAL(SHOAL_ENOMEM, SHOAL_ERROR_BASE);
	/* all below the system range, all apart, each with its own name */
	for (size_t i = 0; i < OWN_COUNT; i++) {
		CU_ASSERT_TRUE(own[i] <= SHOAL_ERROR_BASE);
		CU_ASSERT_FALSE(shoal_error_is_system(own[i]));
		CU_ASSERT_STRING_NOT_EQUAL(shoal_strerror(own[i]), "unknown error");
		CU_ASSERT_EQUAL(strncmp(shoal_errname(own[i]), "SHOAL_E", 7), 0);
		for (size_t j = 0; j < i; j++)
			CU_ASSERT_NOT_EQUAL(own[i], own[j]);
	}
}

/* -errno carries the reason of a failed call: the C library's message and name. */
static void test_system_codes(void)
{
	CU_ASSERT_TRUE(shoal_error_is_system(-ENOENT));
	CU_ASSERT_TRUE(shoal_error_is_system(-EADDRINUSE));
	CU_ASSERT_TRUE(shoal_error_is_system(-4095)); /* the kernel's largest, libuv's UV_EOF */
	CU_ASSERT_FALSE(shoal_error_is_system(0));
	CU_ASSERT_FALSE(shoal_error_is_system(ENOENT));
	CU_ASSERT_STRING_EQUAL(shoal_strerror(-ENOENT), strerror(ENOENT));
	CU_ASSERT_STRING_EQUAL(shoal_strerror(-EADDRINUSE), "Address already in use");
	CU_ASSERT_STRING_EQUAL(shoal_strerror(-ENOMEM), "Cannot allocate memory");
	CU_ASSERT_STRING_EQUAL(shoal_errname(-EADDRINUSE), "EADDRINUSE");
	CU_ASSERT_STRING_EQUAL(shoal_errname(-EMFILE), "EMFILE");
	/* every errno the C library knows reads as a system error, never as Shoal's */
	bool apart = true;
	for (int e = 1; e < 4096; e++)
		for (size_t i = 0; i < OWN_COUNT; i++)
			apart &= -e != own[i];
	CU_ASSERT_TRUE(apart);
}

/* Codes in neither range, and system numbers with no meaning, are unknown. */
static void test_unknown_codes(void)
{
	CU_ASSERT_STRING_EQUAL(shoal_strerror(-9999), "unknown error");
	CU_ASSERT_STRING_EQUAL(shoal_errname(-9999), "SHOAL_EUNKNOWN");
	CU_ASSERT_STRING_EQUAL(shoal_strerror(42), "unknown error");
	CU_ASSERT_STRING_EQUAL(shoal_strerror(-4000), "unknown error");
	CU_ASSERT_STRING_EQUAL(shoal_errname(-4000), "SHOAL_EUNKNOWN");
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_own_codes),
		UNIT_TEST(test_system_codes),
		UNIT_TEST(test_unknown_codes),
		UNIT_END,
	};
	return unit_run(argc, argv, "error", tests);
}
