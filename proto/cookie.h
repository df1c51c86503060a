/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNS cookies (RFC 7873) with the interoperable server cookie of RFC 9018. */
#ifndef SHOAL_PROTO_COOKIE_H
#define SHOAL_PROTO_COOKIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A server cookie (RFC 9018 4) is 16 octets: Version 1, 3 Reserved octets
 * (0 when made), a 32-bit Timestamp and an 8-octet Hash, SipHash-2-4 under
 * a 16-octet server secret of
 *   Client Cookie | Version | Reserved | Timestamp | Client-IP
 * with the client's address in 4 (IPv4) or 16 (IPv6) octets. Every server
 * with the same secret (the workers of one process, the servers of an
 * anycast set, other implementations of RFC 9018) accepts the others'
 * cookies. Nothing here allocates, locks or keeps state: the query path
 * may call any of it. Times are seconds since the epoch, taken modulo 2^32
 * and compared in serial number arithmetic (RFC 1982), as RFC 9018 4.3 asks.
 */
#define COOKIE_CLIENT_LEN 8
#define COOKIE_SERVER_LEN 16 /* the cookies this module makes */
#define COOKIE_SERVER_MIN 8  /* RFC 7873 4 */
#define COOKIE_SERVER_MAX 32
#define COOKIE_SECRET_LEN 16 /* crypto_shorthash_siphash24_KEYBYTES */
#define COOKIE_VERSION    1

/* RFC 9018 4.3: the time window, in seconds. */
#define COOKIE_MAX_AGE   3600 /* accepted up to 1 hour old */
#define COOKIE_MAX_AHEAD 300  /* and up to 5 minutes in the future */
#define COOKIE_RENEW_AGE 1800 /* replaced by a fresh one after half an hour */

/* A COOKIE option from a query. Points into the message, which must outlive it. */
typedef struct cookie {
	const uint8_t *client; /* COOKIE_CLIENT_LEN octets */
	const uint8_t *server; /* server_len octets, or NULL when the query had none */
	uint8_t server_len;
} cookie_t;

/*
 * Split the data of a COOKIE option (EDNS option 10) into c. RFC 7873 4:
 * 8 octets are a client cookie alone; 16 to 40 a client cookie and a server
 * cookie of 8 to 32. Returns 0, or SHOAL_EMALFORMED for any other length:
 * the caller answers FORMERR (RFC 7873 5.2.2).
 */
int cookie_parse(cookie_t *c, const uint8_t *data, size_t len);

/*
 * The server secrets: `current` makes and checks cookies; `staging`, when
 * has_staging, is only checked: the previous secret after a rotation, or
 * the next one before it, so that cookies stay valid while every server of
 * a set changes over (RFC 9018 5). Read only while in use: rotate by
 * publishing a new struct (RCU or an atomic pointer), never by writing one
 * the workers read.
 */
typedef struct cookie_secrets {
	uint8_t current[COOKIE_SECRET_LEN];
	uint8_t staging[COOKIE_SECRET_LEN];
	bool has_staging;
} cookie_secrets_t;

/*
 * A secret from configuration: exactly 32 hex digits (either case). Returns
 * 0, or SHOAL_ESYNTAX (secret is then zeroed).
 */
int cookie_secret_from_hex(uint8_t secret[COOKIE_SECRET_LEN], const char *hex);

/* What cookie_check found. */
enum cookie_verdict {
	/*
	 * Not ours: no server cookie, a length or version not ours, a hash that
	 * does not match (another secret, another client address or client
	 * cookie), or a time outside the window. RFC 7873 5.2.3: answer as if
	 * only the client cookie came (with a fresh server cookie), or
	 * BADCOOKIE when the server requires cookies.
	 */
	COOKIE_INVALID = 0,
	/* valid: the client has shown it receives at its address */
	COOKIE_VALID = 1,
	/*
	 * valid, but older than COOKIE_RENEW_AGE or made with the staging
	 * secret: send the client a fresh one (cookie_make) with the answer
	 */
	COOKIE_RENEW = 2,
};

/*
 * Check c's server cookie for the client at ip (ip_len 4 or 16 octets,
 * network order; an IPv4-mapped IPv6 address counts as the IPv4 address,
 * as the same client over an IPv4 socket would be) at time now, against the
 * current and then the staging secret. The hash is compared in constant
 * time. The Reserved octets are hashed as they came (RFC 9018 4.2). Returns
 * the verdict; COOKIE_INVALID for an ip_len other than 4 or 16.
 */
enum cookie_verdict cookie_check(const cookie_t *c, const uint8_t *ip, size_t ip_len, uint32_t now,
				 const cookie_secrets_t *secrets);

/*
 * Make the server cookie for client (8 octets) at ip (as for cookie_check)
 * at time now under secret (the current one) into server (16 octets): the
 * answer's COOKIE option is the client cookie followed by it. Returns 0, or
 * SHOAL_EINVAL for an ip_len other than 4 or 16.
 */
int cookie_make(uint8_t server[COOKIE_SERVER_LEN], const uint8_t client[COOKIE_CLIENT_LEN],
		const uint8_t *ip, size_t ip_len, uint32_t now,
		const uint8_t secret[COOKIE_SECRET_LEN]);

#endif
