/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the signer's unit tests share: a run with libdnssec set up and a folder of their own. */
#ifndef SHOAL_TESTS_SIGN_TEST_H
#define SHOAL_TESTS_SIGN_TEST_H

#include <libdnssec/crypto.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
