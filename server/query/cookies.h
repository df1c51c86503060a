/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The server's DNS cookie secrets: made at start, published with RCU, rotated while serving. */
#ifndef SHOAL_SERVER_QUERY_COOKIES_H
#define SHOAL_SERVER_QUERY_COOKIES_H

#include <stdint.h>

#include "proto/cookie.h"

/*
 * The secrets the workers make and check server cookies with (RFC 9018).
 * One published cookie_secrets_t that is never written once workers may
 * read it: a rotation publishes a new one (rcu_xchg_pointer) and frees the
 * old after a grace period (synchronize_rcu), as the zone set is
 * published. The fields are the module's.
 */
typedef struct cookies {
	cookie_secrets_t *secrets;
} cookies_t;

/*
 * Publish the first secrets in c (caller memory): `secret` (16 octets),
 * or a random one when NULL; `staging` (16 octets) also accepted when not
 * NULL. Returns 0 or SHOAL_ENOMEM. Main thread, before the workers start.
 */
int cookies_init(cookies_t *c, const uint8_t *secret, const uint8_t *staging);

/*
 * The secrets now, for a worker inside a read-side section
 * (zonedb_read_lock); valid until cookies_read_done, which comes before
 * the section ends. No lock, no allocation.
 */
const cookie_secrets_t *cookies_read(cookies_t *c);
void cookies_read_done(cookies_t *c);

/*
 * Rotate (RFC 9018 5): `secret` (16 octets, or NULL for a random one)
 * becomes the current secret and the current one becomes the staging
 * secret, so the cookies clients hold stay valid until the next rotation.
 * Waits for a grace period before freeing what it replaced. Returns 0 or
 * SHOAL_ENOMEM (nothing changed). One thread at a time (the main thread),
 * registered with RCU and not inside a read-side section.
 */
int cookies_rotate(cookies_t *c, const uint8_t *secret);

/* Free the secrets, wiped. After the workers stopped. */
void cookies_clear(cookies_t *c);

#endif
