/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Times as text: RFC 3339 in UTC, the one form the daemon writes them in. */
#ifndef SHOAL_SERVER_COMMON_TIMESTAMP_H
#define SHOAL_SERVER_COMMON_TIMESTAMP_H

#include <stddef.h>
#include <time.h>

/* Room for a timestamp, its NUL counted: "2026-12-05T12:58:01.822Z", with years past 9999. */
#define TIMESTAMP_TEXT_MAX 40

/*
 * t as RFC 3339 text in UTC (section 5.6, offset "Z") into buf: with the
 * milliseconds ms (0 to 999), "2026-12-05T12:58:01.822Z", as log lines are
 * stamped; ms < 0 for a time kept to the second, "2026-12-05T12:58:01Z"
 * (zone-status, the reload's report), no fraction claimed. What does not
 * fit cap is cut; buf is terminated when cap > 0. Returns the length
 * written. Any thread; no allocation.
 */
size_t timestamp_text(time_t t, int ms, char *buf, size_t cap);

/* Now (CLOCK_REALTIME) as timestamp_text writes it, with milliseconds. */
size_t timestamp_now(char *buf, size_t cap);

#endif
