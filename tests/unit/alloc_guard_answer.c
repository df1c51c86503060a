/* SPDX-License-Identifier: GPL-3.0-or-later */
/* answer_query wrapped: every call a test makes is checked to allocate nothing and lock nothing. */
#include "config.h"

#include <CUnit/CUnit.h>
#include <stdio.h>

#include "tests/unit/alloc_guard.h"
#include "zone/answer.h"

static size_t answers;

size_t alloc_guard_answers(void)
{
	return answers;
}

/* The real one (the linker's --wrap names it __real_answer_query), and ours. */
size_t __real_answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len, uint8_t *out,
			   size_t cap, const answer_ctx_t *ctx, answer_info_t *info);
size_t __wrap_answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len, uint8_t *out,
			   size_t cap, const answer_ctx_t *ctx, answer_info_t *info);

size_t __wrap_answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len, uint8_t *out,
			   size_t cap, const answer_ctx_t *ctx, answer_info_t *info)
{
	alloc_guard_begin();
	size_t n = __real_answer_query(db, pkt, len, out, cap, ctx, info);
	alloc_guard_counts_t c = alloc_guard_end();
	answers++;
	if (c.allocations || c.frees || c.locks) {
		char what[160];
		snprintf(what, sizeof(what),
			 "answer_query made %zu allocation(s), %zu free(s), %zu lock(s)",
			 c.allocations, c.frees, c.locks);
		CU_assertImplementation(CU_FALSE, __LINE__, what, __FILE__, "", CU_FALSE);
	}
	return n;
}
