/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The store builder: sort, check and compile a zone's records into a zone_t. */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rdata.h"
#include "proto/wire.h"
#include "zone/internal.h"
#include "zone/slab.h"

/*
 * Records wait in one growing blob until the zone is complete: a header,
 * then the canonical key, the lowercase owner and the RDATA. Offsets, not
 * pointers, because the blob moves while it grows.
 */
typedef struct zrec {
	uint32_t line;
	uint32_t ttl;
	uint16_t file;
	uint16_t type;
	uint16_t rdlen;
	uint16_t keylen;
	uint8_t namelen;
} zrec_t;

#define ZREC_ALIGN     4
#define ZREC_NAMES_MAX 8 /* compressible names in one RDATA (SOA has 2) */
static_assert((ZREC_ALIGN & (ZREC_ALIGN - 1)) == 0 && _Alignof(zrec_t) <= ZREC_ALIGN,
	      "a record header at any multiple of ZREC_ALIGN is aligned");
static_assert(ZONE_KEY_MAX <= UINT16_MAX && NAME_MAXLEN <= UINT8_MAX,
	      "keylen and namelen hold any key and name");

struct zbuild {
	uint8_t origin[NAME_MAXLEN];
	size_t origin_len;
	int origin_labels;
	char origin_text[NAME_TEXT_MAX];
	char *file; /* the zone's main file, for zone-wide messages */
	zone_msg_fn msg;
	void *msg_arg;
	char **files;
	size_t file_count;
	uint8_t *blob;
	size_t blob_len, blob_cap;
	size_t *recs;
	size_t rec_count, rec_cap;
	uint32_t max_types; /* per name, a signed type counting twice */
	uint32_t max_nsec3_iterations;
	uint32_t max_records; /* per RRset (per type covered for RRSIG) */
	const bool *cancel;   /* zbuild_watch, or NULL */
	bool failed;
	bool nsec3; /* the apex has an NSEC3PARAM the server uses: every node has a link */
};

/* A node being planned: its owner and its records recs[first..first+count). */
typedef struct zdesc {
	const uint8_t *name;
	size_t first;
	uint32_t count;
	uint8_t name_len;
} zdesc_t;

static inline zrec_t *rec_at(const zbuild_t *b, size_t off)
{
	return (zrec_t *)(b->blob + off);
}
static inline uint8_t *rec_key(zrec_t *r)
{
	return (uint8_t *)(r + 1);
}
static inline uint8_t *rec_name(zrec_t *r)
{
	return rec_key(r) + r->keylen;
}
static inline uint8_t *rec_rdata(zrec_t *r)
{
	return rec_name(r) + r->namelen;
}

/*
 * ThreadSanitizer does not see mremap: pages one thread's array left
 * behind and another thread's array then got looked like one memory
 * written by both. Its build copies to a new mapping instead.
 */
#if defined(__SANITIZE_THREAD__)
#define ZBUILD_NO_MREMAP 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ZBUILD_NO_MREMAP 1
#endif
#endif

/*
 * Below this many octets an array of the builder lives in malloc's heap:
 * a small zone (most of a million small zones) then costs no mapping,
 * no unmapping and no page faults of its own.
 */
#define GROW_MAP_MIN (64u << 10)

/*
 * Room for `need` elements of `elem` octets in *p (*cap of them now).
 * The arrays that grow with the zone have pages of their own once they
 * pass GROW_MAP_MIN, grown by mremap: the kernel moves the pages where
 * realloc would copy them (a tenth of a big load went to those copies).
 * Smaller ones are malloc's. Which one an array is follows from *cap
 * alone. Free with shed().
 */
