/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-checkzone: load a zone file exactly as shoald does and report what is wrong. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "proto/error.h"
#include "zone/load.h"
#include "zone/zone.h"

static const char usage[] =
	"Usage: shoal-checkzone [OPTIONS] ORIGIN FILE\n"
	"Load the RFC 1035 master file FILE as the zone ORIGIN, the way shoald\n"
	"loads it, and print every error and warning as FILE:LINE: message.\n"
	"The old order FILE ORIGIN is still read, with a warning, when the first\n"
	"argument names a file (or holds a /) and the second does neither.\n"
	"\n"
	"  -q, --quiet    print errors only, not warnings or the summary\n"
	"  -s, --stats    also print load time, node count, store size and RSS\n"
	"  -t, --max-types-per-name N\n"
	"                 refuse a name with more than N types, a signed type\n"
	"                 counting twice (1 to 65535; default 100, as shoald)\n"
	"  -r, --max-records-per-type N\n"
	"                 refuse an RRset of more than N records (1 to 65535;\n"
	"                 default 1000, as shoald)\n"
	"  -R, --reader NAME\n"
	"                 read the file with zscanner (Knot's zone scanner, the\n"
	"                 default, as shoald) or ldns (the reference reader)\n"
	"  -h, --help     print this help and exit\n"
	"  -V, --version  print the version and exit\n"
	"\n"
	"Exit status: 0 the zone loads, 1 it does not, 2 usage error.\n";

typedef struct counts {
	bool quiet;
	unsigned errors, warnings;
} counts_t;

static void on_msg(void *arg, bool is_error, const char *msg)
{
	counts_t *c = arg;
	/* "FILE: N more warnings not shown" (at most 50 of each are): the counts say all */
	const char *p = strrchr(msg, ':');
	unsigned more = 0;
	if (p &&
	    sscanf(p + 1, is_error ? " %u more errors not shown" : " %u more warnings not shown",
		   &more) == 1 &&
	    more > 0)
		more--; /* this line is counted below */
	if (is_error)
		c->errors += 1 + more;
	else
		c->warnings += 1 + more;
	if (is_error || !c->quiet)
		fprintf(stderr, "%s: %s\n", is_error ? "error" : "warning", msg);
}

/* Resident set size in KiB from /proc (Linux), or -1. */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* A limit from 1 to ZONE_LIMIT_MAX; 0 or SHOAL_EINVAL. */
static int parse_limit(const char *text, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < 1 || v > ZONE_LIMIT_MAX)
		return SHOAL_EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * Whether an argument is meant as the file: it names something on disk that
 * is not a folder (the root zone's origin "." names one), or it holds a /
 * where nothing is (a path to a missing file). A zone name may hold a / as
 * well, which is why this decides only where the other argument does not.
 */
static bool looks_like_file(const char *arg)
{
	struct stat st;
	if (stat(arg, &st) == 0)
		return !S_ISDIR(st.st_mode);
	return strchr(arg, '/') != NULL;
}

/*
 * The zone and the file from the two arguments: ORIGIN FILE, the order of
 * named-checkzone, nsd-checkzone and kzonecheck's -o; or the old FILE ORIGIN
 * when only the first looks like a file, with a warning unless quiet.
 */
static void take_arguments(char **args, bool quiet, const char **origin, const char **file)
{
	*origin = args[0];
	*file = args[1];
	if (!looks_like_file(args[0]) || looks_like_file(args[1]))
		return;
	*origin = args[1];
	*file = args[0];
	if (!quiet)
		fprintf(stderr,
			"shoal-checkzone: warning: FILE ORIGIN is the old order; give ORIGIN "
			"FILE: shoal-checkzone %s %s\n",
			*origin, *file);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "stats", no_argument, NULL, 's' },
		{ "max-types-per-name", required_argument, NULL, 't' },
		{ "max-records-per-type", required_argument, NULL, 'r' },
		{ "reader", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	counts_t c = { 0 };
	bool stats = false;
	zone_limits_t limits = ZONE_LIMITS_DEFAULT;
	int opt;
	while ((opt = getopt_long(argc, argv, "qst:r:R:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'R':
			if (strcmp(optarg, "zscanner") == 0) {
				zone_load_set_reader(ZONE_READER_ZSCANNER);
			} else if (strcmp(optarg, "ldns") == 0) {
				zone_load_set_reader(ZONE_READER_LDNS);
			} else {
				fprintf(stderr,
					"shoal-checkzone: %s: not a reader (zscanner or ldns)\n",
					optarg);
				return 2;
			}
			break;
		case 't':
		case 'r':
			if (parse_limit(optarg, opt == 't' ? &limits.max_types_per_name
							   : &limits.max_records_per_type) < 0) {
				fprintf(stderr, "shoal-checkzone: %s: not a number from 1 to %u\n",
					optarg, ZONE_LIMIT_MAX);
				return 2;
			}
			break;
		case 'q':
			c.quiet = true;
			break;
		case 's':
			stats = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("shoal-checkzone %s\n", PACKAGE_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *origin, *file;
	take_arguments(argv + optind, c.quiet, &origin, &file);
	char text[NAME_TEXT_MAX + 2];
	size_t len = strlen(origin);
	snprintf(text, sizeof(text), "%s%s", origin, len && origin[len - 1] == '.' ? "" : ".");
	uint8_t apex[NAME_MAXLEN];
	if (len == 0 || len > NAME_TEXT_MAX - 1 || name_from_text(text, NULL, apex) < 0) {
		fprintf(stderr, "shoal-checkzone: %s: not a valid zone name\n", origin);
		return 2;
	}
	double start = now_ms();
	zone_t *z = NULL;
	int err = zone_load(file, apex, &limits, on_msg, &c, &z);
	double took = now_ms() - start;
	if (err < 0) {
		fprintf(stderr, "shoal-checkzone: zone %s not loaded: %s (%u errors)\n", text,
			shoal_strerror(err), c.errors);
		return 1;
	}
	if (!c.quiet)
		printf("zone %s: loaded, serial %u, %zu records, %u warnings\n", text, z->serial,
		       z->rr_count, c.warnings);
	if (!c.quiet && z->denial == ZONE_DENIAL_NSEC)
		printf("signed: NSEC\n");
	if (!c.quiet && z->denial == ZONE_DENIAL_NSEC3) {
		char salt[2 * UINT8_MAX + 1] = "-";
		for (unsigned i = 0; i < z->nsec3.salt_len; i++)
			snprintf(salt + 2 * i, 3, "%02x", z->nsec3.salt[i]);
		printf("signed: NSEC3, %u iterations, salt %s, %zu hashes in the chain\n",
		       z->nsec3.iterations, salt, (size_t)z->nsec3.chain.count);
	}
	if (stats)
		printf("load time %.0f ms, %zu nodes, store %zu octets (%.1f per record), "
		       "RSS %ld KiB\n",
		       took, z->node_count, zone_memory(z) + sizeof(*z),
		       (double)zone_memory(z) / (double)(z->rr_count ? z->rr_count : 1), rss_kib());
	zone_free(z);
	return 0;
}
