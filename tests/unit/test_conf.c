/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/conf/conf.c: the option table, YAML loading with lines, the command line.
 */
#include "config.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/log.h"
#include "server/conf/conf.h"
#include "tests/unit/alloc_guard.h"
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
	/*
	 * IPv4-mapped (RFC 4291 2.5.5.2): the IPv4 address, as everywhere else;
	 * kept IPv6, the socket (IPV6_V6ONLY) refused to bind it (EINVAL).
	 */
	CU_ASSERT_EQUAL(conf_parse_listen("[::ffff:127.0.0.1]@5353", &a), 0);
	CU_ASSERT_EQUAL(a.addr.ss_family, AF_INET);
	CU_ASSERT_EQUAL(a.addr_len, sizeof(struct sockaddr_in));
	CU_ASSERT_STRING_EQUAL(a.text, "127.0.0.1@5353");
	/* the text is the address as the kernel has it, whatever was written */
	CU_ASSERT_EQUAL(conf_parse_listen("0:0:0:0:0:0:0:1@53", &a), 0);
	CU_ASSERT_STRING_EQUAL(a.text, "::1@53");
}

static void test_yaml_good(void)
{
	char zone[300], text[1024], err[512] = "";
	snprintf(zone, sizeof(zone), "%s", write_file("z.zone", "; empty\n"));
	snprintf(text, sizeof(text),
		 "listen: [127.0.0.1@5353, \"::1@5353\"]\nthreads: 3\nsocket-mode: shared\n"
		 "nsid: ns1\nnsid-thread: no\nedns-size: 1400\ntcp-max-output: 70000\n"
		 "log-level: debug\nzones:\n  - name: Example.com\n    file: %s\n",
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
	/* one form, as the logs and zone-status give it */
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&c, 0)->name, "example.com.");
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&c, 0)->file, zone);
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
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&c, 0)->file, want);
	if (strcmp(conf_zone_spec(&c, 0)->file, want))
		fprintf(stderr, "\n  zone file %s, want %s (%s)\n", conf_zone_spec(&c, 0)->file,
			want, err);
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

/*
 * A secondary's relative file lies in state-dir (shoald writes it there; under
 * systemd /etc is read-only), given before or after it, or in the default's;
 * a primary's in zones-dir as ever.
 */
