/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The descriptor budget: raise RLIMIT_NOFILE, count what is open, share the rest among TCP
 * connections. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>

#include "proto/error.h"
#include "server/common/mainthread.h"
#include "server/ctl/control.h"
#include "server/ctl/metrics.h"
#include "server/daemon/fdbudget.h"
#include "server/events/notify_out.h"

int fdbudget_plan(const fdbudget_in_t *in, fdbudget_t *out)
{
	uint64_t threads = in->threads ? in->threads : 1;
	uint64_t addresses = in->addresses;
	uint64_t udp = in->shared_udp ? addresses : threads * addresses;
	uint64_t listeners = threads * (addresses + in->tls_addresses);
	/* a TCP server per worker, and a TLS one with listen-tls: each its own slots */
	uint64_t servers = in->tls_addresses ? 2 : 1;
	/* each listener may hold one accepted connection while its worker has no slot */
	uint64_t held = listeners;
	uint64_t loops = threads * FDBUDGET_PER_LOOP + FDBUDGET_MAIN;
	/* the bound socket, the duplicate accept reads, the clients, one held */
	uint64_t control = in->control ? 2 + CONTROL_CLIENTS_MAX + 1 : 0;
	/* the listener, the clients, one held */
	uint64_t metrics = in->metrics ? 1 + METRICS_CLIENTS_MAX + 1 : 0;
	/* NOTIFY out's sends in flight, and the refreshes running: a socket each (requestor) */
	uint64_t requests = NOTIFY_OUT_PARALLEL + (uint64_t)in->transfers_in;
	out->fixed = in->open + udp + listeners + held + loops + control + metrics + requests +
		     FDBUDGET_RESERVE;
	out->per_worker_room =
		in->limit > out->fixed ? (in->limit - out->fixed) / (threads * servers) : 0;
	out->per_worker = out->per_worker_room < in->max_connections
				  ? (uint32_t)out->per_worker_room
				  : in->max_connections;
	uint32_t least =
		in->max_connections < FDBUDGET_TCP_MIN ? in->max_connections : FDBUDGET_TCP_MIN;
	return out->per_worker_room < least ? SHOAL_ECONFIG : 0;
}

int fdbudget_raise(uint64_t *before, uint64_t *now)
{
	MAIN_THREAD_ONLY();
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		*before = *now = 0;
		return -errno;
	}
	*before = *now = rl.rlim_cur;
	if (rl.rlim_cur == rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -errno;
	*now = rl.rlim_cur;
	return 0;
}

int64_t fdbudget_count_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	int64_t n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}
