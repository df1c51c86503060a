/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz inputs written to files, for the parsers that read a path (zone files, the config). */
#ifndef SHOAL_TESTS_FUZZ_FILE_H
#define SHOAL_TESTS_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Write data[0..size) to the file `name` in a folder private to this
 * process (made on the first call under $TMPDIR or /tmp, removed at exit
 * with what it holds) and return the file's path, static storage valid
 * until the next call. Aborts when the file cannot be written: a fuzz run
 * that tests nothing should stop. One thread.
 */
const char *fuzz_file_write(const char *name, const uint8_t *data, size_t size);

/*
 * Write a zone file input as fuzz.zone beside an inc.zone it may $INCLUDE
 * (written once) and return its path; NULL (nothing written) when an
 * $INCLUDE line of it holds a '/': such a path can leave the private
 * folder and name a device that never ends (/dev/zero, /dev/stdin).
 */
const char *fuzz_file_zone(const uint8_t *data, size_t size);

#endif
