/* Unit tests for server/conf.c: the option table, YAML loading with lines, the command line. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/conf.h"
#include "server/log.h"
#include "tests/unit/man.h"
#include "unit.h"

static char tmpdir[] = "/tmp/shoal-test-conf.XXXXXX";

/* Write text to a file in tmpdir and return its path (static buffer). */
static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_defaults(void)
{
	conf_t c;
	CU_ASSERT_EQUAL(conf_init(&c), 0);
	CU_ASSERT_EQUAL(c.listen_count, 2);
	CU_ASSERT_STRING_EQUAL(c.listen[0].text, "0.0.0.0@53");
	CU_ASSERT_STRING_EQUAL(c.listen[1].text, "::@53");
	CU_ASSERT(c.threads >= 1);
	CU_ASSERT_EQUAL(c.edns_size, 1232);
	CU_ASSERT_EQUAL(c.socket_mode, SOCKET_MODE_REUSEPORT);
	CU_ASSERT(c.nsid_thread);
	CU_ASSERT_EQUAL(c.tcp.max_connections, 256);
	CU_ASSERT_EQUAL(c.reload_timeout, 300);
	CU_ASSERT_EQUAL(c.max_zone_file_mib, 1024);
	CU_ASSERT_EQUAL(c.max_zone_includes, 256);
	CU_ASSERT_PTR_NULL(c.control); /* off until asked for */
	CU_ASSERT_PTR_NULL(c.pid_file);
	CU_ASSERT_PTR_NULL(c.zones_dir); /* the file's folder */
	conf_clear(&c);
}

static void test_listen_parse(void)
{
	listen_addr_t a;
	CU_ASSERT_EQUAL(conf_parse_listen("127.0.0.1@5353", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.text, "127.0.0.1@5353");
	CU_ASSERT_EQUAL(conf_parse_listen("::1@53", &a), 0);
	CU_ASSERT_EQUAL(a.addr.ss_family, AF_INET6);
	CU_ASSERT_EQUAL(conf_parse_listen("[::1]@8053", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.text, "::1@8053");
	CU_ASSERT_EQUAL(conf_parse_listen("10.0.0.1", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.text, "10.0.0.1@53");
	CU_ASSERT_EQUAL(conf_parse_listen("10.0.0.1@0", &a), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(conf_parse_listen("10.0.0.1@65536", &a), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(conf_parse_listen("10.0.0.1@", &a), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(conf_parse_listen("host@53", &a), SHOAL_EINVAL);
	CU_ASSERT_EQUAL(conf_parse_listen("@53", &a), SHOAL_EINVAL);
}

static void test_yaml_good(void)
{
	char zone[300], text[1024], err[512] = "";
	snprintf(zone, sizeof(zone), "%s", write_file("z.zone", "; empty\n"));
	snprintf(text, sizeof(text),
		 "listen: [127.0.0.1@5353, \"::1@5353\"]\nthreads: 3\nsocket-mode: shared\n"
		 "nsid: ns1\nnsid-thread: no\nedns-size: 1400\ntcp-max-output: 70000\n"
		 "log-level: debug\nzones:\n  - name: example.com\n    file: %s\n",
		 zone);
	const char *path = write_file("good.conf", text);
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(c.listen_count, 2);
	CU_ASSERT_EQUAL(c.threads, 3);
	CU_ASSERT_EQUAL(c.socket_mode, SOCKET_MODE_SHARED);
	CU_ASSERT_STRING_EQUAL(c.nsid, "ns1");
	CU_ASSERT(!c.nsid_thread);
	CU_ASSERT_EQUAL(c.edns_size, 1400);
	CU_ASSERT_EQUAL(c.tcp.max_output, 70000);
	CU_ASSERT_EQUAL(c.log_level, LOG_LEVEL_DEBUG);
	CU_ASSERT_EQUAL_FATAL(c.zone_count, 1);
	CU_ASSERT_STRING_EQUAL(c.zones[0].name, "example.com");
	CU_ASSERT_STRING_EQUAL(c.zones[0].file, zone);
	conf_clear(&c);
}

/* Load text as FOLDER/shoald.conf; the first zone's file is want, its path after zones-dir. */
static void expect_zone_file(const char *folder, const char *text, const char *want)
{
	char conf_name[128], err[512] = "";
	snprintf(conf_name, sizeof(conf_name), "%s/shoald.conf", folder);
	const char *path = write_file(conf_name, text);
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(c.zone_count, 1);
	CU_ASSERT_STRING_EQUAL(c.zones[0].file, want);
	if (strcmp(c.zones[0].file, want))
		fprintf(stderr, "\n  zone file %s, want %s (%s)\n", c.zones[0].file, want, err);
	conf_clear(&c);
}

/* Relative zone paths start from zones-dir, by default the configuration file's folder. */
static void test_zones_dir(void)
{
	char dir[300], zones[320], want[400], text[1024];
	snprintf(dir, sizeof(dir), "%s/etc", tmpdir);
	snprintf(zones, sizeof(zones), "%s/zones", dir);
	CU_ASSERT_FATAL(mkdir(dir, 0755) == 0 && mkdir(zones, 0755) == 0);
	write_file("etc/zones/a.zone", "; empty\n");
	snprintf(want, sizeof(want), "%s/a.zone", zones);
	/* zones-dir after the zones that need it, and relative to the file's folder */
	expect_zone_file("etc", "zones:\n  - name: a.example\n    file: a.zone\nzones-dir: zones\n",
			 want);
	/* none: the file's folder */
	expect_zone_file("etc", "zones:\n  - name: a.example\n    file: zones/a.zone\n", want);
	/* an absolute zones-dir as it is */
	snprintf(text, sizeof(text),
		 "zones-dir: %s\nzones:\n  - { name: a.example, file: a.zone }\n", zones);
	expect_zone_file("etc", text, want);
	/* an absolute zone file path ignores it */
	snprintf(text, sizeof(text),
		 "zones-dir: /nowhere\nzones:\n  - { name: a.example, file: %s }\n", want);
	expect_zone_file("etc", text, want);
	/* a file missing there names the path it was looked for at */
	conf_t c;
	char err[512] = "", missing[400];
	conf_init(&c);
	const char *path =
		write_file("etc/bad.conf",
			   "zones-dir: zones\nzones:\n  - { name: b.example, file: b.zone }\n");
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), SHOAL_ECONFIG);
	snprintf(missing, sizeof(missing), ":3: zone b.example: cannot read file %s/b.zone", zones);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, missing));
	conf_clear(&c);
}

/* "zones:" with its items commented out, as the installed file has it: no zones. */
static void test_zones_empty(void)
{
	char err[512] = "";
	const char *path = write_file("empty.conf", "log-level: info\nzones:\n#  - name: x\n");
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.zone_count, 0);
	conf_clear(&c);
}

/* Load text and expect an error that ends with "FILE:LINE: ..." containing want. */
static void expect_error(const char *text, int line, const char *want)
{
	char err[512] = "", prefix[300];
	const char *path = write_file("bad.conf", text);
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), SHOAL_ECONFIG);
	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	CU_ASSERT_NSTRING_EQUAL(err, prefix, strlen(prefix));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, want))
		fprintf(stderr, "\n  got: %s\n  want: %s...%s\n", err, prefix, want);
	conf_clear(&c);
}

