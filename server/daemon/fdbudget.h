/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The descriptor budget: RLIMIT_NOFILE raised at start and shared out, so TCP connections cannot
 * use up the descriptors. */
#ifndef SHOAL_SERVER_DAEMON_FDBUDGET_H
#define SHOAL_SERVER_DAEMON_FDBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per libuv loop, opened after the count (seen with strace, libuv 1.44):
 * epoll, the loop's signal pipe (two), the eventfd of its uv_async handles,
 * and the spare descriptor libuv opens with the loop's first stream. */
#define FDBUDGET_PER_LOOP 5
/* The main loop's, and libuv's process-wide signal pipe (two). */
#define FDBUDGET_MAIN (FDBUDGET_PER_LOOP + 2)
/* Kept free for what opens files while serving: a reload's zone files
 * (split reading, nested $INCLUDE), syslog, user and group lookups. */
#define FDBUDGET_RESERVE 32
/* Fewer TCP connections per worker than this is no TCP service: refuse. */
#define FDBUDGET_TCP_MIN 8

/* What the budget is made from. */
typedef struct fdbudget_in {
	uint64_t limit;           /* RLIMIT_NOFILE soft limit (after raising) */
	uint64_t open;            /* descriptors open when counted */
	unsigned threads;         /* workers */
	size_t addresses;         /* listen addresses */
	size_t tls_addresses;     /* listen-tls addresses: a TLS server per worker besides TCP's */
	bool shared_udp;          /* one UDP socket per address, not per worker */
	bool control;             /* a control socket is configured */
	bool metrics;             /* a metrics endpoint is configured */
	uint32_t max_connections; /* tcp-max-connections: the upper bound */
	unsigned transfers_in;    /* refreshes at once (transfers-in): a socket each */
} fdbudget_in_t;

/* What it comes to. */
typedef struct fdbudget {
	uint64_t fixed;           /* descriptors needed besides TCP connections */
	uint64_t per_worker_room; /* connections per worker's server the rest allows */
	uint32_t per_worker;      /* the limit to use: room, at most max_connections */
} fdbudget_t;

/*
 * Share the descriptors out: every socket, loop and control client still
 * to be opened, the sockets of outgoing requests (NOTIFY_OUT_PARALLEL
 * NOTIFY sends and transfers_in refreshes), the reserve, and one accepted connection a listener may
 * hold while its worker has no free slot, are counted first; the rest goes
 * to TCP connections, the same number per worker (and, with listen-tls
 * addresses, as many again to TLS connections: each server's slots). Returns 0, or
 * SHOAL_ECONFIG when that is fewer than FDBUDGET_TCP_MIN per worker (or
 * than max_connections, if lower). Pure arithmetic, any thread.
 */
int fdbudget_plan(const fdbudget_in_t *in, fdbudget_t *out);

/*
 * Raise the RLIMIT_NOFILE soft limit to the hard limit. Sets *before and
 * *now (the soft limit found, and the one in force). Returns 0, or -errno
 * when the limits cannot be read or set (*now is then what is in force).
 * Main thread, at start.
 */
int fdbudget_raise(uint64_t *before, uint64_t *now);

/* Descriptors open in this process now (/proc/self/fd), or -errno. */
int64_t fdbudget_count_open(void);

#endif
