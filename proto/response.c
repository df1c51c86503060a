/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing an answer: header, echoed question, compressed RRsets, the OPT record. */
#include <assert.h>
#include <string.h>

#include "proto/hot.h"
#include "proto/name.h"
#include "proto/rdata.h"
#include "proto/response.h"

/* Packet offsets above this cannot be the target of a pointer (RFC 1035 4.1.4). */
#define COMPRESS_MAX_OFFSET 0x3fff
static_assert(COMPRESS_MAX_OFFSET <= UINT16_MAX, "a target offset fits comp_off");
static_assert(NAME_MAXLEN <= UINT8_MAX, "a name's expanded length fits comp_len");

/*
 * True when the name written in the message at `off` (following pointers)
 * equals `name` case-insensitively. The message is our own output, but its
 * question came from a client, so the walk is bounded.
 */
static bool packet_name_equal(const uint8_t *pkt, size_t end, size_t off, const uint8_t *name)
{
	int hops = 0;
	for (;;) {
		if (off >= end)
			return false;
		uint8_t c = pkt[off];
		if ((c & 0xc0) == 0xc0) {
			if (off + 1 >= end || ++hops > 127)
				return false;
			off = (size_t)(c & 0x3f) << 8 | pkt[off + 1];
			continue;
		}
		if (c != *name)
			return false;
		if (c == 0)
			return true;
		if (off + 1 + c > end)
			return false;
		/* octets are mostly equal as they stand: lowercase only when not */
		for (uint8_t i = 1; i <= c; i++)
			if (pkt[off + i] != name[i] &&
			    name_lower_octet(pkt[off + i]) != name_lower_octet(name[i]))
				return false;
		off += 1 + (size_t)c;
		name += 1 + *name;
	}
}

/* Remember that a name of expanded length `len` starts at `off`. */
static void comp_add(response_t *r, size_t off, size_t len)
{
	if (r->comp_count < RESPONSE_COMPRESS_MAX && off <= COMPRESS_MAX_OFFSET) {
		r->comp_off[r->comp_count] = (uint16_t)off;
		r->comp_len[r->comp_count] = (uint8_t)len;
		r->comp_count++;
	}
}

/*
 * Where the labels of a name (well formed, uncompressed) start: at[d] is
 * the offset of its suffix of d labels, at[0] that of the root label.
 * Returns the number of labels.
 */
static int label_starts(const uint8_t *name, uint8_t at[NAME_MAXLABELS + 1])
{
	uint8_t from_left[NAME_MAXLABELS];
	int labels = 0;
	size_t i = 0;
	for (; name[i]; i += 1 + (size_t)name[i])
		from_left[labels++] = (uint8_t)i;
	assert(labels < NAME_MAXLABELS);
	at[0] = (uint8_t)i;
	for (int d = 1; d <= labels; d++)
		at[d] = from_left[labels - d];
	return labels;
}

/*
 * The most labels the name (of `labels` labels starting at `at`) shares,
 * from the root, with the path's owner and the message holds where it can
 * be pointed to: 0 for none.
 */
static int path_target(const response_path_t *p, const uint8_t *name, const uint8_t *at, int labels)
{
	int most = labels < p->labels ? labels : p->labels;
	int d = 0;
	while (d < most) {
		const uint8_t *a = name + at[d + 1], *b = p->owner + p->at[d + 1];
		if (*a != *b || memcmp(a + 1, b + 1, *a) != 0)
			break;
		d++;
	}
	while (d > 0 && p->off[d] == 0)
		d--;
	return d;
}

/*
 * Write the labels of name above its suffix of d labels, then a pointer
 * to `target`, where the message holds that suffix (the root label when
 * d is 0).
 */
static void path_write(response_t *r, const uint8_t *name, const uint8_t *at, int d,
		       uint16_t target)
{
	if (d == 0) {
		wire_write_bytes(&r->w, name, (size_t)at[0] + 1);
		return;
	}
	wire_write_bytes(&r->w, name, at[d]);
	wire_write_u16(&r->w, (uint16_t)(0xc000 | target));
}

/*
 * Write an owner compressed by the path (response_path_t), and make it
 * the path's owner: the suffixes it wrote are where later names point.
 */
