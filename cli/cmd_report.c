// SPDX-License-Identifier: GPL-2.0
/* kinstr report [--json] DIR: summarise a CTF trace kinstr wrote; --html OUT FILE...: a page of saved outputs. */
#include <errno.h>
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

enum { O_HTML = CLI_KEY_OWN, O_TITLE, O_TRACE_DAT };

static const struct cli_opt report_opts[] = {
	{ .common = CLI_OPT_JSON, .help = "print one JSON object instead of tables" },
	{ 0, "html", O_HTML, "OUT", "write one self-contained HTML page (it opens with no network) of saved kinstr "
				    "outputs: each FILE a --folded stack file (kinstr profile, count --by stack) "
				    "drawn as an interactive flame graph, or the --json of profile or span (a table "
				    "and a histogram per function or span), count (a table), count --by stack (a "
				    "flame graph) or cover (each function's blocks, hit or not); or a trace's DIR: "
				    "its events on a time line per CPU (every event counted; at most 20000 drawn, "
				    "evenly spaced)" },
	{ 0, "title", O_TITLE, "TEXT", "the page's title (default: kinstr report)" },
	{ 0, "trace-dat", O_TRACE_DAT, "OUT", "write the trace in DIR again as trace-cmd's trace.dat (version 6), "
					      "for 'trace-cmd report -i OUT' and KernelShark" },
	{ 0 },
};

static const struct cli_usage report_usage = {
	.name = "report", .verb = "report",
	.synopsis = "[--json] DIR\n"
		    "       kinstr report --html OUT [--title TEXT] FILE...\n"
		    "       kinstr report --trace-dat OUT DIR",
	.intro = "Summarise the CTF trace in DIR (written by kinstr): events per probe (event class)\n"
		 "and per CPU, the time span (first and last event timestamp in ns of the trace's\n"
		 "clock, and their realtime), and the events the tracer lost (each CPU's final\n"
		 "events_discarded count, and their sum). Every packet and event is decoded and\n"
		 "checked; a truncated or corrupted trace is an error (exit status 1). Where FUNC\n"
		 "and FUNC%return are both traced, their events are paired per thread in time order:\n"
		 "calls, min/mean/max ns from entry to return, events left unpaired.\n\n",
	.opts = report_opts, .min_args = 1, .max_args = -1,
	.outro = "To see the events themselves: babeltrace2 DIR\n",
};

struct report_own {
	const char *html, *title, *dat;
};

static int report_opt(void *ctx, int key, const char *arg)
{
	struct report_own *o = ctx;

	if (key == O_HTML)
		o->html = arg;
	else if (key == O_TITLE)
		o->title = arg;
	else if (key == O_TRACE_DAT)
		o->dat = arg;
	return 0;
}

static void print_realtime(int64_t offset, uint64_t ts)
{
	int64_t rt = offset + (int64_t)ts;
	uint64_t a = rt < 0 ? -(uint64_t)rt : (uint64_t)rt;

	printf("%s%" PRIu64 ".%09" PRIu64, rt < 0 ? "-" : "", a / 1000000000, a % 1000000000);
}

int cmd_report(int argc, char **argv)
{
	struct kinstr_call_pairs *pairs = NULL;
	struct kinstr_ctf_reader *r;
	struct kinstr_ctf_event ev;
	uint64_t *per_class = NULL, *per_cpu = NULL, total = 0, lost = 0, first = 0, last = 0;
	unsigned int i, nclasses, nstreams;
	struct report_own o = { .title = "kinstr report" };
	struct cli_common co;
	bool json;
	int c, ret, status = CLI_FAIL;
	struct kinstr_why why;
	const char *dir;

	cli_common__init(&co);
	ret = cli_opts__parse(&report_usage, argc, argv, &co, report_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	json = co.json;
	if (o.html) {
		if (json) {
			cli_opts__usage(&report_usage, stderr);
			return CLI_USAGE;
		}
		return cli_report__html(o.html, o.title, argc - optind, argv + optind);
	}
	if (optind != argc - 1) {
		cli_opts__usage(&report_usage, stderr);
		return CLI_USAGE;
	}
	dir = argv[optind];
	if (o.dat) {
		uint64_t n;

		ret = kinstr_tracedat__from_ctf(dir, o.dat, &n, &why);
		if (ret) {
			cli_err("%s", why.msg);
			return CLI_FAIL;
		}
		fprintf(stderr, "kinstr: wrote %s: %" PRIu64 " events\n", o.dat, n);
		return CLI_OK;
	}
	r = kinstr_ctf_reader__open(dir, &why);
	if (!r) {
		cli_err("%s", why.msg);
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
	while ((ret = kinstr_ctf_reader__next(r, &ev, &why)) == 1) {
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
		cli_err("%s", why.msg);
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
