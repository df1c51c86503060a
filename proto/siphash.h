/* SipHash (Aumasson and Bernstein), with the rounds as parameters, for hash tables. */
#ifndef SHOAL_PROTO_SIPHASH_H
#define SHOAL_PROTO_SIPHASH_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * SipHash-c-d as its paper defines it: a 128-bit key, 64-bit words read
 * little-endian, `c` rounds per word, `d` rounds to finish. Written as
 * inline steps so that a caller can change the words as it feeds them (the
 * name hash lowercases them) and the round counts fold away.
 */
typedef struct siphash {
	uint64_t v0, v1, v2, v3;
} siphash_t;

static inline uint64_t siphash_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void siphash_round(siphash_t *s)
{
	s->v0 += s->v1;
	s->v1 = siphash_rotl(s->v1, 13) ^ s->v0;
	s->v0 = siphash_rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = siphash_rotl(s->v3, 16) ^ s->v2;
	s->v0 += s->v3;
	s->v3 = siphash_rotl(s->v3, 21) ^ s->v0;
	s->v2 += s->v1;
	s->v1 = siphash_rotl(s->v1, 17) ^ s->v2;
	s->v2 = siphash_rotl(s->v2, 32);
}

/* A little-endian 64-bit word at p (any alignment). */
static inline uint64_t siphash_load(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return le64toh(w);
}

static inline void siphash_init(siphash_t *s, const uint8_t key[16])
{
	uint64_t k0 = siphash_load(key), k1 = siphash_load(key + 8);
	s->v0 = k0 ^ 0x736f6d6570736575ULL;
	s->v1 = k1 ^ 0x646f72616e646f6dULL;
	s->v2 = k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k1 ^ 0x7465646279746573ULL;
}

/* One 8-octet word m of the message, c rounds. */
static inline void siphash_word(siphash_t *s, uint64_t m, int c)
{
	s->v3 ^= m;
	for (int i = 0; i < c; i++)
		siphash_round(s);
	s->v0 ^= m;
}

/*
 * The last word: the message's last len % 8 octets (little-endian, the
 * rest zero) with len's low octet on top; c rounds, then d to finish.
 */
static inline uint64_t siphash_final(siphash_t *s, uint64_t tail, size_t len, int c, int d)
{
	siphash_word(s, tail | ((uint64_t)(len & 0xff) << 56), c);
	s->v2 ^= 0xff;
	for (int i = 0; i < d; i++)
		siphash_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* The last len % 8 octets of in[0..len) as siphash_final takes them. */
static inline uint64_t siphash_tail(const uint8_t *in, size_t len)
{
	uint8_t t[8] = { 0 };
	memcpy(t, in + (len & ~(size_t)7), len & 7);
	return siphash_load(t);
}

/* SipHash-c-d of in[0..len) with key. */
static inline uint64_t siphash(const uint8_t *in, size_t len, const uint8_t key[16], int c, int d)
{
	siphash_t s;
	siphash_init(&s, key);
	for (size_t i = 0; i + 8 <= len; i += 8)
		siphash_word(&s, siphash_load(in + i), c);
	return siphash_final(&s, siphash_tail(in, len), len, c, d);
}

#endif
