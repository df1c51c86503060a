/* The responders the programs choose from. */
#include "config.h"

#include <string.h>

#include "proto/dns.h"
#include "server/responder.h"

const responder_t responder_zones = { .answer = answer_query, .zones = true };

/*
 * The kernel ceiling responder for benchmarks: the query comes back with QR
 * set and nothing looked up, so the cost measured is the socket path alone.
 */
static size_t ceiling_answer(const zonedb_t *db, const uint8_t *q, size_t len, uint8_t *out,
			     size_t cap, const answer_ctx_t *ctx, answer_info_t *info)
{
	if (len < DNS_HEADER_SIZE || len > cap || (q[2] & 0x80)) {
		info->dropped = true;
		info->malformed = len < DNS_HEADER_SIZE;
		return 0;
	}
	memcpy(out, q, len);
	out[2] |= 0x80;
	info->rcode = DNS_RCODE_NOERROR;
	return len;
}

const responder_t responder_ceiling = {
	.answer = ceiling_answer,
	.warning = "--ceiling: every query is echoed with QR set, no zone is consulted "
		   "(benchmark only)",
};
