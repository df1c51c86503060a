/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood: the load generator's command line, threads and progress line. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/addr.h"
#include "server/common/thread.h"
#include "tools/flood/flood.h"

#define DEFAULT_DURATION 10.0 /* seconds, when neither -l nor -n is given */
#define MAX_THREADS      256
#define MAX_SOCKETS      65536
#define MAX_PIPELINE     256

atomic_bool flood_stop;
static atomic_uint running; /* workers that have not returned yet */

uint64_t flood_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec flood_timespec(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };
	return ts;
}

int flood_thread_ready(flood_thread_t *t)
{
	pthread_barrier_wait(t->ready); /* every worker has opened its sockets */
	pthread_barrier_wait(t->ready); /* main has checked them and set the start */
	return atomic_load(&flood_stop) ? -1 : 0;
}

bool flood_keep_sending(const flood_thread_t *t, uint64_t sent, uint64_t now)
{
	return !atomic_load_explicit(&flood_stop, memory_order_relaxed) && now < t->send_end_ns &&
	       sent < t->count;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: shoal-flood [options]\n"
		"Send DNS queries to a server on loopback and report what came back.\n"
		"\n"
		"Target and queries:\n"
		"  -s ADDR            server address, IPv4 or IPv6 (default 127.0.0.1)\n"
		"  -p PORT            server port (default 53)\n"
		"  -d FILE            queries, one \"name type\" per line (dnsperf format)\n"
		"  -q NAME            a single query name (instead of -d)\n"
		"  -t TYPE            the type for -q (default A)\n"
		"  -e SIZE            EDNS payload size, 0 for no OPT record (default 1232)\n"
		"  -D                 set the DNSSEC OK bit (needs EDNS)\n"
		"      --nsid         ask for the NSID and count answers per server thread\n"
		"      --cookie HEX   send this COOKIE option (8 to 40 octets in hex) with every query\n"
		"      --allow-remote allow a target outside 127.0.0.0/8 and ::1\n"
		"Load:\n"
		"  -T THREADS         sender threads (default 1)\n"
		"  -c SOCKETS         UDP sockets or TCP connections per thread (default 8)\n"
		"  -l SECONDS         send for this long (default 10 unless -n is given)\n"
		"  -n COUNT           send this many queries in all\n"
		"  -Q QPS             target rate over all threads (default: unpaced)\n"
		"      --arrivals KIND  how -Q spaces a thread's queries: even (default), or\n"
		"                     random, exponential gaps (a Poisson process) of the same mean\n"
		"      --timer-slack NS  how late the kernel may wake a sender thread (default 1;\n"
		"                     0 for the kernel's default, 50000 on Linux)\n"
		"  -i INFLIGHT        queries outstanding at once over all sockets (default 100;\n"
		"                     at least one per socket)\n"
		"  -w SECONDS         wait this long for an answer before counting it lost (default 2)\n"
		"  -b BATCH           sendmmsg/recvmmsg batch size (default 32)\n"
		"      --tcp          TCP, one query per connection\n"
		"      --tcp-pipeline N  TCP, N queries sent at once on each connection\n"
		"Output:\n"
		"      --json         print the report as one JSON object\n"
		"  -h, --help         this text\n"
		"  -V, --version      print the version and exit\n"
		"\n"
		"Exit status: 0 when at least one answer came back, 1 when none did (or on an\n"
		"error while running), 2 on a usage error.\n");
}

/* Parse a number in [min, max]; exits with a message naming the option otherwise. */
static double number(const char *opt, const char *text, double min, double max)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || end == text || *end || v < min || v > max) {
		fprintf(stderr, "shoal-flood: %s: '%s' is not a number in [%g, %g]\n", opt, text,
			min, max);
		exit(2);
	}
	return v;
}

