/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNS cookies: the COOKIE option (RFC 7873) and RFC 9018 server cookies. */
#include <assert.h>
#include <sodium.h>
#include <string.h>

#include "proto/cookie.h"
#include "proto/hot.h"
#include "proto/wire.h"

#define COOKIE_HASH_LEN   8
#define COOKIE_HASHED_MAX (COOKIE_CLIENT_LEN + 8 + 16) /* with an IPv6 address */
static_assert(COOKIE_SERVER_LEN == 8 + COOKIE_HASH_LEN, "RFC 9018 4: 8 octets, then the hash");
static_assert(COOKIE_SECRET_LEN == crypto_shorthash_siphash24_KEYBYTES, "a secret is a key");
static_assert(COOKIE_HASH_LEN == crypto_shorthash_siphash24_BYTES, "the hash is SipHash's");

QUERY_PATH int cookie_parse(cookie_t *c, const uint8_t *data, size_t len)
{
	c->client = NULL;
	c->server = NULL;
	c->server_len = 0;
	/* RFC 7873 5.2.2: a client cookie, alone or with a server cookie of 8 to 32 */
	if (len != COOKIE_CLIENT_LEN && (len < COOKIE_CLIENT_LEN + COOKIE_SERVER_MIN ||
					 len > COOKIE_CLIENT_LEN + COOKIE_SERVER_MAX))
		return SHOAL_EMALFORMED;
	c->client = data;
	if (len > COOKIE_CLIENT_LEN) {
		c->server = data + COOKIE_CLIENT_LEN;
		c->server_len = (uint8_t)(len - COOKIE_CLIENT_LEN);
	}
	return 0;
}

int cookie_secret_from_hex(uint8_t secret[COOKIE_SECRET_LEN], const char *hex)
{
	size_t n = 0;
	if (strlen(hex) != 2 * COOKIE_SECRET_LEN ||
	    sodium_hex2bin(secret, COOKIE_SECRET_LEN, hex, strlen(hex), NULL, &n, NULL) != 0 ||
	    n != COOKIE_SECRET_LEN) {
		sodium_memzero(secret, COOKIE_SECRET_LEN);
		return SHOAL_ESYNTAX;
	}
	return 0;
}

/* The prefix of an IPv4-mapped IPv6 address, ::ffff:0:0/96 (RFC 4291 2.5.5.2). */
static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The client's address as RFC 9018 4.4 hashes it: 4 octets for IPv4, even when mapped. */
static bool client_ip(const uint8_t **ip, size_t *ip_len)
{
	if (*ip_len == 16 && memcmp(*ip, v4_mapped, sizeof(v4_mapped)) == 0) {
		*ip += sizeof(v4_mapped);
		*ip_len = 4;
	}
	return *ip_len == 4 || *ip_len == 16;
}

/*
 * RFC 9018 4.4: Hash = SipHash-2-4(Client Cookie | Version | Reserved |
 * Timestamp | Client-IP, Server Secret). head is the server cookie's first
 * 8 octets (Version, Reserved, Timestamp), as made or as received.
 */
static void cookie_hash(uint8_t out[COOKIE_HASH_LEN], const uint8_t *client, const uint8_t *head,
			const uint8_t *ip, size_t ip_len, const uint8_t *secret)
{
	uint8_t in[COOKIE_HASHED_MAX];
	memcpy(in, client, COOKIE_CLIENT_LEN);
	memcpy(in + COOKIE_CLIENT_LEN, head, 8);
	memcpy(in + COOKIE_CLIENT_LEN + 8, ip, ip_len);
	crypto_shorthash_siphash24(out, in, COOKIE_CLIENT_LEN + 8 + ip_len, secret);
}

QUERY_PATH static bool hash_matches(const cookie_t *c, const uint8_t *ip, size_t ip_len,
				    const uint8_t *secret)
{
	uint8_t hash[COOKIE_HASH_LEN];
	cookie_hash(hash, c->client, c->server, ip, ip_len, secret);
	return sodium_memcmp(hash, c->server + 8, COOKIE_HASH_LEN) == 0;
}

QUERY_PATH enum cookie_verdict cookie_check(const cookie_t *c, const uint8_t *ip, size_t ip_len,
					    uint32_t now, const cookie_secrets_t *secrets)
{
	if (!c->server || c->server_len != COOKIE_SERVER_LEN || c->server[0] != COOKIE_VERSION ||
	    !client_ip(&ip, &ip_len))
		return COOKIE_INVALID;
	/* RFC 9018 4.3: serial number arithmetic, so the window works across 2^32 */
	int32_t age = (int32_t)(now - wire_get_u32(c->server + 4));
	if (age > COOKIE_MAX_AGE || age < -COOKIE_MAX_AHEAD)
		return COOKIE_INVALID;
	if (hash_matches(c, ip, ip_len, secrets->current))
		return age > COOKIE_RENEW_AGE ? COOKIE_RENEW : COOKIE_VALID;
	if (secrets->has_staging && hash_matches(c, ip, ip_len, secrets->staging))
		return COOKIE_RENEW;
	return COOKIE_INVALID;
}

QUERY_PATH int cookie_make(uint8_t server[COOKIE_SERVER_LEN],
			   const uint8_t client[COOKIE_CLIENT_LEN], const uint8_t *ip,
			   size_t ip_len, uint32_t now, const uint8_t secret[COOKIE_SECRET_LEN])
{
	if (!client_ip(&ip, &ip_len))
		return SHOAL_EINVAL;
	/* RFC 9018 4.1-4.3: Version 1, Reserved 0 when made, then the Timestamp */
	server[0] = COOKIE_VERSION;
	server[1] = server[2] = server[3] = 0;
	server[4] = (uint8_t)(now >> 24);
	server[5] = (uint8_t)(now >> 16);
	server[6] = (uint8_t)(now >> 8);
	server[7] = (uint8_t)now;
	cookie_hash(server + 8, client, server, ip, ip_len, secret);
	return 0;
}
