/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A configuration beside the running one: copies, and what a reconfig can and cannot apply. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "server/common/addr.h"
#include "server/conf/conf.h"
#include "server/conf/internal.h"
#include "server/conf/update.h"

/* *dst = a copy of src (NULL stays NULL). False when out of memory. */
static bool dup_string(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return !src || *dst;
}

bool conf_acl_dup(acl_t *dst, const acl_t *src)
{
	dst->count = 0;
	dst->entries = NULL;
	if (!src->count)
		return true;
	dst->entries = malloc(src->count * sizeof(*src->entries));
	if (!dst->entries)
		return false;
	memcpy(dst->entries, src->entries, src->count * sizeof(*src->entries));
	dst->count = src->count;
	return true;
}

bool conf_xfr_own(conf_zone_xfr_t *x)
{
	/* the update settings: read-only, shared; a reference whatever else fails, as the
	 * clear drops one */
	if (x->update)
		conf_update_ref(x->update);
	conf_sign_ref(x->sign);
	bool ok = true;
	acl_t *lists[] = { &x->provide_xfr, &x->notify, &x->primaries, &x->allow_notify,
			   &x->allow_query.list };
	for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
		acl_t from = *lists[k];
		ok = ok && conf_acl_dup(lists[k], &from);
		if (!ok)
			*lists[k] = (acl_t){ 0 };
	}
	/* a TLS primary's authentication: a copy of its own, as the lists */
	const tls_auth_t *tls = x->primaries_tls;
	x->primaries_tls = NULL;
	if (ok && tls) {
		x->primaries_tls = malloc(sizeof(*x->primaries_tls));
		ok = x->primaries_tls != NULL;
		if (ok)
			*x->primaries_tls = *tls;
	}
	/* a consumer catalog's templates: one block, copied whole */
	const conf_catalog_t *cat = x->catalog;
	x->catalog = NULL;
	if (ok && cat) {
		size_t size = sizeof(*cat) + cat->group_count * sizeof(cat->groups[0]);
		x->catalog = malloc(size);
		ok = x->catalog != NULL;
		if (ok)
			memcpy(x->catalog, cat, size);
	}
	/* a producer's member record: a copy of its own too */
	if (ok)
		ok = conf_member_copy(x) == 0;
	else
		x->member = NULL;
	return ok;
}

