/* The hot path's rule as a check: answer_query wrapped, allocations and locks counted. */
#include "config.h"

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/alloc_guard.h"
#include "zone/answer.h"

static bool counting;
static alloc_guard_counts_t counts;
static size_t answers;

void alloc_guard_begin(void)
{
	memset(&counts, 0, sizeof(counts));
	counting = true;
}

alloc_guard_counts_t alloc_guard_end(void)
{
	counting = false;
	return counts;
}

size_t alloc_guard_answers(void)
{
	return answers;
}

#define COUNT(what)                    \
	do {                           \
		if (counting)          \
			counts.what++; \
	} while (0)

/* The real functions (the linker's --wrap names them __real_X). */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void __real_free(void *p);
int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_trylock(pthread_mutex_t *m);
int __real_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int __real_pthread_spin_lock(pthread_spinlock_t *l);
int __real_sem_wait(sem_t *s);
size_t __real_answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len, uint8_t *out,
			   size_t cap, const answer_ctx_t *ctx, answer_info_t *info);

/* Declared here only: nothing else calls them by these names. */
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void __wrap_free(void *p);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m);
int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int __wrap_pthread_spin_lock(pthread_spinlock_t *l);
int __wrap_sem_wait(sem_t *s);
size_t __wrap_answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len, uint8_t *out,
			   size_t cap, const answer_ctx_t *ctx, answer_info_t *info);

void *__wrap_malloc(size_t n)
{
	COUNT(allocations);
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	COUNT(allocations);
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	COUNT(allocations);
	return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	COUNT(allocations);
	return __real_aligned_alloc(align, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	COUNT(allocations);
	return __real_posix_memalign(p, align, n);
}

char *__wrap_strdup(const char *s)
{
	COUNT(allocations);
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	COUNT(allocations);
	return __real_strndup(s, n);
}

void __wrap_free(void *p)
{
	if (p)
		COUNT(frees);
	__real_free(p);
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
	COUNT(locks);
	return __real_pthread_mutex_lock(m);
}

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
	COUNT(locks);
	return __real_pthread_mutex_trylock(m);
}

int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	COUNT(locks);
	return __real_pthread_rwlock_rdlock(l);
}

int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	COUNT(locks);
	return __real_pthread_rwlock_wrlock(l);
}

int __wrap_pthread_spin_lock(pthread_spinlock_t *l)
{
	COUNT(locks);
	return __real_pthread_spin_lock(l);
}

int __wrap_sem_wait(sem_t *s)
{
	COUNT(locks);
	return __real_sem_wait(s);
}

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
