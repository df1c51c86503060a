/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoalctl: send one command to shoald's control socket and print the reply; top, a live view. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "server/common/stats.h"
#include "server/ctl/control.h"

/* the control path the installed configuration gives shoald */
#define SHOALCTL_DEFAULT_SOCKET CONF_CONTROL_DEFAULT

/* top: refreshes when no count is given, the most allowed, and threads shown */
#define TOP_COUNT_DEFAULT 60
#define TOP_COUNT_MAX     86400
#define TOP_THREADS_MAX   1024
#define TOP_INTERVAL_MS   1000

static void usage(FILE *out)
{
	fprintf(out, "Usage: shoalctl [-s PATH] [--json] COMMAND [ARG...]\n"
		     "Send COMMAND to shoald's control socket and print the reply.\n\n"
		     "  -s, --socket PATH   control socket (default " SHOALCTL_DEFAULT_SOCKET ")\n"
		     "  -j, --json          stats, zone-status: as JSON\n"
		     "  -h, --help          print this help and exit\n"
		     "  -V, --version       print the version and exit\n\n"
		     "Commands:\n");
	char head[64];
	/* the server's own list of commands */
#define COMMAND_HELP(id, name, rule, arg, help)             \
	control_usage(head, sizeof(head), name, rule, arg); \
	fprintf(out, "  %-19s %s\n", head, help);
	CONTROL_COMMANDS(COMMAND_HELP)
#undef COMMAND_HELP
	fprintf(out, "  %-19s %s\n", "top [COUNT]",
		"answers/s per thread, each second, COUNT times (60)");
	fprintf(out, "\nExit status: 0 when the server answered ok, 1 when it reported an error,\n"
		     "2 on a usage error or when the server cannot be reached. See shoalctl(8).\n");
}

/* Write all of buf, retrying short writes. Returns 0 or -1. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Why the control socket at path could not be reached, errno e, and what
 * that may mean, on stderr: the path tried (the default, or -s), as the
 * bare errno text does not say that no server may be there.
 */
static void unreachable(const char *path, int e)
{
	const char *hint = "";
	if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR)
		hint = "; shoald may not be running, or its control: names another path (-s PATH)";
	else if (e == EACCES || e == EPERM)
		hint = "; the socket is shoald's user's (mode 0600): run shoalctl as that user or "
		       "root";
	fprintf(stderr, "shoalctl: cannot reach shoald at %s: %s%s\n", path, strerror(e), hint);
}

/*
 * Send `line` (one line, with its newline) to the server at path and read
 * the whole reply into *reply (malloc'd, NUL-terminated; the caller frees
 * it). Returns 0, or 2 with a message on stderr when the server cannot be
 * reached.
 */