static void path_owner(response_t *r, response_path_t *p, const uint8_t *owner)
{
	if (owner == p->owner && p->off[p->labels]) {
		/* the next record of the same RRset or node: a pointer to the first */
		wire_write_u16(&r->w, (uint16_t)(0xc000 | p->off[p->labels]));
		return;
	}
	uint8_t at[NAME_MAXLABELS + 1];
	int labels = label_starts(owner, at);
	int t = path_target(p, owner, at, labels);
	size_t start = r->w.pos;
	path_write(r, owner, at, t, p->off[t]);
	for (int d = t + 1; d <= labels; d++) {
		size_t off = start + at[d];
		p->off[d] = off <= COMPRESS_MAX_OFFSET ? (uint16_t)off : 0;
	}
	p->owner = owner;
	p->labels = (uint8_t)labels;
	memcpy(p->at, at, (size_t)labels + 1);
}

/* The slot of a name's suffix of d labels: FNV-1a over its labels from the root. */
static void suffix_slots(const uint8_t *name, const uint8_t *at, int labels, uint8_t *slot)
{
	uint32_t h = 2166136261u;
	for (int d = 1; d <= labels; d++) {
		const uint8_t *l = name + at[d];
		for (int i = 0; i <= l[0]; i++)
			h = (h ^ l[i]) * 16777619u;
		slot[d] = (uint8_t)((h ^ h >> 16) & (RESPONSE_PATH_NAMES - 1));
	}
}

/*
 * A name in RDATA compressed against the path's owner or a name in RDATA
 * before it, whichever shares more labels; the suffixes it writes are
 * remembered for the names after it. The path's owner stays.
 */
static void path_name(response_t *r, response_path_t *p, const uint8_t *name)
{
	uint8_t at[NAME_MAXLABELS + 1], slot[NAME_MAXLABELS + 1];
	int labels = label_starts(name, at);
	int t = path_target(p, name, at, labels), d = labels;
	uint16_t target = p->off[t];
	if (t < labels) {
		suffix_slots(name, at, labels, slot);
		for (; d > t; d--) {
			const struct response_path_name *e = &p->names[slot[d]];
			size_t len = (size_t)at[0] + 1 - at[d];
			if (e->len == len && memcmp(e->name, name + at[d], len) == 0) {
				target = e->off;
				break;
			}
		}
	}
	size_t start = r->w.pos;
	path_write(r, name, at, d, target);
	for (int k = d + 1; k <= labels; k++) {
		size_t off = start + at[k];
		if (off <= COMPRESS_MAX_OFFSET)
			p->names[slot[k]] = (struct response_path_name){
				.name = name + at[k],
				.off = (uint16_t)off,
				.len = (uint8_t)(at[0] + 1 - at[k]),
			};
	}
}

/* The message is cut back to `pos`: the suffixes written from there on are gone. */
static void path_cut(response_path_t *p, size_t pos)
{
	for (int d = 1; d <= p->labels; d++)
		if (p->off[d] >= pos)
			p->off[d] = 0;
	for (size_t i = 0; i < RESPONSE_PATH_NAMES; i++)
		if (p->names[i].off >= pos)
			p->names[i].len = 0;
}

void response_path_init(response_path_t *p)
{
	p->owner = NULL;
	p->labels = 0;
	p->off[0] = 0;
	memset(p->names, 0, sizeof(p->names));
}

/*
 * Write `name` compressed: its longest suffix already in the message becomes
 * a pointer; every label written before it becomes a new target.
 */
QUERY_PATH static void write_name(response_t *r, const uint8_t *name)
{
	/*
	 * The question's own octets, the owner of most answers: the question
	 * at offset 12 is their target, with no comparing.
	 */
	if (name == r->query->pkt + DNS_HEADER_SIZE && r->base_comp > 0 &&
	    r->comp_off[0] == DNS_HEADER_SIZE) {
		wire_write_u16(&r->w, (uint16_t)(0xc000 | DNS_HEADER_SIZE));
		return;
	}
	size_t len = name_length(name);
	const uint8_t *suffix = name;
	size_t slen = len;
	int target = -1;
	while (*suffix) {
		for (int i = 0; i < r->comp_count; i++) {
			if (r->comp_len[i] == slen &&
			    packet_name_equal(r->w.buf, r->w.pos, r->comp_off[i], suffix)) {
				target = r->comp_off[i];
				break;
			}
		}
		if (target >= 0)
			break;
		slen -= 1 + (size_t)*suffix;
		suffix += 1 + *suffix;
	}
	for (const uint8_t *p = name; p != suffix && *p; p += 1 + *p) {
		comp_add(r, r->w.pos, len - (size_t)(p - name));
		wire_write_bytes(&r->w, p, 1 + (size_t)*p);
	}
	if (target >= 0)
		wire_write_u16(&r->w, (uint16_t)(0xc000 | target));
	else
		wire_write_u8(&r->w, 0);
}

