/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Address prefixes: parsed, printed, matched; IPv4-mapped addresses seen as IPv4. */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "server/common/addr.h"

/* The prefix of an IPv4-mapped IPv6 address, ::ffff:0:0/96 (RFC 4291 2.5.5.2). */
static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

QUERY_PATH void addr_mask_copy(uint8_t *out, const uint8_t *ip, size_t len, unsigned bits)
{
	for (size_t i = 0; i < len; i++) {
		unsigned keep = bits >= 8 * (i + 1) ? 8 : bits > 8 * i ? bits - 8 * (unsigned)i : 0;
		out[i] = keep ? (uint8_t)(ip[i] & (0xff << (8 - keep))) : 0;
	}
}

int addr_prefix_parse(const char *text, addr_prefix_t *p)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(text, '/');
	size_t hlen = slash ? (size_t)(slash - text) : strlen(text);
	if (hlen == 0 || hlen >= sizeof(host))
		return SHOAL_EINVAL;
	memcpy(host, text, hlen);
	host[hlen] = '\0';
	uint8_t addr[16];
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, host, addr) == 1)
		p->len = 4;
	else if (inet_pton(AF_INET6, host, addr) == 1)
		p->len = 16;
	else
		return SHOAL_EINVAL;
	unsigned long bits = 8ul * p->len;
	if (slash) {
		char *end;
		if (!slash[1] || slash[1] == '-' || slash[1] == '+')
			return SHOAL_EINVAL;
		bits = strtoul(slash + 1, &end, 10);
		if (*end || bits > 8ul * p->len)
			return SHOAL_EINVAL;
	}
	/*
	 * Written IPv4-mapped (::ffff:192.0.2.0/120): the IPv4 prefix it
	 * maps, as clients are compared; kept as IPv6 it never matched.
	 */
	if (p->len == 16 && bits >= 96 && !memcmp(addr, v4_mapped, sizeof(v4_mapped))) {
		memmove(addr, addr + sizeof(v4_mapped), 4);
		p->len = 4;
		bits -= 96;
	}
	p->bits = (uint8_t)bits;
	addr_mask_copy(p->addr, addr, p->len, p->bits);
	return 0;
}

void addr_prefix_text(const addr_prefix_t *p, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	inet_ntop(p->len == 4 ? AF_INET : AF_INET6, p->addr, host, sizeof(host));
	snprintf(buf, len, "%s/%u", host, (unsigned)p->bits);
}

QUERY_PATH void addr_unmap(const uint8_t **ip, size_t *ip_len)
{
	if (*ip_len == 16 && memcmp(*ip, v4_mapped, sizeof(v4_mapped)) == 0) {
		*ip += sizeof(v4_mapped);
		*ip_len = 4;
	}
}

QUERY_PATH bool addr_prefix_match(const addr_prefix_t *p, const uint8_t *ip, size_t ip_len)
{
	addr_unmap(&ip, &ip_len);
	if (ip_len != p->len)
		return false;
	uint8_t net[16];
	addr_mask_copy(net, ip, ip_len, p->bits);
	return memcmp(net, p->addr, ip_len) == 0;
}

QUERY_PATH bool addr_prefix_list_match(const addr_prefix_list_t *l, const uint8_t *ip,
				       size_t ip_len)
{
	for (size_t i = 0; i < l->count; i++)
		if (addr_prefix_match(&l->items[i], ip, ip_len))
			return true;
	return false;
}
