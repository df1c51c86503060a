/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The keys and ds commands: a signed zone's DNSSEC keys and DS, read from its list in keys-dir. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/name.h"
#include "proto/rrtext.h"
#include "proto/wire.h"
#include "server/common/sbuf.h"
#include "server/common/timestamp.h"
#include "server/ctl/internal.h"
#include "zone/sign_key.h"

/* A reason for the reply: a zone's name and a path with room. */
#define REASON_MAX (NAME_TEXT_MAX + PATH_MAX + 128)

/*
 * The keys of the zone called name into ks (to sign_keyset_clear), its
 * apex into apex and its policy into *policy: from the zone's list alone,
 * public keys and times, so nothing secret is read and nothing secret can
 * reach the socket. Returns 0, or a negative error with the reply's text
 * in why: no such zone, no dnssec-policy, no keys yet, a list that does
 * not read. A few lines read from a file, on the main loop.
 */
static int zone_keys(const conf_t *cfg, const char *name, sign_keyset_t *ks, uint8_t *apex,
		     const conf_dnssec_policy_t **policy, char *why, size_t cap)
{
	long i = conf_zone_index(cfg, name);
	*policy = i < 0 ? NULL : conf_zone_dnssec_policy(cfg, (size_t)i);
	if (i < 0) {
		snprintf(why, cap, "no zone %.*s is configured\n", NAME_TEXT_MAX, name);
		return SHOAL_ENOTFOUND;
	}
	if (!*policy) {
		snprintf(why, cap,
			 "zone %.*s has no dnssec-policy: it is served as loaded, not signed\n",
			 NAME_TEXT_MAX, name);
		return SHOAL_ENOTFOUND;
	}
	if (name_from_text(conf_zone_spec(cfg, (size_t)i)->name, NULL, apex) < 0) {
		/* the configuration holds names that read: not seen */
		snprintf(why, cap, "%s\n", shoal_strerror(SHOAL_ENAME));
		return SHOAL_ENAME;
	}
	name_lower(apex);
	const char *dir = cfg->keys_dir ? cfg->keys_dir : CONF_KEYS_DIR_DEFAULT;
	char err[REASON_MAX] = "";
	int rc = sign_keyset_load(ks, dir, apex, false, err, sizeof(err));
	if (rc == SHOAL_ENOTFOUND)
		snprintf(why, cap,
			 "zone %.*s has no keys yet in %s (made when it is first signed)\n",
			 NAME_TEXT_MAX, name, dir);
	else if (rc < 0)
		snprintf(why, cap, "%s\n", err[0] ? err : shoal_strerror(rc));
	return rc;
}

/* The policy's algorithm name of RFC 8624 number alg, as dnssec-policies writes it, or "-". */
static const char *algorithm_name(uint8_t alg)
{
	for (uint32_t a = 0; conf_dnssec_algorithm_names[a]; a++)
		if (conf_dnssec_algorithm_number(a) == alg)
			return conf_dnssec_algorithm_names[a];
	return "-";
}

/* One key as keys shows it: tag, role, algorithm, state, its times (RFC 3339, UTC). */
static void put_key(sbuf_t *b, const sign_key_t *k, int64_t now)
{
	char c[TIMESTAMP_TEXT_MAX], p[TIMESTAMP_TEXT_MAX], a[TIMESTAMP_TEXT_MAX];
	timestamp_text((time_t)k->created, -1, c, sizeof(c));
	timestamp_text((time_t)k->published, -1, p, sizeof(p));
	timestamp_text((time_t)k->active, -1, a, sizeof(a));
	sbuf_put(b, "%u %s %s %u %s created %s published %s active %s\n", k->tag,
		 sign_key_role_name(k->role), algorithm_name(k->algorithm), k->algorithm,
		 sign_key_state_name(sign_key_state(k, now)), c, p, a);
}

/*
 * The DS record of KSK k under apex with SHA-256 and ttl, as a master
 * file line (proto/rrtext.c, as zone-read writes), into b.
 */
static int put_ds(sbuf_t *b, const sign_key_t *k, const uint8_t *apex, uint32_t ttl)
{
	uint8_t rec[10 + 128];
	int n = sign_key_ds(k, rec + 10, sizeof(rec) - 10);
	if (n < 0)
		return n;
	wire_t w;
	wire_init_write(&w, rec, 10);
	wire_write_u16(&w, DNS_TYPE_DS);
	wire_write_u16(&w, DNS_CLASS_IN);
	wire_write_u32(&w, ttl);
	wire_write_u16(&w, (uint16_t)n);
	char *line = malloc(RRTEXT_MAX);
	int len = line ? rrtext_write(line, apex, rec) : SHOAL_ENOMEM;
	if (len > 0)
		sbuf_put(b, "%.*s", len, line);
	free(line);
	return len < 0 ? len : 0;
}

/* keys or ds of the zone called arg: the reply made by put from its keys. */
static void reply_keys(control_client_t *c, const char *arg, bool ds)
{
	const control_env_t *env = control_client_env(c);
	char why[REASON_MAX];
	uint8_t apex[NAME_MAXLEN];
	const conf_dnssec_policy_t *policy = NULL;
	sign_keyset_t ks;
	int rc = zone_keys(env->cfg, arg, &ks, apex, &policy, why, sizeof(why));
	if (rc < 0) {
		control_reply(c, false, why);
		return;
	}
	sbuf_t b = { 0 };
	int64_t now = time(NULL);
	for (size_t i = 0; rc == 0 && i < ks.count; i++) {
		const sign_key_t *k = &ks.keys[i];
		if (!ds)
			put_key(&b, k, now);
		else if (k->role == SIGN_KEY_KSK)
			rc = put_ds(&b, k, apex, policy->dnskey_ttl);
	}
	sign_keyset_clear(&ks);
	if (rc == 0 && !b.failed && !b.len)
		snprintf(why, sizeof(why), "zone %.*s has no KSK in its list\n", NAME_TEXT_MAX,
			 arg);
	else if (rc < 0 || b.failed)
		snprintf(why, sizeof(why), "%s\n", shoal_strerror(rc < 0 ? rc : SHOAL_ENOMEM));
	bool ok = rc == 0 && !b.failed && b.len;
	control_reply(c, ok, ok ? b.p : why);
	free(b.p);
}

void cmd_keys(control_client_t *c, const char *arg)
{
	reply_keys(c, arg, false);
}

void cmd_ds(control_client_t *c, const char *arg)
{
	reply_keys(c, arg, true);
}
