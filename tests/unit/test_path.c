/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/common/path.c: folders others may write, this user's lock folder, lock
 * files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/path.h"
#include "unit.h"

#define OTHER_UID 65534 /* nobody */

static char dir[] = "/tmp/shoal-path.XXXXXX";

static const char *in_dir(const char *name)
{
	static char path[2][256];
	static int k;
	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

/*
 * A folder every user may write without the sticky bit lets any of them
 * replace the file (a control socket, a pid file) at any time: refused.
 * With the sticky bit (/tmp) the file stays shoald's once made: allowed,
 * with a warning.
 */
static void test_path_folders(void)
{
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("open"), 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("open"), 0777), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("open/deeper"), 0755), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("sticky"), 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("sticky"), 01777), 0);
	CU_ASSERT_EQUAL(path_check_folders("control", in_dir("open/ctl"), err, sizeof(err)),
			SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "every user may write"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/open (mode 0777, not sticky)"));
	/* a folder above counts too: it could be renamed away */
	CU_ASSERT_EQUAL(path_check_folders("control", in_dir("open/deeper/ctl"), err, sizeof(err)),
			SHOAL_ECONFIG);
	CU_ASSERT_EQUAL(path_check_folders("control", in_dir("sticky/ctl"), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(path_check_folders("control", in_dir("ctl"), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(path_check_folders("control", "/tmp/ctl", err, sizeof(err)), 0);
	/* a relative path is taken from the current folder */
	char cwd[1024];
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof(cwd)));
	CU_ASSERT_EQUAL_FATAL(chdir(in_dir("open")), 0);
	CU_ASSERT_EQUAL(path_check_folders("control", "ctl", err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_EQUAL_FATAL(chdir(cwd), 0);
	/* the socket's own folder may be missing (control_open makes it), not one above */
	CU_ASSERT_EQUAL(path_check_folders("control", in_dir("none/ctl"), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(path_check_folders("control", in_dir("none/deeper/ctl"), err, sizeof(err)),
			SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/none: No such file or directory"));
	/* and a missing folder under one every user may write is refused all the same */
	CU_ASSERT_EQUAL(path_check_folders("control", in_dir("open/none/ctl"), err, sizeof(err)),
			SHOAL_ECONFIG);
	rmdir(in_dir("open/deeper"));
	rmdir(in_dir("open"));
	rmdir(in_dir("sticky"));
}

/* path_lock_folder with RUNTIME_DIRECTORY set to `folder`: its return, err kept. */
static int lock_folder_of(const char *folder, char *got, char *err, size_t errlen)
{
	setenv("RUNTIME_DIRECTORY", folder, 1);
	int rc = path_lock_folder(got, 256, err, errlen);
	unsetenv("RUNTIME_DIRECTORY");
	return rc;
}

/*
 * The lock folder must be this user's alone: one another user owns, may
 * write, or has made a symbolic link of could hold the locks. The first
 * folder that applies decides; nothing else is tried.
 */
static void test_lock_folder(void)
{
	char got[256], err[512] = "";
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("locks"), 0700), 0);
	/* systemd's RuntimeDirectory= list: the first one */
	char list[300];
	snprintf(list, sizeof(list), "%s:/elsewhere", in_dir("locks"));
	CU_ASSERT_EQUAL(lock_folder_of(list, got, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(got, in_dir("locks"));
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("locks"), 0770), 0);
	CU_ASSERT_EQUAL(lock_folder_of(in_dir("locks"), got, err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "mode 0770"));
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("locks"), 0755), 0);
	CU_ASSERT_EQUAL(lock_folder_of(in_dir("locks"), got, err, sizeof(err)), 0);
	/* a symbolic link to a good folder: not followed */
	CU_ASSERT_EQUAL_FATAL(symlink(in_dir("locks"), in_dir("link")), 0);
	CU_ASSERT_EQUAL(lock_folder_of(in_dir("link"), got, err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a folder"));
	CU_ASSERT_EQUAL(lock_folder_of("relative", got, err, sizeof(err)), SHOAL_ECONFIG);
	if (geteuid() == 0) {
		/* another user's folder, even one no one else may write */
		CU_ASSERT_EQUAL_FATAL(chown(in_dir("locks"), OTHER_UID, OTHER_UID), 0);
		CU_ASSERT_EQUAL(lock_folder_of(in_dir("locks"), got, err, sizeof(err)),
				SHOAL_ECONFIG);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "of uid 65534"));
	}
	unlink(in_dir("link"));
	rmdir(in_dir("locks"));
	/* without RUNTIME_DIRECTORY: root's folder under RUNSTATEDIR, or this user's */
	char *xdg = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
	unsetenv("XDG_RUNTIME_DIR");
	CU_ASSERT_EQUAL(path_lock_folder(got, sizeof(got), err, sizeof(err)), 0);
	char want[256];
	if (geteuid() == 0)
		snprintf(want, sizeof(want), "%s", RUNSTATEDIR "/shoal");
	else
		snprintf(want, sizeof(want), "/tmp/shoald-%u", (unsigned)geteuid());
	CU_ASSERT_STRING_EQUAL(got, want);
	if (xdg)
		setenv("XDG_RUNTIME_DIR", xdg, 1);
	free(xdg);
}

/*
 * state-dir: made when missing (given to the user shoald runs as when
 * made by root), then like the lock folder: this user's alone.
 */
static void test_own_folder(void)
{
	char err[512] = "";
	uid_t uid = geteuid();
	gid_t gid = getegid();
	CU_ASSERT_EQUAL(
		path_own_folder("state-dir", in_dir("state"), 0, uid, gid, err, sizeof(err)),
		-ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "state-dir "));
	CU_ASSERT_EQUAL(
		path_own_folder("state-dir", in_dir("state"), 0700, uid, gid, err, sizeof(err)), 0);
	struct stat st;
	CU_ASSERT_EQUAL(lstat(in_dir("state"), &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0700);
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("state"), 0770), 0);
	CU_ASSERT_EQUAL(
		path_own_folder("state-dir", in_dir("state"), 0, uid, gid, err, sizeof(err)),
		SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "mode 0770"));
	CU_ASSERT_EQUAL(path_own_folder("state-dir", "relative", 0, uid, gid, err, sizeof(err)),
			SHOAL_ECONFIG);
	rmdir(in_dir("state"));
	if (uid == 0) {
		/* root makes it for the user it drops to, and it is that user's */
		CU_ASSERT_EQUAL(path_own_folder("state-dir", in_dir("state"), 0700, OTHER_UID,
						OTHER_UID, err, sizeof(err)),
				0);
		CU_ASSERT_EQUAL(lstat(in_dir("state"), &st), 0);
		CU_ASSERT_EQUAL(st.st_uid, OTHER_UID);
		CU_ASSERT_EQUAL(
			path_own_folder("state-dir", in_dir("state"), 0, 0, 0, err, sizeof(err)),
			SHOAL_ECONFIG);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "of uid 65534"));
		rmdir(in_dir("state"));
	}
}

