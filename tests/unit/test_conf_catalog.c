/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/conf/catalog.c: templates, catalog-role and a consumer's templates. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "proto/error.h"
#include "server/conf/conf.h"
#include "tests/unit/conf_text.h"
#include "unit.h"

/* A consumer with a default and a group's template, a producer; templates after zones. */
#define CATALOG_CONF(signed)                                                                                      \
	"zones:\n"                                                                                                \
	"  - name: catalog.invalid\n"                                                                             \
	"    primaries: 192.0.2.1 NOKEY\n"                                                                        \
	"    catalog-role: consumer\n"                                                                            \
	"    catalog-template: plain\n"                                                                           \
	"    catalog-group-templates: {signed: " signed ", \"two words\": plain}\n"                               \
							"  - name: out.invalid\n"                                 \
							"    catalog-role: producer\n"                            \
							"templates:\n"                                            \
							"  - id: plain\n"                                         \
							"    primaries: 192.0.2.53@5300 NOKEY\n"                  \
							"    zonefile-sync: 30\n"                                 \
							"  - id: tsig\n"                                          \
							"    primaries: [\"192.0.2.54 k1\", \"192.0.2.55 k1\"]\n" \
							"    provide-xfr: 127.0.0.1 NOKEY\n"                      \
							"keys:\n"                                                 \
							"  - name: k1\n    algorithm: hmac-sha256\n"              \
							"    secret: \"hVXazZpI2xIG1nyPHmlJNC8tV89c4sQXRlcOGNTYPG0=\"\n"

static const char good[] = CATALOG_CONF("tsig");

/* Each key read where it goes, whichever order the file has; a member's template by group. */
static void test_templates_good(void)
{
	conf_t c;
	CU_ASSERT_EQUAL_FATAL(unit_conf_text(&c, good, strlen(good)), 0);
	CU_ASSERT_EQUAL_FATAL(c.template_count, 2);
	CU_ASSERT_STRING_EQUAL(c.templates[0].id, "plain");
	CU_ASSERT_EQUAL(c.templates[0].xfr.primaries.count, 1);
	CU_ASSERT_EQUAL(c.templates[0].xfr.zonefile_sync, 30);
	CU_ASSERT_EQUAL(c.templates[1].xfr.primaries.count, 2);
	CU_ASSERT_EQUAL(c.templates[1].xfr.primaries.entries[1].key, 0);
	CU_ASSERT_EQUAL(c.templates[1].xfr.provide_xfr.count, 1);
	const conf_zone_xfr_t *cat = conf_zone_xfr(&c, 0), *out = conf_zone_xfr(&c, 1);
	CU_ASSERT_EQUAL(cat->catalog_role, CONF_CATALOG_CONSUMER);
	CU_ASSERT_EQUAL(out->catalog_role, CONF_CATALOG_PRODUCER);
	CU_ASSERT_PTR_NULL(out->catalog);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cat->catalog);
	CU_ASSERT_EQUAL(cat->catalog->group_count, 2);
	CU_ASSERT_EQUAL(conf_catalog_template(cat, NULL), 0);
	CU_ASSERT_EQUAL(conf_catalog_template(cat, "signed"), 1);
	CU_ASSERT_EQUAL(conf_catalog_template(cat, "two words"), 0);
	/* RFC 9432 4.4.2: a group the consumer does not know gets the default */
	CU_ASSERT_EQUAL(conf_catalog_template(cat, "unknown"), 0);
	CU_ASSERT_EQUAL(conf_catalog_template(cat, "Signed"), 0);
	conf_clear(&c);
}

/* Load text and expect an error on `line` that says want. */
static void expect_error(const char *text, int line, const char *want)
{
	char err[512] = "", path[] = "/tmp/shoal-test-catalog.XXXXXX", prefix[64];
	CU_ASSERT_EQUAL_FATAL(unit_temp_file(path, text, strlen(text)), 0);
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), SHOAL_ECONFIG);
	unlink(path);
	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	bool ok = !strncmp(err, prefix, strlen(prefix)) && strstr(err, want);
	CU_ASSERT(ok);
	if (!ok)
		fprintf(stderr, "\n  got: %s\n  want: %s...%s\n", err, prefix, want);
	conf_clear(&c);
}

#define ZONE     "zones:\n  - name: catalog.invalid\n    primaries: 192.0.2.1 NOKEY\n"
#define TEMPLATE "templates:\n  - id: t\n    primaries: 192.0.2.53 NOKEY\n"

