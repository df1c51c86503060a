/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading master file text with Knot's zone scanner (libzscanner) into the store builder. */
#include "config.h"

#include <libgen.h>
#include <libzscanner/scanner.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "zone/internal.h"

/*
 * The scanner counts lines but says nothing of where a record began; the
 * messages name a record's first line, as the ldns reader's do, so the
 * reader keeps its own count: `line` is the line at `pos`, where the
 * scanner took up the text.
 */
typedef struct zs_place {
	const char *pos;
	unsigned line;
} zs_place_t;

/*
 * The first line of the record the scanner read from p on, before end:
 * blank lines, comment lines and directives ($TTL and $ORIGIN, which the
 * scanner takes in without stopping) come before it. Moves *line on.
 */
static const char *record_start(const char *p, const char *end, unsigned *line)
{
	while (p < end) {
		const char *q = p;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (q < end && *q != '\n' && *q != ';' && *p != '$')
			return p;
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		if (!nl)
			return p;
		++*line;
		p = nl + 1;
	}
	return p;
}

/*
 * Past the rest of a record the scanner refused inside parentheses: it
 * skips to the closing one and the end of that line, as ldns, which reads
 * a whole record before looking at it, does too. Moves *line on.
 */
static const char *skip_multiline(const char *p, const char *end, unsigned *line)
{
	int depth = 1;
	bool quote = false;
	for (; p < end; p++) {
		char c = *p;
		if (c == '\n') {
			++*line;
			if (depth == 0)
				return p + 1;
		} else if (c == '\\' && p + 1 < end && p[1] != '\n') {
			p++;
		} else if (quote) {
			quote = c != '"';
		} else if (c == '"') {
			quote = true;
		} else if (c == ';') {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			p = (nl ? nl : end) - 1;
		} else if (c == '(') {
			depth++;
		} else if (c == ')') {
			depth -= depth > 0;
		}
	}
	return p;
}

/* Lines in p[0..end). */
static unsigned count_lines(const char *p, const char *end)
{
	unsigned n = 0;
	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		n++;
		p++;
	}
	return n;
}

/*
 * ldns reads CR LF line ends as LF and the scanner refuses them: a blank
 * for each CR before an LF keeps every offset and line, and reads as ldns
 * (and NSD) do.
 */
static void blank_crlf(char *text, size_t size)
{
	char *p = text, *end = text + size;
	while (p < end && (p = memchr(p, '\r', (size_t)(end - p)))) {
		if (p + 1 < end && p[1] == '\n')
			*p = ' ';
		p++;
	}
}

/*
 * A NUL octet ends a C string: ldns' reader refuses the line that holds
 * one. Report each such line and make it a comment, so the scanner reads
 * on past it as ldns does.
 */
static void blank_nul_lines(loader_t *L, const char *file, char *text, size_t size,
			    unsigned first_line)
{
	char *p = text, *end = text + size;
	while (p < end && (p = memchr(p, '\0', (size_t)(end - p)))) {
		char *start = p, *stop = p;
		while (start > text && start[-1] != '\n')
			start--;
		while (stop < end && *stop != '\n')
			stop++;
		zload_error(L, file, first_line + 1 + count_lines(text, start),
			    "a NUL octet in the line");
		memset(start, ' ', (size_t)(stop - start));
		if (stop > start)
			*start = ';';
		p = stop;
	}
}

/*
 * A line of blanks (and maybe a comment) before the first record with an
 * owner is a record without one to the scanner ("previous owner is
 * invalid"); to ldns, NSD and RFC 1035 5.1 it is a blank line. Such lines
 * become comments: the same octets and lines.
 */
