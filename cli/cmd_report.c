// SPDX-License-Identifier: GPL-2.0
/* kinstr report [--json] DIR: summarise a CTF trace kinstr wrote; --html OUT FILE...: a page of saved outputs. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <kinstr/ctf.h>
#include <kinstr/ctf_pairs.h>
#include <kinstr/ctf_read.h>
#include <kinstr/report.h>
#include <kinstr/tracedat.h>
#include "cli.h"

static void report_usage(FILE *f)
{
	fprintf(f, "usage: kinstr report [--json] DIR\n"
		   "       kinstr report --html OUT [--title TEXT] FILE...\n"
		   "       kinstr report --trace-dat OUT DIR\n\n"
		   "Summarise the CTF trace in DIR (written by kinstr): events per probe (event class)\n"
		   "and per CPU, the time span (first and last event timestamp in ns of the trace's\n"
		   "clock, and their realtime), and the events the tracer lost (each CPU's final\n"
		   "events_discarded count, and their sum). Every packet and event is decoded and\n"
		   "checked; a truncated or corrupted trace is an error (exit status 1). Where FUNC\n"
		   "and FUNC%%return are both traced, their events are paired per thread in time order:\n"
		   "calls, min/mean/max ns from entry to return, events left unpaired.\n\n"
		   "      --json   print one JSON object instead of tables\n"
		   "      --html OUT  write one self-contained HTML page (it opens with no network) of\n"
		   "               saved kinstr outputs: each FILE a --folded stack file (kinstr profile,\n"
		   "               count --by stack) drawn as an interactive flame graph, or the --json of\n"
		   "               profile or span (a table and a histogram per function or span), count\n"
		   "               (a table), count --by stack (a flame graph) or cover (each function's\n"
		   "               blocks, hit or not); or a trace's DIR: its events on a time line per CPU\n"
		   "               (every event counted; at most 20000 drawn, evenly spaced)\n"
		   "      --title TEXT  the page's title (default: kinstr report)\n"
		   "      --trace-dat OUT  write the trace in DIR again as trace-cmd's trace.dat (version 6),\n"
		   "               for 'trace-cmd report -i OUT' and KernelShark\n"
		   "  -h, --help   show this help\n"
		   "To see the events themselves: babeltrace2 DIR\n");
}

static void print_realtime(int64_t offset, uint64_t ts)
{
	int64_t rt = offset + (int64_t)ts;
	uint64_t a = rt < 0 ? -(uint64_t)rt : (uint64_t)rt;

	printf("%s%" PRIu64 ".%09" PRIu64, rt < 0 ? "-" : "", a / 1000000000, a % 1000000000);
}

/* The whole of path, or NULL (printed). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f) {
		cli_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (n == cap) {
			char *nb = realloc(buf, (cap = cap ? cap * 2 : 65536) + 1);

			if (!nb) {
				free(buf);
				fclose(f);
				cli_err("%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	if (ferror(f)) {
		cli_err("%s: %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* A trace directory as the page's time line input (lib/report/report_trace.c), or NULL (printed). */
static char *trace_data(const char *dir, const char *name, size_t *len)
{
	char *buf = NULL, err[512] = "";
	FILE *f = open_memstream(&buf, len);
	int r;

	if (!f) {
		cli_err("%s: %s", dir, strerror(errno));
		return NULL;
	}
	r = kinstr_report__trace_json(f, dir, name, 0, err, sizeof(err));
	if (fclose(f) && !r)
		r = -errno;
	if (r) {
		cli_err("%s", err[0] ? err : strerror(-r));
		free(buf);
		return NULL;
	}
	return buf;
}

