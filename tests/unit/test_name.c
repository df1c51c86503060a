/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for proto/name.c: unpacking, order, hashing, text. */
#include <stdbool.h>
#include <string.h>

#include "proto/name.h"
#include "tests/unit/unit.h"

static int from_text(const char *t, uint8_t *dst)
{
	return name_from_text(t, NULL, dst);
}

static void test_text_round_trip(void)
{
	uint8_t n[NAME_MAXLEN];
	char t[NAME_TEXT_MAX];
	CU_ASSERT_EQUAL(from_text("www.Example.COM.", n), 17);
	CU_ASSERT_EQUAL(memcmp(n, "\3www\7Example\3COM", 17), 0);
	CU_ASSERT(name_to_text(n, t, sizeof(t)) > 0);
	CU_ASSERT_STRING_EQUAL(t, "www.Example.COM.");
	CU_ASSERT_EQUAL(from_text("a\\.b.c.", n), 7);
	CU_ASSERT_EQUAL(n[0], 3);
	name_to_text(n, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, "a\\.b.c.");
	CU_ASSERT_EQUAL(from_text("\\000\\255x.", n), 5);
	CU_ASSERT_EQUAL(n[1], 0);
	CU_ASSERT_EQUAL(n[2], 255);
	name_to_text(n, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, "\\000\\255x.");
	CU_ASSERT_EQUAL(from_text(".", n), 1);
	name_to_text(n, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, ".");
}

/*
 * Every octet in a label is written so that any master file reader reads
 * it back: letters, digits, "-", "_", "/" and "*" bare, the other printables
 * as \X (Knot's zone scanner refuses "a,b", "a+b", "a=b" and their kind
 * bare), the rest as \DDD (RFC 1035 5.1).
 */
static void test_text_every_octet(void)
{
	for (int c = 0; c < 256; c++) {
		uint8_t n[3] = { 1, (uint8_t)c, 0 }, back[NAME_MAXLEN];
		char t[NAME_TEXT_MAX], want[8];
		bool bare = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || strchr("-_/*", c);
		if (c && bare)
			snprintf(want, sizeof(want), "%c.", c);
		else if (c > 0x20 && c < 0x7f)
			snprintf(want, sizeof(want), "\\%c.", c);
		else
			snprintf(want, sizeof(want), "\\%03d.", c);
		CU_ASSERT_EQUAL(name_to_text(n, t, sizeof(t)), (int)strlen(want));
		if (strcmp(t, want) != 0)
			fprintf(stderr, "  octet %d: [%s], not [%s]\n", c, t, want);
		CU_ASSERT_STRING_EQUAL(t, want);
		CU_ASSERT_EQUAL(from_text(t, back), 3);
		CU_ASSERT_EQUAL(memcmp(back, n, 3), 0);
	}
	uint8_t n[NAME_MAXLEN];
	char t[NAME_TEXT_MAX];
	CU_ASSERT_EQUAL(from_text("a\\,b\\+c\\=d.*.x/y.", n), 15);
	name_to_text(n, t, sizeof(t));
	CU_ASSERT_STRING_EQUAL(t, "a\\,b\\+c\\=d.*.x/y.");
}

static void test_text_relative_and_errors(void)
{
	uint8_t origin[NAME_MAXLEN], n[NAME_MAXLEN];
	from_text("example.com.", origin);
	CU_ASSERT_EQUAL(name_from_text("www", origin, n), 17);
	CU_ASSERT(name_equal(n, (const uint8_t *)"\3www\7example\3com"));
	CU_ASSERT_EQUAL(name_from_text("@", origin, n), 13);
	CU_ASSERT_EQUAL(from_text("a..b.", n), SHOAL_ENAME);
	CU_ASSERT_EQUAL(from_text("", n), SHOAL_ENAME);
	CU_ASSERT_EQUAL(from_text("\\256.", n), SHOAL_ENAME);
	char label64[80];
	memset(label64, 'a', 64);
	strcpy(label64 + 64, ".");
	CU_ASSERT_EQUAL(from_text(label64, n), SHOAL_ENAME);
	/* 4 labels of 63 = 256 octets with the root: one too many */
	char big[300];
	size_t o = 0;
	for (int i = 0; i < 4; i++) {
		memset(big + o, 'b', 63);
		o += 63;
		big[o++] = '.';
	}
	big[o] = 0;
	CU_ASSERT_EQUAL(from_text(big, n), SHOAL_ENAME);
	big[o - 3] = '.';
	big[o - 2] = 0; /* 63+63+63+61 labels: 255 octets exactly */
	CU_ASSERT_EQUAL(from_text(big, n), 255);
}

