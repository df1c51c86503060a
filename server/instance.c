/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One server per address and port: an abstract-socket lock and the kernel's list of sockets. */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/instance.h"
#include "server/log.h"

struct instance {
	int *locks; /* one abstract unix socket per address, -1 when none */
	size_t count;
	char *pid_file; /* written by instance_pid_file, removed at release */
};

/* "127.0.0.1@5353", "::1@53": an address as the kernel has it, whatever was written. */
static void addr_key(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(buf, len, "%s@%u", host, port);
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
	if (!h->pid)
		return;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)h->pid);
	FILE *f = fopen(path, "r");
	if (f && fgets(h->comm, sizeof(h->comm), f))
		h->comm[strcspn(h->comm, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* The inode of the unix socket bound to the abstract name `name`, from /proc/net/unix, or 0. */
static unsigned long abstract_inode(const char *name)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512], path[300];
	unsigned long inode = 0, ino;
	while (f && !inode && fgets(line, sizeof(line), f)) {
		/* Num RefCount Protocol Flags Type St Inode Path; "@" stands for the NUL */
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %299s", &ino, path) == 2 &&
		    path[0] == '@' && !strcmp(path + 1, name))
			inode = ino;
	}
	if (f)
		fclose(f);
	return inode;
}

/*
 * The lock for one address: bind an abstract unix socket named after it.
 * The kernel lets one socket have a name, and drops the name with the
 * last descriptor, so a killed server leaves no stale lock behind.
 */
static int lock_address(const listen_addr_t *a, int *out, char *err, size_t errlen)
{
	char key[INET6_ADDRSTRLEN + 8];
	addr_key(&a->addr, key, sizeof(key));
	char name[sizeof(key) + 32];
	snprintf(name, sizeof(name), "shoald.instance:%s", key);
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	memcpy(sun.sun_path + 1, name, len); /* sun_path[0] NUL: the abstract namespace */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = -errno;
		snprintf(err, errlen, "%s: cannot make the instance lock: %s", a->text,
			 shoal_strerror(e));
		return e;
	}
	if (bind(fd, (struct sockaddr *)&sun,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) == 0) {
		*out = fd;
		return 0;
	}
	int e = -errno;
	close(fd);
	if (e != -EADDRINUSE) {
		snprintf(err, errlen, "%s: cannot take the instance lock: %s", a->text,
			 shoal_strerror(e));
		return e;
	}
	instance_holder_t h;
	instance_find_holder(abstract_inode(name), &h);
	if (h.pid)
		snprintf(err, errlen,
			 "%s: another shoald, pid %ld (%s), serves or is starting on this "
			 "address; stop it, or choose another address or port",
			 a->text, (long)h.pid, h.comm);
	else
		snprintf(err, errlen,
			 "%s: another shoald serves or is starting on this address (its "
			 "process is not visible to this user); stop it, or choose another "
			 "address or port",
			 a->text);
	return SHOAL_EEXIST;
}

/* Do the kernel's socket address `src` (network order, idiag_src) and a overlap? */
static bool overlaps(const listen_addr_t *a, const uint32_t src[4])
{
	static const uint8_t zero[16];
	const uint8_t *ours, *theirs = (const uint8_t *)src;
	size_t len;
	if (a->addr.ss_family == AF_INET) {
		ours = (const uint8_t *)&((const struct sockaddr_in *)&a->addr)->sin_addr;
		len = 4;
	} else {
		ours = (const uint8_t *)&((const struct sockaddr_in6 *)&a->addr)->sin6_addr;
		len = 16;
	}
	/* a wildcard on either side takes the port on every address of the family */
	return !memcmp(ours, zero, len) || !memcmp(theirs, zero, len) || !memcmp(ours, theirs, len);
}

static uint16_t addr_port(const listen_addr_t *a)
{
	return a->addr.ss_family == AF_INET
		       ? ntohs(((const struct sockaddr_in *)&a->addr)->sin_port)
		       : ntohs(((const struct sockaddr_in6 *)&a->addr)->sin6_port);
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
	uint16_t port = addr_port(a);
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
			inet_ntop(a->addr.ss_family, m->id.idiag_src, f->where, sizeof(f->where));
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
static int check_port(const listen_addr_t *a, char *err, size_t errlen)
{
	found_t f = { 0 };
	static const int protocols[] = { IPPROTO_UDP, IPPROTO_TCP };
	for (size_t i = 0; i < 2 && !f.any; i++) {
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

int instance_claim(const listen_addr_t *addrs, size_t n, enum instance_mode mode, instance_t **out,
		   char *err, size_t errlen)
{
	instance_t *in = calloc(1, sizeof(*in));
	if (!in || !(in->locks = malloc((n ? n : 1) * sizeof(int)))) {
		free(in);
		snprintf(err, errlen, "out of memory");
		return SHOAL_ENOMEM;
	}
	in->count = n;
	for (size_t i = 0; i < n; i++)
		in->locks[i] = -1;
	int rc = 0;
	/* shared on purpose (a takeover, --share-port): nothing to lock or to refuse */
	for (size_t i = 0; i < n && rc == 0 && mode == INSTANCE_EXCLUSIVE; i++) {
		rc = lock_address(&addrs[i], &in->locks[i], err, errlen);
		if (rc == 0)
			rc = check_port(&addrs[i], err, errlen);
	}
	if (rc < 0) {
		instance_release(in);
		return rc;
	}
	*out = in;
	return 0;
}

int instance_pid_file(instance_t *in, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	long pid = 0;
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	/* kill(pid, 0): EPERM is a live process of another user */
	if (pid > 0 && pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) {
		snprintf(err, errlen, "pid-file %s: names pid %ld, which is running", path, pid);
		return SHOAL_EEXIST;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = -errno;
		snprintf(err, errlen, "pid-file %s: %s", path, shoal_strerror(e));
		return e;
	}
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	int e = write(fd, line, (size_t)n) == n ? 0 : -errno;
	close(fd);
	if (e == 0 && !(in->pid_file = strdup(path)))
		e = SHOAL_ENOMEM;
	if (e < 0) {
		unlink(path);
		snprintf(err, errlen, "pid-file %s: %s", path, shoal_strerror(e));
	}
	return e;
}

void instance_release(instance_t *in)
{
	if (!in)
		return;
	/* may fail after the privilege drop (the folder is root's): then it stays, stale */
	if (in->pid_file && unlink(in->pid_file) < 0)
		log_debug("pid-file %s: not removed: %s", in->pid_file, strerror(errno));
	free(in->pid_file);
	for (size_t i = 0; i < in->count; i++)
		if (in->locks[i] >= 0)
			close(in->locks[i]);
	free(in->locks);
	free(in);
}