/* --html OUT FILE...: the page written beside OUT, then renamed onto it (no half page left). */
static int report_html(const char *out, const char *title, int n, char **files)
{
	struct kinstr_report_input *in = calloc((size_t)n, sizeof(*in));
	char tmp[4096], err[512];
	int i, ret = CLI_FAIL, r;
	FILE *f = NULL;

	if (!in)
		return CLI_FAIL;
	for (i = 0; i < n; i++) {
		const char *slash = strrchr(files[i], '/');

		in[i].name = slash && slash[1] ? slash + 1 : files[i];
		in[i].data = is_dir(files[i]) ? trace_data(files[i], in[i].name, &in[i].len) : slurp(files[i], &in[i].len);
		if (!in[i].data)
			goto done;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "we");
	if (!f) {
		cli_err("%s: %s", tmp, strerror(errno));
		goto done;
	}
	r = kinstr_report__html(f, title, in, (size_t)n, err, sizeof(err));
	if (fclose(f) && !r)
		r = -errno;
	if (r) {
		unlink(tmp);
		cli_err("%s", r == -EINVAL ? err : strerror(-r));
		goto done;
	}
	if (rename(tmp, out)) {
		cli_err("%s: %s", out, strerror(errno));
		unlink(tmp);
		goto done;
	}
	fprintf(stderr, "kinstr: wrote %s (%d input%s)\n", out, n, n == 1 ? "" : "s");
	ret = CLI_OK;
done:
	for (i = 0; i < n; i++)
		free((char *)in[i].data);
	free(in);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "title", required_argument, NULL, 'T' },
		{ "trace-dat", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kinstr_call_pairs *pairs = NULL;
	struct kinstr_ctf_reader *r;
	struct kinstr_ctf_event ev;
	uint64_t *per_class = NULL, *per_cpu = NULL, total = 0, lost = 0, first = 0, last = 0;
	unsigned int i, nclasses, nstreams;
	bool json = false;
	int c, ret, status = CLI_FAIL;
	char err[1024];
	const char *dir;

	const char *html = NULL, *title = "kinstr report", *dat = NULL;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'H': html = optarg; break;
		case 'T': title = optarg; break;
		case 'D': dat = optarg; break;
		case 'h': report_usage(stdout); return CLI_OK;
		default: report_usage(stderr); return CLI_USAGE;
		}
	}
	if (html) {
		if (json || optind >= argc) {
			report_usage(stderr);
			return CLI_USAGE;
		}
		return report_html(html, title, argc - optind, argv + optind);
	}
	if (optind != argc - 1) {
		report_usage(stderr);
		return CLI_USAGE;
	}
	dir = argv[optind];
	if (dat) {
		uint64_t n;

		err[0] = 0;
		ret = kinstr_tracedat__from_ctf(dir, dat, &n, err, sizeof(err));
		if (ret) {
			cli_err("%s", err[0] ? err : strerror(-ret));
			return CLI_FAIL;
		}
		fprintf(stderr, "kinstr: wrote %s: %" PRIu64 " events\n", dat, n);
		return CLI_OK;
	}
	r = kinstr_ctf_reader__open(dir, err, sizeof(err));
	if (!r) {
		cli_err("%s", err);
		return CLI_FAIL;
	}
	nclasses = kinstr_ctf_reader__class_cnt(r);
	nstreams = kinstr_ctf_reader__stream_cnt(r);
	per_class = calloc(nclasses + 1, sizeof(*per_class));
	per_cpu = calloc(nstreams + 1, sizeof(*per_cpu));
	if (!per_class || !per_cpu) {
		cli_err("%s: out of memory", dir);
		goto out;
	}
	pairs = kinstr_call_pairs__new(r);
	if (!pairs) {
		cli_err("%s: out of memory", dir);
		goto out;
	}
	while ((ret = kinstr_ctf_reader__next(r, &ev, err, sizeof(err))) == 1) {
		if (kinstr_call_pairs__add(pairs, &ev)) {
			cli_err("%s: out of memory", dir);
			goto out;
		}
		per_cpu[ev.stream]++;
		per_class[ev.class_id]++;
		if (!total || ev.ts < first)
			first = ev.ts;
		if (!total || ev.ts > last)
			last = ev.ts;
		total++;
	}
	if (ret < 0) {
		cli_err("%s", err);
		goto out;
	}
	for (i = 0; i < nstreams; i++)
		lost += kinstr_ctf_reader__stream(r, i)->events_discarded;
	if (kinstr_call_pairs__finish(pairs)) {
		cli_err("%s: out of memory", dir);
		goto out;
	}
	if (json) {
		const char *v;

		printf("{\"trace\":");
		cli_json_str(dir);
		printf(",\"uuid\":\"%s\",\"hostname\":", kinstr_ctf_reader__uuid(r));
		v = kinstr_ctf_reader__env(r, "hostname");
		v ? cli_json_str(v) : (void)printf("null");
		printf(",\"kernel_release\":");
		v = kinstr_ctf_reader__env(r, "kernel_release");
		v ? cli_json_str(v) : (void)printf("null");
		printf(",\"clock\":");
		cli_json_str(kinstr_ctf_reader__clock_name(r));
		printf(",\"clock_offset_ns\":%" PRId64 ",\"events\":%" PRIu64 ",\"events_lost\":%" PRIu64,
		       kinstr_ctf_reader__clock_offset_ns(r), total, lost);
		if (total)
			printf(",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64,
			       first, last, last - first);
		else
			printf(",\"first_ns\":null,\"last_ns\":null,\"duration_ns\":null");
		printf(",\"probes\":[");
		for (i = 0, c = 0; i < nclasses; i++) {
			const struct kinstr_ctf_class *k = kinstr_ctf_reader__class(r, i);

			if (!k)
				continue;
			printf("%s{\"probe\":", c++ ? "," : "");
			cli_json_str(k->name);
			printf(",\"id\":%u,\"events\":%" PRIu64 "}", i, per_class[i]);
		}
		printf("],\"cpus\":[");
		for (i = 0; i < nstreams; i++) {
			const struct kinstr_ctf_stream_info *s = kinstr_ctf_reader__stream(r, i);

			printf("%s{\"cpu\":%u,\"file\":", i ? "," : "", s->cpu);
			cli_json_str(s->file);
			printf(",\"packets\":%" PRIu64 ",\"events\":%" PRIu64 ",\"events_lost\":%" PRIu64 "}",
			       s->packets, per_cpu[i], s->events_discarded);
		}
		printf("],\"calls\":[");
		for (i = 0; i < kinstr_call_pairs__cnt(pairs); i++) {
			const struct kinstr_call_latency *l = kinstr_call_pairs__get(pairs, i);

			printf("%s{\"function\":", i ? "," : "");
			cli_json_str(l->function);
			printf(",\"calls\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"mean_ns\":%.1f,\"max_ns\":%" PRIu64
			       ",\"unmatched_entries\":%" PRIu64 ",\"unmatched_returns\":%" PRIu64 "}", l->calls, l->min_ns,
			       l->calls ? (double)l->sum_ns / (double)l->calls : 0.0, l->max_ns, l->unmatched_entries,
			       l->unmatched_returns);
		}
		printf("]}\n");
	} else {
		const char *host = kinstr_ctf_reader__env(r, "hostname");
		const char *rel = kinstr_ctf_reader__env(r, "kernel_release");

		printf("trace:       %s (%s%s%s)\n", dir, host ? host : "?", rel ? ", " : "", rel ? rel : "");
		printf("events:      %" PRIu64 "\n", total);
		printf("events lost: %" PRIu64 "\n", lost);
		if (total) {
			printf("first:       %" PRIu64 " ns (realtime ", first);
			print_realtime(kinstr_ctf_reader__clock_offset_ns(r), first);
			printf(")\nlast:        %" PRIu64 " ns (realtime ", last);
			print_realtime(kinstr_ctf_reader__clock_offset_ns(r), last);
			printf(")\nduration:    %" PRIu64 " ns (%.6f s)\n", last - first, (last - first) / 1e9);
		}
		printf("\n%-40s %14s\n", "PROBE", "EVENTS");
		for (i = 0; i < nclasses; i++) {
			const struct kinstr_ctf_class *k = kinstr_ctf_reader__class(r, i);

			if (k)
				printf("%-40s %14" PRIu64 "\n", k->name, per_class[i]);
		}
		printf("\n%-6s %10s %14s %14s\n", "CPU", "PACKETS", "EVENTS", "LOST");
		for (i = 0; i < nstreams; i++) {
			const struct kinstr_ctf_stream_info *s = kinstr_ctf_reader__stream(r, i);

			printf("%-6u %10" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n", s->cpu, s->packets, per_cpu[i],
			       s->events_discarded);
		}
		if (kinstr_call_pairs__cnt(pairs))
			printf("\n%-40s %10s %12s %14s %12s %10s\n", "CALLS (ENTRY -> %return)", "CALLS", "MIN ns",
			       "MEAN ns", "MAX ns", "UNPAIRED");
		for (i = 0; i < kinstr_call_pairs__cnt(pairs); i++) {
			const struct kinstr_call_latency *l = kinstr_call_pairs__get(pairs, i);

			printf("%-40s %10" PRIu64 " %12" PRIu64 " %14.1f %12" PRIu64 " %10" PRIu64 "\n", l->function, l->calls,
			       l->min_ns, l->calls ? (double)l->sum_ns / (double)l->calls : 0.0, l->max_ns,
			       l->unmatched_entries + l->unmatched_returns);
		}
	}
	status = CLI_OK;
out:
	kinstr_call_pairs__free(pairs);
	free(per_class);
	free(per_cpu);
	kinstr_ctf_reader__close(r);
	return status;
}
