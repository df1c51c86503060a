/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Incoming zone transfers: parsing the answer stream, then building or patching the zone. */
#include "config.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "proto/serial.h"
#include "zone/apply.h"
#include "zone/internal.h"
#include "zone/xfr_in.h"

/* Where the stream is: which record is expected next. */
enum xfr_state {
	XS_FIRST,  /* the SOA that opens every answer */
	XS_SECOND, /* after it: an SOA here makes an IXFR (RFC 1995 4) */
	XS_AXFR,   /* the zone's records, up to the SOA again */
	XS_DEL,    /* an IXFR changeset's deletions */
	XS_ADD,    /* its additions */
	XS_END,    /* the final SOA was read */
};

struct xfr_in {
	uint8_t apex[NAME_MAXLEN];
	char apex_text[NAME_TEXT_MAX];
	uint16_t qtype, id;
	const zone_t *current;
	xfr_in_limits_t limits;
	zone_limits_t zone_limits;
	char *label;
	zone_msg_fn msg; /* zone_msgs_pass, through msgs */
	void *msg_arg;
	zone_msgs_t msgs;
	enum xfr_state state;
	enum xfr_in_kind kind;
	bool any_serial; /* xfr_in_take_any_serial: a forced transfer */
	bool has_base;   /* xfr_in_set_base: a signer's upstream serial, not current's */
	uint32_t base;
	int err;
	size_t octets, records, messages;
	uint8_t soa[NAME_MAXLEN * 2 + 20]; /* the first SOA's RDATA, names expanded */
	uint16_t soa_len;
	uint32_t soa_ttl, serial;
	zbuild_t *b;              /* AXFR: the new version's records */
	changeset_t *cs;          /* IXFR: the changeset being read */
	const changeset_t **sets; /* IXFR: those read */
	size_t set_count, set_cap;
	size_t sets_unkept;        /* IXFR: the first sets_unkept the journal would not keep */
	size_t sets_dropped;       /* IXFR: sets[0..sets_dropped) freed during the apply (NULL) */
	uint8_t rdata[UINT16_MAX]; /* one record's RDATA, names expanded */
};

/* One answer record, its RDATA expanded into x->rdata. */
typedef struct rr {
	uint8_t owner[NAME_MAXLEN];
	uint16_t type, rclass, rdlen;
	uint32_t ttl;
	const uint8_t *rdata;
} rr_t;

xfr_in_t *xfr_in_new(const uint8_t *apex, uint16_t qtype, uint16_t id, const zone_t *current,
		     const xfr_in_limits_t *limits, const zone_limits_t *zone_limits,
		     const char *label, zone_msg_fn msg, void *msg_arg)
{
	if (qtype != DNS_TYPE_AXFR && qtype != DNS_TYPE_IXFR)
		return NULL;
	xfr_in_t *x = calloc(1, sizeof(*x));
	if (!x || !(x->label = strdup(label ? label : "primary"))) {
		free(x);
		return NULL;
	}
	memcpy(x->apex, apex, name_length(apex));
	name_lower(x->apex);
	if (name_to_text(x->apex, x->apex_text, sizeof(x->apex_text)) < 0)
		strcpy(x->apex_text, "?");
	x->qtype = qtype;
	x->id = id;
	x->current = current ? zone_ref(current) : NULL;
	if (limits)
		x->limits = *limits;
	x->zone_limits = zone_limits ? *zone_limits : (zone_limits_t)ZONE_LIMITS_DEFAULT;
	zone_msgs_init(&x->msgs, msg, msg_arg);
	x->msg = zone_msgs_pass;
	x->msg_arg = &x->msgs;
	return x;
}

void xfr_in_free(xfr_in_t *x)
{
	if (!x)
		return;
	zone_msgs_end(&x->msgs, x->label);
	zone_unref(x->current);
	zbuild_free(x->b);
	changeset_unref(x->cs);
	for (size_t i = 0; i < x->set_count; i++)
		changeset_unref(x->sets[i]);
	free(x->sets);
	free(x->label);
	free(x);
}

