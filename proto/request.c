/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing the requests a server sends: header, question, and one SOA record. */
#include "proto/request.h"
#include "proto/error.h"
#include "proto/name.h"
#include "proto/wire.h"

int request_write(uint8_t *buf, size_t cap, uint16_t id, enum dns_opcode opcode, uint16_t flags,
		  const uint8_t *qname, uint16_t qtype, enum dns_section section,
		  const uint8_t *soa)
{
	wire_t w;
	wire_init_write(&w, buf, cap);
	wire_write_u16(&w, id);
	wire_write_u16(&w, (uint16_t)(((unsigned)opcode << DNS_OPCODE_SHIFT) & DNS_OPCODE_MASK) |
				   flags);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, soa && section == DNS_SECTION_ANSWER);
	wire_write_u16(&w, soa && section == DNS_SECTION_AUTHORITY);
	wire_write_u16(&w, soa && section == DNS_SECTION_ADDITIONAL);
	wire_write_bytes(&w, qname, name_length(qname));
	wire_write_u16(&w, qtype);
	wire_write_u16(&w, DNS_CLASS_IN);
	if (soa) {
		wire_write_u16(&w, 0xc000 | DNS_HEADER_SIZE); /* the question's name */
		wire_write_bytes(&w, soa, 10u + wire_get_u16(soa + 8));
	}
	return w.err ? SHOAL_ESPACE : (int)w.pos;
}
