/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/wire.h (the bounds-checked cursor) and proto/error.c. */
#include <string.h>

#include "proto/error.h"
#include "proto/wire.h"
#include "tests/unit/unit.h"

static void test_read_in_bounds(void)
{
	const uint8_t buf[] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde };
	wire_t w;
	wire_init_read(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(wire_read_u8(&w), 0x12);
	CU_ASSERT_EQUAL(wire_read_u16(&w), 0x3456);
	CU_ASSERT_EQUAL(wire_read_u32(&w), 0x789abcde);
	CU_ASSERT_EQUAL(w.err, 0);
	CU_ASSERT_EQUAL(wire_left(&w), 0);
}

static void test_read_overrun_sticks(void)
{
	const uint8_t buf[] = { 0x01, 0x02, 0x03 };
	wire_t w;
	wire_init_read(&w, buf, sizeof(buf));
	CU_ASSERT_EQUAL(wire_read_u16(&w), 0x0102);
	CU_ASSERT_EQUAL(wire_read_u16(&w), 0);
	CU_ASSERT_EQUAL(w.err, SHOAL_EMALFORMED);
	/* later calls are ignored, even ones that would fit */
	CU_ASSERT_EQUAL(wire_read_u8(&w), 0);
	CU_ASSERT_PTR_NULL(wire_read_ptr(&w, 0));
	CU_ASSERT_EQUAL(w.pos, 2);
}

static void test_write_overrun(void)
{
	uint8_t buf[5];
	wire_t w;
	wire_init_write(&w, buf, sizeof(buf));
	wire_write_u32(&w, 0xdeadbeef);
	CU_ASSERT_EQUAL(w.err, 0);
	wire_write_u16(&w, 0x1234);
	CU_ASSERT_EQUAL(w.err, SHOAL_ESPACE);
	CU_ASSERT_EQUAL(w.pos, 4);
	CU_ASSERT_EQUAL(buf[0], 0xde);
	CU_ASSERT_EQUAL(buf[3], 0xef);
	wire_put_u16_at(&w, 4, 1);
	CU_ASSERT_EQUAL(w.err, SHOAL_ESPACE);
}

static void seek_past_end(void *arg)
{
	wire_t *w = arg;
	wire_seek(w, w->len + 1);
}

/* The cursor is moved to any offset up to its end, and never past it: that aborts. */
static void test_seek(void)
{
	const uint8_t buf[] = { 0x01, 0x02, 0x03 };
	wire_t w;
	wire_init_read(&w, buf, sizeof(buf));
	wire_seek(&w, 1);
	CU_ASSERT_EQUAL(wire_read_u16(&w), 0x0203);
	wire_seek(&w, sizeof(buf));
	CU_ASSERT_EQUAL(wire_left(&w), 0);
	CU_ASSERT_EQUAL(wire_read_u8(&w), 0);
	CU_ASSERT_EQUAL(w.err, SHOAL_EMALFORMED);
	wire_init_read(&w, buf, sizeof(buf));
	CU_ASSERT_TRUE(unit_aborted(unit_in_child(seek_past_end, &w)));
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_read_in_bounds),
		UNIT_TEST(test_read_overrun_sticks),
		UNIT_TEST(test_write_overrun),
		UNIT_TEST(test_seek),
		UNIT_END,
	};
	return unit_run(argc, argv, "wire", tests);
}
