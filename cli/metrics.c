// SPDX-License-Identifier: GPL-2.0
/*
 * A metrics endpoint (kinstr serve, and --metrics on count, profile and span): libmicrohttpd on a
 * socket bound before anything is patched, driven from the run's wait (cli_run__watch on its epoll
 * fd); GET /metrics answered with the exposition its owner writes (lib/results/prom.c formats).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <microhttpd.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/kinstr.h>
#include <kinstr/probe.h>
#include <kinstr/prom.h>
#include <kinstr/span.h>
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

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int status, const char *type, char *body,
			       size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

#define CONST_BODY(s) (char *)(s), sizeof(s) - 1, MHD_RESPMEM_PERSISTENT

/* GET /metrics (any query string): the exposition its owner writes; another path 404, another method 405. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	struct cli_metrics *m = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)version;
	(void)upload;
	if (*upload_len) {	/* a body we do not read: taken and dropped */
		*upload_len = 0;
		return MHD_YES;
	}
	if (!*state) {	/* the headers only: answer once the whole request is in */
		*state = m;
		if (strcmp(method, MHD_HTTP_METHOD_GET))
			return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", CONST_BODY("GET /metrics\n"));
	if (strcmp(url, "/metrics"))
		return respond(c, MHD_HTTP_NOT_FOUND, "text/plain", CONST_BODY("kinstr serves /metrics\n"));
	f = open_memstream(&body, &len);
	if (!f || m->write(m->ctx, f)) {
		if (f)
			fclose(f);
		free(body);
		return respond(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
			       CONST_BODY("cannot read kinstr's counters\n"));
	}
	fclose(f);
	return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len, MHD_RESPMEM_MUST_FREE);
}

int cli_metrics__open(struct cli_metrics *m, const char *opt, const char *listen_at,
		     int (*write)(void *ctx, FILE *out), void *ctx)
{
	const union MHD_DaemonInfo *info;

	memset(m, 0, sizeof(*m));
	m->write = write;
	m->ctx = ctx;
	m->fd = -1;
	m->listen_fd = open_listen(opt, listen_at);
	if (m->listen_fd < 0)
		return m->listen_fd == -2 ? CLI_USAGE : CLI_FAIL;
	/*
	 * libmicrohttpd on our socket, run from the run's wait (no thread of its own: the write callbacks
	 * read what the main loop owns): every connection non-blocking, so an idle or slow client
	 * delays no other; each closed after CLI_METRICS_TIMEOUT s without progress; at most
	 * CLI_METRICS_CONNECTIONS at once (more wait in the listen queue).
	 */
	m->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, m,
				MHD_OPTION_LISTEN_SOCKET, m->listen_fd,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CLI_METRICS_TIMEOUT,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CLI_METRICS_CONNECTIONS,
				MHD_OPTION_END);
	info = m->d ? MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!info) {
		cli_err("%s %s: cannot start the HTTP server (libmicrohttpd)", opt, listen_at);
		cli_metrics__close(m);
		return CLI_FAIL;
	}
	m->fd = info->epoll_fd;
	return CLI_OK;
}

void cli_metrics__ready(void *arg)
{
	struct cli_metrics *m = arg;

	MHD_run(m->d);	/* whatever is ready now, and the connections that timed out */
}

void cli_metrics__close(struct cli_metrics *m)
{
	if (m->d)
		MHD_stop_daemon(m->d);	/* closes the listen socket it was given (not quiesced) */
	else if (m->listen_fd >= 0)
		close(m->listen_fd);	/* never handed over */
	m->d = NULL;
	m->listen_fd = -1;
	m->fd = -1;
}

#define SPAN_SETTLE_NS 100000000ull	/* far more than a probe's write of its record takes */

int cli_metrics__span(void *ctx, FILE *out)
{
	struct cli_span_metrics *m = ctx;
	const struct kinstr_span_result *r;
	uint64_t h[KINSTR_SPAN_HIST - 1];
	char labels[512] = "", l2[600];
	unsigned int i;
	int ret = kinstr_spanner__settle(m->sp, SPAN_SETTLE_NS);

	if (ret)
		return ret;
	r = kinstr_spanner__result(m->sp);
	/* the span's bucket i is [2^(i-1), 2^i) ns; Prometheus's from the timers' [2^i, 2^(i+1)) */
	h[0] = r->total.hist[0] + r->total.hist[1];
	for (i = 1; i < KINSTR_SPAN_HIST - 1; i++)
		h[i] = r->total.hist[i + 1];
	if (kinstr_prom__label(labels, sizeof(labels), "from", m->a) ||
	    kinstr_prom__label(labels, sizeof(labels), "to", m->b))
		return -ENOSPC;
	cli_metrics__info(m->dev, out);
	kinstr_prom__family(out, "kinstr_span_duration_seconds", "histogram",
			    "Time from a hit at the span's start to the next hit at its stop of the same key.");
	kinstr_prom__log2_histogram(out, "kinstr_span_duration_seconds", labels, h, KINSTR_SPAN_HIST - 1,
				    r->total.count, r->total.sum);
	kinstr_prom__family(out, "kinstr_span_unmatched_total", "counter",
			    "Starts replaced by a later start of their key, and stops with no start.");
	snprintf(l2, sizeof(l2), "%s,point=\"start\"", labels);
	kinstr_prom__sample(out, "kinstr_span_unmatched_total", l2, r->unmatched_starts);
	snprintf(l2, sizeof(l2), "%s,point=\"stop\"", labels);
	kinstr_prom__sample(out, "kinstr_span_unmatched_total", l2, r->unmatched_stops);
	kinstr_prom__family(out, "kinstr_span_lost_total", "counter", "Hits the trace buffers had no room for.");
	kinstr_prom__sample(out, "kinstr_span_lost_total", labels, r->lost);
	kinstr_prom__family(out, "kinstr_span_overflow_total", "counter", "Hits past the bound of records kept.");
	kinstr_prom__sample(out, "kinstr_span_overflow_total", labels, r->overflow);
	kinstr_prom__family(out, "kinstr_scrapes_total", "counter", "Scrapes of this endpoint answered.");
	kinstr_prom__sample(out, "kinstr_scrapes_total", "", ++m->scrapes);
	return 0;
}
