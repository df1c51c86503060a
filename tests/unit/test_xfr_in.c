/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/xfr_in.c: answers made by Shoal's own writer (whose
 * records test_xfr_out checks against ldns) and by ldns are received, and
 * the zone built compared through ldns with the zone file; then every
 * fault of a transfer that shows at this level, each refused with its
 * own message and nothing served touched.
 */
#include "config.h"

#include <unistd.h>

#include "tests/unit/xfr_test.h"
#include "zone/journal.h"
#include "zone/xfr_in.h"
#include "zone/xfr_out.h"

static char tmpdir[] = "/tmp/shoal-xfrin-XXXXXX";
static zone_t *v[4]; /* versions 1 to 3 of j.test. (tests/unit/xfr_test.h) */
static const char *vpath[4];
static journal_t *primary; /* the primary's history: 1 to 2 to 3 */
static xt_msgs_t m;        /* what the last transfer reported */
static bool any_serial;    /* start() makes transfers that take any serial (retransfer) */

static const char *const label = "primary 192.0.2.53@53";

static xfr_in_t *start(uint16_t qtype, uint16_t id, const zone_t *current,
		       const xfr_in_limits_t *limits)
{
	uint8_t apex[NAME_MAXLEN];
	name_from_text("J.Test.", NULL, apex);
	memset(&m, 0, sizeof(m));
	xfr_in_t *x = xfr_in_new(apex, qtype, id, current, limits, NULL, label, xt_msg, &m);
	if (x && any_serial)
		xfr_in_take_any_serial(x);
	return x;
}

/* Feed every message the writer makes; the last feed's result. */
static int feed_from(xfr_in_t *x, xfr_out_t *o)
{
	static uint8_t buf[DNS_TCP_MAX];
	int len, rc = 0;
	while (rc == 0 && (len = xfr_out_next(o, buf, sizeof(buf))) > 0)
		rc = xfr_in_feed(x, buf, (size_t)len);
	xfr_out_clear(o);
	return rc;
}

/* The answer Shoal's writer gives to a request for `zone` (IXFR from `client` when not 0). */
static void serve(xfr_out_t *o, const zone_t *zone, const char *origin, uint16_t id,
		  uint32_t client, bool condense, size_t limit)
{
	uint8_t req[512];
	query_t q;
	size_t rlen = xt_request(req, id, origin, client ? DNS_TYPE_IXFR : DNS_TYPE_AXFR, client);
	CU_ASSERT_EQUAL_FATAL(query_parse(&q, req, rlen), QUERY_OK);
	xfr_changes_t c;
	int err;
	if (client && journal_changes(primary, client, zone->serial, condense, &c) == 0)
		err = xfr_out_ixfr(o, zone, &c, &q, limit, 0, NULL);
	else
		err = xfr_out_axfr(o, zone, &q, limit, 0, NULL);
	CU_ASSERT_EQUAL_FATAL(err, 0);
}

/* Does the compiled zone hold exactly the records of the file? */
static bool same_as_file(const zone_t *z, const char *path, const char *origin)
{
	ldns_rr_list *a = xt_zone_rrs(z), *b = xt_file_rrs(path, origin);
	bool same = b && xt_same_rrs(a, b);
	ldns_rr_list_deep_free(a);
	ldns_rr_list_deep_free(b);
	return same;
}

static void test_axfr_in(void)
{
	const char *path = xt_src("tests/diff/dnssec/secure3.test.zone");
	zone_t *src = xt_load(path, "secure3.test.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	static const size_t limits[] = { 512, 4096, DNS_TCP_MAX };
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		size_t limit = limits[i];
		xfr_out_t o;
		serve(&o, src, "secure3.test.", 99, 0, false, limit);
		uint8_t apex[NAME_MAXLEN];
		name_from_text("secure3.test.", NULL, apex);
		xfr_in_t *x =
			xfr_in_new(apex, DNS_TYPE_AXFR, 99, NULL, NULL, NULL, label, xt_msg, NULL);
		CU_ASSERT_EQUAL(feed_from(x, &o), 1);
		CU_ASSERT_EQUAL(xfr_in_kind(x), XFR_IN_AXFR);
		CU_ASSERT_EQUAL(xfr_in_serial(x), src->serial);
		zone_t *z = NULL;
		CU_ASSERT_EQUAL_FATAL(xfr_in_finish(x, NULL, &z), 0);
		CU_ASSERT_TRUE(same_as_file(z, path, "secure3.test."));
		CU_ASSERT_EQUAL(z->denial, ZONE_DENIAL_NSEC3); /* built like a loaded zone */
		zone_unref(z);
		xfr_in_free(x);
	}
	zone_unref(src);
}

