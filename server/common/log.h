/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * shoald's log: levels, one line per message to stderr with a timestamp and
 * the pid (the journal's priority instead when stderr is the journal),
 * optionally syslog.
 */
#ifndef SHOAL_SERVER_COMMON_LOG_H
#define SHOAL_SERVER_COMMON_LOG_H

#include <stdbool.h>

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARNING = 1,
	LOG_LEVEL_NOTICE = 2,
	LOG_LEVEL_INFO = 3,
	LOG_LEVEL_DEBUG = 4,
};

/* Level names in order ("error" ... "debug"), NULL-terminated; the config table uses them. */
extern const char *const log_level_names[];

/*
 * Set the threshold and whether lines also go to syslog (daemon facility,
 * RFC 3164 datagrams to /dev/log; a socket that cannot be reached now is
 * warned about once, and tried again by each line). Lines on stderr are
 * "TIMESTAMP shoald[PID]: LEVEL: message". When stderr is the journal
 * (log_stderr_is_journal), lines carry a "<N>" priority prefix instead of
 * the timestamp and the pid, which the journal keeps itself, unless
 * `taker` (started by --takeover): the journal then credits the stream to
 * the process that opened it, so the pid stays in the line. Call once on
 * the main thread before other threads start.
 */
void log_init(enum log_level level, bool use_syslog, bool taker);

/*
 * Send lines to the file at path (log-file) instead of stderr, from now
 * on: appended (O_APPEND: a restart's two processes may share it), made
 * with the mode the umask leaves of 0666, written by a thread of its own
 * (shoald-log) from a 256 KiB queue, so that a disk that does not answer
 * holds no other thread; a line the queue has no room for is dropped and
 * counted ("N log lines dropped (log-file was full)"). Returns 0, or a
 * negative error with err ("log-file PATH: reason"). Main thread, after
 * log_init; before the privilege drop, so the file may be root's folder's.
 */
int log_file_open(const char *path, char *err, size_t errlen);

/*
 * Open log-file's path anew (logrotate moved the file: shoalctl
 * log-reopen, SIGUSR1) and hand it to the log thread at the place in the
 * queue of this moment: lines logged before go to the old file, those
 * after to the new one, whose first line says it was reopened. Returns 0
 * with text "log-file PATH reopened"; 1 with text "no log-file: ..." when
 * there is none; a negative error with text saying why (the old file
 * stays in use). Main thread.
 */
int log_file_reopen(char *text, size_t len);

/*
 * Write what is queued for log-file and close it; lines logged after go to
 * stderr. Waits at most 2 s for a file that takes no lines, and then
 * leaves the thread to the process's exit. Main thread, at the end.
 */
void log_file_close(void);

/*
 * Change the threshold (a reconfig's log-level): lines logged from then on
 * follow it. Any thread.
 */
void log_set_level(enum log_level level);

/* Whether stderr is the stream systemd's JOURNAL_STREAM names. */
bool log_stderr_is_journal(void);

/*
 * Log one message at `level` when it passes the threshold. Any thread: each
 * line is written with one write(2), so lines from threads do not mix.
 * Never waits for a stalled reader of stderr (a pipe or socket): a line
 * that does not fit is dropped, and the next one that does is preceded by
 * "N log lines dropped (stderr was full)". syslog likewise: one datagram
 * a line to /dev/log, never waiting, lines that do not fit dropped and
 * counted ("N log lines dropped (syslog was full)").
 * Never call per query: a bad query becomes an RCODE or a drop, not a line
 * in the log (doc/design.md, "Query path").
 */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A bound on log lines of one kind that peers may cause at will (refusals,
 * NOTIFYs): at most `per_second` in a second; the rest are counted, and
 * the next line that passes says how many ("(and N more not logged)").
 * Caller memory, zeroed to start; one thread at a time (a worker's own).
 */
typedef struct log_limit {
	long second;
	unsigned count, suppressed;
} log_limit_t;

/* Log as log_msg does, when l lets one more line of its kind pass this second. */
void log_limited(log_limit_t *l, unsigned per_second, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define log_error(...)   log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_notice(...)  log_msg(LOG_LEVEL_NOTICE, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)   log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
