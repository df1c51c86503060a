/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The DNSSEC part of shoald's configuration: dnssec-policies, keys-dir, each zone's policy. */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/conf/internal.h"
#include "zone/sign_version.h"

/* A policy as zone/ reads it, with keys-dir, shared by the zones that name the policy. */
struct conf_sign {
	unsigned refs; /* atomic: the transfer settings that hold it */
	zone_sign_spec_t spec;
	char keys_dir[];
};

#define POFF(field) offsetof(conf_dnssec_policy_t, field)

/* Ten years: the longest duration a policy takes. */
#define DURATION_MAX (86400u * 3650)
/* RFC 2181 8: a TTL's largest value. */
#define TTL_MAX 2147483647u
/* RFC 5155 3.2: the salt's length is one octet. */
#define SALT_MAX 255u

const char *const conf_dnssec_algorithm_names[] = { "ecdsap256sha256", "ed25519", "ecdsap384sha384",
						    "rsasha256", NULL };

/*
 * Each policy key but id, once: the loader sets a new policy from the
 * defaults here, reads its keys through it, and tests/unit/test_conf_dnssec.c
 * checks it against man/shoald.conf.5 (DNSSEC POLICIES).
 */
const conf_option_t conf_dnssec_policy_options[] = {
	{ "algorithm", NULL, "NAME", CONF_ENUM, 0, 0, conf_dnssec_algorithm_names,
	  "ecdsap256sha256", POFF(algorithm),
	  "the keys' algorithm: ecdsap256sha256, ed25519, ecdsap384sha384 or rsasha256",
	  CONF_RUNTIME },
	{ "ksk-lifetime", NULL, "SECONDS", CONF_UINT, 0, DURATION_MAX, NULL, "0",
	  POFF(ksk_lifetime), "a KSK's life before it is rolled; 0: never", CONF_RUNTIME },
	{ "zsk-lifetime", NULL, "SECONDS", CONF_UINT, 0, DURATION_MAX, NULL, "2592000",
	  POFF(zsk_lifetime), "a ZSK's life before it is rolled; 0: never", CONF_RUNTIME },
	{ "rrsig-lifetime", NULL, "SECONDS", CONF_UINT, 60, DURATION_MAX, NULL, "1209600",
	  POFF(rrsig_lifetime), "a signature's validity, from inception to expiration",
	  CONF_RUNTIME },
	{ "rrsig-refresh", NULL, "SECONDS", CONF_UINT, 1, DURATION_MAX, NULL, "604800",
	  POFF(rrsig_refresh), "a signature is made anew this long before it expires",
	  CONF_RUNTIME },
	{ "rrsig-jitter", NULL, "SECONDS", CONF_UINT, 0, DURATION_MAX, NULL, "43200",
	  POFF(rrsig_jitter), "expirations spread over up to this much less", CONF_RUNTIME },
	{ "dnskey-ttl", NULL, "SECONDS", CONF_UINT, 0, TTL_MAX, NULL, "3600", POFF(dnskey_ttl),
	  "the TTL of the DNSKEY, CDS and CDNSKEY RRsets", CONF_RUNTIME },
	{ "nsec3", NULL, "on|off", CONF_BOOL, 0, 0, NULL, "off", POFF(nsec3),
	  "deny existence with NSEC3 (RFC 5155) instead of NSEC", CONF_RUNTIME },
	{ "nsec3-iterations", NULL, "N", CONF_UINT, 0, ZONE_MAX_NSEC3_ITERATIONS_MAX, NULL, "0",
	  POFF(nsec3_iterations), "extra NSEC3 hash iterations (RFC 9276: 0)", CONF_RUNTIME },
	{ "nsec3-salt-length", NULL, "OCTETS", CONF_UINT, 0, SALT_MAX, NULL, "0",
	  POFF(nsec3_salt_length), "octets of NSEC3 salt (RFC 9276: none)", CONF_RUNTIME },
	{ "nsec3-opt-out", NULL, "yes|no", CONF_BOOL, 0, 0, NULL, "no", POFF(nsec3_opt_out),
	  "NSEC3 opt-out: unsigned delegations get no NSEC3 (RFC 5155 6)", CONF_RUNTIME },
	{ "cds-cdnskey-publish", NULL, "yes|no", CONF_BOOL, 0, 0, NULL, "no",
	  POFF(cds_cdnskey_publish), "publish CDS and CDNSKEY for the KSK (RFC 7344)",
	  CONF_RUNTIME },
	{ "signing-threads", NULL, "N", CONF_UINT, 1, CONF_THREADS_MAX, NULL, "1",
	  POFF(signing_threads), "threads a zone's full signing is split over", CONF_RUNTIME },
};

