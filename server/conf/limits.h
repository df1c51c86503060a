/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The types of settings that modules above the configuration are started with. */
#ifndef SHOAL_SERVER_CONF_LIMITS_H
#define SHOAL_SERVER_CONF_LIMITS_H

#include <stdint.h>

#include "server/common/addr.h"

/*
 * The configuration holds these and the modules that apply them (sockets,
 * TCP, rate limiting) take them, so they live here, below both: the
 * configuration never includes the runtime's headers.
 */

/* How the sockets of one address are shared among workers (socket-mode). */
enum socket_mode {
	SOCKET_MODE_REUSEPORT = 0, /* one socket per worker per address */
	SOCKET_MODE_SHARED = 1,    /* one socket per address, all workers poll it */
};

/* Mode names in enum order ("reuseport", "shared"), NULL-terminated; the option table uses them. */
extern const char *const socket_mode_names[];

/* The receive and send buffer asked for each UDP socket when nothing else is said. */
#define SOCKET_UDP_BUFFER_DEFAULT (4 * 1024 * 1024)

/* Limits that protect the server (shoald.conf(5) documents each). */
typedef struct tcp_limits {
	uint32_t idle_timeout_ms;    /* close a connection idle this long (10000) */
	uint32_t max_connections;    /* per worker; past it the oldest idle goes (256) */
	uint32_t message_timeout_ms; /* to receive one whole message (5000) */
	uint32_t max_output;         /* queued answer octets per connection (262144) */
	uint32_t max_pipelined;      /* messages read ahead of writes per connection (64) */
	uint32_t max_per_address;    /* per client address, over all workers; 0: no limit (32) */
	/* TLS only (listen-tls): the handshake's bounds per connection and per worker */
	uint32_t handshake_timeout_ms; /* to finish the handshake (5000) */
	uint32_t max_handshakes; /* handshakes under way per worker; past it the oldest goes */
} tcp_limits_t;

#define TCP_LIMITS_DEFAULT                                 \
	{                                                  \
		10000, 256, 5000, 262144, 64, 32, 5000, 64 \
	}

/* The ranges of rate-limit, rate-limit-size and rate-limit-slip. */
#define RRL_RATE_MAX 1000000u
#define RRL_SIZE_MIN 1024u
#define RRL_SIZE_MAX (1u << 28)
#define RRL_SLIP_MAX 10u

/* rate-limit-nxdomain and rate-limit-errors when not set: as rate-limit. */
#define RRL_RATE_AS_RATE UINT32_MAX

/* The configuration (shoald.conf(5) documents each). uint32_t as the option table stores them. */
typedef struct rrl_limits {
	uint32_t rate;          /* answers per second per class; 0 turns rate limiting off */
	uint32_t nxdomain_rate; /* for NXDOMAIN; RRL_RATE_AS_RATE, or 0: not limited */
	uint32_t error_rate;    /* for errors; RRL_RATE_AS_RATE, or 0: not limited */
	uint32_t slip;          /* every slip-th limited answer is sent truncated; 0: none */
	uint32_t ipv4_prefix;   /* bits of a client's IPv4 address that name its network */
	uint32_t ipv6_prefix;
	uint32_t size; /* classes the table holds, rounded up to a power of two */
	addr_prefix_list_t exempt;
} rrl_limits_t;

#define RRL_LIMITS_DEFAULT                                                                    \
	{                                                                                     \
		.rate = 0, .nxdomain_rate = RRL_RATE_AS_RATE, .error_rate = RRL_RATE_AS_RATE, \
		.slip = 2, .ipv4_prefix = 24, .ipv6_prefix = 56, .size = 1u << 20             \
	}

#endif
