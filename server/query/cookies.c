/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The server's cookie secrets: one immutable set at a time, swapped with RCU. */
#include "config.h"

#include <assert.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "server/common/mainthread.h"
#include "server/query/cookies.h"

/*
 * ThreadSanitizer does not see the ordering liburcu's grace period gives
 * (see zone/zonedb.c): under TSan the pointer is read and swapped with
 * C11-style atomics, each reader's use ends with a release the rotation
 * acquires after the grace period. Nothing of this is in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define COOKIES_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COOKIES_TSAN 1
#endif
#endif
#ifdef COOKIES_TSAN
#include <sanitizer/tsan_interface.h>
#endif

static cookie_secrets_t *secrets_new(const uint8_t *secret, const uint8_t *staging)
{
	cookie_secrets_t *s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	if (secret)
		memcpy(s->current, secret, sizeof(s->current));
	else
		randombytes_buf(s->current, sizeof(s->current));
	s->has_staging = staging != NULL;
	if (staging)
		memcpy(s->staging, staging, sizeof(s->staging));
	else
		memset(s->staging, 0, sizeof(s->staging));
	return s;
}

static void secrets_free(cookie_secrets_t *s)
{
	if (!s)
		return;
	sodium_memzero(s, sizeof(*s));
	free(s);
}

int cookies_init(cookies_t *c, const uint8_t *secret, const uint8_t *staging)
{
	MAIN_THREAD_ONLY();
	c->secrets = secrets_new(secret, staging);
	return c->secrets ? 0 : SHOAL_ENOMEM;
}

QUERY_PATH const cookie_secrets_t *cookies_read(cookies_t *c)
{
#ifdef COOKIES_TSAN
	return __atomic_load_n(&c->secrets, __ATOMIC_ACQUIRE);
#else
	return rcu_dereference(c->secrets);
#endif
}

QUERY_PATH void cookies_read_done(cookies_t *c)
{
#ifdef COOKIES_TSAN
	__tsan_release(c);
#else
	(void)c;
#endif
}

int cookies_rotate(cookies_t *c, const uint8_t *secret)
{
	MAIN_THREAD_ONLY();
	/* only this thread writes the pointer: reading it plainly is safe here */
	const cookie_secrets_t *now = c->secrets;
	assert(now); /* cookies_init came first */
	cookie_secrets_t *next = secrets_new(secret, now->current);
	if (!next)
		return SHOAL_ENOMEM;
#ifdef COOKIES_TSAN
	cookie_secrets_t *old = __atomic_exchange_n(&c->secrets, next, __ATOMIC_ACQ_REL);
#else
	cookie_secrets_t *old = rcu_xchg_pointer(&c->secrets, next);
#endif
	/* workers that read the old secrets leave their read-side section first */
	synchronize_rcu();
#ifdef COOKIES_TSAN
	__tsan_acquire(c);
#endif
	secrets_free(old);
	return 0;
}

void cookies_clear(cookies_t *c)
{
	secrets_free(c->secrets);
	c->secrets = NULL;
}
