/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Parsing a received query: header, question, EDNS (RFC 1035 4.1, RFC 6891). */
#include <string.h>

#include "proto/dns.h"
#include "proto/hot.h"
#include "proto/query.h"

/*
 * Read one OPT record's fields (after its owner and type) into q.
 * Returns QUERY_OK, or QUERY_FORMERR: for a malformed OPT record with
 * q->edns left false, for a malformed COOKIE option with the OPT's fields
 * read (the answer carries EDNS) and no cookie.
 */
static enum query_verdict parse_opt(query_t *q, wire_t *w)
{
	uint16_t udp_size = wire_read_u16(w);
	uint32_t ttl = wire_read_u32(w);
	uint16_t rdlen = wire_read_u16(w);
	const uint8_t *rdata = wire_read_ptr(w, rdlen);
	if (w->err)
		return QUERY_FORMERR;

	wire_t opts;
	wire_init_read(&opts, rdata, rdlen);
	bool nsid = false, cookie_malformed = false;
	const uint8_t *cookie = NULL;
	uint16_t cookie_len = 0;
	while (wire_left(&opts) > 0) {
		uint16_t code = wire_read_u16(&opts);
		uint16_t olen = wire_read_u16(&opts);
		const uint8_t *odata = wire_read_ptr(&opts, olen);
		if (opts.err)
			return QUERY_FORMERR; /* RFC 6891 6.1.2: options must fit RDLEN */
		if (code == DNS_EDNS_NSID) {
			nsid = true;
		} else if (code == DNS_EDNS_COOKIE && !cookie && !cookie_malformed) {
			/*
			 * RFC 7873 5.2: only the first COOKIE option counts, the
			 * others are ignored. 5.2.2: 8 octets client cookie, or
			 * 16 to 40 in all, else FORMERR.
			 */
			if (olen != 8 && (olen < 16 || olen > 40))
				cookie_malformed = true;
			else
				cookie = odata;
			cookie_len = olen;
		}
		/* RFC 6891 6.1.2: unknown options are ignored */
	}
	q->edns = true;
	q->edns_udp_size = udp_size;
	q->edns_version = (uint8_t)(ttl >> 16);
	q->edns_do = (ttl & DNS_EDNS_DO) != 0;
	q->nsid_requested = nsid;
	q->cookie = cookie;
	q->cookie_len = cookie ? (uint8_t)cookie_len : 0;
	/* the OPT is well formed, the COOKIE option in it is not: FORMERR with EDNS */
	return cookie_malformed ? QUERY_FORMERR : QUERY_OK;
}

/* Walk the answer, authority and additional sections looking for the OPT. */
static enum query_verdict parse_records(query_t *q, wire_t *w)
{
	const uint16_t counts[3] = { q->ancount, q->nscount, q->arcount };
	bool seen_opt = false;
	for (int s = 0; s < 3; s++) {
		for (uint16_t i = 0; i < counts[s]; i++) {
			bool root_owner = w->pos < w->len && w->buf[w->pos] == 0;
			if (name_skip(w) < 0)
				return QUERY_FORMERR;
			uint16_t type = wire_read_u16(w);
			if (w->err)
				return QUERY_FORMERR;
			if (type != DNS_TYPE_OPT) {
				/* RFC 8945 5.2: the last additional record (tsig_find checks) */
				q->tsig = q->tsig || (s == 2 && type == DNS_TYPE_TSIG);
				wire_skip(w, 2 + 4); /* class, TTL */
				uint16_t rdlen = wire_read_u16(w);
				wire_skip(w, rdlen);
				if (w->err)
					return QUERY_FORMERR;
				continue;
			}
			/* RFC 6891 6.1.1: one OPT, in the additional section, owned by the root */
			if (s != 2 || seen_opt || !root_owner) {
				q->edns = false;
				return QUERY_FORMERR;
			}
			seen_opt = true;
			/* q->edns is set only when the OPT record itself is well formed */
			if (parse_opt(q, w) != QUERY_OK)
				return QUERY_FORMERR;
		}
	}
	/* bytes after the counted records are ignored, as NSD and Knot do */
	return QUERY_OK;
}

QUERY_PATH enum query_verdict query_parse(query_t *q, const uint8_t *pkt, size_t len)
{
	memset(q, 0, offsetof(query_t, qname));
	q->qname_len = 0;
	q->qtype = q->qclass = 0;
	q->question_end = 0;
	memset(&q->edns, 0, sizeof(*q) - offsetof(query_t, edns));
	q->pkt = pkt;
	q->len = len;

	/* RFC 1035 4.1.1: nothing to answer without a whole header, never a response */
	if (len < DNS_HEADER_SIZE)
		return QUERY_DROP;
	wire_t w;
	wire_init_read(&w, pkt, len);
	q->id = wire_read_u16(&w);
	q->flags = wire_read_u16(&w);
	q->qdcount = wire_read_u16(&w);
	q->ancount = wire_read_u16(&w);
	q->nscount = wire_read_u16(&w);
	q->arcount = wire_read_u16(&w);
	if (q->flags & DNS_FLAG_QR)
		return QUERY_DROP;
	q->opcode = (uint8_t)((q->flags & DNS_OPCODE_MASK) >> DNS_OPCODE_SHIFT);

	bool records = q->qdcount == 0; /* with no question, records start at 12 */
	if (q->qdcount == 1) {
		int n = name_unpack(&w, q->qname, true);
		q->qtype = wire_read_u16(&w);
		q->qclass = wire_read_u16(&w);
		if (n > 0 && !w.err) {
			q->qname_len = (uint8_t)n;
			q->has_question = true;
			q->question_end = w.pos;
			records = true;
		}
	}
	/*
	 * The OPT is read whatever the opcode or question, so that NOTIMP and
	 * FORMERR answers carry EDNS as Knot's do.
	 */
	enum query_verdict v = records ? parse_records(q, &w) : QUERY_OK;
	if (v != QUERY_OK)
		return v;
	if (q->opcode != DNS_OPCODE_QUERY)
		return QUERY_NOTIMP;
	/* RFC 9619: QDCOUNT must be 1 for QUERY */
	if (!q->has_question)
		return QUERY_FORMERR;
	if (q->edns && q->edns_version > 0)
		return QUERY_BADVERS; /* RFC 6891 6.1.3 */
	return QUERY_OK;
}

QUERY_PATH uint16_t query_udp_limit(const query_t *q, uint16_t server_max)
{
	if (server_max < DNS_UDP_MIN)
		server_max = DNS_UDP_MIN;
	if (!q->edns)
		return DNS_UDP_MIN;
	uint16_t want = q->edns_udp_size < DNS_UDP_MIN ? DNS_UDP_MIN : q->edns_udp_size;
	return want < server_max ? want : server_max;
}