static void test_secondary_file_in_state_dir(void)
{
	char want[400], text[1024];
	snprintf(want, sizeof(want), "%s/sec", tmpdir);
	CU_ASSERT_FATAL(mkdir(want, 0755) == 0);
	snprintf(want, sizeof(want), "%s/sec/state/s.zone", tmpdir);
	const char *sec =
		"  - name: s.example\n    file: s.zone\n    primaries: [192.0.2.1 NOKEY]\n";
	snprintf(text, sizeof(text), "zones-dir: zones\nzones:\n%sstate-dir: state\n", sec);
	expect_zone_file("sec", text, want);
	snprintf(text, sizeof(text), "state-dir: %s/sec/state\nzones:\n%s", tmpdir, sec);
	expect_zone_file("sec", text, want);
	snprintf(text, sizeof(text), "zones:\n%s", sec);
	expect_zone_file("sec", text, CONF_STATE_DIR_DEFAULT "/s.zone");
	/* and the option itself, absolute */
	conf_t c;
	char err[512] = "";
	conf_init(&c);
	const char *path = write_file("sec/st.conf", "state-dir: state\n");
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/sec/state", tmpdir);
	CU_ASSERT_STRING_EQUAL(c.state_dir ? c.state_dir : "", want);
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

/*
 * The transfer keys: TSIG keys read and set up, each zone's lists with
 * their keys resolved whichever comes first in the file, a secondary's
 * missing file accepted; and what stops start-up, with its line.
 */
static void test_yaml_xfr(void)
{
	char zone[300], secret[300], text[2048], err[512] = "";
	snprintf(zone, sizeof(zone), "%s", write_file("x.zone", "; empty\n"));
	snprintf(secret, sizeof(secret), "%s",
		 write_file("k.secret", "hVXazZpI2xIG1nyPHmlJNC8tV89c4sQXRlcOGNTYPG0=\n"));
	CU_ASSERT_EQUAL(chmod(secret, 0600), 0);
	snprintf(text, sizeof(text),
		 "zones:\n"
		 "  - name: example.com\n    file: %s\n"
		 "    provide-xfr: [\"127.0.0.0/8 k1\", \"::1 NOKEY\"]\n"
		 "    notify: \"127.0.0.1@5400 k2\"\n"
		 "    ixfr-journal-size: 0\n"
		 "  - name: example.net\n    file: %s/not-yet.zone\n"
		 "    primaries: [\"127.0.0.1@5300 k1\", \"127.0.0.2 NOKEY\"]\n"
		 "ixfr-journal-size: 4096\n"
		 "keys:\n"
		 "  - name: k1\n    algorithm: hmac-sha256\n"
		 "    secret: \"hVXazZpI2xIG1nyPHmlJNC8tV89c4sQXRlcOGNTYPG0=\"\n"
		 "  - name: k2.\n    algorithm: HMAC-SHA512\n    secret-file: %s\n",
		 zone, tmpdir, secret);
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c, write_file("xfr.conf", text), err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "\n  %s\n", err);
	CU_ASSERT_EQUAL_FATAL(c.key_count, 2);
	CU_ASSERT_EQUAL(c.keys[1].alg, TSIG_HMAC_SHA512);
	CU_ASSERT_EQUAL_FATAL(c.zone_count, 2);
	const conf_zone_xfr_t *a = conf_zone_xfr(&c, 0), *b = conf_zone_xfr(&c, 1);
	CU_ASSERT_EQUAL(a->provide_xfr.count, 2);
	CU_ASSERT_EQUAL(a->provide_xfr.entries[0].key, 0);
	CU_ASSERT_EQUAL(a->provide_xfr.entries[1].key, ACL_NOKEY);
	CU_ASSERT_EQUAL(a->notify.count, 1);
	CU_ASSERT_EQUAL(a->notify.entries[0].key, 1);
	CU_ASSERT_FALSE(conf_zone_spec(&c, 0)->secondary);
	CU_ASSERT_EQUAL(conf_zone_spec(&c, 0)->limits.max_journal, 0);
	CU_ASSERT_EQUAL(b->primaries.count, 2);
	CU_ASSERT(conf_zone_spec(&c, 1)->secondary);
	CU_ASSERT_EQUAL(conf_zone_spec(&c, 1)->limits.max_journal, 4096);
	conf_clear(&c);

	/* a secondary needs no file at all */
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c,
				       write_file("sec.conf", "zones:\n  - name: a.example\n"
							      "    primaries: 192.0.2.1 NOKEY\n"),
				       err, sizeof(err)),
			0);
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&c, 0)->file, "");
	conf_clear(&c);

	/* the secret file must be the owner's alone */
	CU_ASSERT_EQUAL(chmod(secret, 0644), 0);
	conf_init(&c);
	CU_ASSERT_EQUAL(conf_load_file(&c, write_file("xfr.conf", text), err, sizeof(err)),
			SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "may be read or written by others"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "xfr.conf:17: key k2.: secret-file: "));
	conf_clear(&c);

	const char *key = "keys:\n  - name: k\n    algorithm: hmac-sha256\n"
			  "    secret: \"aGVsbG8=\"\n";
	char bad[1024];
	snprintf(bad, sizeof(bad),
		 "%szones:\n  - name: a.example\n    file: %s\n"
		 "    provide-xfr: [\"127.0.0.1 nokey\", \"127.0.0.1 other\"]\n",
		 key, zone);
	expect_error(bad, 8, "provide-xfr: no key called \"other\"");
	snprintf(bad, sizeof(bad),
		 "%szones:\n  - name: a.example\n"
		 "    primaries:\n      - 192.0.2.1 k\n      - ns1.example.net k\n",
		 key);
	expect_error(bad, 9, "\"ns1.example.net\" is not an IPv4 or IPv6 address");
	expect_error(
		"keys:\n  - name: k\n    algorithm: hmac-sha256\n    secret: \"not base64!\"\n", 4,
		"key k: the secret is not base64");
	expect_error("keys:\n  - name: k\n    algorithm: hmac-md5\n    secret: \"aGVsbG8=\"\n", 2,
		     "algorithm \"hmac-md5\" is not supported (hmac-sha1, hmac-sha224");
	snprintf(bad, sizeof(bad),
		 "%s  - name: K.\n    algorithm: hmac-sha512\n"
		 "    secret: \"aGVsbG8=\"\n",
		 key);
	expect_error(bad, 5, "keys: K. is given twice");
	snprintf(bad, sizeof(bad), "zones:\n  - name: a.example\n    file: %s\n    master: x\n",
		 zone);
	expect_error(bad, 4, "unknown key \"master\" (name, file, primaries");
	expect_error("zones:\n  - name: a.example\n    provide-xfr: 10.0.0.0/8 NOKEY\n", 2,
		     "needs both name and file (or primaries)");
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
	/* metrics-allow: a list of networks, none by default (loopback only) */
	conf_init(&c);
	CU_ASSERT_EQUAL(c.metrics_allow.count, 0);
	CU_ASSERT_EQUAL(conf_load_file(&c,
				       write_file("ma.conf", "metrics: 9153\nmetrics-allow:\n"
							     "  - 192.0.2.0/24\n  - 2001:db8::1\n"),
				       err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(c.metrics_allow.count, 2);
	char *more[] = { "shoald", "--metrics-allow", "10.1.2.3", NULL };
	CU_ASSERT_EQUAL(conf_parse_args(&c, 3, more, stdout, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.metrics_allow.count, 3);
	static const uint8_t scraper[4] = { 192, 0, 2, 9 };
	CU_ASSERT(addr_prefix_match(&c.metrics_allow.items[0], scraper, 4));
	conf_clear(&c);
	expect_error("metrics-allow: [192.0.2.0/33]\n", 1,
		     "metrics-allow: \"192.0.2.0/33\" is not ADDR/BITS");
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
 * Rate limiting and cookies: a list of prefixes (or one), a secret in hex,
 * the per-kind rates following rate-limit unless set; a bad prefix or
 * secret names its line, and the secret itself is not repeated.
 */
static void test_rate_limit_and_cookies(void)
{
	char err[512] = "";
	const char *path =
		write_file("rrl.conf", "rate-limit: 20\n"
				       "rate-limit-nxdomain: 5\n"
				       "rate-limit-exempt:\n"
				       "  - 192.0.2.0/24\n"
				       "  - 2001:db8::1\n"
				       "cookie-secret: 000102030405060708090a0b0c0d0e0F\n"
				       "cookie-require: yes\n"
				       "tcp-max-per-address: 4\n");
	conf_t c;
	conf_init(&c);
	CU_ASSERT_EQUAL(c.rrl.rate, 0); /* off unless asked for */
	CU_ASSERT_EQUAL(c.rrl.slip, 2);
	CU_ASSERT_EQUAL(c.rrl.ipv4_prefix, 24);
	CU_ASSERT_EQUAL(c.rrl.ipv6_prefix, 56);
	CU_ASSERT_EQUAL(c.rrl.size, 1u << 20);
	CU_ASSERT_EQUAL(c.tcp.max_per_address, 32);
	CU_ASSERT_FALSE(c.cookie_secret.set);
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.rrl.rate, 20);
	CU_ASSERT_EQUAL(c.rrl.nxdomain_rate, 5);
	CU_ASSERT_EQUAL(c.rrl.error_rate, RRL_RATE_AS_RATE);
	CU_ASSERT_EQUAL(c.rrl.exempt.count, 2);
	CU_ASSERT_EQUAL(c.rrl.exempt.items[0].bits, 24);
	CU_ASSERT_EQUAL(c.rrl.exempt.items[1].bits, 128);
	CU_ASSERT(c.cookie_secret.set);
	CU_ASSERT_EQUAL(c.cookie_secret.value[15], 0x0f);
	CU_ASSERT_FALSE(c.cookie_secret_staging.set);
	CU_ASSERT(c.cookie_require);
	CU_ASSERT_EQUAL(c.tcp.max_per_address, 4);
	/* the command line adds prefixes; a secret is not taken there */
	char *args[] = { "shoald", "--rate-limit-exempt", "198.51.100.7", NULL };
	CU_ASSERT_EQUAL(conf_parse_args(&c, 3, args, stdout, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.rrl.exempt.count, 3);
	char *secret_args[] = { "shoald", "--cookie-secret", "000102030405060708090a0b0c0d0e0f",
				NULL };
	CU_ASSERT_EQUAL(conf_parse_args(&c, 3, secret_args, stdout, err, sizeof(err)),
			SHOAL_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown option \"--cookie-secret\""));
	conf_clear(&c);

	/* one prefix need not be a list */
	conf_init(&c);
	path = write_file("rrl1.conf", "rate-limit-exempt: 10.0.0.0/8\n");
	CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.rrl.exempt.count, 1);
	conf_clear(&c);

	static const struct {
		const char *text, *error;
	} bad[] = {
		{ "threads: 1\nrate-limit-exempt:\n  - 192.0.2.0/33\n",
		  ":3: rate-limit-exempt: \"192.0.2.0/33\" is not ADDR/BITS" },
		{ "rate-limit-exempt: [example.com]\n", ":1: rate-limit-exempt: \"example.com\"" },
		{ "rate-limit-exempt:\n  - [1.2.3.4]\n",
		  ":2: rate-limit-exempt: expected ADDR/BITS" },
		{ "\ncookie-secret: 0011\n", ":2: cookie-secret: not 32 hex digits" },
		{ "cookie-secret-staging: 000102030405060708090a0b0c0d0e0g\n",
		  ":1: cookie-secret-staging: not 32 hex digits" },
		{ "rate-limit: 1000001\n", ":1: rate-limit: \"1000001\" is not a number from 0" },
		{ "rate-limit-slip: 11\n", ":1: rate-limit-slip:" },
		{ "rate-limit-ipv6-prefix: 129\n", ":1: rate-limit-ipv6-prefix:" },
		{ "rate-limit-size: 100\n", ":1: rate-limit-size:" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		conf_init(&c);
		path = write_file("bad-rrl.conf", bad[i].text);
		CU_ASSERT_EQUAL(conf_load_file(&c, path, err, sizeof(err)), SHOAL_ECONFIG);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].error));
		if (!strstr(err, bad[i].error))
			fprintf(stderr, "\n  got \"%s\", want \"%s\"\n", err, bad[i].error);
		CU_ASSERT_PTR_NULL(strstr(err, "0a0b0c"));
		conf_clear(&c);
	}
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
	static char names[128][64], paras[128][2048];
	char line[512];
	size_t n = 0;
	bool after_tp = false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, ".SH EXAMPLE") || !strcmp(line, ".SH ZONES"))
			break;
		if (after_tp && !strncmp(line, ".B ", 3) && n < 128) {
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
		/* the page says which options shoalctl reconfig cannot apply, as the table does */
		bool says = strstr(paras[j], "A change needs a restart") != NULL;
		CU_ASSERT_EQUAL(says, o->restart);
		if (says != o->restart)
			fprintf(stderr, "\n  %s: shoald.conf(5) %s it needs a restart\n", o->name,
				says ? "says" : "does not say");
	}
	for (size_t j = 0; j < n; j++) {
		size_t i = 0;
		while (i < conf_option_count && strcmp(names[j], conf_options[i].name))
			i++;
		CU_ASSERT(i < conf_option_count);
	}
}

