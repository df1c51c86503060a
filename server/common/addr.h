/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Socket addresses, the one helper: parsed (ADDR[@PORT][/BITS]), compared, as octets, as text. */
#ifndef SHOAL_SERVER_COMMON_ADDR_H
#define SHOAL_SERVER_COMMON_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * One rule holds for every address here, written or seen: an IPv4-mapped
 * IPv6 address (::ffff:a.b.c.d, RFC 4291 2.5.5.2) is the IPv4 address it
 * maps. Written, it is parsed as IPv4 (so it can be bound, and matches what
 * it names); seen, it is compared, counted and printed as IPv4.
 */

/* What may follow ADDR in the text addr_parse reads. */
enum addr_parse_flags {
	ADDR_PORT = 1u << 0,    /* "@PORT", 1 to 65535; none written: 53, DNS's */
	ADDR_BITS = 1u << 1,    /* "/BITS", a prefix; none written: the whole address */
	ADDR_NETWORK = 1u << 2, /* with ADDR_BITS: bits set past the prefix are refused */
};

/* Room for addr_text's text, its NUL counted: an IPv6 address, "@", five digits. */
#define ADDR_TEXT_MAX (INET6_ADDRSTRLEN + 6)

/* An address as addr_parse reads it. */
typedef struct addr_parsed {
	struct sockaddr_storage sa; /* family, address, port (0 without ADDR_PORT) */
	socklen_t len;              /* of sa's family: sizeof(struct sockaddr_in) or _in6 */
	uint8_t bits;               /* the prefix: as written, else 32 or 128 */
} addr_parsed_t;

/*
 * Parse "ADDR", "ADDR@PORT", "ADDR/BITS" (or both, in that order) as flags
 * allow: ADDR an IPv4 or IPv6 address, which may be written in brackets
 * ("[2001:db8::1]@5300"), never a name or an IPv6 scope ("%eth0"); PORT
 * and BITS decimal digits. With ADDR_BITS the address is the network's:
 * bits past the prefix are cleared, or refused with ADDR_NETWORK; an
 * IPv4-mapped network (its prefix 96 or more) is the IPv4 one, prefix less
 * 96. Returns 0, or SHOAL_EINVAL with the reason in err (NULL: not wanted):
 * "\"ADDR\" is not an IPv4 or IPv6 address", "\"TEXT\": port \"P\" out of
 * range", "\"TEXT\": prefix \"B\" out of range", "\"TEXT\": the address
 * has bits set past the /B prefix". Any thread.
 */
int addr_parse(const char *text, unsigned flags, addr_parsed_t *out, char *err, size_t errlen);

/*
 * The address octets of sa: 4 for IPv4 (an IPv4-mapped address counts as
 * its last 4), 16 for IPv6, 0 for another family; *ip points into sa. Any
 * thread; no allocation (the query path).
 */
size_t addr_octets(const struct sockaddr *sa, const uint8_t **ip);

/* sa's port, host order; 0 for a family without ports. Any thread. */
uint16_t addr_port(const struct sockaddr *sa);

/* Set sa's port (IPv4 or IPv6; another family is left alone). */
void addr_set_port(struct sockaddr *sa, uint16_t port);

/*
 * The same address (octets as addr_octets gives them), port and IPv6
 * scope: the peer an answer comes from, the address a socket is bound to.
 * False for a family without addresses. Any thread.
 */
bool addr_same(const struct sockaddr *a, const struct sockaddr *b);

/* Is sa on loopback (127.0.0.0/8, ::1), where only this host reaches it? */
bool addr_is_loopback(const struct sockaddr *sa);

/*
 * ip (len 4 or 16 octets) as text, "192.0.2.1", "2001:db8::1" (RFC 5952),
 * "?" for another length, into buf (INET6_ADDRSTRLEN fits any). Returns buf.
 */
const char *addr_ip_text(const uint8_t *ip, size_t len, char *buf, size_t cap);

/*
 * sa as Shoal logs an address, "ADDR@PORT": "192.0.2.1@53", "::1@5300"
 * (IPv6 without brackets), an IPv4-mapped address as IPv4, "?@0" for
 * another family, into buf (ADDR_TEXT_MAX fits any); addr_parse with
 * ADDR_PORT reads it back. Returns buf. Any thread.
 */
const char *addr_text(const struct sockaddr *sa, char *buf, size_t cap);

/* An address with its port, ADDR@PORT (listen, metrics). */
typedef struct listen_addr {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[80]; /* addr_text's, for logs and the takeover's records */
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
 * Parse "ADDR/BITS" or "ADDR" (a whole address) into *p, as addr_parse
 * with ADDR_BITS: the bits past the prefix are cleared. Returns 0 or
 * SHOAL_EINVAL. Any thread.
 */
int addr_prefix_parse(const char *text, addr_prefix_t *p);

/* The prefix of sa's first `bits` bits (at most its length) into *p, the rest cleared. */
void addr_prefix_of(addr_prefix_t *p, const struct sockaddr *sa, unsigned bits);

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
