/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for shoald's YAML configuration loader. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/conf/conf.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * One input is one configuration file, loaded over the defaults, then
 * checked across options. An error must come with a message; a crash, a
 * sanitizer report or a leak (conf_clear must free what a failed load
 * left) is a finding.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file_write("shoald.conf", data, size);
	conf_t cfg;
	if (conf_init(&cfg) != 0)
		abort();
	char err[512] = "";
	int rc = conf_load_file(&cfg, path, err, sizeof(err));
	if (rc == 0) {
		if (cfg.listen_count > CONF_LISTEN_MAX ||
		    (cfg.zone_count > 0 && cfg.zone_runs == NULL))
			abort();
		for (size_t i = 0; i < cfg.zone_count; i++)
			if (conf_zone_spec(&cfg, i)->name == NULL ||
			    conf_zone_spec(&cfg, i)->file == NULL)
				abort();
		char verr[512] = "";
		if (conf_validate(&cfg, verr, sizeof(verr)) != 0 && verr[0] == '\0')
			abort();
	} else if ((rc != SHOAL_ECONFIG && rc != SHOAL_ENOMEM) ||
		   (rc == SHOAL_ECONFIG && err[0] == '\0')) {
		abort();
	}
	conf_clear(&cfg);
	return 0;
}
