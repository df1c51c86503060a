/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Address lists: parsing "ADDR[/PREFIX|@PORT] KEY|NOKEY" entries and matching peers against them.
 */
#include "config.h"

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

int acl_entry_parse(const char *text, enum acl_kind kind, acl_entry_t *e, char *key_name,
		    size_t key_cap, char *err, size_t errlen)
{
	char addr[ACL_TEXT_MAX], key[ACL_TEXT_MAX], extra[8];
	memset(e, 0, sizeof(*e));
	e->key = ACL_NOKEY;
	int words = sscanf(text, "%319s %319s %7s", addr, key, extra);
	if (words < 2)
		return syntax(err, errlen, "\"%s\": expected %s followed by a key name or NOKEY",
			      text, kind == ACL_MATCH ? "ADDR[/PREFIX]" : "ADDR[@PORT]");
	if (words > 2)
		return syntax(err, errlen, "\"%s\": unexpected words after the key name", text);
	addr_parsed_t a;
	if (addr_parse(addr, kind == ACL_MATCH ? ADDR_BITS | ADDR_NETWORK : ADDR_PORT, &a, err,
		       errlen) < 0)
		return SHOAL_ESYNTAX;
	e->addr = a.sa;
	e->addr_len = a.len;
	addr_prefix_of(&e->net, (const struct sockaddr *)&a.sa, a.bits);
	/* as written, for logs: a server's with the port it is sent to */
	bool port = kind == ACL_TARGET && !strchr(addr, '@');
	snprintf(e->text, sizeof(e->text), "%.*s%s", ACL_TEXT_MAX - 4, addr, port ? "@53" : "");
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

const acl_entry_t *acl_find(const acl_t *a, const struct sockaddr *peer, int key)
{
	const uint8_t *ip;
	size_t len = addr_octets(peer, &ip);
	return len ? acl_find_ip(a, ip, len, key) : NULL;
}

QUERY_PATH const acl_entry_t *acl_find_ip(const acl_t *a, const uint8_t *ip, size_t ip_len, int key)
{
	for (size_t i = 0; i < a->count; i++) {
		const acl_entry_t *e = &a->entries[i];
		if (e->key == key && addr_prefix_match(&e->net, ip, ip_len))
			return e;
	}
	return NULL;
}

QUERY_PATH bool acl_allow_query(const void *policy, const answer_ctx_t *ctx)
{
	return acl_find_ip(policy, ctx->client_ip, ctx->client_ip_len, ctx->tsig_key) != NULL;
}
