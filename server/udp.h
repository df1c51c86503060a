/* A worker's UDP path: recvmmsg/sendmmsg batches answered by its responder, no allocation. */
#ifndef SHOAL_SERVER_UDP_H
#define SHOAL_SERVER_UDP_H

#include <stddef.h>
#include <uv.h>

/* recvmmsg/sendmmsg batch: batches of 16 to 64 measured best on this kernel */
#define UDP_BATCH 32

/* Buffers for one recvmmsg/sendmmsg batch, allocated once per worker. */
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
 * uv_poll callback for one of a worker's UDP sockets (handle is one of
 * its udp_polls, handle->data the worker_t): read the socket in recvmmsg
 * batches, answer each query with the worker's responder inside one zone
 * read section per batch, sendmmsg the answers; a few batches per call,
 * then back to the loop so a stop and the other sockets get a turn.
 * Worker thread; allocates nothing and takes no lock.
 */
void udp_on_readable(uv_poll_t *handle, int status, int events);

#endif