const size_t conf_dnssec_policy_option_count =
	sizeof(conf_dnssec_policy_options) / sizeof(conf_dnssec_policy_options[0]);

uint8_t conf_dnssec_algorithm_number(uint32_t a)
{
	/* RFC 8624 3.1's numbers, in the order of enum conf_dnssec_algorithm */
	static const uint8_t numbers[] = { 13, 15, 14, 8 };
	return a < sizeof(numbers) ? numbers[a] : 0;
}

static const conf_option_t *policy_option(const char *key)
{
	for (size_t i = 0; i < conf_dnssec_policy_option_count; i++)
		if (!strcmp(conf_dnssec_policy_options[i].name, key))
			return &conf_dnssec_policy_options[i];
	return NULL;
}

/* The index of the policy called id in cfg, or -1. */
static long policy_index(const conf_t *cfg, const char *id)
{
	for (size_t i = 0; i < cfg->dnssec_policy_count; i++)
		if (!strcmp(cfg->dnssec_policies[i].id, id))
			return (long)i;
	return -1;
}

/* p set to the table's defaults: the same text the man page shows, read the same way. */
static void policy_defaults(conf_dnssec_policy_t *p)
{
	char err[128];
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < conf_dnssec_policy_option_count; i++) {
		int rc = conf_set_value(p, &conf_dnssec_policy_options[i],
					conf_dnssec_policy_options[i].def, err, sizeof(err));
		assert(rc == 0);
		(void)rc;
	}
}

/* One key of a policy's mapping into p. */
static int load_policy_key(yaml_ctx_t *y, conf_dnssec_policy_t *p, yaml_node_t *k, yaml_node_t *v)
{
	const char *key = conf_scalar(k), *val = conf_scalar(v);
	if (!key)
		return conf_yerr(y, k, "dnssec-policies: a key must be a plain word");
	if (!val)
		return conf_yerr(y, v, "dnssec-policies: %s must be a single value", key);
	if (!strcmp(key, "id")) {
		if (!val[0] || strlen(val) > CONF_DNSSEC_POLICY_ID_MAX)
			return conf_yerr(y, v, "dnssec-policies: id must have 1 to %d characters",
					 CONF_DNSSEC_POLICY_ID_MAX);
		snprintf(p->id, sizeof(p->id), "%s", val);
		return 0;
	}
	const conf_option_t *o = policy_option(key);
	if (!o)
		return conf_yerr(y, k,
				 "dnssec-policies: unknown key \"%s\" (id, algorithm, "
				 "ksk-lifetime, zsk-lifetime, rrsig-lifetime, rrsig-refresh, "
				 "rrsig-jitter, dnskey-ttl, nsec3, nsec3-iterations, "
				 "nsec3-salt-length, nsec3-opt-out, cds-cdnskey-publish, "
				 "signing-threads)",
				 key);
	char reason[256];
	int rc = conf_set_value(p, o, val, reason, sizeof(reason));
	return rc == SHOAL_EINVAL ? conf_yerr(y, v, "dnssec-policies: %s", reason) : rc;
}

/*
 * One item of dnssec-policies into p: its keys over the defaults, then
 * the checks between them. The id must be new in cfg.
 */
static int load_policy(const conf_t *cfg, yaml_ctx_t *y, yaml_node_t *item, conf_dnssec_policy_t *p)
{
	if (item->type != YAML_MAPPING_NODE)
		return conf_yerr(y, item, "dnssec-policies: each policy is a mapping with an id");
	policy_defaults(p);
	for (yaml_node_pair_t *q = item->data.mapping.pairs.start; q < item->data.mapping.pairs.top;
	     q++) {
		int rc = load_policy_key(y, p, yaml_document_get_node(y->doc, q->key),
					 yaml_document_get_node(y->doc, q->value));
		if (rc < 0)
			return rc;
	}
	if (!p->id[0])
		return conf_yerr(y, item, "dnssec-policies: a policy needs an id");
	if (policy_index(cfg, p->id) >= 0)
		return conf_yerr(y, item, "dnssec-policies: %s is given twice", p->id);
	/*
	 * A signature must still be valid when its refresh comes, however far
	 * the jitter moved its expiration in (RFC 6781 4.4.2: the refresh
	 * leaves time to re-sign before validators see it expire).
	 */
	if ((uint64_t)p->rrsig_refresh + p->rrsig_jitter >= p->rrsig_lifetime)
		return conf_yerr(y, item,
				 "dnssec-policies: %s: rrsig-refresh %u and rrsig-jitter %u "
				 "leave nothing of rrsig-lifetime %u",
				 p->id, p->rrsig_refresh, p->rrsig_jitter, p->rrsig_lifetime);
	return 0;
}

