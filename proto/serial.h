/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SOA serial number arithmetic (RFC 1982), for zone versions in transfers. */
#ifndef SHOAL_PROTO_SERIAL_H
#define SHOAL_PROTO_SERIAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * RFC 1982 3.2 with SERIAL_BITS 32: s1 < s2 when they differ and s2 - s1
 * (mod 2^32) is below 2^31; s1 > s2 when s1 - s2 is. Two serials exactly
 * 2^31 apart compare as neither: the order is undefined, and a caller must
 * not take either for newer.
 */
enum serial_order {
	SERIAL_LESS = -1,
	SERIAL_EQUAL = 0,
	SERIAL_GREATER = 1,
	SERIAL_UNDEFINED = 2,
};

#define SERIAL_HALF 0x80000000u /* 2^(SERIAL_BITS - 1) */

/* How a compares with b. No state; any thread. */
static inline enum serial_order serial_compare(uint32_t a, uint32_t b)
{
	uint32_t ahead = b - a; /* how far b is past a, mod 2^32 */
	if (ahead == 0)
		return SERIAL_EQUAL;
	if (ahead == SERIAL_HALF)
		return SERIAL_UNDEFINED;
	return ahead < SERIAL_HALF ? SERIAL_LESS : SERIAL_GREATER;
}

/* a is older than b (false when undefined). */
static inline bool serial_lt(uint32_t a, uint32_t b)
{
	return serial_compare(a, b) == SERIAL_LESS;
}

/* a is newer than b (false when undefined). */
static inline bool serial_gt(uint32_t a, uint32_t b)
{
	return serial_compare(a, b) == SERIAL_GREATER;
}

/*
 * RFC 1982 3.1: s + n mod 2^32, defined for n up to 2^31 - 1; a larger n
 * is cut to that, so the sum always compares newer than s (or equal, for
 * n 0).
 */
static inline uint32_t serial_add(uint32_t s, uint32_t n)
{
	return s + (n < SERIAL_HALF ? n : SERIAL_HALF - 1);
}

#endif