static int request(const char *path, const char *line, char **reply)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "shoalctl: %s: path too long\n", path);
		return 2;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		unreachable(path, errno);
		if (fd >= 0)
			close(fd);
		return 2;
	}
	if (write_all(fd, line, strlen(line)) < 0) {
		fprintf(stderr, "shoalctl: %s: %s\n", path, strerror(errno));
		close(fd);
		return 2;
	}
	/* the reply: "ok" or "error", a newline, the body; the server then closes */
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return 2;
	}
	for (;;) {
		if (len == cap) {
			char *p = realloc(buf, cap * 2 + 1);
			if (!p)
				break;
			buf = p;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*reply = buf;
	return 0;
}

/* Print a reply as shoalctl does: the body of "ok" on stdout, of "error" on stderr. */
static int print_reply(const char *path, const char *reply)
{
	const char *body = strchr(reply, '\n');
	body = body ? body + 1 : reply + strlen(reply);
	if (!strncmp(reply, "ok\n", 3)) {
		fputs(body, stdout);
		return 0;
	}
	if (!strncmp(reply, "error\n", 6)) {
		fprintf(stderr, "shoalctl: %s", body);
		return 1;
	}
	fprintf(stderr, "shoalctl: no valid reply from %s\n", path);
	return 2;
}

/* ---- top ---- */

/* Answers sent by each thread so far, from the server's Prometheus output. */
typedef struct top_sample {
	uint64_t udp[TOP_THREADS_MAX];
	uint64_t tcp[TOP_THREADS_MAX];
	size_t threads;
	struct timespec at;
} top_sample_t;

static volatile sig_atomic_t top_stop;

static void on_top_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

/* If line is a sample of metric with label, add its value to counts[its thread]. */
static void add_sample(const char *line, const char *metric, const char *label, uint64_t *counts,
		       size_t *threads)
{
	size_t n = strlen(metric);
	if (strncmp(line, metric, n) || line[n] != '{' || !strstr(line, label))
		return;
	const char *t = strstr(line, "thread=\"");
	const char *v = strstr(line, "} ");
	if (!t || !v)
		return;
	unsigned long thread = strtoul(t + 8, NULL, 10);
	if (thread >= TOP_THREADS_MAX)
		return;
	counts[thread] += strtoull(v + 2, NULL, 10);
	if (thread + 1 > *threads)
		*threads = thread + 1;
}

static int top_take(const char *path, top_sample_t *s)
{
	char *reply = NULL;
	if (request(path, "stats prometheus\n", &reply))
		return 2;
	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_MONOTONIC, &s->at);
	if (strncmp(reply, "ok\n", 3)) {
		int rc = print_reply(path, reply);
		free(reply);
		return rc;
	}
	for (char *line = reply + 3, *end; *line; line = end + 1) {
		end = line + strcspn(line, "\n");
		bool last = *end == '\0';
		*end = '\0';
		add_sample(line, STATS_METRIC_PREFIX "answers_total", "protocol=\"udp\"", s->udp,
			   &s->threads);
		add_sample(line, STATS_METRIC_PREFIX "answers_total", "protocol=\"tcp\"", s->tcp,
			   &s->threads);
		if (last)
			break;
	}
	free(reply);
	return 0;
}

static void top_print(const top_sample_t *a, const top_sample_t *b, bool tty, int round, int count)
{
	double secs = (double)(b->at.tv_sec - a->at.tv_sec) + (b->at.tv_nsec - a->at.tv_nsec) / 1e9;
	if (secs <= 0)
		secs = 1e-9;
	if (tty)
		printf("\033[H\033[J");
	else if (round > 1)
		printf("\n");
	printf("shoald answers per second, %zu thread(s), %d of %d%s\n", b->threads, round, count,
	       tty ? " (a key ends it)" : "");
	printf("%6s %12s %12s %12s\n", "thread", "udp/s", "tcp/s", "answers/s");
	double tu = 0, tt = 0;
	for (size_t i = 0; i < b->threads; i++) {
		double u = (double)(b->udp[i] - a->udp[i]) / secs;
		double t = (double)(b->tcp[i] - a->tcp[i]) / secs;
		tu += u;
		tt += t;
		printf("%6zu %12.0f %12.0f %12.0f\n", i, u, t, u + t);
	}
	printf("%6s %12.0f %12.0f %12.0f\n", "total", tu, tt, tu + tt);
	fflush(stdout);
}

/*
 * Refresh `count` times, one second apart, then exit; a key (when stdin is
 * a terminal), Ctrl-C or SIGTERM ends it sooner. Returns the exit status.
 */
static int top(const char *path, int count)
{
	struct sigaction sa = { .sa_handler = on_top_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	bool tty_in = isatty(STDIN_FILENO), tty_out = isatty(STDOUT_FILENO);
	struct termios saved, raw;
	if (tty_in && tcgetattr(STDIN_FILENO, &saved) == 0) {
		/* a key ends top at once, without Enter and without echo */
		raw = saved;
		raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	} else {
		tty_in = false;
	}
	static top_sample_t a, b; /* 16 KiB each: off the stack */
	int rc = top_take(path, &a);
	for (int round = 1; rc == 0 && round <= count && !top_stop; round++) {
		struct pollfd p = { tty_in ? STDIN_FILENO : -1, POLLIN, 0 };
		int n = poll(&p, 1, TOP_INTERVAL_MS);
		if (n > 0 || top_stop)
			break; /* a key, or a signal */
		if ((rc = top_take(path, &b)) != 0)
			break;
		top_print(&a, &b, tty_out, round, count);
		a = b;
	}
	if (tty_in)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return rc;
}

/* words[0..n) and, with json, "--json", joined by blanks into buf. 0, or -1 said on stderr. */
static int join_words(char *buf, size_t cap, char **words, size_t n, bool json)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i <= n; i++) {
		const char *w = i < n ? words[i] : json ? "--json" : NULL;
		int k = w ? snprintf(buf + len, cap - len, "%s%s", len ? " " : "", w) : 0;
		if (k < 0 || (size_t)k >= cap - len) {
			fprintf(stderr, "shoalctl: command too long or not one line\n");
			return -1;
		}
		len += (size_t)k;
	}
	return 0;
}

