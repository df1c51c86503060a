/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The answer a fuzz target builds for a parsed query: header, question, OPT; never past the limit.
 */
#ifndef SHOAL_TESTS_FUZZ_RESPONSE_H
#define SHOAL_TESTS_FUZZ_RESPONSE_H

#include <stdint.h>
#include <stdlib.h>

#include "proto/dns.h"
#include "proto/query.h"
#include "proto/response.h"

/*
 * Build into buf[0..4096) the answer the server would send for q and its
 * verdict v (not QUERY_DROP), with e's OPT (e->present and e->do_bit are
 * set here from q), at a UDP limit of 1232. Aborts when the answer exceeds
 * the limit query_udp_limit gives. Returns the answer's length, or 0 when
 * response_init refused it.
 */
static inline int fuzz_respond(const query_t *q, enum query_verdict v, response_edns_t *e,
			       uint8_t buf[4096])
{
	e->present = q->edns;
	e->udp_size = 1232;
	e->do_bit = q->edns_do;
	size_t limit = query_udp_limit(q, 1232);
	if (limit > 4096)
		limit = 4096;
	response_t r;
	if (response_init(&r, q, buf, 4096, limit, response_opt_size(e)) != 0)
		return 0;
	if (v == QUERY_FORMERR)
		response_set_rcode(&r, DNS_RCODE_FORMERR);
	else if (v == QUERY_BADVERS)
		response_set_rcode(&r, DNS_RCODE_BADVERS);
	else if (v == QUERY_NOTIMP)
		response_set_rcode(&r, DNS_RCODE_NOTIMP);
	int n = response_finish(&r, e);
	if (n > (int)limit)
		abort();
	return n;
}

#endif
