/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading and checking an UPDATE message (RFC 2136 2, 3.1, 3.2, 3.4.1). */
#include <string.h>

#include "proto/dns.h"
#include "proto/rdata.h"
#include "proto/update.h"

/* Why a record is refused: the rcode and, for logs, the text. */
static int refuse(int rcode, const char *text, const char **why)
{
	if (why)
		*why = text;
	return -rcode;
}

/* RFC 2136 3.2.1, 3.2.2: what a prerequisite asks, or FORMERR. */
static int classify_prereq(const update_msg_t *m, update_rr_t *rr, const char **why)
{
	if (rr->ttl != 0)
		return refuse(DNS_RCODE_FORMERR, "prerequisite with a TTL", why);
	if (!name_is_subdomain(rr->owner, m->zone))
		return refuse(DNS_RCODE_NOTZONE, "prerequisite outside the zone", why);
	bool any = rr->type == DNS_TYPE_ANY;
	if (rr->rclass == DNS_CLASS_ANY || rr->rclass == DNS_CLASS_NONE) {
		if (rr->rdlen != 0)
			return refuse(DNS_RCODE_FORMERR,
				      "prerequisite of class ANY or NONE with RDATA", why);
		if (!any && rdata_type_is_meta(rr->type))
			return refuse(DNS_RCODE_FORMERR, "prerequisite of a meta type", why);
		bool exists = rr->rclass == DNS_CLASS_ANY;
		rr->op = any ? (exists ? UPDATE_PREREQ_YXDOMAIN : UPDATE_PREREQ_NXDOMAIN)
			     : (exists ? UPDATE_PREREQ_YXRRSET : UPDATE_PREREQ_NXRRSET);
		return 0;
	}
	if (rr->rclass != m->zclass || rdata_type_is_meta(rr->type))
		return refuse(DNS_RCODE_FORMERR, "prerequisite of a wrong class or a meta type",
			      why);
	rr->op = UPDATE_PREREQ_YXRRSET_RDATA;
	return 0;
}

/* RFC 2136 3.4.1.3: what an update asks, or FORMERR. */
static int classify_update(const update_msg_t *m, update_rr_t *rr, const char **why)
{
	if (!name_is_subdomain(rr->owner, m->zone))
		return refuse(DNS_RCODE_NOTZONE, "update outside the zone", why);
	bool any = rr->type == DNS_TYPE_ANY;
	if (rr->rclass == m->zclass) {
		if (rdata_type_is_meta(rr->type))
			return refuse(DNS_RCODE_FORMERR, "addition of a meta type", why);
		rr->op = UPDATE_ADD;
		return 0;
	}
	if (rr->rclass == DNS_CLASS_ANY) {
		if (rr->ttl != 0 || rr->rdlen != 0 || (!any && rdata_type_is_meta(rr->type)))
			return refuse(DNS_RCODE_FORMERR, "malformed RRset deletion", why);
		rr->op = any ? UPDATE_DEL_NAME : UPDATE_DEL_RRSET;
		return 0;
	}
	if (rr->rclass == DNS_CLASS_NONE) {
		if (rr->ttl != 0 || rdata_type_is_meta(rr->type))
			return refuse(DNS_RCODE_FORMERR, "malformed RR deletion", why);
		rr->op = UPDATE_DEL_RR;
		return 0;
	}
	return refuse(DNS_RCODE_FORMERR, "update of a wrong class", why);
}

/* Read one record at the iterator's place into rr (owner and RDATA uncompressed). */
static int read_rr(update_iter_t *it, update_rr_t *rr, const char **why)
{
	int n = name_unpack(&it->w, rr->owner, true);
	rr->type = wire_read_u16(&it->w);
	rr->rclass = wire_read_u16(&it->w);
	rr->ttl = wire_read_u32(&it->w);
	rr->rdlen = wire_read_u16(&it->w);
	if (n < 0 || it->w.err)
		return refuse(DNS_RCODE_FORMERR, "truncated record", why);
	rr->owner_len = (uint8_t)n;
	if (rr->rdlen == 0)
		return 0; /* the deletions and prerequisites without RDATA (RFC 2136 2.4, 2.5) */
	const char *bad = "RDATA does not fit its type";
	int len = rdata_unpack(rr->type, &it->w, rr->rdlen, rr->rdata, sizeof(rr->rdata), &bad);
	if (len < 0)
		return refuse(DNS_RCODE_FORMERR, bad, why);
	rr->rdlen = (uint16_t)len;
	return 0;
}

