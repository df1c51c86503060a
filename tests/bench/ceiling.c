/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoald-ceiling: shoald with an echo for a responder, the benchmark's kernel ceiling. */
#include "config.h"

#include <string.h>

#include "proto/dns.h"
#include "server/daemon/server.h"
#include "server/query/responder.h"

/*
 * The query comes back with QR set and nothing looked up, so what a query
 * costs here is the socket path alone: what this kernel allows.
 */
static size_t echo_answer(const zonedb_t *db, const uint8_t *q, size_t len, uint8_t *out,
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

static const responder_t responder_echo = {
	.answer = echo_answer,
	.zones = false,
	.warning = "shoald-ceiling: every query is echoed with QR set, no zone is consulted "
		   "(benchmark only)",
};

int main(int argc, char **argv)
{
	return server_main(argc, argv, &responder_echo);
}