static void parse_address(flood_opts_t *o)
{
	addr_parsed_t a;
	if (addr_parse(o->server_text, 0, &a, NULL, 0) < 0) {
		fprintf(stderr, "shoal-flood: -s: '%s' is not an IPv4 or IPv6 address\n",
			o->server_text);
		exit(2);
	}
	o->server = a.sa;
	o->server_len = a.len;
	addr_set_port((struct sockaddr *)&o->server, o->port);
	/* A load generator aimed at someone else's server is an attack: loopback
	 * only unless the operator says otherwise. */
	bool loopback = addr_is_loopback((const struct sockaddr *)&o->server);
	if (!loopback && !o->allow_remote) {
		fprintf(stderr,
			"shoal-flood: %s is not a loopback address (127.0.0.0/8, ::1); "
			"use --allow-remote for a server you run\n",
			o->server_text);
		exit(2);
	}
}

/* --cookie HEX: any length from 8 to 40 octets, so that a test may send a server cookie too. */
static void parse_cookie(flood_opts_t *o, const char *hex)
{
	size_t len = strlen(hex);
	o->cookie_len = 0;
	for (size_t i = 0; i + 1 < len && len % 2 == 0 && i / 2 < sizeof(o->cookie); i += 2) {
		char pair[3] = { hex[i], hex[i + 1], 0 }, *end;
		o->cookie[i / 2] = (uint8_t)strtoul(pair, &end, 16);
		if (*end || !isxdigit((unsigned char)pair[0]))
			break;
		o->cookie_len++;
	}
	if (o->cookie_len * 2 != len || o->cookie_len < 8) {
		fprintf(stderr, "shoal-flood: --cookie: 16 to 80 hex digits\n");
		exit(2);
	}
}

