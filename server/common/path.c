/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Files in folders other users can reach: who may write the folders, this user's lock files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/path.h"

/* path as an absolute one, into buf (relative paths start from the current folder). */
static int absolute(const char *what, const char *path, char *buf, size_t len, char *err,
		    size_t errlen)
{
	if (path[0] == '/') {
		snprintf(buf, len, "%s", path);
		return 0;
	}
	char cwd[2048];
	if (!getcwd(cwd, sizeof(cwd))) {
		snprintf(err, errlen, "%s %s: cannot tell the current folder: %s", what, path,
			 strerror(errno));
		return SHOAL_ECONFIG;
	}
	snprintf(buf, len, "%s/%s", cwd, path);
	return 0;
}

int path_check_folders(const char *what, const char *path, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	char dir[4096];
	if (absolute(what, path, dir, sizeof(dir), err, errlen) < 0)
		return SHOAL_ECONFIG;
	/*
	 * Whoever may write a folder on the way may rename or replace what is
	 * in it: the file, so that another process finds someone else's, or a
	 * folder above it. A sticky folder (/tmp) lets only owners do that,
	 * but anyone may take the name first.
	 */
	bool parent = true; /* the folder the file is made in */
	bool own = true;    /* the file's own folder, which the caller may make */
	for (char *cut = strrchr(dir, '/'); cut; cut = strrchr(dir, '/'), own = false) {
		cut[cut == dir] = '\0'; /* "/x" ends as "/" */
		struct stat st;
		if (stat(dir, &st) < 0) {
			if (own && errno == ENOENT)
				continue; /* made with the file: the folder above is its parent */
			snprintf(err, errlen, "%s %s: %s: %s", what, path, dir, strerror(errno));
			return SHOAL_ECONFIG;
		}
		if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
			snprintf(err, errlen,
				 "%s %s: every user may write %s (mode %04o, not sticky) and so "
				 "replace what is in it; use a folder only root or the server's "
				 "user may write, such as " RUNSTATEDIR,
				 what, path, dir, (unsigned)(st.st_mode & 07777));
			return SHOAL_ECONFIG;
		}
		if (parent && (st.st_mode & S_IWOTH))
			log_warning("%s %s: every user may write %s (sticky): another user may "
				    "take the name before shoald starts; prefer " RUNSTATEDIR,
				    what, path, dir);
		parent = false;
		if (!strcmp(dir, "/"))
			break;
	}
	return 0;
}

/* Which folder applies (path_lock_folder's list), into buf; *make: its mode when made, or 0. */
static void lock_folder_choice(char *buf, size_t len, mode_t *make)
{
	uid_t uid = geteuid();
	const char *env = getenv("RUNTIME_DIRECTORY");
	*make = 0;
	if (env && *env) {
		snprintf(buf, len, "%.*s", (int)strcspn(env, ":"), env); /* a list: the first */
	} else if (uid == 0) {
		snprintf(buf, len, "%s", RUNSTATEDIR "/shoal");
		*make = 0755;
	} else if ((env = getenv("XDG_RUNTIME_DIR")) && *env) {
		snprintf(buf, len, "%s", env);
	} else {
		snprintf(buf, len, "/tmp/shoald-%u", (unsigned)uid);
		*make = 0700;
	}
}

