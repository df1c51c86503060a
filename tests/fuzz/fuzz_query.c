/* Fuzz target for query_parse and a response round; replays a corpus in make check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/query.h"
#include "proto/response.h"

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
		.present = q.edns,
		.udp_size = 1232,
		.do_bit = q.edns_do,
		.nsid = q.nsid_requested ? nsid : NULL,
		.nsid_len = q.nsid_requested ? (uint16_t)(sizeof(nsid) - 1) : 0,
	};
	size_t limit = query_udp_limit(&q, 1232);
	if (limit > sizeof(buf))
		limit = sizeof(buf);
	response_t r;
	if (response_init(&r, &q, buf, sizeof(buf), limit, response_opt_size(&e)) != 0)
		return 0;
	if (v == QUERY_FORMERR)
		response_set_rcode(&r, DNS_RCODE_FORMERR);
	else if (v == QUERY_BADVERS)
		response_set_rcode(&r, DNS_RCODE_BADVERS);
	else if (v == QUERY_NOTIMP)
		response_set_rcode(&r, DNS_RCODE_NOTIMP);
	int n = response_finish(&r, &e);
	if (n > (int)limit)
		abort();
	return 0;
}