static void parse_options(flood_opts_t *o, int argc, char **argv)
{
	enum {
		OPT_NSID = 256,
		OPT_TCP,
		OPT_PIPELINE,
		OPT_JSON,
		OPT_REMOTE,
		OPT_COOKIE,
		OPT_ARRIVALS,
		OPT_SLACK
	};
	static const struct option longopts[] = {
		{ "nsid", no_argument, NULL, OPT_NSID },
		{ "cookie", required_argument, NULL, OPT_COOKIE },
		{ "arrivals", required_argument, NULL, OPT_ARRIVALS },
		{ "timer-slack", required_argument, NULL, OPT_SLACK },
		{ "tcp", no_argument, NULL, OPT_TCP },
		{ "tcp-pipeline", required_argument, NULL, OPT_PIPELINE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "allow-remote", no_argument, NULL, OPT_REMOTE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (flood_opts_t){ .server_text = "127.0.0.1",
			     .port = 53,
			     .qtype = "A",
			     .threads = 1,
			     .sockets = 8,
			     .inflight = 100,
			     .edns = 1232,
			     .timeout = 2.0,
			     .batch = 32,
			     .timer_slack = 1 };
	int c;
	while ((c = getopt_long(argc, argv, "s:p:d:q:t:e:DT:c:l:n:Q:i:w:b:hV", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 's':
			o->server_text = optarg;
			break;
		case 'p':
			o->port = (uint16_t)number("-p", optarg, 1, 65535);
			break;
		case 'd':
			o->datafile = optarg;
			break;
		case 'q':
			o->qname = optarg;
			break;
		case 't':
			o->qtype = optarg;
			break;
		case 'e':
			o->edns = (unsigned)number("-e", optarg, 0, 65535);
			break;
		case 'D':
			o->dnssec_ok = true;
			break;
		case 'T':
			o->threads = (unsigned)number("-T", optarg, 1, MAX_THREADS);
			break;
		case 'c':
			o->sockets = (unsigned)number("-c", optarg, 1, MAX_SOCKETS);
			break;
		case 'l':
			o->duration = number("-l", optarg, 0.001, 86400);
			break;
		case 'n':
			o->count = (uint64_t)number("-n", optarg, 1, 1e15);
			break;
		case 'Q':
			o->rate = number("-Q", optarg, 0.001, 1e9);
			break;
		case 'i':
			o->inflight = (unsigned)number("-i", optarg, 1, 1e8);
			break;
		case 'w':
			o->timeout = number("-w", optarg, 0.001, 3600);
			break;
		case 'b':
			o->batch = (unsigned)number("-b", optarg, 1, 1024);
			break;
		case OPT_ARRIVALS: {
			int kind = flood_arrivals_parse(optarg);
			if (kind < 0) {
				fprintf(stderr,
					"shoal-flood: --arrivals: '%s' is not even or random\n",
					optarg);
				exit(2);
			}
			o->arrivals = (flood_arrivals_t)kind;
			break;
		}
		case OPT_SLACK:
			o->timer_slack = (unsigned long)number("--timer-slack", optarg, 0, 1e9);
			break;
		case OPT_NSID:
			o->nsid = true;
			break;
		case OPT_TCP:
			o->tcp_pipeline = 1;
			break;
		case OPT_PIPELINE:
			o->tcp_pipeline =
				(unsigned)number("--tcp-pipeline", optarg, 1, MAX_PIPELINE);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_COOKIE:
			parse_cookie(o, optarg);
			break;
		case OPT_REMOTE:
			o->allow_remote = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("shoal-flood %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			fprintf(stderr, "shoal-flood: see --help\n");
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shoal-flood: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (!o->datafile == !o->qname) {
		fprintf(stderr, "shoal-flood: give either -d FILE or -q NAME\n");
		exit(2);
	}
	if ((o->dnssec_ok || o->nsid || o->cookie_len) && o->edns == 0) {
		fprintf(stderr, "shoal-flood: -D, --nsid and --cookie need EDNS (-e above 0)\n");
		exit(2);
	}
	if (o->arrivals != FLOOD_ARRIVALS_EVEN && o->rate <= 0) {
		fprintf(stderr, "shoal-flood: --arrivals %s needs a rate (-Q)\n",
			flood_arrivals_name(o->arrivals));
		exit(2);
	}
	if (o->duration == 0 && o->count == 0)
		o->duration = DEFAULT_DURATION;
	parse_address(o);
	o->progress = isatty(STDERR_FILENO);
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&flood_stop, true);
}

/* Many sockets per thread need many descriptors: raise the soft limit to the hard one. */
static void raise_fd_limit(const flood_opts_t *o)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	rlim_t need = (rlim_t)o->threads * o->sockets + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need)
		fprintf(stderr,
			"shoal-flood: warning: %u sockets need more descriptors than the "
			"limit %llu\n",
			o->threads * o->sockets, (unsigned long long)rl.rlim_cur);
}

static void *thread_main(void *arg)
{
	flood_thread_t *t = arg;
	if (t->opts->tcp_pipeline)
		flood_tcp_thread(t);
	else
		flood_udp_thread(t);
	atomic_fetch_sub(&running, 1);
	return NULL;
}

/* One progress line: totals so far, and p50/p99 of the last second's answers. */
static void progress(const flood_opts_t *o, const flood_thread_t *th, uint64_t start,
		     uint64_t *prev_hist, uint64_t *prev_answered)
{
	static flood_stats_t sum; /* main thread only */
	flood_stats_sum(&sum, th, o->threads);
	uint64_t hist[FLOOD_HIST_BUCKETS];
	for (unsigned b = 0; b < FLOOD_HIST_BUCKETS; b++) {
		uint64_t v = atomic_load_explicit(&sum.hist[b], memory_order_relaxed);
		hist[b] = v - prev_hist[b];
		prev_hist[b] = v;
	}
	uint64_t answered = atomic_load(&sum.answered);
	double secs = (double)(flood_now_ns() - start) / 1e9;
	fprintf(stderr, "%6.1fs sent %llu answered %llu lost %llu qps %.0f p50 %.3fms p99 %.3fms\n",
		secs, (unsigned long long)atomic_load(&sum.sent), (unsigned long long)answered,
		(unsigned long long)atomic_load(&sum.lost), (double)(answered - *prev_answered),
		(double)flood_hist_quantile(hist, 0.5) / 1e6,
		(double)flood_hist_quantile(hist, 0.99) / 1e6);
	*prev_answered = answered;
}

int main(int argc, char **argv)
{
	flood_opts_t o;
	parse_options(&o, argc, argv);
	flood_queries_t qs;
	if (flood_queries_load(&qs, &o) < 0)
		return 1;
	raise_fd_limit(&o);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * The sender threads sleep until their next query is due. With the
	 * kernel's default slack (50 us) a wake-up may come that much late,
	 * so at 40,000 q/s (25 us apart) the queries would leave in small
	 * bursts instead of when due. Threads inherit it from this one.
	 */
	if (prctl(PR_SET_TIMERSLACK, o.timer_slack, 0, 0, 0) < 0)
		fprintf(stderr, "shoal-flood: --timer-slack: %s\n", strerror(errno));

	flood_thread_t *th = calloc(o.threads, sizeof(*th));
	pthread_t *tid = calloc(o.threads, sizeof(*tid));
	pthread_barrier_t ready;
	if (!th || !tid || pthread_barrier_init(&ready, NULL, o.threads + 1)) {
		fprintf(stderr, "shoal-flood: out of memory\n");
		return 1;
	}
	unsigned per_socket = (o.inflight + o.threads * o.sockets - 1) / (o.threads * o.sockets);
	if (per_socket > 65536)
		per_socket = 65536; /* the query ID is 16 bits */
	for (unsigned i = 0; i < o.threads; i++) {
		th[i].opts = &o;
		th[i].queries = &qs;
		th[i].index = i;
		th[i].ready = &ready;
		th[i].inflight = per_socket;
		th[i].rate = o.rate / o.threads;
		th[i].arrivals = o.arrivals;
		th[i].count =
			o.count ? o.count / o.threads + (i < o.count % o.threads) : UINT64_MAX;
		flood_pace_init(&th[i]);
		atomic_fetch_add(&running, 1);
		/* signals to the main thread, which stops the others: their waits run on */
		if (thread_start(&tid[i], NULL, thread_main, &th[i], "shoal-flood-%u", i)) {
			fprintf(stderr, "shoal-flood: cannot start thread %u\n", i);
			return 1;
		}
	}
	pthread_barrier_wait(&ready); /* all set up */
	int failed = 0;
	for (unsigned i = 0; i < o.threads; i++) {
		if (th[i].error && !failed) {
			fprintf(stderr, "shoal-flood: thread %u: %s\n", i,
				shoal_strerror(th[i].error));
			failed = 1;
		}
	}
	if (failed)
		atomic_store(&flood_stop, true);
	uint64_t start = flood_now_ns();
	for (unsigned i = 0; i < o.threads; i++) {
		th[i].start_ns = start;
		th[i].send_end_ns =
			o.duration > 0 ? start + (uint64_t)(o.duration * 1e9) : UINT64_MAX;
	}
	pthread_barrier_wait(&ready); /* go */

	uint64_t *prev_hist = calloc(FLOOD_HIST_BUCKETS, sizeof(uint64_t));
	uint64_t prev_answered = 0, next_tick = start + 1000000000u;
	while (atomic_load(&running) > 0) {
		struct timespec nap = flood_timespec(20000000u);
		nanosleep(&nap, NULL);
		uint64_t now = flood_now_ns();
		if (o.progress && prev_hist && now >= next_tick && !failed) {
			progress(&o, th, start, prev_hist, &prev_answered);
			next_tick += 1000000000u;
		}
	}
	for (unsigned i = 0; i < o.threads; i++)
		pthread_join(tid[i], NULL);
	free(prev_hist);
	if (failed)
		return 1;

	flood_stats_t *sum = calloc(1, sizeof(*sum));
	if (!sum)
		return 1;
	flood_stats_sum(sum, th, o.threads);
	uint64_t end = atomic_load(&sum->last_answer_ns);
	uint64_t stopped = flood_now_ns();
	if (end < start || atomic_load(&sum->answered) == 0)
		end = stopped;
	flood_report(&o, sum, end - start);
	/* a run with no answer at all measured nothing: a script must see it */
	int status = atomic_load(&sum->answered) == 0 ? 1 : 0;
	if (status)
		fprintf(stderr, "shoal-flood: no answer at all from %s port %u\n", o.server_text,
			(unsigned)o.port);
	free(sum);
	pthread_barrier_destroy(&ready);
	free(th);
	free(tid);
	flood_queries_free(&qs);
	return status;
}
