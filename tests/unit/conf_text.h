/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tests that need a configuration: one loaded from YAML text, as shoald loads its file. */
#ifndef SHOAL_TESTS_UNIT_CONF_TEXT_H
#define SHOAL_TESTS_UNIT_CONF_TEXT_H

#include <stdio.h>
#include <unistd.h>

#include "server/conf/conf.h"
#include "unit.h"

/*
 * Load text[0..len) into c (conf_init first) through a temporary file.
 * Returns conf_load_file's result; its message goes to stderr. The caller
 * clears c.
 */
static inline int unit_conf_text(conf_t *c, const char *text, size_t len)
{
	char err[512], path[] = "/tmp/shoal-test-conf.XXXXXX";
	conf_init(c);
	if (unit_temp_file(path, text, len) < 0)
		return -1;
	int rc = conf_load_file(c, path, err, sizeof(err));
	unlink(path);
	if (rc < 0)
		fprintf(stderr, "%s\n", err);
	return rc;
}

/*
 * zonedb_build over c's zones (as shoald's reload lends them: no array),
 * old and msg as zonedb_build's. Returns its result.
 */
static inline int unit_conf_build(const conf_t *c, const zonedb_t *old, zone_msg_fn msg,
				  zonedb_t **out)
{
	zonedb_build_t b = {
		.spec_of = conf_spec_of, .spec_arg = c, .n = c->zone_count, .old = old, .msg = msg
	};
	return zonedb_build_with(&b, out);
}

#endif
