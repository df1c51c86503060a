/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The zones' names and file paths: one pool that the configurations of a reconfig share. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "server/conf/internal.h"

/* Octets of one block: 4,000 zones' names and paths, about. */
#define STRINGS_BLOCK 65536

typedef struct strings_block {
	struct strings_block *next;
	size_t used, cap;
	char text[];
} strings_block_t;

struct conf_strings {
	size_t refs;           /* configurations holding it: atomic, freed by the last */
	strings_block_t *head; /* the block strings are cut from; older ones follow */
	size_t used;           /* octets cut, over every block (main thread) */
};

conf_strings_t *conf_strings_new(void)
{
	conf_strings_t *s = calloc(1, sizeof(*s));
	if (s)
		s->refs = 1;
	return s;
}

conf_strings_t *conf_strings_ref(conf_strings_t *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void conf_strings_unref(conf_strings_t *s)
{
	/* acquire-release: the last holder sees every string the others wrote */
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (strings_block_t *b = s->head, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(s);
}

const char *conf_strings_dup(conf_strings_t *s, const char *text)
{
	size_t len = strlen(text) + 1;
	strings_block_t *b = s->head;
	if (!b || b->cap - b->used < len) {
		size_t cap = len > STRINGS_BLOCK ? len : STRINGS_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		*b = (strings_block_t){ .next = s->head, .cap = cap };
		s->head = b;
	}
	char *out = memcpy(b->text + b->used, text, len);
	b->used += len;
	s->used += len;
	return out;
}

bool conf_strings_shareable(const conf_strings_t *s, size_t held)
{
	/*
	 * What zones removed (or added by a configuration refused) left behind
	 * stays until the pool goes: once it passes what the configuration
	 * holds, the copy takes a pool of its own, so each octet left behind
	 * is copied at most once and the pool is at most about twice its use.
	 */
	return s->used <= 2 * held + STRINGS_BLOCK;
}