static void test_yaml_errors(void)
{
	expect_error("threads: 2\nbogus: 1\n", 2, "unknown key \"bogus\"");
	expect_error("threads: 0\n", 1, "threads: \"0\" is not a number from 1 to 256");
	expect_error("threads: -1\n", 1, "is not a number");
	expect_error("edns-size: 100\n", 1, "edns-size");
	expect_error("\n\nnsid-thread: maybe\n", 3, "is not yes or no");
	expect_error("listen:\n  - 1.2.3.4@53\n  - nowhere@53\n", 3,
		     "\"nowhere@53\" is not ADDR@PORT");
	expect_error("log-level: loud\n", 1, "log-level");
	expect_error("zones:\n  - name: a.example\n    file: /nonexistent\n", 3,
		     "cannot read file");
	expect_error("zones:\n  - name: a.example\n", 2, "needs both name and file");
	expect_error("threads: [1, 2]\n", 1, "expected a single value");
	expect_error("zones: example.com\n", 1, "zones: expected a list");
	expect_error("zones: \"\"\n", 1, "zones: expected a list");
	expect_error("- a\n- b\n", 1, "expected a mapping");
	expect_error("threads: 1\n  bad indent: 2\n", 2, "");
	expect_error("nsid: a\nthreads: 1\nnsid: b\n", 3, "nsid is given twice");
}

