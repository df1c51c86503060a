/* The shoald daemon as one call: start-up, serving, clean stop. */
#ifndef SHOAL_SERVER_SERVER_H
#define SHOAL_SERVER_SERVER_H

#include "server/conf.h"

/*
 * Run the daemon with cfg until SIGTERM/SIGINT or `shoalctl stop`: load the
 * zones, bind every socket, create the control socket, drop privileges,
 * start the workers, serve. With cfg->check, load the zones and return.
 * Returns the process exit status (0 on a clean stop). Main thread; cfg
 * stays the caller's and must outlive the call.
 */
int server_run(conf_t *cfg);

#endif
