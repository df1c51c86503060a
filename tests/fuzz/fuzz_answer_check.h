/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The promises every answer of answer_query keeps, checked for the fuzz targets that ask it. */
#ifndef SHOAL_TESTS_FUZZ_ANSWER_CHECK_H
#define SHOAL_TESTS_FUZZ_ANSWER_CHECK_H

#include <ldns/ldns.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/answer.h"

/* A broken promise: say which on stderr, named by the target, then abort (the finding). */
void fuzz_answer_fail(const char *target, const char *why, const answer_ctx_t *ctx, size_t n);

/*
 * Check the answer out[0..n) that answer_query wrote, into a buffer of cap
 * octets, for the query q[0..qlen) with ctx and info: no longer than cap
 * and the transport allows (UDP 512, with EDNS the server's size but at
 * least 512; TCP 65535), the query's ID with QR set, and a message ldns
 * reads. Returns it parsed (the caller frees it); a broken promise aborts.
 */
ldns_pkt *fuzz_answer_parse(const char *target, const uint8_t *q, size_t qlen, const uint8_t *out,
			    size_t n, size_t cap, const answer_ctx_t *ctx,
			    const answer_info_t *info);

#endif
