/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for zone/jfile: the journal file reader on any octets, torn or damaged. */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zone/jfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The record layout (zone/jfile.h): magic, length, serials, then the hash. */
#define HEAD   32
#define HASHED 16

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * What must hold whatever the input: the reader never reads past it, keeps
 * a prefix of whole records (their sizes, re-encoded, are the octets it
 * kept), each changeset sealed and following the one before.
 */
static void check(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1); /* exactly size: ASan sees a read past it */
	if (!copy)
		abort();
	memcpy(copy, data, size);
	xfr_changes_t c;
	size_t good = 0, sum = 0;
	if (jfile_parse(copy, size, &c, &good) < 0) {
		free(copy);
		return; /* out of memory */
	}
	if (good > size)
		abort();
	for (size_t i = 0; i < c.count; i++) {
		const changeset_t *cs = c.sets[i];
		if (i && c.sets[i - 1]->to != cs->from)
			abort();
		if (cs->del.rr_count < 1 || cs->add.rr_count < 1)
			abort(); /* each side's SOA */
		sum += jfile_record_size(cs);
	}
	if (sum != good)
		abort();
	xfr_changes_clear(&c);
	free(copy);
}

/*
 * The input with each record's hash made right, so the fuzzer reaches the
 * record decoder rather than stopping at the hash of almost every input.
 */
static void check_rehashed(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	for (size_t at = 0; size - at >= HEAD;) {
		size_t body = get32(copy + at + 4);
		if (body > size - at - HEAD)
			break;
		crypto_generichash_state st;
		crypto_generichash_init(&st, NULL, 0, 16);
		crypto_generichash_update(&st, copy + at, HASHED);
		crypto_generichash_update(&st, copy + at + HEAD, body);
		crypto_generichash_final(&st, copy + at + HASHED, 16);
		at += HEAD + body;
	}
	check(copy, size);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size);
	check_rehashed(data, size);
	return 0;
}
