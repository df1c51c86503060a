/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A query in wire form with its TCP length prefix, for the test clients (tcpclient, tlsclient). */
#ifndef SHOAL_TESTS_DNSQUERY_H
#define SHOAL_TESTS_DNSQUERY_H

#include <ldns/ldns.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * pkt in wire form with its two-octet length (RFC 1035 4.2.2) into
 * buf[0..cap), pkt freed. Returns its length; one that cannot be built
 * ends the program (status 2), named by prog.
 */
static inline size_t dnsquery_frame(uint8_t *buf, size_t cap, ldns_pkt *pkt, const char *prog)
{
	uint8_t *wire = NULL;
	size_t len = 0;
	if (ldns_pkt2wire(&wire, pkt, &len) != LDNS_STATUS_OK || len + 2 > cap) {
		fprintf(stderr, "%s: cannot build the message\n", prog);
		exit(2);
	}
	buf[0] = (uint8_t)(len >> 8);
	buf[1] = (uint8_t)len;
	memcpy(buf + 2, wire, len);
	free(wire);
	ldns_pkt_free(pkt);
	return len + 2;
}

/*
 * One query for name/type with ID id (and an NSID option when nsid),
 * framed with its two-octet length (RFC 1035 4.2.2), into buf[0..cap).
 * Returns its length; a name or a query that cannot be built ends the
 * program (status 2), named by prog.
 */
static inline size_t dnsquery_build(uint8_t *buf, size_t cap, const char *name, ldns_rr_type type,
				    uint16_t id, bool nsid, const char *prog)
{
	ldns_rdf *qname = ldns_dname_new_frm_str(name);
	if (!qname) {
		fprintf(stderr, "%s: bad name %s\n", prog, name);
		exit(2);
	}
	ldns_pkt *pkt = ldns_pkt_query_new(qname, type, LDNS_RR_CLASS_IN, 0);
	ldns_pkt_set_id(pkt, id);
	if (nsid) {
		ldns_edns_option_list *opts = ldns_edns_option_list_new();
		ldns_edns_option_list_push(opts, ldns_edns_new_from_data(LDNS_EDNS_NSID, 0, NULL));
		ldns_pkt_set_edns_udp_size(pkt, 1232);
		ldns_pkt_set_edns_option_list(pkt, opts);
	}
	return dnsquery_frame(buf, cap, pkt, prog);
}

#endif
