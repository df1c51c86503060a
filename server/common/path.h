/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Files in folders other users can reach: who may write the folders, this user's lock files. */
#ifndef SHOAL_SERVER_COMMON_PATH_H
#define SHOAL_SERVER_COMMON_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Refuse a path under a folder every user may write without the sticky
 * bit (any of them could replace the file, or a folder on the way), and
 * warn about one in a sticky world-writable folder (/tmp: another user may
 * take the name first). `what` starts the messages ("control", "pid-file").
 * The file's own folder may be missing (the caller makes it): then the
 * folder above is checked. Returns 0 or SHOAL_ECONFIG with err. Main thread.
 */
int path_check_folders(const char *what, const char *path, char *err, size_t errlen);

/*
 * Check dir, a folder for files only this server may write (the lock
 * folder, state-dir): an absolute path to a folder, not a symbolic link,
 * of uid, that no one else may write, under folders path_check_folders
 * accepts. When make is not 0 a missing folder is made with that mode
 * first (and given to uid and gid when the process is root). `what` starts
 * the messages. Returns 0, or a negative error (SHOAL_ECONFIG for a
 * folder that is not such a one) with err. Main thread.
 */
int path_own_folder(const char *what, const char *dir, mode_t make, uid_t uid, gid_t gid, char *err,
		    size_t errlen);

/*
 * The folder of this user's lock files, into buf: one no other user may
 * write, so no other user can take a lock's name or hold its file.
 *   1. $RUNTIME_DIRECTORY (systemd's RuntimeDirectory=; the first one),
 *   2. as root: RUNSTATEDIR/shoal, made 0755 when missing,
 *   3. $XDG_RUNTIME_DIR,
 *   4. /tmp/shoald-UID, made 0700 when missing.
 * The first that applies must be a folder (not a symbolic link) of the
 * effective user that no one else may write, under folders path_check_folders
 * accepts: else SHOAL_ECONFIG with err naming its owner and mode (nothing
 * else is tried: two processes of one user must agree). Returns 0, or a
 * negative error with err. Main thread.
 */
int path_lock_folder(char *buf, size_t len, char *err, size_t errlen);

/*
 * Open path for reading and writing, made with `mode` when missing, never
 * through a symbolic link, never waiting (a FIFO); it must be a regular
 * file of the effective user. Returns 0 with *fd, or a negative error
 * (-errno; SHOAL_ECONFIG for a file of another user or another kind) with
 * err. Any thread.
 */
int path_open_own(const char *path, mode_t mode, int *fd, char *err, size_t errlen);

/*
 * Open path as path_open_own does and take an exclusive flock(2) on it without waiting. The lock
 * lasts as long as the open file description: close(*fd) or the process's
 * end gives it up, and a descriptor passed to another process keeps it.
 * Returns 0 with *fd; SHOAL_EEXIST with *fd -1 and *holder, the pid that
 * holds the lock (0 when /proc/locks does not show it); or a negative
 * error as path_open_own's, with err. A file its holder removed while
 * this one opened it is opened again. Any thread.
 */
int path_lock_open(const char *path, mode_t mode, int *fd, pid_t *holder, char *err, size_t errlen);

/*
 * Take the lock on fd, a file path_lock_open or open(2) made, without
 * waiting. Returns 0, SHOAL_EEXIST with *holder (as path_lock_open), or
 * -errno. Any thread.
 */
int path_lock_fd(int fd, pid_t *holder);

/*
 * Does path still name the file open as fd (not removed, not replaced)?
 * Any thread.
 */
bool path_names_fd(const char *path, int fd);

/*
 * The process that holds a flock on the file open as fd, from /proc/locks,
 * or 0 when none is shown. Any thread; for messages.
 */
pid_t path_lock_holder(int fd);

#endif
