/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Connections per client address: SipHash-indexed atomic counts shared by every worker. */
#include "config.h"

#include <assert.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/common/addr.h"
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

/* The count of peer's address (its /64 for IPv6), or NULL for another family. */
static uint32_t *slot_of(addrlimit_t *a, const struct sockaddr *peer)
{
	const uint8_t *ip;
	size_t len = addr_octets(peer, &ip);
	if (!len)
		return NULL;
	/* IPv6: the /64, the interface ID being the host's to choose (RFC 4291 2.5.4) */
	uint8_t key[9] = { (uint8_t)len };
	size_t n = len == 4 ? 4 : 8;
	memcpy(key + 1, ip, n);
	n++;
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
