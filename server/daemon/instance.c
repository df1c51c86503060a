/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One server per address and port: a lock file per address and the kernel's list of sockets. */
#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/addr.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/path.h"
#include "server/daemon/instance.h"

/* One address's lock: its file, held open and flocked. */
typedef struct instance_lock {
	int fd; /* -1 when none */
	char *path;
} instance_lock_t;

struct instance {
	instance_lock_t *locks; /* one per address (INSTANCE_EXCLUSIVE) */
	size_t count;
	char *pid_file; /* the path, as configured */
	int pid_fd;     /* its open file, or -1 */
	bool pid_ours;  /* pid_fd is locked and names this process: release empties it */
	bool handed;    /* the sockets went to a taker, which writes the pid file next */
};

/* Fill h's name from /proc/PID/comm ("" when it cannot be read). */
static void holder_comm(instance_holder_t *h)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)h->pid);
	FILE *f = fopen(path, "r");
	if (f && fgets(h->comm, sizeof(h->comm), f))
		h->comm[strcspn(h->comm, "\n")] = '\0';
	if (f)
		fclose(f);
}

void instance_find_holder(unsigned long inode, instance_holder_t *h)
{
	memset(h, 0, sizeof(*h));
	char want[64];
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	DIR *proc = opendir("/proc");
	struct dirent *p;
	while (proc && !h->pid && (p = readdir(proc))) {
		char *end;
		long pid = strtol(p->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
		DIR *fds = opendir(path); /* another user's: not ours to read, skipped */
		struct dirent *f;
		while (fds && !h->pid && (f = readdir(fds))) {
			char link[300], target[64];
			snprintf(link, sizeof(link), "/proc/%ld/fd/%s", pid, f->d_name);
			ssize_t n = readlink(link, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (!strcmp(target, want))
				h->pid = (pid_t)pid;
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	if (h->pid)
		holder_comm(h);
}

/*
 * The lock file of one address, in this user's lock folder: named after
 * the network namespace (ports are per namespace, as the abstract socket
 * that was the lock before was) and the address as the kernel has it.
 */
static bool lock_path(const listen_addr_t *a, const char *folder, char *buf, size_t len)
{
	/* the address as the kernel has it, whatever was written: "127.0.0.1@5353", "::1@53" */
	char key[ADDR_TEXT_MAX];
	addr_text((const struct sockaddr *)&a->addr, key, sizeof(key));
	struct stat st;
	unsigned long net = stat("/proc/self/ns/net", &st) == 0 ? (unsigned long)st.st_ino : 0;
	int n = snprintf(buf, len, "%s/shoald.instance.%lu.%s", folder, net, key);
	return n > 0 && (size_t)n < len;
}

/*
 * The lock for one address: an exclusive flock on its file in a folder
 * only this user may write (path_lock_folder), so that no other user can
 * take it (an abstract socket name, the lock before, could be bound by
 * anyone). Servers of other users need no lock against this one: the
 * kernel keeps their sockets out of its SO_REUSEPORT groups. The lock goes
 * with the process's descriptors, so a killed server leaves none behind.
 */
static int lock_address(const listen_addr_t *a, const char *folder, instance_lock_t *l, char *err,
			size_t errlen)
{
	char path[PATH_MAX];
	instance_holder_t h = { 0 };
	char why[PATH_MAX + 200] = "the lock folder's path is too long";
	int rc = lock_path(a, folder, path, sizeof(path))
			 ? path_lock_open(path, 0600, &l->fd, &h.pid, why, sizeof(why))
			 : SHOAL_ECONFIG;
	if (rc == 0 && !(l->path = strdup(path)))
		rc = SHOAL_ENOMEM;
	if (rc == 0)
		return 0;
	if (rc != SHOAL_EEXIST) {
		snprintf(err, errlen, "%s: cannot take the instance lock: %s", a->text,
			 rc == SHOAL_ENOMEM ? "out of memory" : why);
		return rc;
	}
	if (h.pid)
		holder_comm(&h);
	if (h.pid)
		snprintf(err, errlen,
			 "%s: another shoald, pid %ld (%s), serves or is starting on this "
			 "address; stop it, or choose another address or port",
			 a->text, (long)h.pid, h.comm);
	else
		snprintf(err, errlen,
			 "%s: another shoald serves or is starting on this address (its "
			 "process is not visible here); stop it, or choose another address or "
			 "port",
			 a->text);
	return SHOAL_EEXIST;
}

/* Do the kernel's socket address `src` (network order, idiag_src) and a overlap? */
static bool overlaps(const listen_addr_t *a, const uint32_t src[4])
{
	static const uint8_t zero[16];
	const uint8_t *ours, *theirs = (const uint8_t *)src;
	size_t len = addr_octets((const struct sockaddr *)&a->addr, &ours);
	/* a wildcard on either side takes the port on every address of the family */
	return !memcmp(ours, zero, len) || !memcmp(theirs, zero, len) || !memcmp(ours, theirs, len);
}

/* A socket found on the port: what the refusal says about it. */
typedef struct found {
	bool any;
	int protocol;
	char where[INET6_ADDRSTRLEN];
	uint32_t uid;
	unsigned long inode;
} found_t;

/*
 * Ask the kernel for the sockets of `protocol` in a's family (TCP: the
 * listeners; UDP: every one not connected to a peer) and keep the first on
 * a's port whose address overlaps a's. Returns 0 (f->any tells) or -errno.
 */
static int diag_port(const listen_addr_t *a, int protocol, found_t *f)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = { .nlmsg_len = sizeof(msg),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			 .nlmsg_seq = 1 },
		.req = { .sdiag_family = (uint8_t)a->addr.ss_family,
			 .sdiag_protocol = (uint8_t)protocol,
			 .idiag_states = protocol == IPPROTO_TCP ? 1u << TCP_LISTEN : ~0u },
	};
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	int rc = 0;
	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
		rc = -errno;
		goto done;
	}
	uint16_t port = addr_port((const struct sockaddr *)&a->addr);
	for (bool more = true; more;) {
		long buf[8192 / sizeof(long)]; /* aligned for the netlink headers */
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : SHOAL_EIO;
			goto done;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				more = false;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				rc = e->error < 0 ? e->error : SHOAL_EIO;
				goto done;
			}
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			/* a connected UDP socket gets only its peer's datagrams */
			if (f->any || ntohs(m->id.idiag_sport) != port || m->id.idiag_dport != 0 ||
			    !overlaps(a, m->id.idiag_src))
				continue;
			f->any = true;
			f->protocol = protocol;
			f->uid = m->idiag_uid;
			f->inode = m->idiag_inode;
			addr_ip_text((const uint8_t *)m->id.idiag_src,
				     a->addr.ss_family == AF_INET ? 4 : 16, f->where,
				     sizeof(f->where));
		}
	}
