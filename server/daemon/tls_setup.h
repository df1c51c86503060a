/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The TLS credentials a configuration asks for: made at start and by each reconfig, their pin said.
 */
#ifndef SHOAL_SERVER_DAEMON_TLS_SETUP_H
#define SHOAL_SERVER_DAEMON_TLS_SETUP_H

#include <stdbool.h>
#include <stddef.h>

#include "server/common/tls.h"
#include "server/conf/conf.h"

/* Whether cfg uses TLS: listen-tls addresses, or a primary asked over TLS. Any thread. */
bool tls_setup_wanted(const conf_t *cfg);

/*
 * The credentials cfg asks for: tls-key-file and tls-cert-file, or the
 * self-signed pair kept in state_folder (NULL: made for this process,
 * said in the log), its subject the identity (or the host name); the CAs
 * of tls-ca-file (or the system's, when a zone checks host names), and
 * client certificates asked for when a provide-xfr entry wants one. The
 * pin and the source are logged (`why`: "start", "reconfig"). Returns 0
 * and *out (one reference), or a negative error with err. Main thread,
 * with the rights the server keeps (after the privilege drop).
 */
int tls_setup_creds(const conf_t *cfg, const char *state_folder, const char *why, tls_creds_t **out,
		    char *err, size_t errlen);

#endif
