/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One server per address and port: a claim taken before any listening socket is bound. */
#ifndef SHOAL_SERVER_DAEMON_INSTANCE_H
#define SHOAL_SERVER_DAEMON_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/net/socket.h"

/*
 * A second shoald started on a port the first one serves, as the same
 * user, would join the first one's SO_REUSEPORT groups without an error
 * and take part of its queries (with possibly other data). Before the
 * sockets are made, a claim:
 *   - takes an exclusive lock per address: a flock on a file named after
 *     it and the network namespace, in a folder only this user may write
 *     (path_lock_folder), gone with the process that holds it, so two
 *     servers starting at once cannot both pass, and no other user can
 *     hold the lock to keep this one from starting (another user's
 *     sockets cannot join this one's SO_REUSEPORT groups anyway);
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
	 * (the new process receives the running one's sockets over the
	 * control socket), or an operator's --share-port. Nothing is checked
	 * or locked: once a server's sockets are bound, the check of the port
	 * refuses a second one whoever holds the lock.
	 */
	INSTANCE_SHARE,
};

/*
 * Claim addrs[0..n) (listen: UDP and TCP) and tls_addrs[0..n_tls)
 * (listen-tls: TCP) for this process. Returns 0 and *out (release with
 * instance_release; the locks last until then), or SHOAL_EEXIST with err
 * naming the holder ("ADDR: ... pid 1234 (shoald) ..."), or another
 * negative error with err: the lock folder is not this user's alone
 * (SHOAL_ECONFIG), a lock file cannot be made or the netlink socket
 * cannot be read (-errno). Main thread, before socket_set_open.
 */
int instance_claim(const listen_addr_t *addrs, size_t n, const listen_addr_t *tls_addrs,
		   size_t n_tls, enum instance_mode mode, instance_t **out, char *err,
		   size_t errlen);

/*
 * The pid file at `path` (pid-file; the caller has checked its folders
 * with path_check_folders): a regular file of this user, held locked
 * (flock) while this process runs, so a file that names a process without
 * holding the lock is stale and replaced, whatever process has its number
 * now. A file
 * locked by a live process stops start-up: two servers with one pid file
 * would make it lie. With `later` (a takeover: the giver holds it) the
 * file is only opened, before the privilege drop, for
 * instance_pid_file_take. Returns 0, or SHOAL_EEXIST or another negative
 * error with err. Main thread, after instance_claim.
 */
int instance_pid_file(instance_t *in, const char *path, bool later, char *err, size_t errlen);

/*
 * The process this one took over from has exited: lock the pid file
 * opened by instance_pid_file(later) and write this process's id into it
 * (opened again by its path when the giver removed it). Returns 0, or a
 * negative error with err. Main thread.
 */
int instance_pid_file_take(instance_t *in, char *err, size_t errlen);

/*
 * The sockets were handed over: at release the pid file is emptied, not
 * removed, for the taker to write its id into. NULL does nothing. Main
 * thread.
 */
void instance_handed(instance_t *in);

/*
 * Give the claim up: close the locks and remove their files, remove the
 * pid file (empty it where it cannot be removed, as after the privilege
 * drop, so that it names no process); NULL does nothing.
 */
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
