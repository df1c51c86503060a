/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Outgoing zone transfers: AXFR and IXFR answers from a referenced zone, one message per call. */
#include "config.h"

#include <assert.h>
#include <string.h>

#include "proto/error.h"
#include "proto/name.h"
#include "zone/xfr_out.h"

enum xfr_phase {
	XFR_FIRST_SOA = 0,
	XFR_BODY,
	XFR_LAST_SOA,
	XFR_DONE,
	XFR_FAILED,
};

int xfr_out_axfr(xfr_out_t *x, const zone_t *z, const query_t *q, size_t limit, size_t reserve,
		 const response_edns_t *edns)
{
	memset(x, 0, sizeof(*x));
	size_t qlen = q->has_question ? q->question_end : DNS_HEADER_SIZE;
	size_t opt = edns ? response_opt_size(edns) : 0;
	if (limit > DNS_TCP_MAX)
		limit = DNS_TCP_MAX;
	if (qlen > sizeof(x->qpkt) || qlen > q->len || reserve + opt + qlen >= limit)
		return SHOAL_EINVAL;
	memcpy(x->qpkt, q->pkt, qlen);
	x->query = *q;
	x->query.pkt = x->qpkt;
	x->query.len = qlen;
	x->query.cookie = NULL; /* it pointed into the caller's packet */
	if (edns)
		x->edns = *edns;
	x->limit = limit;
	x->reserve = reserve;
	x->zone = zone_ref(z);
	return 0;
}

int xfr_out_ixfr(xfr_out_t *x, const zone_t *z, xfr_changes_t *changes, const query_t *q,
		 size_t limit, size_t reserve, const response_edns_t *edns)
{
	xfr_changes_t c = { 0 };
	if (changes) {
		c = *changes;
		memset(changes, 0, sizeof(*changes));
	}
	if (c.count && c.sets[c.count - 1]->to != z->serial) {
		xfr_changes_clear(&c);
		return SHOAL_EINVAL;
	}
	int err = xfr_out_axfr(x, z, q, limit, reserve, edns);
	if (err < 0) {
		xfr_changes_clear(&c);
		return err;
	}
	x->ixfr = true;
	x->changes = c;
	x->run_node = SIZE_MAX;
	return 0;
}

int xfr_request_serial(const query_t *q, uint32_t *serial)
{
	if (!q->has_question)
		return SHOAL_EMALFORMED;
	wire_t w;
	wire_init_read(&w, q->pkt, q->len);
	wire_seek(&w, q->question_end);
	for (uint16_t i = 0; i < q->ancount && !w.err; i++) {
		name_skip(&w);
		wire_skip(&w, 8);
		wire_skip(&w, wire_read_u16(&w));
	}
	if (q->nscount == 0)
		return w.err ? SHOAL_EMALFORMED : SHOAL_ENOTFOUND;
	uint8_t owner[NAME_MAXLEN];
	if (name_unpack(&w, owner, true) < 0 || !name_equal(owner, q->qname))
		return SHOAL_EMALFORMED;
	uint16_t type = wire_read_u16(&w);
	wire_skip(&w, 6); /* class, TTL */
	uint16_t rdlen = wire_read_u16(&w);
	size_t end = w.pos + rdlen;
	name_skip(&w); /* MNAME, RNAME: may be compressed (RFC 1035 3.3.13) */
	name_skip(&w);
	*serial = wire_read_u32(&w);
	wire_skip(&w, 16);
	if (w.err || type != DNS_TYPE_SOA || w.pos != end)
		return SHOAL_EMALFORMED;
	return 0;
}

/* Run number x->rrset of cs (deletions then additions) into x->run; false past the last. */
static bool ixfr_run(xfr_out_t *x, const changeset_t *cs)
{
	if (x->run_node != x->node || x->run_next > x->rrset + 1) {
		/* the runs are read in order: a new changeset starts at its first */
		x->run_node = x->node;
		x->run_next = x->run_at = 0;
	}
	while (x->run_next <= x->rrset) {
		bool add = x->run_next >= cs->del.run_count;
		if (x->run_next == cs->del.run_count)
			x->run_at = 0;
		if (!xfr_part_next(add ? &cs->add : &cs->del, &x->run_at, &x->run))
			return false;
		x->run_next++;
	}
	return true;
}

/*
 * IXFR's body: per changeset, the runs of its deletions (the old SOA
 * first) and of its additions (the new SOA first), RFC 1995 4.
 */
static bool ixfr_item(xfr_out_t *x, const uint8_t **owner, const rrset_wire_t **set)
{
	for (; x->node < x->changes.count; x->node++, x->rrset = 0) {
		if (ixfr_run(x, x->changes.sets[x->node])) {
			*owner = x->run.owner;
			*set = &x->run.set;
			return true;
		}
	}
	return false;
}