/* ZONES in man/shoald.conf.5 has one paragraph per key of a zone's mapping, and no other. */
static void test_man_page_zones(void)
{
	char heads[MAN_HEADS_MAX][MAN_HEAD_LEN];
	int n = man_heads("shoald.conf.5.in", "ZONES", heads);
	CU_ASSERT_FATAL(n >= 0);
	CU_ASSERT_EQUAL((size_t)n, conf_zone_key_count);
	for (size_t i = 0; i < conf_zone_key_count; i++) {
		CU_ASSERT(man_find(heads, n, conf_zone_keys[i].name) >= 0);
		if (man_find(heads, n, conf_zone_keys[i].name) < 0)
			fprintf(stderr, "\n  zone key %s is not in ZONES of shoald.conf(5)\n",
				conf_zone_keys[i].name);
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

/* Load a YAML text into a fresh configuration. */
static void load_text(conf_t *c, const char *name, const char *text)
{
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(conf_init(c), 0);
	int rc = conf_load_file(c, write_file(name, text), err, sizeof(err));
	if (rc)
		fprintf(stderr, "\n  %s\n", err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
}

/* catalog-role (RFC 9432): none, consumer or producer; anything else names its line. */
static void test_catalog_role(void)
{
	conf_t c;
	write_file("cat.zone", "");
	load_text(&c, "cat.conf",
		  "zones:\n  - name: a.test\n    file: cat.zone\n    catalog-role: consumer\n"
		  "    catalog-template: t\n"
		  "  - name: b.test\n    file: cat.zone\n    catalog-role: producer\n"
		  "  - name: c.test\n    file: cat.zone\n    catalog-role: none\n"
		  "  - name: d.test\n    file: cat.zone\n"
		  "templates:\n  - id: t\n    primaries: 192.0.2.1 NOKEY\n");
	CU_ASSERT_EQUAL(conf_zone_xfr(&c, 0)->catalog_role, CONF_CATALOG_CONSUMER);
	CU_ASSERT_EQUAL(conf_zone_xfr(&c, 1)->catalog_role, CONF_CATALOG_PRODUCER);
	CU_ASSERT_EQUAL(conf_zone_xfr(&c, 2)->catalog_role, CONF_CATALOG_NONE);
	CU_ASSERT_EQUAL(conf_zone_xfr(&c, 3)->catalog_role, CONF_CATALOG_NONE);
	conf_clear(&c);
	expect_error("zones:\n  - name: a.test\n    primaries: 192.0.2.1 NOKEY\n"
		     "    catalog-role: member\n",
		     4, "catalog-role: \"member\" is not none, consumer or producer");
}

/*
 * catalog-member-of names a producer catalog (a zone with no file: its
 * own in state-dir); each refusal names the line of the key. A copy owns
 * its own member records.
 */
static void test_catalog_member(void)
{
	conf_t c, copy;
	write_file("m.zone", "");
	load_text(&c, "member.conf",
		  "state-dir: /tmp/shoal-test-state\n"
		  "zones:\n  - name: a.test\n    file: m.zone\n    catalog-member-of: CAT.test\n"
		  "    catalog-group: blue\n"
		  "  - name: cat.test\n    catalog-role: producer\n"
		  "  - name: b.test\n    file: m.zone\n    catalog-member-of: cat.test.\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(conf_zone_xfr(&c, 0)->member);
	CU_ASSERT_STRING_EQUAL(conf_zone_xfr(&c, 0)->member->catalog, "cat.test.");
	CU_ASSERT_STRING_EQUAL(conf_zone_xfr(&c, 0)->member->group, "blue");
	CU_ASSERT_PTR_NULL(conf_zone_xfr(&c, 2)->member->group);
	CU_ASSERT_PTR_NULL(conf_zone_xfr(&c, 1)->member);
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&c, 1)->file,
			       "/tmp/shoal-test-state/catalog-cat.test.zone");
	conf_clear(&c);
	/* a file of its own, relative: in state-dir, where shoald may write */
	load_text(&c, "member-file.conf",
		  "state-dir: /tmp/shoal-test-state\n"
		  "zones:\n  - name: cat.test\n    catalog-role: producer\n    file: mine.zone\n");
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&c, 0)->file, "/tmp/shoal-test-state/mine.zone");
	conf_clear(&c);
	load_text(&c, "member.conf",
		  "state-dir: /tmp/shoal-test-state\n"
		  "zones:\n  - name: a.test\n    file: m.zone\n    catalog-member-of: CAT.test\n"
		  "    catalog-group: blue\n"
		  "  - name: cat.test\n    catalog-role: producer\n"
		  "  - name: b.test\n    file: m.zone\n    catalog-member-of: cat.test.\n");
	CU_ASSERT_FALSE(conf_zone_spec(&c, 1)->secondary);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&copy, &c), 0);
	/* a copy shares the zone, member record and all, until it changes it */
	CU_ASSERT_PTR_EQUAL(conf_zone_xfr(&copy, 0)->member, conf_zone_xfr(&c, 0)->member);
	conf_zone_xfr_t *own = conf_zone_xfr_mut(&copy, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(own);
	CU_ASSERT_PTR_NOT_EQUAL(own->member, conf_zone_xfr(&c, 0)->member);
	CU_ASSERT_STRING_EQUAL(conf_zone_xfr(&copy, 0)->member->group, "blue");
	conf_clear(&copy);
	conf_clear(&c);
	const char *cat = "  - name: cat.test\n    catalog-role: consumer\n    file: m.zone\n"
			  "    catalog-template: t\n"
			  "templates:\n  - id: t\n    primaries: 192.0.2.1 NOKEY\n";
	char bad[512];
	snprintf(bad, sizeof(bad),
		 "zones:\n  - name: a.test\n    file: m.zone\n    catalog-member-of: cat.test\n%s",
		 cat);
	expect_error(bad, 4,
		     "zone a.test.: catalog-member-of: cat.test. is not a zone with "
		     "catalog-role: producer");
	expect_error("zones:\n  - name: a.test\n    file: m.zone\n"
		     "    catalog-member-of: nowhere.test\n",
		     4, "is not a zone with catalog-role: producer");
	expect_error("zones:\n  - name: a.test\n    catalog-role: producer\n"
		     "    catalog-member-of: a.test\n",
		     4, "catalog-member-of names the zone itself");
	expect_error("zones:\n  - name: a.test\n    file: m.zone\n    catalog-group: x\n", 4,
		     "catalog-group without catalog-member-of");
	expect_error("zones:\n  - name: a.test\n    catalog-role: producer\n"
		     "    primaries: 192.0.2.1 NOKEY\n",
		     2, "a producer catalog is made here: no primaries");
}

