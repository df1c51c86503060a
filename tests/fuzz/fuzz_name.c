/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz target for proto/name: unpacking from a message, text in and out, order and hash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t hash_key[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* A heap copy of exactly len octets, so ASan sees a read past the name. */
static uint8_t *dup_exact(const void *src, size_t len)
{
	uint8_t *p = malloc(len > 0 ? len : 1);
	if (p == NULL)
		abort();
	memcpy(p, src, len);
	return p;
}

/*
 * Everything that must hold for a well-formed name of len octets: its
 * length and label count, the text round trip (name_to_text then
 * name_from_text gives the same octets, case kept), ESPACE for a buffer one
 * octet short, equality, order and hash agreeing with a lowercased copy,
 * and the parent sorting before the name and containing it.
 */
static void check_name(const uint8_t *name_in, size_t len)
{
	uint8_t *name = dup_exact(name_in, len);
	if (len < 1 || len > NAME_MAXLEN || name_length(name) != len || name_labels(name) < 0 ||
	    name_labels(name) > NAME_MAXLABELS - 1)
		abort();

	char *text = malloc(NAME_TEXT_MAX);
	if (text == NULL)
		abort();
	int tlen = name_to_text(name, text, NAME_TEXT_MAX);
	if (tlen <= 0 || tlen >= NAME_TEXT_MAX || strlen(text) != (size_t)tlen)
		abort();
	uint8_t back[NAME_MAXLEN];
	if (name_from_text(text, NULL, back) != (int)len || memcmp(back, name, len) != 0)
		abort();
	/* exactly the room needed (with the NUL) works; one octet less does not */
	char *tight = malloc((size_t)tlen + 1);
	if (tight == NULL)
		abort();
	if (name_to_text(name, tight, (size_t)tlen + 1) != tlen || strcmp(tight, text) != 0 ||
	    name_to_text(name, tight, (size_t)tlen) != SHOAL_ESPACE)
		abort();
	free(tight);
	free(text);

	uint8_t *low = dup_exact(name, len);
	name_lower(low);
	if (!name_equal(name, low) || !name_equal(low, name) || name_compare(name, low) != 0 ||
	    name_compare(low, name) != 0 || name_hash(name, hash_key) != name_hash(low, hash_key) ||
	    !name_is_subdomain(name, low) || name_is_wildcard(name) != name_is_wildcard(low))
		abort();
	for (size_t i = 0; i < len; i++)
		if (low[i] >= 'A' && low[i] <= 'Z')
			abort(); /* length octets are at most 63, below 'A' */
	free(low);

	if (name[0] != 0) {
		const uint8_t *parent = name_parent(name);
		if (parent != name + 1 + name[0] || !name_is_subdomain(name, parent) ||
		    name_is_subdomain(parent, name) || name_compare(parent, name) >= 0 ||
		    name_compare(name, parent) <= 0 || name_equal(name, parent))
			abort();
	} else if (name_parent(name) != name) {
		abort();
	}
	free(name);
}

/* Order and equality between two well-formed names agree both ways round. */
static void check_pair(const uint8_t *a, const uint8_t *b)
{
	int ab = name_compare(a, b), ba = name_compare(b, a);
	if (sign(ab) != -sign(ba) || (ab == 0) != name_equal(a, b))
		abort();
	if (ab == 0 && name_hash(a, hash_key) != name_hash(b, hash_key))
		abort();
	if (name_is_subdomain(a, b) && name_labels(a) < name_labels(b))
		abort();
}

/*
 * The input read two ways. As a message: the first octet is the offset of
 * a name in the rest, unpacked (as it stands and lowercased) and skipped;
 * both must agree on the octets and the end. As text: the input up to its
 * first NUL, parsed absolute and relative to an origin. Every name that
 * parses goes through check_name, and the two through check_pair.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t wire_name[NAME_MAXLEN];
	int wire_len = -1;
	if (size >= 1) {
		const uint8_t *msg = data + 1;
		size_t mlen = size - 1;
		size_t off = data[0];
		wire_t w, wl, ws;
		wire_init_read(&w, msg, mlen);
		wire_init_read(&wl, msg, mlen);
		wire_init_read(&ws, msg, mlen);
		w.pos = wl.pos = ws.pos = off <= mlen ? off : mlen;
		uint8_t lowered[NAME_MAXLEN];
		wire_len = name_unpack(&w, wire_name, false);
		int low_len = name_unpack(&wl, lowered, true);
		if (wire_len != low_len || (wire_len < 0) != (w.err != 0))
			abort();
		if (wire_len > 0) {
			uint8_t *copy = dup_exact(wire_name, (size_t)wire_len);
			name_lower(copy);
			if (memcmp(copy, lowered, (size_t)wire_len) != 0 || w.pos != wl.pos)
				abort();
			free(copy);
			/* name_skip stops after the first pointer, as unpack's cursor does */
			if (name_skip(&ws) != 0 || ws.pos != w.pos)
				abort();
			check_name(wire_name, (size_t)wire_len);
		}
	}

	char *text = malloc(size + 1);
	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	static const uint8_t origin[] = "\7example\3com";
	uint8_t abs_name[NAME_MAXLEN], rel_name[NAME_MAXLEN];
	int abs_len = name_from_text(text, NULL, abs_name);
	int rel_len = name_from_text(text, origin, rel_name);
	free(text);
	if (abs_len > 0) {
		check_name(abs_name, (size_t)abs_len);
		if (wire_len > 0)
			check_pair(abs_name, wire_name);
	}
	if (rel_len > 0) {
		check_name(rel_name, (size_t)rel_len);
		if (abs_len > 0)
			check_pair(rel_name, abs_name);
		/* a relative name ends in the origin, an absolute one is itself */
		if (abs_len > 0 &&
		    (rel_len != abs_len || memcmp(rel_name, abs_name, (size_t)abs_len)) &&
		    !name_is_subdomain(rel_name, origin))
			abort();
	}
	return 0;
}
