/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/serial.h: RFC 1982 serial arithmetic, wrap-around and undefined pairs. */
#include "config.h"

#include "proto/serial.h"
#include "tests/unit/unit.h"

static void test_plain_order(void)
{
	CU_ASSERT_EQUAL(serial_compare(7, 7), SERIAL_EQUAL);
	CU_ASSERT_EQUAL(serial_compare(1, 2), SERIAL_LESS);
	CU_ASSERT_EQUAL(serial_compare(2, 1), SERIAL_GREATER);
	CU_ASSERT_TRUE(serial_lt(2026120301, 2026120302));
	CU_ASSERT_TRUE(serial_gt(2026120302, 2026120301));
	CU_ASSERT_FALSE(serial_lt(5, 5));
	CU_ASSERT_FALSE(serial_gt(5, 5));
	/* the farthest apart two serials can be and still compare */
	CU_ASSERT_TRUE(serial_lt(0, 0x7fffffff));
	CU_ASSERT_TRUE(serial_gt(0x7fffffff, 0));
}

static void test_wrap_around(void)
{
	/* RFC 1982 3.2: the order wraps: 0xffffffff is older than 0 and than 5 */
	CU_ASSERT_TRUE(serial_lt(0xffffffff, 0));
	CU_ASSERT_TRUE(serial_gt(0, 0xffffffff));
	CU_ASSERT_TRUE(serial_lt(0xfffffff0, 5));
	/* and a number far above is older, not newer */
	CU_ASSERT_TRUE(serial_gt(0, 0x80000001));
	CU_ASSERT_TRUE(serial_lt(0x80000001, 0));
	CU_ASSERT_TRUE(serial_lt(0x80000000, 0xffffffff));
}

static void test_undefined(void)
{
	/* exactly 2^31 apart: neither order holds, in either direction */
	uint32_t pairs[][2] = { { 0, 0x80000000 },
				{ 0x80000000, 0 },
				{ 1, 0x80000001 },
				{ 0xffffffff, 0x7fffffff },
				{ 0x12345678, 0x92345678 } };
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		CU_ASSERT_EQUAL(serial_compare(pairs[i][0], pairs[i][1]), SERIAL_UNDEFINED);
		CU_ASSERT_FALSE(serial_lt(pairs[i][0], pairs[i][1]));
		CU_ASSERT_FALSE(serial_gt(pairs[i][0], pairs[i][1]));
	}
}

static void test_addition(void)
{
	CU_ASSERT_EQUAL(serial_add(1, 1), 2);
	CU_ASSERT_EQUAL(serial_add(0xffffffff, 1), 0);
	CU_ASSERT_EQUAL(serial_add(0xfffffffe, 10), 8);
	CU_ASSERT_TRUE(serial_gt(serial_add(0xfffffffe, 10), 0xfffffffe));
	/* RFC 1982 3.1: at most 2^31 - 1 may be added, and the sum is newer */
	CU_ASSERT_EQUAL(serial_add(0, 0x7fffffff), 0x7fffffff);
	CU_ASSERT_EQUAL(serial_add(0, 0x80000000), 0x7fffffff);
	CU_ASSERT_EQUAL(serial_add(0, 0xffffffff), 0x7fffffff);
	CU_ASSERT_TRUE(serial_gt(serial_add(42, 0xffffffff), 42));
	CU_ASSERT_EQUAL(serial_add(42, 0), 42);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_plain_order),
		UNIT_TEST(test_wrap_around),
		UNIT_TEST(test_undefined),
		UNIT_TEST(test_addition),
		UNIT_END,
	};
	return unit_run(argc, argv, "serial", tests);
}
