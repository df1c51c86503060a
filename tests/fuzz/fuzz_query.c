/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for query_parse and a response round; replays a corpus in make check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/query.h"
#include "tests/fuzz/fuzz_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * One input: parse it, then build the answer the server would send for
 * the verdict (header, echoed question, OPT with an NSID), and check the
 * result never exceeds the limit. A crash or sanitizer report is a finding.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t nsid[] = "fuzz/0";
	query_t q;
	enum query_verdict v = query_parse(&q, data, size);
	if (v == QUERY_DROP)
		return 0;

	uint8_t buf[4096]; /* the largest limit query_udp_limit gives here is 1232 */
	response_edns_t e = {
		.nsid = q.nsid_requested ? nsid : NULL,
		.nsid_len = q.nsid_requested ? (uint16_t)(sizeof(nsid) - 1) : 0,
	};
	fuzz_respond(&q, v, &e, buf);
	return 0;
}
