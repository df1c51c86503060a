/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Domain names in wire form: unpacking with compression, order, hash, text. */
#include <assert.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "proto/hot.h"
#include "proto/name.h"

/* RFC 1035 4.1.4: a name is at most 127 labels, so more hops is a loop. */
#define NAME_MAX_HOPS 127

/*
 * Lowercase the 8 octets of x at once: an octet below 0x80 in 'A'..'Z' gets
 * 0x20 added. Adding to the low 7 bits never carries into the next octet.
 */
static inline uint64_t lower_word(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL;
	uint64_t low7 = x & (0x7f * ones);
	uint64_t ge_a = low7 + (0x80 - 'A') * ones;     /* high bit: >= 'A' */
	uint64_t gt_z = low7 + (0x80 - 'Z' - 1) * ones; /* high bit: > 'Z' */
	uint64_t upper = ge_a & ~gt_z & ~x & (0x80 * ones);
	return x | (upper >> 2);
}

/* Lowercase name[0..len) in place, a word at a time; length octets pass unchanged. */
static void lower_flat(uint8_t *name, size_t len)
{
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t x;
		memcpy(&x, name + i, 8);
		x = lower_word(x);
		memcpy(name + i, &x, 8);
	}
	for (; i < len; i++)
		name[i] = name_lower_octet(name[i]);
}

QUERY_PATH int name_unpack(wire_t *w, uint8_t dst[NAME_MAXLEN], bool lower)
{
	if (w->err)
		return w->err;
	const uint8_t *buf = w->buf;
	size_t p = w->pos;
	size_t end = 0;
	bool jumped = false;
	size_t out = 0;
	int hops = 0;

	for (;;) {
		if (p >= w->len)
			goto done;
		uint8_t c = buf[p];
		if ((c & 0xc0) == 0xc0) {
			if (p + 1 >= w->len)
				goto done;
			size_t target = (size_t)(c & 0x3f) << 8 | buf[p + 1];
			/* only backward pointers; the hop limit ends any loop */
			if (target >= p || ++hops > NAME_MAX_HOPS)
				goto done;
			if (!jumped) {
				end = p + 2;
				jumped = true;
			}
			p = target;
			continue;
		}
		if (c & 0xc0)
			goto done; /* label types 01 and 10 (RFC 6891 9) */
		if (c == 0) {
			if (out + 1 > NAME_MAXLEN)
				goto done;
			dst[out++] = 0;
			if (!jumped)
				end = p + 1;
			break;
		}
		if (p + 1 + c > w->len || out + 1 + c + 1 > NAME_MAXLEN)
			goto done;
		/* bounds checked above for the whole label: copy it as one block */
		memcpy(dst + out, buf + p, 1 + (size_t)c);
		out += 1 + (size_t)c;
		p += 1 + (size_t)c;
	}
	if (lower)
		lower_flat(dst, out);
	w->pos = end;
	return (int)out;
done:
	w->err = SHOAL_EMALFORMED;
	return SHOAL_EMALFORMED;
}

QUERY_PATH int name_skip(wire_t *w)
{
	if (w->err)
		return w->err;
	size_t p = w->pos;
	size_t total = 0;
	for (;;) {
		if (p >= w->len)
			goto done;
		uint8_t c = w->buf[p];
		if ((c & 0xc0) == 0xc0) {
			if (p + 1 >= w->len)
				goto done;
			w->pos = p + 2;
			return 0;
		}
		if (c & 0xc0)
			goto done;
		total += 1 + (size_t)c;
		if (total > NAME_MAXLEN)
			goto done;
		p += 1 + (size_t)c;
		if (c == 0) {
			w->pos = p;
			return 0;
		}
	}
done:
	w->err = SHOAL_EMALFORMED;
	return SHOAL_EMALFORMED;
}

QUERY_PATH size_t name_length(const uint8_t *name)
{
	const uint8_t *p = name;
	while (*p)
		p += 1 + *p;
	return (size_t)(p - name) + 1;
}