int conf_load_dnssec_policies(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *list)
{
	bool empty = conf_scalar(list) && !conf_scalar(list)[0];
	if (empty)
		return 0; /* "dnssec-policies:" with every item commented out */
	if (list->type != YAML_SEQUENCE_NODE)
		return conf_yerr(y, list, "dnssec-policies: expected a list");
	size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	if (n > CONF_DNSSEC_POLICIES_MAX)
		return conf_yerr(y, list, "dnssec-policies: more than %d policies",
				 CONF_DNSSEC_POLICIES_MAX);
	cfg->dnssec_policies = calloc(n ? n : 1, sizeof(*cfg->dnssec_policies));
	if (!cfg->dnssec_policies)
		return SHOAL_ENOMEM;
	cfg->dnssec_policy_count = 0;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item =
			yaml_document_get_node(y->doc, list->data.sequence.items.start[i]);
		int rc = load_policy(cfg, y, item, &cfg->dnssec_policies[i]);
		if (rc < 0)
			return rc;
		cfg->dnssec_policy_count++;
	}
	return 0;
}

int conf_load_zone_dnssec(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v)
{
	if (strcmp(key, "dnssec-policy"))
		return SHOAL_ENOTFOUND;
	const char *id = conf_scalar(v);
	if (!id)
		return conf_yerr(y, v, "zone %s: dnssec-policy must be a single value",
				 conf_zone_spec(cfg, i)->name);
	long at = policy_index(cfg, id);
	if (at < 0)
		return conf_yerr(y, v,
				 "zone %s: dnssec-policy \"%s\" is not an id of dnssec-policies",
				 conf_zone_spec(cfg, i)->name, id);
	conf_zone_xfr_mut(cfg, i)->dnssec_policy = (int32_t)at;
	return 0;
}

int conf_keys_dir_resolve(conf_t *cfg, yaml_ctx_t *y, yaml_node_t *node)
{
	if (!cfg->keys_dir || cfg->keys_dir[0] == '/')
		return 0;
	if (!cfg->keys_dir[0])
		return conf_yerr(y, node, "keys-dir: expected a folder");
	char full[PATH_MAX];
	if (snprintf(full, sizeof(full), "%s/%s", y->folder, cfg->keys_dir) >= (int)sizeof(full))
		return conf_yerr(y, node, "keys-dir: path too long");
	char *copy = strdup(full);
	if (!copy)
		return SHOAL_ENOMEM;
	free(cfg->keys_dir);
	cfg->keys_dir = copy;
	return 0;
}

int conf_dnssec_validate(const conf_t *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->dnssec_policy_count; i++) {
		const conf_dnssec_policy_t *p = &cfg->dnssec_policies[i];
		/* the zone it signed would be refused by its own server */
		if (p->nsec3 && p->nsec3_iterations > cfg->max_nsec3_iterations) {
			snprintf(err, errlen,
				 "dnssec-policies: %s: nsec3-iterations %u is above "
				 "max-nsec3-iterations %u",
				 p->id, p->nsec3_iterations, cfg->max_nsec3_iterations);
			return SHOAL_ECONFIG;
		}
	}
	return 0;
}

const conf_dnssec_policy_t *conf_zone_dnssec_policy(const conf_t *cfg, size_t i)
{
	int32_t at = conf_zone_xfr(cfg, i)->dnssec_policy;
	return at < 0 ? NULL : &cfg->dnssec_policies[at];
}

bool conf_zone_same_dnssec(const conf_t *a, size_t i, const conf_t *b, size_t j)
{
	const conf_dnssec_policy_t *x = conf_zone_dnssec_policy(a, i);
	const conf_dnssec_policy_t *y = conf_zone_dnssec_policy(b, j);
	if (!x || !y)
		return x == y;
	/* calloc'd and filled field by field: the padding is zero in both */
	return !memcmp(x, y, sizeof(*x));
}

size_t conf_dnssec_zone_count(const conf_t *cfg)
{
	size_t n = 0;
	for (size_t i = 0; i < cfg->zone_count; i++)
		n += conf_zone_xfr(cfg, i)->dnssec_policy >= 0;
	return n;
}