static void test_unpack_compression(void)
{
	/* header, then "example.com" at 12, "www" + pointer to 12 at 25 */
	uint8_t pkt[64] = { 0 };
	memcpy(pkt + 12, "\7EXAMPLE\3com\0", 13);
	memcpy(pkt + 25, "\3www\xc0\x0c", 6);
	wire_t w;
	wire_init_read(&w, pkt, 31);
	w.pos = 25;
	uint8_t n[NAME_MAXLEN];
	CU_ASSERT_EQUAL(name_unpack(&w, n, true), 17);
	CU_ASSERT_EQUAL(memcmp(n, "\3www\7example\3com", 17), 0);
	CU_ASSERT_EQUAL(w.pos, 31);
	w.pos = 25;
	CU_ASSERT_EQUAL(name_unpack(&w, n, false), 17);
	CU_ASSERT_EQUAL(memcmp(n, "\3www\7EXAMPLE\3com", 17), 0);
	w.pos = 25;
	CU_ASSERT_EQUAL(name_skip(&w), 0);
	CU_ASSERT_EQUAL(w.pos, 31);
}

static void test_unpack_rejects(void)
{
	uint8_t n[NAME_MAXLEN];
	wire_t w;
	/* a pointer to itself */
	const uint8_t loop[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 12 };
	wire_init_read(&w, loop, sizeof(loop));
	w.pos = 12;
	CU_ASSERT_EQUAL(name_unpack(&w, n, true), SHOAL_EMALFORMED);
	CU_ASSERT_EQUAL(w.err, SHOAL_EMALFORMED);
	/* a forward pointer */
	const uint8_t fwd[] = { 0xc0, 2, 1, 'a', 0 };
	wire_init_read(&w, fwd, sizeof(fwd));
	CU_ASSERT_EQUAL(name_unpack(&w, n, true), SHOAL_EMALFORMED);
	/* two pointers pointing at each other backwards then forwards */
	const uint8_t pingpong[] = { 1, 'a', 0xc0, 4, 1, 'b', 0xc0, 0 };
	wire_init_read(&w, pingpong, sizeof(pingpong));
	w.pos = 4;
	CU_ASSERT_EQUAL(name_unpack(&w, n, true), SHOAL_EMALFORMED);
	/* label type 01 (RFC 6891 9) */
	const uint8_t ext[] = { 0x41, 0 };
	wire_init_read(&w, ext, sizeof(ext));
	CU_ASSERT_EQUAL(name_unpack(&w, n, true), SHOAL_EMALFORMED);
	/* truncated label */
	const uint8_t trunc[] = { 5, 'a', 'b' };
	wire_init_read(&w, trunc, sizeof(trunc));
	CU_ASSERT_EQUAL(name_unpack(&w, n, true), SHOAL_EMALFORMED);
	wire_init_read(&w, trunc, sizeof(trunc));
	CU_ASSERT_EQUAL(name_skip(&w), SHOAL_EMALFORMED);
	/* 256 octets through a chain of pointers */
	uint8_t big[400] = { 0 };
	size_t o = 0;
	for (int i = 0; i < 5; i++) {
		big[o] = 60;
		memset(big + o + 1, 'x', 60);
		o += 61;
	}
	big[o++] = 0;
	wire_init_read(&w, big, o);
	CU_ASSERT_EQUAL(name_unpack(&w, n, true), SHOAL_EMALFORMED);
}

static void test_canonical_order(void)
{
	/* RFC 4034 6.1's example, in order */
	const char *order[] = { "example.",         "a.example.",      "yljkjljk.a.example.",
				"Z.a.example.",     "zABC.a.EXAMPLE.", "z.example.",
				"\\001.z.example.", "*.z.example.",    "\\200.z.example." };
	uint8_t a[NAME_MAXLEN], b[NAME_MAXLEN];
	for (size_t i = 0; i + 1 < sizeof(order) / sizeof(order[0]); i++) {
		CU_ASSERT_FATAL(from_text(order[i], a) > 0);
		CU_ASSERT_FATAL(from_text(order[i + 1], b) > 0);
		CU_ASSERT(name_compare(a, b) < 0);
		CU_ASSERT(name_compare(b, a) > 0);
	}
	from_text("WWW.example.", a);
	from_text("www.EXAMPLE.", b);
	CU_ASSERT_EQUAL(name_compare(a, b), 0);
	CU_ASSERT(name_equal(a, b));
}

