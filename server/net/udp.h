/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The UDP path: receiver threads, recvmmsg/sendmmsg batches answered by the responder. */
#ifndef SHOAL_SERVER_NET_UDP_H
#define SHOAL_SERVER_NET_UDP_H

#include <signal.h>
#include <stddef.h>

/* recvmmsg/sendmmsg batch: batches of 16 to 64 measured best on this kernel */
#define UDP_BATCH 32

/* Buffers for one recvmmsg/sendmmsg batch, allocated once per receiver. */
typedef struct udp_batch udp_batch_t;

/*
 * Allocate a batch: UDP_BATCH receive buffers of the longest query read,
 * UDP_BATCH answer buffers of answer_cap octets, the mmsghdr and iovec
 * arrays. Returns it (the caller owns it: udp_batch_free), or NULL when
 * out of memory. Main thread, before the workers start.
 */
udp_batch_t *udp_batch_new(size_t answer_cap);

/* Free b; NULL does nothing. */
void udp_batch_free(udp_batch_t *b);

/*
 * The signal that wakes a receiver blocked in recvmmsg (its handler does
 * nothing and is installed without SA_RESTART, so the call returns
 * EINTR): nothing is done to the socket, which another process may be
 * handed and go on reading.
 */
#define UDP_WAKE_SIGNAL (SIGRTMIN + 3)

/*
 * Install the wake signal's handler (process-wide; each receiver
 * unblocks the signal for itself). Returns 0 or -errno. Main thread,
 * before the receivers start.
 */
int udp_wake_init(void);

/*
 * A receiver thread's body (arg: its udp_receiver_t): registers with RCU,
 * then until r->stop, blocks in recvmmsg (MSG_WAITFORONE: the first
 * datagram, then whatever is queued, up to UDP_BATCH), answers each query
 * with the worker's responder inside one zone read section per batch,
 * and sendmmsg's the answers. The socket's file is put in blocking mode
 * (every other read and write of it says MSG_DONTWAIT, so no process
 * handed it depends on the flag). Allocates nothing and takes no lock.
 */
void *udp_receiver_main(void *arg);

#endif
