// SPDX-License-Identifier: GPL-2.0
/* kinstr profile FUNC...: time functions from their entry to each of their exits, per thread. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kinstr/timing.h>
#include "cli.h"

static void profile_usage(FILE *f)
{
	fprintf(f, "usage: kinstr profile [options] FUNC...\n\n"
		   "Time kernel functions from their entry to each of their exits (every ret,\n"
		   "return-thunk jump and tail call: every exit site is spliced, no return address is\n"
		   "touched). Per function: calls, inclusive wall time, inclusive on-CPU time (the\n"
		   "time its thread was switched out left out), min/mean/max, and a log2 histogram.\n"
		   "A recursive call counts once, its time with the outermost activation's.\n"
		   "FUNC is a function name, NAME@ADDR (one of several of that name), or a glob\n"
		   "('vfs_*').\n\n"
		   "  -d, --duration SEC  profile for SEC seconds (> 0)\n"
		   "  -c, --command CMD   run CMD and profile only it and the processes it starts\n"
		   "                      (its process group) while it runs; exit with its status\n"
		   "  -p, --pid PID       profile only process PID (its threads; it must exist)\n"
		   "  -i, --interval SEC  refresh the live table every SEC seconds (default 1)\n"
		   "  -s, --sort KEY      wall (default), oncpu, calls, mean or max\n"
		   "      --hist          print each function's latency histogram at the end\n"
		   "      --calls         also time each direct call instruction of each function\n"
		   "                      (from the call to the instruction after it): its time\n"
		   "                      splits into its callees' shares and its own\n"
		   "      --json          print the totals as one JSON object (no live table)\n"
		   "                      (on stdout alone: -c CMD's own output goes to stderr)\n"
		   "      --metrics ADDR:PORT  serve the functions' histograms to Prometheus while timing,\n"
		   "                      as 'kinstr serve --time' does (GET /metrics)\n"
		   "      --folded        print folded stacks for flame graphs: each path of timed\n"
		   "                      functions (outermost first, ';'-separated) and its own wall\n"
		   "                      time in microseconds, i.e. less the time of the timed\n"
		   "                      functions it called (flamegraph.pl, speedscope, ...)\n"
		   "  -o, --output FILE   write the totals to FILE, not stdout (which -c CMD shares)\n"
		   "  -k, --keep-going    a FUNC that cannot be timed (or names nothing) is reported and\n"
		   "                      left out; the others are timed (it fails if every one is)\n"
		   CLI_HELP_MAX_PROBES("  ")
		   "      --no-ftrace     where only an int3 fits after a function's ftrace NOP, start\n"
		   "                      its timer with that int3, not with an ftrace direct call\n"
		   "                      from the NOP (the default; as cheap as a jump)\n"
		   "Without -d or -c, profile until interrupted (Ctrl-C). Interrupt contexts are\n"
		   "timed too unless -p or -c restricts to a process. Interrupted during -c CMD, CMD's\n"
		   "process group gets the signal too and kinstr exits 130 (SIGINT) or 143 (SIGTERM).\n"
		   "The live table needs a terminal (not TERM=dumb).\n");
}

int cmd_profile(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "command", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "sort", required_argument, NULL, 's' },
		{ "hist", no_argument, NULL, 'H' },
		{ "calls", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },
		{ "folded", no_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-ftrace", no_argument, NULL, 'N' },
		{ "max-probes", required_argument, NULL, 'P' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double duration = 0, interval = 1;
	const char *command = NULL, *output = NULL;
	bool json = false, hist = false, folded = false, live, show_calls = false, keep = false;
	const char *metrics_at = NULL, **names = NULL;
	struct cli_metrics_src src = { 0 };
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	const char *sort_key = "wall";
	struct kinstr_timer_stats *st = NULL;
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_timed *timed = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	struct cli_pfunc *pf = NULL;
	unsigned int n = 0, cap = 0, ntimers = 0;
	struct kinstr_dev *dev;
	char err[512];
	int c, i, ret = CLI_FAIL;
	long pid = 0;
	struct cli_run run;

	while ((c = getopt_long(argc, argv, "d:c:p:i:s:o:kh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &duration))
				return CLI_USAGE;
			break;
		case 'c': command = optarg; break;
		case 'p':
			if (cli_parse_pid(optarg, &pid))
				return errno == ESRCH ? CLI_FAIL : CLI_USAGE;
			break;
		case 'm': metrics_at = optarg; break;
		case 'i':
			if (cli_parse_seconds("--interval", optarg, &interval))
				return CLI_USAGE;
			break;
		case 's': sort_key = optarg; break;
		case 'H': hist = true; break;
		case 'C': show_calls = true; break;
		case 'j': json = true; break;
		case 'F': folded = true; break;
		case 'o': output = optarg; break;
		case 'N': popts.no_ftrace = true; break;
		case 'P':
			if (cli_parse_max_probes(optarg, &popts.max_probes))
				return CLI_USAGE;
			break;
		case 'k': keep = true; break;
		case 'h': profile_usage(stdout); return CLI_OK;
		default: profile_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind >= argc || (command && pid)) {
		if (command && pid)
			cli_err("-c and -p both name the process to profile: use one");
		profile_usage(stderr);
		return CLI_USAGE;
	}
	if (!kinstr_timing__key_known(sort_key)) {
		cli_err("--sort: wall, oncpu, calls, mean or max, not '%s'", sort_key);
		return CLI_USAGE;
	}
	for (i = optind; i < argc; i++)
		if (strpbrk(argv[i], "+%")) {
			cli_err("%s: profile takes function names or globs (FUNC, 'vfs_*'), not offsets or %%return",
				argv[i]);
			return CLI_USAGE;
		}
	cli_run__init(&run, command, duration, true);
	cli_run__json(&run, json, output);
	so = (struct cli_session_opts){ .output = output, .metrics_at = metrics_at,
					.metrics_write = cli_metrics__probes, .metrics_ctx = &src, .popts = &popts };
	if ((ret = cli_session__open(&se, &so)) != CLI_OK)
		return ret;
	ret = CLI_FAIL;
	dev = se.dev, ps = se.ps, pl = se.pl;
	timed = calloc(KINSTR_AREA_MAX_PROBES / 2, sizeof(*timed));
	if (!timed)
		goto out;
	for (i = optind; i < argc; i++) {
		struct kinstr_why why;
		size_t got, skipped, j;

		if (kinstr_plan__time_spec(pl, argv[i], n, timed, KINSTR_AREA_MAX_PROBES / 2, &got, &skipped, &why)) {
			cli_err("%s", why.msg);
			if (keep)
				continue;
			goto out;
		}
		if (n + got > cap) {
			struct cli_pfunc *g = realloc(pf, (cap = n + got + 64) * sizeof(*pf));

			if (!g)
				goto out;
			pf = g;
		}
		for (j = 0; j < got; j++, n++) {
			memset(&pf[n], 0, sizeof(pf[n]));
			pf[n].f = timed[j].f;
			pf[n].exits = timed[j].exits;
		}
		if (skipped)
			fprintf(stderr, "kinstr: %s: %zu functions timed, %zu could not be (every exit must be probeable)\n",
				argv[i], got, skipped);
	}
	if (!n) {	/* --keep-going: each one said why */
		cli_err("no function left to time");
		goto out;
	}
	ntimers = n;
	for (i = 0; show_calls && i < (int)n; i++) {
		pf[i].sites = calloc(CLI_MAX_CALLS, sizeof(*pf[i].sites));
		if (!pf[i].sites)
			goto out;
		pf[i].nsites = kinstr_plan__time_calls(pl, pf[i].f, &ntimers, pf[i].sites, CLI_MAX_CALLS);
	}
	st = calloc(ntimers, sizeof(*st));
	if (!st)
		goto out;
	if (command) {	/* gated: the timers follow its process group from its first instruction */
		if (cli_run__spawn(&run))
			goto out;
		pid = run.child;
	}
	c = kinstr_timers__create(dev, ntimers, (uint32_t)pid, (folded ? KINSTR_TIMERS_F_PATHS : 0) |
				  (command ? KINSTR_TIMERS_F_PGRP : 0));
	if (c) {
		cli_err("cannot create %u timers: %s%s", ntimers, strerror(-c),
			c == -EOPNOTSUPP ? " (the module found no sched_switch tracepoint)" : "");
		goto out;
	}
	cli_catch_signals();
	if (kinstr_probeset__install(ps, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	if (!json)
		cli_profile__installed(ps, n, command || duration > 0);
	cli_run__go(&run);
	cli_run__begin(&run);
	if (metrics_at) {	/* the functions' timers, scraped while the run goes on */
		names = calloc(n, sizeof(*names));
		for (i = 0; names && i < (int)n; i++)
			names[i] = pf[i].f->name;
		src = (struct cli_metrics_src){ .dev = dev, .ps = ps, .timed = names, .ntimed = names ? n : 0,
						.scrapes = &se.m.scrapes };
		cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	}
	live = !json && !folded && !command && cli_term_ok();
	{
		struct cli_profile_live lc = { dev, pf, n, ntimers, st, show_calls, sort_key };

		cli_run__wait(&run, interval, live ? cli_profile__live : NULL, &lc);
	}
	cli_run__stop(&run);
	/* probes out first: no call is half-timed in what we read */
	kinstr_probeset__remove(ps);
	if (kinstr_timers__read(dev, 0, ntimers, st)) {
		cli_err("cannot read the timers: %s", strerror(errno));
		goto out;
	}
	if (cli_output_begin(se.out_fd, output))
		goto out;
	if (folded) {
		if (cli_profile__folded(dev, pf, n))
			goto out;
	} else if (json) {
		cli_profile__json(pf, n, st, cli_now() - run.t0, run.status, show_calls);
	} else {
		cli_profile__table(pf, n, st, hist, show_calls, sort_key);
	}
	if (cli_output_end(output))
		goto out;
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(st);
	for (i = 0; pf && i < (int)n; i++)
		free(pf[i].sites);
	free(pf);
	free(timed);
	cli_session__close(&se);
	free(names);
	return ret;
}
