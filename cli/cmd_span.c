// SPDX-License-Identifier: GPL-2.0
/* kinstr span A B: the time from a hit at A to the next hit at B of the same key (lib/results/span.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/btf.h>
#include <kinstr/plan.h>
#include <kinstr/prom.h>
#include <kinstr/span.h>
#include <kinstr/tally.h>
#include <kinstr/trace.h>
#include "cli.h"

#define SPAN_MAX_EVENTS 4096

static void span_usage(FILE *f)
{
	fprintf(f, "usage: kinstr span [-c CMD|-d SEC] [--key tid|pid|value] [--hist] [--json] [--metrics ADDR:PORT] A B\n\n"
		   "The time from each hit at A to the next hit at B of the same key, per key and in\n"
		   "total: count, min, mean, max (ns), and with --hist a log2 histogram. A and B are\n"
		   "probe specs as for 'kinstr trace' (FUNC, FUNC+0xOFF, FUNC%%return, a glob; an interior\n"
		   "instruction too), each with its values: SPEC(VALUE,...).\n\n"
		   "  --key tid    pair within a thread (default)\n"
		   "  --key pid    within a process\n"
		   "  --key value  by each point's first value, e.g. a pointer passed from A to B:\n"
		   "               kinstr span --key value 'FUNC_A(skb)' 'FUNC_B+0x10(%%rdi)'\n"
		   "  -c, --command CMD   run CMD, measure while it runs, exit with its status\n"
		   "  -d, --duration SEC  measure for SEC seconds (without -c or -d: until Ctrl-C)\n"
		   "      --hist          print the histogram of the intervals\n"
		   "      --clock CLOCK   mono (default) or local, as for 'kinstr trace'\n"
		   "      --json          one JSON object\n"
		   "                      (on stdout alone: -c CMD's own output goes to stderr)\n"
		   "      --metrics ADDR:PORT  serve the spans to Prometheus while they are measured\n"
		   "                      (GET /metrics: a histogram, the unmatched, lost and overflow\n"
		   "                      counters; a scrape counts what is older than the newest hit\n"
		   "                      less 100 ms, the totals at the end all)\n"
		   "A start with no stop (or replaced by the next start of its key) and a stop with no\n"
		   "start are counted, as are hits the trace buffers had no room for (lost) and records\n"
		   "past the bound of 4 M (overflow).\n");
}

static void stats_json(const struct kinstr_span_stats *st)
{
	unsigned int b, first = 1;

	printf("\"count\":%llu,\"min_ns\":%llu,\"mean_ns\":%.1f,\"max_ns\":%llu,\"hist\":{", (unsigned long long)st->count,
	       (unsigned long long)st->min, st->count ? (double)st->sum / (double)st->count : 0.0,
	       (unsigned long long)st->max);
	for (b = 0; b < KINSTR_SPAN_HIST; b++)
		if (st->hist[b]) {
			printf("%s\"%llu\":%llu", first ? "" : ",", b ? 1ull << (b - 1) : 0ull, (unsigned long long)st->hist[b]);
			first = 0;
		}
	printf("}");
}

static void hist_print(const struct kinstr_span_stats *st)
{
	uint64_t most = 0;
	unsigned int b, lo = KINSTR_SPAN_HIST, hi = 0;

	for (b = 0; b < KINSTR_SPAN_HIST; b++)
		if (st->hist[b]) {
			most = st->hist[b] > most ? st->hist[b] : most;
			lo = b < lo ? b : lo;
			hi = b;
		}
	for (b = lo; b <= hi && most; b++) {
		char bar[41];
		unsigned int w = (unsigned int)(40 * st->hist[b] / most);

		memset(bar, '@', w);
		bar[w] = 0;
		printf("  [%llu, %llu) ns %12llu |%-40s|\n", b ? 1ull << (b - 1) : 0ull, 1ull << b,
		       (unsigned long long)st->hist[b], bar);
	}
}

static void span_print(const struct kinstr_spanner *s, const char *a, const char *b, unsigned int key, bool hist,
		       bool json, double secs, int status)
{
	const struct kinstr_span_result *r = kinstr_spanner__result(s);
	size_t i, n = kinstr_spanner__row_cnt(s);

	if (json) {
		printf("{\"from\":");
		cli_json_str(a);
		printf(",\"to\":");
		cli_json_str(b);
		printf(",\"key\":\"%s\",\"seconds\":%.3f,\"total\":{", kinstr_tally_key__str(key), secs);
		stats_json(&r->total);
		printf("},\"keys\":[");
		for (i = 0; i < n; i++) {
			const struct kinstr_span_row *row = kinstr_spanner__row(s, i);

			printf("%s{\"%s\":%llu,\"comm\":", i ? "," : "", kinstr_tally_key__str(key),
			       (unsigned long long)row->key);
			cli_json_str(row->comm);
			printf(",");
			stats_json(&row->st);
			printf("}");
		}
		printf("],\"unmatched_starts\":%llu,\"unmatched_stops\":%llu,\"lost\":%llu,\"overflow\":%llu,\"status\":%d}\n",
		       (unsigned long long)r->unmatched_starts, (unsigned long long)r->unmatched_stops,
		       (unsigned long long)r->lost, (unsigned long long)r->overflow, status);
		return;
	}
	printf("%s -> %s, by %s\n", a, b, kinstr_tally_key__str(key));
	printf("%-20s %-16s %10s %12s %14s %12s\n", key == KINSTR_TALLY_VALUE ? "VALUE" : key == KINSTR_TALLY_PID ? "PID" : "TID",
	       "COMM", "COUNT", "MIN ns", "MEAN ns", "MAX ns");
	for (i = 0; i < n; i++) {
		const struct kinstr_span_row *row = kinstr_spanner__row(s, i);
		char k[24];

		snprintf(k, sizeof(k), key == KINSTR_TALLY_VALUE ? "0x%llx" : "%llu", (unsigned long long)row->key);
		printf("%-20s %-16s %10llu %12llu %14.1f %12llu\n", k, row->comm, (unsigned long long)row->st.count,
		       (unsigned long long)row->st.min, (double)row->st.sum / (double)row->st.count,
		       (unsigned long long)row->st.max);
	}
	printf("total: %llu spans, min %llu ns, mean %.1f ns, max %llu ns; unmatched: %llu starts, %llu stops; "
	       "lost %llu, overflow %llu\n", (unsigned long long)r->total.count, (unsigned long long)r->total.min,
	       r->total.count ? (double)r->total.sum / (double)r->total.count : 0.0, (unsigned long long)r->total.max,
	       (unsigned long long)r->unmatched_starts, (unsigned long long)r->unmatched_stops,
	       (unsigned long long)r->lost, (unsigned long long)r->overflow);
	if (hist)
		hist_print(&r->total);
}

/* What a scrape reads: the spans settled so far (lib/results/span.c). */
struct span_metrics {
	struct kinstr_dev *dev;
	struct kinstr_spanner *sp;
	const char *a, *b;
	uint64_t scrapes;
};

