/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Address lists: parsing "ADDR[/PREFIX|@PORT] KEY|NOKEY" entries and matching peers against them.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "server/conf/acl.h"

static int syntax(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int syntax(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return SHOAL_ESYNTAX;
}

/* A decimal number from s (all of it) within [0, max]; -1 otherwise. */
static long parse_number(const char *s, long max)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	return errno || *end || v > max ? -1 : v;
}

/* The prefix of an IPv4-mapped IPv6 address, ::ffff:0:0/96 (RFC 4291 2.5.5.2). */
static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* Whether the bits of the address past prefix are all zero (a network, not a host). */
static bool host_bits_clear(const uint8_t *a, size_t len, unsigned prefix)
{
	for (size_t i = 0; i < len; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;
		uint8_t mask = keep == 8 ? 0xff : (uint8_t)(0xff00 >> keep);
		if (a[i] & (uint8_t)~mask)
			return false;
	}
	return true;
}

int acl_entry_parse(const char *text, enum acl_kind kind, acl_entry_t *e, char *key_name,
		    size_t key_cap, char *err, size_t errlen)
{
	char addr[ACL_TEXT_MAX], key[ACL_TEXT_MAX], extra[8];
	memset(e, 0, sizeof(*e));
	e->key = ACL_NOKEY;
	int words = sscanf(text, "%319s %319s %7s", addr, key, extra);
	if (words < 2)
		return syntax(err, errlen, "\"%s\": expected %s followed by a key name or NOKEY",
			      text, kind == ACL_MATCH ? "ADDR[/PREFIX]" : "ADDR[@PORT]");
	if (words > 2)
		return syntax(err, errlen, "\"%s\": unexpected words after the key name", text);
	snprintf(e->text, sizeof(e->text), "%s", addr);
	char sep = kind == ACL_MATCH ? '/' : '@';
	char *cut = strrchr(addr, sep);
	long num = -1;
	if (cut) {
		*cut = '\0';
		num = parse_number(cut + 1, kind == ACL_MATCH ? 128 : 65535);
	}
	/* "[2001:db8::1]@5300", as people write IPv6 addresses with ports */
	char *host = addr;
	size_t hlen = strlen(host);
	if (hlen > 2 && host[0] == '[' && host[hlen - 1] == ']') {
		host[hlen - 1] = '\0';
		host++;
	}
	struct sockaddr_in *in4 = (struct sockaddr_in *)&e->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&e->addr;
	const uint8_t *bytes;
	size_t blen;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		e->addr_len = sizeof(*in4);
		bytes = (const uint8_t *)&in4->sin_addr;
		blen = 4;
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		e->addr_len = sizeof(*in6);
		bytes = (const uint8_t *)&in6->sin6_addr;
		blen = 16;
	} else {
		return syntax(err, errlen, "\"%s\" is not an IPv4 or IPv6 address", host);
	}
	e->prefix = (uint8_t)(8 * blen);
	if (cut && (num < 0 || (kind == ACL_MATCH && num > (long)(8 * blen)) ||
		    (kind == ACL_TARGET && num == 0)))
		return syntax(err, errlen, "\"%s\": %s \"%s\" out of range", e->text,
			      kind == ACL_MATCH ? "prefix" : "port", cut + 1);
	if (kind == ACL_MATCH && cut) {
		e->prefix = (uint8_t)num;
		if (!host_bits_clear(bytes, blen, e->prefix))
			return syntax(err, errlen,
				      "\"%s\": the address has bits set past the /%ld prefix",
				      e->text, num);
	}
	/*
	 * An IPv4-mapped entry (its prefix at least 96: the host bits check
	 * saw to it) is the IPv4 one it maps, as peers are compared: kept
	 * mapped, it would pair 4 octets of address with 96 more bits.
	 */
	if (blen == 16 && !memcmp(bytes, v4_mapped, sizeof(v4_mapped))) {
		struct in_addr v4;
		memcpy(&v4, bytes + sizeof(v4_mapped), sizeof(v4));
		memset(&e->addr, 0, sizeof(e->addr));
		in4->sin_family = AF_INET;
		in4->sin_addr = v4;
		e->addr_len = sizeof(*in4);
		e->prefix = (uint8_t)(e->prefix - 96);
		blen = 4;
	}
	uint16_t port = kind == ACL_TARGET ? (uint16_t)(cut ? num : 53) : 0;
	if (blen == 4)
		in4->sin_port = htons(port);
	else
		in6->sin6_port = htons(port);
	if (kind == ACL_TARGET && !cut)
		snprintf(e->text, sizeof(e->text), "%s@53", addr);
	if (!strcasecmp(key, "NOKEY"))
		key[0] = '\0';
	snprintf(key_name, key_cap, "%s", key);
	return 0;
}

int acl_add(acl_t *a, const acl_entry_t *e)
{
	acl_entry_t *p = realloc(a->entries, (a->count + 1) * sizeof(*p));
	if (!p)
		return SHOAL_ENOMEM;
	a->entries = p;
	a->entries[a->count++] = *e;
	return 0;
}

void acl_clear(acl_t *a)
{
	free(a->entries);
	a->entries = NULL;
	a->count = 0;
}

/* The address octets of sa, an IPv4-mapped IPv6 address as its IPv4 part. */
static const uint8_t *addr_bytes(const struct sockaddr *sa, size_t *len)
{
	if (sa->sa_family == AF_INET) {
		*len = 4;
		return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	}
	if (sa->sa_family != AF_INET6) {
		*len = 0;
		return NULL;
	}
	const uint8_t *b = (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!memcmp(b, v4_mapped, sizeof(v4_mapped))) {
		*len = 4;
		return b + sizeof(v4_mapped);
	}
	*len = 16;
	return b;
}

bool acl_entry_matches(const acl_entry_t *e, const struct sockaddr *peer)
{
	size_t elen, plen;
	const uint8_t *ea = addr_bytes((const struct sockaddr *)&e->addr, &elen);
	const uint8_t *pa = addr_bytes(peer, &plen);
	if (!ea || !pa || elen != plen)
		return false;
	unsigned bits = e->prefix;
	/* an entry left in the mapped form: its prefix counts the 96 bits before the IPv4 part */
	if (e->addr.ss_family == AF_INET6 && elen == 4)
		bits = bits > 96 ? bits - 96 : 0;
	if (bits > 8 * elen)
		bits = (unsigned)(8 * elen); /* never past the address */
	size_t whole = bits / 8;
	if (memcmp(ea, pa, whole) != 0)
		return false;
	if (bits % 8 == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff00 >> (bits % 8));
	return (ea[whole] & mask) == (pa[whole] & mask);
}

const acl_entry_t *acl_find(const acl_t *a, const struct sockaddr *peer, int key)
{
	for (size_t i = 0; i < a->count; i++) {
		const acl_entry_t *e = &a->entries[i];
		if (e->key == key && acl_entry_matches(e, peer))
			return e;
	}
	return NULL;
}

const char *acl_addr_text(const struct sockaddr *peer, char *buf, size_t cap)
{
	char host[INET6_ADDRSTRLEN] = "?";
	size_t len;
	const uint8_t *b = addr_bytes(peer, &len);
	uint16_t port = 0;
	if (peer->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)peer)->sin_port);
	else if (peer->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)peer)->sin6_port);
	if (b)
		inet_ntop(len == 4 ? AF_INET : AF_INET6, b, host, sizeof(host));
	snprintf(buf, cap, "%s@%u", host, port);
	return buf;
}
