/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/conf/dnssec.c: dnssec-policies, keys-dir, each zone's dnssec-policy. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/conf/conf.h"
#include "tests/unit/man.h"
#include "unit.h"

static char tmpdir[] = "/tmp/shoal-test-conf-dnssec.XXXXXX";

/* Load `text` (a zone file z.zone beside it) into c; returns conf_load_file's code. */
static int load(conf_t *c, const char *text, char *err, size_t errlen)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/z.zone", tmpdir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("; empty\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/shoald.conf", tmpdir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	conf_init(c);
	err[0] = '\0';
	return conf_load_file(c, path, err, errlen);
}

/* A policy with only its id has every default the table (and the man page) gives. */
static void test_policy_defaults(void)
{
	conf_t c;
	char err[512];
	CU_ASSERT_EQUAL_FATAL(load(&c,
				   "dnssec-policies:\n  - id: plain\n"
				   "zones:\n  - name: a.test\n    file: z.zone\n"
				   "    dnssec-policy: plain\n  - name: b.test\n    file: z.zone\n",
				   err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL_FATAL(c.dnssec_policy_count, 1);
	const conf_dnssec_policy_t *p = conf_zone_dnssec_policy(&c, 0);
	CU_ASSERT_PTR_EQUAL_FATAL(p, &c.dnssec_policies[0]);
	CU_ASSERT_STRING_EQUAL(p->id, "plain");
	CU_ASSERT_EQUAL(p->algorithm, CONF_DNSSEC_ECDSAP256SHA256);
	CU_ASSERT_EQUAL(conf_dnssec_algorithm_number(p->algorithm), 13);
	CU_ASSERT_EQUAL(p->ksk_lifetime, 0);
	CU_ASSERT_EQUAL(p->zsk_lifetime, 2592000);
	CU_ASSERT_EQUAL(p->rrsig_lifetime, 1209600);
	CU_ASSERT_EQUAL(p->rrsig_refresh, 604800);
	CU_ASSERT_EQUAL(p->rrsig_jitter, 43200);
	CU_ASSERT_EQUAL(p->dnskey_ttl, 3600);
	CU_ASSERT(!p->nsec3);
	CU_ASSERT_EQUAL(p->nsec3_iterations, 0);
	CU_ASSERT_EQUAL(p->nsec3_salt_length, 0);
	CU_ASSERT(!p->nsec3_opt_out);
	CU_ASSERT(!p->cds_cdnskey_publish);
	CU_ASSERT_EQUAL(p->signing_threads, 1);
	CU_ASSERT_PTR_NULL(conf_zone_dnssec_policy(&c, 1));
	CU_ASSERT_EQUAL(conf_dnssec_zone_count(&c), 1);
	CU_ASSERT_PTR_NULL(c.keys_dir); /* CONF_KEYS_DIR_DEFAULT */
	CU_ASSERT_EQUAL(conf_validate(&c, err, sizeof(err)), 0);
	conf_clear(&c);
}

/* Every key read; a relative keys-dir taken from the file's folder. */
static void test_policy_all_keys(void)
{
	conf_t c;
	char err[512], want[300];
	int rc = load(&c,
		      "keys-dir: keys\n"
		      "dnssec-policies:\n"
		      "  - id: first\n    algorithm: rsasha256\n"
		      "  - id: fast\n    algorithm: ed25519\n    ksk-lifetime: 600\n"
		      "    zsk-lifetime: 300\n    rrsig-lifetime: 200\n    rrsig-refresh: 100\n"
		      "    rrsig-jitter: 20\n    dnskey-ttl: 60\n    nsec3: on\n"
		      "    nsec3-iterations: 5\n    nsec3-salt-length: 8\n    nsec3-opt-out: yes\n"
		      "    cds-cdnskey-publish: yes\n    signing-threads: 2\n"
		      "zones:\n  - name: a.test\n    file: z.zone\n    dnssec-policy: fast\n",
		      err, sizeof(err));
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL_FATAL(c.dnssec_policy_count, 2);
	CU_ASSERT_EQUAL(c.dnssec_policies[0].algorithm, CONF_DNSSEC_RSASHA256);
	CU_ASSERT_EQUAL(conf_dnssec_algorithm_number(c.dnssec_policies[0].algorithm), 8);
	const conf_dnssec_policy_t *p = conf_zone_dnssec_policy(&c, 0);
	CU_ASSERT_PTR_EQUAL_FATAL(p, &c.dnssec_policies[1]);
	CU_ASSERT_EQUAL(conf_dnssec_algorithm_number(p->algorithm), 15);
	CU_ASSERT_EQUAL(p->ksk_lifetime, 600);
	CU_ASSERT_EQUAL(p->zsk_lifetime, 300);
	CU_ASSERT_EQUAL(p->rrsig_lifetime, 200);
	CU_ASSERT_EQUAL(p->rrsig_refresh, 100);
	CU_ASSERT_EQUAL(p->rrsig_jitter, 20);
	CU_ASSERT_EQUAL(p->dnskey_ttl, 60);
	CU_ASSERT(p->nsec3 && p->nsec3_opt_out && p->cds_cdnskey_publish);
	CU_ASSERT_EQUAL(p->nsec3_iterations, 5);
	CU_ASSERT_EQUAL(p->nsec3_salt_length, 8);
	CU_ASSERT_EQUAL(p->signing_threads, 2);
	char real[256];
	CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(tmpdir, real));
	snprintf(want, sizeof(want), "%s/keys", real);
	CU_ASSERT_STRING_EQUAL(c.keys_dir, want);
	conf_clear(&c);
}

/* text fails to load with a message that starts "shoald.conf:LINE: " and holds want. */
static void expect_error(const char *text, int line, const char *want)
{
	conf_t c;
	char err[512], at[32];
	CU_ASSERT_EQUAL(load(&c, text, err, sizeof(err)), SHOAL_ECONFIG);
	snprintf(at, sizeof(at), "shoald.conf:%d: ", line);
	bool ok = strstr(err, at) && strstr(err, want);
	CU_ASSERT(ok);
	if (!ok)
		fprintf(stderr, "\n  got \"%s\", want line %d and \"%s\"\n", err, line, want);
	conf_clear(&c);
}

/* Mistakes stop the load with their line: an unknown policy id above all. */
static void test_policy_errors(void)
{
	expect_error("dnssec-policies:\n  - id: p\n"
		     "zones:\n  - name: a.test\n    file: z.zone\n    dnssec-policy: q\n",
		     6, "dnssec-policy \"q\" is not an id of dnssec-policies");
	/* no policies at all: the same */
	expect_error("zones:\n  - name: a.test\n    file: z.zone\n    dnssec-policy: p\n", 4,
		     "dnssec-policy \"p\" is not an id");
	expect_error("dnssec-policies:\n  - id: p\n    colour: red\n", 3, "unknown key \"colour\"");
	expect_error("dnssec-policies:\n  - id: p\n    algorithm: rsasha1\n", 3,
		     "algorithm: \"rsasha1\" is not one of the allowed values");
	expect_error("dnssec-policies:\n  - id: p\n    nsec3-salt-length: 256\n", 3,
		     "nsec3-salt-length: \"256\" is not a number from 0 to 255");
	expect_error("dnssec-policies:\n  - id: p\n    nsec3: maybe\n", 3, "nsec3");
	expect_error("dnssec-policies:\n  - id: p\n  - id: p\n", 3, "p is given twice");
	expect_error("dnssec-policies:\n  - algorithm: ed25519\n", 2, "a policy needs an id");
	expect_error("dnssec-policies:\n  - id: p\n    rrsig-lifetime: 3600\n"
		     "    rrsig-refresh: 3000\n    rrsig-jitter: 600\n",
		     2, "p: rrsig-refresh 3000 and rrsig-jitter 600 leave nothing");
	expect_error("dnssec-policies:\n  - id: p\n"
		     "zones:\n  - name: a.test\n    file: z.zone\n    dnssec-policy: [p]\n",
		     6, "dnssec-policy must be a single value");
	expect_error("dnssec-policies: p\n", 1, "dnssec-policies: expected a list");
	expect_error("dnssec-policies: []\ndnssec-policies: []\n", 2,
		     "dnssec-policies is given twice");
	expect_error("keys-dir: \"\"\n", 1, "keys-dir: expected a folder");
	/* within the loader's range, but above what the server itself would load */
	conf_t c;
	char err[512];
	CU_ASSERT_EQUAL_FATAL(load(&c,
				   "max-nsec3-iterations: 10\ndnssec-policies:\n  - id: slow\n"
				   "    nsec3: on\n    nsec3-iterations: 11\n",
				   err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL(conf_validate(&c, err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "slow: nsec3-iterations 11 is above"));
	conf_clear(&c);
}

/* A copy keeps the policies; a zone whose policy changed is not configured the same. */
static void test_policy_copy_and_compare(void)
{
	conf_t a, b, copy;
	char err[512];
	const char *zones = "zones:\n  - name: a.test\n    file: z.zone\n    dnssec-policy: p\n";
	char text[512];
	snprintf(text, sizeof(text), "keys-dir: /k\ndnssec-policies:\n  - id: p\n%s", zones);
	CU_ASSERT_EQUAL_FATAL(load(&a, text, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&copy, &a), 0);
	CU_ASSERT_PTR_NOT_EQUAL(copy.dnssec_policies, a.dnssec_policies);
	CU_ASSERT_STRING_EQUAL(copy.keys_dir, "/k");
	CU_ASSERT_PTR_EQUAL(conf_zone_dnssec_policy(&copy, 0), &copy.dnssec_policies[0]);
	CU_ASSERT(conf_zone_same_settings(&a, 0, &copy, 0));
	snprintf(text, sizeof(text), "dnssec-policies:\n  - id: p\n    nsec3: on\n%s", zones);
	CU_ASSERT_EQUAL_FATAL(load(&b, text, err, sizeof(err)), 0);
	CU_ASSERT(!conf_zone_same_settings(&a, 0, &b, 0));
	CU_ASSERT(conf_zone_same_data(&a, 0, &b, 0));
	/* keys-dir is read at start only */
	char changed[256];
	CU_ASSERT(conf_restart_changes(&a, &b, changed, sizeof(changed)) >= 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(changed, "keys-dir"));
	conf_clear(&a);
	conf_clear(&b);
	conf_clear(&copy);
}

/*
 * DNSSEC POLICIES in man/shoald.conf.5 has one paragraph per key of a
 * policy (id and the table's), and each of the table's states its default.
 */
static void test_man_page_policies(void)
{
	char heads[MAN_HEADS_MAX][MAN_HEAD_LEN];
	int n = man_heads("shoald.conf.5.in", "DNSSEC POLICIES", heads);
	CU_ASSERT_FATAL(n >= 0);
	CU_ASSERT_EQUAL((size_t)n, conf_dnssec_policy_option_count + 1);
	CU_ASSERT(man_find(heads, n, "id") >= 0);
	static char page[1 << 18];
	CU_ASSERT_FATAL(man_read("shoald.conf.5.in", page, sizeof(page)) > 0);
	const char *section = strstr(page, ".SH DNSSEC POLICIES");
	CU_ASSERT_PTR_NOT_NULL_FATAL(section);
	for (size_t i = 0; i < conf_dnssec_policy_option_count; i++) {
		const conf_option_t *o = &conf_dnssec_policy_options[i];
		char head[96], def[96];
		snprintf(head, sizeof(head), ".TP\n.B %s\n", o->name);
		snprintf(def, sizeof(def), "Default: %s.", o->def);
		const char *at = strstr(section, head);
		const char *next = at ? strstr(at + 1, ".TP\n") : NULL;
		const char *found = at ? strstr(at, def) : NULL;
		bool ok = at && found && (!next || found < next);
		CU_ASSERT(ok);
		if (!ok)
			fprintf(stderr, "\n  %s: DNSSEC POLICIES lacks it or \"%s\"\n", o->name,
				def);
	}
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_policy_defaults),   UNIT_TEST(test_policy_all_keys),
		UNIT_TEST(test_policy_errors),     UNIT_TEST(test_policy_copy_and_compare),
		UNIT_TEST(test_man_page_policies), UNIT_END,
	};
	int rc = unit_run(argc, argv, "conf_dnssec", tests);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 99;
	return rc;
}
