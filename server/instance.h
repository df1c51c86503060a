/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One server per address and port: a claim taken before any listening socket is bound. */
#ifndef SHOAL_SERVER_INSTANCE_H
#define SHOAL_SERVER_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/socket.h"

/*
 * A second shoald started on a port the first one serves, as the same
 * user, would join the first one's SO_REUSEPORT groups without an error
 * and take part of its queries (with possibly other data). Before the
 * sockets are made, a claim:
 *   - takes an exclusive lock per address: an abstract unix socket named
 *     after it (one per network namespace, gone with the process that
 *     holds it), so two servers starting at once cannot both pass;
 *   - asks the kernel (NETLINK_SOCK_DIAG) for every UDP socket and TCP
 *     listener already bound to the port on an address that overlaps
 *     (the same address, or a wildcard on either side), whoever made it:
 *     another shoald with another control path or pid file, an older
 *     shoald without the lock, any other server.
 * A refusal names the process that holds the port (its pid and name, found
 * through /proc by the socket's inode), or its uid when /proc does not
 * show it.
 */
typedef struct instance instance_t;

enum instance_mode {
	INSTANCE_EXCLUSIVE, /* refuse a port held by anyone else */
	/*
	 * Join a port another process holds, on purpose: a socket takeover
	 * (the new process receives the running one's sockets and lock
	 * descriptors over the control socket), or an operator's
	 * --share-port. Nothing is checked or locked.
	 */
	INSTANCE_SHARE,
};

/*
 * Claim addrs[0..n) for this process. Returns 0 and *out (release with
 * instance_release; the locks last until then), or SHOAL_EEXIST with err
 * naming the holder ("ADDR: ... pid 1234 (shoald) ..."), or another
 * negative error (the netlink socket could not be read: -errno) with err.
 * Main thread, before socket_set_open.
 */
int instance_claim(const listen_addr_t *addrs, size_t n, enum instance_mode mode, instance_t **out,
		   char *err, size_t errlen);

/*
 * Write this process's id to `path` (pid-file), removed again by
 * instance_release. A file that names another live process stops
 * start-up: two servers with one pid file would make it lie. Returns 0, or
 * SHOAL_EEXIST or -errno with err. Main thread, after instance_claim.
 */
int instance_pid_file(instance_t *in, const char *path, char *err, size_t errlen);

/* Give the claim up (closes the locks, removes the pid file); NULL does nothing. */
void instance_release(instance_t *in);

/* Who holds a socket, as far as this process may see. */
typedef struct instance_holder {
	pid_t pid;     /* 0 when no process of those /proc shows has it open */
	char comm[32]; /* the process's name (/proc/PID/comm), "" when pid is 0 */
} instance_holder_t;

/*
 * The process that has the socket with inode `inode` open, by a walk over
 * /proc/PID/fd. Fills *h (pid 0 when none is found). Any thread; slow on a
 * machine with many processes: for error messages only.
 */
void instance_find_holder(unsigned long inode, instance_holder_t *h);

#endif
