/* Which RDATA names may be compressed, and where they sit in one RDATA. */
#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rrset.h"

bool rrtype_compressible(uint16_t type)
{
	/* RFC 3597 4: only the well-known RFC 1035 types; later types never */
	switch (type) {
	case DNS_TYPE_NS:
	case DNS_TYPE_MD:
	case DNS_TYPE_MF:
	case DNS_TYPE_CNAME:
	case DNS_TYPE_SOA:
	case DNS_TYPE_MB:
	case DNS_TYPE_MG:
	case DNS_TYPE_MR:
	case DNS_TYPE_PTR:
	case DNS_TYPE_MINFO:
	case DNS_TYPE_MX:
		return true;
	default:
		return false;
	}
}

/* Length of the uncompressed name at rdata[off], or -1 when it overruns. */
static int rdata_name_len(const uint8_t *rdata, uint16_t rdlen, size_t off)
{
	size_t p = off;
	for (;;) {
		if (p >= rdlen || (rdata[p] & 0xc0))
			return -1;
		if (rdata[p] == 0)
			return (int)(p + 1 - off);
		p += 1 + (size_t)rdata[p];
		if (p - off > 255)
			return -1;
	}
}

int rrtype_rdata_names(uint16_t type, const uint8_t *rdata, uint16_t rdlen, uint16_t *out,
		       int max)
{
	int first = 0, count = 0;
	switch (type) {
	case DNS_TYPE_NS:
	case DNS_TYPE_MD:
	case DNS_TYPE_MF:
	case DNS_TYPE_CNAME:
	case DNS_TYPE_MB:
	case DNS_TYPE_MG:
	case DNS_TYPE_MR:
	case DNS_TYPE_PTR:
		count = 1;
		break;
	case DNS_TYPE_SOA:
	case DNS_TYPE_MINFO:
		count = 2;
		break;
	case DNS_TYPE_MX:
		first = 2; /* preference */
		count = 1;
		break;
	default:
		return 0;
	}
	size_t off = (size_t)first;
	int n = 0;
	for (int i = 0; i < count; i++) {
		int len = rdata_name_len(rdata, rdlen, off);
		if (len < 0)
			return SHOAL_EMALFORMED;
		if (n < max)
			out[n++] = (uint16_t)off;
		off += (size_t)len;
	}
	if (type == DNS_TYPE_SOA && off + 20 != rdlen)
		return SHOAL_EMALFORMED; /* five 32-bit numbers follow */
	return n;
}
