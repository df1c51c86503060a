/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's dynamic update settings: allow-update's rules read and matched, serial-policy. */
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "server/conf/internal.h"
#include "server/conf/update.h"
#include "zone/update.h"

/* Rules of one zone, patterns and types of one rule: far more than a policy needs. */
#define UPDATE_RULES_MAX 64
#define UPDATE_ITEMS_MAX 64

conf_update_t *conf_update_new(void)
{
	conf_update_t *u = calloc(1, sizeof(*u));
	if (u)
		u->refs = 1;
	return u;
}

conf_update_t *conf_update_ref(conf_update_t *u)
{
	__atomic_add_fetch(&u->refs, 1, __ATOMIC_RELAXED);
	return u;
}

void conf_update_unref(conf_update_t *u)
{
	if (!u || __atomic_sub_fetch(&u->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; i < u->rule_count; i++) {
		free(u->rules[i].names);
		free(u->rules[i].types);
	}
	free(u->rules);
	free(u);
}

const update_rule_t *conf_update_rule(const conf_update_t *u, const struct sockaddr *peer, int key)
{
	const uint8_t *ip = NULL;
	size_t ip_len = peer ? addr_octets(peer, &ip) : 0;
	for (size_t i = 0; u && i < u->rule_count; i++) {
		const update_rule_t *r = &u->rules[i];
		if (r->key != ACL_NOKEY && r->key != key)
			continue;
		if (r->has_addr && !(ip_len && addr_prefix_match(&r->net, ip, ip_len)))
			continue;
		return r;
	}
	return NULL;
}

static bool name_matches(const update_name_t *p, const uint8_t *owner)
{
	switch (p->kind) {
	case UPDATE_NAME_EXACT:
		return name_equal(owner, p->name);
	case UPDATE_NAME_BELOW:
		return name_is_subdomain(owner, p->name) && !name_equal(owner, p->name);
	default:
		break;
	}
	/* the first label, compared as names compare: case aside (RFC 4343) */
	if (owner[0] == 0 || owner[0] != p->name[0])
		return false;
	for (uint8_t k = 1; k <= owner[0]; k++)
		if (name_lower_octet(owner[k]) != p->name[k])
			return false;
	return true;
}

/* The types a rule without a types list never allows (see update_rule_t). */
static bool type_reserved(uint16_t type, bool apex)
{
	switch (type) {
	case DNS_TYPE_SOA:
	case DNS_TYPE_DNSKEY:
	case DNS_TYPE_RRSIG:
	case DNS_TYPE_NSEC:
	case DNS_TYPE_NSEC3:
	case DNS_TYPE_NSEC3PARAM:
		return true;
	case DNS_TYPE_NS:
		return apex;
	default:
		return false;
	}
}

bool conf_update_allows(const update_rule_t *r, const uint8_t *apex, const uint8_t *owner,
			uint16_t type)
{
	bool named = r->name_count == 0;
	for (size_t i = 0; !named && i < r->name_count; i++)
		named = name_matches(&r->names[i], owner);
	if (!named)
		return false;
	if (r->type_count == 0)
		return type == DNS_TYPE_ANY || !type_reserved(type, name_equal(owner, apex));
	for (size_t i = 0; i < r->type_count; i++)
		if (r->types[i] == type)
			return true;
	return false;
}

/* ---- reading allow-update and serial-policy ---- */

/* One pattern of names, relative to apex (or absolute inside it). */
static int load_name(yaml_ctx_t *y, const uint8_t *apex, yaml_node_t *v, update_name_t *p)
{
	const char *t = conf_scalar(v);
	char text[NAME_TEXT_MAX];
	size_t len = t ? strlen(t) : 0;
	if (!t || !len || len >= sizeof(text))
		return conf_yerr(y, v, "allow-update: names: expected a name pattern");
	memcpy(text, t, len + 1);
	int n;
	if (len > 2 && !strcmp(text + len - 2, ".*")) {
		text[len - 2] = '.';
		text[len - 1] = '\0';
		p->kind = UPDATE_NAME_FIRST_LABEL;
		n = name_from_text(text, NULL, p->name);
		if (n > 0 && name_labels(p->name) != 1)
			n = -1;
	} else if (!strcmp(text, "*") || !strncmp(text, "*.", 2)) {
		p->kind = UPDATE_NAME_BELOW;
		n = name_from_text(text[1] ? text + 2 : "@", apex, p->name);
	} else {
		p->kind = UPDATE_NAME_EXACT;
		n = name_from_text(text, apex, p->name);
	}
	if (n < 0 || (p->kind != UPDATE_NAME_FIRST_LABEL && !name_is_subdomain(p->name, apex)))
		return conf_yerr(
			y, v,
			"allow-update: names: \"%s\" is not a name in the zone, \"*.NAME\" "
			"or \"LABEL.*\"",
			t);
	name_lower(p->name);
	p->len = (uint8_t)n;
	return 0;
}

static int load_type(yaml_ctx_t *y, const uint8_t *apex, yaml_node_t *v, uint16_t *type)
{
	(void)apex;
	const char *t = conf_scalar(v);
	int n = t ? rdata_type_from_text(t) : -1;
	if (n < 0)
		return conf_yerr(y, v, "allow-update: types: \"%s\" is not a record type",
				 t ? t : "");
	*type = (uint16_t)n;
	return 0;
}

/* A scalar or a list at v, each item read by one into *out (count into *count). */
static int load_items(yaml_ctx_t *y, const uint8_t *apex, yaml_node_t *v, size_t size,
		      int (*one)(yaml_ctx_t *, const uint8_t *, yaml_node_t *, void *), void **out,
		      size_t *count)
{
	yaml_node_item_t single = 0, *start = &single, *top = &single + 1;
	if (v->type == YAML_SEQUENCE_NODE) {
		start = v->data.sequence.items.start;
		top = v->data.sequence.items.top;
	}
	size_t n = (size_t)(top - start);
	if (n > UPDATE_ITEMS_MAX)
		return conf_yerr(y, v, "allow-update: more than %d items in a list",
				 UPDATE_ITEMS_MAX);
	*out = calloc(n ? n : 1, size);
	if (!*out)
		return SHOAL_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = v->type == YAML_SEQUENCE_NODE
					    ? yaml_document_get_node(y->doc, start[i])
					    : v;
		int rc = one(y, apex, item, (char *)*out + i * size);
		if (rc < 0)
			return rc;
		(*count)++;
	}
	return 0;
}

