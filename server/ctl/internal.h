/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the control socket (control.c) and its commands (commands.c) share: a client, its reply. */
#ifndef SHOAL_SERVER_CTL_INTERNAL_H
#define SHOAL_SERVER_CTL_INTERNAL_H

#include <stdbool.h>

#include "server/ctl/control.h"

/* One connection to the control socket: one command line in, one reply out. control.c's. */
typedef struct control_client control_client_t;

/*
 * What the commands of c's control report on and act upon: its env, as
 * control_set_zones last changed it. Main thread.
 */
const control_env_t *control_client_env(const control_client_t *c);

/*
 * Answer c: "ok\n" or "error\n", then body (copied), and close the
 * connection once written, or when the client has not read it within the
 * control's timeout. Only a client's first reply is sent. Main thread.
 */
void control_reply(control_client_t *c, bool ok, const char *body);

/*
 * Take c's connection out of the control protocol (a takeover goes on
 * over it): returns a close-on-exec duplicate of its descriptor, the
 * caller's to answer on and to close, and closes c without a reply; or a
 * negative error, c untouched (reply to it). Main thread.
 */
int control_client_detach(control_client_t *c);

/*
 * Run command `name` with arg (NULL: none given) from CONTROL_COMMANDS:
 * the command replies to c, now or later (control_reply). A name that is
 * no command, or an argument its rule does not allow, gets "unknown
 * command (...)" with every command as shoalctl(8) writes it. Main thread.
 */
void commands_run(control_client_t *c, const char *name, const char *arg);

/*
 * keys.c: the keys and ds commands, run by commands_run as every command
 * of CONTROL_COMMANDS (cmd_<id>). Main thread.
 */
void cmd_keys(control_client_t *c, const char *arg);
void cmd_ds(control_client_t *c, const char *arg);

#endif
