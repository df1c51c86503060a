/* SPDX-License-Identifier: GPL-3.0-or-later */
/* This process's listening sockets: per worker, a UDP socket and a TCP listener per address, a TLS
 * listener per TLS address. */
#ifndef SHOAL_SERVER_NET_SOCKET_H
#define SHOAL_SERVER_NET_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "server/conf/limits.h"

/* Which UDP sockets a set holds (TCP listeners are always one per worker per address). */

typedef struct socket_set socket_set_t;

/*
 * Open every listening socket of the process for addrs[0..n_addrs)
 * (listen), tls_addrs[0..n_tls) (listen-tls) and `workers` workers: worker
 * by worker, its UDP sockets, then its TCP listeners (SO_REUSEPORT,
 * listening), one per address each, then its TLS listeners (TCP ones on
 * the TLS addresses). In
 * SOCKET_MODE_SHARED the first worker makes one UDP socket per address
 * without SO_REUSEPORT and every worker is given it. That order is each
 * socket's place in its SO_REUSEPORT group. A group admits only sockets of
 * the effective uid of its first one, so call this before the privilege
 * drop: then no process of another user can join it.
 * Returns 0 and *out (the caller owns it: socket_set_close), or with err
 * ("ADDR: reason") the system call's -errno (SHOAL_ENOMEM when out of
 * memory), nothing left open. Main thread.
 */
int socket_set_open(const listen_addr_t *addrs, size_t n_addrs, const listen_addr_t *tls_addrs,
		    size_t n_tls, unsigned workers, enum socket_mode mode, socket_set_t **out,
		    char *err, size_t errlen);

/* The mode and the number of listen and listen-tls addresses s was opened with. Any thread. */
enum socket_mode socket_set_mode(const socket_set_t *s);
size_t socket_set_addresses(const socket_set_t *s);
size_t socket_set_tls_addresses(const socket_set_t *s);

/*
 * Worker w's UDP socket for address a (a < socket_set_addresses): the same
 * one for every worker in shared mode. The set owns it: callers read it and
 * never close it. Any thread while the set is open.
 */
int socket_set_udp(const socket_set_t *s, unsigned w, size_t a);

/*
 * Worker w's TCP listener for address a, and its TLS listener for TLS
 * address a. The set owns them until socket_set_handed(s, kind, w). Any
 * thread while the set is open.
 */
int socket_set_tcp(const socket_set_t *s, unsigned w, size_t a);
int socket_set_tls(const socket_set_t *s, unsigned w, size_t a);

/*
 * Ask for receive and send buffers of these sizes on every UDP socket of s
 * (udp-receive-buffer, udp-send-buffer), and log a warning when the kernel
 * gives less (net.core.rmem_max and wmem_max cap it, but for root). Main
 * thread, before the privilege drop.
 */
void socket_set_udp_buffers(const socket_set_t *s, uint32_t receive, uint32_t send);

/*
 * Datagrams the kernel dropped on worker w's UDP sockets for want of
 * receive buffer space (SO_MEMINFO); in shared mode the shared sockets
 * count on worker 0 only. Any thread while the set is open.
 */
uint64_t socket_set_udp_drops(const socket_set_t *s, unsigned w);

/* What a listening socket is for. */
enum socket_kind {
	SOCKET_UDP = 0,
	SOCKET_TCP = 1,
	SOCKET_TLS = 2, /* a TCP listener of a listen-tls address */
};
#define SOCKET_KINDS 3

/* Kind names in enum order ("udp", "tcp", "tls"), NULL-terminated. */
extern const char *const socket_kind_names[];

/*
 * Worker w's listeners of kind (TCP, TLS) belong to its server now, which
 * closes them when it stops: socket_set_close leaves them. Worker w's
 * thread; the main thread reads the mark only after that thread has been
 * joined.
 */
void socket_set_handed(socket_set_t *s, enum socket_kind kind, unsigned w);

/* One listening socket: what it is for, whose it is, where it listens. */
typedef struct socket_entry {
	enum socket_kind kind;
	unsigned worker; /* its place in its SO_REUSEPORT group (0 in shared mode's UDP) */
	size_t address;  /* index into the set's addresses (TLS: its TLS addresses) */
	const listen_addr_t *addr; /* that address */
	int fd;
} socket_entry_t;

