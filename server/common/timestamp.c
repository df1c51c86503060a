/* SPDX-License-Identifier: GPL-3.0-or-later */
/* RFC 3339 UTC timestamps, to the millisecond or to the second. */
#include "config.h"

#include <stdio.h>

#include "server/common/timestamp.h"

size_t timestamp_text(time_t t, int ms, char *buf, size_t cap)
{
	struct tm tm;
	if (!cap)
		return 0;
	if (!gmtime_r(&t, &tm)) {
		buf[0] = '\0';
		return 0;
	}
	/* digits by hand, not strftime: the form is RFC 3339's whatever the locale */
	char frac[8] = "";
	if (ms >= 0)
		snprintf(frac, sizeof(frac), ".%03d", ms % 1000);
	int n = snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d%sZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

size_t timestamp_now(char *buf, size_t cap)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return timestamp_text(ts.tv_sec, (int)(ts.tv_nsec / 1000000), buf, cap);
}
