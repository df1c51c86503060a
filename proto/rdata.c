/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The RDATA layout of every known type, and the one walk that checks RDATA and finds its names. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/hot.h"
#include "proto/name.h"
#include "proto/rdata.h"

#define U8     RDATA_U8
#define U16    RDATA_U16
#define U32    RDATA_U32
#define NAME   RDATA_NAME
#define NAME_C RDATA_NAME_C
#define STRING RDATA_STRING
#define REST   RDATA_REST

/*
 * Every type with a defined RDATA layout that ldns reads from text (and
 * some more), sorted by type number. The layouts are those of the RFC that
 * defines each type (named in the comment); compressible names are those
 * of RFC 1035 3.3 as RFC 3597 4 lists them, no others.
 */
static const rdata_desc_t descs[] = {
	{ DNS_TYPE_A, "A", { RDATA_A } },  /* RFC 1035 3.4.1 */
	{ DNS_TYPE_NS, "NS", { NAME_C } }, /* RFC 1035 3.3.11 */
	{ DNS_TYPE_MD, "MD", { NAME_C } },
	{ DNS_TYPE_MF, "MF", { NAME_C } },
	{ DNS_TYPE_CNAME, "CNAME", { NAME_C } },
	{ DNS_TYPE_SOA, "SOA", { NAME_C, NAME_C, U32, U32, U32, U32, U32 } },
	{ DNS_TYPE_MB, "MB", { NAME_C } },
	{ DNS_TYPE_MG, "MG", { NAME_C } },
	{ DNS_TYPE_MR, "MR", { NAME_C } },
	{ DNS_TYPE_NULL, "NULL", { REST } },
	{ DNS_TYPE_WKS, "WKS", { RDATA_A, U8, REST } },
	{ DNS_TYPE_PTR, "PTR", { NAME_C } },
	{ DNS_TYPE_HINFO, "HINFO", { STRING, STRING } },
	{ DNS_TYPE_MINFO, "MINFO", { NAME_C, NAME_C } },
	{ DNS_TYPE_MX, "MX", { U16, NAME_C } },
	{ DNS_TYPE_TXT, "TXT", { RDATA_STRINGS } },
	{ DNS_TYPE_RP, "RP", { NAME, NAME } }, /* RFC 1183 */
	{ DNS_TYPE_AFSDB, "AFSDB", { U16, NAME } },
	{ 19, "X25", { STRING } },
	{ 20, "ISDN", { RDATA_STRINGS } }, /* one or two */
	{ 21, "RT", { U16, NAME } },
	{ 22, "NSAP", { REST } }, /* RFC 1706 */
	{ 23, "NSAP-PTR", { NAME } },
	/* RFC 2535 */
	{ DNS_TYPE_SIG, "SIG", { U16, U8, U8, U32, U32, U32, U16, NAME, REST } },
	{ DNS_TYPE_KEY, "KEY", { U16, U8, U8, REST } },
	{ 26, "PX", { U16, NAME, NAME } },                          /* RFC 2163 */
	{ 27, "GPOS", { STRING, STRING, STRING } },                 /* RFC 1712 */
	{ DNS_TYPE_AAAA, "AAAA", { RDATA_AAAA } },                  /* RFC 3596 */
	{ DNS_TYPE_LOC, "LOC", { U8, U8, U8, U8, U32, U32, U32 } }, /* RFC 1876 2 */
	{ DNS_TYPE_NXT, "NXT", { NAME, REST } },
	{ 31, "EID", { REST } },
	{ 32, "NIMLOC", { REST } },
	{ DNS_TYPE_SRV, "SRV", { U16, U16, U16, NAME } }, /* RFC 2782 */
	{ 34, "ATMA", { REST } },
	{ DNS_TYPE_NAPTR, "NAPTR", { U16, U16, STRING, STRING, STRING, NAME } }, /* RFC 3403 */
	{ DNS_TYPE_KX, "KX", { U16, NAME } },                                    /* RFC 2230 */
	{ DNS_TYPE_CERT, "CERT", { U16, U16, U8, REST } },                       /* RFC 4398 */
	{ 38, "A6", { RDATA_A6 } },
	{ DNS_TYPE_DNAME, "DNAME", { NAME } }, /* RFC 6672 2.1 */
	{ 42, "APL", { RDATA_APL } },
	{ DNS_TYPE_DS, "DS", { U16, U8, U8, REST } },  /* RFC 4034 5.1 */
	{ DNS_TYPE_SSHFP, "SSHFP", { U8, U8, REST } }, /* RFC 4255 */
	{ 45, "IPSECKEY", { U8, U8, U8, RDATA_GATEWAY, REST } },
	/* RFC 4034 3.1 */
	{ DNS_TYPE_RRSIG, "RRSIG", { U16, U8, U8, U32, U32, U32, U16, NAME, REST } },
	{ DNS_TYPE_NSEC, "NSEC", { NAME, RDATA_BITMAP } },    /* RFC 4034 4.1 */
	{ DNS_TYPE_DNSKEY, "DNSKEY", { U16, U8, U8, REST } }, /* RFC 4034 2.1 */
	{ 49, "DHCID", { REST } },
	/* RFC 5155 3.2 */
	{ DNS_TYPE_NSEC3, "NSEC3", { U8, U8, U16, RDATA_SALT, RDATA_HASH, RDATA_BITMAP } },
	{ DNS_TYPE_NSEC3PARAM, "NSEC3PARAM", { U8, U8, U16, RDATA_SALT } }, /* RFC 5155 4.2 */
	{ DNS_TYPE_TLSA, "TLSA", { U8, U8, U8, REST } },                    /* RFC 6698 2.1 */
	{ 53, "SMIMEA", { U8, U8, U8, REST } },
	{ 55, "HIP", { RDATA_HIP } },
	{ 56, "NINFO", { RDATA_STRINGS } },
	{ 57, "RKEY", { U16, U8, U8, REST } },
	{ 58, "TALINK", { NAME, NAME } },
	{ DNS_TYPE_CDS, "CDS", { U16, U8, U8, REST } }, /* RFC 7344 */
	{ DNS_TYPE_CDNSKEY, "CDNSKEY", { U16, U8, U8, REST } },
	{ 61, "OPENPGPKEY", { REST } },                            /* RFC 7929 */
	{ 62, "CSYNC", { U32, U16, RDATA_BITMAP } },               /* RFC 7477 2.1 */
	{ 63, "ZONEMD", { U32, U8, U8, REST } },                   /* RFC 8976 2.2 */
	{ DNS_TYPE_SVCB, "SVCB", { U16, NAME, RDATA_SVCPARAMS } }, /* RFC 9460 2.2 */
	{ DNS_TYPE_HTTPS, "HTTPS", { U16, NAME, RDATA_SVCPARAMS } },
	{ 99, "SPF", { RDATA_STRINGS } }, /* RFC 4408 3.1.1 */
	{ 100, "UINFO", { STRING } },
	{ 101, "UID", { U32 } },
	{ 102, "GID", { U32 } },
	{ 103, "UNSPEC", { REST } },
	{ 104, "NID", { U16, RDATA_U64 } }, /* RFC 6742 2 */
	{ 105, "L32", { U16, U32 } },
	{ 106, "L64", { U16, RDATA_U64 } },
	{ 107, "LP", { U16, NAME } },
	{ 108, "EUI48", { RDATA_U48 } }, /* RFC 7043 3 */
	{ 109, "EUI64", { RDATA_U64 } },
	{ 256, "URI", { U16, U16, REST } },            /* RFC 7553 4.5 */
	{ DNS_TYPE_CAA, "CAA", { U8, STRING, REST } }, /* RFC 8659 4.1 */
	{ 258, "AVC", { RDATA_STRINGS } },
	{ 259, "DOA", { U32, U32, U8, STRING, REST } },
	{ 260, "AMTRELAY", { U8, U8, RDATA_RELAY } }, /* RFC 8777 4 */
	{ 261, "RESINFO", { RDATA_STRINGS } },        /* RFC 9606 */
	{ 32768, "TA", { U16, U8, U8, REST } },
	{ 32769, "DLV", { U16, U8, U8, REST } }, /* RFC 4431 */
};

