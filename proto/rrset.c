/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which RDATA names may be compressed, and where they sit in one RDATA (from proto/rdata.c). */
#include "proto/rrset.h"
#include "proto/rdata.h"

bool rrtype_compressible(uint16_t type)
{
	/* RFC 3597 4: only the well-known RFC 1035 types; the table marks their names */
	const rdata_desc_t *d = rdata_desc(type);
	for (int i = 0; d && i < RDATA_FIELDS_MAX && d->fields[i] != RDATA_END; i++)
		if (d->fields[i] == RDATA_NAME_C)
			return true;
	return false;
}

int rrtype_rdata_names(uint16_t type, const uint8_t *rdata, uint16_t rdlen, uint16_t *out, int max)
{
	int n = rdata_walk(type, rdata, rdlen, out, max, NULL);
	return n > max ? max : n;
}
