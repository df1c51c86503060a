/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoald's log: formats a line and writes it to stderr (and syslog when asked). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "server/common/log.h"
#include "server/common/timestamp.h"

const char *const log_level_names[] = { "error", "warning", "notice", "info", "debug", NULL };

/* Any thread reads it for every line; a reconfig may change it (log_set_level): atomic. */
static int log_threshold = LOG_LEVEL_INFO;
/* Written once at start-up before threads exist, read-only afterwards. */
static bool log_syslog;
static bool log_journal;
/*
 * The pid every line carries, as NSD and syslog write it ("shoald[PID]:"):
 * during a restart two processes write one stream (the taker inherits
 * the giver's stderr), and a log file may be shared by a restart's two
 * processes as well. A line to the journal carries it only in a process
 * started by takeover (log_pid_journal): journald stamps each line with
 * the pid of the process that opened the stream, the first one.
 */
static long log_pid;
static bool log_pid_journal;

/*
 * Where lines go, and how without ever waiting for the reader: a pipe or
 * FIFO through a file description of our own opened O_NONBLOCK (reopened
 * through /proc/self/fd/2, so the flag does not change the description the
 * shell or the service manager shares; dup would), a socket (the journal's
 * stream) with MSG_DONTWAIT per send. A line that does not fit now is
 * dropped and counted: a stalled reader must not hold a worker, the
 * reload thread or SIGTERM. Files and terminals are written as they are.
 */
enum log_sink { LOG_SINK_WRITE, LOG_SINK_NONBLOCK, LOG_SINK_SOCKET };
static enum log_sink log_sink = LOG_SINK_WRITE;
static int log_fd = STDERR_FILENO;

/*
 * syslog without syslog(3): glibc's sends to /dev/log block while the
 * reader (journald, rsyslogd) is stalled, and so would hold the thread
 * that logs. Our own datagram socket, connected to the log socket and
 * written with MSG_DONTWAIT, drops a line the reader's queue has no room
 * for instead, as the stderr sinks do.
 */
static int syslog_fd = -1;
static struct sockaddr_un syslog_addr;