/*
 * A message of the answer to request id (qtype, j.test.) made by ldns,
 * from records in text (the question when `question`); ldns compresses
 * the names its own way. Returns its length in buf.
 */
static size_t craft(uint8_t *buf, uint16_t id, uint16_t qtype, bool question,
		    const char *const *rrs, size_t n)
{
	ldns_pkt *p = ldns_pkt_new();
	ldns_pkt_set_id(p, id);
	ldns_pkt_set_qr(p, true);
	ldns_pkt_set_aa(p, true);
	if (question) {
		ldns_rr *q = ldns_rr_new();
		ldns_rr_set_owner(q, ldns_dname_new_frm_str("j.test."));
		ldns_rr_set_type(q, (ldns_rr_type)qtype);
		ldns_rr_set_class(q, LDNS_RR_CLASS_IN);
		ldns_rr_set_question(q, true);
		ldns_pkt_push_rr(p, LDNS_SECTION_QUESTION, q);
	}
	for (size_t i = 0; i < n; i++) {
		ldns_rr *rr = NULL;
		if (ldns_rr_new_frm_str(&rr, rrs[i], 300, NULL, NULL) != LDNS_STATUS_OK) {
			fprintf(stderr, "  ldns cannot read %s\n", rrs[i]);
			CU_FAIL("bad test record");
			continue;
		}
		ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
	}
	uint8_t *wire = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL(ldns_pkt2wire(&wire, p, &len), LDNS_STATUS_OK);
	memcpy(buf, wire, len);
	free(wire);
	ldns_pkt_free(p);
	return len;
}

#define SOA(n) "j.test. 300 IN SOA ns1.j.test. hm.j.test. " #n " 3600 900 604800 300"

/* The serial of SOA(n) in text. */
static uint32_t rr_serial_of(const char *soa)
{
	return (uint32_t)strtoul(soa + strlen("j.test. 300 IN SOA ns1.j.test. hm.j.test. "), NULL,
				 10);
}

/* Feed records as messages of `per` records each (the question in the first). */
static int feed_text(xfr_in_t *x, uint16_t id, uint16_t qtype, const char *const *rrs, size_t n,
		     size_t per)
{
	static uint8_t buf[DNS_TCP_MAX];
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i += per) {
		size_t len = craft(buf, id, qtype, i == 0, rrs + i, i + per > n ? n - i : per);
		rc = xfr_in_feed(x, buf, len);
	}
	return rc;
}

/* The records of version 2 of j.test. (tests/unit/xfr_test.h) in text. */
static const char *const v2_text[] = {
	SOA(2),
	"j.test. NS ns1.j.test.",
	"ns1.j.test. A 192.0.2.1",
	"www.j.test. 600 A 192.0.2.80",
	"www.j.test. 600 A 192.0.2.82",
	"new.j.test. MX 10 mail.new.j.test.",
	"mail.new.j.test. AAAA 2001:db8::25",
	"txt.j.test. TXT \"one\"",
	"same.j.test. A 192.0.2.7",
	"same.j.test. TXT \"unchanged\"",
	SOA(2),
};
#define V2_COUNT (sizeof(v2_text) / sizeof(v2_text[0]))

/* Another writer, and one record per message (BIND's one-answer format). */
static void test_axfr_in_from_ldns(void)
{
	for (size_t per = 1; per <= V2_COUNT; per += V2_COUNT - 1) {
		xfr_in_t *x = start(DNS_TYPE_AXFR, 7, NULL, NULL);
		CU_ASSERT_EQUAL(feed_text(x, 7, DNS_TYPE_AXFR, v2_text, V2_COUNT, per), 1);
		zone_t *z = NULL;
		CU_ASSERT_EQUAL_FATAL(xfr_in_finish(x, NULL, &z), 0);
		CU_ASSERT_TRUE(same_as_file(z, vpath[2], "j.test."));
		zone_unref(z);
		xfr_in_free(x);
	}
}

/* Whether nodes a and b of one name hold the same flags and RRsets. */
static bool unchanged(const znode_t *a, const znode_t *b)
{
	if ((a->flags ^ b->flags) & ZNODE_ANSWER_FLAGS || a->rrset_count != b->rrset_count)
		return false;
	for (uint16_t k = 0; k < a->rrset_count; k++) {
		const rrset_wire_t *x = &znode_rrsets(a)[k].set, *y = &znode_rrsets(b)[k].set;
		if (x->data_len != y->data_len || memcmp(x->data, y->data, x->data_len) != 0)
			return false;
	}
	return true;
}

