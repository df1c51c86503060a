/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A string that grows as text is added to it and remembers running out of memory. */
#ifndef SHOAL_SERVER_COMMON_SBUF_H
#define SHOAL_SERVER_COMMON_SBUF_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Start it as { 0 }. p is NUL-terminated once anything (even "") was
 * added and nothing failed; the caller frees p. After a failure every
 * later call does nothing and `failed` stays true, so a writer checks once
 * at the end. Not for the query path (it allocates); one thread at a time.
 */
typedef struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
} sbuf_t;

/* Append printf(fmt, ...) to b, growing it as needed. */
void sbuf_put(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Append text with `"` and `\` escaped by a backslash, as a JSON string and
 * a Prometheus label value both want them; control characters (which zone
 * names and paths do not hold in practice) become \u00XX for JSON and are
 * dropped otherwise (the exposition format has no escape for them).
 */
void sbuf_put_escaped(sbuf_t *b, const char *text, bool json);

#endif
