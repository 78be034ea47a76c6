// SPDX-License-Identifier: GPL-2.0
/* kinstr profile FUNC...: time functions from their entry to each of their exits, per thread. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kinstr/cover.h>
#include <kinstr/timing.h>
#include "cli.h"

enum { O_HIST = CLI_KEY_OWN, O_CALLS, O_FOLDED, O_BY, O_CACHE };

static const struct cli_opt profile_opts[] = {
	{ .common = CLI_OPT_DURATION, .help = "profile for SEC seconds (> 0)" },
	{ .common = CLI_OPT_COMMAND, .help = "run CMD and profile only it and the processes it starts (its process "
					     "group) while it runs; exit with its status" },
	{ .common = CLI_OPT_INTERVAL },
	{ 0, "sort", 's', "KEY", "wall (default), oncpu, calls, mean or max" },
	{ 0, "hist", O_HIST, NULL, "print each function's latency histogram at the end" },
	{ 0, "calls", O_CALLS, NULL, "also time each direct call instruction of each function (from the call to the "
				     "instruction after it): its time splits into its callees' shares and its own" },
	{ .common = CLI_OPT_JSON, .help = "print the totals as one JSON object (no live table) (on stdout alone: -c "
					  "CMD's own output goes to stderr)" },
	{ .common = CLI_OPT_METRICS, .help = "serve the functions' histograms to Prometheus while timing, as 'kinstr "
					     "serve --time' does (GET /metrics)" },
	{ 0, "folded", O_FOLDED, NULL, "print folded stacks for flame graphs: each path of timed functions (outermost "
				       "first, ';'-separated) and its own wall time in microseconds, i.e. less the "
				       "time of the timed functions it called (flamegraph.pl, speedscope, ...)" },
	{ 0, "by", O_BY, "KEY", "also each function's time per comm, pid or tid of the timed call (summed in "
				"kinstr.ko; 4,096 rows per CPU, a call past them counted as dropped)" },
	{ 0, "cache", O_CACHE, NULL, "run each function as its instrumented copy in the code cache (as kinstr cover "
				       "does): its timer starts where the copy is entered and stops before each of the "
				       "copy's exits, so no exit is spliced (a function whose returns only an int3 fits "
				       "on is timed without traps); its entry and each return from a call it makes are "
				       "spliced instead. Not with --calls, --metrics or a scope beyond -p PID or -c" },
	{ .common = CLI_OPT_OUTPUT },
	{ .common = CLI_OPT_KEEP_GOING, .help = "a FUNC that cannot be timed (or names nothing) is reported and left "
						"out; the others are timed (it fails if every one is)" },
	{ .common = CLI_OPT_MAX_PROBES },
	{ .common = CLI_OPT_NO_FTRACE, .help = "where only an int3 fits after a function's ftrace NOP, start its timer "
					       "with that int3, not with an ftrace direct call from the NOP (the "
					       "default; as cheap as a jump)" },
	CLI_OPTS_SCOPE,
	{ 0 },
};

static const struct cli_usage profile_usage = {
	.name = "profile", .synopsis = "[options] FUNC...", .verb = "profile", .done = "timed",
	.intro = "Time kernel functions from their entry to each of their exits (every ret,\n"
		 "return-thunk jump and tail call: every exit site is spliced, no return address is\n"
		 "touched). Per function: calls, inclusive wall time, inclusive on-CPU time (the\n"
		 "time its thread was switched out left out), min/mean/max, and a log2 histogram.\n"
		 "A recursive call counts once, its time with the outermost activation's.\n"
		 "With --cache each function runs as its copy in the code cache (kinstr cover's),\n"
		 "whose own code starts and stops the timer: its entry and the returns from its\n"
		 "calls are spliced, none of its exits.\n"
		 "FUNC is a function name, NAME@ADDR (one of several of that name), or a glob\n"
		 "('vfs_*').\n\n",
	.outro = "Without -d or -c, profile until interrupted (Ctrl-C). Interrupt contexts are\n"
		 "timed too unless -p (one process) or -c restricts to a process. Interrupted\n"
		 "during -c CMD, CMD's process group gets the signal too and kinstr exits 130\n"
		 "(SIGINT) or 143 (SIGTERM).\n"
		 "The live table needs a terminal (not TERM=dumb).\n",
	.opts = profile_opts, .min_args = 1, .max_args = -1,
	.examples = "kinstr profile -c 'ls -R /usr' 'vfs_*'\n"
		    "time every function vfs_* names while ls runs\n"
		    "kinstr profile --folded -d 10 'vfs_*' > vfs.folded\n"
		    "10 seconds of folded stacks, for flamegraph.pl\n",
};

struct profile_own {
	long pid;
	const char *sort_key, *by;
	bool hist, calls, folded, cache;
};

static int profile_opt(void *ctx, int key, const char *arg)
{
	struct profile_own *o = ctx;

	switch (key) {
	case 's': o->sort_key = arg; break;
	case O_HIST: o->hist = true; break;
	case O_CALLS: o->calls = true; break;
	case O_FOLDED: o->folded = true; break;
	case O_CACHE: o->cache = true; break;
	case O_BY:
		if (strcmp(arg, "comm") && strcmp(arg, "pid") && strcmp(arg, "tid")) {
			cli_err("--by: comm, pid or tid, not '%s'", arg);
			return CLI_USAGE;
		}
		o->by = arg;
		break;
	}
	return 0;
}

int cmd_profile(int argc, char **argv)
{
	struct profile_own o = { .sort_key = "wall" };
	struct cli_common co;
	bool live;
	const char **names = NULL;
	struct cli_metrics_src src = { 0 };
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct kinstr_timer_stats *st = NULL;
	struct kinstr_timer_by_row *by_rows = NULL;
	struct cli_profile_by by = { 0 };
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_timed *timed = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	struct kinstr_cover *cv = NULL;
	struct cli_pfunc *pf = NULL;
	unsigned int n = 0, cap = 0, ntimers = 0;
	struct kinstr_dev *dev;
	struct kinstr_why why;
	int c, i, ret = CLI_FAIL;
	struct cli_run run;

	cli_common__init(&co);
	ret = cli_opts__parse(&profile_usage, argc, argv, &co, profile_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	ret = CLI_FAIL;
	/* one process: its timers also leave interrupts out (task context only), as before the scope */
	if (co.scope.npids == 1 && !co.scope.ntids)
		o.pid = co.scope.pids[0];
	if (co.command && co.scope.npids) {
		cli_err("-c and -p both name the process to profile: use one");
		cli_opts__usage(&profile_usage, stderr);
		return CLI_USAGE;
	}
	if (o.cache && (o.calls || co.metrics_at || co.scope.ntids || co.scope.npids > 1 || co.scope.ncpus ||
			co.scope.comm || co.scope.cgroup || co.scope.follow || co.scope.cmd_only)) {
		/* the copies' timers have no scope gate: the timers' own filter is -p's and -c's */
		cli_err("--cache: not with --calls, --metrics or a scope other than -p PID or -c CMD");
		return CLI_USAGE;
	}
	cli_common__plan_opts(&co, &popts);
	if (!kinstr_timing__key_known(o.sort_key)) {
		cli_err("--sort: wall, oncpu, calls, mean or max, not '%s'", o.sort_key);
		return CLI_USAGE;
	}
	for (i = optind; i < argc; i++)
		if (strpbrk(argv[i], "+%")) {
			cli_err("%s: profile takes function names or globs (FUNC, 'vfs_*'), not offsets or %%return",
				argv[i]);
			return CLI_USAGE;
		}
	cli_run__init(&run, co.command, co.duration, true);
	cli_run__json(&run, co.json, co.output);
	so = (struct cli_session_opts){ .output = co.output, .metrics_at = co.metrics_at,
					.metrics_write = cli_metrics__probes, .metrics_ctx = &src, .popts = &popts,
					.scope = co.dry ? NULL : &co };
	if ((ret = cli_session__open(&se, &so)) != CLI_OK)
		return ret;
	ret = CLI_FAIL;
	dev = se.dev, ps = se.ps, pl = se.pl;
	timed = calloc(KINSTR_AREA_MAX_PROBES / 2, sizeof(*timed));
	if (!timed)
		goto out;
	if (o.cache && !(cv = cli_profile_cache__plan(dev, se.k, argv + optind, argc - optind, co.keep, &pf, &n)))
		goto out;
	for (i = o.cache ? argc : optind; i < argc; i++) {
		size_t got, skipped, j;

		if (kinstr_plan__time_spec(pl, argv[i], n, timed, KINSTR_AREA_MAX_PROBES / 2, &got, &skipped, &why)) {
			cli_err("%s", why.msg);
			if (co.keep)
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
	for (i = 0; o.calls && i < (int)n; i++) {
		pf[i].sites = calloc(CLI_MAX_CALLS, sizeof(*pf[i].sites));
		if (!pf[i].sites)
			goto out;
		pf[i].nsites = kinstr_plan__time_calls(pl, pf[i].f, &ntimers, pf[i].sites, CLI_MAX_CALLS);
	}
	st = calloc(ntimers, sizeof(*st));
	if (!st)
		goto out;
	if (co.command) {	/* gated: the timers follow its process group from its first instruction */
		if (cli_run__spawn(&run))
			goto out;
		o.pid = run.child;
	}
	c = kinstr_timers__create(dev, ntimers, (uint32_t)o.pid, (o.folded ? KINSTR_TIMERS_F_PATHS : 0) |
				  (co.command ? KINSTR_TIMERS_F_PGRP : 0) |
				  (!o.by ? 0 : !strcmp(o.by, "comm") ? KINSTR_TIMERS_F_BY_COMM :
				   !strcmp(o.by, "pid") ? KINSTR_TIMERS_F_BY_PID : KINSTR_TIMERS_F_BY_TID));
	if (c) {
		cli_err("cannot create %u timers: %s%s", ntimers, strerror(-c),
			c == -EOPNOTSUPP ? " (the module found no sched_switch tracepoint)" : "");
		goto out;
	}
	cli_catch_signals();
	if (cv) {
		if (cli_profile_cache__install(cv, pf, &n, co.json, co.command || co.duration > 0))
			goto out;
	} else if (kinstr_probeset__install(ps, &why)) {
		cli_err("%s", why.msg);
		goto out;
	}
	if (!co.json && !cv)
		cli_profile__installed(ps, n, co.command || co.duration > 0);
	cli_run__go(&run);
	cli_run__begin(&run);
	if (co.metrics_at) {	/* the functions' timers, scraped while the run goes on */
		names = calloc(n, sizeof(*names));
		for (i = 0; names && i < (int)n; i++)
			names[i] = pf[i].f->name;
		src = (struct cli_metrics_src){ .dev = dev, .ps = ps, .timed = names, .ntimed = names ? n : 0,
						.scrapes = &se.m.scrapes };
		cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	}
	live = !co.json && !o.folded && !co.command && cli_term_ok();
	{
		struct cli_profile_live lc = { dev, pf, n, ntimers, st, o.calls, o.sort_key };

		cli_run__wait(&run, co.interval, live ? cli_profile__live : NULL, &lc);
	}
	cli_run__stop(&run);
	/* probes out first: no call is half-timed in what we read */
	if (cv)
		kinstr_cover__read(cv);	/* reads the copies' block counters, then takes them out */
	else
		kinstr_probeset__remove(ps);
	if (kinstr_timers__read(dev, 0, ntimers, st)) {
		cli_err("cannot read the timers: %s", strerror(errno));
		goto out;
	}
	if (o.by) {
		c = kinstr_timing__by(dev, !strcmp(o.by, "comm"), &by_rows, &by.n, &by.dropped);
		if (c) {
			cli_err("cannot read the timers by %s: %s", o.by, strerror(-c));
			goto out;
		}
		by.key = o.by;
		by.rows = by_rows;
	}
	if (cli_output_begin(se.out_fd, co.output))
		goto out;
	if (o.folded) {
		if (cli_profile__folded(dev, pf, n))
			goto out;
	} else if (co.json) {
		cli_profile__json(pf, n, st, cli_now() - run.t0, run.status, o.calls, o.by ? &by : NULL);
	} else {
		cli_profile__table(pf, n, st, o.hist, o.calls, o.sort_key);
		if (o.by)
			cli_profile__by_table(pf, n, &by);
	}
	if (cli_output_end(co.output))
		goto out;
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(st);
	free(by_rows);
	for (i = 0; pf && i < (int)n; i++)
		free(pf[i].sites);
	free(pf);
	free(timed);
	kinstr_cover__free(cv);
	cli_session__close(&se);
	free(names);
	return ret;
}