QUERY_PATH int response_init(response_t *r, const query_t *q, uint8_t *buf, size_t cap,
			     size_t limit, size_t opt_reserve)
{
	memset(r, 0, offsetof(response_t, comp_off));
	r->comp_count = 0;
	r->base_comp = 0;
	r->query = q;
	r->cap = cap;
	r->limit = limit < cap ? limit : cap;
	r->opt_reserve = opt_reserve;
	r->section = DNS_SECTION_ANSWER;
	size_t room = r->limit > opt_reserve ? r->limit - opt_reserve : 0;
	wire_init_write(&r->w, buf, room);

	wire_write_u16(&r->w, q->id);
	wire_write_u16(&r->w, 0); /* flags, written by response_finish */
	for (int i = 0; i < 4; i++)
		wire_write_u16(&r->w, 0);
	if (q->has_question) {
		size_t qlen = q->question_end - DNS_HEADER_SIZE;
		if (qlen == (size_t)q->qname_len + 4) {
			wire_write_bytes(&r->w, q->pkt + DNS_HEADER_SIZE, qlen);
		} else {
			/*
			 * The name holds a pointer (RFC 1035 4.1.4), aimed back at
			 * the header or into its own octets. The answer's header
			 * differs from the query's, so a copy would name something
			 * else: write the name whole, in the case sent.
			 */
			uint8_t name[NAME_MAXLEN];
			wire_t rd;
			wire_init_read(&rd, q->pkt, q->len);
			wire_seek(&rd, DNS_HEADER_SIZE);
			int n = name_unpack(&rd, name, false);
			if (n == q->qname_len)
				wire_write_bytes(&r->w, name, (size_t)n);
			else
				wire_write_bytes(&r->w, q->qname, q->qname_len);
			wire_write_bytes(&r->w, q->pkt + q->question_end - 4, 4);
		}
		r->counts[DNS_SECTION_QUESTION] = 1;
		/* the question name is a compression target when sent uncompressed */
		if (!r->w.err && (buf[DNS_HEADER_SIZE] & 0xc0) != 0xc0) {
			size_t off = DNS_HEADER_SIZE, left = q->qname_len;
			while (buf[off] && (buf[off] & 0xc0) == 0 && off < r->w.pos) {
				comp_add(r, off, left);
				left -= 1 + (size_t)buf[off];
				off += 1 + (size_t)buf[off];
			}
		}
	}
	r->base_pos = r->w.pos;
	r->base_comp = r->comp_count;
	return r->w.err ? SHOAL_ESPACE : 0;
}

QUERY_PATH void response_set_flags(response_t *r, uint16_t flags)
{
	r->flags |= flags;
}

QUERY_PATH void response_set_rcode(response_t *r, uint16_t rcode)
{
	r->rcode = rcode;
}

response_mark_t response_mark(const response_t *r)
{
	response_mark_t m;
	m.pos = r->w.pos;
	memcpy(m.counts, r->counts, sizeof(m.counts));
	m.comp_count = r->comp_count;
	m.section = r->section;
	return m;
}

void response_rollback(response_t *r, const response_mark_t *m)
{
	assert(m->pos >= r->base_pos && m->comp_count >= r->base_comp); /* after the question */
	wire_seek(&r->w, m->pos);
	r->w.err = 0;
	memcpy(r->counts, m->counts, sizeof(r->counts));
	r->comp_count = m->comp_count;
	r->section = m->section;
}

/*
 * Write the record of set at *off with owner, compressing the names the
 * set lists for it (from *ni on) with the table or, when path is not
 * NULL, with the path; move *off and *ni past it. Running out of room
 * shows in r->w.err. Returns 0, or SHOAL_EINVAL for a record that does
 * not lie inside the set (the caller rolls back). Inlined into one writer
 * per way of compressing, so an answer's does not test for the path.
 */
