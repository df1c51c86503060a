/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Socket addresses: parsed, compared, as octets and text; prefixes; IPv4-mapped seen as IPv4. */
#include "config.h"

#include <arpa/inet.h>
#include <stdarg.h>
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

QUERY_PATH void addr_unmap(const uint8_t **ip, size_t *ip_len)
{
	if (*ip_len == 16 && memcmp(*ip, v4_mapped, sizeof(v4_mapped)) == 0) {
		*ip += sizeof(v4_mapped);
		*ip_len = 4;
	}
}

/* ---- parsing ---- */

/* The parts of "[ADDR]@PORT/BITS" as written: each NULL when absent. */
typedef struct parts {
	char host[INET6_ADDRSTRLEN + 2];
	const char *port, *bits;
} parts_t;

static int why(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int why(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return SHOAL_EINVAL;
}

/*
 * Cut text at its last '/' (ADDR_BITS) and then its last '@' (ADDR_PORT);
 * the host without brackets into p->host. A character of a part flags do
 * not allow stays in the host, which then is no address. False when the
 * host is longer than any address.
 */
static bool split(const char *text, unsigned flags, parts_t *p)
{
	const char *slash = flags & ADDR_BITS ? strrchr(text, '/') : NULL;
	size_t hlen = slash ? (size_t)(slash - text) : strlen(text);
	p->bits = slash ? slash + 1 : NULL;
	p->port = NULL;
	for (size_t i = hlen; (flags & ADDR_PORT) && i-- > 0;) {
		if (text[i] == '@') {
			p->port = text + i + 1;
			hlen = i;
			break;
		}
	}
	/* "[2001:db8::1]@53", as people write IPv6 addresses with ports */
	if (hlen > 2 && text[0] == '[' && text[hlen - 1] == ']') {
		text++;
		hlen -= 2;
	}
	if (hlen >= sizeof(p->host))
		return false;
	memcpy(p->host, text, hlen);
	p->host[hlen] = '\0';
	return true;
}

/* The decimal number s (its digits up to end, or to the NUL) within [min, max]; -1 otherwise. */
static long number(const char *s, const char *end, long min, long max)
{
	long v = 0;
	if (!end)
		end = s + strlen(s);
	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = 10 * v + (*s - '0');
		if (v > max)
			return -1;
	}
	return v < min ? -1 : v;
}

/* The address octets (4 or 16) of host into ip; 0 when it is no address. */
static size_t host_octets(const char *host, uint8_t ip[16])
{
	if (inet_pton(AF_INET, host, ip) == 1)
		return 4;
	return inet_pton(AF_INET6, host, ip) == 1 ? 16 : 0;
}

/* A socket address of ip (4 or 16 octets) and port into a. */
static void fill(addr_parsed_t *a, const uint8_t *ip, size_t len, uint16_t port)
{
	memset(&a->sa, 0, sizeof(a->sa));
	if (len == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)&a->sa;
		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, ip, 4);
		a->len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->sa;
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, ip, 16);
		a->len = sizeof(*in6);
	}
	addr_set_port((struct sockaddr *)&a->sa, port);
}

