// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr span A B: the time from a hit at A to the next hit at B of the same key, paired and
 * summed in kinstr.ko (kmod/actions/span.c), read by lib/results/span.c.
 */
#include <errno.h>
#include <unistd.h>
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

enum { O_KEY = CLI_KEY_OWN, O_HIST, O_CLOCK };

static const struct cli_opt span_opts[] = {
	{ 0, "key", O_KEY, "KEY", "tid: pair within a thread (default)\npid: within a process\nvalue: by each point's "
				  "first value, e.g. a pointer passed from A to B:\n  kinstr span --key value "
				  "'FUNC_A(skb)' 'FUNC_B+0x10(%rdi)'" },
	{ .common = CLI_OPT_COMMAND, .help = "run CMD, measure while it runs, exit with its status" },
	{ .common = CLI_OPT_DURATION },
	{ 0, "hist", O_HIST, NULL, "print the histogram of the intervals" },
	{ 0, "clock", O_CLOCK, "CLOCK", "mono (default): CLOCK_MONOTONIC; local: local_clock(), cheaper, "
					"per CPU (a span from one CPU to another may be off by the CPUs' skew)" },
	{ .common = CLI_OPT_JSON, .help = "one JSON object (on stdout alone: -c CMD's own output goes to stderr)" },
	{ .common = CLI_OPT_METRICS, .help = "serve the spans to Prometheus while they are measured (GET /metrics: a "
					     "histogram, the unmatched, lost and overflow counters; a scrape counts "
					     "every interval ended so far)" },
	{ .common = CLI_OPT_WHERE },
	CLI_OPTS_SCOPE,
	{ .common = CLI_OPT_CMD_ONLY },
	{ 0 },
};

static const struct cli_usage span_usage = {
	.name = "span", .synopsis = "[-c CMD|-d SEC] [--key tid|pid|value] [--hist] [--json] [--metrics ADDR:PORT] A B",
	.verb = "measure",
	.intro = "The time from each hit at A to the next hit at B of the same key, per key and in\n"
		 "total: count, min, mean, max (ns), and with --hist a log2 histogram. A and B are\n"
		 "probe specs as for 'kinstr trace' (FUNC, FUNC+0xOFF, FUNC%return, a glob; an interior\n"
		 "instruction too), each with its values: SPEC(VALUE,...), and a predicate:\n"
		 "SPEC(VALUE,...) if EXPR (a hit where EXPR does not hold is no start or stop). Each\n"
		 "hit is paired and summed in kinstr.ko: no trace record, nothing lost on the way.\n\n",
	.outro = "A start with no stop (or replaced by the next start of its key) and a stop with no\n"
		 "start are counted, as are hits the probes' recursion guard skipped (lost) and starts\n"
		 "or keys past the bounds of 65,536 open keys and the rows per CPU (overflow; an\n"
		 "interval whose key found no row is still in the total).\n",
	.opts = span_opts, .min_args = 2, .max_args = 2,
	.examples = "kinstr span --hist -d 5 vfs_read 'vfs_read%return'\n"
		    "vfs_read's latency per thread for 5 seconds, with a histogram\n",
};

struct span_own {
	int key;
	bool hist;
	struct kinstr_trace_opts *topts;
};

static int span_opt(void *ctx, int key, const char *arg)
{
	struct span_own *o = ctx;

	switch (key) {
	case O_KEY:
		o->key = kinstr_tally_key__parse(arg);
		if (o->key != KINSTR_TALLY_TID && o->key != KINSTR_TALLY_PID && o->key != KINSTR_TALLY_VALUE) {
			cli_err("--key: tid, pid or value, not '%s'", arg);
			return CLI_USAGE;
		}
		break;
	case O_HIST: o->hist = true; break;
	case O_CLOCK:
		if (cli_parse_clock(arg, &o->topts->local_clock))
			return CLI_USAGE;
		break;
	}
	return 0;
}