static inline __attribute__((always_inline)) int write_rr_by(response_t *r, const uint8_t *owner,
							     const rrset_wire_t *set, size_t *off,
							     uint16_t *ni, response_path_t *path)
{
	const uint8_t *d = set->data;
	if (path)
		path_owner(r, path, owner);
	else
		write_name(r, owner);
	if (*off + 10 > set->data_len)
		return SHOAL_EINVAL;
	wire_write_bytes(&r->w, d + *off, 8); /* type, class, TTL */
	uint16_t rdlen = wire_get_u16(d + *off + 8);
	size_t rd = *off + 10, rd_end = rd + rdlen;
	if (rd_end > set->data_len)
		return SHOAL_EINVAL;
	size_t len_at = r->w.pos;
	wire_write_u16(&r->w, 0);
	size_t start = r->w.pos;
	size_t p = rd;
	/* RDATA: copy, compressing the names the RRset lists in this record */
	while (*ni < set->name_count && set->names[*ni] < rd_end) {
		size_t at = set->names[(*ni)++];
		if (at < p)
			continue;
		/* the name must end inside its own RDATA, however the set was built */
		int nlen = rdata_name_length(d + rd, rdlen, at - rd);
		if (nlen < 0)
			return SHOAL_EINVAL;
		wire_write_bytes(&r->w, d + p, at - p);
		if (path)
			path_name(r, path, d + at);
		else
			write_name(r, d + at);
		p = at + (size_t)nlen;
	}
	wire_write_bytes(&r->w, d + p, rd_end - p);
	wire_put_u16_at(&r->w, len_at, (uint16_t)(r->w.pos - start));
	*off = rd_end;
	return 0;
}

/* write_rr_by with the table: an answer's. */
QUERY_PATH static int write_rr(response_t *r, const uint8_t *owner, const rrset_wire_t *set,
			       size_t *off, uint16_t *ni)
{
	return write_rr_by(r, owner, set, off, ni, NULL);
}

/* write_rr_by with a path. */
static int write_rr_path(response_t *r, response_path_t *path, const uint8_t *owner,
			 const rrset_wire_t *set, size_t *off, uint16_t *ni)
{
	return write_rr_by(r, owner, set, off, ni, path);
}

QUERY_PATH int response_add_rrset(response_t *r, enum dns_section section, const uint8_t *owner,
				  const rrset_wire_t *set)
{
	if (r->w.err)
		return SHOAL_ESPACE;
	assert(section >= DNS_SECTION_ANSWER && section <= DNS_SECTION_ADDITIONAL);
	if ((int)section < r->section)
		return SHOAL_EINVAL; /* sections are written in order */
	response_mark_t m = response_mark(r);
	size_t off = 0;
	uint16_t ni = 0;
	for (uint16_t i = 0; i < set->rr_count && !r->w.err; i++) {
		if (write_rr(r, owner, set, &off, &ni) < 0) {
			response_rollback(r, &m);
			return SHOAL_EINVAL;
		}
	}
	if (r->w.err) {
		response_rollback(r, &m);
		return SHOAL_ESPACE;
	}
	r->counts[section] += set->rr_count;
	r->section = (int)section;
	return 0;
}

int response_add_rrs(response_t *r, response_path_t *path, enum dns_section section,
		     const uint8_t *owner, const rrset_wire_t *set, rrset_pos_t *pos)
{
	if (r->w.err)
		return SHOAL_ESPACE;
	assert(section >= DNS_SECTION_ANSWER && section <= DNS_SECTION_ADDITIONAL);
	if ((int)section < r->section)
		return SHOAL_EINVAL;
	while (pos->rr < set->rr_count) {
		if (r->counts[section] == UINT16_MAX)
			return SHOAL_ESPACE; /* the count field is full */
		response_mark_t m = response_mark(r);
		size_t off = pos->off;
		uint16_t ni = pos->name;
		int err = path ? write_rr_path(r, path, owner, set, &off, &ni)
			       : write_rr(r, owner, set, &off, &ni);
		if (err < 0 || r->w.err) {
			response_rollback(r, &m);
			if (path)
				path_cut(path, m.pos);
			return err < 0 ? err : SHOAL_ESPACE;
		}
		pos->off = (uint32_t)off;
		pos->name = ni;
		pos->rr++;
		r->counts[section]++;
		r->section = (int)section;
	}
	return 0;
}

QUERY_PATH void response_truncate(response_t *r)
{
	wire_seek(&r->w, r->base_pos);
	r->w.err = 0;
	r->comp_count = r->base_comp;
	for (int s = DNS_SECTION_ANSWER; s <= DNS_SECTION_ADDITIONAL; s++)
		r->counts[s] = 0;
	r->section = DNS_SECTION_ANSWER;
	r->truncated = true;
	r->flags |= DNS_FLAG_TC;
}