bool conf_dnssec_copy(conf_t *dst, const conf_t *src)
{
	dst->dnssec_policies = NULL;
	dst->dnssec_policy_count = 0;
	dst->keys_dir = NULL;
	if (src->keys_dir && !(dst->keys_dir = strdup(src->keys_dir)))
		return false;
	if (!src->dnssec_policy_count)
		return true;
	size_t size = src->dnssec_policy_count * sizeof(*src->dnssec_policies);
	dst->dnssec_policies = malloc(size);
	if (!dst->dnssec_policies)
		return false;
	memcpy(dst->dnssec_policies, src->dnssec_policies, size);
	dst->dnssec_policy_count = src->dnssec_policy_count;
	return true;
}

void conf_sign_ref(struct conf_sign *sign)
{
	if (sign)
		__atomic_add_fetch(&sign->refs, 1, __ATOMIC_RELAXED);
}

void conf_sign_unref(struct conf_sign *sign)
{
	if (sign && __atomic_sub_fetch(&sign->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(sign);
}

/* p as zone/ signs by it, with keys in dir (one reference, the caller's), or NULL. */
static struct conf_sign *sign_new(const conf_dnssec_policy_t *p, const char *dir)
{
	size_t len = strlen(dir) + 1;
	struct conf_sign *s = malloc(sizeof(*s) + len);
	if (!s)
		return NULL;
	memcpy(s->keys_dir, dir, len);
	s->refs = 1;
	s->spec = (zone_sign_spec_t){ .keys_dir = s->keys_dir,
				      .algorithm = conf_dnssec_algorithm_number(p->algorithm),
				      .rrsig_lifetime = p->rrsig_lifetime,
				      .rrsig_refresh = p->rrsig_refresh,
				      .rrsig_jitter = p->rrsig_jitter,
				      .dnskey_ttl = p->dnskey_ttl,
				      .cds_cdnskey = p->cds_cdnskey_publish,
				      .nsec3 = p->nsec3,
				      .nsec3_opt_out = p->nsec3_opt_out,
				      .nsec3_iterations = (uint16_t)p->nsec3_iterations,
				      .nsec3_salt_len = (uint8_t)p->nsec3_salt_length,
				      .threads = p->signing_threads };
	return s;
}

const zone_sign_spec_t *conf_sign_spec(const struct conf_sign *sign)
{
	return sign ? &sign->spec : NULL;
}

/* Zone i's sign set to s (a reference of its own), its spec pointing at it. */
static int zone_bind(conf_t *cfg, size_t i, struct conf_sign *s)
{
	conf_zone_xfr_t *x = conf_zone_xfr_mut(cfg, i);
	zone_spec_t *spec = conf_zone_spec_mut(cfg, i);
	if (!x || !spec)
		return SHOAL_ENOMEM;
	conf_sign_ref(s);
	conf_sign_unref(x->sign);
	x->sign = s;
	spec->sign = conf_sign_spec(s);
	return 0;
}

int conf_dnssec_bind(conf_t *cfg)
{
	struct conf_sign *made[CONF_DNSSEC_POLICIES_MAX] = { NULL };
	const char *dir = cfg->keys_dir ? cfg->keys_dir : CONF_KEYS_DIR_DEFAULT;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < cfg->zone_count; i++) {
		int32_t at = conf_zone_xfr(cfg, i)->dnssec_policy;
		/* a secondary's transfers are signed (sign_transfer), a primary's file */
		if (at < 0)
			continue;
		if (!made[at] && !(made[at] = sign_new(&cfg->dnssec_policies[at], dir)))
			rc = SHOAL_ENOMEM;
		if (rc == 0)
			rc = zone_bind(cfg, i, made[at]);
	}
	for (size_t k = 0; k < CONF_DNSSEC_POLICIES_MAX; k++)
		conf_sign_unref(made[k]);
	return rc;
}

int conf_keys_dir_keep(conf_t *cfg, const conf_t *running)
{
	const char *now = running->keys_dir ? running->keys_dir : CONF_KEYS_DIR_DEFAULT;
	const char *read = cfg->keys_dir ? cfg->keys_dir : CONF_KEYS_DIR_DEFAULT;
	if (!strcmp(now, read))
		return 0;
	char *copy = strdup(now);
	if (!copy)
		return SHOAL_ENOMEM;
	free(cfg->keys_dir);
	cfg->keys_dir = copy;
	return conf_dnssec_bind(cfg);
}

void conf_dnssec_check_only(const conf_t *cfg)
{
	for (size_t i = 0; i < cfg->zone_count; i++)
		if (conf_zone_xfr(cfg, i)->sign)
			conf_zone_xfr(cfg, i)->sign->spec.check_only = true;
}

void conf_dnssec_clear(conf_t *cfg)
{
	free(cfg->dnssec_policies);
	cfg->dnssec_policies = NULL;
	cfg->dnssec_policy_count = 0;
	free(cfg->keys_dir);
	cfg->keys_dir = NULL;
}