int conf_copy(conf_t *dst, const conf_t *src)
{
	*dst = *src;
	/* nothing of src's is owned twice: every pointer is replaced or cleared first */
	dst->user = dst->group = dst->nsid = dst->identity = dst->version = NULL;
	dst->control = dst->pid_file = dst->zones_dir = dst->file = dst->takeover = NULL;
	dst->tls_key_file = dst->tls_cert_file = dst->tls_ca_file = NULL;
	dst->state_dir = NULL;
	dst->log_file = NULL;
	dst->dnstap_file = dst->dnstap_socket = NULL;
	dst->keys = NULL;
	dst->key_count = 0;
	dst->zone_runs = NULL;
	dst->zone_names = NULL;
	dst->zone_run_count = dst->zone_run_cap = dst->zone_count = 0;
	dst->templates = NULL;
	dst->template_count = 0;
	dst->allow_query.list = (acl_t){ 0 };
	bool dnssec_copied = conf_dnssec_copy(dst, src); /* its pointers replaced first too */
	bool ok = dnssec_copied && conf_acl_dup(&dst->allow_query.list, &src->allow_query.list) &&
		  dup_string(&dst->user, src->user) && dup_string(&dst->group, src->group) &&
		  dup_string(&dst->nsid, src->nsid) && dup_string(&dst->identity, src->identity) &&
		  dup_string(&dst->version, src->version) &&
		  dup_string(&dst->control, src->control) &&
		  dup_string(&dst->pid_file, src->pid_file) &&
		  dup_string(&dst->log_file, src->log_file) &&
		  dup_string(&dst->dnstap_file, src->dnstap_file) &&
		  dup_string(&dst->dnstap_socket, src->dnstap_socket) &&
		  dup_string(&dst->zones_dir, src->zones_dir) &&
		  dup_string(&dst->state_dir, src->state_dir) &&
		  dup_string(&dst->file, src->file) && dup_string(&dst->takeover, src->takeover) &&
		  dup_string(&dst->tls_key_file, src->tls_key_file) &&
		  dup_string(&dst->tls_cert_file, src->tls_cert_file) &&
		  dup_string(&dst->tls_ca_file, src->tls_ca_file) && conf_templates_copy(dst, src);
	if (ok && src->key_count) {
		/* a key is plain memory (name, keyed HMAC state): copied whole */
		dst->keys = malloc(src->key_count * sizeof(*src->keys));
		ok = dst->keys != NULL;
		if (ok) {
			memcpy(dst->keys, src->keys, src->key_count * sizeof(*src->keys));
			dst->key_count = src->key_count;
		}
	}
	/* the zones shared: a reference per chunk and per part of the name index */
	if (!ok || !conf_zones_share(dst, src)) {
		conf_clear(dst);
		return SHOAL_ENOMEM;
	}
	return 0;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether option o has the same value in a and b. */
static bool option_same(const conf_option_t *o, const conf_t *a, const conf_t *b)
{
	const char *pa = (const char *)a + o->offset, *pb = (const char *)b + o->offset;
	switch (o->type) {
	case CONF_UINT:
	case CONF_ENUM:
		return *(const uint32_t *)pa == *(const uint32_t *)pb;
	case CONF_BOOL:
		return *(const bool *)pa == *(const bool *)pb;
	case CONF_STRING:
		return str_eq(*(char *const *)pa, *(char *const *)pb);
	case CONF_LISTEN: {
		size_t na, nb;
		const listen_addr_t *la = conf_listen_addrs(a, o, &na);
		const listen_addr_t *lb = conf_listen_addrs(b, o, &nb);
		if (na != nb)
			return false;
		for (size_t i = 0; i < na; i++)
			if (strcmp(la[i].text, lb[i].text))
				return false;
		return true;
	}
	case CONF_ADDR:
		return ((const listen_addr_t *)pa)->addr_len ==
			       ((const listen_addr_t *)pb)->addr_len &&
		       !strcmp(((const listen_addr_t *)pa)->text,
			       ((const listen_addr_t *)pb)->text);
	case CONF_PREFIXES: {
		const addr_prefix_list_t *la = (const void *)pa, *lb = (const void *)pb;
		return la->count == lb->count &&
		       !memcmp(la->items, lb->items, la->count * sizeof(la->items[0]));
	}
	case CONF_SECRET:
		return !memcmp(pa, pb, sizeof(conf_secret_t));
	case CONF_ZONES:
	case CONF_KEYS:
	case CONF_ACL:
	case CONF_POLICIES:
	case CONF_TEMPLATES:
		break; /* applied at runtime, never CONF_RESTART */
	}
	return true;
}

size_t conf_restart_changes(const conf_t *a, const conf_t *b, char *buf, size_t cap)
{
	size_t n = 0, len = 0;
	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; i < conf_option_count; i++) {
		const conf_option_t *o = &conf_options[i];
		if (!o->restart || option_same(o, a, b))
			continue;
		int w = snprintf(buf + len, cap > len ? cap - len : 0, "%s%s", n ? ", " : "",
				 o->name);
		if (w > 0 && len + (size_t)w < cap)
			len += (size_t)w;
		n++;
	}
	return n;
}

bool conf_zone_same_data(const conf_t *a, size_t i, const conf_t *b, size_t j)
{
	const zone_spec_t *x = conf_zone_spec(a, i), *y = conf_zone_spec(b, j);
	const zone_limits_t *l = &x->limits, *m = &y->limits;
	/* max_journal is left out: the journal kept takes a new bound without a load */
	return conf_zone_index(b, x->name) == (long)j && str_eq(x->file, y->file) &&
	       x->secondary == y->secondary && l->max_types_per_name == m->max_types_per_name &&
	       l->max_records_per_type == m->max_records_per_type &&
	       l->max_octets == m->max_octets && l->max_includes == m->max_includes &&
	       l->max_nsec3_iterations == m->max_nsec3_iterations;
}