/*
 * What a reconfig compares: the options that need a restart and differ,
 * by name in table order; zones whose data can have changed; a copy that
 * compares equal and owns its own memory.
 */
static void test_runtime_diff(void)
{
	conf_t a, b, copy;
	const char *files[] = { "a.zone", "a2.zone", "b.zone", "c.zone", "d.zone" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		write_file(files[i], ""); /* the loader checks that each can be read */
	load_text(&a, "diff-a.conf",
		  "listen: 127.0.0.1@5300\nthreads: 2\nmax-records-per-type: 500\n"
		  "keys:\n  - name: k\n    algorithm: hmac-sha256\n"
		  "    secret: c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n"
		  "zones:\n  - name: a.test\n    file: a.zone\n  - name: b.test\n    file: b.zone\n"
		  "    provide-xfr: [ 127.0.0.1 k ]\n  - name: c.test\n    file: c.zone\n");
	load_text(
		&b, "diff-b.conf",
		"listen: [ 127.0.0.1@5300, 127.0.0.1@5301 ]\nthreads: 3\n"
		"max-records-per-type: 500\nreload-timeout: 10\n"
		"zones:\n  - name: C.test.\n    file: c.zone\n  - name: a.test\n    file: a2.zone\n"
		"  - name: d.test\n    file: d.zone\n");
	char names[256];
	CU_ASSERT_EQUAL(conf_restart_changes(&a, &b, names, sizeof(names)), 2);
	CU_ASSERT_STRING_EQUAL(names, "listen, threads"); /* reload-timeout applies at runtime */
	CU_ASSERT_EQUAL(conf_restart_changes(&a, &a, names, sizeof(names)), 0);
	CU_ASSERT_STRING_EQUAL(names, "");
	/* c.test is the same zone (name compared without case and final dot); a.test's file moved
	 */
	CU_ASSERT(conf_zone_same_data(&a, 2, &b, 0));
	CU_ASSERT(!conf_zone_same_data(&a, 0, &b, 1));
	CU_ASSERT(!conf_zone_same_data(&a, 1, &b, 2));
	/* a zone limit changes the data a file gives: not the same */
	conf_zone_spec_mut(&b, 0)->limits.max_records_per_type = 10;
	CU_ASSERT(!conf_zone_same_data(&a, 2, &b, 0));

	CU_ASSERT_EQUAL_FATAL(conf_copy(&copy, &a), 0);
	CU_ASSERT_EQUAL(conf_restart_changes(&a, &copy, names, sizeof(names)), 0);
	CU_ASSERT_EQUAL(copy.zone_count, 3);
	for (size_t i = 0; i < copy.zone_count; i++) {
		CU_ASSERT(conf_zone_same_data(&a, i, &copy, i));
		/* the zones are shared (freed with the last holder), strings and lists alike */
		CU_ASSERT_PTR_EQUAL(conf_zone_spec(&copy, i)->name, conf_zone_spec(&a, i)->name);
	}
	CU_ASSERT_EQUAL(copy.key_count, 1);
	CU_ASSERT_EQUAL(conf_zone_xfr(&copy, 1)->provide_xfr.count, 1);
	CU_ASSERT_PTR_EQUAL(conf_zone_xfr(&copy, 1)->provide_xfr.entries,
			    conf_zone_xfr(&a, 1)->provide_xfr.entries);
	/* until the copy changes one: then it has lists of its own, the same entries */
	const acl_t *own = &conf_zone_xfr_mut(&copy, 1)->provide_xfr;
	CU_ASSERT_PTR_NOT_EQUAL(own->entries, conf_zone_xfr(&a, 1)->provide_xfr.entries);
	CU_ASSERT(conf_zone_same_settings(&a, 1, &copy, 1));
	/* zone-add and zone-remove on the copy leave the original as it was */
	CU_ASSERT_EQUAL(conf_zone_add(&copy, "B.TEST.", "x.zone"), SHOAL_EEXIST);
	CU_ASSERT_EQUAL(conf_zone_add(&copy, "e.test", "e.zone"), 0);
	CU_ASSERT_EQUAL(conf_zone_spec(&copy, 3)->limits.max_records_per_type, 500);
	CU_ASSERT(!conf_zone_spec(&copy, 3)->secondary);
	conf_zone_remove(&copy, 1);
	CU_ASSERT_EQUAL(copy.zone_count, 3);
	CU_ASSERT_EQUAL(conf_zone_index(&copy, "b.test"), -1);
	CU_ASSERT_EQUAL(conf_zone_index(&copy, "c.test"), 1);
	CU_ASSERT_EQUAL(conf_zone_xfr(&copy, 1)->provide_xfr.count,
			0); /* c.test's lists moved with it */
	CU_ASSERT_EQUAL(a.zone_count, 3);
	CU_ASSERT_EQUAL(conf_zone_xfr(&a, 1)->provide_xfr.count, 1);
	conf_clear(&copy);
	conf_clear(&a);
	conf_clear(&b);
}

/*
 * A secondary zone kept alike across a reconfig: the same primaries in the
 * same order with the same keys by content (not by index); a NOTIFY target
 * found with its key by content. The transfer options and the timers'
 * bounds are not the zone's: a change of them keeps it alike (issue 30: a
 * reconfig restarted every secondary's refresh).
 */
static void test_same_primaries(void)
{
	conf_t a, b;
	const char *key = "    secret: c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n";
	char text[1024];
	snprintf(text, sizeof(text),
		 "keys:\n  - name: k\n    algorithm: hmac-sha256\n%s"
		 "zones:\n  - name: s.test\n    primaries: [ 192.0.2.1@53 k, 192.0.2.2@53 NOKEY ]\n"
		 "    notify: [ 192.0.2.9@53 k ]\n  - name: t.test\n"
		 "    primaries: [ 192.0.2.1@53 k ]\n",
		 key);
	load_text(&a, "same-a.conf", text);
	/* another key first: k's index moves, its secret does not */
	snprintf(text, sizeof(text),
		 "keys:\n  - name: j\n    algorithm: hmac-sha256\n%s"
		 "  - name: k\n    algorithm: hmac-sha256\n%s"
		 "zones:\n  - name: t.test\n    primaries: [ 192.0.2.2@53 NOKEY, 192.0.2.1@53 k ]\n"
		 "  - name: s.test\n    primaries: [ 192.0.2.1@53 k, 192.0.2.2@53 NOKEY ]\n"
		 "    notify: [ 192.0.2.9@53 k ]\n",
		 key, key);
	load_text(&b, "same-b.conf", text);
	CU_ASSERT(conf_zone_same_primaries(&a, 0, &b, 1));
	CU_ASSERT(!conf_zone_same_primaries(&a, 1, &b, 0)); /* another primary added first */
	size_t at = 99;
	CU_ASSERT(conf_acl_entry_find(&a, &conf_zone_xfr(&a, 0)->notify.entries[0], &b,
				      &conf_zone_xfr(&b, 1)->notify, &at));
	CU_ASSERT_EQUAL(at, 0);
	/* the key's secret changed: not alike */
	b.keys[1].keyed.sha256.inner.state[0] ^= 1;
	CU_ASSERT(!conf_zone_same_primaries(&a, 0, &b, 1));
	CU_ASSERT(!conf_acl_entry_find(&a, &conf_zone_xfr(&a, 0)->notify.entries[0], &b,
				       &conf_zone_xfr(&b, 1)->notify, &at));
	b.keys[1].keyed.sha256.inner.state[0] ^= 1;
	/* a transfer option or a timer's bound changed: alike all the same */
	b.xfr_timeout++;
	b.min_refresh_time++;
	CU_ASSERT(conf_zone_same_primaries(&a, 0, &b, 1));
	conf_clear(&a);
	conf_clear(&b);
}

/*
 * TLS: listen-tls on port 853 unless told (the command line replaces the
 * file's list, as for listen); the entries' "tls" words, with the primary's
 * port 853 by default and a client's pin or CA for mutual TLS; a zone's
 * tls-pin and tls-hostname; a copy keeps them, and a change of them or of
 * "tls" makes the primaries differ. What is refused, with its line.
 */
static void test_tls_options(void)
{
	static const char pin[] = "h+GEhW/K8cy1BN3I1y2WliBBbkqqPJVHHl/qPSo+Qtw=";
	char text[1024];
	snprintf(text, sizeof(text),
		 "listen-tls: [ 127.0.0.1, \"[::1]@8853\" ]\n"
		 "tls-ca-file: /etc/ssl/ca.pem\n"
		 "zones:\n  - name: s.test\n"
		 "    primaries: [ 192.0.2.1 NOKEY tls, 192.0.2.2@53 NOKEY ]\n"
		 "    tls-pin: %s\n"
		 "    provide-xfr: [ 10.0.0.0/8 NOKEY tls, 10.1.0.0/16 NOKEY TLS ca, "
		 "10.2.0.1 NOKEY tls %s ]\n"
		 "  - name: t.test\n"
		 "    primaries: [ 192.0.2.1@8853 NOKEY tls ]\n"
		 "    tls-hostname: primary.example\n",
		 pin, pin);
	conf_t a, b, copy;
	load_text(&a, "tls.conf", text);
	CU_ASSERT_EQUAL_FATAL(a.listen_tls_count, 2);
	CU_ASSERT_STRING_EQUAL(a.listen_tls[0].text, "127.0.0.1@853");
	CU_ASSERT_STRING_EQUAL(a.listen_tls[1].text, "::1@8853");
	CU_ASSERT_EQUAL(a.listen_count, 2); /* listen keeps its default */
	CU_ASSERT_STRING_EQUAL(a.tls_ca_file, "/etc/ssl/ca.pem");
	const conf_zone_xfr_t *s = conf_zone_xfr(&a, 0), *t = conf_zone_xfr(&a, 1);
	CU_ASSERT_EQUAL(s->primaries.entries[0].tls, ACL_TLS);
	CU_ASSERT_STRING_EQUAL(s->primaries.entries[0].text, "192.0.2.1@853");
	CU_ASSERT_EQUAL(addr_port((const struct sockaddr *)&s->primaries.entries[0].addr), 853);
	CU_ASSERT_EQUAL(s->primaries.entries[1].tls, ACL_TLS_NONE);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->primaries_tls);
	CU_ASSERT_EQUAL(s->primaries_tls->mode, TLS_AUTH_PIN);
	CU_ASSERT_EQUAL(s->primaries_tls->pin_count, 1);
	CU_ASSERT_EQUAL(s->provide_xfr.entries[0].tls, ACL_TLS);
	CU_ASSERT_EQUAL(s->provide_xfr.entries[1].tls, ACL_TLS_CA);
	CU_ASSERT_EQUAL(s->provide_xfr.entries[2].tls, ACL_TLS_PIN);
	CU_ASSERT_EQUAL(
		memcmp(s->provide_xfr.entries[2].pin, s->primaries_tls->pins[0], TLS_PIN_LEN), 0);
	CU_ASSERT_EQUAL(t->primaries_tls->mode, TLS_AUTH_HOSTNAME);
	CU_ASSERT_STRING_EQUAL(t->primaries_tls->hostname, "primary.example");
	CU_ASSERT(conf_tls_mutual(&a));
	CU_ASSERT(conf_tls_hostnames(&a));

	CU_ASSERT_EQUAL_FATAL(conf_copy(&copy, &a), 0);
	CU_ASSERT(conf_zone_same_primaries(&a, 0, &copy, 0));
	CU_ASSERT_PTR_EQUAL(conf_zone_xfr(&copy, 0)->primaries_tls, s->primaries_tls);
	/* changed in the copy: a copy of its own, the original's pin as it was */
	CU_ASSERT_PTR_NOT_EQUAL(conf_zone_xfr_mut(&copy, 0)->primaries_tls, s->primaries_tls);
	conf_zone_xfr_mut(&copy, 0)->primaries_tls->pins[0][0] ^= 1;
	CU_ASSERT(!conf_zone_same_primaries(&a, 0, &copy, 0));
	conf_clear(&copy);
	/* the same primaries without "tls": not the same */
	load_text(&b, "tls-b.conf",
		  "zones:\n  - name: t.test\n    primaries: [ 192.0.2.1@8853 NOKEY ]\n");
	CU_ASSERT(!conf_zone_same_primaries(&a, 1, &b, 0));
	CU_ASSERT(!conf_tls_mutual(&b));
	char names[256];
	CU_ASSERT_EQUAL(conf_restart_changes(&a, &b, names, sizeof(names)), 1);
	CU_ASSERT_STRING_EQUAL(names, "listen-tls");
	conf_clear(&b);
	conf_clear(&a);

	/* the command line's --listen-tls replaces the file's list */
	char err[512] = "";
	const char *path = write_file("tls-cli.conf", "listen-tls: 127.0.0.1@9853\n");
	char *argv[] = { "shoald", "-c", (char *)path, "--listen-tls", "127.0.0.2", NULL };
	conf_init(&a);
	CU_ASSERT_EQUAL(conf_parse_args(&a, 5, argv, stdout, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(a.listen_tls_count, 1);
	CU_ASSERT_STRING_EQUAL(a.listen_tls[0].text, "127.0.0.2@853");
	conf_clear(&a);

	expect_error("zones:\n  - name: a.example\n    primaries: [ 192.0.2.1 NOKEY tls ]\n"
		     "    notify: [ 192.0.2.9 NOKEY tls ]\n",
		     4, "notify: \"tls\" is for provide-xfr and primaries only");
	expect_error("zones:\n  - name: a.example\n    primaries: [ 192.0.2.1 NOKEY tls x ]\n", 3,
		     "checked by the zone's tls-pin or tls-hostname");
	expect_error("zones:\n  - name: a.example\n    primaries: [ 192.0.2.1 NOKEY ssl ]\n", 3,
		     "only \"tls\" may follow it");
	expect_error("zones:\n  - name: a.example\n    primaries: [ 192.0.2.1 NOKEY ]\n"
		     "    provide-xfr: 10.0.0.1 NOKEY tls abc\n",
		     4, "\"ca\" or a client's SPKI pin");
	expect_error("zones:\n  - name: a.example\n    primaries: [ 192.0.2.1 NOKEY tls ]\n"
		     "    tls-pin: [ abc ]\n",
		     4, "tls-pin: \"abc\" is not an SPKI pin");
	expect_error("zones:\n  - name: a.example\n    primaries: [ 192.0.2.1 NOKEY tls ]\n"
		     "    tls-hostname: a.example\n    tls-pin: abc\n",
		     5, "tls-pin or tls-hostname, not both");
	expect_error("zones:\n  - name: a.example\n    primaries: [ 192.0.2.1 NOKEY ]\n"
		     "    tls-hostname: a.example\n",
		     2, "and none is");
}

/* How many zones of c its name index finds at their index (all of them: c.zone_count). */
static size_t found_where_they_are(const conf_t *c)
{
	size_t found = 0;
	for (size_t k = 0; k < c->zone_count; k++)
		found += conf_zone_index(c, conf_zone_spec(c, k)->name) == (long)k;
	return found;
}

/*
 * No bound on the zones but memory (the old one refused the 4097th), and
 * every zone is found by name through the hash, in any case, with or
 * without its final dot, after removals (which move the zones after) and
 * in a copy.
 */
static void test_zone_add_many(void)
{
	enum { N = 20000 };
	conf_t c, d;
	CU_ASSERT_EQUAL_FATAL(conf_init(&c), 0);
	char name[32];
	int rc = 0;
	for (int i = 0; i < N && rc == 0; i++) {
		snprintf(name, sizeof(name), "z%d.test", i);
		rc = conf_zone_add(&c, name, "z.zone");
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(c.zone_count, N);
	CU_ASSERT_EQUAL(conf_zone_add(&c, "Z17.test.", "z.zone"), SHOAL_EEXIST);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z0.test"), 0);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "Z4096.TEST."), 4096);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z19999.test"), N - 1);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z20000.test"), -1);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z1.tes"), -1);
	conf_zone_remove(&c, 0);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z0.test"), -1);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z1.test"), 0);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z19999.test."), N - 2);
	CU_ASSERT_EQUAL(conf_zone_add(&c, "one-more.test", "z.zone"), 0);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "one-more.test"), N - 1);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&d, &c), 0);
	CU_ASSERT_EQUAL(conf_zone_index(&d, "z5000.test"), 4999);
	CU_ASSERT_EQUAL(conf_zone_index(&d, "one-more.test."), N - 1);
	/* the copy's index is its own: a change to one is not seen in the other */
	conf_zone_remove(&c, 0);
	CU_ASSERT_EQUAL(conf_zone_index(&d, "z1.test"), 0);
	CU_ASSERT_EQUAL(conf_zone_index(&c, "z1.test"), -1);
	/* removals from the middle: every zone left is found where it now is */
	for (int k = 0; k < 50; k++)
		conf_zone_remove(&d, (size_t)(k * 37 % (N - 100)));
	CU_ASSERT_EQUAL(found_where_they_are(&d), d.zone_count);
	CU_ASSERT_EQUAL(d.zone_count, N - 50);
	conf_clear(&c);
	conf_clear(&d);
}