void update_iter_init(update_iter_t *it, const update_msg_t *m, enum update_section s)
{
	it->msg = m;
	wire_init_read(&it->w, m->pkt, m->len);
	bool pre = s == UPDATE_SECTION_PREREQ;
	wire_seek(&it->w, pre ? m->prereq_at : m->update_at);
	it->left = pre ? m->prcount : m->upcount;
	it->section = (uint8_t)s;
}

int update_iter_next(update_iter_t *it, update_rr_t *rr, const char **why)
{
	if (it->left == 0)
		return 0;
	it->left--;
	int rc = read_rr(it, rr, why);
	if (rc < 0)
		return rc;
	rc = it->section == UPDATE_SECTION_PREREQ ? classify_prereq(it->msg, rr, why)
						  : classify_update(it->msg, rr, why);
	return rc < 0 ? rc : 1;
}

/* RFC 2136 3.1.1: the header and the one zone; NOERROR or FORMERR. */
static int parse_zone(update_msg_t *m, wire_t *w, const char **why)
{
	m->id = wire_read_u16(w);
	uint16_t flags = wire_read_u16(w);
	uint16_t zocount = wire_read_u16(w);
	m->prcount = wire_read_u16(w);
	m->upcount = wire_read_u16(w);
	(void)wire_read_u16(w); /* ADCOUNT: the additional section is not read here */
	if (w->err || (flags & DNS_FLAG_QR) ||
	    (flags & DNS_OPCODE_MASK) >> DNS_OPCODE_SHIFT != DNS_OPCODE_UPDATE)
		return -refuse(DNS_RCODE_FORMERR, "not an UPDATE request", why);
	if (zocount != 1)
		return -refuse(DNS_RCODE_FORMERR, "zone count other than 1", why);
	int n = name_unpack(w, m->zone, true);
	uint16_t ztype = wire_read_u16(w);
	m->zclass = wire_read_u16(w);
	if (n < 0 || w->err)
		return -refuse(DNS_RCODE_FORMERR, "truncated zone section", why);
	m->zone_len = (uint8_t)n;
	if (ztype != DNS_TYPE_SOA || m->zclass == DNS_CLASS_ANY || m->zclass == DNS_CLASS_NONE)
		return -refuse(DNS_RCODE_FORMERR, "zone section not of type SOA in a data class",
			       why);
	return DNS_RCODE_NOERROR;
}

/* Walk section s whole; its end, or the rcode negated. */
static long walk_section(const update_msg_t *m, enum update_section s, update_rr_t *rr,
			 const char **why)
{
	update_iter_t it;
	update_iter_init(&it, m, s);
	int rc;
	while ((rc = update_iter_next(&it, rr, why)) > 0)
		;
	return rc < 0 ? rc : (long)it.w.pos;
}

int update_parse(update_msg_t *m, const uint8_t *pkt, size_t len, update_rr_t *rr, const char **why)
{
	memset(m, 0, sizeof(*m));
	m->pkt = pkt;
	m->len = len;
	wire_t w;
	wire_init_read(&w, pkt, len);
	int rcode = parse_zone(m, &w, why);
	if (rcode != DNS_RCODE_NOERROR)
		return rcode;
	m->prereq_at = w.pos;
	/* the updates start where the prerequisites end, and are checked only then */
	m->update_at = m->len;
	long end = walk_section(m, UPDATE_SECTION_PREREQ, rr, why);
	if (end < 0)
		return (int)-end;
	m->update_at = (size_t)end;
	end = walk_section(m, UPDATE_SECTION_UPDATE, rr, why);
	return end < 0 ? (int)-end : DNS_RCODE_NOERROR;
}

const char *update_op_name(enum update_op op)
{
	static const char *const names[] = {
		[UPDATE_PREREQ_YXRRSET] = "RRset exists",
		[UPDATE_PREREQ_YXRRSET_RDATA] = "RRset exists (value dependent)",
		[UPDATE_PREREQ_NXRRSET] = "RRset does not exist",
		[UPDATE_PREREQ_YXDOMAIN] = "name is in use",
		[UPDATE_PREREQ_NXDOMAIN] = "name is not in use",
		[UPDATE_ADD] = "add",
		[UPDATE_DEL_RRSET] = "delete RRset",
		[UPDATE_DEL_NAME] = "delete name",
		[UPDATE_DEL_RR] = "delete RR",
	};
	return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "unknown";
}
