/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Names and messages of the error codes in proto/error.h. */
#include "config.h"

#include <string.h>

#include "proto/error.h"

const char *shoal_strerror(int err)
{
	switch (err) {
	case SHOAL_OK:
		return "success";
#define SHOAL_ERROR_MSG(name, n, msg) \
	case name:                    \
		return msg;
		SHOAL_ERRORS(SHOAL_ERROR_MSG)
#undef SHOAL_ERROR_MSG
	}
	/* strerrordesc_np, not strerror: static text, none for an unknown number */
	const char *text = shoal_error_is_system(err) ? strerrordesc_np(-err) : NULL;
	return text ? text : "unknown error";
}

const char *shoal_errname(int err)
{
	switch (err) {
	case SHOAL_OK:
		return "SHOAL_OK";
#define SHOAL_ERROR_NAME(name, n, msg) \
	case name:                     \
		return #name;
		SHOAL_ERRORS(SHOAL_ERROR_NAME)
#undef SHOAL_ERROR_NAME
	}
	const char *name = shoal_error_is_system(err) ? strerrorname_np(-err) : NULL;
	return name ? name : "SHOAL_EUNKNOWN";
}
