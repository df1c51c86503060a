/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Addresses as configured and as seen: prefixes (ADDR/BITS), raw octets, IPv4-mapped forms. */
#ifndef SHOAL_SERVER_COMMON_ADDR_H
#define SHOAL_SERVER_COMMON_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* An address with its port, ADDR@PORT (listen, metrics). */
typedef struct listen_addr {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[80]; /* as written, for logs */
} listen_addr_t;

/* Most prefixes one list holds (rate-limit-exempt, metrics-allow). */
#define ADDR_PREFIX_LIST_MAX 64

/*
 * An address prefix. An IPv4-mapped IPv6 prefix (::ffff:192.0.2.0/120) is
 * kept as the IPv4 prefix it maps (192.0.2.0/24), as clients are compared
 * unmapped.
 */
typedef struct addr_prefix {
	uint8_t len;  /* address octets: 4 or 16 */
	uint8_t bits; /* prefix length, at most 8 * len */
	uint8_t addr[16];
} addr_prefix_t;

/* A list of prefixes. */
typedef struct addr_prefix_list {
	addr_prefix_t items[ADDR_PREFIX_LIST_MAX];
	size_t count;
} addr_prefix_list_t;

/*
 * Parse "ADDR/BITS" or "ADDR" (a whole address) into *p; the bits past
 * the prefix are cleared. Returns 0 or SHOAL_EINVAL. Any thread.
 */
int addr_prefix_parse(const char *text, addr_prefix_t *p);

/* p as addr_prefix_parse reads it, "192.0.2.0/24", into buf (INET6_ADDRSTRLEN + 4 octets). */
void addr_prefix_text(const addr_prefix_t *p, char *buf, size_t len);

/*
 * Does ip (ip_len 4 or 16 octets; IPv4-mapped counts as IPv4) lie in p?
 * An IPv4 address never lies in an IPv6 prefix. Any thread; no allocation.
 */
bool addr_prefix_match(const addr_prefix_t *p, const uint8_t *ip, size_t ip_len);

/* Does ip lie in any prefix of l? As addr_prefix_match. */
bool addr_prefix_list_match(const addr_prefix_list_t *l, const uint8_t *ip, size_t ip_len);

/* Copy the first `bits` bits of ip into out (len octets), the rest cleared. */
void addr_mask_copy(uint8_t *out, const uint8_t *ip, size_t len, unsigned bits);

/*
 * An IPv4-mapped IPv6 address (RFC 4291 2.5.5.2) as the IPv4 address it
 * maps: *ip and *ip_len move to its last 4 octets; others are left alone.
 */
void addr_unmap(const uint8_t **ip, size_t *ip_len);

#endif