/*
 * The i-th socket of s (from 0), to hand every one of them over: per
 * address, its UDP sockets then its TCP listeners, each kind in group
 * order (worker 0 first), the shared UDP socket once; then per TLS
 * address, its TLS listeners in group order. Fills *e and returns
 * true, or returns false past the last. The descriptors stay the set's
 * (a TCP listener its worker's TCP server's): the caller may send them but
 * not close them. Main thread, while the workers run.
 */
bool socket_set_entry(const socket_set_t *s, size_t i, socket_entry_t *e);

/* Address a (a < socket_set_addresses) as the set was opened with it. Any thread. */
const listen_addr_t *socket_set_address(const socket_set_t *s, size_t a);

/* TLS address a (a < socket_set_tls_addresses), likewise. Any thread. */
const listen_addr_t *socket_set_tls_address(const socket_set_t *s, size_t a);

/* A socket another process handed over (socket_set_adopt takes the descriptor). */
typedef struct socket_given {
	enum socket_kind kind;
	unsigned worker;    /* its place in its group, as the giver numbered it */
	listen_addr_t addr; /* where the giver says it listens */
	int fd;
} socket_given_t;

/*
 * Build this process's set from the sockets a running server handed over
 * (given[0..n_given), in any order), as socket_set_open would for addrs,
 * tls_addrs, workers and mode (TLS listeners are taken for the TLS
 * addresses as TCP ones for the others):
 *   - each given socket is checked against what the giver said and what
 *     this configuration wants: its type, family, bound address
 *     (getsockname), SO_REUSEPORT (set in reuseport mode, not on shared
 *     UDP), listening (TCP); a mismatch refuses the whole set;
 *   - an address of addrs takes the given sockets for it in group order,
 *     up to `workers` of each kind; more workers than given sockets open
 *     new ones, which join the group after them (only a process with the
 *     group's uid may: the check says so before it tries);
 *   - addresses the giver had that addrs does not name, and given sockets
 *     past `workers`, are closed here: the giver still holds them and
 *     retires them (socket_set_steer keeps new traffic off them);
 *   - an address no given socket has is opened as at start.
 * Refused when no address is both given and configured (nothing to take
 * over: another port, say) and when the modes differ.
 * Takes every given descriptor, whatever the outcome. Returns 0 and *out,
 * or a negative error with err (SHOAL_ECONFIG for a mismatch, a bind's
 * -errno), nothing of this process left open. Main thread.
 */
int socket_set_adopt(const listen_addr_t *addrs, size_t n_addrs, const listen_addr_t *tls_addrs,
		     size_t n_tls, unsigned workers, enum socket_mode mode, socket_given_t *given,
		     size_t n_given, socket_set_t **out, char *err, size_t errlen);

/*
 * Sockets of the kernel's groups that are not this set's: given sockets
 * past the workers, which the giving process still holds and drains. 0
 * once socket_set_steer(s, false) has run. Any thread.
 */
unsigned socket_set_retiring(const socket_set_t *s);

/*
 * The groups' steering (SO_ATTACH_REUSEPORT_CBPF); see also
 * socket_set_steer_cpu, which changes it for UDP. With `away` true, every
 * group that holds sockets past this set's (socket_set_retiring) gets a
 * program that picks one of the set's own sockets by the client's source
 * port (so one client stays on one worker), and the others receive
 * nothing new: they can be read empty and closed without losing a
 * datagram or a connection. With `away` false, the programs are removed
 * (once the other sockets are closed) and the kernel's 4-tuple hash picks
 * again. The one place programs are attached to the set's groups.
 * Returns 0 or -errno with err. Main thread.
 */
int socket_set_steer(socket_set_t *s, bool away, char *err, size_t errlen);

/*
 * From now on socket_set_steer gives every UDP group (reuseport mode) a
 * program that picks the socket of the CPU that received the datagram
 * (its number modulo the workers), with `away` true and false alike: it
 * never picks a place past the set's own sockets. The caller pins worker
 * i to the CPUs whose number modulo the workers is i, and calls
 * socket_set_steer to attach it. Main thread.
 */
void socket_set_steer_cpu(socket_set_t *s);

/*
 * Close every socket the set still owns and free it; NULL does nothing.
 * Main thread, once no worker uses the sockets.
 */
void socket_set_close(socket_set_t *s);

#endif