/* Free what grow() made: unmapped, or freed below GROW_MAP_MIN. */
static void shed(void *p, size_t cap, size_t elem)
{
	if (p && cap * elem >= GROW_MAP_MIN)
		munmap(p, cap * elem);
	else
		free(p);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 64; /* powers of two: a mapped n * elem is a multiple of 4096 */
	while (n < need)
		n *= 2;
	void *q;
	if (n * elem < GROW_MAP_MIN) {
		if (!(q = realloc(*p, n * elem)))
			return false;
		*p = q;
		*cap = n;
		return true;
	}
#ifndef ZBUILD_NO_MREMAP
	if (*p && *cap * elem >= GROW_MAP_MIN) {
		q = mremap(*p, *cap * elem, n * elem, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return false;
		zone_huge_pages(q, n * elem);
		*p = q;
		*cap = n;
		return true;
	}
#endif
	q = mmap(NULL, n * elem, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return false;
	if (*p) {
		memcpy(q, *p, *cap * elem);
		shed(*p, *cap, elem);
	}
	zone_huge_pages(q, n * elem);
	*p = q;
	*cap = n;
	return true;
}

zbuild_t *zbuild_new(const char *file, const uint8_t *origin, zone_msg_fn msg, void *msg_arg)
{
	zbuild_t *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	if (!(b->file = strdup(file))) {
		free(b);
		return NULL;
	}
	b->origin_len = name_length(origin);
	memcpy(b->origin, origin, b->origin_len);
	name_lower(b->origin);
	b->origin_labels = name_labels(b->origin);
	if (name_to_text(b->origin, b->origin_text, sizeof(b->origin_text)) < 0)
		strcpy(b->origin_text, "?");
	b->msg = msg;
	b->msg_arg = msg_arg;
	zbuild_set_limits(b, NULL);
	return b;
}

void zbuild_set_limits(zbuild_t *b, const zone_limits_t *limits)
{
	b->max_types = limits ? limits->max_types_per_name : ZONE_MAX_TYPES_DEFAULT;
	b->max_nsec3_iterations =
		limits ? limits->max_nsec3_iterations : ZONE_MAX_NSEC3_ITERATIONS_DEFAULT;
	b->max_records = limits ? limits->max_records_per_type : ZONE_MAX_RECORDS_DEFAULT;
	/* the store counts a name's RRsets in 16 bits */
	if (b->max_types > ZONE_LIMIT_MAX)
		b->max_types = ZONE_LIMIT_MAX;
	if (b->max_records > ZONE_LIMIT_MAX)
		b->max_records = ZONE_LIMIT_MAX;
}

void zbuild_free(zbuild_t *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->file_count; i++)
		free(b->files[i]);
	free(b->files);
	free(b->file);
	shed(b->blob, b->blob_cap, 1);
	shed(b->recs, b->rec_cap, sizeof(size_t));
	free(b);
}

const uint8_t *zbuild_origin(const zbuild_t *b)
{
	return b->origin;
}

void zbuild_watch(zbuild_t *b, const bool *cancel)
{
	b->cancel = cancel;
}

void zbuild_fail(zbuild_t *b)
{
	b->failed = true;
}

/* Index of file in the table of file names, adding it; -1 on ENOMEM. */
static int file_index(zbuild_t *b, const char *file)
{
	for (size_t i = b->file_count; i-- > 0;)
		if (strcmp(b->files[i], file) == 0)
			return (int)i;
	if (b->file_count >= UINT16_MAX)
		return -1;
	char **f = realloc(b->files, (b->file_count + 1) * sizeof(*f));
	if (!f)
		return -1;
	b->files = f;
	if (!(f[b->file_count] = strdup(file)))
		return -1;
	return (int)b->file_count++;
}

long zbuild_generic_length(const char *text, const char **data)
{
	bool quote = false;
	for (const char *p = text; p && *p && *p != '\n'; p++) {
		bool token_start = p == text || isspace((unsigned char)p[-1]);
		if (!quote && token_start && p[0] == '\\' && p[1] == '#' &&
		    isspace((unsigned char)p[2])) {
			char *end;
			long n = strtol(p + 2, &end, 10);
			if (data)
				*data = end;
			return end > p + 2 && n >= 0 &&
					       (*end == '\0' || isspace((unsigned char)*end))
				       ? n
				       : -1;
		}
		if (p[0] == '\\' && p[1]) {
			p++; /* an escaped octet is no quote and no comment */
		} else if (*p == '"') {
			quote = !quote;
		} else if (*p == ';' && !quote) {
			break;
		}
	}
	return -1;
}

int zbuild_add(zbuild_t *b, const char *file, unsigned line, const char *text, const uint8_t *owner,
	       uint16_t type, uint16_t rclass, uint32_t ttl, const uint8_t *rdata, uint16_t rdlen)
{
	char name[NAME_TEXT_MAX];
	if (!name_is_subdomain(owner, b->origin)) {
		if (name_to_text(owner, name, sizeof(name)) < 0)
			strcpy(name, "?");
		zone_report(b->msg, b->msg_arg, false, file, line,
			    "%s is outside the zone %s, ignored", name, b->origin_text);
		return 0;
	}
	if (rclass != DNS_CLASS_IN) {
		zone_report(b->msg, b->msg_arg, true, file, line,
			    "class %u is not served (only IN)", rclass);
		b->failed = true;
		return SHOAL_EZONE;
	}
	if (rdata_type_is_meta(type)) {
		zone_report(b->msg, b->msg_arg, true, file, line,
			    "TYPE%u exists only in queries and transactions, not in zone data "
			    "(RFC 6895 3.1)",
			    type);
		b->failed = true;
		return SHOAL_EZONE;
	}
	/*
	 * The RDATA of a known type must have that type's layout, whether it
	 * was written in the type's own syntax or in RFC 3597's generic one
	 * ("\# 0" for an NS has no name): the answer code, the glue check and
	 * the DNAME and CNAME chains read the names inside.
	 */
	const char *why = NULL;
	if (rdata_walk(type, rdata, rdlen, NULL, 0, &why) < 0) {
		const rdata_desc_t *d = rdata_desc(type);
		if (name_to_text(owner, name, sizeof(name)) < 0)
			strcpy(name, "?");
		zone_report(b->msg, b->msg_arg, true, file, line,
			    "%s: bad %s RDATA (%u octets): %s", name, d ? d->name : "?", rdlen,
			    why);
		b->failed = true;
		return SHOAL_EZONE;
	}
	/* ldns keeps of generic RDATA what the type's fields take and drops the rest */
	long declared = zbuild_generic_length(text, NULL);
	if (declared >= 0 && declared != rdlen) {
		const rdata_desc_t *d = rdata_desc(type);
		if (name_to_text(owner, name, sizeof(name)) < 0)
			strcpy(name, "?");
		zone_report(b->msg, b->msg_arg, true, file, line,
			    "%s: bad %s RDATA (%ld octets): octets left over after the last field",
			    name, d ? d->name : "?", declared);
		b->failed = true;
		return SHOAL_EZONE;
	}
	int fi = file_index(b, file);
	if (fi < 0)
		return SHOAL_ENOMEM;

	uint8_t key[ZONE_KEY_MAX];
	size_t keylen = zone_name_key(owner, key);
	size_t namelen = name_length(owner);
	size_t size = sizeof(zrec_t) + keylen + namelen + rdlen;
	size = (size + ZREC_ALIGN - 1) & ~(size_t)(ZREC_ALIGN - 1);
	if (!grow((void **)&b->blob, &b->blob_cap, b->blob_len + size, 1) ||
	    !grow((void **)&b->recs, &b->rec_cap, b->rec_count + 1, sizeof(size_t)))
		return SHOAL_ENOMEM;

	zrec_t *r = rec_at(b, b->blob_len);
	r->line = line;
	r->ttl = ttl;
	r->file = (uint16_t)fi;
	r->type = type;
	r->rdlen = rdlen;
	r->keylen = (uint16_t)keylen;
	r->namelen = (uint8_t)namelen;
	memcpy(rec_key(r), key, keylen);
	memcpy(rec_name(r), owner, namelen);
	name_lower(rec_name(r));
	if (rdlen)
		memcpy(rec_rdata(r), rdata, rdlen);
	b->recs[b->rec_count++] = b->blob_len;
	b->blob_len += size;
	return 0;
}

int zbuild_merge(zbuild_t *b, zbuild_t *from)
{
	int err = SHOAL_ENOMEM;
	int *fmap = malloc((from->file_count ? from->file_count : 1) * sizeof(*fmap));
	if (!fmap)
		goto done;
	bool same_files = true;
	for (size_t i = 0; i < from->file_count; i++) {
		if ((fmap[i] = file_index(b, from->files[i])) < 0)
			goto done;
		same_files &= fmap[i] == (int)i;
	}
	if (same_files && b->rec_count == 0) {
		/* the first stretch of a file: take its records over as they are */
		uint8_t *blob = b->blob;
		size_t *recs = b->recs, blob_cap = b->blob_cap, rec_cap = b->rec_cap;
		b->blob = from->blob;
		b->blob_len = from->blob_len;
		b->blob_cap = from->blob_cap;
		b->recs = from->recs;
		b->rec_count = from->rec_count;
		b->rec_cap = from->rec_cap;
		from->blob = blob;
		from->blob_cap = blob_cap;
		from->recs = recs;
		from->rec_cap = rec_cap;
		b->failed |= from->failed;
		err = 0;
		goto done;
	}
	/* one growth to the final size: the pages fill as the records come */
	if (!grow((void **)&b->blob, &b->blob_cap, b->blob_len + from->blob_len, 1) ||
	    !grow((void **)&b->recs, &b->rec_cap, b->rec_count + from->rec_count, sizeof(size_t)))
		goto done;
	if (same_files) {
		/* records lie in the blob one after another, each a multiple of ZREC_ALIGN */
		if (from->blob_len)
			memcpy(b->blob + b->blob_len, from->blob, from->blob_len);
		for (size_t i = 0; i < from->rec_count; i++)
			b->recs[b->rec_count++] = b->blob_len + from->recs[i];
		b->blob_len += from->blob_len;
	}
	for (size_t i = 0; !same_files && i < from->rec_count; i++) {
		zrec_t *r = rec_at(from, from->recs[i]);
		size_t size = sizeof(zrec_t) + r->keylen + r->namelen + r->rdlen;
		size = (size + ZREC_ALIGN - 1) & ~(size_t)(ZREC_ALIGN - 1);
		memcpy(b->blob + b->blob_len, r, size);
		rec_at(b, b->blob_len)->file = (uint16_t)fmap[r->file];
		b->recs[b->rec_count++] = b->blob_len;
		b->blob_len += size;
	}
	b->failed |= from->failed;
	err = 0;
done:
	free(fmap);
	zbuild_free(from);
	return err;
}

/* Canonical order of owners, then type, then RDATA octets. */
static int rec_cmp(const void *pa, const void *pb, void *arg)
{
	const zbuild_t *b = arg;
	zrec_t *x = rec_at(b, *(const size_t *)pa);
	zrec_t *y = rec_at(b, *(const size_t *)pb);
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int c = memcmp(rec_key(x), rec_key(y), n);
	if (c)
		return c;
	if (x->keylen != y->keylen)
		return x->keylen < y->keylen ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	n = x->rdlen < y->rdlen ? x->rdlen : y->rdlen;
	c = memcmp(rec_rdata(x), rec_rdata(y), n);
	if (c)
		return c;
	return x->rdlen < y->rdlen ? -1 : x->rdlen > y->rdlen;
}

static void sort_range(void *arg, size_t from, size_t to)
{
	zbuild_t *b = arg;
	qsort_r(b->recs + from, to - from, sizeof(size_t), rec_cmp, b);
}

/* Merge the sorted runs a[0..m) and a[m..n) into out, the left first on ties. */
static void merge_runs(zbuild_t *b, const size_t *a, size_t m, size_t n, size_t *out)
{
	size_t i = 0, j = m, k = 0;
	while (i < m && j < n)
		out[k++] = rec_cmp(&a[j], &a[i], b) < 0 ? a[j++] : a[i++];
	while (i < m)
		out[k++] = a[i++];
	while (j < n)
		out[k++] = a[j++];
}

/*
 * Sort the records in canonical order: ranges sorted on the load's
 * threads (qsort_r, a merge sort in glibc, keeps equal records in reading
 * order), then merged pairwise, the earlier range first on ties, so the
 * order is the one sort would give. The sort was a tenth of a big load.
 */
static int sort_records(zbuild_t *b)
{
	size_t n = b->rec_count;
	size_t k = zone_parallel(n, sort_range, b);
	if (k < 2)
		return 0;
	size_t *tmp = malloc(n * sizeof(size_t));
	if (!tmp)
		return SHOAL_ENOMEM;
	zone_huge_pages(tmp, n * sizeof(size_t));
	size_t *src = b->recs, *dst = tmp;
	/* runs [n * i / k, n * (i + 1) / k): merge neighbours until one is left */
	size_t bound[LOAD_THREADS_MAX + 1];
	assert(k <= LOAD_THREADS_MAX); /* zone_parallel's threads */
	for (size_t i = 0; i <= k; i++)
		bound[i] = n * i / k;
	while (k > 1) {
		size_t runs = 0;
		for (size_t i = 0; i < k; i += 2) {
			if (i + 1 < k)
				merge_runs(b, src + bound[i], bound[i + 1] - bound[i],
					   bound[i + 2] - bound[i], dst + bound[i]);
			else
				memcpy(dst + bound[i], src + bound[i],
				       (bound[i + 1] - bound[i]) * sizeof(size_t));
			bound[runs++] = bound[i];
		}
		bound[runs] = n;
		k = runs;
		size_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != b->recs)
		memcpy(b->recs, src, n * sizeof(size_t));
	free(tmp);
	return 0;
}

static bool same_owner(zrec_t *x, zrec_t *y)
{
	return x->keylen == y->keylen && memcmp(rec_key(x), rec_key(y), x->keylen) == 0;
}

static void report_rec(zbuild_t *b, bool is_error, zrec_t *r, const char *fmt, const char *arg)
{
	char text[NAME_TEXT_MAX];
	if (name_to_text(rec_name(r), text, sizeof(text)) < 0)
		strcpy(text, "?");
	zone_report(b->msg, b->msg_arg, is_error, b->files[r->file], r->line, fmt, text,
		    arg ? arg : "");
	if (is_error)
		b->failed = true;
}

/*
 * The TTL an RRset is served with (RFC 2181 5.2 wants one): like Knot, the
 * TTL of the record read last. Records are added in reading order, so the
 * one read last has the highest offset in the blob. recs[0..n) starts the
 * RRset; it ends where the type changes.
 */
static uint32_t rrset_ttl(const zbuild_t *b, const size_t *recs, size_t n)
{
	size_t last = recs[0];
	uint16_t type = rec_at(b, recs[0])->type;
	for (size_t i = 1; i < n && rec_at(b, recs[i])->type == type; i++)
		if (recs[i] > last)
			last = recs[i];
	return rec_at(b, last)->ttl;
}

/* The type covered by an RRSIG (RFC 4034 3.1.1), or -1 when its RDATA is too short to say. */
static long rrsig_covered(const uint8_t *rdata, size_t rdlen)
{
	return rdlen >= 2 ? (long)wire_get_u16(rdata) : -1;
}

/*
 * What groups a node's records into the sets BIND counts and limits: the
 * type, or for an RRSIG the type it covers (RRSIG(A) is a type of its own).
 */
static long count_key(zrec_t *r)
{
	if (r->type != DNS_TYPE_RRSIG)
		return r->type;
	long covered = rrsig_covered(rec_rdata(r), r->rdlen);
	return covered < 0 ? -1 : DNS_TYPE_RRSIG * 65536L + covered;
}

/* The mnemonic of a type, or TYPEnnn (RFC 3597 5). */
static const char *type_text(uint16_t type, char buf[16])
{
	const rdata_desc_t *d = rdata_desc(type);
	if (d)
		return d->name;
	snprintf(buf, 16, "TYPE%u", type);
	return buf;
}

/*
 * The fewest octets one record can take in a message: its owner a
 * compression pointer, and so each name the writer may compress.
 */
static size_t rr_min_size(zrec_t *r)
{
	uint16_t off[ZREC_NAMES_MAX];
	size_t size = 2 + 10 + (size_t)r->rdlen;
	int c = rrtype_rdata_names(r->type, rec_rdata(r), r->rdlen, off, ZREC_NAMES_MAX);
	for (int k = 0; k < c; k++) {
		int len = rdata_name_length(rec_rdata(r), r->rdlen, off[k]);
		if (len > 2)
			size -= (size_t)len - 2;
	}
	return size;
}

/* Of recs[i..j), the record read last (added last: the highest offset). */
static zrec_t *read_last(const zbuild_t *b, const size_t *recs, size_t i, size_t j)
{
	size_t last = recs[i];
	for (size_t k = i + 1; k < j; k++)
		if (recs[k] > last)
			last = recs[k];
	return rec_at(b, last);
}

/*
 * The bounds on one node's records out[0..n) (sorted by type; the RRSIGs
 * by type covered): at most max_types types, a signed type counting twice
 * as in BIND; at most max_records records in each; and every RRset small
 * enough, with its RRSIGs and an OPT record, for one 65535-octet TCP
 * message (RFC 1035 4.2.2), counting every name compressed as far as it
 * can be: a set that never fits would be answered with TC and no records
 * over TCP too, for good.
 */
static void check_limits(zbuild_t *b, const size_t *out, size_t n)
{
	char why[160], tb[16];
	size_t types = 0, sig_first = n, sig_end = n;
	for (size_t i = 0; i < n;) {
		zrec_t *r = rec_at(b, out[i]);
		long key = count_key(r);
		size_t j = i + 1;
		while (j < n && count_key(rec_at(b, out[j])) == key)
			j++;
		if (r->type == DNS_TYPE_RRSIG && sig_first == n)
			sig_first = i;
		if (r->type == DNS_TYPE_RRSIG)
			sig_end = j;
		types++;
		if (j - i > b->max_records) {
			snprintf(why, sizeof(why),
				 "more than %u %s records at one name "
				 "(max-records-per-type)",
				 b->max_records, type_text(r->type, tb));
			report_rec(b, true, read_last(b, out, i, j), "%s: %s", why);
		}
		i = j;
	}
	if (types > b->max_types) {
		snprintf(why, sizeof(why),
			 "more than %u types at one name, a signed type "
			 "counting twice (max-types-per-name)",
			 b->max_types);
		report_rec(b, true, read_last(b, out, 0, n), "%s: %s", why);
		return; /* the sizes of so many sets are not worth adding up */
	}
	/* the question repeats the owner (or a longer name it matches) */
	size_t base = DNS_HEADER_SIZE + rec_at(b, out[0])->namelen + 4;
	size_t s = sig_first;
	for (size_t i = 0; i < n;) {
		zrec_t *r = rec_at(b, out[i]);
		size_t j = i + 1, set = base + rr_min_size(r), sigs = 0;
		for (; j < n && rec_at(b, out[j])->type == r->type; j++)
			set += rr_min_size(rec_at(b, out[j]));
		if (r->type != DNS_TYPE_RRSIG) {
			/* both runs ascend: the RRSIGs covering this type come next */
			while (s < sig_end && rrsig_covered(rec_rdata(rec_at(b, out[s])),
							    rec_at(b, out[s])->rdlen) < r->type)
				s++;
			for (; s < sig_end; s++) {
				zrec_t *g = rec_at(b, out[s]);
				if (rrsig_covered(rec_rdata(g), g->rdlen) != r->type)
					break;
				sigs += rr_min_size(g);
			}
		}
		size_t opt = sigs ? 11 : 0; /* DO comes in an OPT record; the answer has one */
		if (r->type != DNS_TYPE_RRSIG && set + sigs + opt > DNS_TCP_MAX) {
			snprintf(why, sizeof(why),
				 "the %s RRset (%zu records%s) takes at least "
				 "%zu octets, more than one TCP message holds (65535)",
				 type_text(r->type, tb), j - i, sigs ? " with its RRSIGs" : "",
				 set + sigs + opt);
			report_rec(b, true, read_last(b, out, i, j), "%s: %s", why);
		}
		i = j;
	}
}

/*
 * Drop duplicate records (RFC 2181 5), make TTLs agree inside an RRset
 * (with a warning) and check one node's records: SOA only at the apex and
 * only one (RFC 1035 5.2), CNAME alone (RFC 1034 3.6.2, RFC 2181 10.1;
 * RRSIG and NSEC may stay, RFC 4035 2.5), one DNAME (RFC 6672 2.4).
 * Writes the records kept to out (which may be b->recs + k for k <= first:
 * each is written at or before where it was read) and returns their count.
 */
static size_t check_node(zbuild_t *b, size_t first, size_t end, size_t *out)
{
	size_t n = 0;
	for (size_t i = first; i < end; i++) {
		if (n && rec_cmp(&b->recs[i], &out[n - 1], b) == 0)
			continue;
		out[n++] = b->recs[i];
	}
	bool apex = rec_at(b, out[0])->namelen == b->origin_len &&
		    memcmp(rec_name(rec_at(b, out[0])), b->origin, b->origin_len) == 0;
	zrec_t *cname = NULL, *other = NULL, *soa = NULL;
	size_t dname = 0;
	uint32_t set_ttl = 0;
	for (size_t i = 0; i < n; i++) {
		zrec_t *r = rec_at(b, out[i]);
		if (i == 0 || rec_at(b, out[i - 1])->type != r->type)
			set_ttl = rrset_ttl(b, out + i, n - i);
		if (r->ttl != set_ttl && r->type != DNS_TYPE_RRSIG) {
			char why[64];
			snprintf(why, sizeof(why), "%u differs from the RRset's TTL %u", r->ttl,
				 set_ttl);
			report_rec(b, false, r, "%s: TTL %s (RFC 2181 5.2)", why);
			r->ttl = set_ttl;
		}
		switch (r->type) {
		case DNS_TYPE_SOA:
			if (!apex) {
				report_rec(b, true, r, "%s: SOA record not at the zone apex%s",
					   NULL);
			} else if (soa) {
				/* name the one read later: the first is the real one */
				zrec_t *later = soa->line > r->line ? soa : r;
				report_rec(b, true, later, "%s: more than one SOA record%s", NULL);
				soa = later == r ? soa : r;
			} else {
				soa = r;
			}
			break;
		case DNS_TYPE_CNAME:
			if (cname)
				report_rec(b, true, r, "%s: more than one CNAME record%s", NULL);
			cname = r;
			break;
		case DNS_TYPE_DNAME:
			if (dname++)
				report_rec(b, true, r, "%s: more than one DNAME record%s", NULL);
			other = other ? other : r;
			break;
		case DNS_TYPE_RRSIG:
		case DNS_TYPE_NSEC:
			break;
		default:
			other = other ? other : r;
		}
	}
	if (cname && other) {
		zrec_t *later = cname->line > other->line ? cname : other;
		report_rec(b, true, later, "%s: CNAME and other data at the same name%s", NULL);
	}
	check_limits(b, out, n);
	return n;
}

/* Labels two lowercase names share, counted from the root. */
static int common_labels(const uint8_t *a, const uint8_t *b)
{
	uint8_t oa[NAME_MAXLABELS], ob[NAME_MAXLABELS];
	int la = name_label_offsets(a, oa), lb = name_label_offsets(b, ob);
	int k = 0;
	while (k < la && k < lb) {
		const uint8_t *x = a + oa[la - 1 - k], *y = b + ob[lb - 1 - k];
		if (x[0] != y[0] || memcmp(x + 1, y + 1, x[0]) != 0)
			break;
		k++;
	}
	return k;
}

/*
 * Plan the nodes in canonical order, adding empty non-terminals: because
 * a name's ancestors sort before it and its subtree is contiguous, the
 * ancestors of X that exist are the ones X shares with the node just
 * before it; the others are created right before X.
 */
static int plan_nodes(zbuild_t *b, size_t *recs, size_t n, zdesc_t **out, size_t *count,
		      size_t *cap_out)
{
	size_t cap = 0, k = 0;
	zdesc_t *d = NULL;
	const uint8_t *prev = NULL;
	for (size_t i = 0; i < n;) {
		if (zone_stop_at(b->cancel, k + 1)) {
			shed(d, cap, sizeof(*d));
			return SHOAL_ETIMEOUT;
		}
		zrec_t *r = rec_at(b, recs[i]);
		size_t j = i + 1;
		while (j < n && same_owner(r, rec_at(b, recs[j])))
			j++;
		const uint8_t *name = rec_name(r);
		uint8_t off[NAME_MAXLABELS];
		int labels = name_label_offsets(name, off);
		int have = prev ? common_labels(prev, name) : labels;
		if (have < b->origin_labels)
			have = b->origin_labels;
		/* in the zone, and no ancestor of prev (they sort before it) */
		assert(have <= labels);
		if (!grow((void **)&d, &cap, k + (size_t)(labels - have) + 1, sizeof(*d))) {
			shed(d, cap, sizeof(*d));
			return SHOAL_ENOMEM;
		}
		for (int depth = have + 1; depth < labels; depth++) {
			const uint8_t *ent = name + off[labels - depth];
			d[k++] = (zdesc_t){ ent, 0, 0, (uint8_t)name_length(ent) };
		}
		d[k++] = (zdesc_t){ name, i, (uint32_t)(j - i), r->namelen };
		prev = name;
		i = j;
	}
	*out = d;
	*count = k;
	*cap_out = cap;
	return 0;
}

/*
 * The room after a node's name (ZNODE_LINKED, ZNODE_HASHED): in a zone
 * denied by NSEC3 every node has a link (to its NSEC3, or back from one),
 * and a possible owner of the chain, one label below the apex, 32 octets
 * long, with an NSEC3 RRset, has room for its hash too.
 */
static size_t ext_size(const zbuild_t *b, const zdesc_t *d, const size_t *recs)
{
	if (!b->nsec3)
		return 0;
	if (d->name[0] != 32 || name_labels(d->name) != b->origin_labels + 1)
		return ZNODE_EXT_LINK;
	for (size_t i = d->first; i < d->first + d->count; i++)
		if (rec_at(b, recs[i])->type == DNS_TYPE_NSEC3)
			return ZNODE_EXT_HASH;
	return ZNODE_EXT_LINK;
}

/* Where a block's name offsets start after its name and ext octets of link and hash. */
static size_t offsets_at(size_t name_len, size_t ext)
{
	/* the link is 8-aligned; without one, the name's odd octet aligns the offsets */
	return ext ? ((name_len + 7) & ~(size_t)7) + ext : name_len + (name_len & 1u);
}

/*
 * Octets of one node's block (see fill_node for the layout): *head before
 * the node, *tail after it, *rrsets and *sigsets RRsets and RRSIG groups.
 */
static void node_size(zbuild_t *b, const zdesc_t *d, const size_t *recs, size_t ext, size_t *head,
		      size_t *tail, size_t *rrsets, size_t *sigsets)
{
	size_t sets = 0, sigs = 0, names = 0, data = 0;
	uint16_t off[ZREC_NAMES_MAX];
	for (size_t i = d->first; i < d->first + d->count; i++) {
		zrec_t *r = rec_at(b, recs[i]);
		zrec_t *p = i > d->first ? rec_at(b, recs[i - 1]) : NULL;
		if (!p || p->type != r->type)
			sets++;
		/* a group of RRSIGs starts where the type covered changes (see fill_node) */
		long covered =
			r->type == DNS_TYPE_RRSIG ? rrsig_covered(rec_rdata(r), r->rdlen) : -1;
		if (covered >= 0 &&
		    (!p || p->type != r->type || rrsig_covered(rec_rdata(p), p->rdlen) != covered))
			sigs++;
		int c = rrtype_rdata_names(r->type, rec_rdata(r), r->rdlen, off, ZREC_NAMES_MAX);
		names += c > 0 ? (size_t)c : 0;
		data += 10 + r->rdlen;
	}
	*rrsets = sets;
	*sigsets = sigs;
	*head = sigs * sizeof(rrset_wire_t) + sets * sizeof(zrrset_t);
	*tail = offsets_at(d->name_len, ext) + names * sizeof(uint16_t) + data;
}

/*
 * Fill a node from its records into the block at mem: one block holding
 * [rrset_wire_t x sigs][zrrset_t x sets][znode_t][owner][link, back, hash]
 * [uint16 name offsets][RR data]. The RRsets end where the node starts
 * (znode_rrsets) and the owner follows it, 8-aligned (the block is, and
 * both arrays are multiples of 8), so the lookup's compare and the
 * answer's first reads fall on the same few lines, and the node needs no
 * pointer to its name or RRsets. *out: the node (flags but the store's
 * own unset, no holder).
 */
static_assert(sizeof(rrset_wire_t) % 8 == 0 && sizeof(zrrset_t) % 8 == 0,
	      "the owner after the RRsets is 8-aligned");
static int fill_node(zbuild_t *b, uint8_t *mem, const zdesc_t *d, const size_t *recs, size_t ext,
		     bool report, znode_t **out)
{
	size_t sets, sigs, head, tail;
	node_size(b, d, recs, ext, &head, &tail, &sets, &sigs);
	rrset_wire_t *sg = (rrset_wire_t *)(void *)mem;
	zrrset_t *rs = (zrrset_t *)(sg + sigs);
	znode_t *n = (znode_t *)(void *)(rs + sets);
	memset(n, 0, sizeof(*n));
	n->tail = (uint32_t)tail;
	uint8_t *name = (uint8_t *)(n + 1);
	memcpy(name, d->name, d->name_len);
	/* the padding, link and hash: zero (no link, no hash yet) */
	memset(name + d->name_len, 0, offsets_at(d->name_len, ext) - d->name_len);
	uint16_t *names = (uint16_t *)(void *)(name + offsets_at(d->name_len, ext));
	size_t name_total = 0;
	uint16_t off[ZREC_NAMES_MAX];
	for (size_t i = d->first; i < d->first + d->count; i++) {
		zrec_t *r = rec_at(b, recs[i]);
		int c = rrtype_rdata_names(r->type, rec_rdata(r), r->rdlen, off, ZREC_NAMES_MAX);
		name_total += c > 0 ? (size_t)c : 0;
	}
	uint8_t *data = (uint8_t *)(names + name_total);
	size_t s = (size_t)-1, pos = 0;
	uint16_t *np = names;
	for (size_t i = d->first; i < d->first + d->count; i++) {
		zrec_t *r = rec_at(b, recs[i]);
		if (s == (size_t)-1 || rs[s].set.type != r->type) {
			s++;
			rs[s] = (zrrset_t){
				.set = { .type = r->type, .data = data + pos, .names = np }
			};
		}
		rrset_wire_t *set = &rs[s].set;
		size_t at = pos - (size_t)(set->data - data);
		if (at + 10 + r->rdlen > UINT16_MAX) {
			if (report)
				report_rec(b, true, r, "%s: RRset larger than 65535 octets%s",
					   NULL);
			return SHOAL_EZONE;
		}
		uint8_t *p = data + pos;
		p[0] = (uint8_t)(r->type >> 8);
		p[1] = (uint8_t)r->type;
		p[2] = 0;
		p[3] = DNS_CLASS_IN;
		p[4] = (uint8_t)(r->ttl >> 24);
		p[5] = (uint8_t)(r->ttl >> 16);
		p[6] = (uint8_t)(r->ttl >> 8);
		p[7] = (uint8_t)r->ttl;
		p[8] = (uint8_t)(r->rdlen >> 8);
		p[9] = (uint8_t)r->rdlen;
		memcpy(p + 10, rec_rdata(r), r->rdlen);
		int c = rrtype_rdata_names(r->type, rec_rdata(r), r->rdlen, off, ZREC_NAMES_MAX);
		for (int k = 0; k < c; k++)
			*np++ = (uint16_t)(at + 10 + off[k]);
		set->name_count = (uint16_t)(np - set->names);
		set->rr_count++;
		pos += 10 + r->rdlen;
		set->data_len = (uint32_t)(pos - (size_t)(set->data - data));
	}
	/* node_size counted what was written: the block is full, no more */
	assert(s + 1 == sets && (size_t)(np - names) == name_total &&
	       data + pos == mem + head + sizeof(znode_t) + tail);
	for (size_t i = 0; i < sets; i++)
		if (rs[i].set.name_count == 0)
			rs[i].set.names = NULL;

	/*
	 * RRSIGs sorted by RDATA are grouped by type covered (RFC 4034 3.1).
	 * Every read stays inside its own record: the load checks keep short
	 * signatures out, and one that got in would only be left ungrouped.
	 */
	const zrrset_t *sigset = NULL;
	for (size_t i = 0; i < sets; i++)
		if (rs[i].set.type == DNS_TYPE_RRSIG)
			sigset = &rs[i];
	size_t g = 0;
	if (sigset) {
		const uint8_t *p = sigset->set.data, *end = p + sigset->set.data_len;
		rrset_wire_t *w = NULL;
		long prev = -1;
		while (end - p >= 10 && (size_t)(end - p) >= 10u + wire_get_u16(p + 8)) {
			uint16_t rdlen = wire_get_u16(p + 8);
			long covered = rrsig_covered(p + 10, rdlen);
			if (covered < 0) {
				w = NULL;
			} else if (!w || covered != prev) {
				if (g == sigs)
					break;
				w = &sg[g++];
				*w = (rrset_wire_t){ .type = DNS_TYPE_RRSIG, .data = p };
				for (size_t k = 0; k < sets; k++)
					if (rs[k].set.type == covered)
						rs[k].sigs = w;
			}
			p += 10 + rdlen;
			if (w) {
				w->rr_count++;
				w->data_len = (uint32_t)(p - w->data);
			}
			prev = covered;
		}
	}
	if (sets > UINT16_MAX) {
		/* max-types-per-name stops this first; the count must not wrap */
		if (report)
			report_rec(b, true, rec_at(b, recs[d->first]),
				   "%s: more than 65535 RRsets%s", NULL);
		return SHOAL_EZONE;
	}
	n->name_len = d->name_len;
	n->labels = (uint8_t)name_labels(name);
	n->rrset_count = (uint16_t)sets;
	n->sig_groups = (uint16_t)sigs;
	n->flags = (uint16_t)(ext ? ZNODE_LINKED : 0);
	n->flags |= ext == ZNODE_EXT_HASH ? ZNODE_HASHED : 0;
	*out = n;
	return 0;
}

/* Allocate node d's block from a and fill it; *out the node. */
static int arena_node(zbuild_t *b, zarena_t *a, const zdesc_t *d, const size_t *recs, bool report,
		      znode_t **out)
{
	size_t sets, sigs, head, tail, ext = ext_size(b, d, recs);
	node_size(b, d, recs, ext, &head, &tail, &sets, &sigs);
	uint8_t *mem = zarena_alloc(a, head + sizeof(znode_t) + tail);
	if (!mem)
		return SHOAL_ENOMEM;
	return fill_node(b, mem, d, recs, ext, report, out);
}

/* Flags in canonical order, apex first: each parent is the last node a label shorter. */
static void link_nodes(znode_t **nodes, size_t count)
{
	znode_t *chain[NAME_MAXLABELS + 1];
	for (size_t i = 0; i < count; i++) {
		znode_t *n = nodes[i];
		chain[n->labels] = n;
		n->flags |= znode_own_flags(n, i == 0);
		if (i == 0)
			continue;
		znode_t *p = chain[n->labels - 1];
		if (name_is_wildcard(znode_name(n)))
			p->flags |= ZNODE_WILDCARD_CHILD;
		if (zflags_hide_below(p->flags))
			n->flags |= ZNODE_OCCLUDED;
	}
}

/* RFC 9471: warn when an in-domain name server of a cut has no address. */
static void check_glue(zbuild_t *b, const zone_t *z, znode_t *const *nodes, const zdesc_t *d,
		       const size_t *recs)
{
	for (size_t i = 0; i < z->node_count; i++) {
		if (zone_stop_at(b->cancel, i + 1))
			return; /* compile sees it too */
		const znode_t *n = nodes[i];
		if (!(n->flags & ZNODE_DELEG) || (n->flags & ZNODE_OCCLUDED))
			continue;
		for (size_t k = d[i].first; k < d[i].first + d[i].count; k++) {
			zrec_t *r = rec_at(b, recs[k]);
			if (r->type != DNS_TYPE_NS)
				continue;
			char text[NAME_TEXT_MAX];
			if (zone_glue_missing(z, n, rec_rdata(r), r->rdlen, text))
				report_rec(b, false, r, "%s: no glue address for name server %s",
					   text);
		}
	}
}

/*
 * Nodes filled on the load's threads, each range into an arena of its
 * own (one arena is for one thread), taken into the zone's afterwards.
 * The first node that fails (the lowest index) is the one reported.
 */
typedef struct fill_job {
	zbuild_t *b;
	const zdesc_t *d;
	const size_t *recs;
	znode_t **nodes;
	zarena_t *arena[LOAD_THREADS_MAX];
	zarena_t *own;    /* one range: the zone's own arena, nothing to adopt */
	size_t next;      /* the next arena slot, taken atomically */
	size_t failed_at; /* the lowest node that failed, or SIZE_MAX */
	bool cancelled;   /* a range stopped at the load's cancel */
	int err;
} fill_job_t;

static void fill_range(void *arg, size_t from, size_t to)
{
	fill_job_t *job = arg;
	size_t slot = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
	zarena_t *a = job->own ? job->own : (job->arena[slot] = zarena_new());
	for (size_t i = from; i < to; i++) {
		if (zone_stop_at(job->b->cancel, i - from + 1)) {
			__atomic_store_n(&job->cancelled, true, __ATOMIC_RELAXED);
			return;
		}
		int err = a ? arena_node(job->b, a, &job->d[i], job->recs, false, &job->nodes[i])
			    : SHOAL_ENOMEM;
		if (err < 0) {
			/* the ranges run at once: keep the lowest failure (compare and swap) */
			size_t at = __atomic_load_n(&job->failed_at, __ATOMIC_ACQUIRE);
			while (i < at &&
			       !__atomic_compare_exchange_n(&job->failed_at, &at, i, false,
							    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				;
			return;
		}
	}
}

static int fill_nodes(zbuild_t *b, zarena_t *a, const zdesc_t *d, const size_t *recs,
		      znode_t **nodes, size_t count)
{
	fill_job_t job = { .b = b, .d = d, .recs = recs, .nodes = nodes, .failed_at = SIZE_MAX };
	/* a small zone (one range) fills its own arena: one block less, nothing moved */
	if (zone_parallel_ranges(count) == 1)
		job.own = a;
	size_t k = zone_parallel(count, fill_range, &job);
	int err = 0;
	for (size_t i = 0; i < k && !job.own; i++)
		if (!job.arena[i] || zarena_adopt(a, job.arena[i]) < 0)
			err = SHOAL_ENOMEM;
	if (job.cancelled)
		return err < 0 ? err : SHOAL_ETIMEOUT;
	if (job.failed_at != SIZE_MAX)
		/* again, here, to say why: the zone is refused anyway */
		err = arena_node(b, a, &d[job.failed_at], recs, true, &nodes[job.failed_at]);
	return err < 0 ? err : 0;
}

/* A version with a lineage of its own around arena (taken over); NULL on ENOMEM. */
static zone_t *version_new(zarena_t *arena)
{
	/* on a cache line of its own: the fields every answer reads share one */
	zone_t *z = zslab_alloc(sizeof(*z));
	if (z)
		memset(z, 0, sizeof(*z));
	if (!z || !arena || !(z->lin = zlin_new(arena))) {
		zslab_free(z, sizeof(*z));
		zarena_free(arena);
		return NULL;
	}
	ztree_init(&z->names, ZTREE_NAMES, true);
	ztree_init(&z->nsec, ZTREE_NAMES, false);
	ztree_init(&z->nsec3.chain, ZTREE_HASHES, false);
	memcpy(z->hash_key, zone_hash_key(), sizeof(z->hash_key));
	z->refs = 1;
	z->loaded_at = time(NULL);
	return z;
}

/* The zone's structures over its filled nodes: the tree of names, the index, DNSSEC. */
static int structure(zbuild_t *b, zone_t *z, znode_t **nodes, const zdesc_t *d, const size_t *recs)
{
	uint64_t gen = zone_gen_next();
	int err = ztree_build(&z->names, (const znode_t *const *)nodes, z->node_count, gen,
			      z->lin->arena);
	if (err == 0)
		err = zhash_build(z, gen, b->cancel);
	if (err < 0)
		return err;
	if (!znode_rrset(z->apex, DNS_TYPE_NS)) {
		/* Knot warns and NSD is silent; both serve the zone (RFC 1034 4.2.1 wants NS) */
		zone_report(b->msg, b->msg_arg, false, b->file, 0,
			    "no NS records at the zone apex %s", b->origin_text);
	}
	check_glue(b, z, nodes, d, recs);
	if (zone_stopped(b->cancel))
		return SHOAL_ETIMEOUT;
	if ((err = zone_neg_soa(z, z->lin->arena)) < 0)
		return err;
	return zone_dnssec_build(z, nodes, gen, b->max_nsec3_iterations, b->msg, b->msg_arg,
				 b->file, b->cancel);
}

static int compile(zbuild_t *b, const size_t *recs, const zdesc_t *d, size_t count, size_t rr_count,
		   zone_t **out)
{
	zone_t *z = version_new(zarena_new());
	if (!z)
		return SHOAL_ENOMEM;
	int err = SHOAL_ENOMEM;
	znode_t **nodes = malloc((count ? count : 1) * sizeof(*nodes));
	if (!nodes)
		goto done;
	zone_huge_pages(nodes, count * sizeof(*nodes));
	if ((err = fill_nodes(b, z->lin->arena, d, recs, nodes, count)) < 0)
		goto done;
	link_nodes(nodes, count);
	z->node_count = count;
	z->apex = nodes[0];
	z->rr_count = rr_count;
	if ((err = structure(b, z, nodes, d, recs)) < 0)
		goto done;
	if (b->failed) {
		err = SHOAL_EZONE;
		goto done;
	}
	zarena_trim(z->lin->arena);
	free(nodes);
	*out = z;
	return 0;
done:
	free(nodes);
	zone_free(z);
	return err;
}

/*
 * The apex sorts first; is one of its records of `type` (and, when usable
 * is not NULL, with RDATA it takes)?
 */
static bool apex_has(zbuild_t *b, const size_t *recs, size_t n, uint16_t type,
		     bool (*usable)(const uint8_t *rdata, uint16_t rdlen))
{
	for (size_t i = 0; i < n; i++) {
		zrec_t *r = rec_at(b, recs[i]);
		if (r->namelen != b->origin_len ||
		    memcmp(rec_name(r), b->origin, b->origin_len) != 0)
			return false;
		if (r->type == type && (!usable || usable(rec_rdata(r), r->rdlen)))
			return true;
	}
	return false;
}

/*
 * Sort b's records and check them name by name (check_node), the records
 * kept written over b->recs[0..*kept). 0, SHOAL_ENOMEM or SHOAL_ETIMEOUT.
 */
static int sort_and_check(zbuild_t *b, size_t *kept)
{
	if (b->rec_count && sort_records(b) < 0)
		return SHOAL_ENOMEM;
	if (zone_stopped(b->cancel))
		return SHOAL_ETIMEOUT;
	/*
	 * The records kept overwrite the index in place: a node's are written
	 * at or before where they were read (duplicates only drop out), so the
	 * peak of a big load holds no second index.
	 */
	size_t n = 0;
	for (size_t i = 0, names = 0; i < b->rec_count; names++) {
		if (zone_stop_at(b->cancel, names + 1))
			return SHOAL_ETIMEOUT;
		size_t j = i + 1;
		while (j < b->rec_count && same_owner(rec_at(b, b->recs[i]), rec_at(b, b->recs[j])))
			j++;
		n += check_node(b, i, j, b->recs + n);
		i = j;
	}
	*kept = n;
	return 0;
}

int zbuild_finish(zbuild_t *b, zone_t **out)
{
	int err = SHOAL_EZONE; /* with no records, the reasons are reported already */
	size_t n = 0;
	zdesc_t *d = NULL;
	size_t count = 0, d_cap = 0;
	if ((b->rec_count == 0 && b->failed) || (err = sort_and_check(b, &n)) < 0)
		goto done;
	if (!apex_has(b, b->recs, n, DNS_TYPE_SOA, NULL)) {
		zone_report(b->msg, b->msg_arg, true, b->file, 0,
			    "no SOA record at the zone apex %s", b->origin_text);
		err = SHOAL_EZONE;
		goto done;
	}
	if (b->failed) {
		/* reported already; compiling would only meet what the checks refused */
		err = SHOAL_EZONE;
		goto done;
	}
	if ((err = plan_nodes(b, b->recs, n, &d, &count, &d_cap)) < 0)
		goto done;
	/* an NSEC3PARAM zone_dnssec_build would use (RFC 5155 4.1.2) */
	b->nsec3 = apex_has(b, b->recs, n, DNS_TYPE_NSEC3PARAM, zone_nsec3param_usable);
	err = SHOAL_ETIMEOUT;
	if (zone_stopped(b->cancel))
		goto done;
	err = compile(b, b->recs, d, count, n, out);
done:
	shed(d, d_cap, sizeof(*d));
	zbuild_free(b);
	return err;
}

int zbuild_nodes(zbuild_t *b, zlin_t *lin, bool linked, int (*fn)(void *arg, znode_t *n), void *arg)
{
	size_t n = 0;
	int err = SHOAL_EZONE;
	if (!b->failed && (err = sort_and_check(b, &n)) == 0 && b->failed)
		err = SHOAL_EZONE; /* reported: nothing is made of what the checks refused */
	if (err < 0)
		goto done;
	b->nsec3 = linked;
	for (size_t i = 0; i < n && err == 0;) {
		zrec_t *r = rec_at(b, b->recs[i]);
		size_t j = i + 1;
		while (j < n && same_owner(r, rec_at(b, b->recs[j])))
			j++;
		zdesc_t d = { rec_name(r), i, (uint32_t)(j - i), r->namelen };
		size_t sets, sigs, head, tail, ext = ext_size(b, &d, b->recs);
		node_size(b, &d, b->recs, ext, &head, &tail, &sets, &sigs);
		znode_t *node = znode_alloc(lin, head, tail);
		err = node ? fill_node(b, (uint8_t *)node - head, &d, b->recs, ext, true, &node)
			   : SHOAL_ENOMEM;
		if (err == 0) {
			node->flags |= ZNODE_HEAP | ZNODE_FRESH;
			err = fn(arg, node);
		} else if (node) {
			/* fill_node wrote over the node it was handed: free by the block */
			__atomic_fetch_sub(&lin->heap, head + sizeof(znode_t) + tail,
					   __ATOMIC_RELAXED);
			__atomic_fetch_sub(&lin->heap_count, 1, __ATOMIC_RELAXED);
			free((uint8_t *)node - head);
		}
		i = j;
	}
done:
	zbuild_free(b);
	return err;
}

/* ---- a reload's changes, from the records read to the version served ---- */

/* A walk over a node's records: each RRset's, in type order, each record in RDATA order. */
typedef struct node_recs {
	const znode_t *n;
	uint16_t set;
	const uint8_t *rec; /* type, class, TTL, RDLENGTH, RDATA; NULL past the last */
} node_recs_t;

static void node_recs_next(node_recs_t *w)
{
	const rrset_wire_t *s =
		w->n && w->set < w->n->rrset_count ? &znode_rrsets(w->n)[w->set].set : NULL;
	if (w->rec && s && w->rec + 10 + wire_get_u16(w->rec + 8) < s->data + s->data_len) {
		w->rec += 10 + wire_get_u16(w->rec + 8);
		return;
	}
	if (w->rec)
		w->set++;
	w->rec = w->n && w->set < w->n->rrset_count ? znode_rrsets(w->n)[w->set].set.data : NULL;
}

/* The first record of n (NULL: none). */
static void node_recs_first(node_recs_t *w, const znode_t *n)
{
	*w = (node_recs_t){ .n = n };
	node_recs_next(w);
}

/* Accumulated changes and their size, for the bound. */
typedef struct diff {
	changeset_t *cs;
	size_t octets, max;
	int err;
} diff_t;

static void diff_add(diff_t *d, bool add, const uint8_t *owner, uint16_t type, uint32_t ttl,
		     const uint8_t *rdata, uint16_t rdlen)
{
	if (d->err == 0)
		d->err = changeset_add(d->cs, add, owner, type, ttl, rdata, rdlen);
	d->octets += name_length(owner) + 10u + rdlen;
	if (d->err == 0 && d->max && d->octets > d->max)
		d->err = SHOAL_ESPACE;
}

/* A served record (from node_recs) to one side. */
static void diff_served(diff_t *d, bool add, const znode_t *n, const uint8_t *rec)
{
	diff_add(d, add, znode_name(n), wire_get_u16(rec), wire_get_u32(rec + 4), rec + 10,
		 wire_get_u16(rec + 8));
}

/* One name in both: the served node n's records against b's recs[i, j), SOAs left out. */
static void diff_name(zbuild_t *b, diff_t *d, const znode_t *n, const size_t *recs, size_t i,
		      size_t j, bool apex)
{
	node_recs_t w;
	node_recs_first(&w, n);
	while (d->err == 0 && (w.rec || i < j)) {
		zrec_t *r = i < j ? rec_at(b, recs[i]) : NULL;
		if ((w.rec && apex && wire_get_u16(w.rec) == DNS_TYPE_SOA)) {
			node_recs_next(&w);
			continue;
		}
		if (r && apex && r->type == DNS_TYPE_SOA) {
			i++;
			continue;
		}
		int c = !w.rec ? 1 : !r ? -1 : 0;
		if (c == 0) {
			uint16_t t = wire_get_u16(w.rec), len = wire_get_u16(w.rec + 8);
			c = t != r->type ? (t < r->type ? -1 : 1)
					 : memcmp(w.rec + 10, rec_rdata(r),
						  len < r->rdlen ? len : r->rdlen);
			if (c == 0 && len != r->rdlen)
				c = len < r->rdlen ? -1 : 1;
		}
		/* the same record: a changed TTL is a deletion and an addition (RFC 1995 4) */
		if (c == 0 && wire_get_u32(w.rec + 4) == r->ttl) {
			node_recs_next(&w);
			i++;
			continue;
		}
		if (c <= 0) {
			diff_served(d, false, n, w.rec);
			node_recs_next(&w);
		}
		if (c >= 0) {
			diff_add(d, true, rec_name(r), r->type, r->ttl, rec_rdata(r), r->rdlen);
			i++;
		}
	}
}

/* The merge walk of the served names and b's recs[0..n), both in canonical order. */
static void diff_walk(zbuild_t *b, diff_t *d, const zone_t *served, size_t n)
{
	zone_iter_t it;
	const znode_t *node = zone_first(served, &it);
	uint8_t key[ZONE_KEY_MAX];
	size_t i = 0, klen = node ? zone_name_key(znode_name(node), key) : 0;
	for (size_t step = 1; d->err == 0 && (node || i < n); step++) {
		if (zone_stop_at(b->cancel, step)) {
			d->err = SHOAL_ETIMEOUT;
			return;
		}
		size_t j = i;
		while (j < n &&
		       (j == i || same_owner(rec_at(b, b->recs[i]), rec_at(b, b->recs[j]))))
			j++;
		zrec_t *r = i < n ? rec_at(b, b->recs[i]) : NULL;
		int c = !node ? 1
			: !r  ? -1
			      : memcmp(key, rec_key(r), klen < r->keylen ? klen : r->keylen);
		if (node && r && c == 0)
			c = (klen > r->keylen) - (klen < r->keylen);
		bool apex = node == served->apex;
		if (c <= 0)
			diff_name(b, d, node, b->recs, i, c == 0 ? j : i, apex);
		else
			diff_name(b, d, NULL, b->recs, i, j, false);
		if (c >= 0)
			i = j;
		if (c <= 0 && (node = zone_next(&it)))
			klen = zone_name_key(znode_name(node), key);
	}
}

int zbuild_diff(zbuild_t *b, const zone_t *served, size_t max_octets, changeset_t **out)
{
	size_t n = 0;
	diff_t d = { .max = max_octets, .err = SHOAL_EZONE };
	if ((b->rec_count == 0 && b->failed) || (d.err = sort_and_check(b, &n)) < 0)
		goto done;
	d.err = SHOAL_EZONE;
	if (!apex_has(b, b->recs, n, DNS_TYPE_SOA, NULL)) {
		zone_report(b->msg, b->msg_arg, true, b->file, 0,
			    "no SOA record at the zone apex %s", b->origin_text);
		goto done;
	}
	if (b->failed || !(d.cs = changeset_new())) {
		d.err = b->failed ? SHOAL_EZONE : SHOAL_ENOMEM;
		goto done;
	}
	d.err = 0;
	/* the SOAs head the two sides: the served one, the file's (the apex sorts first) */
	const zrrset_t *soa = znode_rrset(served->apex, DNS_TYPE_SOA);
	diff_served(&d, false, served->apex, soa->set.data);
	for (size_t i = 0; i < n; i++) {
		zrec_t *r = rec_at(b, b->recs[i]);
		if (r->type == DNS_TYPE_SOA) {
			diff_add(&d, true, rec_name(r), r->type, r->ttl, rec_rdata(r), r->rdlen);
			break;
		}
	}
	diff_walk(b, &d, served, n);
	if (d.err == 0)
		d.err = changeset_seal(d.cs);
done:
	if (d.err == 0)
		*out = d.cs;
	else
		changeset_unref(d.cs);
	zbuild_free(b);
	return d.err;
}

znode_t *zbuild_ent(zlin_t *lin, const uint8_t *name, bool linked)
{
	size_t len = name_length(name), ext = linked ? ZNODE_EXT_LINK : 0;
	size_t tail = offsets_at(len, ext);
	znode_t *n = znode_alloc(lin, 0, tail);
	if (!n)
		return NULL;
	uint8_t *p = (uint8_t *)(n + 1);
	memcpy(p, name, len);
	memset(p + len, 0, tail - len);
	n->name_len = (uint8_t)len;
	n->labels = (uint8_t)name_labels(name);
	n->flags |= linked ? ZNODE_LINKED : 0;
	return n;
}
