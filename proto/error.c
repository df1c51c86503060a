/* Names and messages of the error codes in proto/error.h. */
#include "proto/error.h"

const char *shoal_strerror(int err)
{
	switch (err) {
	case SHOAL_OK:
		return "success";
#define SHOAL_ERROR_MSG(name, value, msg) \
	case name:                        \
		return msg;
		SHOAL_ERRORS(SHOAL_ERROR_MSG)
#undef SHOAL_ERROR_MSG
	}
	return "unknown error";
}

const char *shoal_errname(int err)
{
	switch (err) {
	case SHOAL_OK:
		return "SHOAL_OK";
#define SHOAL_ERROR_NAME(name, value, msg) \
	case name:                         \
		return #name;
		SHOAL_ERRORS(SHOAL_ERROR_NAME)
#undef SHOAL_ERROR_NAME
	}
	return "SHOAL_EUNKNOWN";
}