/* A lock file: one holder at a time, named when refused; gone with its descriptor. */
static void test_lock_open(void)
{
	char err[512] = "";
	int a = -1, b = -1;
	pid_t holder = -1;
	CU_ASSERT_EQUAL_FATAL(path_lock_open(in_dir("lock"), 0600, &a, &holder, err, sizeof(err)),
			      0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(in_dir("lock"), &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	/* flock belongs to the open file: a second open of it, even here, is refused */
	CU_ASSERT_EQUAL(path_lock_open(in_dir("lock"), 0600, &b, &holder, err, sizeof(err)),
			SHOAL_EEXIST);
	CU_ASSERT_EQUAL(b, -1);
	CU_ASSERT_EQUAL(holder, getpid());
	CU_ASSERT_EQUAL(path_lock_holder(a), getpid());
	/* removed by its holder (at its end): the next one locks a new file of that name */
	CU_ASSERT_EQUAL(unlink(in_dir("lock")), 0);
	CU_ASSERT_EQUAL(path_lock_open(in_dir("lock"), 0600, &b, &holder, err, sizeof(err)), 0);
	CU_ASSERT(path_names_fd(in_dir("lock"), b));
	CU_ASSERT(!path_names_fd(in_dir("lock"), a));
	close(a);
	close(b);
	/* the holder gone, its file may be locked again */
	CU_ASSERT_EQUAL(path_lock_open(in_dir("lock"), 0600, &a, &holder, err, sizeof(err)), 0);
	close(a);
	unlink(in_dir("lock"));
	/* never through a symbolic link, never a FIFO (which would block the open) */
	CU_ASSERT_EQUAL_FATAL(symlink("/etc/passwd", in_dir("link")), 0);
	CU_ASSERT_EQUAL(path_lock_open(in_dir("link"), 0600, &a, &holder, err, sizeof(err)),
			-ELOOP);
	unlink(in_dir("link"));
	CU_ASSERT_EQUAL_FATAL(mkfifo(in_dir("fifo"), 0600), 0);
	CU_ASSERT_EQUAL(path_lock_open(in_dir("fifo"), 0600, &a, &holder, err, sizeof(err)),
			SHOAL_ECONFIG);
	unlink(in_dir("fifo"));
	if (geteuid() == 0) {
		/* a file another user made: not this user's lock */
		int fd = open(in_dir("theirs"), O_CREAT | O_WRONLY, 0644);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_EQUAL(fchown(fd, OTHER_UID, OTHER_UID), 0);
		close(fd);
		CU_ASSERT_EQUAL(
			path_lock_open(in_dir("theirs"), 0600, &a, &holder, err, sizeof(err)),
			SHOAL_ECONFIG);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "of uid 65534"));
		unlink(in_dir("theirs"));
	}
}

int main(int argc, char **argv)
{
	if (!mkdtemp(dir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_path_folders),
		UNIT_TEST(test_lock_folder),
		UNIT_TEST(test_own_folder),
		UNIT_TEST(test_lock_open),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "path", tests);
	rmdir(dir);
	return rc;
}