/* metrics: [ADDR@]PORT, a port alone on loopback; off by default; no port is an error. */
static void test_metrics_address(void)
{
	char err[512] = "";
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(c.metrics.addr_len, 0);
	CU_ASSERT_EQUAL(
		conf_load_file(&c, write_file("m.conf", "metrics: 9153\n"), err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(c.metrics.text, "127.0.0.1@9153");
	CU_ASSERT_EQUAL(c.metrics.addr.ss_family, AF_INET);
	conf_clear(&c);
	char *argv[] = { "shoald", "--metrics", "[::1]@9100", NULL };
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_parse_args(&c, 3, argv, stdout, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(c.metrics.text, "::1@9100");
	conf_clear(&c);
	expect_error("metrics: 192.0.2.1\n", 1, "metrics: \"192.0.2.1\" is not [ADDR@]PORT");
	expect_error("metrics: 0\n", 1, "is not [ADDR@]PORT");
	expect_error("metrics: here@9100\n", 1, "is not [ADDR@]PORT");
}

static void test_args(void)
{
	char err[512] = "";
	const char *zone = write_file("a.zone", "; empty\n");
	char zarg[300];
	snprintf(zarg, sizeof(zarg), "example.org=%s", zone);
	char *argv[] = { "shoald",    "--listen", "127.0.0.1@5300", "--listen=::1@5300",
			 "--threads", "2",        "--zone",         zarg,
			 "--nsid",    "x",        "--check",        "--socket-mode",
			 "shared",    NULL };
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_parse_args(&c, 13, argv, stdout, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.listen_count, 2);
	CU_ASSERT_STRING_EQUAL(c.listen[1].text, "::1@5300");
	CU_ASSERT_EQUAL(c.threads, 2);
	CU_ASSERT_EQUAL(c.zone_count, 1);
	CU_ASSERT(c.check);
	CU_ASSERT_EQUAL(c.socket_mode, SOCKET_MODE_SHARED);
	conf_clear(&c);

	char *bad[] = { "shoald", "--threads", NULL };
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_parse_args(&c, 2, bad, stdout, err, sizeof(err)), SHOAL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs a value"));
	conf_clear(&c);
	char *bad2[] = { "shoald", "--zone", "example.org", NULL };
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_parse_args(&c, 3, bad2, stdout, err, sizeof(err)), SHOAL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "NAME=PATH"));
	conf_clear(&c);
}

/*
 * man/shoald.conf.5 documents exactly the options of the table (each as
 * ".TP" then ".B name"), and each entry's paragraph states the default.
 */
static void test_man_page(void)
{
	char path[4096];
	FILE *f = fopen(unit_src_path(path, sizeof(path), "man/shoald.conf.5.in"), "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char line[512], names[64][64], paras[64][2048];
	size_t n = 0;
	bool after_tp = false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, ".SH EXAMPLE"))
			break;
		if (after_tp && !strncmp(line, ".B ", 3) && n < 64) {
			snprintf(names[n], sizeof(names[n]), "%.63s", line + 3);
			paras[n][0] = '\0';
			n++;
		} else if (n > 0 && strlen(paras[n - 1]) + strlen(line) + 2 < sizeof(paras[0])) {
			strcat(paras[n - 1], line);
			strcat(paras[n - 1], " ");
		}
		after_tp = !strcmp(line, ".TP");
	}
	fclose(f);
	CU_ASSERT_EQUAL(n, conf_option_count);
	for (size_t i = 0; i < conf_option_count; i++) {
		const conf_option_t *o = &conf_options[i];
		size_t j = 0;
		while (j < n && strcmp(names[j], o->name))
			j++;
		CU_ASSERT(j < n);
		if (j == n) {
			fprintf(stderr, "\n  %s is not in shoald.conf(5)\n", o->name);
			continue;
		}
		char def[128];
		snprintf(def, sizeof(def), "Default: %s", o->def);
		CU_ASSERT_PTR_NOT_NULL(strstr(paras[j], def));
		if (!strstr(paras[j], def))
			fprintf(stderr, "\n  %s: shoald.conf(5) does not say \"%s\"\n", o->name,
				def);
	}
	for (size_t j = 0; j < n; j++) {
		size_t i = 0;
		while (i < conf_option_count && strcmp(names[j], conf_options[i].name))
			i++;
		CU_ASSERT(i < conf_option_count);
	}
}

/*
 * OPTIONS in man/shoald.8 has one .TP paragraph per option of --help,
 * headed as --help heads it ("-c, --config FILE", "--listen ADDR@PORT"),
 * and no other paragraph: two options joined into one paragraph, or one
 * left out, fail here.
 */
static void test_man_page_shoald(void)
{
	char heads[MAN_HEADS_MAX][MAN_HEAD_LEN];
	int n = man_heads("shoald.8.in", "OPTIONS", heads);
	CU_ASSERT_FATAL(n >= 0);
	conf_help_entry_t e;
	size_t count = 0;
	for (; conf_help_entry(count, &e); count++) {
		CU_ASSERT(man_find(heads, n, e.head) >= 0);
		if (man_find(heads, n, e.head) < 0)
			fprintf(stderr, "\n  \"%s\" is not a paragraph of OPTIONS in shoald(8)\n",
				e.head);
	}
	CU_ASSERT_EQUAL((size_t)n, count);
	for (int i = 0; i < n; i++) {
		size_t k = 0;
		while (conf_help_entry(k, &e) && strcmp(e.head, heads[i]))
			k++;
		CU_ASSERT(k < count);
		if (k == count)
			fprintf(stderr, "\n  shoald(8) has \"%s\", which --help does not\n",
				heads[i]);
	}
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_defaults),
		UNIT_TEST(test_listen_parse),
		UNIT_TEST(test_yaml_good),
		UNIT_TEST(test_yaml_errors),
		UNIT_TEST(test_zones_dir),
		UNIT_TEST(test_zones_empty),
		UNIT_TEST(test_args),
		UNIT_TEST(test_metrics_address),
		UNIT_TEST(test_man_page),
		UNIT_TEST(test_man_page_shoald),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "conf", tests);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 99;
	return rc;
}