/* Both NULL, or the same checks of a TLS server. */
static bool tls_auth_same(const tls_auth_t *x, const tls_auth_t *y)
{
	if (!x || !y)
		return x == y;
	return x->mode == y->mode && x->pin_count == y->pin_count &&
	       !memcmp(x->pins, y->pins, x->pin_count * TLS_PIN_LEN) &&
	       !strcmp(x->hostname, y->hostname);
}

/*
 * Whether entry x of a and entry y of b name the same peer with the same
 * key (by content) over the same transport.
 */
static bool acl_entry_same(const conf_t *a, const acl_entry_t *x, const conf_t *b,
			   const acl_entry_t *y)
{
	if (!addr_same((const struct sockaddr *)&x->addr, (const struct sockaddr *)&y->addr) ||
	    x->net.bits != y->net.bits || strcmp(x->text, y->text) || x->tls != y->tls ||
	    memcmp(x->pin, y->pin, TLS_PIN_LEN))
		return false;
	if (x->key == ACL_NOKEY || y->key == ACL_NOKEY)
		return x->key == y->key;
	/* indexes differ when keys were added or removed; the key itself must not */
	const tsig_key_t *k = &a->keys[x->key], *l = &b->keys[y->key];
	/* the keyed state is a function of the secret alone: equal states, equal secrets */
	return k->name_len == l->name_len && !memcmp(k->name, l->name, k->name_len) &&
	       k->alg == l->alg && k->mac_len == l->mac_len && k->mac_min == l->mac_min &&
	       !memcmp(&k->keyed, &l->keyed, sizeof(k->keyed));
}

bool conf_acl_entry_find(const conf_t *a, const acl_entry_t *x, const conf_t *b, const acl_t *list,
			 size_t *at)
{
	for (size_t k = 0; k < list->count; k++)
		if (acl_entry_same(a, x, b, &list->entries[k])) {
			*at = k;
			return true;
		}
	return false;
}

/* Whether lists p (of a) and q (of b) have the same entries in the same order, by content. */
static bool acl_same(const conf_t *a, const acl_t *p, const conf_t *b, const acl_t *q)
{
	if (p->count != q->count)
		return false;
	for (size_t k = 0; k < p->count; k++)
		if (!acl_entry_same(a, &p->entries[k], b, &q->entries[k]))
			return false;
	return true;
}

bool conf_zone_same_primaries(const conf_t *a, size_t i, const conf_t *b, size_t j)
{
	/* in order: the first primary is asked first; and checked over TLS the same way */
	return conf_zone_same_data(a, i, b, j) &&
	       acl_same(a, &conf_zone_xfr(a, i)->primaries, b, &conf_zone_xfr(b, j)->primaries) &&
	       tls_auth_same(conf_zone_xfr(a, i)->primaries_tls,
			     conf_zone_xfr(b, j)->primaries_tls);
}

bool conf_zone_same_settings(const conf_t *a, size_t i, const conf_t *b, size_t j)
{
	const conf_zone_xfr_t *x = conf_zone_xfr(a, i), *y = conf_zone_xfr(b, j);
	return conf_zone_same_primaries(a, i, b, j) &&
	       conf_zone_spec(a, i)->limits.max_journal ==
		       conf_zone_spec(b, j)->limits.max_journal &&
	       x->allow_notify_set == y->allow_notify_set &&
	       acl_same(a, &x->provide_xfr, b, &y->provide_xfr) &&
	       acl_same(a, &x->notify, b, &y->notify) &&
	       acl_same(a, &x->allow_notify, b, &y->allow_notify) &&
	       x->allow_query.set == y->allow_query.set &&
	       acl_same(a, &x->allow_query.list, b, &y->allow_query.list) &&
	       conf_zone_same_dnssec(a, i, b, j) && conf_catalog_same(a, x, b, y);
}