/* An IXFR from version 1 to 3 (the primary's history), applied to version 1. */
static void check_ixfr_in(bool condense, size_t limit)
{
	xfr_out_t o;
	serve(&o, v[3], "j.test.", 1995, 1, condense, limit);
	xfr_in_t *x = start(DNS_TYPE_IXFR, 1995, v[1], NULL);
	CU_ASSERT_EQUAL(feed_from(x, &o), 1);
	CU_ASSERT_EQUAL(xfr_in_kind(x), XFR_IN_IXFR);
	journal_t *j = journal_new(1 << 20);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(xfr_in_finish(x, j, &z), 0);
	CU_ASSERT_EQUAL(z->serial, 3);
	CU_ASSERT_TRUE(same_as_file(z, vpath[3], "j.test."));
	/*
	 * Applied to the version served, not rebuilt from its records: each
	 * name the changes leave alone keeps its very node (issue 31).
	 */
	size_t kept = 0, same = 0;
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it)) {
		const znode_t *was = zone_lookup(v[1], znode_name(n));
		same += was && unchanged(was, n);
		kept += was == n;
	}
	CU_ASSERT(same > 0);
	CU_ASSERT_EQUAL(kept, same);
	/* recorded as received: our own secondaries can follow by IXFR */
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, condense ? 1 : 2);
	CU_ASSERT_EQUAL(info.oldest, 1);
	CU_ASSERT_EQUAL(info.newest, 3);
	journal_unref(j);
	zone_unref(z);
	xfr_in_free(x);
	/* the version served is as it was */
	CU_ASSERT_TRUE(same_as_file(v[1], vpath[1], "j.test."));
}

static void test_ixfr_in(void)
{
	check_ixfr_in(false, DNS_TCP_MAX);
	check_ixfr_in(true, DNS_TCP_MAX);
	check_ixfr_in(false, 128); /* one record or two per message */
}

/*
 * The changesets the journal would not keep (bigger than its bound, and
 * those before one) go during the apply; what is recorded after is what
 * recording them all gives: the same history, for every bound.
 */
static void test_ixfr_in_journal_bound(void)
{
	xfr_changes_t c;
	CU_ASSERT_EQUAL_FATAL(journal_changes(primary, 1, 3, false, &c), 0);
	CU_ASSERT_EQUAL_FATAL(c.count, 2);
	size_t a = c.sets[0]->octets, b = c.sets[1]->octets;
	size_t bounds[] = { 0, a - 1, a, b - 1, b, a + b, 1 << 20 };
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		journal_t *want = journal_new(bounds[i]), *got = journal_new(bounds[i]);
		CU_ASSERT_EQUAL(journal_add_all(want, (const changeset_t *const *)c.sets, 2), 0);
		xfr_out_t o;
		serve(&o, v[3], "j.test.", 1996, 1, false, DNS_TCP_MAX);
		xfr_in_t *x = start(DNS_TYPE_IXFR, 1996, v[1], NULL);
		CU_ASSERT_EQUAL(feed_from(x, &o), 1);
		zone_t *z = NULL;
		CU_ASSERT_EQUAL_FATAL(xfr_in_finish(x, got, &z), 0);
		CU_ASSERT_TRUE(same_as_file(z, vpath[3], "j.test."));
		journal_info_t w, g;
		journal_get_info(want, &w);
		journal_get_info(got, &g);
		CU_ASSERT_EQUAL(g.depth, w.depth);
		CU_ASSERT_EQUAL(g.octets, w.octets);
		CU_ASSERT(g.depth == 0 || (g.oldest == w.oldest && g.newest == w.newest));
		zone_unref(z);
		xfr_in_free(x);
		journal_unref(want);
		journal_unref(got);
	}
	xfr_changes_clear(&c);
}

/* An IXFR answered with the whole zone (RFC 1995 4): a full version, and the diff recorded. */
static void test_ixfr_in_axfr_style(void)
{
	xfr_in_t *x = start(DNS_TYPE_IXFR, 5, v[1], NULL);
	/* ldns writes it, the question saying IXFR */
	CU_ASSERT_EQUAL(feed_text(x, 5, DNS_TYPE_IXFR, v2_text, V2_COUNT, 4), 1);
	CU_ASSERT_EQUAL(xfr_in_kind(x), XFR_IN_AXFR);
	journal_t *j = journal_new(1 << 20);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL_FATAL(xfr_in_finish(x, j, &z), 0);
	CU_ASSERT_TRUE(same_as_file(z, vpath[2], "j.test."));
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 1);
	CU_ASSERT_EQUAL(info.newest, 2);
	zone_unref(z);
	xfr_in_free(x);
	/* an AXFR of an older version, forced (retransfer): no history leads there */
	any_serial = true;
	x = start(DNS_TYPE_AXFR, 6, v[3], NULL);
	any_serial = false;
	CU_ASSERT_EQUAL(feed_text(x, 6, DNS_TYPE_AXFR, v2_text, V2_COUNT, V2_COUNT), 1);
	CU_ASSERT_EQUAL_FATAL(xfr_in_finish(x, j, &z), 0);
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0);
	zone_unref(z);
	xfr_in_free(x);
	journal_unref(j);
}