static int name_one(yaml_ctx_t *y, const uint8_t *apex, yaml_node_t *v, void *out)
{
	return load_name(y, apex, v, out);
}

static int type_one(yaml_ctx_t *y, const uint8_t *apex, yaml_node_t *v, void *out)
{
	return load_type(y, apex, v, out);
}

/* key: or address: of a rule. */
static int load_who(conf_t *cfg, yaml_ctx_t *y, const char *k, yaml_node_t *v, update_rule_t *r)
{
	const char *t = conf_scalar(v);
	if (!t)
		return conf_yerr(y, v, "allow-update: %s must be a single value", k);
	if (!strcmp(k, "address")) {
		if (addr_prefix_parse(t, &r->net) < 0)
			return conf_yerr(y, v, "allow-update: \"%s\" is not an ADDRESS[/BITS]", t);
		r->has_addr = true;
		return 0;
	}
	uint8_t wire[NAME_MAXLEN];
	const tsig_key_t *key = NULL;
	if (name_from_text(t, NULL, wire) > 0) {
		name_lower(wire);
		key = tsig_key_find(cfg->keys, cfg->key_count, wire);
	}
	if (!key)
		return conf_yerr(y, v, "allow-update: no key called \"%s\" (see keys:)", t);
	r->key = (int)(key - cfg->keys);
	return 0;
}

