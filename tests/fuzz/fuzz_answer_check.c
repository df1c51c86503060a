/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The promises every answer of answer_query keeps, checked for the fuzz targets that ask it. */
#include "tests/fuzz/fuzz_answer_check.h"

#include <stdio.h>
#include <stdlib.h>

#include "proto/dns.h"

void fuzz_answer_fail(const char *target, const char *why, const answer_ctx_t *ctx, size_t n)
{
	fprintf(stderr, "%s: %s (%s, server size %u, answer %zu octets)\n", target, why,
		ctx->tcp ? "TCP" : "UDP", (unsigned)ctx->edns_size, n);
	abort();
}

ldns_pkt *fuzz_answer_parse(const char *target, const uint8_t *q, size_t qlen, const uint8_t *out,
			    size_t n, size_t cap, const answer_ctx_t *ctx,
			    const answer_info_t *info)
{
	size_t limit = ctx->tcp ? DNS_TCP_MAX : info->edns ? ctx->edns_size : DNS_UDP_MIN;
	if (limit < DNS_UDP_MIN)
		limit = DNS_UDP_MIN;
	if (n > cap || n > limit)
		fuzz_answer_fail(target, "answer longer than the transport allows", ctx, n);
	if (n < DNS_HEADER_SIZE || qlen < 2)
		fuzz_answer_fail(target, "answer shorter than a header", ctx, n);
	if (out[0] != q[0] || out[1] != q[1] || !(out[2] & (DNS_FLAG_QR >> 8)))
		fuzz_answer_fail(target, "answer without the query's ID or QR", ctx, n);
	ldns_pkt *p = NULL;
	ldns_status s = ldns_wire2pkt(&p, out, n);
	if (s != LDNS_STATUS_OK) {
		fprintf(stderr, "%s: ldns: %s\n", target, ldns_get_errorstr_by_id(s));
		fuzz_answer_fail(target, "answer ldns cannot parse", ctx, n);
	}
	return p;
}
