/* Listening sockets: UDP sockets and TCP listeners bound before the privilege drop. */
#ifndef SHOAL_SERVER_SOCKET_H
#define SHOAL_SERVER_SOCKET_H

#include <stdbool.h>
#include <stddef.h>

#include "server/conf.h"

/*
 * Open a non-blocking UDP socket bound to a: SO_REUSEPORT when reuseport,
 * IPV6_V6ONLY on IPv6, 4 MiB buffers (best effort), never SO_REUSEADDR.
 * Returns the fd (the caller owns it) or SHOAL_ESYSTEM with "ADDR: reason"
 * in err. Main thread, before the privilege drop.
 */
int udp_socket_open(const listen_addr_t *a, bool reuseport, char *err, size_t errlen);

/*
 * Open a non-blocking TCP socket bound to a with SO_REUSEPORT, listening.
 * Returns the fd (the caller owns it) or SHOAL_ESYSTEM with err. Main thread.
 */
int tcp_socket_open(const listen_addr_t *a, char *err, size_t errlen);

#endif