/* One rule: a mapping of key and/or address, names, types. */
static int load_rule(conf_t *cfg, yaml_ctx_t *y, const uint8_t *apex, yaml_node_t *item,
		     update_rule_t *r)
{
	r->key = ACL_NOKEY;
	if (item->type != YAML_MAPPING_NODE)
		return conf_yerr(y, item,
				 "allow-update: each rule is a mapping of key or address, names, "
				 "types");
	int rc = 0;
	for (yaml_node_pair_t *p = item->data.mapping.pairs.start;
	     rc == 0 && p < item->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(y->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
		const char *k = conf_scalar(kn);
		if (k && (!strcmp(k, "key") || !strcmp(k, "address")))
			rc = load_who(cfg, y, k, v, r);
		else if (k && !strcmp(k, "names"))
			rc = load_items(y, apex, v, sizeof(update_name_t), name_one,
					(void **)&r->names, &r->name_count);
		else if (k && !strcmp(k, "types"))
			rc = load_items(y, apex, v, sizeof(uint16_t), type_one, (void **)&r->types,
					&r->type_count);
		else
			rc = conf_yerr(y, kn,
				       "allow-update: unknown key \"%s\" (key, address, names, "
				       "types)",
				       k ? k : "");
	}
	if (rc == 0 && r->key == ACL_NOKEY && !r->has_addr)
		rc = conf_yerr(y, item, "allow-update: a rule needs a key or an address");
	return rc;
}

/* Zone i's settings, made on first use. */
static conf_update_t *zone_update(conf_t *cfg, size_t i)
{
	conf_zone_xfr_t *zx = conf_zone_xfr_mut(cfg, i);
	if (!zx)
		return NULL; /* out of memory, as a failed conf_update_new */
	if (!zx->update)
		zx->update = conf_update_new();
	return zx->update;
}

static int load_rules(conf_t *cfg, yaml_ctx_t *y, size_t i, conf_update_t *u, yaml_node_t *v)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return conf_yerr(y, v, "allow-update: expected a list of rules");
	size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > UPDATE_RULES_MAX || u->rules)
		return conf_yerr(y, v, "allow-update: given twice, or more than %d rules",
				 UPDATE_RULES_MAX);
	uint8_t apex[NAME_MAXLEN];
	if (name_from_text(conf_zone_spec(cfg, i)->name, NULL, apex) < 0)
		return conf_yerr(y, v, "allow-update: the zone's name is not a name");
	name_lower(apex);
	u->rules = calloc(n ? n : 1, sizeof(*u->rules));
	if (!u->rules)
		return SHOAL_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		yaml_node_t *item = yaml_document_get_node(y->doc, v->data.sequence.items.start[k]);
		int rc = load_rule(cfg, y, apex, item, &u->rules[k]);
		u->rule_count++;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int conf_load_update_key(conf_t *cfg, yaml_ctx_t *y, size_t i, const char *key, yaml_node_t *v)
{
	/* in the order of enum zone_serial_policy */
	static const char *const policies[] = { "increment", "unixtime", "dateserial" };
	if (strcmp(key, "allow-update") && strcmp(key, "serial-policy") &&
	    strcmp(key, "update-forward"))
		return SHOAL_ENOTFOUND;
	conf_update_t *u = zone_update(cfg, i);
	if (!u)
		return SHOAL_ENOMEM;
	if (!strcmp(key, "allow-update"))
		return load_rules(cfg, y, i, u, v);
	const char *t = conf_scalar(v);
	if (!strcmp(key, "update-forward"))
		return t && conf_parse_bool(t, &u->forward) == 0
			       ? 0
			       : conf_yerr(y, v, "update-forward: \"%s\" is not yes or no",
					   t ? t : "");
	for (size_t p = 0; t && p < sizeof(policies) / sizeof(policies[0]); p++) {
		if (!strcmp(t, policies[p])) {
			u->serial_policy = (uint8_t)p;
			return 0;
		}
	}
	return conf_yerr(y, v, "serial-policy: \"%s\" is not increment, unixtime or dateserial",
			 t ? t : "");
}
