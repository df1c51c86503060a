/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/conf/update.c: allow-update's rules read, matched and applied; errors. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "proto/dns.h"
#include "server/conf/update.h"
#include "tests/unit/conf_text.h"
#include "tests/unit/unit.h"
#include "zone/update.h"

static const char keys[] = "keys:\n"
			   "  - name: acme\n"
			   "    algorithm: hmac-sha256\n"
			   "    secret: c2VjcmV0c2VjcmV0c2VjcmV0\n"
			   "  - name: ops\n"
			   "    algorithm: hmac-sha256\n"
			   "    secret: b3RoZXJvdGhlcm90aGVy\n";

/* Load keys and one zone example.com whose mapping ends with `zone_keys`. */
static int load(conf_t *c, const char *zone_keys, char *err, size_t errlen)
{
	char path[1024], text[4096];
	unit_src_path(path, sizeof(path), "tests/unit/zones/example.zone");
	snprintf(text, sizeof(text), "%szones:\n  - name: example.com\n    file: %s\n%s", keys,
		 path, zone_keys);
	char tmp[] = "/tmp/shoal-test-conf.XXXXXX";
	conf_init(c);
	if (unit_temp_file(tmp, text, strlen(text)) < 0)
		return -1;
	int rc = conf_load_file(c, tmp, err, errlen);
	unlink(tmp);
	return rc;
}

static const char policy[] = "    serial-policy: dateserial\n"
			     "    allow-update:\n"
			     "      - key: acme\n"
			     "        names: [\"_acme-challenge.*\"]\n"
			     "        types: [TXT]\n"
			     "      - key: ops\n"
			     "      - address: 192.0.2.0/24\n"
			     "        names: [www, \"*.dyn\"]\n";

static struct sockaddr_in peer(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	inet_pton(AF_INET, ip, &sa.sin_addr);
	return sa;
}

static const uint8_t *wire(const char *text)
{
	static uint8_t buf[4][NAME_MAXLEN];
	static int next;
	uint8_t *b = buf[next++ % 4];
	name_from_text(text, NULL, b);
	return b;
}

/* The first rule matching the key or the address decides; an unsigned request needs an address. */
static void test_rule_match(void)
{
	conf_t c;
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(load(&c, policy, err, sizeof(err)), 0);
	const conf_update_t *u = conf_zone_xfr(&c, 0)->update;
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_EQUAL(u->rule_count, 3);
	CU_ASSERT_EQUAL(u->serial_policy, ZONE_SERIAL_DATESERIAL);
	struct sockaddr_in in = peer("192.0.2.5"), out = peer("198.51.100.1");
	const struct sockaddr *sin = (const struct sockaddr *)&in,
			      *sout = (const struct sockaddr *)&out;
	CU_ASSERT_PTR_EQUAL(conf_update_rule(u, sout, 0), &u->rules[0]);
	CU_ASSERT_PTR_EQUAL(conf_update_rule(u, sout, 1), &u->rules[1]);
	CU_ASSERT_PTR_EQUAL(conf_update_rule(u, sin, ACL_NOKEY), &u->rules[2]);
	CU_ASSERT_PTR_NULL(conf_update_rule(u, sout, ACL_NOKEY));
	CU_ASSERT_PTR_EQUAL(conf_update_rule(u, sin, 0), &u->rules[0]); /* the first decides */
	CU_ASSERT_PTR_NULL(conf_update_rule(NULL, sin, 0));             /* no allow-update */
	conf_clear(&c);
}

static void test_rule_allows(void)
{
	conf_t c;
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(load(&c, policy, err, sizeof(err)), 0);
	const conf_update_t *u = conf_zone_xfr(&c, 0)->update;
	const uint8_t *apex = wire("example.com.");
	const update_rule_t *acme = &u->rules[0], *ops = &u->rules[1], *addr = &u->rules[2];
	CU_ASSERT(
		conf_update_allows(acme, apex, wire("_acme-challenge.example.com."), DNS_TYPE_TXT));
	CU_ASSERT(conf_update_allows(acme, apex, wire("_ACME-Challenge.www.example.com."),
				     DNS_TYPE_TXT));
	CU_ASSERT_FALSE(conf_update_allows(acme, apex, wire("www.example.com."), DNS_TYPE_TXT));
	CU_ASSERT_FALSE(
		conf_update_allows(acme, apex, wire("_acme-challenge.example.com."), DNS_TYPE_A));
	CU_ASSERT_FALSE(
		conf_update_allows(acme, apex, wire("_acme-challenge.example.com."), DNS_TYPE_ANY));
	CU_ASSERT_FALSE(conf_update_allows(acme, apex, wire("x._acme-challenge.example.com."),
					   DNS_TYPE_TXT));
	/* default types: not the SOA, apex NS or a signer's types */
	CU_ASSERT(conf_update_allows(ops, apex, wire("www.example.com."), DNS_TYPE_A));
	CU_ASSERT(conf_update_allows(ops, apex, wire("example.com."), DNS_TYPE_MX));
	CU_ASSERT(conf_update_allows(ops, apex, wire("sub.example.com."), DNS_TYPE_NS));
	CU_ASSERT(conf_update_allows(ops, apex, wire("www.example.com."), DNS_TYPE_ANY));
	CU_ASSERT_FALSE(conf_update_allows(ops, apex, wire("example.com."), DNS_TYPE_SOA));
	CU_ASSERT_FALSE(conf_update_allows(ops, apex, wire("example.com."), DNS_TYPE_NS));
	CU_ASSERT_FALSE(conf_update_allows(ops, apex, wire("example.com."), DNS_TYPE_DNSKEY));
	CU_ASSERT_FALSE(conf_update_allows(ops, apex, wire("www.example.com."), DNS_TYPE_RRSIG));
	/* "www" exact, "*.dyn" strictly below dyn */
	CU_ASSERT(conf_update_allows(addr, apex, wire("WWW.example.com."), DNS_TYPE_A));
	CU_ASSERT(conf_update_allows(addr, apex, wire("a.b.dyn.example.com."), DNS_TYPE_AAAA));
	CU_ASSERT_FALSE(conf_update_allows(addr, apex, wire("dyn.example.com."), DNS_TYPE_A));
	CU_ASSERT_FALSE(conf_update_allows(addr, apex, wire("x.www.example.com."), DNS_TYPE_A));
	conf_clear(&c);
}

