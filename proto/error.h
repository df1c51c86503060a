/* Shoal's one error enum: negative codes, names and messages from one table. */
#ifndef SHOAL_PROTO_ERROR_H
#define SHOAL_PROTO_ERROR_H

/*
 * X(name, value, message). Functions return 0 for success, a negative code
 * from this table for an error, or a length where one is due.
 */
#define SHOAL_ERRORS(X)                                \
	X(SHOAL_ENOMEM, -1, "out of memory")           \
	X(SHOAL_EINVAL, -2, "invalid argument")        \
	X(SHOAL_ESPACE, -3, "no space left in buffer") \
	X(SHOAL_EMALFORMED, -4, "malformed wire data") \
	X(SHOAL_ENOTFOUND, -5, "not found")            \
	X(SHOAL_EEXIST, -6, "already exists")          \
	X(SHOAL_ESYNTAX, -7, "syntax error")           \
	X(SHOAL_EZONE, -8, "zone content error")       \
	X(SHOAL_ECONFIG, -9, "configuration error")    \
	X(SHOAL_ESYSTEM, -10, "system call failed")    \
	X(SHOAL_EIO, -11, "input/output error")        \
	X(SHOAL_ELOOP, -12, "loop detected")           \
	X(SHOAL_ENAME, -13, "invalid domain name")     \
	X(SHOAL_ETIMEOUT, -14, "timed out")            \
	X(SHOAL_EUNSUPPORTED, -15, "not supported")    \
	X(SHOAL_ETSIG, -16, "TSIG check failed")

enum shoal_error {
#define SHOAL_ERROR_ENUM(name, value, msg) name = value,
	SHOAL_OK = 0,
	SHOAL_ERRORS(SHOAL_ERROR_ENUM)
#undef SHOAL_ERROR_ENUM
};

/* Message for an error code (or "success" for 0); never NULL, static storage. */
const char *shoal_strerror(int err);

/* Symbolic name ("SHOAL_ESPACE") for an error code; never NULL, static storage. */
const char *shoal_errname(int err);

#endif
