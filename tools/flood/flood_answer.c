/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's answer reading: header fields, the NSID option, and counting one answer. */
#include "config.h"

#include <string.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "proto/wire.h"
#include "tools/flood/flood.h"

/* The N of an NSID ending in "/N" (shoald's "<identity>/<thread index>"), or -1. */
static int nsid_thread_index(const uint8_t *nsid, uint16_t len)
{
	int n = 0;
	uint16_t i = len;
	while (i > 0 && nsid[i - 1] >= '0' && nsid[i - 1] <= '9')
		i--;
	if (i == len || i < 2 || nsid[i - 1] != '/' || len - i > 4)
		return -1;
	for (; i < len; i++)
		n = n * 10 + (nsid[i] - '0');
	return n;
}

/* Walk the OPT record's options (RFC 6891 6.1.2) for NSID (RFC 5001 2.3). */
static void read_opt(flood_answer_t *a, wire_t *w, uint16_t rdlen)
{
	const uint8_t *rdata = wire_read_ptr(w, rdlen);
	if (!rdata)
		return;
	wire_t o;
	wire_init_read(&o, rdata, rdlen);
	while (wire_left(&o) >= 4) {
		uint16_t code = wire_read_u16(&o);
		uint16_t olen = wire_read_u16(&o);
		const uint8_t *data = wire_read_ptr(&o, olen);
		if (!data)
			return;
		if (code == DNS_EDNS_NSID) {
			a->has_nsid = true;
			a->nsid = data;
			a->nsid_len = olen;
			a->nsid_thread = nsid_thread_index(data, olen);
			return;
		}
	}
}

int flood_answer_parse(flood_answer_t *a, const uint8_t *pkt, size_t len, bool want_nsid)
{
	memset(a, 0, sizeof(*a));
	a->nsid_thread = -1;
	wire_t w;
	wire_init_read(&w, pkt, len);
	a->id = wire_read_u16(&w);
	uint16_t flags = wire_read_u16(&w);
	uint16_t qdcount = wire_read_u16(&w);
	uint16_t ancount = wire_read_u16(&w);
	uint16_t nscount = wire_read_u16(&w);
	uint16_t arcount = wire_read_u16(&w);
	if (w.err)
		return SHOAL_EMALFORMED;
	a->rcode = flags & DNS_RCODE_MASK;
	a->truncated = (flags & DNS_FLAG_TC) != 0;
	if (!want_nsid)
		return 0;
	for (unsigned i = 0; i < qdcount && !w.err; i++) {
		(void)name_skip(&w);
		wire_skip(&w, 4); /* QTYPE, QCLASS */
	}
	unsigned records = (unsigned)ancount + nscount + arcount;
	for (unsigned i = 0; i < records && !w.err; i++) {
		(void)name_skip(&w);
		uint16_t type = wire_read_u16(&w);
		wire_skip(&w, 6); /* CLASS, TTL */
		uint16_t rdlen = wire_read_u16(&w);
		if (type == DNS_TYPE_OPT && i >= (unsigned)ancount + nscount) {
			read_opt(a, &w, rdlen);
			return 0;
		}
		wire_skip(&w, rdlen);
	}
	return 0;
}

void flood_count_answer(flood_thread_t *t, const flood_answer_t *a, uint64_t latency_ns,
			uint64_t now_ns)
{
	flood_stats_t *s = &t->stats;
	flood_add(&s->answered, 1);
	flood_add(&s->rcode[a->rcode & 15], 1);
	flood_add(&s->hist[flood_hist_bucket(latency_ns)], 1);
	if (a->truncated)
		flood_add(&s->truncated, 1);
	if (latency_ns > atomic_load_explicit(&s->max_latency_ns, memory_order_relaxed))
		atomic_store_explicit(&s->max_latency_ns, latency_ns, memory_order_relaxed);
	atomic_store_explicit(&s->last_answer_ns, now_ns, memory_order_relaxed);
	if (!t->opts->nsid)
		return;
	if (!a->has_nsid) {
		flood_add(&s->nsid_missing, 1);
	} else if (a->nsid_thread >= 0 && a->nsid_thread < FLOOD_NSID_THREADS) {
		flood_add(&s->nsid_thread[a->nsid_thread], 1);
	} else {
		flood_add(&s->nsid_other, 1);
	}
	if (a->has_nsid && !s->nsid_sample[0]) {
		size_t n = a->nsid_len < FLOOD_NSID_MAX ? a->nsid_len : FLOOD_NSID_MAX;
		for (size_t i = 0; i < n; i++) /* printable only: it goes to a terminal */
			s->nsid_sample[i] =
				(a->nsid[i] >= 0x20 && a->nsid[i] < 0x7f) ? (char)a->nsid[i] : '?';
		s->nsid_sample[n] = 0;
	}
}