done:
	close(fd);
	return rc;
}

/*
 * Refuse a's port when a socket already holds it on an overlapping
 * address: SHOAL_EEXIST with err naming its process. When the kernel
 * cannot be asked (no sock_diag), says so and lets the bind decide.
 */
static int check_port(const listen_addr_t *a, bool tcp_only, char *err, size_t errlen)
{
	found_t f = { 0 };
	static const int protocols[] = { IPPROTO_UDP, IPPROTO_TCP };
	for (size_t i = tcp_only ? 1 : 0; i < 2 && !f.any; i++) {
		int rc = diag_port(a, protocols[i], &f);
		if (rc < 0) {
			log_warning("%s: cannot list the sockets on the port (sock_diag: %s); only "
				    "the instance lock guards it",
				    a->text, shoal_strerror(rc));
			return 0;
		}
	}
	if (!f.any)
		return 0;
	instance_holder_t h;
	instance_find_holder(f.inode, &h);
	char who[96];
	if (h.pid)
		snprintf(who, sizeof(who), "pid %ld (%s)", (long)h.pid, h.comm);
	else
		snprintf(who, sizeof(who), "uid %u (its process is not visible to this user)",
			 (unsigned)f.uid);
	snprintf(err, errlen,
		 "%s: the %s port is taken by a socket on %s of %s: a second server there would "
		 "take part of its queries; stop it, or choose another address or port",
		 a->text, f.protocol == IPPROTO_UDP ? "UDP" : "TCP", f.where, who);
	return SHOAL_EEXIST;
}

/* The i-th address of a claim: listen's, then listen-tls's. */
static const listen_addr_t *claimed(const listen_addr_t *addrs, size_t n,
				    const listen_addr_t *tls_addrs, size_t i)
{
	return i < n ? &addrs[i] : &tls_addrs[i - n];
}

int instance_claim(const listen_addr_t *addrs, size_t n_plain, const listen_addr_t *tls_addrs,
		   size_t n_tls, enum instance_mode mode, instance_t **out, char *err,
		   size_t errlen)
{
	MAIN_THREAD_ONLY();
	size_t n = n_plain + n_tls;
	instance_t *in = calloc(1, sizeof(*in));
	if (!in || !(in->locks = calloc(n ? n : 1, sizeof(*in->locks)))) {
		free(in);
		snprintf(err, errlen, "out of memory");
		return SHOAL_ENOMEM;
	}
	in->pid_fd = -1;
	in->count = n;
	for (size_t i = 0; i < n; i++)
		in->locks[i].fd = -1;
	char folder[PATH_MAX];
	int rc = 0;
	/* shared on purpose (a takeover, --share-port): nothing to lock or to refuse */
	if (mode == INSTANCE_EXCLUSIVE && n)
		rc = path_lock_folder(folder, sizeof(folder), err, errlen);
	for (size_t i = 0; i < n && rc == 0 && mode == INSTANCE_EXCLUSIVE; i++) {
		const listen_addr_t *a = claimed(addrs, n_plain, tls_addrs, i);
		rc = lock_address(a, folder, &in->locks[i], err, errlen);
		/* a TLS address has TCP listeners only: UDP there is another service's (DoQ) */
		if (rc == 0)
			rc = check_port(a, i >= n_plain, err, errlen);
	}
	if (rc < 0) {
		instance_release(in);
		return rc;
	}
	*out = in;
	return 0;
}

