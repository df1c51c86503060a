/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Response rate limiting: one shared table of per-class counters, no lock on the query path. */
#ifndef SHOAL_SERVER_QUERY_RRL_H
#define SHOAL_SERVER_QUERY_RRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/conf/limits.h"
#include "zone/answer.h"

/*
 * Response rate limiting (RRL, after Vixie and Schryver, as BIND, NSD and
 * Knot DNS do it) keeps a spoofed flood from turning the server into an
 * amplifier aimed at the address it names. UDP answers are counted per
 * response class: the client's network (IPv4 /24, IPv6 /56 by default),
 * the answer's kind, the name it is accounted to (answer_info_t: the
 * query name, or the closest encloser, cut or wildcard parent that
 * made-up names share) and the query type (not for NXDOMAIN and errors,
 * so that varying the type gains nothing). Each class may have `rate`
 * answers per second (one-second windows of the clock); past that its
 * answers are dropped, but every slip-th is sent truncated (TC, no
 * records) so that a real client behind the address retries over TCP,
 * which is never limited. Answers to a valid server cookie (RFC 7873) and
 * to exempt networks are not counted.
 */

/* Log lines one worker writes per second about classes starting or stopping to be limited. */
#define RRL_LOG_PER_SECOND 10

typedef struct rrl rrl_t;

/*
 * Make the table: `size` counters of 8 octets (8 MiB for the default 1M),
 * and a random SipHash key, so that nobody outside can aim classes at one
 * counter. Returns 0 and *out (rrl_free it), SHOAL_EINVAL for a limit out
 * of range, or SHOAL_ENOMEM. With limits->rate 0, *out is NULL: nothing
 * is limited. Main thread, before the workers start.
 */
int rrl_new(const rrl_limits_t *limits, rrl_t **out);

/* Free r (NULL does nothing). After the workers stopped. */
void rrl_free(rrl_t *r);

/* What to do with an answer. */
enum rrl_verdict {
	RRL_SEND = 0, /* under the limit, exempt, or proven by a cookie */
	RRL_DROP,     /* limited: send nothing */
	RRL_SLIP,     /* limited, but send it truncated (response_strip) */
};

/* One worker's own state: where it is in the slip count, and its log budget. Zero it to start. */
typedef struct rrl_worker {
	uint32_t slip_count;
	uint32_t log_second;
	uint32_t log_lines;      /* written in log_second */
	uint64_t log_suppressed; /* not written since the last line that was */
} rrl_worker_t;

/*
 * Count the UDP answer `info` describes, to the client at ip (ip_len 4 or
 * 16 octets; an IPv4-mapped IPv6 address counts as the IPv4 one) at time
 * now (seconds), and say what to do with it. When a class starts to be
 * limited, and when it is next answered after a whole second under the
 * limit, a line is logged (at most RRL_LOG_PER_SECOND per worker and
 * second). Worker thread, with its own wk: no lock, no allocation; the
 * table's counters are updated with compare-and-swap, and under heavy
 * contention on one counter an answer is sent rather than waited for.
 */
enum rrl_verdict rrl_check(rrl_t *r, rrl_worker_t *wk, const uint8_t *ip, size_t ip_len,
			   const answer_info_t *info, uint32_t now);

#endif
