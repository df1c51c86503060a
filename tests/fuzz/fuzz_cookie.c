/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for the EDNS option walk and the COOKIE option (RFC 7873, RFC 9018). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cookie.h"
#include "proto/query.h"
#include "proto/response.h"
#include "tests/fuzz/fuzz_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const cookie_secrets_t secrets = {
	.current = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
	.staging = { 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 },
	.has_staging = true,
};

/*
 * Check a cookie at a client address and time the input chooses, and
 * when it is well formed make the server's own cookie for the same client:
 * that cookie must check valid at once, from the same address only.
 */
static void check_cookie(const uint8_t *opt, size_t len, uint32_t now, const uint8_t ip[16],
			 size_t ip_len)
{
	cookie_t c;
	if (cookie_parse(&c, opt, len) != 0) {
		/* RFC 7873 4: only 8 or 16 to 40 octets are a cookie */
		if (len == COOKIE_CLIENT_LEN || (len >= 16 && len <= 40))
			abort();
		return;
	}
	(void)cookie_check(&c, ip, ip_len, now, &secrets);
	uint8_t mine[COOKIE_CLIENT_LEN + COOKIE_SERVER_LEN];
	memcpy(mine, c.client, COOKIE_CLIENT_LEN);
	if (cookie_make(mine + COOKIE_CLIENT_LEN, c.client, ip, ip_len, now, secrets.current) != 0)
		abort();
	cookie_t back;
	if (cookie_parse(&back, mine, sizeof(mine)) != 0)
		abort();
	if (cookie_check(&back, ip, ip_len, now, &secrets) != COOKIE_VALID)
		abort();
	uint8_t other[16];
	memcpy(other, ip, sizeof(other));
	other[ip_len - 1] ^= 1;
	if (cookie_check(&back, other, ip_len, now, &secrets) != COOKIE_INVALID)
		abort();
}

/*
 * One input is a query: query_parse walks its OPT record's options (the
 * first COOKIE option counts, a malformed one is FORMERR), then the
 * query's cookie, or the input itself as a COOKIE option's data when the
 * query has none, is checked and answered as the server would (the answer
 * with the cookie must stay within the UDP limit). The time and the client
 * address come from the input's first octets.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t now = 0;
	uint8_t ip[16] = { 192, 0, 2, 1 };
	if (size >= 4)
		now = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | data[2] << 8 | data[3];
	if (size >= 20)
		memcpy(ip, data + 4, 16);
	size_t ip_len = size && (data[size - 1] & 1) ? 16 : 4;

	query_t q;
	enum query_verdict v = query_parse(&q, data, size);
	if (q.cookie)
		check_cookie(q.cookie, q.cookie_len, now, ip, ip_len);
	else
		check_cookie(data, size, now, ip, ip_len);
	if (v == QUERY_DROP)
		return 0;

	uint8_t cookie[COOKIE_CLIENT_LEN + COOKIE_SERVER_LEN];
	cookie_t c;
	bool with_cookie = q.cookie && cookie_parse(&c, q.cookie, q.cookie_len) == 0;
	if (with_cookie) {
		memcpy(cookie, c.client, COOKIE_CLIENT_LEN);
		cookie_make(cookie + COOKIE_CLIENT_LEN, c.client, ip, ip_len, now, secrets.current);
	}
	uint8_t buf[4096];
	response_edns_t e = {
		.cookie = with_cookie ? cookie : NULL,
		.cookie_len = with_cookie ? (uint8_t)sizeof(cookie) : 0,
	};
	int n = fuzz_respond(&q, v, &e, buf);
	/* a slipped answer (rate limiting) is never longer than the answer */
	if (n > 0) {
		int s = response_strip(buf, (size_t)n);
		if (s > n)
			abort();
	}
	return 0;
}