/* RFC 1995 2: the SOA alone, not newer: nothing to do; older: a primary behind. */
static void test_ixfr_in_up_to_date(void)
{
	static const char *const same[] = { SOA(3) }, *const older[] = { SOA(2) };
	for (int i = 0; i < 2; i++) {
		xfr_in_t *x = start(DNS_TYPE_IXFR, 8, v[3], NULL);
		CU_ASSERT_EQUAL(feed_text(x, 8, DNS_TYPE_IXFR, i ? older : same, 1, 1), 1);
		CU_ASSERT_EQUAL(xfr_in_kind(x), i ? XFR_IN_OUTDATED : XFR_IN_UPTODATE);
		zone_t *z = v[1];
		CU_ASSERT_EQUAL(xfr_in_finish(x, NULL, &z), 0);
		CU_ASSERT_PTR_NULL(z);
		xfr_in_free(x);
	}
	/* a newer SOA alone may begin an answer of one record per message: more is due */
	static const char *const newer[] = { SOA(9) };
	xfr_in_t *x = start(DNS_TYPE_IXFR, 8, v[3], NULL);
	CU_ASSERT_EQUAL(feed_text(x, 8, DNS_TYPE_IXFR, newer, 1, 1), 0);
	xfr_in_free(x);
}

/*
 * A signer's transfer (xfr_in_set_base): the IXFR from the primary's
 * serial 1 is taken beside a version served at serial 3 (a signed one:
 * its own serial), judged against 1, and its changesets are left to the
 * signer, nothing applied or journalled; an SOA at the base alone is up
 * to date whatever the version served.
 */
static void test_ixfr_in_base(void)
{
	xfr_out_t o;
	serve(&o, v[3], "j.test.", 77, 1, false, DNS_TCP_MAX);
	xfr_in_t *x = start(DNS_TYPE_IXFR, 77, v[3], NULL);
	xfr_in_set_base(x, 1);
	CU_ASSERT_EQUAL(feed_from(x, &o), 1);
	CU_ASSERT_EQUAL(xfr_in_kind(x), XFR_IN_IXFR);
	journal_t *j = journal_new(1 << 20);
	zone_t *z = v[1];
	CU_ASSERT_EQUAL(xfr_in_finish(x, j, &z), 0);
	CU_ASSERT_PTR_NULL(z);
	size_t n = 0;
	const changeset_t *const *sets = xfr_in_changesets(x, &n);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(sets[0]->from, 1);
	CU_ASSERT_EQUAL(sets[1]->to, 3);
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0);
	journal_unref(j);
	xfr_in_free(x);
	static const char *const at_base[] = { SOA(2) };
	x = start(DNS_TYPE_IXFR, 8, v[1], NULL);
	xfr_in_set_base(x, 2);
	CU_ASSERT_EQUAL(feed_text(x, 8, DNS_TYPE_IXFR, at_base, 1, 1), 1);
	CU_ASSERT_EQUAL(xfr_in_kind(x), XFR_IN_UPTODATE);
	xfr_in_free(x);
}

/* ---- faults: each one refused, said once, with the label ---- */

/* Feed records, expect err from feeding (or from finishing when feeding ends it) and text. */
static void refused(uint16_t qtype, const zone_t *current, const char *const *rrs, size_t n,
		    size_t per, int err, const char *text)
{
	xfr_in_t *x = start(qtype, 11, current, NULL);
	int rc = feed_text(x, 11, qtype, rrs, n, per);
	zone_t *z = NULL;
	if (rc >= 0)
		rc = xfr_in_finish(x, NULL, &z);
	CU_ASSERT_EQUAL(rc, err);
	CU_ASSERT_PTR_NULL(z);
	CU_ASSERT_EQUAL(m.errors >= 1, true);
	if (!strstr(m.last, text) || strncmp(m.last, label, strlen(label)) != 0) {
		fprintf(stderr, "  wanted \"%s\", got \"%s\"\n", text, m.last);
		CU_FAIL("not the message expected");
	}
	/* after an error, every call says it again */
	uint8_t buf[512];
	size_t len = craft(buf, 11, qtype, false, rrs, 1);
	if (rc != 0)
		CU_ASSERT_EQUAL(xfr_in_feed(x, buf, len), err);
	xfr_in_free(x);
}

