/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Connections per client address over all workers: one shared table of atomic counts. */
#ifndef SHOAL_SERVER_NET_ADDRLIMIT_H
#define SHOAL_SERVER_NET_ADDRLIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * How many TCP connections each client address holds, so that one address
 * cannot take every worker's connection slots (tcp-max-per-address). An
 * IPv6 client counts by its /64, the block one host is given (RFC 6177),
 * so that it cannot step around the limit by changing its interface
 * identifier; an IPv4-mapped IPv6 address counts as its IPv4 address.
 * Counts live in a fixed table of ADDRLIMIT_SLOTS, indexed by SipHash
 * under a random key: two addresses that share a slot share a count (with
 * a few hundred connections open, rarely), and nobody outside can choose
 * addresses that do.
 */
#define ADDRLIMIT_SLOTS 65536

typedef struct addrlimit addrlimit_t;

/*
 * A table allowing `limit` connections per address. Returns 0 and *out
 * (addrlimit_free it; NULL when limit is 0: no limit), or SHOAL_ENOMEM.
 * Main thread, before the workers start.
 */
int addrlimit_new(uint32_t limit, addrlimit_t **out);

void addrlimit_free(addrlimit_t *a);

/*
 * Count one more connection from peer: true when it is within the limit
 * (then addrlimit_give must follow when it closes), false when the address
 * already holds `limit` (nothing counted). Any thread: atomic, no lock.
 */
bool addrlimit_take(addrlimit_t *a, const struct sockaddr *peer);

/* A connection addrlimit_take counted has closed. Any thread. */
void addrlimit_give(addrlimit_t *a, const struct sockaddr *peer);

#endif
