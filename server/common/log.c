/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoald's log: formats a line and writes it to stderr or log-file (and syslog when asked). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/thread.h"
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
			    syslog_addr.sun_path[0] ? syslog_addr.sun_path : "/dev/log",
			    strerror(-e));
}

static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

/* The head of a line at `level` into line[0..cap): a timestamp, the pid, the level. */
static int file_head(enum log_level level, char *line, size_t cap)
{
	int head = (int)timestamp_now(line, cap);
	/* log_init not called (a unit test): the pid still */
	long pid = log_pid ? log_pid : (long)getpid();
	return head + snprintf(line + head, cap - (size_t)head, " shoald[%ld]: %s: ", pid,
			       log_level_names[level]);
}

/* The head of a line to stderr: file_head's, or the journal's priority (and the pid, in a
 * taker). */
static int log_head(enum log_level level, char *line, size_t cap)
{
	if (!log_journal)
		return file_head(level, line, cap);
	/* "<N>" gives the journal the line's priority (sd-daemon(3)) */
	int head = snprintf(line, cap, "<%d>", syslog_prio[level]);
	if (log_pid_journal)
		head += snprintf(line + head, cap - (size_t)head, "shoald[%ld]: ", log_pid);
	return head + snprintf(line + head, cap - (size_t)head, "%s: ", log_level_names[level]);
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
 * log-file: lines appended to a file, which logrotate moves away. A file is
 * always "ready" (poll says so) and a write to it blocks while the disk, or
 * an NFS server, does not answer: so no thread that logs writes it. A line
 * is copied into a ring under a lock held for the copy alone, and the log
 * thread (shoald-log) writes what the ring holds, whole lines, one writev
 * at a time, with O_APPEND (lines of two processes, a restart's, never
 * mix). A line the ring has no room for is dropped and counted, as a full
 * pipe's: a stalled disk holds the log thread alone. A reopen opens the
 * new file on the main thread and hands it over at the ring's position of
 * that moment: the lines queued before go to the old file, those after to
 * the new one, none lost and none twice.
 */
#define LOG_FILE_RING       (256 * 1024)
#define LOG_FILE_CLOSE_WAIT 2 /* seconds the exit waits for the queued lines */

struct log_file {
	pthread_mutex_t lock; /* the ring's positions, next_fd, swap_at, stop */
	pthread_cond_t wake;  /* the thread: lines queued, a reopen, or stop */
	char ring[LOG_FILE_RING];
	uint64_t head, tail; /* octets ever queued, ever written: at ring[pos % size] */
	int fd;              /* the file written; the thread's alone once it runs */
	int next_fd;         /* a reopened file, taken when tail reaches swap_at, or -1 */
	uint64_t swap_at;
	bool stop;
	bool running; /* main thread: the thread was started and not joined */
	char *path;
	pthread_t thread;
};
static struct log_file log_file = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .fd = -1, .next_fd = -1
};
/* lines go to log_file instead of stderr: set once it runs, cleared once joined; atomic */
static bool log_file_on;

/* Queue one line for the log thread, or none when the ring has no room for it. Any thread. */
static bool file_put(const char *line, size_t len)
{
	struct log_file *f = &log_file;
	pthread_mutex_lock(&f->lock);
	bool room = f->head - f->tail + len <= LOG_FILE_RING;
	if (room) {
		size_t at = (size_t)(f->head % LOG_FILE_RING);
		size_t first = len < LOG_FILE_RING - at ? len : LOG_FILE_RING - at;
		memcpy(f->ring + at, line, first);
		memcpy(f->ring, line + first, len - first);
		f->head += len;
		pthread_cond_signal(&f->wake);
	}
	pthread_mutex_unlock(&f->lock);
	return room;
}

static void file_dropped(unsigned long lines);

/*
 * Write ring[from, to) to fd; what does not go (a full disk, an I/O error)
 * is counted as lines dropped. The log thread, without the lock: a writer
 * of lines touches the ring past head only, and tail moves after this.
 */
static void file_write(int fd, uint64_t from, uint64_t to)
{
	const struct log_file *f = &log_file;
	while (from < to) {
		size_t at = (size_t)(from % LOG_FILE_RING);
		size_t n = (size_t)(to - from);
		size_t first = n < LOG_FILE_RING - at ? n : LOG_FILE_RING - at;
		struct iovec v[2] = { { (void *)(f->ring + at), first },
				      { (void *)f->ring, n - first } };
		ssize_t w = writev(fd, v, n > first ? 2 : 1);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		from += (uint64_t)w;
	}
	unsigned long lost = 0;
	for (; from < to; from++)
		lost += f->ring[from % LOG_FILE_RING] == '\n';
	if (lost)
		file_dropped(lost);
}

