/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A test binary's guard: answer_query allocates nothing and takes no lock. */
#ifndef SHOAL_TESTS_UNIT_ALLOC_GUARD_H
#define SHOAL_TESTS_UNIT_ALLOC_GUARD_H

#include <stddef.h>

/*
 * Linked with ALLOC_GUARD_WRAP (zone/local.am: the linker's --wrap for
 * every allocation and lock function), the allocations and locks made by
 * Shoal's own code (the static libraries and the test's objects), on any
 * thread, are counted between alloc_guard_begin and alloc_guard_end.
 * With alloc_guard_answer.c and ALLOC_GUARD_WRAP_ANSWER too, every call a
 * test makes to answer_query is counted so and fails the current CUnit
 * case with a message when it allocated, freed or locked. Calls inside a
 * shared library (libc's own, ldns, libuv) are not seen.
 */

/* What the calls between alloc_guard_begin and alloc_guard_end made. */
typedef struct alloc_guard_counts {
	size_t allocations; /* malloc, calloc, realloc, aligned_alloc, strdup, ... */
	size_t frees;
	size_t locks;    /* pthread mutex, rwlock and spin locks, sem_wait */
	size_t octets;   /* what the allocations asked for, together */
	size_t reallocs; /* of those allocations, reallocs of a block (freeing none) */
} alloc_guard_counts_t;

/* Start counting (from zero), on every thread. Not nested. */
void alloc_guard_begin(void);

/* Stop counting; returns what was counted. */
alloc_guard_counts_t alloc_guard_end(void);

/*
 * Make the nth allocation the calling thread makes from now on (1: the
 * next) fail, as out of memory would; 0 fails none. Other threads'
 * allocations are not counted. The allocation functions of Shoal's own
 * code only (those wrapped), counting or not.
 */
void alloc_guard_fail_at(size_t nth);

/* answer_query calls checked so far (alloc_guard_answer.c): a test may assert that it ran. */
size_t alloc_guard_answers(void);

#endif
