// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr serve: probes kept in while a Prometheus server scrapes them. Each SPEC is counted, each
 * --time FUNC timed (profile's timers); the endpoint (cli/metrics.c) reads the module's counters
 * afresh at every scrape.
 */
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include "cli.h"

#define SERVE_DEFAULT CLI_METRICS_DEFAULT
#define SERVE_MAX_TIMED 256

static const struct cli_opt serve_opts[] = {
	{ 0, "listen", 'l', "ADDR:PORT", "where to listen (default " SERVE_DEFAULT ", the loopback; 0.0.0.0:PORT for "
					 "every address)" },
	{ 0, "time", 't', "FUNC", "time FUNC (repeatable)" },
	{ .common = CLI_OPT_COMMAND, .help = "serve while CMD runs, exit with its status" },
	{ .common = CLI_OPT_DURATION, .help = "serve for SEC seconds (without -c or -d: until Ctrl-C/SIGTERM)" },
	{ .common = CLI_OPT_MAX_PROBES },
	CLI_OPTS_SCOPE,
	{ 0 },
};

static const struct cli_usage serve_usage = {
	.name = "serve", .synopsis = "[--listen ADDR:PORT] [--time FUNC]... [-c CMD|-d SEC] [SPEC...]", .verb = "serve",
	.intro = "Keep probes in and serve their numbers to Prometheus: GET /metrics answers in the\n"
		 "text exposition format (0.0.4). Each SPEC (as for 'kinstr count') is counted,\n"
		 "kinstr_probe_hits_total{probe,class}; each --time FUNC (a name or glob, as for\n"
		 "'kinstr profile') is timed from entry to every exit, as the histogram\n"
		 "kinstr_function_duration_seconds{function} (log2 buckets; its _count is the\n"
		 "calls); kinstr_probe_missed_total counts hits whose action\n"
		 "the recursion guard skipped, kinstr_info{version,module,abi,kernel} says what runs.\n\n",
	.outro = "The probes come out on SIGINT/SIGTERM, at the end, and if kinstr dies.\n",
	.opts = serve_opts, .min_args = 0, .max_args = -1,
};

struct serve_own {
	const char *listen_at, **times;
	int ntimes;
};

static int serve_opt(void *ctx, int key, const char *arg)
{
	struct serve_own *o = ctx;

	if (key == 'l')
		o->listen_at = arg;
	else if (key == 't')
		o->times[o->ntimes++] = arg;
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct serve_own o = { .listen_at = SERVE_DEFAULT };
	const char **names = NULL;
	struct cli_common co;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct cli_metrics_src src = { 0 };
	struct kinstr_timed *timed = NULL;
	struct kinstr_plan *pl = NULL;
	int i, ret;
	struct cli_run run;
	size_t j;

	o.times = calloc((size_t)argc, sizeof(*o.times));
	if (!o.times)
		return CLI_FAIL;
	cli_common__init(&co);
	ret = cli_opts__parse(&serve_usage, argc, argv, &co, serve_opt, &o);
	if (ret == CLI_GO_ON && optind >= argc && !o.ntimes) {
		cli_opts__usage(&serve_usage, stderr);
		ret = CLI_USAGE;
	}
	if (ret != CLI_GO_ON) {
		free(o.times);
		return ret;
	}
	cli_common__plan_opts(&co, &popts);
	cli_run__init(&run, co.command, co.duration, false);
	/* the address first: one that cannot be bound fails before anything is patched */
	so = (struct cli_session_opts){ .metrics_opt = "--listen", .metrics_at = o.listen_at,
					.metrics_write = cli_metrics__probes, .metrics_ctx = &src, .popts = &popts,
					.scope = co.dry ? NULL : &co, .specs = argv + optind, .nspecs = argc - optind };
	ret = cli_session__open(&se, &so);
	if (ret != CLI_OK)
		goto out;
	ret = CLI_FAIL;
	src.dev = se.dev, src.ps = se.ps, pl = se.pl;
	timed = calloc(SERVE_MAX_TIMED, sizeof(*timed));
	names = calloc(SERVE_MAX_TIMED, sizeof(*names));
	if (!timed || !names)
		goto out;
	for (i = optind; i < argc; i++)
		if (cli_add_spec(pl, &se.sp[i - optind]))
			goto out;
	src.ncount = kinstr_probeset__cnt(src.ps);
	for (i = 0; i < o.ntimes; i++) {
		struct kinstr_why why;
		size_t got, skipped;

		if (kinstr_plan__time_spec(pl, o.times[i], (unsigned int)src.ntimed, timed + src.ntimed,
					   SERVE_MAX_TIMED - src.ntimed, &got, &skipped, &why)) {
			cli_err("%s", why.msg);
			goto out;
		}
		src.ntimed += got;
	}
	for (j = 0; j < src.ntimed; j++)
		names[j] = timed[j].f->name;
	src.timed = names;
	src.scrapes = &se.m.scrapes;
	if (src.ntimed) {
		int r = kinstr_timers__create(src.dev, (uint32_t)src.ntimed, 0, 0);

		if (r) {
			cli_err("cannot create %zu timers: %s", src.ntimed, strerror(-r));
			goto out;
		}
	}
	if (cli_run__start(&run, src.ps))
		goto out;
	fprintf(stderr, "kinstr: serving %zu probes (%zu counted, %zu functions timed) at http://%s/metrics%s\n",
		kinstr_probeset__cnt(src.ps), src.ncount, src.ntimed, o.listen_at, co.command || co.duration ? "" : "; Ctrl-C to stop");
	cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	cli_run__wait(&run, 1, NULL, NULL);
	cli_run__stop(&run);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	cli_session__close(&se);	/* removes the probes */
	free(timed);
	free(names);
	free(o.times);
	return ret;
}