static void test_truncated(void)
{
	/* the primary stops before the final SOA */
	refused(DNS_TYPE_AXFR, NULL, v2_text, V2_COUNT - 1, 3, SHOAL_EMALFORMED,
		"ended before the final SOA");
	/* a message cut inside a record */
	uint8_t buf[DNS_TCP_MAX];
	size_t len = craft(buf, 11, DNS_TYPE_AXFR, true, v2_text, V2_COUNT);
	for (size_t cut = len - 1; cut > len - 30; cut -= 7) {
		xfr_in_t *x = start(DNS_TYPE_AXFR, 11, NULL, NULL);
		CU_ASSERT_EQUAL(xfr_in_feed(x, buf, cut), SHOAL_EMALFORMED);
		xfr_in_free(x);
	}
}

static void test_wrong_final_soa(void)
{
	const char *rrs[V2_COUNT];
	memcpy(rrs, v2_text, sizeof(rrs));
	rrs[V2_COUNT - 1] = SOA(3);
	refused(DNS_TYPE_AXFR, NULL, rrs, V2_COUNT, 4, SHOAL_EMALFORMED,
		"final SOA (serial 3) differs from the first (serial 2)");
	/* the first record must be the SOA */
	refused(DNS_TYPE_AXFR, NULL, v2_text + 1, V2_COUNT - 1, 4, SHOAL_EMALFORMED,
		"starts with j.test. NS, not the zone's SOA");
	/* nothing after the final SOA, in its message or in another */
	const char *more[V2_COUNT + 1];
	memcpy(more, v2_text, sizeof(v2_text));
	more[V2_COUNT] = "late.j.test. A 192.0.2.3";
	refused(DNS_TYPE_AXFR, NULL, more, V2_COUNT + 1, V2_COUNT + 1, SHOAL_EMALFORMED,
		"late.j.test. A after the final SOA");
	xfr_in_t *x = start(DNS_TYPE_AXFR, 11, NULL, NULL);
	CU_ASSERT_EQUAL(feed_text(x, 11, DNS_TYPE_AXFR, v2_text, V2_COUNT, V2_COUNT), 1);
	CU_ASSERT_EQUAL(feed_text(x, 11, DNS_TYPE_AXFR, more + V2_COUNT, 1, 1), SHOAL_EMALFORMED);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "after the final SOA"));
	xfr_in_free(x);
}

static void test_outside_the_zone(void)
{
	const char *rrs[V2_COUNT];
	memcpy(rrs, v2_text, sizeof(rrs));
	rrs[3] = "www.other.test. A 192.0.2.80";
	refused(DNS_TYPE_AXFR, NULL, rrs, V2_COUNT, 4, SHOAL_EZONE,
		"www.other.test. A: outside the zone");
	rrs[3] = "www.j.test. CH A 192.0.2.80";
	refused(DNS_TYPE_AXFR, NULL, rrs, V2_COUNT, 4, SHOAL_EZONE, "class 3, not IN");
	/* RDATA that does not fit its type, found by the same table as a load's */
	static const char *const two[] = { SOA(2), "www.j.test. TXT \"ab\"" };
	uint8_t buf[512];
	size_t len = craft(buf, 11, DNS_TYPE_AXFR, true, two, 2);
	CU_ASSERT_FATAL(len > 13 && memcmp(buf + len - 13, "\0\x10\0\1", 4) == 0);
	buf[len - 12] = DNS_TYPE_A; /* an A record of 3 octets */
	xfr_in_t *x = start(DNS_TYPE_AXFR, 11, NULL, NULL);
	CU_ASSERT_EQUAL(xfr_in_feed(x, buf, len), SHOAL_EMALFORMED);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "www.j.test. A: bad RDATA: a field runs past"));
	xfr_in_free(x);
	/* the checks of a file load, named by the label */
	rrs[3] = "txt.j.test. CNAME www.j.test.";
	refused(DNS_TYPE_AXFR, NULL, rrs, V2_COUNT, 4, SHOAL_EZONE,
		"CNAME and other data at the same name");
}

/*
 * A transfer's warnings are bounded as a load's are: 1000 delegations
 * without glue gave 1000 log lines. Now 50 and one line for the rest.
 */