int cmd_span(int argc, char **argv)
{
	struct kinstr_trace_opts topts = { .sz = sizeof(topts) };
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_spanner *sp = NULL;
	struct cli_common co;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct cli_span_metrics sm = { 0 };
	struct span_own o = { .key = KINSTR_TALLY_TID, .topts = &topts };
	unsigned int na;
	size_t npa, j;
	uint64_t filtered;
	int i, ret, r;
	struct cli_run run;

	cli_common__init(&co);
	ret = cli_opts__parse(&span_usage, argc, argv, &co, span_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	ret = CLI_FAIL;
	for (i = optind; i < argc; i++)
		if (o.key == KINSTR_TALLY_VALUE && !strchr(argv[i], '(')) {
			cli_err("--key value: '%s' names no value: give SPEC(VALUE) at both points", argv[i]);
			return CLI_USAGE;
		}
	if (!strcmp(argv[optind], argv[optind + 1])) {
		cli_err("span: A and B are the same point ('%s')", argv[optind]);
		return CLI_USAGE;
	}
	popts.where = co.where;
	cli_run__init(&run, co.command, co.duration, false);
	cli_run__json(&run, co.json, NULL);
	/* the endpoint bound and listening before anything is patched */
	so = (struct cli_session_opts){ .metrics_at = co.metrics_at, .metrics_write = cli_metrics__span,
					.metrics_ctx = &sm, .popts = &popts, .trace_events = SPAN_MAX_EVENTS,
					.scope = co.dry ? NULL : &co, .specs = argv + optind, .nspecs = 2, .trace_specs = true,
					.run = &run };
	if ((ret = cli_session__open(&se, &so)) != CLI_OK)
		return ret;
	ret = CLI_FAIL;
	if (cli_session__add_trace(&se, &se.sp[0]))
		goto out;
	na = se.nev;
	npa = kinstr_probeset__cnt(se.ps);
	if (cli_session__add_trace(&se, &se.sp[1]))
		goto out;
	if (se.nev == na) {
		/* the same probe name at both points is one event: no way to tell a start from a stop */
		cli_err("span: A and B are the same point ('%s')", argv[optind]);
		ret = CLI_USAGE;
		goto out;
	}
	for (j = 0; j < kinstr_probeset__cnt(se.ps); j++)
		kinstr_probeset__set_span(se.ps, j, j >= npa);
	for (i = 0; o.key == KINSTR_TALLY_VALUE && (unsigned int)i < se.nev; i++)
		if (!se.ev[i].nvals || se.ev[i].vals[0].v.kind == KINSTR_VAL_STR) {
			cli_err("span: --key value: every point needs an integer value first");
			goto out;
		}
	sp = kinstr_spanner__new_dev(se.dev, se.ev, na, se.nev, (unsigned int)o.key, topts.local_clock);
	if (!sp) {
		cli_err("span: cannot create the spans in kinstr.ko: %s%s", strerror(errno),
			errno == EINVAL || errno == ENOTTY ? " (a kinstr.ko older than ABI 0.18?)" : "");
		goto out;
	}
	if (!co.json)
		fprintf(stderr, "kinstr: span %s -> %s: %zu probes%s\n", argv[optind], argv[optind + 1],
			kinstr_probeset__cnt(se.ps), co.command || co.duration ? "" : "; Ctrl-C to stop");
	if (cli_run__start(&run, se.ps))
		goto out;
	if (co.metrics_at) {
		sm = (struct cli_span_metrics){ .dev = se.dev, .sp = sp, .a = argv[optind], .b = argv[optind + 1] };
		cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	}
	cli_run__wait(&run, 0.2, NULL, NULL);
	cli_run__stop(&run);
	kinstr_spanner__add_lost(sp, kinstr_probeset__missed_total(se.ps));	/* (read while the probes are in) */
	filtered = kinstr_probeset__filtered_total(se.ps);	/* while the area is there to ask */
	cli_session__quiesce(&se);	/* then no probe writes the tables: each interval is in them */
	r = kinstr_spanner__drain(sp);
	if (r) {
		cli_err("span: reading the spans: %s", strerror(-r));
		goto out;
	}
	cli_span__print(sp, argv[optind], argv[optind + 1], (unsigned int)o.key, o.hist, co.json, cli_now() - run.t0,
			run.status, filtered);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	cli_metrics__close(&se.m);	/* its scrapes read the spanner */
	kinstr_spanner__free(sp);
	cli_session__close(&se);
	return ret;
}