/*
 * A configuration of n zones, then what a zone-add makes of it (server.c's
 * reconfig_build): a copy with one zone more, the old one freed. Checks
 * that the copy's zones are the old one's (their strings in them) and
 * returns the allocations and frees the copy, the add and the clear made.
 */
static size_t zone_add_allocations(size_t n)
{
	conf_t was, now;
	CU_ASSERT_EQUAL_FATAL(conf_init(&was), 0);
	char name[32];
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "z%zu.test", i);
		CU_ASSERT_EQUAL_FATAL(conf_zone_add(&was, name, "zones/z.zone"), 0);
	}
	alloc_guard_begin();
	int rc = conf_copy(&now, &was);
	if (rc == 0)
		rc = conf_zone_add(&now, "added.test", "zones/added.zone");
	alloc_guard_counts_t made = alloc_guard_end();
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	size_t shared = 0;
	for (size_t i = 0; i < n; i++)
		shared += conf_zone_spec(&now, i)->name == conf_zone_spec(&was, i)->name &&
			  conf_zone_spec(&now, i)->file == conf_zone_spec(&was, i)->file;
	CU_ASSERT_EQUAL(shared, n);
	CU_ASSERT_EQUAL(conf_zone_index(&now, "added.test"), (long)n);
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&now, n)->file, "zones/added.zone");
	alloc_guard_begin();
	conf_clear(&was);
	alloc_guard_counts_t freed = alloc_guard_end();
	/* the copy holds on to what it shares: every name is still there */
	CU_ASSERT_EQUAL(conf_zone_index(&now, "z0.test"), 0);
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&now, n - 1)->file, "zones/z.zone");
	conf_clear(&now);
	return made.allocations + freed.frees;
}