static void test_warnings_bounded(void)
{
	enum { CUTS = 1000 };
	static char text[CUTS][64];
	const char *rrs[CUTS + 4];
	size_t n = 0;
	rrs[n++] = SOA(2);
	rrs[n++] = "j.test. NS ns1.j.test.";
	rrs[n++] = "ns1.j.test. A 192.0.2.1";
	for (int i = 0; i < CUTS; i++) {
		snprintf(text[i], sizeof(text[i]), "cut%d.j.test. NS ns.cut%d.j.test.", i, i);
		rrs[n++] = text[i];
	}
	rrs[n++] = SOA(2);
	xfr_in_t *x = start(DNS_TYPE_AXFR, 12, NULL, NULL);
	CU_ASSERT_EQUAL(feed_text(x, 12, DNS_TYPE_AXFR, rrs, n, 100), 1);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(xfr_in_finish(x, NULL, &z), 0);
	CU_ASSERT_EQUAL(m.warnings, 51);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "950 more warnings not shown"));
	if (m.warnings != 51)
		fprintf(stderr, "  %d warnings, last: %s\n", m.warnings, m.last);
	zone_unref(z);
	xfr_in_free(x);
}

static void test_message_too_large(void)
{
	static uint8_t big[DNS_TCP_MAX + 1];
	craft(big, 11, DNS_TYPE_AXFR, true, v2_text, 3);
	xfr_in_t *x = start(DNS_TYPE_AXFR, 11, NULL, NULL);
	CU_ASSERT_EQUAL(xfr_in_feed(x, big, sizeof(big)), SHOAL_EMALFORMED);
	CU_ASSERT_PTR_NOT_NULL(strstr(m.last, "65536 octets, more than a message holds"));
	xfr_in_free(x);
}

static void test_limits(void)
{
	/* max-zone-size, records, messages: each one reached exactly, then passed */
	uint8_t buf[DNS_TCP_MAX];
	size_t total = 0;
	for (size_t i = 0; i < V2_COUNT; i += 4)
		total += craft(buf, 11, DNS_TYPE_AXFR, i == 0, v2_text + i,
			       i + 4 > V2_COUNT ? V2_COUNT - i : 4);
	xfr_in_limits_t fits[] = { { .max_octets = total },
				   { .max_records = V2_COUNT },
				   { .max_messages = (V2_COUNT + 3) / 4 } };
	xfr_in_limits_t over[] = { { .max_octets = total - 1 },
				   { .max_records = V2_COUNT - 1 },
				   { .max_messages = (V2_COUNT + 3) / 4 - 1 } };
	const char *why[] = { "octets (max-zone-size)", "records", "messages" };
	for (int i = 0; i < 3; i++) {
		xfr_in_t *x = start(DNS_TYPE_AXFR, 11, NULL, &fits[i]);
		CU_ASSERT_EQUAL(feed_text(x, 11, DNS_TYPE_AXFR, v2_text, V2_COUNT, 4), 1);
		xfr_in_free(x);
		x = start(DNS_TYPE_AXFR, 11, NULL, &over[i]);
		CU_ASSERT_EQUAL(feed_text(x, 11, DNS_TYPE_AXFR, v2_text, V2_COUNT, 4),
				SHOAL_ESPACE);
		CU_ASSERT_PTR_NOT_NULL(strstr(m.last, why[i]));
		xfr_in_free(x);
	}
}

static void test_ixfr_deletes_missing(void)
{
	static const char *const rrs[] = {
		SOA(3), SOA(1), "nothere.j.test. A 192.0.2.77", SOA(3), "www.j.test. A 192.0.2.99",
		SOA(3)
	};
	refused(DNS_TYPE_IXFR, v[1], rrs, 6, 2, SHOAL_EZONE,
		"deletes nothere.j.test. A, a record the zone does not have");
	/* deleting what an earlier changeset of the answer added is fine */
	static const char *const ok[] = { SOA(3), SOA(1),
					  SOA(2), "x.j.test. A 192.0.2.5",
					  SOA(2), "x.j.test. A 192.0.2.5",
					  SOA(3), SOA(3) };
	xfr_in_t *x = start(DNS_TYPE_IXFR, 11, v[1], NULL);
	CU_ASSERT_EQUAL(feed_text(x, 11, DNS_TYPE_IXFR, ok, 8, 3), 1);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(xfr_in_finish(x, NULL, &z), 0);
	CU_ASSERT_PTR_NOT_NULL(z);
	zone_unref(z);
	xfr_in_free(x);
}

