/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The shoald daemon as one call: start-up, serving, clean stop. */
#ifndef SHOAL_SERVER_DAEMON_SERVER_H
#define SHOAL_SERVER_DAEMON_SERVER_H

#include "server/conf/conf.h"
#include "server/query/responder.h"

/*
 * Run the daemon with cfg until SIGTERM/SIGINT or `shoalctl stop`: load the
 * zones (when the responder serves zones), bind every socket, create the
 * control socket, drop privileges, start the workers, answer every query
 * with responder. With cfg->check, load the zones and return. Returns the
 * process exit status (0 on a clean stop). Main thread; cfg and responder
 * stay the caller's and must outlive the call.
 */
int server_run(conf_t *cfg, const responder_t *responder);

/*
 * A whole program: the command line and the configuration file it names
 * into a configuration (--help and --version print and return 0; a bad
 * option or file is reported on stderr), the log set up from it, then
 * server_run with responder. Returns the process exit status. Main
 * thread, once.
 */
int server_main(int argc, char **argv, const responder_t *responder);

#endif