/* Write this process's id into the locked pid file; a pid it named before is logged. */
static int pid_write(instance_t *in, char *err, size_t errlen)
{
	char old[32] = "", line[32];
	ssize_t got = pread(in->pid_fd, old, sizeof(old) - 1, 0);
	long was = got > 0 ? strtol(old, NULL, 10) : 0;
	if (was > 0 && was != (long)getpid())
		log_notice("pid-file %s: named pid %ld, which did not hold it (left behind by a "
			   "server that could not remove it, or killed): replaced",
			   in->pid_file, was);
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	if (ftruncate(in->pid_fd, 0) < 0 || pwrite(in->pid_fd, line, (size_t)n, 0) != n) {
		int e = -errno;
		snprintf(err, errlen, "pid-file %s: %s", in->pid_file, shoal_strerror(e));
		return e;
	}
	in->pid_ours = true;
	return 0;
}

/* The refusal: the pid file is locked by a live process, named by the file or /proc/locks. */
static int pid_refuse(instance_t *in, int fd, pid_t holder, char *err, size_t errlen)
{
	char text[32] = "";
	ssize_t got = fd >= 0 ? pread(fd, text, sizeof(text) - 1, 0) : -1;
	long pid = holder ? (long)holder : got > 0 ? strtol(text, NULL, 10) : 0;
	if (pid > 0)
		snprintf(err, errlen,
			 "pid-file %s: names pid %ld, which is running (it holds the file)",
			 in->pid_file, pid);
	else
		snprintf(err, errlen, "pid-file %s: held by a running process", in->pid_file);
	return SHOAL_EEXIST;
}

int instance_pid_file(instance_t *in, const char *path, bool later, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	int rc;
	if (!(in->pid_file = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		return SHOAL_ENOMEM;
	}
	if (later) {
		/* the giver holds it: opened now, before the privilege drop; locked later */
		char why[PATH_MAX + 200];
		rc = path_open_own(path, 0644, &in->pid_fd, why, sizeof(why));
		if (rc < 0)
			snprintf(err, errlen, "pid-file %s", why);
		return rc;
	}
	pid_t holder;
	char why[PATH_MAX + 200];
	rc = path_lock_open(path, 0644, &in->pid_fd, &holder, why, sizeof(why));
	if (rc == SHOAL_EEXIST) {
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		rc = pid_refuse(in, fd, holder, err, errlen);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "pid-file %s", why);
		return rc;
	}
	return pid_write(in, err, errlen);
}

int instance_pid_file_take(instance_t *in, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	pid_t holder;
	char why[PATH_MAX + 200];
	/* opened before: still the file at the path? (the giver may have removed it) */
	if (in->pid_fd >= 0 && path_names_fd(in->pid_file, in->pid_fd)) {
		int rc = path_lock_fd(in->pid_fd, &holder);
		if (rc == SHOAL_EEXIST)
			return pid_refuse(in, in->pid_fd, holder, err, errlen);
		if (rc == 0)
			return pid_write(in, err, errlen);
	}
	if (in->pid_fd >= 0)
		close(in->pid_fd);
	in->pid_fd = -1;
	int rc = path_lock_open(in->pid_file, 0644, &in->pid_fd, &holder, why, sizeof(why));
	if (rc == SHOAL_EEXIST)
		return pid_refuse(in, -1, holder, err, errlen);
	if (rc < 0) {
		snprintf(err, errlen, "pid-file %s", why);
		return rc;
	}
	return pid_write(in, err, errlen);
}

void instance_handed(instance_t *in)
{
	MAIN_THREAD_ONLY();
	if (in)
		in->handed = true;
}

/* The pid file names no process any more: removed, or emptied where it cannot be. */
static void pid_file_release(instance_t *in)
{
	if (in->pid_ours && !in->handed && path_names_fd(in->pid_file, in->pid_fd) &&
	    unlink(in->pid_file) == 0)
		in->pid_ours = false;
	/*
	 * After the privilege drop the folder is root's: the file stays, and
	 * names nothing. A taker writes its own pid into it once this process
	 * has gone.
	 */
	if (in->pid_ours && ftruncate(in->pid_fd, 0) < 0)
		log_debug("pid-file %s: not emptied: %s", in->pid_file, strerror(errno));
	if (in->pid_fd >= 0)
		close(in->pid_fd);
}

void instance_release(instance_t *in)
{
	if (!in)
		return;
	pid_file_release(in);
	free(in->pid_file);
	for (size_t i = 0; i < in->count; i++) {
		instance_lock_t *l = &in->locks[i];
		/* removed while still held, so nobody locks a file no name leads to */
		if (l->fd >= 0 && path_names_fd(l->path, l->fd) && unlink(l->path) < 0)
			log_debug("instance lock %s: not removed: %s", l->path, strerror(errno));
		if (l->fd >= 0)
			close(l->fd);
		free(l->path);
	}
	free(in->locks);
	free(in);
}