enum xfr_in_kind xfr_in_kind(const xfr_in_t *x)
{
	return x->kind;
}

void xfr_in_take_any_serial(xfr_in_t *x)
{
	x->any_serial = true;
}

void xfr_in_set_base(xfr_in_t *x, uint32_t serial)
{
	x->has_base = true;
	x->base = serial;
}

const changeset_t *const *xfr_in_changesets(const xfr_in_t *x, size_t *count)
{
	*count = x->kind == XFR_IN_IXFR && x->has_base ? x->set_count : 0;
	return (const changeset_t *const *)x->sets;
}

/* What the answer is judged against: the upstream serial, or the version served's. */
static bool has_from(const xfr_in_t *x)
{
	return x->has_base || x->current;
}

static uint32_t from_serial(const xfr_in_t *x)
{
	return x->has_base ? x->base : x->current->serial;
}

uint32_t xfr_in_serial(const xfr_in_t *x)
{
	return x->state == XS_FIRST ? 0 : x->serial;
}

/* Report an error with the label, keep it for every later call, and return it. */
static int fail(xfr_in_t *x, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(xfr_in_t *x, int err, const char *fmt, ...)
{
	char text[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	zone_report(x->msg, x->msg_arg, true, x->label, 0, "%s: %s", x->apex_text, text);
	x->err = err;
	return err;
}

/* A name and a type for messages: "www.example.com. A". */
static const char *rr_text(const rr_t *rr, char *buf, size_t cap)
{
	return zone_rr_text(rr->owner, rr->type, buf, cap);
}

/* Read one answer record at w's position; 0 or a reported error. */
static int read_rr(xfr_in_t *x, wire_t *w, rr_t *rr)
{
	if (name_unpack(w, rr->owner, false) < 0)
		return fail(x, SHOAL_EMALFORMED, "message %zu: an owner name that does not parse",
			    x->messages);
	rr->type = wire_read_u16(w);
	rr->rclass = wire_read_u16(w);
	rr->ttl = wire_read_u32(w);
	uint16_t rdlen = wire_read_u16(w);
	if (w->err || rdlen > wire_left(w))
		return fail(x, SHOAL_EMALFORMED, "message %zu: a record cut short", x->messages);
	char text[NAME_TEXT_MAX + 20];
	const char *why = NULL;
	int n = rdata_unpack(rr->type, w, rdlen, x->rdata, sizeof(x->rdata), &why);
	if (n < 0)
		return fail(x, n == SHOAL_ESPACE ? SHOAL_EMALFORMED : n, "%s: bad RDATA: %s",
			    rr_text(rr, text, sizeof(text)), why ? why : "too long");
	rr->rdlen = (uint16_t)n;
	rr->rdata = x->rdata;
	if (rr->rclass != DNS_CLASS_IN)
		return fail(x, SHOAL_EZONE, "%s: class %u, not IN", rr_text(rr, text, sizeof(text)),
			    rr->rclass);
	if (rdata_type_is_meta(rr->type))
		return fail(x, SHOAL_EZONE, "%s: a type that is not zone data (RFC 6895 3.1)",
			    rr_text(rr, text, sizeof(text)));
	if (!name_is_subdomain(rr->owner, x->apex))
		return fail(x, SHOAL_EZONE, "%s: outside the zone",
			    rr_text(rr, text, sizeof(text)));
	if (++x->records > x->limits.max_records && x->limits.max_records)
		return fail(x, SHOAL_ESPACE, "more than %zu records", x->limits.max_records);
	return 0;
}

static bool is_soa(const xfr_in_t *x, const rr_t *rr)
{
	return rr->type == DNS_TYPE_SOA && name_equal(rr->owner, x->apex);
}

static uint32_t rr_serial(const rr_t *rr)
{
	/* rdata_unpack kept the SOA layout: two names of 1 octet at least, five numbers */
	assert(rr->type == DNS_TYPE_SOA && rr->rdlen >= 22);
	return wire_get_u32(rr->rdata + rr->rdlen - 20);
}

/* The SOA of the first record, again: same RDATA. */
static bool is_first_soa(const xfr_in_t *x, const rr_t *rr)
{
	return is_soa(x, rr) && rr->rdlen == x->soa_len &&
	       memcmp(rr->rdata, x->soa, x->soa_len) == 0;
}

/* An SOA anywhere but at the apex is an error of the zone (zbuild says so too). */
static int check_soa_owner(xfr_in_t *x, const rr_t *rr)
{
	char text[NAME_TEXT_MAX + 20];
	if (rr->type == DNS_TYPE_SOA && !is_soa(x, rr))
		return fail(x, SHOAL_EZONE, "%s: an SOA record not at the zone apex",
			    rr_text(rr, text, sizeof(text)));
	return 0;
}

static int axfr_add(xfr_in_t *x, const rr_t *rr)
{
	int err = zbuild_add(x->b, x->label, 0, NULL, rr->owner, rr->type, DNS_CLASS_IN, rr->ttl,
			     rr->rdata, rr->rdlen);
	if (err < 0) {
		x->err = err; /* zbuild reported it */
		return err;
	}
	return 0;
}

/* The builder of the new version, holding its SOA (the answer's first record). */
static int new_builder(xfr_in_t *x)
{
	x->b = zbuild_new(x->label, x->apex, x->msg, x->msg_arg);
	if (!x->b)
		return fail(x, SHOAL_ENOMEM, "out of memory");
	zbuild_set_limits(x->b, &x->zone_limits);
	rr_t soa = {
		.type = DNS_TYPE_SOA, .ttl = x->soa_ttl, .rdata = x->soa, .rdlen = x->soa_len
	};
	memcpy(soa.owner, x->apex, name_length(x->apex));
	return axfr_add(x, &soa);
}

/* The answer is an AXFR (or AXFR-style): collect the zone, its SOA first. */
static int start_axfr(xfr_in_t *x)
{
	x->kind = XFR_IN_AXFR;
	return new_builder(x);
}

/* Add to the changeset being read; the SOAs go first on each side. */
static int cs_add(xfr_in_t *x, bool add, const rr_t *rr)
{
	int err = changeset_add(x->cs, add, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlen);
	if (err == SHOAL_ENOMEM)
		return fail(x, err, "out of memory");
	if (err < 0) {
		char text[NAME_TEXT_MAX + 20];
		return fail(x, SHOAL_EMALFORMED, "%s: out of place in an IXFR changeset",
			    rr_text(rr, text, sizeof(text)));
	}
	return 0;
}

/* A changeset's deletions begin with the SOA of its old version. */
static int start_changeset(xfr_in_t *x, const rr_t *old_soa)
{
	assert(has_from(x) && !x->cs); /* an IXFR of the zone served, one changeset at a time */
	uint32_t from = rr_serial(old_soa);
	uint32_t want = x->set_count ? x->sets[x->set_count - 1]->to : from_serial(x);
	if (from != want)
		return fail(
			x, SHOAL_EMALFORMED, "an IXFR changeset from serial %u, where %s %u", from,
			x->set_count ? "the previous one ended at" : "the zone served has", want);
	if (!(x->cs = changeset_new()))
		return fail(x, SHOAL_ENOMEM, "out of memory");
	x->state = XS_DEL;
	return cs_add(x, false, old_soa);
}

/* The SOA that ends a changeset's additions: seal it and keep it. */
static int end_changeset(xfr_in_t *x)
{
	assert(x->cs); /* start_changeset made it */
	if (!zone_grow((void **)&x->sets, &x->set_cap, x->set_count + 1, sizeof(*x->sets)))
		return fail(x, SHOAL_ENOMEM, "out of memory");
	int err = changeset_seal(x->cs);
	if (err < 0)
		return fail(x, SHOAL_EMALFORMED, "an IXFR changeset without its SOAs");
	x->sets[x->set_count++] = x->cs;
	x->cs = NULL;
	return 0;
}

/* The answer ended at its first SOA: up to date, or a primary behind the version served. */
static bool ended_early(const xfr_in_t *x)
{
	return x->kind == XFR_IN_UPTODATE || x->kind == XFR_IN_OUTDATED;
}

/*
 * The first SOA's serial against the version served (RFC 1982 3.2): one
 * not newer ends the answer now, before the zone's records, unless any
 * serial is taken. Then an IXFR answered with the SOA alone, not newer,
 * is up to date (RFC 1995 2). A newer serial alone in the first message
 * may begin an answer sent one record per message: more is due.
 */
static void judge_serial(xfr_in_t *x, bool alone)
{
	if (!has_from(x))
		return;
	enum serial_order order = serial_compare(x->serial, from_serial(x));
	if (order == SERIAL_GREATER)
		return;
	if (x->any_serial && !(alone && x->messages == 1 && x->qtype == DNS_TYPE_IXFR))
		return;
	x->kind = order == SERIAL_EQUAL || x->any_serial ? XFR_IN_UPTODATE : XFR_IN_OUTDATED;
	x->state = XS_END;
}

/* One answer record, by the state of the stream. */
static int take_rr(xfr_in_t *x, const rr_t *rr, bool last_in_message)
{
	char text[NAME_TEXT_MAX + 20];
	int err = check_soa_owner(x, rr);
	if (err < 0)
		return err;
	switch (x->state) {
	case XS_FIRST:
		/* RFC 5936 2.2, RFC 1995 4: every answer starts with the zone's SOA */
		if (!is_soa(x, rr))
			return fail(x, SHOAL_EMALFORMED,
				    "the answer starts with %s, not the "
				    "zone's SOA",
				    rr_text(rr, text, sizeof(text)));
		assert(rr->rdlen <= sizeof(x->soa)); /* two names of 255 octets, five numbers */
		memcpy(x->soa, rr->rdata, rr->rdlen);
		x->soa_len = rr->rdlen;
		x->soa_ttl = rr->ttl;
		x->serial = rr_serial(rr);
		x->state = XS_SECOND;
		judge_serial(x, last_in_message);
		return 0;
	case XS_SECOND:
		if (is_first_soa(x, rr)) {
			/* the SOA twice: a zone of nothing else (zbuild judges it) */
			if ((err = start_axfr(x)) < 0)
				return err;
			x->state = XS_END;
			return 0;
		}
		if (rr->type == DNS_TYPE_SOA && x->qtype == DNS_TYPE_IXFR && has_from(x)) {
			x->kind = XFR_IN_IXFR;
			if (!serial_gt(x->serial, from_serial(x)))
				return fail(x, SHOAL_EMALFORMED,
					    "an IXFR to serial %u, not newer "
					    "than the zone served (%u)",
					    x->serial, from_serial(x));
			return start_changeset(x, rr);
		}
		if (rr->type == DNS_TYPE_SOA)
			return fail(x, SHOAL_EMALFORMED,
				    "an SOA record where the zone's records "
				    "begin");
		if ((err = start_axfr(x)) < 0)
			return err;
		x->state = XS_AXFR;
		return axfr_add(x, rr);
	case XS_AXFR:
		if (rr->type != DNS_TYPE_SOA)
			return axfr_add(x, rr);
		if (!is_first_soa(x, rr))
			return fail(x, SHOAL_EMALFORMED,
				    "the final SOA (serial %u) differs from "
				    "the first (serial %u)",
				    rr_serial(rr), x->serial);
		x->state = XS_END;
		return 0;
	case XS_DEL:
		if (rr->type != DNS_TYPE_SOA)
			return cs_add(x, false, rr);
		/* the new version's SOA opens the additions: a newer one (RFC 1982) */
		if (!serial_gt(rr_serial(rr),
			       x->set_count ? x->sets[x->set_count - 1]->to : from_serial(x)))
			return fail(x, SHOAL_EMALFORMED,
				    "an IXFR changeset to serial %u, not "
				    "newer than where it starts",
				    rr_serial(rr));
		x->state = XS_ADD;
		return cs_add(x, true, rr);
	case XS_ADD:
		if (rr->type != DNS_TYPE_SOA)
			return cs_add(x, true, rr);
		if ((err = end_changeset(x)) < 0)
			return err;
		if (is_first_soa(x, rr) && x->sets[x->set_count - 1]->to == x->serial) {
			x->state = XS_END;
			return 0;
		}
		return start_changeset(x, rr);
	case XS_END:
	default:
		return fail(x, SHOAL_EMALFORMED, "%s after the final SOA",
			    rr_text(rr, text, sizeof(text)));
	}
}

/* The header and question of message `len` octets; 0 or a reported error. */
static int check_header(xfr_in_t *x, wire_t *w, uint16_t *ancount)
{
	uint16_t id = wire_read_u16(w), flags = wire_read_u16(w);
	uint16_t qdcount = wire_read_u16(w);
	*ancount = wire_read_u16(w);
	wire_skip(w, 4); /* authority and additional: not looked at */
	if (w->err)
		return fail(x, SHOAL_EMALFORMED, "message %zu: shorter than a header", x->messages);
	if (id != x->id || !(flags & DNS_FLAG_QR) || (flags & DNS_OPCODE_MASK))
		return fail(x, SHOAL_EMALFORMED,
			    "message %zu: not an answer to the request "
			    "(ID %u, flags 0x%04x)",
			    x->messages, id, flags);
	if (flags & DNS_RCODE_MASK)
		return fail(x, SHOAL_EMALFORMED, "the primary answered RCODE %u",
			    flags & DNS_RCODE_MASK);
	if (flags & DNS_FLAG_TC)
		return fail(x, SHOAL_EMALFORMED, "message %zu: truncated (TC)", x->messages);
	if (qdcount > 1)
		return fail(x, SHOAL_EMALFORMED, "message %zu: %u questions", x->messages, qdcount);
	if (qdcount == 1) {
		uint8_t qname[NAME_MAXLEN];
		name_unpack(w, qname, true);
		uint16_t qtype = wire_read_u16(w), qclass = wire_read_u16(w);
		if (w->err || !name_equal(qname, x->apex) || qtype != x->qtype ||
		    qclass != DNS_CLASS_IN)
			return fail(x, SHOAL_EMALFORMED,
				    "message %zu: the question is not the "
				    "request's",
				    x->messages);
	}
	return 0;
}

int xfr_in_feed(xfr_in_t *x, const uint8_t *msg, size_t len)
{
	if (x->err)
		return x->err;
	x->messages++;
	if (len > DNS_TCP_MAX)
		return fail(x, SHOAL_EMALFORMED,
			    "message %zu: %zu octets, more than a message "
			    "holds (65535)",
			    x->messages, len);
	if (x->state == XS_END)
		return fail(x, SHOAL_EMALFORMED, "message %zu after the final SOA", x->messages);
	x->octets += len;
	if (x->limits.max_octets && x->octets > x->limits.max_octets)
		return fail(x, SHOAL_ESPACE, "more than %zu octets (max-zone-size)",
			    x->limits.max_octets);
	if (x->limits.max_messages && x->messages > x->limits.max_messages)
		return fail(x, SHOAL_ESPACE, "more than %zu messages", x->limits.max_messages);
	wire_t w;
	wire_init_read(&w, msg, len);
	uint16_t ancount;
	int err = check_header(x, &w, &ancount);
	for (uint16_t i = 0; err == 0 && i < ancount && !ended_early(x); i++) {
		rr_t rr;
		if ((err = read_rr(x, &w, &rr)) == 0)
			err = take_rr(x, &rr, i + 1 == ancount);
	}
	if (err < 0)
		return err;
	return x->state == XS_END ? 1 : 0;
}

/* ---- the new version ---- */

/*
 * How many of x's changesets, from the first, journal would not keep:
 * those up to the last one bigger than its bound (journal_add_all starts
 * the history after it), or all without a journal.
 */
static size_t unkept(const xfr_in_t *x, journal_t *journal)
{
	if (!journal)
		return x->set_count;
	journal_info_t ji;
	journal_get_info(journal, &ji);
	size_t first = 0;
	for (size_t i = 0; i < x->set_count; i++)
		if (x->sets[i]->octets > ji.max_octets)
			first = i + 1;
	return first;
}

/* zone_apply's sets_read: the changesets the journal will not keep go before the peak. */
static void drop_unkept(void *arg)
{
	xfr_in_t *x = arg;
	for (size_t i = 0; i < x->sets_unkept; i++) {
		changeset_unref(x->sets[i]);
		x->sets[i] = NULL;
	}
	x->sets_dropped = x->sets_unkept;
}

/*
 * The changesets applied to the version served (zone/apply.h): a version
 * that shares every node the changes leave alone. Reported with the label.
 * Those journal will not keep go once the apply has read them.
 */
static int apply_ixfr(xfr_in_t *x, journal_t *journal, zone_t **out)
{
	/*
	 * An IXFR of 100,000 changes to a zone of a million records holds 9
	 * MB of changesets; those the journal drops anyway (one bigger than
	 * ixfr-journal-size, or no journal) need not stay while the apply
	 * makes 27 MB of nodes, tree nodes and pages.
	 */
	x->sets_unkept = unkept(x, journal);
	zone_apply_opts_t o = { .label = x->label,
				.limits = &x->zone_limits,
				.msg = x->msg,
				.msg_arg = x->msg_arg,
				.sets_read = x->sets_unkept ? drop_unkept : NULL,
				.sets_arg = x };
	return zone_apply(x->current, x->sets, x->set_count, &o, out);
}

/*
 * What the transfer changed, into journal (before the new version z is
 * published): an IXFR's changesets, an AXFR's difference from the version
 * served. A journal file that cannot be written is said (the transfer
 * stands: the history after a restart starts later).
 */
static void record(xfr_in_t *x, journal_t *journal, const zone_t *z)
{
	int err = 0;
	if (x->kind == XFR_IN_IXFR) {
		/* those dropped (drop_unkept) would have ended the history: it starts after them */
		size_t first = x->sets_dropped;
		if (first)
			journal_clear(journal);
		/* one sync for them all: a secondary far behind may get hundreds */
		if (first < x->set_count)
			err = journal_add_all(journal, (const changeset_t *const *)x->sets + first,
					      x->set_count - first);
	} else {
		changeset_t *cs = NULL;
		journal_info_t ji;
		journal_get_info(journal, &ji);
		if (x->current && serial_gt(z->serial, x->current->serial) && ji.max_octets &&
		    changeset_diff(x->current, z, ji.max_octets, &cs) == 0)
			err = journal_add(journal, cs);
		else
			journal_clear(journal);
	}
	journal_report(journal, err, x->msg, x->msg_arg);
}

int xfr_in_finish(xfr_in_t *x, journal_t *journal, zone_t **out)
{
	*out = NULL;
	if (x->err)
		return x->err;
	if (x->state != XS_END)
		return fail(x, SHOAL_EMALFORMED,
			    "the transfer ended before the final SOA "
			    "(%zu messages, %zu records)",
			    x->messages, x->records);
	if (ended_early(x))
		return 0;
	if (x->kind == XFR_IN_IXFR && x->has_base)
		return 0; /* the signer takes the changesets (xfr_in_changesets) */
	int err;
	if (x->kind == XFR_IN_IXFR) {
		err = apply_ixfr(x, journal, out);
	} else {
		err = zbuild_finish(x->b, out);
		x->b = NULL;
	}
	zone_msgs_end(&x->msgs, x->label);
	if (err < 0) {
		x->err = err; /* the builder or the apply reported why */
		return err;
	}
	if (journal)
		record(x, journal, *out);
	return 0;
}
