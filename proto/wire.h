/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The one bounds-checked cursor for reading and writing DNS wire data. */
#ifndef SHOAL_PROTO_WIRE_H
#define SHOAL_PROTO_WIRE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/error.h"

/*
 * A cursor over caller-owned memory. The first out-of-bounds access records
 * an error (SHOAL_EMALFORMED when reading, SHOAL_ESPACE when writing); every
 * later call is ignored and reads return 0, so callers check `err` once after
 * a run of calls. The checks are real code, not asserts: they stay in release
 * builds. No allocation; not shared between threads.
 *
 * The cursor is never past its end (pos <= len), which every check below
 * rests on (`len - pos` would wrap): the calls here move it only after
 * checking, and a caller that moves it itself does so with wire_seek,
 * which asserts it.
 */
typedef struct wire {
	uint8_t *buf; /* start of the buffer (const when reading) */
	size_t len;   /* readable bytes, or writable capacity */
	size_t pos;   /* next byte to read or write */
	int err;      /* 0, or the first error seen */
} wire_t;

/* Reader over [buf, buf+len). The buffer is not modified. */
static inline void wire_init_read(wire_t *w, const uint8_t *buf, size_t len)
{
	w->buf = (uint8_t *)buf;
	w->len = len;
	w->pos = 0;
	w->err = 0;
}

/* Writer into [buf, buf+cap). */
static inline void wire_init_write(wire_t *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->len = cap;
	w->pos = 0;
	w->err = 0;
}

/*
 * Move the cursor to pos, an offset the caller knows to lie inside the
 * buffer (a mark to roll back to, the end of a question parsed before):
 * never past the end.
 */
static inline void wire_seek(wire_t *w, size_t pos)
{
	assert(pos <= w->len);
	w->pos = pos;
}

static inline size_t wire_left(const wire_t *w)
{
	return w->err ? 0 : w->len - w->pos;
}

/* True when n more bytes are available; records `fail` when they are not. */
static inline bool wire_need(wire_t *w, size_t n, int fail)
{
	if (w->err)
		return false;
	if (n > w->len - w->pos) {
		w->err = fail;
		return false;
	}
	return true;
}

static inline uint8_t wire_read_u8(wire_t *w)
{
	if (!wire_need(w, 1, SHOAL_EMALFORMED))
		return 0;
	return w->buf[w->pos++];
}

static inline uint16_t wire_read_u16(wire_t *w)
{
	if (!wire_need(w, 2, SHOAL_EMALFORMED))
		return 0;
	uint16_t v = (uint16_t)(w->buf[w->pos] << 8 | w->buf[w->pos + 1]);
	w->pos += 2;
	return v;
}

static inline uint32_t wire_read_u32(wire_t *w)
{
	if (!wire_need(w, 4, SHOAL_EMALFORMED))
		return 0;
	const uint8_t *p = w->buf + w->pos;
	w->pos += 4;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Pointer to the next n bytes (and skips them), or NULL on overrun. */
static inline const uint8_t *wire_read_ptr(wire_t *w, size_t n)
{
	if (!wire_need(w, n, SHOAL_EMALFORMED))
		return NULL;
	const uint8_t *p = w->buf + w->pos;
	w->pos += n;
	return p;
}

static inline void wire_skip(wire_t *w, size_t n)
{
	(void)wire_read_ptr(w, n);
}

static inline void wire_write_u8(wire_t *w, uint8_t v)
{
	if (!wire_need(w, 1, SHOAL_ESPACE))
		return;
	w->buf[w->pos++] = v;
}

static inline void wire_write_u16(wire_t *w, uint16_t v)
{
	if (!wire_need(w, 2, SHOAL_ESPACE))
		return;
	w->buf[w->pos] = (uint8_t)(v >> 8);
	w->buf[w->pos + 1] = (uint8_t)v;
	w->pos += 2;
}

static inline void wire_write_u32(wire_t *w, uint32_t v)
{
	if (!wire_need(w, 4, SHOAL_ESPACE))
		return;
	uint8_t *p = w->buf + w->pos;
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	w->pos += 4;
}

static inline void wire_write_bytes(wire_t *w, const void *src, size_t n)
{
	if (!wire_need(w, n, SHOAL_ESPACE))
		return;
	if (n)
		memcpy(w->buf + w->pos, src, n);
	w->pos += n;
}

/* Overwrite a 16-bit value at an earlier offset (counts, lengths). */
static inline void wire_put_u16_at(wire_t *w, size_t at, uint16_t v)
{
	if (at + 2 > w->len) {
		if (!w->err)
			w->err = SHOAL_ESPACE;
		return;
	}
	w->buf[at] = (uint8_t)(v >> 8);
	w->buf[at + 1] = (uint8_t)v;
}

static inline uint16_t wire_get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t wire_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#endif
