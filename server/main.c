/* shoald's entry point: read the configuration, set up the log, run the server. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "server/conf.h"
#include "server/log.h"
#include "server/server.h"

int main(int argc, char **argv)
{
	conf_t cfg;
	char err[1024] = "";
	conf_init(&cfg);
	int rc = conf_parse_args(&cfg, argc, argv, stdout, err, sizeof(err));
	if (rc == 0)
		rc = conf_validate(&cfg, err, sizeof(err));
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "shoald: %s\n", err);
		conf_clear(&cfg);
		return rc < 0 ? 1 : 0;
	}
	log_init(cfg.log_level, cfg.syslog);
	int status = server_run(&cfg);
	conf_clear(&cfg);
	return status;
}