/* The log thread: writes what is queued, takes a reopened file at its place, ends on stop. */
static void *file_main(void *arg)
{
	struct log_file *f = arg;
	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (f->tail == f->head && f->next_fd < 0 && !f->stop)
			pthread_cond_wait(&f->wake, &f->lock);
		if (f->next_fd >= 0 && f->tail == f->swap_at) {
			int old = f->fd;
			f->fd = f->next_fd;
			f->next_fd = -1;
			pthread_mutex_unlock(&f->lock);
			close(old); /* may wait for the disk: not under the lock */
			pthread_mutex_lock(&f->lock);
			continue;
		}
		if (f->tail == f->head)
			break; /* stop, and everything written */
		uint64_t from = f->tail, to = f->next_fd >= 0 ? f->swap_at : f->head;
		pthread_mutex_unlock(&f->lock);
		file_write(f->fd, from, to);
		pthread_mutex_lock(&f->lock);
		f->tail = to;
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/*
 * Open path to append to, made with the mode the umask leaves of 0666. Not
 * waiting for a FIFO's reader to open (O_NONBLOCK for the open alone: the
 * log thread's writes may wait). Returns the descriptor or -errno.
 */
static int file_open_fd(const char *path)
{
	int fd =
		open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0666);
	if (fd < 0)
		return -errno;
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

int log_file_open(const char *path, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	struct log_file *f = &log_file;
	int e = file_open_fd(path);
	if (e >= 0) {
		f->fd = e;
		e = (f->path = strdup(path)) ? 0 : -ENOMEM;
	}
	if (e == 0)
		e = thread_start(&f->thread, NULL, file_main, f, "shoald-log");
	if (e < 0) {
		snprintf(err, errlen, "log-file %s: %s", path, shoal_strerror(e));
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		free(f->path);
		f->path = NULL;
		return e;
	}
	f->running = true;
	__atomic_store_n(&log_file_on, true, __ATOMIC_RELEASE);
	return 0;
}

int log_file_reopen(char *text, size_t len)
{
	MAIN_THREAD_ONLY();
	struct log_file *f = &log_file;
	if (!f->running) {
		snprintf(text, len, "no log-file: nothing to reopen");
		return 1;
	}
	int fd = file_open_fd(f->path);
	if (fd < 0) {
		snprintf(text, len, "log-file %s: %s; lines go on to the file open before", f->path,
			 shoal_strerror(fd));
		return fd;
	}
	pthread_mutex_lock(&f->lock);
	int superseded = f->next_fd; /* a reopen not yet taken: this one replaces it */
	f->next_fd = fd;
	f->swap_at = f->head;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	if (superseded >= 0)
		close(superseded);
	/* queued after swap_at: the new file's first line */
	log_info("log-file %s reopened", f->path);
	snprintf(text, len, "log-file %s reopened", f->path);
	return 0;
}

void log_file_close(void)
{
	MAIN_THREAD_ONLY();
	struct log_file *f = &log_file;
	if (!f->running)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	/* a file that takes no lines must not hold the exit: the process ends without it */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += LOG_FILE_CLOSE_WAIT;
	if (pthread_timedjoin_np(f->thread, NULL, &until) != 0)
		return;
	f->running = false;
	__atomic_store_n(&log_file_on, false, __ATOMIC_RELEASE);
	close(f->fd);
	if (f->next_fd >= 0)
		close(f->next_fd);
	f->fd = f->next_fd = -1;
	free(f->path);
	f->path = NULL;
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
static struct log_dest log_file_dest = { "log-file", file_head, file_put, "\n", 0 };

/* Lines the log thread could not write: counted as a full ring's are. */
static void file_dropped(unsigned long lines)
{
	__atomic_add_fetch(&log_file_dest.dropped, lines, __ATOMIC_RELAXED);
}

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
	bool to_file = __atomic_load_n(&log_file_on, __ATOMIC_ACQUIRE);
	log_send(to_file ? &log_file_dest : &log_stderr_dest, level, body);
	if (log_syslog && syslog_fd >= 0)
		log_send(&log_syslog_dest, level, body);
}

void log_limited(log_limit_t *l, unsigned per_second, enum log_level level, const char *fmt, ...)
{
	if ((int)level > __atomic_load_n(&log_threshold, __ATOMIC_RELAXED))
		return;
	long now = (long)time(NULL);
	if (now != l->second) {
		l->second = now;
		l->count = 0;
	}
	if (l->count++ >= per_second) {
		l->suppressed++;
		return;
	}
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (l->suppressed)
		log_msg(level, "%s (and %u more not logged)", text, l->suppressed);
	else
		log_msg(level, "%s", text);
	l->suppressed = 0;
}
