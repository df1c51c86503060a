/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Address lists: parsing "ADDR[/PREFIX|@PORT] KEY|NOKEY" entries and matching peers against them.
 */
#include "config.h"

#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "proto/hot.h"
#include "server/conf/acl.h"
#include "zone/answer.h"

static int syntax(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int syntax(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return SHOAL_ESYNTAX;
}

/* The words after the key: "tls", and for a block "tls PIN" or "tls ca". */
static int parse_tls(const char *text, enum acl_kind kind, int words, const char *w3,
		     const char *w4, acl_entry_t *e, char *err, size_t errlen)
{
	if (words < 3)
		return 0;
	if (strcasecmp(w3, "tls") || words > 4)
		return syntax(err, errlen,
			      "\"%s\": unexpected words after the key name (only \"tls\" may "
			      "follow it)",
			      text);
	e->tls = ACL_TLS;
	if (words < 4)
		return 0;
	if (kind != ACL_MATCH)
		return syntax(err, errlen,
			      "\"%s\": a server's certificate is checked by the zone's tls-pin "
			      "or tls-hostname, not here",
			      text);
	if (!strcasecmp(w4, "ca")) {
		e->tls = ACL_TLS_CA;
		return 0;
	}
	if (tls_pin_parse(w4, e->pin) < 0)
		return syntax(err, errlen,
			      "\"%s\": after tls, \"ca\" or a client's SPKI pin (44 "
			      "characters of base64), not \"%s\"",
			      text, w4);
	e->tls = ACL_TLS_PIN;
	return 0;
}

int acl_entry_parse(const char *text, enum acl_kind kind, acl_entry_t *e, char *key_name,
		    size_t key_cap, char *err, size_t errlen)
{
	char addr[ACL_TEXT_MAX], key[ACL_TEXT_MAX], w3[8], w4[64], extra[8];
	memset(e, 0, sizeof(*e));
	e->key = ACL_NOKEY;
	int words = sscanf(text, "%319s %319s %7s %63s %7s", addr, key, w3, w4, extra);
	if (words < 2)
		return syntax(err, errlen, "\"%s\": expected %s followed by a key name or NOKEY",
			      text, kind == ACL_MATCH ? "ADDR[/PREFIX]" : "ADDR[@PORT]");
	if (parse_tls(text, kind, words, w3, w4, e, err, errlen) < 0)
		return SHOAL_ESYNTAX;
	addr_parsed_t a;
	if (addr_parse(addr, kind == ACL_MATCH ? ADDR_BITS | ADDR_NETWORK : ADDR_PORT, &a, err,
		       errlen) < 0)
		return SHOAL_ESYNTAX;
	e->addr = a.sa;
	e->addr_len = a.len;
	addr_prefix_of(&e->net, (const struct sockaddr *)&a.sa, a.bits);
	/* as written, for logs: a server's with the port it is sent to (RFC 9103: 853 for TLS) */
	bool port = kind == ACL_TARGET && !strchr(addr, '@');
	if (port && e->tls)
		addr_set_port((struct sockaddr *)&e->addr, 853);
	snprintf(e->text, sizeof(e->text), "%.*s%s", ACL_TEXT_MAX - 5, addr,
		 !port    ? ""
		 : e->tls ? "@853"
			  : "@53");
	if (!strcasecmp(key, "NOKEY"))
		key[0] = '\0';
	snprintf(key_name, key_cap, "%s", key);
	return 0;
}

int acl_add(acl_t *a, const acl_entry_t *e)
{
	acl_entry_t *p = realloc(a->entries, (a->count + 1) * sizeof(*p));
	if (!p)
		return SHOAL_ENOMEM;
	a->entries = p;
	a->entries[a->count++] = *e;
	return 0;
}

void acl_clear(acl_t *a)
{
	free(a->entries);
	a->entries = NULL;
	a->count = 0;
}

bool acl_entry_matches(const acl_entry_t *e, const struct sockaddr *peer)
{
	const uint8_t *ip;
	size_t len = addr_octets(peer, &ip);
	return len && addr_prefix_match(&e->net, ip, len);
}

const char *acl_tls_unmet(const acl_entry_t *e, const acl_client_t *c)
{
	if (e->tls == ACL_TLS_NONE)
		return NULL;
	if (!c->tls)
		return "TLS";
	if (e->tls == ACL_TLS_PIN && !(c->cert && sodium_memcmp(c->pin, e->pin, TLS_PIN_LEN) == 0))
		return c->cert ? "a client certificate of the pinned key (another key was shown)"
			       : "a client certificate of the pinned key (none was shown)";
	if (e->tls == ACL_TLS_CA && !(c->cert && c->ca))
		return c->cert ? "a client certificate signed by tls-ca-file (it is not)"
			       : "a client certificate signed by tls-ca-file (none was shown)";
	return NULL;
}

const acl_entry_t *acl_find_client(const acl_t *a, const acl_client_t *c, int key,
				   const acl_entry_t **unmet)
{
	if (unmet)
		*unmet = NULL;
	for (size_t i = 0; i < a->count; i++) {
		const acl_entry_t *e = &a->entries[i];
		if (e->key != key || !acl_entry_matches(e, c->addr))
			continue;
		if (!acl_tls_unmet(e, c))
			return e;
		if (unmet && !*unmet)
			*unmet = e;
	}
	return NULL;
}

const acl_entry_t *acl_find(const acl_t *a, const struct sockaddr *peer, int key)
{
	acl_client_t c = { .addr = peer };
	return acl_find_client(a, &c, key, NULL);
}

QUERY_PATH const acl_entry_t *acl_find_ip(const acl_t *a, const uint8_t *ip, size_t ip_len, int key)
{
	for (size_t i = 0; i < a->count; i++) {
		const acl_entry_t *e = &a->entries[i];
		/* an entry that asks for TLS needs the connection: acl_find_client's */
		if (e->key == key && e->tls == ACL_TLS_NONE &&
		    addr_prefix_match(&e->net, ip, ip_len))
			return e;
	}
	return NULL;
}

QUERY_PATH bool acl_allow_query(const void *policy, const answer_ctx_t *ctx)
{
	return acl_find_ip(policy, ctx->client_ip, ctx->client_ip_len, ctx->tsig_key) != NULL;
}
