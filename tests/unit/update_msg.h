/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A small builder of UPDATE messages (RFC 2136 2) for the unit tests. */
#ifndef SHOAL_TESTS_UPDATE_MSG_H
#define SHOAL_TESTS_UPDATE_MSG_H

#include <stdint.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "proto/wire.h"

/* A message being built: header, one zone, then records of sections 1 and 2. */
typedef struct umsg {
	uint8_t b[8192];
	wire_t w;
	uint16_t count[4];
} umsg_t;

/* Start an UPDATE of zone (text) of class zclass. */
static inline void umsg_start(umsg_t *u, const char *zone, uint16_t zclass)
{
	memset(u->count, 0, sizeof(u->count));
	wire_init_write(&u->w, u->b, sizeof(u->b));
	wire_write_u16(&u->w, 0x1234);
	wire_write_u16(&u->w, DNS_OPCODE_UPDATE << DNS_OPCODE_SHIFT);
	for (int i = 0; i < 4; i++)
		wire_write_u16(&u->w, 0);
	uint8_t name[NAME_MAXLEN];
	int n = name_from_text(zone, NULL, name);
	wire_write_bytes(&u->w, name, (size_t)n);
	wire_write_u16(&u->w, DNS_TYPE_SOA);
	wire_write_u16(&u->w, zclass);
	u->count[0] = 1;
}

/* Append a record to section s (1 prerequisites, 2 updates); owner relative to origin. */
static inline void umsg_rr(umsg_t *u, int s, const char *owner, const uint8_t *origin,
			   uint16_t type, uint16_t rclass, uint32_t ttl, const void *rdata,
			   uint16_t rdlen)
{
	uint8_t name[NAME_MAXLEN];
	int n = name_from_text(owner, origin, name);
	wire_write_bytes(&u->w, name, (size_t)n);
	wire_write_u16(&u->w, type);
	wire_write_u16(&u->w, rclass);
	wire_write_u32(&u->w, ttl);
	wire_write_u16(&u->w, rdlen);
	wire_write_bytes(&u->w, rdata, rdlen);
	u->count[s]++;
}

/* Write the counts into the header; returns the length. */
static inline size_t umsg_end(umsg_t *u)
{
	for (int i = 0; i < 4; i++)
		wire_put_u16_at(&u->w, 4 + 2 * (size_t)i, u->count[i]);
	return u->w.pos;
}

#endif