#undef U8
#undef U16
#undef U32
#undef NAME
#undef NAME_C
#undef STRING
#undef REST

const rdata_desc_t *rdata_desc(uint16_t type)
{
	size_t lo = 0, hi = sizeof(descs) / sizeof(descs[0]);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (descs[mid].type == type)
			return &descs[mid];
		if (descs[mid].type < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool rdata_type_is_meta(uint16_t type)
{
	return type == 0 || type == DNS_TYPE_OPT || (type >= DNS_TYPE_TKEY && type <= DNS_TYPE_ANY);
}

int rdata_type_from_text(const char *text)
{
	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
		if (!strcasecmp(descs[i].name, text))
			return descs[i].type;
	/* RFC 3597 5: TYPEnnn for any type */
	if (strncasecmp(text, "TYPE", 4) || text[4] < '0' || text[4] > '9')
		return -1;
	char *end;
	unsigned long n = strtoul(text + 4, &end, 10);
	return *end || n > UINT16_MAX || rdata_type_is_meta((uint16_t)n) ? -1 : (int)n;
}

/* What is wrong with the name at rdata[off], or NULL when it is well-formed; *len its length. */
static const char *name_at(const uint8_t *rdata, size_t rdlen, size_t off, size_t *len)
{
	size_t p = off;
	for (;;) {
		if (p >= rdlen)
			return "a domain name runs past the end of the RDATA";
		uint8_t c = rdata[p];
		if (c & 0xc0)
			return "a domain name with a compression pointer or an unknown label type";
		p += 1 + (size_t)c;
		if (p - off > NAME_MAXLEN)
			return "a domain name longer than 255 octets";
		if (c == 0) {
			*len = p - off;
			return NULL;
		}
	}
}

QUERY_PATH int rdata_name_length(const uint8_t *rdata, size_t rdlen, size_t off)
{
	size_t len;
	return name_at(rdata, rdlen, off, &len) ? -1 : (int)len;
}

/* Octets of the fixed-size kinds; 0 for the others. */
static size_t fixed_size(enum rdata_field f)
{
	switch (f) {
	case RDATA_U8:
		return 1;
	case RDATA_U16:
		return 2;
	case RDATA_U32:
	case RDATA_A:
		return 4;
	case RDATA_U48:
		return 6;
	case RDATA_U64:
		return 8;
	case RDATA_AAAA:
		return 16;
	default:
		return 0;
	}
}

/* One walk's state: the RDATA, where it is, the compressible names found (or every name). */
typedef struct walk {
	const uint8_t *rd;
	size_t len, pos;
	uint16_t *names;
	int max, count;
	bool all_names; /* every name field is listed, not only the compressible */
} walk_t;

static const char *take(walk_t *w, size_t n)
{
	if (n > w->len - w->pos)
		return "a field runs past the end of the RDATA";
	w->pos += n;
	return NULL;
}

static const char *take_name(walk_t *w, bool compressible)
{
	size_t n;
	const char *why = name_at(w->rd, w->len, w->pos, &n);
	if (why)
		return why;
	if (compressible || w->all_names) {
		if (w->count < w->max)
			w->names[w->count] = (uint16_t)w->pos;
		w->count++;
	}
	w->pos += n;
	return NULL;
}

/* A length octet and that many octets (a character-string, a salt, a hash). */
static const char *take_counted(walk_t *w)
{
	if (w->pos >= w->len)
		return "a character-string or length field runs past the end of the RDATA";
	return take(w, 1 + (size_t)w->rd[w->pos]);
}

/* Type bit maps (RFC 4034 4.1.2): windows in increasing order, each 1 to 32 octets. */
static const char *take_bitmap(walk_t *w)
{
	int prev = -1;
	while (w->pos < w->len) {
		if (w->len - w->pos < 2)
			return "a type bit map window runs past the end of the RDATA";
		uint8_t window = w->rd[w->pos], n = w->rd[w->pos + 1];
		if ((int)window <= prev)
			return "type bit map windows out of order";
		if (n < 1 || n > 32)
			return "a type bit map window of more than 32 octets, or none";
		prev = window;
		w->pos += 2;
		if (take(w, n))
			return "a type bit map window runs past the end of the RDATA";
	}
	return NULL;
}

/* SvcParams (RFC 9460 2.2): key, length, value; keys in strictly increasing order. */
static const char *take_svcparams(walk_t *w)
{
	long prev = -1;
	while (w->pos < w->len) {
		if (w->len - w->pos < 4)
			return "a SvcParam runs past the end of the RDATA";
		uint16_t key = (uint16_t)(w->rd[w->pos] << 8 | w->rd[w->pos + 1]);
		uint16_t n = (uint16_t)(w->rd[w->pos + 2] << 8 | w->rd[w->pos + 3]);
		if ((long)key <= prev)
			return "SvcParam keys not in increasing order (RFC 9460 2.2)";
		prev = key;
		w->pos += 4;
		if (take(w, n))
			return "a SvcParam value runs past the end of the RDATA";
	}
	return NULL;
}

/* A gateway or relay of the kind given: none, IPv4, IPv6 or a name (RFC 4025 2.3, RFC 8777 4.2). */
static const char *take_gateway(walk_t *w, uint8_t kind)
{
	switch (kind) {
	case 0:
		return NULL;
	case 1:
		return take(w, 4);
	case 2:
		return take(w, 16);
	case 3:
		return take_name(w, false);
	default:
		return "an unknown gateway or relay type";
	}
}

/* A6 (RFC 2874 3.1.1): prefix length, the address octets it leaves, the prefix name. */
static const char *take_a6(walk_t *w)
{
	if (w->pos >= w->len)
		return "a field runs past the end of the RDATA";
	uint8_t prefix = w->rd[w->pos++];
	if (prefix > 128)
		return "an A6 prefix length over 128";
	const char *why = take(w, (size_t)(128 - prefix + 7) / 8);
	return why ? why : prefix ? take_name(w, false) : NULL;
}

/* APL items (RFC 3123 4): family, prefix, N and AFD length, AFD part. */
static const char *take_apl(walk_t *w)
{
	while (w->pos < w->len) {
		if (w->len - w->pos < 4)
			return "an APL item runs past the end of the RDATA";
		uint16_t family = (uint16_t)(w->rd[w->pos] << 8 | w->rd[w->pos + 1]);
		uint8_t afd = w->rd[w->pos + 3] & 0x7f;
		if ((family == 1 && afd > 4) || (family == 2 && afd > 16))
			return "an APL address part longer than its family's addresses";
		w->pos += 4;
		if (take(w, afd))
			return "an APL item runs past the end of the RDATA";
	}
	return NULL;
}

/* HIP (RFC 8005 5): HIT length, algorithm, key length, HIT, key, rendezvous servers. */
static const char *take_hip(walk_t *w)
{
	if (w->len - w->pos < 4)
		return "a field runs past the end of the RDATA";
	size_t hit = w->rd[w->pos], key = (size_t)(w->rd[w->pos + 2] << 8 | w->rd[w->pos + 3]);
	w->pos += 4;
	const char *why = take(w, hit + key);
	while (!why && w->pos < w->len)
		why = take_name(w, false);
	return why;
}

static const char *take_field(walk_t *w, enum rdata_field f)
{
	size_t n = fixed_size(f);
	if (n)
		return take(w, n);
	switch (f) {
	case RDATA_NAME_C:
		return take_name(w, true);
	case RDATA_NAME:
		return take_name(w, false);
	case RDATA_STRING:
	case RDATA_SALT:
		return take_counted(w);
	case RDATA_STRINGS: {
		const char *why = take_counted(w);
		while (!why && w->pos < w->len)
			why = take_counted(w);
		return why;
	}
	case RDATA_HASH:
		if (w->pos < w->len && w->rd[w->pos] == 0)
			return "an empty NSEC3 next hashed owner name";
		return take_counted(w);
	case RDATA_REST:
		w->pos = w->len;
		return NULL;
	case RDATA_BITMAP:
		return take_bitmap(w);
	case RDATA_SVCPARAMS:
		return take_svcparams(w);
	case RDATA_GATEWAY:
		/* after three octets: precedence, kind, algorithm */
		assert(w->pos == 3); /* the table puts it there (IPSECKEY) */
		return take_gateway(w, w->rd[1]);
	case RDATA_RELAY:
		assert(w->pos == 2); /* after precedence and D|kind (AMTRELAY) */
		return take_gateway(w, w->rd[1] & 0x7f);
	case RDATA_A6:
		return take_a6(w);
	case RDATA_APL:
		return take_apl(w);
	case RDATA_HIP:
		return take_hip(w);
	default:
		return "an RDATA field of no known kind";
	}
}

/* Every field of d's layout through w; NULL, or what is wrong. */
static const char *walk_fields(const rdata_desc_t *d, walk_t *w)
{
	const char *bad = NULL;
	for (int i = 0; !bad && i < RDATA_FIELDS_MAX && d->fields[i] != RDATA_END; i++)
		bad = take_field(w, (enum rdata_field)d->fields[i]);
	if (!bad && w->pos != w->len)
		bad = "octets left over after the last field";
	return bad;
}

int rdata_walk(uint16_t type, const uint8_t *rdata, size_t rdlen, uint16_t *names, int max,
	       const char **why)
{
	const rdata_desc_t *d = rdata_desc(type);
	if (!d)
		return 0;
	walk_t w = { .rd = rdata, .len = rdlen, .names = names, .max = names ? max : 0 };
	const char *bad = walk_fields(d, &w);
	if (bad) {
		if (why)
			*why = bad;
		return SHOAL_EMALFORMED;
	}
	return w.count;
}

/*
 * RFC 4034 6.2 item 3's types, less NSEC (RFC 6840 5.1): the names in
 * their RDATA are lowercased in the canonical form. Sorted.
 */
static const uint16_t canonical_lower_types[] = {
	DNS_TYPE_NS,    DNS_TYPE_MD, DNS_TYPE_MF,  DNS_TYPE_CNAME, DNS_TYPE_SOA,   DNS_TYPE_MB,
	DNS_TYPE_MG,    DNS_TYPE_MR, DNS_TYPE_PTR, DNS_TYPE_MINFO, DNS_TYPE_MX,    DNS_TYPE_RP,
	DNS_TYPE_AFSDB, 21 /* RT */, DNS_TYPE_SIG, 26 /* PX */,    DNS_TYPE_NXT,   DNS_TYPE_SRV,
	DNS_TYPE_NAPTR, DNS_TYPE_KX, 38 /* A6 */,  DNS_TYPE_DNAME, DNS_TYPE_RRSIG,
};

int rdata_canonical(uint16_t type, uint8_t *rdata, size_t rdlen)
{
	size_t n = sizeof(canonical_lower_types) / sizeof(canonical_lower_types[0]);
	size_t i = 0;
	while (i < n && canonical_lower_types[i] != type)
		i++;
	const rdata_desc_t *d = rdata_desc(type);
	if (i == n || !d)
		return 0;
	uint16_t names[RDATA_FIELDS_MAX];
	walk_t w = { .rd = rdata,
		     .len = rdlen,
		     .names = names,
		     .max = RDATA_FIELDS_MAX,
		     .all_names = true };
	if (walk_fields(d, &w))
		return SHOAL_EMALFORMED;
	for (int k = 0; k < w.count && k < RDATA_FIELDS_MAX; k++)
		name_lower(rdata + names[k]);
	return 0;
}

int rdata_unpack(uint16_t type, wire_t *w, uint16_t rdlen, uint8_t *out, size_t cap,
		 const char **why)
{
	const char *bad = NULL;
	size_t end = w->pos + rdlen, n = 0;
	if (w->err || rdlen > wire_left(w)) {
		bad = "RDATA runs past the end of the message";
		goto done;
	}
	const rdata_desc_t *d = rdata_desc(type);
	for (int i = 0; d && i < RDATA_FIELDS_MAX && d->fields[i] != RDATA_END; i++) {
		enum rdata_field f = (enum rdata_field)d->fields[i];
		size_t take = fixed_size(f);
		if (f == RDATA_NAME_C || f == RDATA_NAME) {
			uint8_t name[NAME_MAXLEN];
			/* a name must start inside the RDATA and, pointers aside, end there */
			wire_t in = *w;
			in.len = end;
			int len = w->pos < end ? name_unpack(&in, name, false) : SHOAL_EMALFORMED;
			if (len < 0) {
				bad = "a domain name that does not parse inside the RDATA";
				goto done;
			}
			if (n + (size_t)len > cap)
				return SHOAL_ESPACE;
			memcpy(out + n, name, (size_t)len);
			n += (size_t)len;
			w->pos = in.pos;
			continue;
		}
		if (f == RDATA_STRING)
			take = w->pos < end ? 1 + (size_t)w->buf[w->pos] : 1;
		if (!take)
			break; /* the rest, whatever its kind, is copied as it is */
		if (take > end - w->pos) {
			bad = "a field runs past the end of the RDATA";
			goto done;
		}
		if (n + take > cap)
			return SHOAL_ESPACE;
		memcpy(out + n, w->buf + w->pos, take);
		n += take;
		w->pos += take;
	}
	if (n + (end - w->pos) > cap)
		return SHOAL_ESPACE;
	memcpy(out + n, w->buf + w->pos, end - w->pos);
	n += end - w->pos;
	w->pos = end;
	if (n > UINT16_MAX) {
		bad = "RDATA longer than 65535 octets once its names are expanded";
		goto done;
	}
	if (rdata_walk(type, out, n, NULL, 0, &bad) < 0)
		goto done;
	return (int)n;
done:
	if (why)
		*why = bad;
	if (!w->err)
		w->err = SHOAL_EMALFORMED;
	return SHOAL_EMALFORMED;
}
