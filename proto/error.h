/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shoal's one error space: negative codes, system errors as -errno, Shoal's own from one table. */
#ifndef SHOAL_PROTO_ERROR_H
#define SHOAL_PROTO_ERROR_H

#include <stdbool.h>

/*
 * Functions return 0 for success, a negative code for an error, or a
 * length where one is due. The codes fall in two ranges that never meet:
 *   -1 .. -4095  a system error, -errno (as libuv and Knot DNS return
 *                them), so the reason of a failed call travels in the
 *                value: -EADDRINUSE, -EMFILE. libuv's own codes on Linux
 *                are -errno too, and pass through as they are.
 *   -4096 down   Shoal's own, from the table below: X(name, n, message)
 *                is code SHOAL_ERROR_BASE - n.
 * The kernel returns errno values within -4095 .. -1 (MAX_ERRNO), and
 * libuv keeps its few codes of its own there too (UV_EOF, UV_EAI_*), so
 * no system error is ever read as one of Shoal's.
 */
#define SHOAL_ERROR_BASE (-4096)

#define SHOAL_ERRORS(X)                               \
	X(SHOAL_ENOMEM, 0, "out of memory")           \
	X(SHOAL_EINVAL, 1, "invalid argument")        \
	X(SHOAL_ESPACE, 2, "no space left in buffer") \
	X(SHOAL_EMALFORMED, 3, "malformed wire data") \
	X(SHOAL_ENOTFOUND, 4, "not found")            \
	X(SHOAL_EEXIST, 5, "already exists")          \
	X(SHOAL_ESYNTAX, 6, "syntax error")           \
	X(SHOAL_EZONE, 7, "zone content error")       \
	X(SHOAL_ECONFIG, 8, "configuration error")    \
	X(SHOAL_EIO, 9, "input/output error")         \
	X(SHOAL_ELOOP, 10, "loop detected")           \
	X(SHOAL_ENAME, 11, "invalid domain name")     \
	X(SHOAL_ETIMEOUT, 12, "timed out")            \
	X(SHOAL_EUNSUPPORTED, 13, "not supported")    \
	X(SHOAL_ETSIG, 14, "TSIG check failed")       \
	X(SHOAL_ETLS, 15, "TLS failed")

enum shoal_error {
#define SHOAL_ERROR_ENUM(name, n, msg) name = SHOAL_ERROR_BASE - (n),
	SHOAL_OK = 0,
	SHOAL_ERRORS(SHOAL_ERROR_ENUM)
#undef SHOAL_ERROR_ENUM
};

/* True for a code of the system range: -errno. */
static inline bool shoal_error_is_system(int err)
{
	return err < 0 && err > SHOAL_ERROR_BASE;
}

/*
 * Message for a code: "success" for 0, the table's for Shoal's own, the C
 * library's (strerror) for a system error, "unknown error" for any other.
 * Never NULL, static storage; any thread.
 */
const char *shoal_strerror(int err);

/*
 * Symbolic name for a code ("SHOAL_ESPACE", or "EADDRINUSE" for a system
 * error), "SHOAL_EUNKNOWN" for any other. Never NULL, static storage.
 */
const char *shoal_errname(int err);

#endif
