/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Small per-zone objects packed on huge pages: what an answer reads of one zone among many. */
#ifndef SHOAL_ZONE_SLAB_H
#define SHOAL_ZONE_SLAB_H

#include <stddef.h>

/* Objects up to this size come from the slab; bigger ones from aligned_alloc. */
#define ZSLAB_MAX 4096

/*
 * Under AddressSanitizer every object is a plain allocation: its checks
 * (overflow, use after free) then see each one, and its leak scan, which
 * does not read memory mapped by hand, sees what the objects point to.
 */
#if defined(__SANITIZE_ADDRESS__)
#define ZSLAB_PACKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZSLAB_PACKED 0
#endif
#endif
#ifndef ZSLAB_PACKED
#define ZSLAB_PACKED 1
#endif

/*
 * n octets (n > 0), uninitialised, on a 64-octet boundary; NULL when out
 * of memory. Objects of a size class are packed in chunks that grow from
 * 64 KiB to 2 MiB; 2 MiB chunks lie on a 2 MiB boundary and are advised
 * as huge pages, so a million zones' entries take tens of TLB entries,
 * not a page walk each, while a few zones' take a few 4 KiB pages. Freed
 * objects are reused by their class, never given back to the system.
 * Any thread (one lock, never on the query path).
 */
void *zslab_alloc(size_t n);

/* Give back p (NULL: nothing) that zslab_alloc(n) returned, with the same n. Any thread. */
void zslab_free(void *p, size_t n);

#endif
