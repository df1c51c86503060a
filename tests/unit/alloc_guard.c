/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The hot path's rule as a check: the allocations and locks of Shoal's code, counted. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/alloc_guard.h"

/* Any thread may count (a UDP receiver does): atomics, relaxed. */
static bool counting;
static size_t allocations, frees, locks, octets, reallocs;

void alloc_guard_begin(void)
{
	__atomic_store_n(&allocations, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&frees, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&locks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&octets, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&reallocs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&counting, true, __ATOMIC_SEQ_CST);
}

alloc_guard_counts_t alloc_guard_end(void)
{
	__atomic_store_n(&counting, false, __ATOMIC_SEQ_CST);
	return (alloc_guard_counts_t){ __atomic_load_n(&allocations, __ATOMIC_RELAXED),
				       __atomic_load_n(&frees, __ATOMIC_RELAXED),
				       __atomic_load_n(&locks, __ATOMIC_RELAXED),
				       __atomic_load_n(&octets, __ATOMIC_RELAXED),
				       __atomic_load_n(&reallocs, __ATOMIC_RELAXED) };
}

/*
 * This thread's allocations to go before the one that fails (0: none
 * fails): an out-of-memory path is driven by failing each call in turn,
 * and the other threads (a server's, at work meanwhile) are left alone.
 */
static __thread size_t fail_in;

void alloc_guard_fail_at(size_t nth)
{
	fail_in = nth;
}

/* Whether this allocation is the one alloc_guard_fail_at chose. */
static bool alloc_fails(void)
{
	if (!fail_in)
		return false;
	return --fail_in == 0;
}

#define COUNT_BY(what, n)                                                 \
	do {                                                              \
		if (__atomic_load_n(&counting, __ATOMIC_RELAXED))         \
			__atomic_fetch_add(&what, (n), __ATOMIC_RELAXED); \
	} while (0)
#define COUNT(what) COUNT_BY(what, 1)

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

void *__wrap_malloc(size_t n)
{
	COUNT(allocations);
	COUNT_BY(octets, n);
	if (alloc_fails())
		return NULL;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	COUNT(allocations);
	COUNT_BY(octets, n * size);
	if (alloc_fails())
		return NULL;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	COUNT(allocations);
	COUNT_BY(octets, n);
	if (p)
		COUNT(reallocs);
	if (alloc_fails())
		return NULL;
	return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	COUNT(allocations);
	COUNT_BY(octets, n);
	if (alloc_fails())
		return NULL;
	return __real_aligned_alloc(align, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	COUNT(allocations);
	COUNT_BY(octets, n);
	if (alloc_fails())
		return ENOMEM;
	return __real_posix_memalign(p, align, n);
}

char *__wrap_strdup(const char *s)
{
	COUNT(allocations);
	COUNT_BY(octets, strlen(s) + 1);
	if (alloc_fails())
		return NULL;
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	COUNT(allocations);
	COUNT_BY(octets, strnlen(s, n) + 1);
	if (alloc_fails())
		return NULL;
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
