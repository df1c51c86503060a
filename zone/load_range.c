/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The ldns reader's number ranges: ldns wraps a number too big for its
 * field (MX 70000 is read as 4464, a TTL of 99999999999 as 1215752191)
 * where Knot's scanner refuses it. The record's text is looked at again
 * here, so the two readers refuse the same records with the same words.
 */
#include "config.h"

#include <ctype.h>
#include <ldns/ldns.h>
#include <libzscanner/scanner.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "zone/internal.h"

/* One word of a record's text: a quoted string whole, parentheses and comments skipped. */
typedef struct words {
	const char *p, *end;
} words_t;

static bool next_word(words_t *w, const char **word, size_t *len)
{
	while (w->p < w->end) {
		char c = *w->p;
		if (c == ';') {
			while (w->p < w->end && *w->p != '\n')
				w->p++;
		} else if (isspace((unsigned char)c) || c == '(' || c == ')') {
			w->p++;
		} else {
			break;
		}
	}
	if (w->p >= w->end)
		return false;
	const char *start = w->p;
	bool quote = *w->p == '"';
	for (w->p += quote; w->p < w->end; w->p++) {
		char c = *w->p;
		if (c == '\\' && w->p + 1 < w->end) {
			w->p++;
		} else if (quote ? c == '"'
				 : isspace((unsigned char)c) || c == '(' || c == ')' || c == ';') {
			w->p += quote;
			break;
		}
	}
	*word = start;
	*len = (size_t)(w->p - start);
	return true;
}

/* Seconds of a TTL unit letter (RFC 1035 has none; BIND's, as both readers take them). */
static uint64_t unit_seconds(char c)
{
	switch (tolower((unsigned char)c)) {
	case 's':
		return 1;
	case 'm':
		return 60;
	case 'h':
		return 3600;
	case 'd':
		return 86400;
	case 'w':
		return 604800;
	default:
		return 0;
	}
}

/*
 * A number word for a field of `bits` (with TTL units when `units`): 0
 * when it fits, or is no number at all (ldns judges that); else the
 * scanner's error code.
 */
static int number_fits(const char *word, size_t len, int bits, bool units)
{
	if (len && word[0] == '-')
		return ZS_BAD_NUMBER;
	if (!len || !isdigit((unsigned char)word[0]))
		return 0;
	uint64_t max = bits == 32 ? UINT32_MAX : (1u << bits) - 1, total = 0, n = 0;
	int overflow = bits == 32   ? ZS_NUMBER32_OVERFLOW
		       : bits == 16 ? ZS_NUMBER16_OVERFLOW
				    : ZS_NUMBER8_OVERFLOW;
	for (size_t i = 0; i < len; i++) {
		if (isdigit((unsigned char)word[i])) {
			n = n * 10 + (uint64_t)(word[i] - '0');
		} else if (units && unit_seconds(word[i])) {
			total += n * unit_seconds(word[i]);
			n = 0;
		} else {
			return 0;
		}
		if (n > max || total > max)
			return overflow;
	}
	return total + n > max ? overflow : 0;
}

static bool is_class(const char *word, size_t len)
{
	static const char *const classes[] = { "IN", "CH", "CS", "HS", "NONE", "ANY" };
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (len == strlen(classes[i]) && strncasecmp(word, classes[i], len) == 0)
			return true;
	return len > 5 && strncasecmp(word, "CLASS", 5) == 0;
}

/* Is word the type's mnemonic or its TYPEnnn (RFC 3597 5)? */
static bool is_type(const char *word, size_t len, uint16_t type)
{
	const ldns_rr_descriptor *d = ldns_rr_descript(type);
	if (d && d->_name && len == strlen(d->_name) && strncasecmp(word, d->_name, len) == 0)
		return true;
	char generic[16];
	int n = snprintf(generic, sizeof(generic), "TYPE%u", type);
	return len == (size_t)n && strncasecmp(word, generic, len) == 0;
}

const char *zload_range_error(const char *text, size_t len, bool directive, uint16_t type)
{
	words_t w = { text, text + len };
	const char *word;
	size_t wlen;
	int err = 0;
	if (directive) {
		/* $TTL <number> (RFC 2308 4) */
		if (next_word(&w, &word, &wlen) && next_word(&w, &word, &wlen))
			err = number_fits(word, wlen, 32, true);
		return err ? zs_strerror(err) : NULL;
	}
	/* the owner, when the record has its own (it starts the line) */
	if (len && !isspace((unsigned char)text[0]) && !next_word(&w, &word, &wlen))
		return NULL;
	/* the TTL and class, in either order, up to the type */
	for (;;) {
		if (!next_word(&w, &word, &wlen))
			return NULL;
		if (is_type(word, wlen, type))
			break;
		if (!is_class(word, wlen) && (err = number_fits(word, wlen, 32, true)))
			return zs_strerror(err);
	}
	const ldns_rr_descriptor *d = ldns_rr_descript(type);
	if (!d)
		return NULL;
	/* the fields up to the first that is not one word of a known kind */
	for (size_t i = 0; i < ldns_rr_descriptor_maximum(d); i++) {
		if (!next_word(&w, &word, &wlen))
			return NULL;
		if (i == 0 && wlen == 2 && memcmp(word, "\\#", 2) == 0)
			return NULL; /* RFC 3597's generic form: checked by its length */
		switch (ldns_rr_descriptor_field_type(d, i)) {
		case LDNS_RDF_TYPE_INT8:
		case LDNS_RDF_TYPE_ALG:
			err = number_fits(word, wlen, 8, false);
			break;
		case LDNS_RDF_TYPE_INT16:
			err = number_fits(word, wlen, 16, false);
			break;
		case LDNS_RDF_TYPE_INT32:
			err = number_fits(word, wlen, 32, false);
			break;
		case LDNS_RDF_TYPE_PERIOD:
			err = number_fits(word, wlen, 32, true);
			break;
		case LDNS_RDF_TYPE_DNAME:
		case LDNS_RDF_TYPE_A:
		case LDNS_RDF_TYPE_AAAA:
		case LDNS_RDF_TYPE_TYPE:
		case LDNS_RDF_TYPE_TIME:
			break;
		default:
			return NULL;
		}
		if (err)
			return zs_strerror(err);
	}
	return NULL;
}