/*
 * A copied configuration shares the zone; one that changes the zone gets a
 * copy of its own that shares the settings; each clear drops its reference.
 */
static void test_copy_shares(void)
{
	conf_t c, d;
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(load(&c, policy, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&d, &c), 0);
	CU_ASSERT_PTR_EQUAL(conf_zone_xfr(&d, 0)->update, conf_zone_xfr(&c, 0)->update);
	CU_ASSERT_EQUAL(conf_zone_xfr(&c, 0)->update->refs, 1); /* one zone holds them */
	CU_ASSERT_PTR_NOT_NULL_FATAL(conf_zone_xfr_mut(&d, 0));
	CU_ASSERT_PTR_EQUAL(conf_zone_xfr(&d, 0)->update, conf_zone_xfr(&c, 0)->update);
	CU_ASSERT_EQUAL(conf_zone_xfr(&c, 0)->update->refs, 2);
	conf_clear(&c);
	CU_ASSERT_EQUAL(conf_zone_xfr(&d, 0)->update->rule_count, 3);
	conf_clear(&d);
}

/*
 * update-max-records and update-rate-per-key: a zone's own (or a
 * template's) over the global one, the global one where it sets none.
 */
static void test_bounds(void)
{
	conf_t c;
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(load(&c,
				   "    update-max-records: 2\n"
				   "    update-rate-per-key: 5\n"
				   "update-max-records: 7\n"
				   "update-rate-per-key: 3\n"
				   "templates:\n"
				   "  - id: t\n"
				   "    primaries: 192.0.2.1 NOKEY\n"
				   "    update-max-records: 9\n"
				   "    update-rate-per-key: 0\n",
				   err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL(conf_zone_update_max_records(&c, 0), 2);
	CU_ASSERT_EQUAL(conf_zone_update_rate(&c, 0), 5);
	CU_ASSERT_EQUAL(c.update_max_records, 7);
	CU_ASSERT_EQUAL_FATAL(c.template_count, 1);
	CU_ASSERT_EQUAL(c.templates[0].xfr.update_max_records, 9);
	CU_ASSERT_EQUAL(c.templates[0].xfr.update_rate_per_key, 0); /* its own: no limit */
	conf_clear(&c);
	CU_ASSERT_EQUAL_FATAL(
		load(&c, "update-max-records: 7\nupdate-rate-per-key: 3\n", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(conf_zone_update_max_records(&c, 0), 7);
	CU_ASSERT_EQUAL(conf_zone_update_rate(&c, 0), 3);
	conf_clear(&c);
}

/* Each mistake is refused with the line it is on. */
static void test_errors(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "    allow-update:\n      - key: nokey\n", ":12: allow-update: no key called" },
		{ "    allow-update:\n      - names: [www]\n", ":12: allow-update: a rule needs" },
		{ "    allow-update:\n      - key: acme\n        owner: www\n",
		  ":13: allow-update: unknown key \"owner\"" },
		{ "    allow-update:\n      - key: acme\n        types: [TXT, BOGUS]\n",
		  ":13: allow-update: types: \"BOGUS\" is not" },
		{ "    allow-update:\n      - key: acme\n        names: [\"www.example.org.\"]\n",
		  ":13: allow-update: names: \"www.example.org.\"" },
		{ "    allow-update:\n      - address: 192.0.2.0/33\n",
		  ":12: allow-update: \"192" },
		{ "    allow-update: acme\n", ":11: allow-update: expected a list" },
		{ "    serial-policy: weekly\n", ":11: serial-policy: \"weekly\"" },
		{ "    update-max-records: 0\n",
		  ":11: update-max-records: \"0\" is not a number from 1 to 65535" },
		{ "    update-rate-per-key: -1\n",
		  ":11: update-rate-per-key: \"-1\" is not a number from 0 to 1000000" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		conf_t c;
		char err[512] = "";
		CU_ASSERT_EQUAL(load(&c, bad[i].text, err, sizeof(err)), SHOAL_ECONFIG);
		if (!strstr(err, bad[i].want))
			fprintf(stderr, "case %zu: \"%s\", want \"%s\"\n", i, err, bad[i].want);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].want));
		conf_clear(&c);
	}
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_rule_match),  UNIT_TEST(test_rule_allows),
		UNIT_TEST(test_copy_shares), UNIT_TEST(test_bounds),
		UNIT_TEST(test_errors),      UNIT_END,
	};
	return unit_run(argc, argv, "conf_update", tests);
}
