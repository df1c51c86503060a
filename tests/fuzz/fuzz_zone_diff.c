/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Differential fuzz target for the two zone file readers: any text as the
 * master file of fuzz.test., read with Knot's zone scanner and with ldns.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_file.h"
#include "tests/fuzz/zone_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A finding is a crash, a sanitizer report, a leak, a broken store, or two
 * loads that differ (in result, zone or messages) although neither reader
 * refused any text: then both read the same records, and the zone and
 * every message must be the same. Where a reader refused some text, the
 * readers may part (the scanner is stricter than ldns in ways
 * tests/unit/test_zone_reader.c lists).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t origin[] = "\4fuzz\4test";
	static char why[1 << 16];
	const char *path = fuzz_file_zone(data, size);
	if (!path)
		return 0;
	if (zone_diff_file(path, origin, why, sizeof(why)) == ZONE_DIFF_FOUND) {
		fprintf(stderr, "%s\n", why);
		abort();
	}
	return 0;
}