int path_own_folder(const char *what, const char *dir, mode_t make, uid_t uid, gid_t gid, char *err,
		    size_t errlen)
{
	MAIN_THREAD_ONLY();
	if (dir[0] != '/') {
		snprintf(err, errlen, "%s %s: not an absolute path", what, dir);
		return SHOAL_ECONFIG;
	}
	if (make && mkdir(dir, make) == 0) {
		/* made by root for the user it runs as from the privilege drop on */
		if (geteuid() == 0 && uid != 0 && chown(dir, uid, gid) < 0) {
			int e = -errno;
			snprintf(err, errlen, "%s %s: made, but cannot give it to uid %u: %s", what,
				 dir, (unsigned)uid, shoal_strerror(e));
			return e;
		}
		log_info("made the %s %s", what, dir);
	}
	struct stat st;
	if (lstat(dir, &st) < 0) {
		int e = -errno;
		snprintf(err, errlen, "%s %s: %s", what, dir, shoal_strerror(e));
		return e;
	}
	/* lstat: a symbolic link is not followed to a folder another user chose */
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 022)) {
		snprintf(err, errlen,
			 "%s %s: %s of uid %u, mode %04o; it must be a folder of this "
			 "user (uid %u) that no one else may write",
			 what, dir, S_ISDIR(st.st_mode) ? "a folder" : "not a folder",
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)uid);
		return SHOAL_ECONFIG;
	}
	char inside[4200];
	snprintf(inside, sizeof(inside), "%s/x", dir);
	return path_check_folders(what, inside, err, errlen);
}

int path_lock_folder(char *buf, size_t len, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	mode_t make;
	lock_folder_choice(buf, len, &make);
	int rc = path_own_folder("lock folder", buf, make, geteuid(), getegid(), err, errlen);
	if (rc == SHOAL_ECONFIG) {
		/* what to do about it: another user could hold the locks */
		size_t used = strlen(err);
		snprintf(err + used, errlen > used ? errlen - used : 0,
			 ", or another user could hold the locks: remove it, or set "
			 "RUNTIME_DIRECTORY to such a folder");
	}
	return rc;
}

bool path_names_fd(const char *path, int fd)
{
	struct stat a, b;
	return lstat(path, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

pid_t path_lock_holder(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 0;
	FILE *f = fopen("/proc/locks", "r");
	char line[256], type[16];
	pid_t found = 0, by_inode = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		/* "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF"; a waiter's has "->" */
		int pid;
		unsigned maj, min;
		unsigned long ino;
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", type, &pid, &maj, &min, &ino) !=
			    5 ||
		    strcmp(type, "FLOCK") || ino != (unsigned long)st.st_ino || pid <= 0)
			continue;
		/* some file systems show another device number in stat than here */
		if (maj == major(st.st_dev) && min == minor(st.st_dev))
			found = (pid_t)pid;
		else if (!by_inode)
			by_inode = (pid_t)pid;
	}
	if (f)
		fclose(f);
	return found ? found : by_inode;
}

int path_lock_fd(int fd, pid_t *holder)
{
	*holder = 0;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		*holder = path_lock_holder(fd);
		return SHOAL_EEXIST;
	}
	return 0;
}

int path_open_own(const char *path, mode_t mode, int *fd, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO put in its place must not hold the start */
	int f = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
	if (f < 0) {
		int e = -errno;
		snprintf(err, errlen, "%s: %s", path, shoal_strerror(e));
		return e;
	}
	struct stat st;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s: not a regular file of this user (uid %u) but %s of uid %u: made by "
			 "someone else? Remove it",
			 path, (unsigned)geteuid(), S_ISREG(st.st_mode) ? "one" : "another kind",
			 (unsigned)st.st_uid);
		close(f);
		return SHOAL_ECONFIG;
	}
	*fd = f;
	return 0;
}

int path_lock_open(const char *path, mode_t mode, int *fd, pid_t *holder, char *err, size_t errlen)
{
	*fd = -1;
	*holder = 0;
	/* a holder that removes the file at its end leaves this one a name of a new file */
	for (int tries = 0; tries < 8; tries++) {
		int f;
		int rc = path_open_own(path, mode, &f, err, errlen);
		if (rc < 0)
			return rc;
		rc = path_lock_fd(f, holder);
		if (rc == 0 && path_names_fd(path, f)) {
			*fd = f;
			return 0;
		}
		close(f);
		if (rc == SHOAL_EEXIST)
			return rc;
		if (rc < 0) {
			snprintf(err, errlen, "%s: cannot lock it: %s", path, shoal_strerror(rc));
			return rc;
		}
	}
	snprintf(err, errlen, "%s: replaced again and again while it was being locked", path);
	return SHOAL_EIO;
}
