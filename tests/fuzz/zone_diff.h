/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone file read with both readers (zscanner, ldns) and compared; zones written back. */
#ifndef SHOAL_TESTS_FUZZ_ZONE_DIFF_H
#define SHOAL_TESTS_FUZZ_ZONE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/zone.h"

/* How the two loads of one file compare (zone_diff_file). */
enum zone_diff {
	ZONE_DIFF_SAME,   /* the same outcome, zone and messages */
	ZONE_DIFF_SYNTAX, /* they differ, and some reader refused some text */
	ZONE_DIFF_FOUND,  /* they differ though both read every record: a finding */
};

/*
 * Load `path` as the zone `origin` (wire) with each reader and compare:
 * the same result (loaded or not); a zone that loads the same nodes with
 * the same RRsets and signatures, octet for octet; and the same messages,
 * each an error or a warning at the same FILE:LINE with the same text,
 * except that a reader's own syntax error (ldns' and the scanner's words
 * differ) counts as "a syntax error" at that FILE:LINE. When they differ,
 * why says how (with both loads' messages). Allocates; one thread (the
 * reader is a process-wide setting).
 */
enum zone_diff zone_diff_file(const char *path, const uint8_t *origin, char *why, size_t cap);

/*
 * What the store promises of a zone that loaded: nodes in strictly
 * canonical order with the apex first, every node found by exact lookup and
 * by "less or equal", parents in the zone and one label shorter. Aborts
 * when one is broken.
 */
void zone_diff_check_store(const zone_t *z);

/* Two zones with the same nodes, RRsets and signatures, octet for octet. */
bool zone_diff_same(const zone_t *a, const zone_t *b);

/*
 * Write z to a file of the fuzz folder with zone_write (as a secondary
 * saves a transfer), then read the file with the scanner (the reader
 * shoald starts with), which must give the same zone, and with ldns,
 * which must too where it reads the file at all (it cannot read every
 * type: tests/unit/test_xfr_write.c). Aborts when not so. One thread (the
 * reader is a process-wide setting).
 */
void zone_diff_write_back(const zone_t *z);

#endif
