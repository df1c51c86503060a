/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the signer's unit tests share: a run with libdnssec set up and a folder of their own. */
#ifndef SHOAL_TESTS_SIGN_TEST_H
#define SHOAL_TESTS_SIGN_TEST_H

#include <libdnssec/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "unit.h"

/*
 * Run tests as suite `name` with tmpdir (a mkdtemp template, completed in
 * place) made first and removed after, libdnssec's crypto set up around
 * them. Returns unit_run's code, or 99 when the folder cannot be made or
 * removed.
 */
static inline int sign_test_main(int argc, char **argv, const char *name, const unit_test_t *tests,
				 char *tmpdir)
{
	if (!mkdtemp(tmpdir))
		return 99;
	dnssec_crypto_init();
	int rc = unit_run(argc, argv, name, tests);
	dnssec_crypto_cleanup();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 99;
	return rc;
}

/* A command's exit status, its output kept in path.log (and shown when it fails). */
static inline int sign_test_run(const char *cmd, const char *path)
{
	char line[1024];
	snprintf(line, sizeof(line), "%s >%s.log 2>&1", cmd, path);
	int rc = system(line);
	if (rc != 0) {
		snprintf(line, sizeof(line), "cat %s.log >&2", path);
		if (system(line) != 0)
			return -1;
	}
	return rc;
}

/*
 * Whether ldns-verify-zone and, with bind and where it is installed,
 * BIND's dnssec-verify pass the zone file at path (example.com).
 */
static inline bool sign_test_verifies(const char *path, bool bind)
{
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "ldns-verify-zone %s", path);
	bool ok = sign_test_run(cmd, path) == 0;
	if (!ok)
		fprintf(stderr, "\n  %s: ldns-verify-zone failed\n", path);
	if (bind && access("/usr/bin/dnssec-verify", X_OK) == 0) {
		snprintf(cmd, sizeof(cmd), "dnssec-verify -q -o example.com %s", path);
		bool bind_ok = sign_test_run(cmd, path) == 0;
		if (!bind_ok)
			fprintf(stderr, "\n  %s: dnssec-verify failed\n", path);
		ok = ok && bind_ok;
	}
	return ok;
}

/* Messages of loads and applies, on stderr. */
static inline void sign_test_msg(void *arg, bool is_error, const char *text)
{
	(void)arg;
	fprintf(stderr, "\n  %s: %s\n", is_error ? "error" : "warning", text);
}

#endif