QUERY_PATH size_t response_opt_size(const response_edns_t *e)
{
	if (!e->present)
		return 0;
	/* root owner, type, class, TTL, RDLENGTH; then the NSID and COOKIE options */
	return 11 + (e->nsid ? 4 + (size_t)e->nsid_len : 0) +
	       (e->cookie ? 4 + (size_t)e->cookie_len : 0);
}

/* One option (RFC 6891 6.1.2): code, length, data. */
static void write_option(wire_t *w, uint16_t code, const uint8_t *data, uint16_t len)
{
	wire_write_u16(w, code);
	wire_write_u16(w, len);
	wire_write_bytes(w, data, len);
}

QUERY_PATH int response_finish(response_t *r, const response_edns_t *e)
{
	const query_t *q = r->query;
	if (r->w.err)
		return SHOAL_ESPACE;
	/* the OPT was reserved for: now it may use the whole limit */
	r->w.len = r->limit;
	uint16_t flags = DNS_FLAG_QR | r->flags | (r->rcode & DNS_RCODE_MASK);
	/* RD is copied (RFC 1035 4.1.1); CD is not, as NSD and Knot answer */
	flags |= q->flags & (DNS_OPCODE_MASK | DNS_FLAG_RD);
	uint16_t arcount = r->counts[DNS_SECTION_ADDITIONAL];
	if (e && e->present) {
		wire_write_u8(&r->w, 0);
		wire_write_u16(&r->w, DNS_TYPE_OPT);
		wire_write_u16(&r->w, e->udp_size);
		/* RFC 6891 6.1.3: upper 8 bits of the rcode, version 0, DO */
		uint32_t ttl = (uint32_t)((r->rcode >> 4) & 0xff) << 24;
		if (e->do_bit)
			ttl |= DNS_EDNS_DO;
		wire_write_u32(&r->w, ttl);
		wire_write_u16(&r->w, (uint16_t)(response_opt_size(e) - 11));
		if (e->nsid)
			write_option(&r->w, DNS_EDNS_NSID, e->nsid, e->nsid_len);
		if (e->cookie)
			write_option(&r->w, DNS_EDNS_COOKIE, e->cookie, e->cookie_len);
		arcount++;
	}
	if (r->w.err)
		return SHOAL_ESPACE;
	wire_put_u16_at(&r->w, 2, flags);
	wire_put_u16_at(&r->w, 4, r->counts[DNS_SECTION_QUESTION]);
	wire_put_u16_at(&r->w, 6, r->counts[DNS_SECTION_ANSWER]);
	wire_put_u16_at(&r->w, 8, r->counts[DNS_SECTION_AUTHORITY]);
	wire_put_u16_at(&r->w, 10, arcount);
	return (int)r->w.pos;
}

QUERY_PATH int response_strip(uint8_t *msg, size_t len)
{
	wire_t w;
	wire_init_read(&w, msg, len);
	wire_skip(&w, 4);
	uint16_t counts[4];
	for (int i = 0; i < 4; i++)
		counts[i] = wire_read_u16(&w);
	for (uint16_t i = 0; i < counts[DNS_SECTION_QUESTION]; i++) {
		name_skip(&w);
		wire_skip(&w, 4);
	}
	size_t question_end = w.pos;
	/* the OPT is the last record we write: find where it starts */
	size_t opt_at = 0;
	unsigned records = (unsigned)counts[1] + counts[2] + counts[3];
	for (unsigned i = 0; i < records && !w.err; i++) {
		size_t at = w.pos;
		name_skip(&w);
		uint16_t type = wire_read_u16(&w);
		wire_skip(&w, 6);
		wire_skip(&w, wire_read_u16(&w));
		if (type == DNS_TYPE_OPT && i + 1 == records)
			opt_at = at;
	}
	if (w.err || w.pos != len)
		return SHOAL_EMALFORMED;
	size_t opt_len = opt_at ? len - opt_at : 0;
	memmove(msg + question_end, msg + opt_at, opt_len);
	wire_t out;
	wire_init_write(&out, msg, len);
	wire_put_u16_at(&out, 2, (uint16_t)(wire_get_u16(msg + 2) | DNS_FLAG_TC));
	wire_put_u16_at(&out, 6, 0);
	wire_put_u16_at(&out, 8, 0);
	wire_put_u16_at(&out, 10, opt_len ? 1 : 0);
	return (int)(question_end + opt_len);
}