/*
 * A zone-add costs one zone, not one per zone configured (issue 30): the
 * copy shares every zone, so a configuration 8 times as large takes as
 * many allocations and frees (its tables, the zone added, the chunk and
 * name part it changed).
 */
static void test_zone_add_shares(void)
{
	size_t small = zone_add_allocations(1000), large = zone_add_allocations(8000);
	CU_ASSERT_EQUAL(small, large);
	CU_ASSERT(large < 20);
}

/*
 * A zone-add then a zone-remove as server.c's reconfig_build makes them
 * (a copy of the served configuration with one zone more or less, the one
 * it replaces freed), on n zones: what they allocated, together.
 */
static alloc_guard_counts_t zone_change_cost(size_t n)
{
	conf_t was, now, next;
	CU_ASSERT_EQUAL_FATAL(conf_init(&was), 0);
	char name[32];
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "z%zu.test", i);
		CU_ASSERT_EQUAL_FATAL(conf_zone_add(&was, name, "zones/z.zone"), 0);
	}
	alloc_guard_begin();
	int rc = conf_copy(&now, &was);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	rc = conf_zone_add(&now, "added.test", "zones/added.zone");
	conf_clear(&was);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&next, &now), 0);
	if (rc == 0)
		rc = conf_zone_remove(&next, n / 2);
	conf_clear(&now);
	alloc_guard_counts_t cost = alloc_guard_end();
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(next.zone_count, n);
	CU_ASSERT_EQUAL(conf_zone_index(&next, "added.test"), (long)n - 1);
	snprintf(name, sizeof(name), "z%zu.test", n / 2);
	CU_ASSERT_EQUAL(conf_zone_index(&next, name), -1);
	snprintf(name, sizeof(name), "z%zu.test", n / 2 + 1);
	CU_ASSERT_EQUAL(conf_zone_index(&next, name), (long)n / 2);
	conf_clear(&next);
	return cost;
}