static void comment_leading_blanks(char *text, size_t size)
{
	char *p = text, *end = text + size;
	while (p < end && *p != '\n' && (*p == ' ' || *p == '\t' || *p == ';' || *p == '$')) {
		char *q = p;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (p < q && (q == end || *q == '\n' || *q == ';'))
			*p = ';';
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		p = nl + 1;
		while (p < end && *p == '\n')
			p++;
	}
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/*
 * The octets of RFC 3597 generic RDATA ("\# N" and N octets in hex, on the
 * record's first line `rec`) into out; their count, or -1 when the line
 * does not hold exactly that.
 */
static long generic_rdata(const char *rec, const char *end, uint8_t *out, size_t cap)
{
	const char *p;
	long n = zbuild_generic_length(rec, &p);
	if (n < 0 || (size_t)n > cap)
		return -1;
	long got = 0;
	int high = -1;
	for (; p < end && *p != '\n' && *p != ';'; p++) {
		if (*p == ' ' || *p == '\t')
			continue;
		int v = hex_value(*p);
		if (v < 0 || got == n)
			return -1;
		if (high < 0) {
			high = v;
		} else {
			out[got++] = (uint8_t)(high << 4 | v);
			high = -1;
		}
	}
	return got == n && high < 0 ? n : -1;
}

/* Errors after which the scanner cannot go on with the text. */
static bool zs_error_final(int code)
{
	return code == ZS_UNCOVERED_STATE || code == ZS_UNCLOSED_MULTILINE || code == ZS_ENOMEM;
}

/* An $INCLUDE the scanner met at `line`: its file (resolved) and origin (text). */
static int zs_include(loader_t *L, const char *file, unsigned line, zs_scanner_t *s, int depth)
{
	uint8_t origin[NAME_MAXLEN];
	if (name_from_text((const char *)s->buffer, NULL, origin) < 0) {
		zload_error(L, file, line, "$INCLUDE origin must be an absolute domain name");
		return 0;
	}
	return zload_include(L, file, line, s->include_filename, origin, depth);
}

/*
 * A scanner is about 200 KiB, which malloc maps and unmaps each time: a
 * server of thousands of small zones paid the page faults of a fresh one
 * per zone. One finished scanner is kept for the next load (any thread
 * takes it whole, or allocates when another has it).
 */
static zs_scanner_t *spare_scanner;

static zs_scanner_t *scanner_take(void)
{
	zs_scanner_t *s = __atomic_exchange_n(&spare_scanner, NULL, __ATOMIC_ACQUIRE);
	return s ? s : malloc(sizeof(*s));
}

static void scanner_give(zs_scanner_t *s)
{
	zs_scanner_t *none = NULL;
	if (!__atomic_compare_exchange_n(&spare_scanner, &none, s, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED))
		free(s);
}

int zload_zs(loader_t *L, const char *file, char *text, size_t size, unsigned first_line,
	     uint8_t origin[NAME_MAXLEN], uint32_t *ttl, int depth)
{
	char dir[4096];
	zs_scanner_t *s = scanner_take();
	if (!s)
		return SHOAL_ENOMEM;
	int err = SHOAL_ENOMEM;
	if (zs_init(s, ".", DNS_CLASS_IN, *ttl) != 0) {
		scanner_give(s);
		return SHOAL_ENOMEM;
	}
	/*
	 * The origin goes in as wire, as the scanner keeps it: in text it
	 * would be read again, and the scanner refuses octets in names that
	 * name_to_text leaves plain (',' from "$INCLUDE x sub\,x.test.").
	 */
	size_t olen = name_length(origin);
	memcpy(s->zone_origin, origin, olen);
	s->zone_origin_length = (uint32_t)olen;
	/* a relative $INCLUDE is taken from the including file's folder */
	snprintf(dir, sizeof(dir), "%s", file);
	free(s->path);
	if (!(s->path = strdup(dirname(dir))))
		goto done;
	blank_crlf(text, size);
	blank_nul_lines(L, file, text, size, first_line);
	if (first_line == 0)
		comment_leading_blanks(text, size);
	if (zs_set_input_string(s, text, size) != 0)
		goto done;
	const char *end = text + size;
	zs_place_t at = { text, first_line + 1 };
	bool after_error = false, in_parens = false;
	err = 0;
	while (L->errors < LOAD_MAX_ERRORS) {
		if (zload_cancelled()) {
			err = SHOAL_ETIMEOUT;
			break;
		}
		/* set again only once the scanner has read this record's type */
		s->r_type = 0;
		int rc = zs_parse_record(s);
		/* past the text, the scanner reads a final line end of its own */
		const char *cur = s->input.current >= text && s->input.current <= end
					  ? s->input.current
					  : end;
		if (after_error && in_parens)
			at.pos = skip_multiline(at.pos, cur, &at.line);
		after_error = false;
		unsigned line = at.line;
		const char *rec = record_start(at.pos, cur, &line);
		at.line = line + count_lines(rec, cur);
		at.pos = cur;
		if (rc < 0 && s->state != ZS_STATE_ERROR) {
			err = SHOAL_ENOMEM;
			break;
		}
		if (s->state == ZS_STATE_EOF || s->state == ZS_STATE_NONE)
			break;
		long generic = -1;
		if (s->state == ZS_STATE_ERROR && s->r_type != 0)
			generic = generic_rdata(rec, cur, s->r_data, sizeof(s->r_data));
		if (s->state == ZS_STATE_DATA || generic >= 0) {
			/*
			 * The scanner refuses generic RDATA that does not fit a known
			 * type, in words of its own ("invalid number" for "NS \# 0");
			 * the builder's checks say what is wrong, as for ldns.
			 */
			uint16_t rdlen = (uint16_t)(generic >= 0 ? generic : s->r_data_length);
			/* no text: the scanner checked "\# N" against the octets itself */
			int e = zbuild_add(L->b, file, line, NULL, s->r_owner, s->r_type,
					   s->r_class, s->r_ttl, s->r_data, rdlen);
			if (e == SHOAL_EZONE)
				L->errors++;
			if (e == SHOAL_ENOMEM) {
				err = e;
				break;
			}
		} else if (s->state == ZS_STATE_INCLUDE) {
			if ((err = zs_include(L, file, first_line + (unsigned)s->line_counter, s,
					      depth)) < 0)
				break;
		} else if (s->state == ZS_STATE_ERROR) {
			/* a bad directive has no record after it: the scanner's line is its own */
			unsigned eline = s->line_counter && first_line + s->line_counter < line
						 ? first_line + (unsigned)s->line_counter
						 : line;
			zload_error(L, file, eline, zs_strerror(s->error.code));
			if (zs_error_final(s->error.code))
				break;
			s->error.fatal = false;
			after_error = true;
			in_parens = s->multiline;
		}
	}
	/* the state after the text, for the stretches that follow it */
	if (s->zone_origin_length <= NAME_MAXLEN)
		memcpy(origin, s->zone_origin, s->zone_origin_length);
	*ttl = s->default_ttl;
done:
	zs_deinit(s);
	scanner_give(s);
	return err;
}
