// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr serve: probes kept in while a Prometheus server scrapes them. Each SPEC is counted, each
 * --time FUNC timed (profile's timers); GET /metrics answers in the text exposition format
 * (lib/prom.c), one connection at a time, every scrape reading the module's counters afresh.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include <kinstr/prom.h>
#include "cli.h"

#define SERVE_DEFAULT "127.0.0.1:9464"
#define SERVE_MAX_TIMED 256

static void serve_usage(FILE *f)
{
	fprintf(f, "usage: kinstr serve [--listen ADDR:PORT] [--time FUNC]... [-c CMD|-d SEC] [SPEC...]\n\n"
		   "Keep probes in and serve their numbers to Prometheus: GET /metrics answers in the\n"
		   "text exposition format (0.0.4). Each SPEC (as for 'kinstr count') is counted,\n"
		   "kinstr_probe_hits_total{probe,class}; each --time FUNC (a name or glob, as for\n"
		   "'kinstr profile') is timed from entry to every exit, as the histogram\n"
		   "kinstr_function_duration_seconds{function} (log2 buckets) with\n"
		   "kinstr_function_calls_total; kinstr_probe_missed_total counts hits whose action\n"
		   "the recursion guard skipped, kinstr_info{version,module,abi,kernel} says what runs.\n\n"
		   "  -l, --listen ADDR:PORT  where to listen (default " SERVE_DEFAULT ", the loopback;\n"
		   "                          0.0.0.0:PORT for every address)\n"
		   "  -t, --time FUNC         time FUNC (repeatable)\n"
		   "  -c, --command CMD       serve while CMD runs, exit with its status\n"
		   "  -d, --duration SEC      serve for SEC seconds (without -c or -d: until Ctrl-C/SIGTERM)\n"
		   CLI_HELP_MAX_PROBES("    ")
		   "The probes come out on SIGINT/SIGTERM, at the end, and if kinstr dies.\n");
}

struct serve {
	struct kinstr_dev *dev;
	struct kinstr_probeset *ps;
	size_t ncount;			/* probes [0, ncount) count; the rest are the timers' */
	struct kinstr_timed *timed;
	size_t ntimed;
	char info[512];			/* kinstr_info's labels */
	uint64_t scrapes;
};

/* A socket listening at ADDR:PORT: its fd, or -1 (printed), -2 when spec is no ADDR:PORT (printed). */
static int open_listen(const char *spec)
{
	char host[256], *colon;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai, *a;
	int fd = -1, one = 1, err;

	snprintf(host, sizeof(host), "%s", spec);
	colon = strrchr(host, ':');
	if (!colon || !colon[1] || colon == host) {
		cli_err("--listen: ADDR:PORT, not '%s'", spec);
		return -2;	/* usage */
	}
	*colon = 0;
	if (host[0] == '[' && colon[-1] == ']') {	/* [::1]:9464 */
		colon[-1] = 0;
		memmove(host, host + 1, strlen(host));
	}
	err = getaddrinfo(host, colon + 1, &hints, &ai);
	if (err) {
		cli_err("--listen %s: %s", spec, gai_strerror(err));
		errno = EINVAL;
		return -1;
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 4096))
			break;
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		cli_err("--listen %s: %s", spec, strerror(errno));
	return fd;
}

