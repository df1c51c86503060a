/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for zone_load: any text as the master file of fuzz.test. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "tests/fuzz/fuzz_file.h"
#include "tests/fuzz/zone_diff.h"
#include "zone/internal.h"
#include "zone/zone.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The messages of one load, folded into a hash and a count. */
typedef struct msg_trace {
	uint64_t hash;
	unsigned count;
} msg_trace_t;

static void trace_msg(void *arg, bool is_error, const char *msg)
{
	msg_trace_t *t = arg;
	t->hash = (t->hash ^ (uint64_t)is_error) * 1099511628211u;
	for (const char *c = msg; *c; c++)
		t->hash = (t->hash ^ (uint8_t)*c) * 1099511628211u;
	t->count++;
}

/*
 * The input loaded with `reader` in one go and cut into stretches read on
 * threads (as big files are): a zone that loads must come out the same
 * both ways, with the same messages.
 */
static void serial_and_split(const char *path, enum zone_reader reader)
{
	static const uint8_t origin[] = "\4fuzz\4test";
	zone_t *z = NULL, *split = NULL;
	msg_trace_t t1 = { 14695981039346656037u, 0 }, t2 = t1;
	zone_load_set_reader(reader);
	zone_load_set_threads(1, 0);
	int rc = zone_load(path, origin, NULL, trace_msg, &t1, &z);
	zone_load_set_threads(3, 1); /* every input cut, however small */
	int rc2 = zone_load(path, origin, NULL, trace_msg, &t2, &split);
	zone_load_set_threads(0, 0);
	zone_load_set_reader(ZONE_READER_ZSCANNER);
	if (rc == 0) {
		if (z == NULL)
			abort();
		zone_diff_check_store(z);
		/* errors may differ in number (each stretch stops after as many) */
		if (rc2 != 0 || t1.count != t2.count || t1.hash != t2.hash)
			abort();
		if (!zone_diff_same(z, split))
			abort();
		zone_diff_write_back(z);
	} else if (rc != SHOAL_EZONE && rc != SHOAL_EIO && rc != SHOAL_ENOMEM) {
		abort();
	} else if (rc2 == 0) {
		abort(); /* a zone that does not load in one go loads when cut */
	}
	zone_free(z);
	zone_free(split);
}

/*
 * One input is one zone file for fuzz.test., loaded from a file (the
 * loader reads paths) with each reader, in one go and cut. Errors are
 * expected; a crash, a sanitizer report, a leak, a broken store, a cut
 * that changes the outcome, or a zone that written to a file does not read
 * back the same is a finding. (fuzz_zone_diff sets the readers against
 * each other.)
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file_zone(data, size);
	if (!path)
		return 0;
	serial_and_split(path, ZONE_READER_ZSCANNER);
	serial_and_split(path, ZONE_READER_LDNS);
	return 0;
}
