/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A record as a master file line, written from its wire form so that every reader reads it back. */
#ifndef SHOAL_PROTO_RRTEXT_H
#define SHOAL_PROTO_RRTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/name.h"

/*
 * The longest line rrtext_write writes: the owner, TTL, class and type
 * words, then RFC 3597's generic form of the longest RDATA ("\# 65535",
 * two hex digits an octet, a blank every 32 octets) and the line end.
 */
#define RRTEXT_HEX_RUN 32 /* octets between two blanks of the generic form */
#define RRTEXT_MAX     (NAME_TEXT_MAX + 64 + 2 * 65535 + 65535 / RRTEXT_HEX_RUN + 2)

/*
 * Write one record as a line of a master file (RFC 1035 5.1): its owner
 * (a full name), TTL, class and type, its RDATA, and "\n". rec is the
 * stored form: type, class, TTL, RDLENGTH, RDATA with every name
 * uncompressed (as rrset_wire_t holds it). Types that Knot's zone scanner
 * and ldns both know by name are written by name, the others TYPEnnn
 * (RFC 3597 5). The RDATA is in presentation form for the types written
 * field by field here (the common ones, DNSSEC's) when it fits in
 * RRTEXT_MAX and every field has a form that both readers read back as
 * the same octets; otherwise, and for every other type, in RFC 3597's
 * generic form "\# N hex", which every reader reads for every type. So
 * the line reads back as the same record, octet for octet, whichever reader
 * reads it. dst must hold RRTEXT_MAX octets: the line is not NUL-terminated.
 * Returns its length, or SHOAL_EMALFORMED when the record does not fit its
 * type's layout (proto/rdata.h; the store holds none such). No allocation;
 * any thread.
 */
int rrtext_write(char *dst, const uint8_t *owner, const uint8_t *rec);

#endif
