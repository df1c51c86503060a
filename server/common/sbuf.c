/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A string that grows as text is added: the outputs of stats and of the control's replies. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/common/sbuf.h"

void sbuf_put(sbuf_t *b, const char *fmt, ...)
{
	for (int tries = 0; !b->failed && tries < 2; tries++) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
		} else if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		} else {
			size_t cap = (b->cap ? b->cap : 4096) * 2;
			while (cap < b->len + (size_t)n + 1)
				cap *= 2;
			char *p = realloc(b->p, cap);
			if (!p)
				b->failed = true;
			else
				b->p = p, b->cap = cap;
		}
	}
}

void sbuf_put_escaped(sbuf_t *b, const char *text, bool json)
{
	for (const char *c = text; *c; c++) {
		if (*c == '"' || *c == '\\')
			sbuf_put(b, "\\%c", *c);
		else if ((unsigned char)*c < 0x20 && json)
			sbuf_put(b, "\\u%04x", (unsigned)(unsigned char)*c);
		else if ((unsigned char)*c >= 0x20)
			sbuf_put(b, "%c", *c);
	}
}