/*
 * zone-add's argument "NAME FILE" into buf: the server does not share our
 * folder, so a relative FILE is made whole here. With a catalog (NULL:
 * none), "--catalog CATALOG NAME FILE": the flag first, as FILE runs to
 * the end of the line. 0, or -1 said on stderr.
 */
static int zone_add_arg(char *buf, size_t cap, const char *name, const char *file,
			const char *catalog)
{
	char cwd[PATH_MAX] = "";
	if (file[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "shoalctl: zone-add: cannot read the current folder\n");
		return -1;
	}
	int w = snprintf(buf, cap, "%s%s%s%s %s%s%s", catalog ? "--catalog " : "",
			 catalog ? catalog : "", catalog ? " " : "", name, cwd, cwd[0] ? "/" : "",
			 file);
	if (w < 0 || (size_t)w >= cap) {
		fprintf(stderr, "shoalctl: command too long or not one line\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "catalog", required_argument, NULL, 'c' }, /* zone-add's */
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = SHOALCTL_DEFAULT_SOCKET;
	bool json = false;
	const char *catalog = NULL; /* zone-add NAME FILE --catalog CATALOG */
	int c;
	while ((c = getopt_long(argc, argv, "s:jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'c':
			catalog = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("shoalctl %s\n", PACKAGE_VERSION);
			return 0;
		default:
			fprintf(stderr, "shoalctl: see --help\n");
			return 2;
		}
	}
	int args = argc - optind;
	if (args < 1) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[optind];
	bool zone_add = !strcmp(cmd, "zone-add");
	bool zone_status = !strcmp(cmd, "zone-status"); /* ZONE... or FROM COUNT */
	if ((!zone_status && args > (zone_add ? 3 : 2)) || (zone_add && args != 3) ||
	    (catalog && !zone_add)) {
		usage(stderr);
		return 2;
	}
	const char *arg = args >= 2 ? argv[optind + 1] : NULL;
	char joined[CONTROL_LINE_MAX];
	if (zone_status && (args > 2 || json)) {
		if (join_words(joined, sizeof(joined), argv + optind + 1, (size_t)args - 1, json) <
		    0)
			return 2;
		arg = joined;
	} else if (zone_add) {
		if (zone_add_arg(joined, sizeof(joined), arg, argv[optind + 2], catalog) < 0)
			return 2;
		arg = joined;
	} else if (json && (strcmp(cmd, "stats") || arg)) {
		fprintf(stderr, "shoalctl: --json goes with stats and zone-status alone\n");
		return 2;
	} else if (json) {
		arg = "json";
	}
	if (!strcmp(cmd, "top")) {
		char *end = NULL;
		long count = arg ? strtol(arg, &end, 10) : TOP_COUNT_DEFAULT;
		if (arg && (*end || count < 1 || count > TOP_COUNT_MAX)) {
			fprintf(stderr, "shoalctl: top: COUNT is a number from 1 to %d\n",
				TOP_COUNT_MAX);
			return 2;
		}
		return top(path, (int)count);
	}
	char line[CONTROL_LINE_MAX];
	int n = snprintf(line, sizeof(line), "%s%s%s\n", cmd, arg ? " " : "", arg ? arg : "");
	if (n < 0 || (size_t)n >= sizeof(line) || strchr(line, '\n') != line + n - 1) {
		fprintf(stderr, "shoalctl: command too long or not one line\n");
		return 2;
	}
	char *reply = NULL;
	int status = request(path, line, &reply);
	if (status == 0)
		status = print_reply(path, reply);
	free(reply);
	return status;
}