/*
 * The RRset to write next, with its owner; false when the body is over.
 * The SOA opens and closes the transfer, so the apex's own is skipped in
 * the body (RFC 5936 2.2).
 */
static bool axfr_item(xfr_out_t *x, const uint8_t **owner, const rrset_wire_t **set)
{
	const zone_t *z = x->zone;
	if (x->phase != XFR_BODY) {
		const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
		assert(soa); /* no zone is built without one (zbuild_finish) */
		*owner = znode_name(z->apex);
		*set = &soa->set;
		return true;
	}
	if (x->ixfr)
		return ixfr_item(x, owner, set);
	const znode_t *n = x->at ? x->at : (x->at = zone_first(z, &x->walk));
	for (; n; n = x->at = zone_next(&x->walk), x->rrset = 0) {
		for (; x->rrset < n->rrset_count; x->rrset++) {
			const rrset_wire_t *s = &znode_rrsets(n)[x->rrset].set;
			if (n == z->apex && s->type == DNS_TYPE_SOA)
				continue;
			*owner = znode_name(n);
			*set = s;
			return true;
		}
	}
	return false;
}

/* The RRset axfr_item gave is written whole: on to the next. */
static void axfr_advance(xfr_out_t *x)
{
	memset(&x->pos, 0, sizeof(x->pos));
	if (x->phase == XFR_BODY)
		x->rrset++;
	else if (x->phase == XFR_FIRST_SOA && x->ixfr && !x->changes.count)
		x->phase = XFR_DONE; /* up to date: the SOA alone (RFC 1995 2) */
	else
		x->phase++;
	assert(x->phase <= XFR_DONE); /* FIRST_SOA, BODY, LAST_SOA, DONE: never FAILED */
}

/*
 * Write the next message, at most limit octets with the room for the TSIG
 * RR kept. Returns its length; SHOAL_ESPACE when not even the next record
 * fits (nothing is written then, and x is where it was: the same record
 * comes next), SHOAL_EINVAL for a stored RRset that does not parse.
 */
static int write_message(xfr_out_t *x, uint8_t *buf, size_t limit)
{
	query_t q = x->query;
	q.pkt = x->qpkt;
	q.has_question = q.has_question && x->messages == 0; /* RFC 5936 2.2.1 */
	const response_edns_t *e = x->messages == 0 && x->edns.present ? &x->edns : NULL;
	size_t keep = x->reserve + (e ? response_opt_size(e) : 0);
	response_t r;
	if (response_init(&r, &q, buf, limit, limit, keep) < 0)
		return SHOAL_ESPACE;
	/*
	 * Owners come in canonical order (the zone's nodes, a changeset's
	 * runs): each is compressed against the last one's suffixes, its
	 * parent among them, in O(labels), where a table of names written
	 * would be searched for every suffix of every name.
	 */
	response_path_t path;
	response_path_init(&path);
	/* RFC 5936 2.2.1: AA in every message of a NOERROR answer */
	response_set_flags(&r, DNS_FLAG_AA);
	int err = 0;
	while (x->phase != XFR_DONE) {
		const uint8_t *owner;
		const rrset_wire_t *set;
		if (!axfr_item(x, &owner, &set)) {
			x->phase = XFR_LAST_SOA;
			continue;
		}
		err = response_add_rrs(&r, &path, DNS_SECTION_ANSWER, owner, set, &x->pos);
		if (err < 0)
			break;
		axfr_advance(x);
	}
	uint16_t written = r.counts[DNS_SECTION_ANSWER];
	if (err == SHOAL_ESPACE && written > 0)
		err = 0; /* full: the rest goes in the next message */
	if (err < 0)
		return err;
	int len = response_finish(&r, e);
	if (len > 0)
		x->records += written;
	return len;
}

int xfr_out_next(xfr_out_t *x, uint8_t *buf, size_t cap)
{
	if (x->phase == XFR_DONE)
		return 0;
	if (x->phase == XFR_FAILED || !x->zone)
		return SHOAL_EINVAL;
	int len = write_message(x, buf, x->limit);
	size_t most = cap < DNS_TCP_MAX ? cap : DNS_TCP_MAX;
	/*
	 * A record too big for the usual size: RFC 5936 2.2 lets a message
	 * take up to 65535 octets, so this one does, rather than the
	 * transfer stopping at a record the zone holds and serves over TCP.
	 */
	if (len == SHOAL_ESPACE && most > x->limit)
		len = write_message(x, buf, most);
	if (len < 0) {
		x->phase = XFR_FAILED;
		return len;
	}
	x->messages++;
	return len;
}

bool xfr_out_done(const xfr_out_t *x)
{
	return x->phase == XFR_DONE;
}

void xfr_out_clear(xfr_out_t *x)
{
	zone_unref(x->zone);
	x->zone = NULL;
	xfr_changes_clear(&x->changes);
}
