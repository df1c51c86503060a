/* shoald's log: formats a line and writes it to stderr (and syslog when asked). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "server/log.h"

const char *const log_level_names[] = { "error", "warning", "notice", "info", "debug", NULL };

/* Written once at start-up before threads exist, read-only afterwards. */
static enum log_level log_threshold = LOG_LEVEL_INFO;
static bool log_syslog;
static bool log_journal;

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
	log_threshold = level;
	log_syslog = use_syslog;
	log_journal = log_stderr_is_journal();
	if (use_syslog)
		openlog("shoald", LOG_PID, LOG_DAEMON);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > log_threshold)
		return;
	static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };
	char line[2048];
	int head;
	if (log_journal) {
		/* "<N>" gives the journal the line's priority (sd-daemon(3)) */
		head = snprintf(line, sizeof(line), "<%d>%s: ", syslog_prio[level],
				log_level_names[level]);
	} else {
		struct timespec ts;
		struct tm tm;
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		head = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
		head += snprintf(line + head, sizeof(line) - (size_t)head,
				 ".%03ldZ %s: ", ts.tv_nsec / 1000000L, log_level_names[level]);
	}
	va_list ap;
	va_start(ap, fmt);
	int body = vsnprintf(line + head, sizeof(line) - (size_t)head - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)head + (body < 0 ? 0 : (size_t)body);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	/* one write per line: lines of different threads never interleave */
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
	if (log_syslog) {
		line[len - 1] = '\0';
		syslog(syslog_prio[level], "%s", line + head);
	}
}