static void test_serial_from_the_future(void)
{
	/* changesets that start where the zone served is not */
	static const char *const future[] = { SOA(9), SOA(5), SOA(9), SOA(9) };
	refused(DNS_TYPE_IXFR, v[1], future, 4, 4, SHOAL_EMALFORMED,
		"changeset from serial 5, where the zone served has 1");
	/* nor where the previous changeset ended */
	static const char *const gap[] = { SOA(9), SOA(1), SOA(2), SOA(4), SOA(9), SOA(9) };
	refused(DNS_TYPE_IXFR, v[1], gap, 6, 6, SHOAL_EMALFORMED,
		"changeset from serial 4, where the previous one ended at 2");
	/* a changeset that goes back, and an IXFR to a version not newer */
	static const char *const back[] = { SOA(9), SOA(1), SOA(0), SOA(9) };
	refused(DNS_TYPE_IXFR, v[1], back, 4, 4, SHOAL_EMALFORMED,
		"changeset to serial 0, not newer");
	/* an IXFR to an older version, when any serial is taken: a broken stream */
	static const char *const old[] = { SOA(1), SOA(3), SOA(1), SOA(1) };
	any_serial = true;
	refused(DNS_TYPE_IXFR, v[3], old, 4, 4, SHOAL_EMALFORMED,
		"IXFR to serial 1, not newer than the zone served (3)");
	any_serial = false;
}

/* Feed the records, one message of `per`: the answer must end at its first SOA, as kind. */
static void ends_at_first_soa(uint16_t qtype, const zone_t *current, const char *const *rrs,
			      size_t n, size_t per, enum xfr_in_kind kind)
{
	xfr_in_t *x = start(qtype, 13, current, NULL);
	CU_ASSERT_EQUAL(feed_text(x, 13, qtype, rrs, n, per), 1);
	CU_ASSERT_EQUAL(xfr_in_kind(x), kind);
	CU_ASSERT_EQUAL(xfr_in_serial(x), rr_serial_of(rrs[0]));
	zone_t *z = v[1];
	journal_t *j = journal_new(1 << 20);
	CU_ASSERT_EQUAL(xfr_in_finish(x, j, &z), 0);
	CU_ASSERT_PTR_NULL(z);
	CU_ASSERT_EQUAL(m.errors, 0);
	journal_info_t info;
	journal_get_info(j, &info);
	CU_ASSERT_EQUAL(info.depth, 0); /* nothing recorded */
	journal_unref(j);
	/* the answer is over: a further message is an error */
	uint8_t buf[512];
	size_t len = craft(buf, 13, qtype, false, rrs + 1, 1);
	CU_ASSERT_EQUAL(xfr_in_feed(x, buf, len), SHOAL_EMALFORMED);
	xfr_in_free(x);
}

/*
 * RFC 1982: a version older than the one served, or 2^31 from it, is never
 * taken unless forced, whatever the form of the answer; one at the same
 * serial is up to date. Both end at the first SOA, the zone's records
 * unread. Rolled a secondary back from 100 to 50 before.
 */
static void test_outdated(void)
{
	/* an IXFR answered with the whole zone, and an AXFR (a fallback) */
	ends_at_first_soa(DNS_TYPE_IXFR, v[3], v2_text, V2_COUNT, 4, XFR_IN_OUTDATED);
	ends_at_first_soa(DNS_TYPE_AXFR, v[3], v2_text, V2_COUNT, V2_COUNT, XFR_IN_OUTDATED);
	ends_at_first_soa(DNS_TYPE_AXFR, v[3], v2_text, V2_COUNT, 1, XFR_IN_OUTDATED);
	/* the same serial: up to date */
	ends_at_first_soa(DNS_TYPE_AXFR, v[2], v2_text, V2_COUNT, 4, XFR_IN_UPTODATE);
	/* 2^31 from serial 1: undefined (RFC 1982 3.2), so not newer */
	const char *jump[V2_COUNT];
	memcpy(jump, v2_text, sizeof(jump));
	jump[0] = jump[V2_COUNT - 1] = SOA(2147483649);
	ends_at_first_soa(DNS_TYPE_AXFR, v[1], jump, V2_COUNT, 4, XFR_IN_OUTDATED);
	/* the rest of the message is not read: a record outside the zone raises nothing */
	const char *outside[V2_COUNT];
	memcpy(outside, v2_text, sizeof(outside));
	outside[1] = "www.other.test. A 192.0.2.80";
	ends_at_first_soa(DNS_TYPE_IXFR, v[3], outside, V2_COUNT, V2_COUNT, XFR_IN_OUTDATED);
	/* one newer than 2^31 - 1 ahead is newer: taken */
	jump[0] = jump[V2_COUNT - 1] = SOA(2147483648);
	xfr_in_t *x = start(DNS_TYPE_AXFR, 14, v[1], NULL);
	CU_ASSERT_EQUAL(feed_text(x, 14, DNS_TYPE_AXFR, jump, V2_COUNT, 4), 1);
	zone_t *z = NULL;
	CU_ASSERT_EQUAL(xfr_in_finish(x, NULL, &z), 0);
	CU_ASSERT_PTR_NOT_NULL(z);
	zone_unref(z);
	xfr_in_free(x);
	/* forced (shoalctl retransfer): any serial, the same one too */
	any_serial = true;
	for (int i = 2; i <= 3; i++) {
		x = start(DNS_TYPE_AXFR, 15, v[i], NULL);
		CU_ASSERT_EQUAL(feed_text(x, 15, DNS_TYPE_AXFR, v2_text, V2_COUNT, 4), 1);
		CU_ASSERT_EQUAL(xfr_in_kind(x), XFR_IN_AXFR);
		z = NULL;
		CU_ASSERT_EQUAL(xfr_in_finish(x, NULL, &z), 0);
		CU_ASSERT_TRUE(z && same_as_file(z, vpath[2], "j.test."));
		zone_unref(z);
		xfr_in_free(x);
	}
	any_serial = false;
}

