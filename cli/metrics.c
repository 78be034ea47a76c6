// SPDX-License-Identifier: GPL-2.0
/*
 * A metrics endpoint (kinstr serve, and --metrics on count, profile and span): a listening socket the
 * run's wait watches (cli_run__watch); each connection's request read (2 s at most), GET /metrics
 * answered with the exposition its owner writes (lib/prom.c formats), then closed.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/kinstr.h>
#include <kinstr/probe.h>
#include <kinstr/prom.h>
#include "cli.h"

/* A socket listening at ADDR:PORT: its fd, or -1 (printed), -2 when spec is no ADDR:PORT (printed). */
static int open_listen(const char *opt, const char *spec)
{
	char host[256], *colon;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai, *a;
	int fd = -1, one = 1, err;

	snprintf(host, sizeof(host), "%s", spec);
	colon = strrchr(host, ':');
	if (!colon || !colon[1] || colon == host) {
		cli_err("%s: ADDR:PORT, not '%s'", opt, spec);
		return -2;	/* usage */
	}
	*colon = 0;
	{	/* a number 1-65535: getaddrinfo took 99999 as port 34463 (mod 65536) and service names */
		char *end;
		unsigned long port = strtoul(colon + 1, &end, 10);

		if (*end || colon[1] < '0' || colon[1] > '9' || port < 1 || port > 65535) {
			cli_err("%s: the port must be a number from 1 to 65535, not '%s'", opt, colon + 1);
			return -2;	/* usage */
		}
	}
	if (host[0] == '[' && colon[-1] == ']') {	/* [::1]:9464 */
		colon[-1] = 0;
		memmove(host, host + 1, strlen(host));
	}
	err = getaddrinfo(host, colon + 1, &hints, &ai);
	if (err) {
		cli_err("%s %s: %s", opt, spec, gai_strerror(err));
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
		cli_err("%s %s: %s", opt, spec, strerror(errno));
	return fd;
}

/* kinstr_info{version,module,abi,kernel} 1 */
void cli_metrics__info(struct kinstr_dev *dev, FILE *out)
{
	struct kinstr_version v;
	struct utsname u;
	char abi[32], b[512] = "";

	kinstr_prom__label(b, sizeof(b), "version", KINSTR_VERSION);
	if (!kinstr_dev__version(dev, &v)) {
		snprintf(abi, sizeof(abi), "%u.%u", v.abi_major, v.abi_minor);
		kinstr_prom__label(b, sizeof(b), "module", v.module_version);
		kinstr_prom__label(b, sizeof(b), "abi", abi);
	}
	if (!uname(&u))
		kinstr_prom__label(b, sizeof(b), "kernel", u.release);
	kinstr_prom__family(out, "kinstr_info", "gauge", "kinstr's CLI, module and ABI versions and the kernel it probes.");
	kinstr_prom__sample(out, "kinstr_info", b, 1);
}

/* The probes' and timers' families, read now. */
int cli_metrics__probes(void *arg, FILE *out)
{
	const struct cli_metrics_src *s = arg;
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
	cli_metrics__info(s->dev, out);
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

			kinstr_prom__label(labels, sizeof(labels), "function", s->timed[i]);
			kinstr_prom__log2_histogram(out, "kinstr_function_duration_seconds", labels, (const uint64_t *)st[i].hist,
						    KINSTR_TIMER_HIST, st[i].calls, st[i].wall_ns);
		}
		kinstr_prom__family(out, "kinstr_function_unmatched_total", "counter",
				    "Exits of a timed function whose entry was not seen, and starts not recorded.");
		for (i = 0; i < s->ntimed; i++) {
			char labels[256] = "";

			kinstr_prom__label(labels, sizeof(labels), "function", s->timed[i]);
			kinstr_prom__sample(out, "kinstr_function_unmatched_total", labels, st[i].unmatched + st[i].dropped);
		}
	}
	if (s->scrapes) {
		kinstr_prom__family(out, "kinstr_scrapes_total", "counter", "Scrapes of this endpoint answered.");
		kinstr_prom__sample(out, "kinstr_scrapes_total", "", ++*s->scrapes);
	}
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
static void answer(struct cli_metrics *m, int c)
{
	struct timeval tv = { .tv_sec = 2 };
	char req[4096], *body = NULL;
	size_t got = 0, len = 0;
	ssize_t r;
	FILE *f;

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
	f = open_memstream(&body, &len);
	if (!f || m->write(m->ctx, f)) {
		if (f)
			fclose(f);
		free(body);
		reply(c, "500 Internal Server Error", "text/plain", "cannot read kinstr's counters\n", 30);
		return;
	}
	fclose(f);
	reply(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
	free(body);
}


int cli_metrics__open(struct cli_metrics *m, const char *opt, const char *listen_at,
		     int (*write)(void *ctx, FILE *out), void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->write = write;
	m->ctx = ctx;
	m->fd = open_listen(opt, listen_at);
	return m->fd >= 0 ? CLI_OK : m->fd == -2 ? CLI_USAGE : CLI_FAIL;
}

void cli_metrics__ready(void *arg)
{
	struct cli_metrics *m = arg;
	int c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	answer(m, c);
	close(c);
}

void cli_metrics__close(struct cli_metrics *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}
