/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for update_parse and its section walks; replays a corpus in make check. */
#include <stdint.h>
#include <stdlib.h>

#include "proto/dns.h"
#include "proto/update.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * One input as an UPDATE: parsed, and when accepted both sections walked
 * again, each record of a kind its section allows and owned inside the
 * zone (what the evaluation after it relies on). A crash, a sanitizer
 * report or an abort is a finding.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static update_rr_t rr;
	update_msg_t m;
	int rcode = update_parse(&m, data, size, &rr, NULL);
	if (rcode != DNS_RCODE_NOERROR) {
		if (rcode != DNS_RCODE_FORMERR && rcode != DNS_RCODE_NOTZONE)
			abort();
		return 0;
	}
	for (int s = UPDATE_SECTION_PREREQ; s <= UPDATE_SECTION_UPDATE; s++) {
		update_iter_t it;
		update_iter_init(&it, &m, (enum update_section)s);
		int rc;
		while ((rc = update_iter_next(&it, &rr, NULL)) > 0) {
			bool prereq = rr.op <= UPDATE_PREREQ_NXDOMAIN;
			if (prereq != (s == UPDATE_SECTION_PREREQ) ||
			    !name_is_subdomain(rr.owner, m.zone))
				abort();
		}
		if (rc != 0)
			abort(); /* a walk update_parse accepted fails later */
	}
	return 0;
}
