/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The TLS credentials of a configuration, made at start and by each reconfig; their pin logged. */
#include "config.h"

#include <unistd.h>

#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/daemon/tls_setup.h"

bool tls_setup_wanted(const conf_t *cfg)
{
	if (cfg->listen_tls_count)
		return true;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const acl_t *p = &conf_zone_xfr(cfg, i)->primaries;
		for (size_t k = 0; k < p->count; k++)
			if (p->entries[k].tls)
				return true;
	}
	return false;
}

int tls_setup_creds(const conf_t *cfg, const char *state_folder, const char *why, tls_creds_t **out,
		    char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	char host[256] = "";
	/* the subject is the server's name, as id.server says it; never empty (kdig 3.2) */
	if (!cfg->identity && gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	const char *cn = cfg->identity ? cfg->identity : host[0] ? host : "shoal";
	tls_creds_conf_t cf = {
		.key_file = cfg->tls_key_file,
		.cert_file = cfg->tls_cert_file,
		.folder = state_folder,
		.common_name = cn,
		.ca_file = cfg->tls_ca_file,
		.system_ca = conf_tls_hostnames(cfg),
		.request_client_cert = conf_tls_mutual(cfg),
	};
	int rc = tls_creds_new(&cf, out, err, errlen);
	if (rc < 0)
		return rc;
	uint8_t pin[TLS_PIN_LEN];
	char text[TLS_PIN_TEXT_MAX];
	tls_creds_pin(*out, pin);
	log_info("TLS (%s): certificate %s, %s, SPKI pin %s", why, tls_creds_subject(*out),
		 tls_creds_source(*out), tls_pin_text(pin, text));
	if (!cfg->tls_key_file && !state_folder)
		log_warning("TLS: no state-dir to keep the self-signed key in: its pin changes at "
			    "each start (set state-dir, or tls-key-file and tls-cert-file)");
	return 0;
}
