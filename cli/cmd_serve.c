// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr serve: probes kept in while a Prometheus server scrapes them. Each SPEC is counted, each
 * --time FUNC timed (profile's timers); the endpoint (cli/metrics.c) reads the module's counters
 * afresh at every scrape.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include "cli.h"

#define SERVE_DEFAULT CLI_METRICS_DEFAULT
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
	const char *listen_at = SERVE_DEFAULT, *command = NULL, **times = NULL, **names = NULL;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct cli_metrics_src src = { 0 };
	struct kinstr_timed *timed = NULL;
	struct kinstr_plan *pl = NULL;
	int c, i, ntimes = 0, ret = CLI_FAIL;
	double duration = 0;
	struct cli_run run;
	size_t j;
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
	so = (struct cli_session_opts){ .metrics_opt = "--listen", .metrics_at = listen_at,
					.metrics_write = cli_metrics__probes, .metrics_ctx = &src, .popts = &popts };
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
		if (cli_add_spec(pl, argv[i]))
			goto out;
	src.ncount = kinstr_probeset__cnt(src.ps);
	for (i = 0; i < ntimes; i++) {
		struct kinstr_why why;
		size_t got, skipped;

		if (kinstr_plan__time_spec(pl, times[i], (unsigned int)src.ntimed, timed + src.ntimed,
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
		kinstr_probeset__cnt(src.ps), src.ncount, src.ntimed, listen_at, command || duration ? "" : "; Ctrl-C to stop");
	cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	cli_run__wait(&run, 1, NULL, NULL);
	cli_run__stop(&run);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	cli_session__close(&se);	/* removes the probes */
	free(timed);
	free(names);
	free(times);
	return ret;
usage:
	free(times);
	return CLI_USAGE;
}
