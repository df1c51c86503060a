/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Connections per client address: SipHash-indexed atomic counts shared by every worker. */
#include "config.h"

#include <assert.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/common/mainthread.h"
#include "server/net/addrlimit.h"

struct addrlimit {
	uint32_t limit;
	uint8_t key[crypto_shorthash_KEYBYTES];
	uint32_t counts[ADDRLIMIT_SLOTS];
};

int addrlimit_new(uint32_t limit, addrlimit_t **out)
{
	MAIN_THREAD_ONLY();
	*out = NULL;
	if (limit == 0)
		return 0;
	addrlimit_t *a = calloc(1, sizeof(*a));
	if (!a)
		return SHOAL_ENOMEM;
	a->limit = limit;
	randombytes_buf(a->key, sizeof(a->key));
	*out = a;
	return 0;
}

void addrlimit_free(addrlimit_t *a)
{
	free(a);
}

/* The prefix of an IPv4-mapped IPv6 address, ::ffff:0:0/96 (RFC 4291 2.5.5.2). */
static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The count of peer's address (its /64 for IPv6), or NULL for another family. */
static uint32_t *slot_of(addrlimit_t *a, const struct sockaddr *peer)
{
	uint8_t key[9];
	size_t n;
	if (peer->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)peer)->sin_addr, 4);
		n = 5;
	} else if (peer->sa_family == AF_INET6) {
		const uint8_t *ip = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
		if (memcmp(ip, v4_mapped, sizeof(v4_mapped)) == 0) {
			key[0] = 4;
			memcpy(key + 1, ip + 12, 4);
			n = 5;
		} else {
			key[0] = 6;
			memcpy(key + 1, ip, 8);
			n = 9;
		}
	} else {
		return NULL;
	}
	uint8_t h[crypto_shorthash_BYTES];
	crypto_shorthash(h, key, n, a->key);
	return &a->counts[(h[0] | (unsigned)h[1] << 8) % ADDRLIMIT_SLOTS];
}

bool addrlimit_take(addrlimit_t *a, const struct sockaddr *peer)
{
	uint32_t *count = slot_of(a, peer);
	if (!count)
		return true; /* not an internet address: not counted */
	uint32_t now = __atomic_load_n(count, __ATOMIC_RELAXED);
	do {
		if (now >= a->limit)
			return false;
	} while (!__atomic_compare_exchange_n(count, &now, now + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

void addrlimit_give(addrlimit_t *a, const struct sockaddr *peer)
{
	uint32_t *count = slot_of(a, peer);
	if (!count)
		return;
	uint32_t was = __atomic_fetch_sub(count, 1, __ATOMIC_RELAXED);
	assert(was > 0); /* a give without its take */
	(void)was;
}
