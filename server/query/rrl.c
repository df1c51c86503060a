/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Response rate limiting: classes hashed with SipHash into one table of atomic counters. */
#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "server/common/addr.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/query/rrl.h"

/*
 * One counter is one 64-bit word, changed with compare-and-swap:
 *   tag (22 bits)     the class's hash bits not used to pick the counter;
 *                     another class that lands here takes the counter over
 *   episode (1 bit)   the class is being limited (for the log lines)
 *   second (16 bits)  the clock's second of the window counted
 *   count (25 bits)   answers counted in that second, saturating
 */
#define COUNT_BITS   25
#define COUNT_MAX    ((1u << COUNT_BITS) - 1)
#define SECOND_SHIFT COUNT_BITS
#define EPISODE_BIT  (1ull << 41)
#define TAG_SHIFT    42
#define CAS_TRIES    4
/* seconds a worker's clock reading may lag another's (taken once per batch) */
#define CLOCK_SKEW_MAX 2

static_assert(SECOND_SHIFT + 16 == 41 && EPISODE_BIT == 1ull << 41 && TAG_SHIFT == 42,
	      "count, second, episode and tag tile the word");
static_assert(RRL_RATE_MAX < COUNT_MAX, "a count saturates above every limit");
static_assert((RRL_SIZE_MIN & (RRL_SIZE_MIN - 1)) == 0, "the table's size is a power of 2");

/* A class: family and kind, the client's network, the type, the name. */
#define KEY_MAX (2 + 16 + 2 + NAME_MAXLEN)

struct rrl {
	uint64_t *counters; /* mask + 1 */
	uint64_t mask;
	uint8_t key[crypto_shorthash_KEYBYTES];
	uint32_t rates[ANSWER_KIND_COUNT]; /* 0: that kind is not limited */
	uint32_t slip;
	uint8_t ipv4_prefix, ipv6_prefix;
	addr_prefix_list_t exempt;
};

static const char *const kind_names[ANSWER_KIND_COUNT] = {
	[ANSWER_POSITIVE] = "answers",   [ANSWER_NODATA] = "NODATA", [ANSWER_NXDOMAIN] = "NXDOMAIN",
	[ANSWER_REFERRAL] = "referrals", [ANSWER_ERROR] = "errors",
};

/* rate-limit-nxdomain and rate-limit-errors: RRL_RATE_AS_RATE follows rate-limit. */
static uint32_t rate_of(uint32_t rate, uint32_t base)
{
	return rate == RRL_RATE_AS_RATE ? base : rate;
}

int rrl_new(const rrl_limits_t *limits, rrl_t **out)
{
	MAIN_THREAD_ONLY();
	*out = NULL;
	if (limits->rate == 0)
		return 0;
	uint32_t nxdomain = rate_of(limits->nxdomain_rate, limits->rate);
	uint32_t errors = rate_of(limits->error_rate, limits->rate);
	if (limits->rate > RRL_RATE_MAX || nxdomain > RRL_RATE_MAX || errors > RRL_RATE_MAX ||
	    limits->ipv4_prefix > 32 || limits->ipv6_prefix > 128 || limits->size < RRL_SIZE_MIN ||
	    limits->size > RRL_SIZE_MAX || limits->exempt.count > ADDR_PREFIX_LIST_MAX)
		return SHOAL_EINVAL;
	rrl_t *r = calloc(1, sizeof(*r));
	if (!r)
		return SHOAL_ENOMEM;
	uint64_t n = RRL_SIZE_MIN;
	while (n < limits->size)
		n <<= 1;
	/* calloc: the table is untouched until used, so its pages come as classes do */
	r->counters = calloc(n, sizeof(*r->counters));
	if (!r->counters) {
		free(r);
		return SHOAL_ENOMEM;
	}
	r->mask = n - 1;
	randombytes_buf(r->key, sizeof(r->key));
	r->rates[ANSWER_POSITIVE] = r->rates[ANSWER_NODATA] = r->rates[ANSWER_REFERRAL] =
		limits->rate;
	r->rates[ANSWER_NXDOMAIN] = nxdomain;
	r->rates[ANSWER_ERROR] = errors;
	r->slip = limits->slip;
	r->ipv4_prefix = (uint8_t)limits->ipv4_prefix;
	r->ipv6_prefix = (uint8_t)limits->ipv6_prefix;
	r->exempt = limits->exempt;
	*out = r;
	return 0;
}

void rrl_free(rrl_t *r)
{
	if (!r)
		return;
	free(r->counters);
	free(r);
}

/* The class of an answer to the client at ip, as key octets; returns their count. */
static size_t class_key(const rrl_t *r, const uint8_t *ip, size_t ip_len, const answer_info_t *info,
			uint8_t key[KEY_MAX])
{
	size_t n = 0;
	key[n++] = (uint8_t)ip_len;
	key[n++] = (uint8_t)info->kind;
	addr_mask_copy(key + n, ip, ip_len, ip_len == 4 ? r->ipv4_prefix : r->ipv6_prefix);
	n += ip_len;
	/* NXDOMAIN and errors: one class whatever the type asked */
	bool typed = info->kind != ANSWER_NXDOMAIN && info->kind != ANSWER_ERROR;
	key[n++] = typed ? (uint8_t)(info->qtype >> 8) : 0;
	key[n++] = typed ? (uint8_t)info->qtype : 0;
	memcpy(key + n, info->name, info->name_len);
	return n + info->name_len;
}