/* The whole exposition, read now. */
static int metrics(struct serve *s, FILE *out)
{
	size_t n = kinstr_probeset__cnt(s->ps), i;
	uint64_t *hits = calloc(n, sizeof(*hits)), *missed = calloc(n, sizeof(*missed));
	struct kinstr_timer_stats *st = s->ntimed ? calloc(s->ntimed, sizeof(*st)) : NULL;
	int ret = -ENOMEM;

	if (!hits || !missed || (s->ntimed && !st))
		goto out;
	ret = kinstr_probeset__counts_missed(s->ps, hits, missed);
	if (!ret && s->ntimed)
		ret = kinstr_timers__read(s->dev, 0, (uint32_t)s->ntimed, st);
	if (ret)
		goto out;
	kinstr_prom__family(out, "kinstr_info", "gauge", "kinstr's CLI, module and ABI versions and the kernel it probes.");
	kinstr_prom__sample(out, "kinstr_info", s->info, 1);
	if (s->ncount) {
		kinstr_prom__family(out, "kinstr_probe_hits_total", "counter", "Hits of each counting probe.");
		for (i = 0; i < s->ncount; i++) {
			const struct kinstr_probe_info *p = kinstr_probeset__info(s->ps, i);
			char name[192], labels[256] = "";

			snprintf(name, sizeof(name), "%s+0x%llx", p->func->name, (unsigned long long)(p->addr - p->func->addr));
			kinstr_prom__label(labels, sizeof(labels), "probe", name);
			kinstr_prom__label(labels, sizeof(labels), "class", kinstr_probe_kind__str(p->kind));
			kinstr_prom__sample(out, "kinstr_probe_hits_total", labels, hits[i]);
		}
	}
	kinstr_prom__family(out, "kinstr_probe_missed_total", "counter",
			    "Hits whose action kinstr's recursion guard skipped, over every probe.");
	{
		uint64_t m = 0;

		for (i = 0; i < n; i++)
			m += missed[i];
		kinstr_prom__sample(out, "kinstr_probe_missed_total", "", m);
	}
	if (s->ntimed) {
		kinstr_prom__family(out, "kinstr_function_duration_seconds", "histogram",
				    "Wall time of each timed function's calls, entry to exit.");
		for (i = 0; i < s->ntimed; i++) {
			char labels[256] = "";

			kinstr_prom__label(labels, sizeof(labels), "function", s->timed[i].f->name);
			kinstr_prom__log2_histogram(out, "kinstr_function_duration_seconds", labels, (const uint64_t *)st[i].hist,
						    KINSTR_TIMER_HIST, st[i].calls, st[i].wall_ns);
		}
		kinstr_prom__family(out, "kinstr_function_unmatched_total", "counter",
				    "Exits of a timed function whose entry was not seen, and starts not recorded.");
		for (i = 0; i < s->ntimed; i++) {
			char labels[256] = "";

			kinstr_prom__label(labels, sizeof(labels), "function", s->timed[i].f->name);
			kinstr_prom__sample(out, "kinstr_function_unmatched_total", labels, st[i].unmatched + st[i].dropped);
		}
	}
	kinstr_prom__family(out, "kinstr_scrapes_total", "counter", "Scrapes of this endpoint answered.");
	kinstr_prom__sample(out, "kinstr_scrapes_total", "", ++s->scrapes);
out:
	free(hits);
	free(missed);
	free(st);
	return ret;
}

static void reply(int c, const char *status, const char *type, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n", status, type, len);
	size_t off = 0;
	ssize_t w;

	if (send(c, head, (size_t)n, MSG_NOSIGNAL) != n)
		return;
	while (off < len && (w = send(c, body + off, len - off, MSG_NOSIGNAL)) > 0)
		off += (size_t)w;
}