int name_labels(const uint8_t *name)
{
	int n = 0;
	for (const uint8_t *p = name; *p; p += 1 + *p)
		n++;
	return n;
}

QUERY_PATH void name_lower(uint8_t *name)
{
	for (uint8_t *p = name; *p; p += 1 + *p)
		for (uint8_t i = 1; i <= *p; i++)
			p[i] = name_lower_octet(p[i]);
}

QUERY_PATH bool name_equal(const uint8_t *a, const uint8_t *b)
{
	for (;;) {
		if (*a != *b)
			return false;
		if (*a == 0)
			return true;
		/* octets are mostly equal as they stand: lowercase only when not */
		for (uint8_t i = 1; i <= *a; i++)
			if (a[i] != b[i] && name_lower_octet(a[i]) != name_lower_octet(b[i]))
				return false;
		a += 1 + *a;
		b += 1 + *b;
	}
}

QUERY_PATH bool name_is_subdomain(const uint8_t *name, const uint8_t *parent)
{
	int skip = name_labels(name) - name_labels(parent);
	if (skip < 0)
		return false;
	while (skip-- > 0)
		name += 1 + *name;
	return name_equal(name, parent);
}

QUERY_PATH const uint8_t *name_parent(const uint8_t *name)
{
	return *name ? name + 1 + *name : name;
}

bool name_is_wildcard(const uint8_t *name)
{
	return name[0] == 1 && name[1] == '*';
}

static_assert(NAME_MAXLEN - 1 <= UINT8_MAX, "a label's offset in a name fits an octet");

/* Offsets of the labels of name, first label first; returns the count. */
QUERY_PATH int name_label_offsets(const uint8_t *name, uint8_t off[NAME_MAXLABELS])
{
	int n = 0;
	for (size_t p = 0; name[p] && n < NAME_MAXLABELS; p += 1 + (size_t)name[p])
		off[n++] = (uint8_t)p;
	return n;
}

int name_compare(const uint8_t *a, const uint8_t *b)
{
	uint8_t ao[NAME_MAXLABELS], bo[NAME_MAXLABELS];
	int an = name_label_offsets(a, ao);
	int bn = name_label_offsets(b, bo);
	/* RFC 4034 6.1: compare labels from the root, as lowercase octets */
	while (an > 0 && bn > 0) {
		const uint8_t *la = a + ao[--an];
		const uint8_t *lb = b + bo[--bn];
		uint8_t n = la[0] < lb[0] ? la[0] : lb[0];
		for (uint8_t i = 1; i <= n; i++) {
			uint8_t ca = name_lower_octet(la[i]), cb = name_lower_octet(lb[i]);
			if (ca != cb)
				return ca < cb ? -1 : 1;
		}
		if (la[0] != lb[0])
			return la[0] < lb[0] ? -1 : 1;
	}
	return an == bn ? 0 : (an < bn ? -1 : 1);
}

QUERY_PATH uint64_t name_hash(const uint8_t *name, const uint8_t key[16])
{
	/*
	 * One copy, then the lowercasing a word at a time. Length octets (at
	 * most 63) are below 'A' and pass unchanged, so the whole name is
	 * lowercased as flat bytes.
	 */
	uint64_t low[(NAME_MAXLEN + 7) / 8];
	size_t len = name_length(name);
	assert(len <= NAME_MAXLEN); /* a name checked when read: low holds it */
	size_t words = (len + 7) / 8;
	low[words - 1] = 0; /* the tail past len: hashed never, but defined */
	memcpy(low, name, len);
	for (size_t i = 0; i < words; i++)
		low[i] = lower_word(low[i]);
	return name_hash_lower((const uint8_t *)low, len, key);
}

QUERY_PATH uint64_t name_hash_lower(const uint8_t *name, size_t len, const uint8_t key[16])
{
	uint8_t out[crypto_shorthash_siphash24_BYTES];
	/* the algorithm by name: crypto_shorthash is one more call to it */
	crypto_shorthash_siphash24(out, name, len, key);
	uint64_t h;
	memcpy(&h, out, sizeof(h));
	return h;
}