/*
 * A zone-add and a zone-remove cost one zone, not one per zone configured
 * (issue 30): the copies share the zones, so a configuration 100 times as
 * large takes as many allocations and frees, and the octets they ask for
 * grow only by the copy's table of chunks and the one part of the name
 * index changed (under a 16th of an octet a zone a change, where a copy
 * of every zone's spec and settings took about 200 octets a zone).
 */
static void test_zone_change_costs_one(void)
{
	alloc_guard_counts_t small = zone_change_cost(1000), large = zone_change_cost(100000);
	CU_ASSERT_EQUAL(small.allocations, large.allocations);
	CU_ASSERT_EQUAL(small.frees, large.frees);
	CU_ASSERT(large.octets < small.octets + 100000 / 8);
	if (large.octets >= small.octets + 100000 / 8)
		fprintf(stderr, "\n  octets: %zu at 1000 zones, %zu at 100000\n", small.octets,
			large.octets);
}

/*
 * A reconfig's configuration and a zone-add's, both made from the one
 * served, each keep what it was given while they share zones: a zone one
 * changes is its own copy, the other and the served one see theirs. Every
 * zone is freed with the last configuration that holds it, whichever goes
 * first (allocations and frees balance; ASan sees the rest).
 */
static void test_zone_copies_interleaved(void)
{
	enum { N = 2000 };
	conf_t served, added, reconf, later;
	alloc_guard_begin();
	CU_ASSERT_EQUAL_FATAL(conf_init(&served), 0);
	char name[32];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "z%d.test", i);
		CU_ASSERT_EQUAL_FATAL(conf_zone_add(&served, name, "z.zone"), 0);
	}
	uint32_t limit = conf_zone_spec(&served, 700)->limits.max_records_per_type;
	CU_ASSERT_EQUAL_FATAL(conf_copy(&added, &served), 0);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&reconf, &served), 0);
	CU_ASSERT_EQUAL(conf_zone_add(&added, "new.test", "new.zone"), 0);
	zone_spec_t *z = conf_zone_spec_mut(&reconf, 700);
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	z->limits.max_records_per_type = limit + 7;
	CU_ASSERT_EQUAL(conf_zone_remove(&reconf, 5), 0);
	CU_ASSERT_EQUAL(conf_zone_add(&reconf, "other.test", "other.zone"), 0);

	CU_ASSERT_EQUAL(served.zone_count, N);
	CU_ASSERT_EQUAL(conf_zone_index(&served, "new.test"), -1);
	CU_ASSERT_EQUAL(conf_zone_spec(&served, 700)->limits.max_records_per_type, limit);
	CU_ASSERT_EQUAL(added.zone_count, N + 1);
	CU_ASSERT_EQUAL(conf_zone_index(&added, "new.test"), N);
	CU_ASSERT_EQUAL(conf_zone_index(&added, "other.test"), -1);
	CU_ASSERT_EQUAL(conf_zone_index(&added, "z5.test"), 5);
	CU_ASSERT_EQUAL(conf_zone_spec(&added, 700)->limits.max_records_per_type, limit);
	CU_ASSERT_EQUAL(reconf.zone_count, N);
	CU_ASSERT_EQUAL(conf_zone_index(&reconf, "z5.test"), -1);
	CU_ASSERT_EQUAL(conf_zone_index(&reconf, "z700.test"), 699);
	CU_ASSERT_EQUAL(conf_zone_spec(&reconf, 699)->limits.max_records_per_type, limit + 7);
	CU_ASSERT_EQUAL(conf_zone_index(&reconf, "new.test"), -1);
	CU_ASSERT_EQUAL(conf_zone_index(&reconf, "other.test"), N - 1);
	/* the zones no change touched are one allocation, held by all three */
	CU_ASSERT_PTR_EQUAL(conf_zone_spec(&reconf, 1)->name, conf_zone_spec(&served, 1)->name);
	CU_ASSERT_PTR_EQUAL(conf_zone_spec(&added, 1)->name, conf_zone_spec(&served, 1)->name);

	/* the served one goes first, then the zone-add's (a copy of it still held) */
	conf_clear(&served);
	CU_ASSERT_EQUAL_FATAL(conf_copy(&later, &added), 0);
	conf_clear(&added);
	CU_ASSERT_EQUAL(conf_zone_index(&later, "new.test"), N);
	CU_ASSERT_STRING_EQUAL(conf_zone_spec(&later, 5)->name, "z5.test.");
	CU_ASSERT_EQUAL(conf_zone_spec(&reconf, 699)->limits.max_records_per_type, limit + 7);
	/* removals everywhere: each zone left found where it is, in both */
	for (size_t k = 0; k < 600; k++)
		CU_ASSERT_EQUAL(conf_zone_remove(&later, (k * 7919) % later.zone_count), 0);
	CU_ASSERT_EQUAL(found_where_they_are(&later), later.zone_count);
	CU_ASSERT_EQUAL(found_where_they_are(&reconf), reconf.zone_count);
	CU_ASSERT_EQUAL(later.zone_count, N + 1 - 600);
	conf_clear(&later);
	conf_clear(&reconf);
	alloc_guard_counts_t all = alloc_guard_end();
	CU_ASSERT_EQUAL(all.allocations - all.reallocs, all.frees);
}