/* One connection: its request line read (a slow client gets 2 s), answered, closed. */
static void answer(struct serve *s, int c)
{
	struct timeval tv = { .tv_sec = 2 };
	char req[4096], *body = NULL;
	size_t got = 0, len = 0;
	ssize_t r;
	FILE *m;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (got < sizeof(req) - 1 && (r = recv(c, req + got, sizeof(req) - 1 - got, 0)) > 0) {
		got += (size_t)r;
		req[got] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = 0;
	if (strncmp(req, "GET ", 4)) {
		reply(c, "405 Method Not Allowed", "text/plain", "GET /metrics\n", 13);
		return;
	}
	if (strncmp(req + 4, "/metrics ", 9) && strncmp(req + 4, "/metrics?", 9)) {
		reply(c, "404 Not Found", "text/plain", "kinstr serves /metrics\n", 23);
		return;
	}
	m = open_memstream(&body, &len);
	if (!m || metrics(s, m)) {
		if (m)
			fclose(m);
		free(body);
		reply(c, "500 Internal Server Error", "text/plain", "cannot read kinstr's counters\n", 30);
		return;
	}
	fclose(m);
	reply(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
	free(body);
}

static void set_info(struct serve *s)
{
	struct kinstr_version v;
	struct utsname u;
	char abi[32], *b = s->info;
	size_t len = sizeof(s->info);

	b[0] = 0;
	kinstr_prom__label(b, len, "version", KINSTR_VERSION);
	if (!kinstr_dev__version(s->dev, &v)) {
		snprintf(abi, sizeof(abi), "%u.%u", v.abi_major, v.abi_minor);
		kinstr_prom__label(b, len, "module", v.module_version);
		kinstr_prom__label(b, len, "abi", abi);
	}
	if (!uname(&u))
		kinstr_prom__label(b, len, "kernel", u.release);
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "time", required_argument, NULL, 't' },
		{ "command", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "max-probes", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	const char *listen_at = SERVE_DEFAULT, *command = NULL, **times = NULL;
	struct serve s = { 0 };
	struct kinstr_plan *pl = NULL;
	struct kinstr_kernel *k = NULL;
	int c, i, ntimes = 0, lfd = -1, ret = CLI_FAIL;
	double duration = 0;
	struct cli_run run;
	char err[512];

	times = calloc((size_t)argc, sizeof(*times));
	if (!times)
		return CLI_FAIL;
	while ((c = getopt_long(argc, argv, "l:t:c:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen_at = optarg; break;
		case 't': times[ntimes++] = optarg; break;
		case 'c': command = optarg; break;
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &duration))
				goto usage;
			break;
		case 'M':
			if (cli_parse_max_probes(optarg, &popts.max_probes))
				goto usage;
			break;
		case 'h': serve_usage(stdout); free(times); return CLI_OK;
		default: serve_usage(stderr); goto usage;
		}
	}
	if (optind >= argc && !ntimes) {
		serve_usage(stderr);
		goto usage;
	}
	for (i = optind; i < argc; i++) {
		struct kinstr_spec sp;

		if (kinstr_spec__parse(argv[i], &sp, err, sizeof(err))) {
			cli_err("%s", err);
			goto usage;
		}
	}
	cli_run__init(&run, command, duration, false);
	/* the address first: one that cannot be bound fails before anything is patched */
	lfd = open_listen(listen_at);
	if (lfd < 0) {
		ret = lfd == -2 ? CLI_USAGE : CLI_FAIL;
		goto out;
	}
	k = cli_open_kernel(NULL, &s.dev);
	if (!k)
		goto out;
	s.ps = kinstr_probeset__new(s.dev, k);
	pl = s.ps ? kinstr_plan__new(s.ps, &popts) : NULL;
	s.timed = calloc(SERVE_MAX_TIMED, sizeof(*s.timed));
	if (!pl || !s.timed)
		goto out;
	for (i = optind; i < argc; i++)
		if (cli_add_spec(pl, argv[i]))
			goto out;
	s.ncount = kinstr_probeset__cnt(s.ps);
	for (i = 0; i < ntimes; i++) {
		struct kinstr_why why;
		size_t got, skipped;

		if (kinstr_plan__time_spec(pl, times[i], (unsigned int)s.ntimed, s.timed + s.ntimed,
					   SERVE_MAX_TIMED - s.ntimed, &got, &skipped, &why)) {
			cli_err("%s", why.msg);
			goto out;
		}
		s.ntimed += got;
	}
	if (s.ntimed) {
		int r = kinstr_timers__create(s.dev, (uint32_t)s.ntimed, 0, 0);

		if (r) {
			cli_err("cannot create %zu timers: %s", s.ntimed, strerror(-r));
			goto out;
		}
	}
	set_info(&s);
	if (cli_run__start(&run, s.ps))
		goto out;
	fprintf(stderr, "kinstr: serving %zu probes (%zu counted, %zu functions timed) at http://%s/metrics%s\n",
		kinstr_probeset__cnt(s.ps), s.ncount, s.ntimed, listen_at, command || duration ? "" : "; Ctrl-C to stop");
	while (!cli_run__done(&run)) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (poll(&p, 1, 100) == 1) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (cfd >= 0) {
				answer(&s, cfd);
				close(cfd);
			}
		}
	}
	cli_run__stop(&run);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	if (lfd >= 0)
		close(lfd);
	kinstr_plan__free(pl);
	kinstr_probeset__free(s.ps);	/* removes the probes */
	if (k)
		cli_close_kernel(k, s.dev);
	free(s.timed);
	free(times);
	return ret;
usage:
	free(times);
	return CLI_USAGE;
}