int name_from_text(const char *text, const uint8_t *origin, uint8_t dst[NAME_MAXLEN])
{
	size_t out = 0;
	const char *p = text;

	if (strcmp(text, "@") == 0) {
		if (!origin)
			return SHOAL_ENAME;
		size_t len = name_length(origin);
		memcpy(dst, origin, len);
		return (int)len;
	}
	if (strcmp(text, ".") == 0) {
		dst[0] = 0;
		return 1;
	}
	if (*p == '\0')
		return SHOAL_ENAME;
	bool absolute = false;
	while (*p) {
		size_t lab = out++;
		uint8_t n = 0;
		while (*p && *p != '.') {
			int c = (unsigned char)*p++;
			if (c == '\\') {
				if (p[0] >= '0' && p[0] <= '9') {
					if (!(p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
					      p[2] <= '9'))
						return SHOAL_ENAME;
					c = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
					if (c > 255)
						return SHOAL_ENAME;
					p += 3;
				} else if (*p) {
					c = (unsigned char)*p++;
				} else {
					return SHOAL_ENAME;
				}
			}
			if (n == 63 || out + 1 >= NAME_MAXLEN)
				return SHOAL_ENAME;
			dst[out++] = (uint8_t)c;
			n++;
		}
		if (n == 0)
			return SHOAL_ENAME; /* empty label: "a..b" or ".a" */
		dst[lab] = n;
		if (*p == '.') {
			p++;
			if (*p == '\0')
				absolute = true;
		}
	}
	if (!absolute && origin) {
		size_t olen = name_length(origin);
		if (out + olen > NAME_MAXLEN)
			return SHOAL_ENAME;
		memcpy(dst + out, origin, olen);
		return (int)(out + olen);
	}
	if (out + 1 > NAME_MAXLEN)
		return SHOAL_ENAME;
	dst[out++] = 0;
	return (int)out;
}

/*
 * Octets a name's text holds bare. RFC 1035 5.1 escapes an octet as \X or
 * \DDD wherever its meaning would otherwise differ; readers differ on which
 * do: Knot's zone scanner reads only letters, digits, "-", "_", "/" and "*"
 * bare, and refuses "a,b", "a+b" or "a=b". Writing everything else escaped
 * is what every reader reads back as it was.
 */
static bool octet_bare(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '/' || c == '*';
}

int name_to_text(const uint8_t *name, char *dst, size_t cap)
{
	size_t o = 0;
	if (cap < 2)
		return SHOAL_ESPACE;
	if (name[0] == 0) {
		dst[0] = '.';
		dst[1] = '\0';
		return 1;
	}
	for (const uint8_t *p = name; *p; p += 1 + *p) {
		for (uint8_t i = 1; i <= *p; i++) {
			uint8_t c = p[i];
			/* the other printable characters as \X, blanks and the rest as \DDD */
			if (octet_bare(c)) {
				if (o + 1 >= cap)
					return SHOAL_ESPACE;
				dst[o++] = (char)c;
			} else if (c > 0x20 && c < 0x7f) {
				if (o + 2 >= cap)
					return SHOAL_ESPACE;
				dst[o++] = '\\';
				dst[o++] = (char)c;
			} else {
				if (o + 4 >= cap)
					return SHOAL_ESPACE;
				snprintf(dst + o, cap - o, "\\%03u", c);
				o += 4;
			}
		}
		if (o + 1 >= cap)
			return SHOAL_ESPACE;
		dst[o++] = '.';
	}
	dst[o] = '\0';
	return (int)o;
}

int name_zone_text(const char *text, char *dst, size_t cap)
{
	static const uint8_t root[1] = { 0 };
	uint8_t wire[NAME_MAXLEN];
	/* relative to the root: a final dot or none, the same name */
	if (name_from_text(text, root, wire) < 0)
		return SHOAL_ENAME;
	name_lower(wire);
	return name_to_text(wire, dst, cap);
}
