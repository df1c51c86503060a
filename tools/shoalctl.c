/* shoalctl: send one command to shoald's control socket and print the reply. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/control.h"

/* the control path the installed configuration gives shoald */
#define SHOALCTL_DEFAULT_SOCKET CONF_CONTROL_DEFAULT

static void usage(FILE *out)
{
	fprintf(out, "Usage: shoalctl [-s PATH] COMMAND [ARG]\n"
		     "Send COMMAND to shoald's control socket and print the reply.\n\n"
		     "  -s, --socket PATH   control socket (default " SHOALCTL_DEFAULT_SOCKET ")\n"
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = SHOALCTL_DEFAULT_SOCKET;
	int opt;
	/* '+': options end at the command, whose argument may start with '-' */
	while ((opt = getopt_long(argc, argv, "+s:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
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
	int i = optind;
	if (i >= argc || argc - i > 2) {
		usage(stderr);
		return 2;
	}
	char line[1100];
	int n = snprintf(line, sizeof(line), "%s%s%s\n", argv[i], argc - i == 2 ? " " : "",
			 argc - i == 2 ? argv[i + 1] : "");
	if (n < 0 || (size_t)n >= sizeof(line) || strchr(line, '\n') != line + n - 1) {
		fprintf(stderr, "shoalctl: command too long or not one line\n");
		return 2;
	}
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "shoalctl: %s: path too long\n", path);
		return 2;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "shoalctl: %s: %s\n", path, strerror(errno));
		return 2;
	}
	if (write_all(fd, line, (size_t)n) < 0) {
		fprintf(stderr, "shoalctl: %s: %s\n", path, strerror(errno));
		close(fd);
		return 2;
	}
	/* the reply: "ok" or "error", a newline, the body; the server then closes */
	size_t cap = 65536, len = 0;
	char *reply = malloc(cap + 1);
	if (!reply) {
		close(fd);
		return 2;
	}
	for (;;) {
		if (len == cap) {
			char *p = realloc(reply, cap * 2 + 1);
			if (!p)
				break;
			reply = p;
			cap *= 2;
		}
		ssize_t r = read(fd, reply + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	reply[len] = '\0';
	int status = 2;
	const char *body = strchr(reply, '\n');
	body = body ? body + 1 : reply + len;
	if (!strncmp(reply, "ok\n", 3)) {
		fputs(body, stdout);
		status = 0;
	} else if (!strncmp(reply, "error\n", 6)) {
		fprintf(stderr, "shoalctl: %s", body);
		status = 1;
	} else {
		fprintf(stderr, "shoalctl: no valid reply from %s\n", path);
	}
	free(reply);
	return status;
}