bool log_stderr_is_journal(void)
{
	/*
	 * systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream it connects
	 * to stderr (systemd.exec(5)); a match means the journal stamps each line
	 * itself. A shell that redirects stderr keeps the variable but changes
	 * the inode, so a mismatch keeps the timestamps.
	 */
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* (Re)connect the syslog socket; a failure leaves it unconnected, and a
 * later line tries again. Returns 0 or -errno. */
static int syslog_connect(void)
{
	int rc;
	do
		rc = connect(syslog_fd, (const struct sockaddr *)&syslog_addr, sizeof(syslog_addr));
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}

/* Open the syslog socket and connect it. Returns 0 or -errno (the socket is then
 * connected later, by a line, if it can be). */
static int syslog_open(void)
{
	/*
	 * SHOAL_SYSLOG_SOCKET is for the tests only (not documented for
	 * users): a socket of theirs in place of /dev/log, which they can
	 * read, or stall, without a system logger.
	 */
	const char *path = getenv("SHOAL_SYSLOG_SOCKET");
	if (!path || !*path)
		path = "/dev/log";
	if (strlen(path) >= sizeof(syslog_addr.sun_path))
		return -ENAMETOOLONG;
	syslog_addr.sun_family = AF_UNIX;
	memcpy(syslog_addr.sun_path, path, strlen(path) + 1);
	syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (syslog_fd < 0)
		return -errno;
	return syslog_connect();
}

void log_set_level(enum log_level level)
{
	/* relaxed: a line on its way when the level changes may go either way */
	__atomic_store_n(&log_threshold, (int)level, __ATOMIC_RELAXED);
}

/* How stderr is written: as it is, or without waiting (a pipe, a socket). */
static void stderr_open(void)
{
	struct stat st;
	if (fstat(STDERR_FILENO, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		log_sink = LOG_SINK_SOCKET;
	} else if (S_ISFIFO(st.st_mode)) {
		int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			log_fd = fd;
			log_sink = LOG_SINK_NONBLOCK;
		}
	}
}

void log_init(enum log_level level, bool use_syslog, bool taker)
{
	log_set_level(level);
	log_syslog = use_syslog;
	log_journal = log_stderr_is_journal();
	log_pid = (long)getpid();
	log_pid_journal = taker;
	stderr_open();
	int e = use_syslog ? syslog_open() : 0;
	/* a logger may start later (a line connects again): said once, not per line */
	if (e < 0)
		log_warning("syslog: cannot reach %s (%s): lines go to stderr alone until a "
			    "system logger listens there",
			    syslog_addr.sun_path[0] ? syslog_addr.sun_path : "/dev/log", strerror(-e));
}

static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

/*
 * The head of a line at `level` into line[0..cap): a timestamp and the pid,
 * or the journal's priority (and the pid, in a taker).
 */
static int log_head(enum log_level level, char *line, size_t cap)
{
	int head;
	if (log_journal) {
		/* "<N>" gives the journal the line's priority (sd-daemon(3)) */
		head = snprintf(line, cap, "<%d>", syslog_prio[level]);
		if (log_pid_journal)
			head += snprintf(line + head, cap - (size_t)head, "shoald[%ld]: ", log_pid);
	} else {
		head = (int)timestamp_now(line, cap);
		head += snprintf(line + head, cap - (size_t)head, " shoald[%ld]: ", log_pid);
	}
	head += snprintf(line + head, cap - (size_t)head, "%s: ", log_level_names[level]);
	return head;
}

/*
 * The head of a syslog datagram at `level` (RFC 3164 section 4.1):
 * "<PRI>Mmm dd hh:mm:ss shoald[PID]: ", PRI the daemon facility times 8
 * plus the severity, the timestamp in local time as the local logger
 * expects (it adds the host name itself).
 */
static int syslog_head(enum log_level level, char *line, size_t cap)
{
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	return snprintf(line, cap,
			"<%d>%s %2d %02d:%02d:%02d shoald[%ld]: ", LOG_DAEMON | syslog_prio[level],
			months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, log_pid);
}

/*
 * One whole line to stderr, or none: lines of at most PIPE_BUF octets go
 * into a pipe whole or not at all (pipe(7)), so lines of different
 * threads never interleave. False when it was not written.
 */
static bool stderr_put(const char *line, size_t len)
{
	ssize_t w;
	do {
		if (log_sink == LOG_SINK_SOCKET)
			w = send(log_fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			w = write(log_fd, line, len);
	} while (w < 0 && errno == EINTR);
	return w >= 0;
}

/*
 * One datagram to the syslog socket, or none when its reader's queue is
 * full. A logger that restarted (ECONNREFUSED: the socket we were
 * connected to is gone) or was not there at start (ENOTCONN) is connected
 * to again, and the line sent once more.
 */
static bool syslog_put(const char *line, size_t len)
{
	ssize_t w;
	bool again = true;
	for (;;) {
		w = send(syslog_fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w >= 0)
			return true;
		if (errno == EINTR)
			continue;
		if (!again || (errno != ECONNREFUSED && errno != ENOTCONN))
			return false;
		again = false;
		syslog_connect();
	}
}

/*
 * A destination of lines: what it is called in the note of lines dropped,
 * how a line starts, how it is sent, and how it ends (a newline on stderr;
 * a datagram is a line by itself).
 */
struct log_dest {
	const char *name;
	int (*head)(enum log_level level, char *line, size_t cap);
	bool (*put)(const char *line, size_t len);
	const char *end;
	unsigned long dropped; /* lines not sent since the last note; atomic */
};
static struct log_dest log_stderr_dest = { "stderr", log_head, stderr_put, "\n", 0 };
static struct log_dest log_syslog_dest = { "syslog", syslog_head, syslog_put, "", 0 };

/* A line at `level` with `body` (no newline) to `dest`, after saying how
 * many were dropped before it when some were; lines that do not go are
 * counted there. */
static void log_send(struct log_dest *dest, enum log_level level, const char *body)
{
	char line[2304];
	int n;

	unsigned long dropped = __atomic_exchange_n(&dest->dropped, 0, __ATOMIC_RELAXED);
	if (dropped) {
		n = dest->head(LOG_LEVEL_WARNING, line, sizeof(line));
		n += snprintf(line + n, sizeof(line) - (size_t)n,
			      "%lu log lines dropped (%s was full)%s", dropped, dest->name,
			      dest->end);
		if (!dest->put(line, (size_t)n)) {
			__atomic_add_fetch(&dest->dropped, dropped + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	n = dest->head(level, line, sizeof(line));
	n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s", body, dest->end);
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	if (!dest->put(line, (size_t)n))
		__atomic_add_fetch(&dest->dropped, 1, __ATOMIC_RELAXED);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if ((int)level > __atomic_load_n(&log_threshold, __ATOMIC_RELAXED))
		return;
	char body[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (n < 0)
		body[0] = '\0';
	log_send(&log_stderr_dest, level, body);
	if (log_syslog && syslog_fd >= 0)
		log_send(&log_syslog_dest, level, body);
}