int addr_parse(const char *text, unsigned flags, addr_parsed_t *out, char *err, size_t errlen)
{
	parts_t p;
	uint8_t ip[16], net[16];
	bool short_enough = split(text, flags, &p);
	size_t len = short_enough ? host_octets(p.host, ip) : 0;
	if (!len)
		return why(err, errlen, "\"%s\" is not an IPv4 or IPv6 address",
			   short_enough ? p.host : text);
	long port = p.port ? number(p.port, p.bits ? p.bits - 1 : NULL, 1, 65535) : 53;
	if (port < 0)
		return why(err, errlen, "\"%s\": port \"%.*s\" out of range", text,
			   (int)(p.bits ? (size_t)(p.bits - 1 - p.port) : strlen(p.port)), p.port);
	long bits = p.bits ? number(p.bits, NULL, 0, 8 * (long)len) : 8 * (long)len;
	if (bits < 0)
		return why(err, errlen, "\"%s\": prefix \"%s\" out of range", text, p.bits);
	addr_mask_copy(net, ip, len, (unsigned)bits);
	if ((flags & ADDR_NETWORK) && memcmp(net, ip, len))
		return why(err, errlen, "\"%s\": the address has bits set past the /%ld prefix",
			   text, bits);
	/*
	 * Mapped: the IPv4 network it maps, as peers are compared (kept IPv6, it
	 * matched none); after the clearing, only a prefix of 96 or more is.
	 */
	const uint8_t *at = net;
	size_t n = len;
	addr_unmap(&at, &n);
	out->bits = (uint8_t)(bits - 8 * (long)(len - n));
	fill(out, at, n, (uint16_t)((flags & ADDR_PORT) ? port : 0));
	return 0;
}

/* ---- socket addresses ---- */

QUERY_PATH size_t addr_octets(const struct sockaddr *sa, const uint8_t **ip)
{
	size_t len = 0;
	*ip = NULL;
	if (sa->sa_family == AF_INET) {
		*ip = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		len = 4;
	} else if (sa->sa_family == AF_INET6) {
		*ip = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		len = 16;
		addr_unmap(ip, &len);
	}
	return len;
}

uint16_t addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

void addr_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

/* sa's IPv6 scope (RFC 4007 6: a link-local address names a host on one link); 0 otherwise. */
static uint32_t scope_of(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_scope_id : 0;
}

bool addr_same(const struct sockaddr *a, const struct sockaddr *b)
{
	const uint8_t *x, *y;
	size_t n = addr_octets(a, &x);
	return n && addr_octets(b, &y) == n && !memcmp(x, y, n) && addr_port(a) == addr_port(b) &&
	       scope_of(a) == scope_of(b);
}

bool addr_is_loopback(const struct sockaddr *sa)
{
	static const uint8_t v6_loopback[16] = { [15] = 1 };
	const uint8_t *ip;
	size_t len = addr_octets(sa, &ip);
	return len == 4 ? ip[0] == 127 : len == 16 && !memcmp(ip, v6_loopback, 16);
}

const char *addr_ip_text(const uint8_t *ip, size_t len, char *buf, size_t cap)
{
	if ((len != 4 && len != 16) ||
	    !inet_ntop(len == 4 ? AF_INET : AF_INET6, ip, buf, (socklen_t)cap))
		snprintf(buf, cap, "?");
	return buf;
}

const char *addr_text(const struct sockaddr *sa, char *buf, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	const uint8_t *ip;
	size_t len = addr_octets(sa, &ip);
	snprintf(buf, cap, "%s@%u", addr_ip_text(ip, len, host, sizeof(host)),
		 (unsigned)addr_port(sa));
	return buf;
}

/* ---- prefixes ---- */

int addr_prefix_parse(const char *text, addr_prefix_t *p)
{
	addr_parsed_t a;
	int rc = addr_parse(text, ADDR_BITS, &a, NULL, 0);
	if (rc == 0)
		addr_prefix_of(p, (const struct sockaddr *)&a.sa, a.bits);
	return rc;
}

void addr_prefix_of(addr_prefix_t *p, const struct sockaddr *sa, unsigned bits)
{
	const uint8_t *ip;
	size_t len = addr_octets(sa, &ip);
	memset(p, 0, sizeof(*p));
	p->len = (uint8_t)len;
	p->bits = (uint8_t)(bits < 8 * len ? bits : 8 * len);
	addr_mask_copy(p->addr, ip, len, p->bits);
}

void addr_prefix_text(const addr_prefix_t *p, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	snprintf(buf, len, "%s/%u", addr_ip_text(p->addr, p->len, host, sizeof(host)),
		 (unsigned)p->bits);
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