static void test_header_checks(void)
{
	uint8_t buf[DNS_TCP_MAX];
	size_t len = craft(buf, 11, DNS_TYPE_AXFR, true, v2_text, V2_COUNT);
	struct {
		size_t at;
		uint8_t value;
		const char *why;
	} bad[] = {
		{ 1, 12, "not an answer to the request" },   /* another ID */
		{ 2, 0x04, "not an answer to the request" }, /* QR clear */
		{ 3, 0x85, "answered RCODE 5" },             /* REFUSED */
		{ 3, 0x89, "answered RCODE 9" },             /* NOTAUTH */
		{ 2, 0x86, "truncated (TC)" },
		{ 5, 2, "2 questions" },
		{ 18, 'x', "the question is not the request's" }, /* j.test -> j.xest */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t copy[DNS_TCP_MAX];
		memcpy(copy, buf, len);
		copy[bad[i].at] = bad[i].value;
		xfr_in_t *x = start(DNS_TYPE_AXFR, 11, NULL, NULL);
		CU_ASSERT_EQUAL(xfr_in_feed(x, copy, len), SHOAL_EMALFORMED);
		if (!strstr(m.last, bad[i].why)) {
			fprintf(stderr, "  wanted \"%s\", got \"%s\"\n", bad[i].why, m.last);
			CU_FAIL("not the message expected");
		}
		xfr_in_free(x);
	}
	/* an IXFR answer to an AXFR request */
	len = craft(buf, 11, DNS_TYPE_IXFR, true, v2_text, V2_COUNT);
	xfr_in_t *x = start(DNS_TYPE_AXFR, 11, NULL, NULL);
	CU_ASSERT_EQUAL(xfr_in_feed(x, buf, len), SHOAL_EMALFORMED);
	xfr_in_free(x);
	CU_ASSERT_PTR_NULL(xfr_in_new((const uint8_t *)"\1j\0", DNS_TYPE_A, 1, NULL, NULL, NULL,
				      label, NULL, NULL));
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	for (int i = 1; i <= 3; i++) {
		vpath[i] = xt_write_version(tmpdir, i);
		v[i] = xt_load(vpath[i], "j.test.");
	}
	primary = journal_new(1 << 20);
	for (int i = 1; i < 3; i++) {
		changeset_t *cs = NULL;
		if (v[i] && v[i + 1] && changeset_diff(v[i], v[i + 1], 0, &cs) == 0)
			journal_add(primary, cs);
	}
	static const unit_test_t tests[] = {
		UNIT_TEST(test_axfr_in),
		UNIT_TEST(test_axfr_in_from_ldns),
		UNIT_TEST(test_ixfr_in),
		UNIT_TEST(test_ixfr_in_journal_bound),
		UNIT_TEST(test_ixfr_in_axfr_style),
		UNIT_TEST(test_ixfr_in_up_to_date),
		UNIT_TEST(test_ixfr_in_base),
		UNIT_TEST(test_outdated),
		UNIT_TEST(test_truncated),
		UNIT_TEST(test_wrong_final_soa),
		UNIT_TEST(test_outside_the_zone),
		UNIT_TEST(test_warnings_bounded),
		UNIT_TEST(test_message_too_large),
		UNIT_TEST(test_limits),
		UNIT_TEST(test_ixfr_deletes_missing),
		UNIT_TEST(test_serial_from_the_future),
		UNIT_TEST(test_header_checks),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "xfr_in", tests);
	for (int i = 1; i <= 3; i++)
		zone_unref(v[i]);
	journal_unref(primary);
	return xt_remove_dir(tmpdir, rc);
}