#define SPAN_SETTLE_NS 100000000ull	/* far more than a probe's write of its record takes */

static int span_metrics_write(void *ctx, FILE *out)
{
	struct span_metrics *m = ctx;
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

static void span_tick(void *ctx, double dt)
{
	(void)dt;
	kinstr_spanner__consume(ctx);	/* an error shows again at the drain */
}

int cmd_span(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "command", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "key", required_argument, NULL, 'K' },
		{ "hist", no_argument, NULL, 'H' },
		{ "clock", required_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kinstr_trace_opts topts = { .sz = sizeof(topts) };
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_trace_event *ev = NULL;
	struct kinstr_spanner *sp = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_trace *t = NULL;
	struct kinstr_plan *pl = NULL;
	struct kinstr_btf *btf = NULL;
	struct kinstr_dev *dev = NULL;
	const char *command = NULL, *metrics_at = NULL;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct span_metrics sm = { 0 };
	double duration = 0;
	bool json = false, hist = false;
	unsigned int na = 0, nev = 0;
	int c, i, key = KINSTR_TALLY_TID, ret = CLI_FAIL, r;
	struct cli_run run;
	char err[512];

	while ((c = getopt_long(argc, argv, "c:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': command = optarg; break;
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &duration))
				return CLI_USAGE;
			break;
		case 'K':
			key = kinstr_tally_key__parse(optarg);
			if (key != KINSTR_TALLY_TID && key != KINSTR_TALLY_PID && key != KINSTR_TALLY_VALUE) {
				cli_err("--key: tid, pid or value, not '%s'", optarg);
				return CLI_USAGE;
			}
			break;
		case 'H': hist = true; break;
		case 'C':
			if (cli_parse_clock(optarg, &topts.local_clock))
				return CLI_USAGE;
			break;
		case 'j': json = true; break;
		case 'm': metrics_at = optarg; break;
		case 'h': span_usage(stdout); return CLI_OK;
		default: span_usage(stderr); return CLI_USAGE;
		}
	}
	if (argc - optind != 2) {
		span_usage(stderr);
		return CLI_USAGE;
	}
	for (i = optind; i < argc; i++) {	/* the specs' syntax before anything is opened */
		struct kinstr_spec s;

		if (kinstr_spec__parse_trace(argv[i], &s, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_USAGE;
		}
		if (key == KINSTR_TALLY_VALUE && !strchr(argv[i], '(')) {
			cli_err("--key value: '%s' names no value: give SPEC(VALUE) at both points", argv[i]);
			return CLI_USAGE;
		}
	}
	if (!strcmp(argv[optind], argv[optind + 1])) {
		cli_err("span: A and B are the same point ('%s')", argv[optind]);
		return CLI_USAGE;
	}
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, json, NULL);
	ev = calloc(SPAN_MAX_EVENTS, sizeof(*ev));
	if (!ev)
		return CLI_FAIL;
	/* the endpoint bound and listening before anything is patched */
	so = (struct cli_session_opts){ .metrics_at = metrics_at, .metrics_write = span_metrics_write,
					.metrics_ctx = &sm, .popts = &popts };
	if ((ret = cli_session__open(&se, &so)) != CLI_OK) {
		free(ev);
		return ret;
	}
	ret = CLI_FAIL;
	dev = se.dev, ps = se.ps, pl = se.pl;
	btf = kinstr_btf__open(NULL);
	if (cli_add_trace(pl, argv[optind], btf, ev, &nev, SPAN_MAX_EVENTS))
		goto out;
	na = nev;
	if (cli_add_trace(pl, argv[optind + 1], btf, ev, &nev, SPAN_MAX_EVENTS))
		goto out;
	if (nev == na) {
		/* the same probe name at both points is one event: no way to tell a start from a stop */
		cli_err("span: A and B are the same point ('%s')", argv[optind]);
		ret = CLI_USAGE;
		goto out;
	}
	t = kinstr_trace__create(dev, &topts);
	sp = t ? kinstr_spanner__new(t, ev, na, nev, (unsigned int)key, 0) : NULL;
	if (!sp) {
		cli_err("span: %s", errno == EINVAL ? "--key value: every point needs an integer value first" :
				    strerror(errno));
		goto out;
	}
	if (!json)
		fprintf(stderr, "kinstr: span %s -> %s: %zu probes%s\n", argv[optind], argv[optind + 1],
			kinstr_probeset__cnt(ps), command || duration ? "" : "; Ctrl-C to stop");
	if (cli_run__start(&run, ps))
		goto out;
	if (metrics_at) {
		sm = (struct span_metrics){ .dev = dev, .sp = sp, .a = argv[optind], .b = argv[optind + 1] };
		cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	}
	cli_run__wait(&run, 0.05, span_tick, sp);
	cli_run__stop(&run);
	kinstr_probeset__remove(ps);	/* then every handler finished: the rest is in the buffers */
	kinstr_dev__sync(dev);
	r = kinstr_spanner__drain(sp);
	if (r) {
		cli_err("span: reading the trace buffers: %s", strerror(-r));
		goto out;
	}
	span_print(sp, argv[optind], argv[optind + 1], (unsigned int)key, hist, json, cli_now() - run.t0, run.status);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	cli_metrics__close(&se.m);	/* its scrapes read the spanner */
	kinstr_spanner__free(sp);
	cli_session__unplan(&se);	/* removes the probes */
	kinstr_trace__free(t);
	kinstr_btf__close(btf);
	cli_session__close(&se);
	free(ev);
	return ret;
}