static void test_relations_and_hash(void)
{
	uint8_t a[NAME_MAXLEN], b[NAME_MAXLEN], c[NAME_MAXLEN];
	from_text("x.Sub.example.com.", a);
	from_text("example.COM.", b);
	from_text("ample.com.", c);
	CU_ASSERT(name_is_subdomain(a, b));
	CU_ASSERT(name_is_subdomain(b, b));
	CU_ASSERT_FALSE(name_is_subdomain(b, a));
	CU_ASSERT_FALSE(name_is_subdomain(b, c));
	CU_ASSERT_EQUAL(name_labels(a), 4);
	CU_ASSERT(name_equal(name_parent(name_parent(a)), b));
	CU_ASSERT_EQUAL(name_length(a), 19);
	from_text("*.example.com.", c);
	CU_ASSERT(name_is_wildcard(c));
	CU_ASSERT_FALSE(name_is_wildcard(a));
	const uint8_t key[16] = { 1, 2, 3 };
	uint8_t d[NAME_MAXLEN];
	from_text("EXAMPLE.com.", d);
	CU_ASSERT_EQUAL(name_hash(b, key), name_hash(d, key));
	CU_ASSERT_NOT_EQUAL(name_hash(a, key), name_hash(b, key));
	name_lower(d);
	CU_ASSERT_EQUAL(memcmp(d, "\7example\3com", 13), 0);
	/* a lowercase name hashed where it lies: the same value */
	CU_ASSERT_EQUAL(name_hash_lower(d, 13, key), name_hash(b, key));
}

/* name_hash lowercases a word at a time: check it against name_lower for every octet. */
static void test_hash_octets(void)
{
	const uint8_t key[16] = { 9, 8, 7 };
	uint64_t h[256];
	for (int v = 0; v < 256; v++) {
		/* 13 octets: the octet lands in the first word and in the partial last one */
		uint8_t n[] = { 5,   'a', 'B', (uint8_t)v, 'c', 'D', 5,
				'x', 'Y', 'z', (uint8_t)v, 'Q', 0 };
		uint8_t low[sizeof(n)];
		memcpy(low, n, sizeof(n));
		name_lower(low);
		h[v] = name_hash(n, key);
		CU_ASSERT_EQUAL(h[v], name_hash(low, key));
	}
	for (int v = 0; v < 256; v++) {
		int lv = v >= 'A' && v <= 'Z' ? v + 32 : v;
		for (int x = 0; x < 256; x++) {
			int lx = x >= 'A' && x <= 'Z' ? x + 32 : x;
			if ((h[v] == h[x]) != (lv == lx))
				CU_FAIL("name_hash: octets hash equal iff equal after lowercasing");
		}
	}
}

/* A zone's name as typed, in the one form the logs use: lowercase, the final dot. */
static void test_zone_text(void)
{
	char buf[NAME_TEXT_MAX + 2];
	CU_ASSERT_EQUAL(name_zone_text("Example.COM", buf, sizeof(buf)), 12);
	CU_ASSERT_STRING_EQUAL(buf, "example.com.");
	CU_ASSERT_EQUAL(name_zone_text("example.com.", buf, sizeof(buf)), 12);
	CU_ASSERT_STRING_EQUAL(buf, "example.com.");
	CU_ASSERT_EQUAL(name_zone_text(".", buf, sizeof(buf)), 1);
	CU_ASSERT_STRING_EQUAL(buf, ".");
	CU_ASSERT_EQUAL(name_zone_text("a\\.b", buf, sizeof(buf)), 5);
	CU_ASSERT_STRING_EQUAL(buf, "a\\.b.");
	CU_ASSERT_EQUAL(name_zone_text("bad..name", buf, sizeof(buf)), SHOAL_ENAME);
	CU_ASSERT_EQUAL(name_zone_text("example.com", buf, 5), SHOAL_ESPACE);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_text_round_trip),    UNIT_TEST(test_text_relative_and_errors),
		UNIT_TEST(test_text_every_octet),   UNIT_TEST(test_unpack_compression),
		UNIT_TEST(test_unpack_rejects),     UNIT_TEST(test_canonical_order),
		UNIT_TEST(test_relations_and_hash), UNIT_TEST(test_hash_octets),
		UNIT_TEST(test_zone_text),          UNIT_END,
	};
	return unit_run(argc, argv, "name", tests);
}
