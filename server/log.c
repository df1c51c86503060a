/* shoald's log: formats a line and writes it to stderr (and syslog when asked). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "server/log.h"

const char *const log_level_names[] = { "error", "warning", "notice", "info", "debug", NULL };

/* Any thread reads it for every line; a reconfig may change it (log_set_level): atomic. */
static int log_threshold = LOG_LEVEL_INFO;
/* Written once at start-up before threads exist, read-only afterwards. */
static bool log_syslog;
static bool log_journal;

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
static unsigned long log_dropped; /* lines not written since the last note; atomic */

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

void log_init(enum log_level level, bool use_syslog)
{
	__atomic_store_n(&log_threshold, (int)level, __ATOMIC_RELAXED);
	log_syslog = use_syslog;
	log_journal = log_stderr_is_journal();
	if (use_syslog)
		openlog("shoald", LOG_PID, LOG_DAEMON);
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

void log_set_level(enum log_level level)
{
	/* relaxed: a line on its way when the level changes may go either way */
	__atomic_store_n(&log_threshold, (int)level, __ATOMIC_RELAXED);
}

static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

/* The head of a line at `level` into line[0..cap): a timestamp or the journal's priority. */
static int log_head(enum log_level level, char *line, size_t cap)
{
	int head;
	if (log_journal) {
		/* "<N>" gives the journal the line's priority (sd-daemon(3)) */
		head = snprintf(line, cap, "<%d>%s: ", syslog_prio[level], log_level_names[level]);
	} else {
		struct timespec ts;
		struct tm tm;
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		head = (int)strftime(line, cap, "%Y-%m-%dT%H:%M:%S", &tm);
		head += snprintf(line + head, cap - (size_t)head,
				 ".%03ldZ %s: ", ts.tv_nsec / 1000000L, log_level_names[level]);
	}
	return head;
}

/*
 * One whole line to stderr, or none: lines of at most PIPE_BUF octets go
 * into a pipe whole or not at all (pipe(7)), so lines of different
 * threads never interleave. False when it was not written.
 */
static bool log_put(const char *line, size_t len)
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

/* Write a line, after saying how many were dropped before it when some were. */
static void log_write(const char *line, size_t len)
{
	unsigned long dropped = __atomic_exchange_n(&log_dropped, 0, __ATOMIC_RELAXED);
	if (dropped) {
		char note[128];
		int n = log_head(LOG_LEVEL_WARNING, note, sizeof(note));
		n += snprintf(note + n, sizeof(note) - (size_t)n,
			      "%lu log lines dropped (stderr was full)\n", dropped);
		if (!log_put(note, (size_t)n)) {
			__atomic_add_fetch(&log_dropped, dropped + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	if (!log_put(line, len))
		__atomic_add_fetch(&log_dropped, 1, __ATOMIC_RELAXED);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if ((int)level > __atomic_load_n(&log_threshold, __ATOMIC_RELAXED))
		return;
	char line[2048];
	int head = log_head(level, line, sizeof(line));
	va_list ap;
	va_start(ap, fmt);
	int body = vsnprintf(line + head, sizeof(line) - (size_t)head - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)head + (body < 0 ? 0 : (size_t)body);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	log_write(line, len);
	if (log_syslog) {
		line[len - 1] = '\0';
		syslog(syslog_prio[level], "%s", line + head);
	}
}