/* What stops start-up, each with its line. */
static void test_templates_errors(void)
{
	expect_error(ZONE "    catalog-role: consumer\n    catalog-template: nope\n" TEMPLATE, 5,
		     "catalog-template: no template \"nope\" (see templates:)");
	expect_error(ZONE "    catalog-role: consumer\n" TEMPLATE, 2,
		     "zone catalog.invalid.: a catalog-role: consumer zone needs catalog-template");
	expect_error(ZONE "    catalog-template: t\n" TEMPLATE, 2,
		     "are for a zone with catalog-role: consumer");
	expect_error(ZONE "    catalog-role: generate\n", 4,
		     "catalog-role: \"generate\" is not none, consumer or producer");
	expect_error(ZONE "    catalog-role: consumer\n    catalog-template: t\n"
			  "    catalog-group-templates: [t]\n" TEMPLATE,
		     6, "catalog-group-templates: expected a mapping of GROUP: ID");
	expect_error(ZONE "    catalog-role: consumer\n    catalog-template: t\n"
			  "    catalog-group-templates: {a: t, a: t}\n" TEMPLATE,
		     6, "group \"a\" is given twice");
	expect_error(ZONE "    catalog-role: consumer\n    catalog-template: t\n"
			  "    catalog-group-templates: {a: x}\n" TEMPLATE,
		     6, "catalog-group-templates: no template \"x\"");
	expect_error("templates:\n  - id: t\n    notify: 192.0.2.1 NOKEY\n", 2,
		     "template t: needs primaries");
	expect_error(TEMPLATE "  - id: t\n    primaries: 192.0.2.1 NOKEY\n", 4,
		     "templates: id \"t\" is given twice");
	expect_error("templates:\n  - primaries: 192.0.2.1 NOKEY\n", 2,
		     "templates: each template needs an id");
	expect_error(TEMPLATE "    file: x.zone\n", 4,
		     "templates: \"file\" is not a key a template may have");
	expect_error(TEMPLATE "    catalog-role: consumer\n", 4,
		     "templates: \"catalog-role\" is not a key a template may have");
	expect_error(TEMPLATE "    primaries: \"192.0.2.1 missing\"\n", 4,
		     "no key called \"missing\"");
	expect_error("templates: t\n", 1, "templates: expected a list of {id, zone keys}");
	expect_error(TEMPLATE "templates: []\n", 4, "templates is given twice");
}

/*
 * A copy owns its templates and catalogs and compares the same; a
 * consumer whose group maps to another template does not.
 */
static void test_templates_copy(void)
{
	conf_t a, b, copy;
	CU_ASSERT_EQUAL_FATAL(unit_conf_text(&a, good, strlen(good)), 0);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&copy, &a), 0);
	CU_ASSERT_EQUAL_FATAL(copy.template_count, 2);
	CU_ASSERT_PTR_NOT_EQUAL(copy.templates, a.templates);
	CU_ASSERT_PTR_NOT_EQUAL(copy.templates[1].id, a.templates[1].id);
	CU_ASSERT_PTR_NOT_EQUAL(copy.templates[1].xfr.primaries.entries,
				a.templates[1].xfr.primaries.entries);
	/* the zone is shared, templates and all, until the copy changes it */
	CU_ASSERT_PTR_EQUAL(conf_zone_xfr(&copy, 0)->catalog, conf_zone_xfr(&a, 0)->catalog);
	conf_zone_xfr_t *own = conf_zone_xfr_mut(&copy, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(own);
	CU_ASSERT_PTR_NOT_EQUAL(own->catalog, conf_zone_xfr(&a, 0)->catalog);
	CU_ASSERT(conf_zone_same_settings(&a, 0, &copy, 0));
	CU_ASSERT(conf_zone_same_settings(&a, 1, &copy, 1));
	static const char other[] = CATALOG_CONF("plain");
	CU_ASSERT_EQUAL_FATAL(unit_conf_text(&b, other, strlen(other)), 0);
	CU_ASSERT_FALSE(conf_zone_same_settings(&a, 0, &b, 0));
	CU_ASSERT(conf_zone_same_settings(&a, 1, &b, 1));
	conf_clear(&copy);
	conf_clear(&b);
	conf_clear(&a);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_templates_good),
		UNIT_TEST(test_templates_errors),
		UNIT_TEST(test_templates_copy),
		UNIT_END,
	};
	return unit_run(argc, argv, "conf_catalog", tests);
}