/*
 * Out of memory at each allocation in turn of a zone-add, a zone-remove
 * and a change of a shared zone, on a copy: each fails with SHOAL_ENOMEM
 * (NULL) leaving the copy as it was, or succeeds; every zone stays found
 * where it is, the configuration copied is untouched, and nothing leaks
 * (ASan).
 */
static void test_zone_changes_out_of_memory(void)
{
	enum { N = 1100 }; /* three chunks, the last not full */
	conf_t was;
	CU_ASSERT_EQUAL_FATAL(conf_init(&was), 0);
	char name[32];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "z%d.test", i);
		CU_ASSERT_EQUAL_FATAL(conf_zone_add(&was, name, "z.zone"), 0);
	}
	uint32_t limit = conf_zone_spec(&was, 100)->limits.max_records_per_type;
	size_t failed = 0;
	for (size_t nth = 1; nth <= 12; nth++) {
		conf_t c;
		CU_ASSERT_EQUAL_FATAL(conf_copy(&c, &was), 0);
		alloc_guard_fail_at(nth);
		int add = conf_zone_add(&c, "new.test", "new.zone");
		alloc_guard_fail_at(nth);
		int rem = conf_zone_remove(&c, 600);
		alloc_guard_fail_at(nth);
		zone_spec_t *z = conf_zone_spec_mut(&c, 100);
		alloc_guard_fail_at(0);
		CU_ASSERT(add == 0 || add == SHOAL_ENOMEM);
		CU_ASSERT(rem == 0 || rem == SHOAL_ENOMEM);
		failed += (add < 0) + (rem < 0) + !z;
		CU_ASSERT_EQUAL(c.zone_count, (size_t)N + (add == 0) - (rem == 0));
		CU_ASSERT_EQUAL(conf_zone_index(&c, "new.test") >= 0, add == 0);
		CU_ASSERT_EQUAL(conf_zone_index(&c, "z600.test") < 0, rem == 0);
		if (z)
			z->limits.max_records_per_type = limit + 1;
		CU_ASSERT_EQUAL(conf_zone_spec(&c, 100)->limits.max_records_per_type,
				z ? limit + 1 : limit);
		CU_ASSERT_EQUAL(found_where_they_are(&c), c.zone_count);
		conf_clear(&c);
	}
	CU_ASSERT(failed > 0); /* the failures were reached */
	CU_ASSERT_EQUAL(was.zone_count, N);
	CU_ASSERT_EQUAL(conf_zone_spec(&was, 100)->limits.max_records_per_type, limit);
	CU_ASSERT_EQUAL(conf_zone_index(&was, "z600.test"), 600);
	CU_ASSERT_EQUAL(conf_zone_index(&was, "new.test"), -1);
	conf_clear(&was);
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
		UNIT_TEST(test_yaml_xfr),
		UNIT_TEST(test_zones_dir),
		UNIT_TEST(test_secondary_file_in_state_dir),
		UNIT_TEST(test_zones_empty),
		UNIT_TEST(test_args),
		UNIT_TEST(test_rate_limit_and_cookies),
		UNIT_TEST(test_metrics_address),
		UNIT_TEST(test_runtime_diff),
		UNIT_TEST(test_same_primaries),
		UNIT_TEST(test_zone_add_many),
		UNIT_TEST(test_tls_options),
		UNIT_TEST(test_zone_add_shares),
		UNIT_TEST(test_zone_change_costs_one),
		UNIT_TEST(test_zone_copies_interleaved),
		UNIT_TEST(test_zone_changes_out_of_memory),
		UNIT_TEST(test_catalog_role),
		UNIT_TEST(test_catalog_member),
		UNIT_TEST(test_man_page),
		UNIT_TEST(test_man_page_zones),
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