/* What a counter's change says for the log. */
enum rrl_event {
	RRL_EVENT_NONE,
	RRL_EVENT_START,
	RRL_EVENT_STOP,
};

/*
 * Is second now16 a window after `second`? A worker whose clock reading
 * is a little older than another's (it was taken at the start of its
 * batch) counts into the newer window rather than starting an old one
 * again; any other difference is a new window, so a counter left alone
 * for hours, or for 2^16 seconds and more, starts afresh.
 */
static bool window_is_new(uint16_t now16, uint16_t second)
{
	int16_t d = (int16_t)(now16 - second);
	return d > 0 || d < -CLOCK_SKEW_MAX;
}

/*
 * Count one answer on the counter for (tag) in second now16, of which
 * `limit` may be sent. Returns true when it is over the limit; *event
 * says whether the class started or stopped being limited.
 */
static bool count_one(uint64_t *counter, uint64_t tag, uint16_t now16, uint32_t limit,
		      enum rrl_event *event)
{
	uint64_t old = __atomic_load_n(counter, __ATOMIC_RELAXED);
	for (int tries = 0; tries < CAS_TRIES; tries++) {
		bool episode = (old & EPISODE_BIT) != 0;
		uint16_t second = (uint16_t)(old >> SECOND_SHIFT);
		uint32_t count = (uint32_t)(old & COUNT_MAX);
		enum rrl_event ev = RRL_EVENT_NONE;
		if (old == 0 || (old >> TAG_SHIFT) != tag) {
			/* empty, or another class's: ours now */
			episode = false;
			second = now16;
			count = 0;
		} else if (window_is_new(now16, second)) {
			/*
			 * A new window. The episode ends when the class stayed
			 * under the limit for a whole second: the last window
			 * it was seen in, or a silent one between.
			 */
			if (episode && ((int16_t)(now16 - second) != 1 || count <= limit)) {
				episode = false;
				ev = RRL_EVENT_STOP;
			}
			second = now16;
			count = 0;
		}
		if (count < COUNT_MAX)
			count++;
		bool over = count > limit;
		if (over && !episode) {
			episode = true;
			ev = RRL_EVENT_START;
		}
		uint64_t next = tag << TAG_SHIFT | (episode ? EPISODE_BIT : 0) |
				(uint64_t)second << SECOND_SHIFT | count;
		if (__atomic_compare_exchange_n(counter, &old, next, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			*event = ev;
			return over;
		}
	}
	*event = RRL_EVENT_NONE;
	return false; /* so contended that sending beats waiting */
}

/* One line about a class, within the worker's budget of lines per second. */
static void log_class(const rrl_t *r, rrl_worker_t *wk, const uint8_t *ip, size_t ip_len,
		      const answer_info_t *info, uint32_t now, enum rrl_event ev)
{
	if (wk->log_second != now) {
		wk->log_second = now;
		wk->log_lines = 0;
	}
	if (wk->log_lines >= RRL_LOG_PER_SECOND) {
		wk->log_suppressed++;
		return;
	}
	wk->log_lines++;
	assert(info->kind < ANSWER_KIND_COUNT);
	unsigned bits = ip_len == 4 ? r->ipv4_prefix : r->ipv6_prefix;
	uint8_t net[16];
	char addr[INET6_ADDRSTRLEN], name[1024] = ".", type[16] = "";
	addr_mask_copy(net, ip, ip_len, bits);
	addr_ip_text(net, ip_len, addr, sizeof(addr));
	if (info->name_len && name_to_text(info->name, name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "?");
	if (info->kind != ANSWER_NXDOMAIN && info->kind != ANSWER_ERROR)
		snprintf(type, sizeof(type), " type %u", info->qtype);
	char more[64] = "";
	if (wk->log_suppressed)
		snprintf(more, sizeof(more), " (%llu lines like this one left out)",
			 (unsigned long long)wk->log_suppressed);
	wk->log_suppressed = 0;
	log_notice("rate limit: %s/%u %s for %s%s %s%s", addr, bits, kind_names[info->kind],
		   info->name_len ? name : "any name", type,
		   ev == RRL_EVENT_START ? "limited" : "no longer limited", more);
}

QUERY_PATH enum rrl_verdict rrl_check(rrl_t *r, rrl_worker_t *wk, const uint8_t *ip, size_t ip_len,
				      const answer_info_t *info, uint32_t now)
{
	/* a valid server cookie proves the address: no one can aim this answer elsewhere */
	if (info->cookie == ANSWER_COOKIE_VALID)
		return RRL_SEND;
	addr_unmap(&ip, &ip_len);
	uint32_t limit = r->rates[info->kind];
	if (limit == 0 || (ip_len != 4 && ip_len != 16))
		return RRL_SEND;
	if (addr_prefix_list_match(&r->exempt, ip, ip_len))
		return RRL_SEND;
	uint8_t key[KEY_MAX];
	uint8_t h[crypto_shorthash_BYTES];
	crypto_shorthash(h, key, class_key(r, ip, ip_len, info, key), r->key);
	uint64_t hash;
	memcpy(&hash, h, sizeof(hash));
	enum rrl_event ev;
	bool over = count_one(&r->counters[hash & r->mask], hash >> TAG_SHIFT, (uint16_t)now, limit,
			      &ev);
	if (ev != RRL_EVENT_NONE)
		log_class(r, wk, ip, ip_len, info, now, ev);
	if (!over)
		return RRL_SEND;
	if (r->slip && ++wk->slip_count >= r->slip) {
		wk->slip_count = 0;
		return RRL_SLIP;
	}
	return RRL_DROP;
}
