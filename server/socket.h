/* This process's listening sockets: a UDP socket and a TCP listener per address and worker. */
#ifndef SHOAL_SERVER_SOCKET_H
#define SHOAL_SERVER_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* One listen address, ADDR@PORT. */
typedef struct listen_addr {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char text[80]; /* as written, for logs */
} listen_addr_t;

/* Which UDP sockets a set holds (TCP listeners are always one per worker per address). */
enum socket_mode {
	SOCKET_MODE_REUSEPORT = 0, /* one socket per worker per address */
	SOCKET_MODE_SHARED = 1,    /* one socket per address, all workers poll it */
};

/* Mode names in enum order ("reuseport", "shared"), NULL-terminated; the option table uses them. */
extern const char *const socket_mode_names[];

typedef struct socket_set socket_set_t;

/*
 * Open every listening socket of the process for addrs[0..n_addrs) and
 * `workers` workers: worker by worker, its UDP sockets, then its TCP
 * listeners (SO_REUSEPORT, listening), one per address each. In
 * SOCKET_MODE_SHARED the first worker makes one UDP socket per address
 * without SO_REUSEPORT and every worker is given it. That order is each
 * socket's place in its SO_REUSEPORT group. A group admits only sockets of
 * the effective uid of its first one, so call this before the privilege
 * drop: then no process of another user can join it.
 * Returns 0 and *out (the caller owns it: socket_set_close), or with err
 * ("ADDR: reason") the system call's -errno (SHOAL_ENOMEM when out of
 * memory), nothing left open. Main thread.
 */
int socket_set_open(const listen_addr_t *addrs, size_t n_addrs, unsigned workers,
		    enum socket_mode mode, socket_set_t **out, char *err, size_t errlen);

/* The mode and the number of listen addresses s was opened with. Any thread. */
enum socket_mode socket_set_mode(const socket_set_t *s);
size_t socket_set_addresses(const socket_set_t *s);

/*
 * Worker w's UDP socket for address a (a < socket_set_addresses): the same
 * one for every worker in shared mode. The set owns it: callers read it and
 * never close it. Any thread while the set is open.
 */
int socket_set_udp(const socket_set_t *s, unsigned w, size_t a);

/*
 * Worker w's TCP listener for address a. The set owns it until
 * socket_set_tcp_handed(s, w). Any thread while the set is open.
 */
int socket_set_tcp(const socket_set_t *s, unsigned w, size_t a);

/*
 * Worker w's TCP listeners belong to its TCP server now, which closes them
 * when it stops: socket_set_close leaves them. Worker w's thread; the
 * main thread reads the mark only after that thread has been joined.
 */
void socket_set_tcp_handed(socket_set_t *s, unsigned w);

/*
 * Datagrams the kernel dropped on worker w's UDP sockets for want of
 * receive buffer space (SO_MEMINFO); in shared mode the shared sockets
 * count on worker 0 only. Any thread while the set is open.
 */
uint64_t socket_set_udp_drops(const socket_set_t *s, unsigned w);

/*
 * Close every socket the set still owns and free it; NULL does nothing.
 * Main thread, once no worker uses the sockets.
 */
void socket_set_close(socket_set_t *s);

#endif
