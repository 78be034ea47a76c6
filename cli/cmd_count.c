// SPDX-License-Identifier: GPL-2.0
/* kinstr count SPEC...: count hits at any instruction of the running kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/plan.h>
#include <kinstr/tally.h>
#include "cli.h"

#define BY_STACK KINSTR_TALLY_NR_KEYS	/* --by stack: not a trace key, kinstr's BPF program */
#define COUNT_MAX_EVENTS 4096		/* with a predicate: trace probes' events */

enum { O_EVERY_BLOCK = CLI_KEY_OWN, O_BY, O_FOLDED };

static const struct cli_opt count_opts[] = {
	{ .common = CLI_OPT_DURATION, .help = "count for SEC seconds (> 0), then print the totals" },
	{ .common = CLI_OPT_COMMAND, .help = "run CMD, count while it runs, print the totals, exit with its status (plain words "
				   "are exec'ed directly; anything with shell syntax runs under /bin/sh -c)" },
	{ .common = CLI_OPT_KEEP_GOING, .help = "a SPEC that is refused (or names nothing) is reported and left out; the others "
				      "are counted (it fails if every one is); with --every-block, as 'kinstr cover -k'" },
	{ 0, "every", 'e', NULL, "probe each FUNC at every jump site that does not share bytes with the previous one "
				 "(first to last), not just its entry" },
	{ 0, "every-block", O_EVERY_BLOCK, NULL, "count every basic block of each FUNC (or GLOB) through the code "
						 "cache: an instrumented copy, no trap ('kinstr cover --count', which "
						 "prints the blocks)" },
	{ .common = CLI_OPT_INTERVAL },
	{ .common = CLI_OPT_JSON, .help = "print the totals as one JSON object (no live table) (on stdout alone: -c CMD's own "
				"output goes to stderr)" },
	{ .common = CLI_OPT_OUTPUT },
	{ .common = CLI_OPT_DRY_RUN },
	{ .common = CLI_OPT_MAX_PROBES },
	{ 0, "by", O_BY, "KEY", "count each probe's hits by KEY: comm, pid, tid, or value (the spec's first VALUE, as "
				"kinstr trace takes them: 'vfs_read(count)'); a string value is a row per whole string as "
				"recorded (string[N]: N - 1 characters; one that filled them is marked [full]), printed "
				"last; COMM is the hits' command name, or (several) when more than one command hit that "
				"value (JSON: the last hit's comm, and comm_several); each hit is counted in "
				"kinstr.ko's tables per CPU (no trace record, nothing to lose on the way); a hit past "
				"the 65,536 rows, or with no room in its CPU's table, is counted as overflow, one the "
				"probe's recursion guard skipped as lost (both printed)\nKEY stack: count each probe's hits by kernel stack, "
				"unwound from the site's registers by the kernel's unwinder (a BPF program run at the "
				"probes: 16,384 stacks; a hit whose stack found no room is counted as lost)" },
	{ 0, "folded", O_FOLDED, NULL, "with --by stack: one line per stack, root first, frames joined by ';' and the "
				       "hits last (flamegraph.pl's input)" },
	{ .common = CLI_OPT_METRICS, .help = "serve the counters to Prometheus while counting, as 'kinstr serve' does (GET "
				   "/metrics; e.g. " CLI_METRICS_DEFAULT ")" },
	{ .common = CLI_OPT_NO_FTRACE, .help = "count a FUNC's entry with an int3 where only that fits after the ftrace NOP, not "
				     "with an ftrace direct call from the NOP" },
	{ .common = CLI_OPT_WHERE },
	CLI_OPTS_SCOPE,
	{ .common = CLI_OPT_CMD_ONLY },
	{ 0 },
};

static const struct cli_usage count_usage = {
	.name = "count", .synopsis = "[options] SPEC...", .verb = "count", .done = "counted",
	.intro = "Count how often the running kernel executes the given instructions. SPEC is\n"
		 "  FUNC           the function's entry (after its ftrace NOP, before its own code;\n"
		 "                 where only an int3 fits there, from the NOP through an ftrace\n"
		 "                 direct call, as cheap as a jump)\n"
		 "  FUNC+0xOFF     the instruction at that offset (decimal works too)\n"
		 "  FUNC%return    every return site of FUNC\n"
		 "  GLOB           the entries of every function matching a shell glob ('vfs_*')\n"
		 "FUNC is a name, or NAME@ADDR (hex) for one of several functions of that name\n"
		 "('kinstr -l' lists those so); a name several functions have is refused.\n"
		 "A jump probe (a 5-byte jmp) is used where one fits, else a trap probe (int3).\n"
		 "SPEC(VALUE,...) if EXPR (or --where EXPR) counts only the hits where EXPR holds\n"
		 "(the values as 'kinstr trace' takes them): 'vfs_read(count) if count > 4096'.\n\n",
	.outro = "Without -d or -c, count until interrupted (Ctrl-C). Interrupted during -c CMD,\n"
		 "CMD gets the signal too, its status is reported and kinstr exits 130 (SIGINT)\n"
		 "or 143 (SIGTERM). The live table needs a terminal (not TERM=dumb).\n",
	.opts = count_opts, .min_args = 1, .max_args = -1,
	.examples = "kinstr count -d 5 vfs_read 'vfs_read%return'\n"
		    "count vfs_read's entry and its returns for 5 seconds\n"
		    "kinstr count -c 'ls -R /usr' 'vfs_read(count) if count > 4096'\n"
		    "count only the reads of more than 4096 bytes while ls runs\n",
};

struct count_own {
	bool every, every_block, folded;
	int by;
};

static int count_opt(void *ctx, int key, const char *arg)
{
	struct count_own *o = ctx;

	switch (key) {
	case 'e': o->every = true; break;
	case O_EVERY_BLOCK: o->every_block = true; break;
	case O_FOLDED: o->folded = true; break;
	case O_BY:
		o->by = !strcmp(arg, "stack") ? BY_STACK : kinstr_tally_key__parse(arg);
		if (o->by < 0) {
			cli_err("--by: comm, pid, tid, value or stack, not '%s'", arg);
			return CLI_USAGE;
		}
		break;
	}
	return 0;
}

/*
 * --every-block: the code cache counts every block of each FUNC (kinstr cover --count's run,
 * cli_cover__run), with the same -c/-d/-k/--json/--dry-run.
 */
static int count_every_block(int n, char **specs, const struct cli_common *co, bool other)
{
	struct cli_cover_args a = { .funcs = specs, .nfuncs = n, .command = co->command, .duration = co->duration,
				    .json = co->json, .dry = co->dry, .keep = co->keep };
	int i;

	if (other) {
		cli_err("--every-block takes -c, -d, -k, --json and --dry-run only");
		return CLI_USAGE;
	}
	for (i = 0; i < n; i++)
		if (strpbrk(specs[i], "+%")) {
			cli_err("--every-block: '%s': give functions (FUNC or GLOB), not instructions", specs[i]);
			return CLI_USAGE;
		}
	return cli_cover__run(&a);
}

struct live_ctx {
	struct kinstr_probeset *ps;
	uint64_t *hits, *prev;
};

static void live_tick(void *ctx, double dt)
{
	struct live_ctx *lc = ctx;

	memcpy(lc->prev, lc->hits, kinstr_probeset__cnt(lc->ps) * sizeof(*lc->hits));
	if (kinstr_probeset__counts(lc->ps, lc->hits) == 0) {
		printf("\033[H\033[2J");
		cli_count__table(lc->ps, lc->hits, lc->prev, dt, true);
	}
}

/* Plain counting: the specs' probes, a live table or the totals at the end, --metrics while it runs. */
static int count_plain(int n, char **specs, const struct cli_common *co, struct kinstr_plan_opts *popts, bool pred)
{
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_metrics_src src = { 0 };
	struct cli_run run;
	uint64_t *hits = NULL, *prev = NULL, *filtered = NULL;
	/* the smallest buffers: with a predicate the probes are trace probes, their records unread */
	struct kinstr_trace_opts topts = { .sz = sizeof(topts), .subbuf_size = 4096, .num_subbufs = 2 };
	struct cli_session_opts so = { .output = co->dry ? NULL : co->output, .metrics_at = co->metrics_at,
				       .metrics_write = cli_metrics__probes, .metrics_ctx = &src, .popts = popts,
				       .scope = co->dry ? NULL : co, .specs = specs, .nspecs = n, .trace_specs = pred,
				       .trace_events = pred ? COUNT_MAX_EVENTS : 0, .run = &run };
	struct live_ctx lc;
	int i, ret;

	cli_run__init(&run, co->command, co->duration, false);
	cli_run__json(&run, co->json, co->output);
	if ((ret = cli_session__open(&se, &so)) != CLI_OK)
		return ret;
	ret = CLI_FAIL;
	for (i = 0; i < n; i++)
		if ((pred ? cli_session__add_trace(&se, &se.sp[i]) : cli_add_spec(se.pl, &se.sp[i])) && !co->keep)
			goto out;
	ret = cli_count__planned(se.ps, se.k, co->dry);
	if (ret != CLI_GO_ON)
		goto out;
	ret = CLI_FAIL;
	if (pred && cli_session__trace(&se, &topts, "a predicate"))
		goto out;
	hits = calloc(kinstr_probeset__cnt(se.ps), sizeof(*hits));
	prev = calloc(kinstr_probeset__cnt(se.ps), sizeof(*prev));
	filtered = pred ? calloc(kinstr_probeset__cnt(se.ps), sizeof(*filtered)) : NULL;
	if (!hits || !prev || (pred && !filtered) || cli_run__start(&run, se.ps))
		goto out;
	if (co->metrics_at) {	/* the same counters, scraped while the run goes on */
		src = (struct cli_metrics_src){ .dev = se.dev, .ps = se.ps, .ncount = kinstr_probeset__cnt(se.ps),
						.scrapes = &se.m.scrapes };
		cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	}
	lc = (struct live_ctx){ se.ps, hits, prev };
	cli_run__wait(&run, co->interval, !co->json && !co->command && cli_term_ok() ? live_tick : NULL, &lc);
	cli_run__stop(&run);
	if (kinstr_probeset__counts(se.ps, hits) || (pred && kinstr_probeset__filtered(se.ps, filtered))) {
		cli_err("cannot read the counters: %s", strerror(errno));
		goto out;
	}
	if (cli_output_begin(se.out_fd, co->output))
		goto out;
	if (co->json)
		cli_count__json(se.ps, hits, filtered, cli_now() - run.t0, run.status);
	else
		cli_count__table(se.ps, hits, prev, 0, false);
	if (filtered && !co->json) {
		uint64_t sum = 0;

		for (i = 0; i < (int)kinstr_probeset__cnt(se.ps); i++)
			sum += filtered[i];
		printf("%llu hits filtered out by the predicate\n", (unsigned long long)sum);
	}
	if (cli_output_end(co->output))
		goto out;
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(hits);
	free(prev);
	free(filtered);
	cli_session__close(&se);	/* removes the probes */
	return ret;
}

int cmd_count(int argc, char **argv)
{
	struct count_own o = { .by = -1 };
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct cli_common co;
	int ret, n, i;
	char **specs;
	bool pred;

	cli_common__init(&co);
	ret = cli_opts__parse(&count_usage, argc, argv, &co, count_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	n = argc - optind, specs = argv + optind;
	cli_common__plan_opts(&co, &popts);
	pred = co.where;
	for (i = 0; i < n; i++)
		pred = pred || cli_spec_has_pred(specs[i]);
	popts.every = o.every;
	if (co.metrics_at && (o.by >= 0 || o.every_block || co.dry)) {
		cli_err("--metrics goes with plain counting, not --by, --every-block or --dry-run");
		return CLI_USAGE;
	}
	if (o.folded && o.by != BY_STACK) {
		cli_err("--folded goes with --by stack");
		return CLI_USAGE;
	}
	if (o.by >= 0 && !(pred && o.by == BY_STACK)) {
		if (o.every_block || co.output) {
			cli_err("--by takes -c, -d, -e, -k, --json, --dry-run and --max-probes, not %s",
				o.every_block ? "--every-block" : "--output");
			return CLI_USAGE;
		}
		if (o.by == BY_STACK)
			return cli_count__by_stack(n, specs, &co, &popts, o.folded);
		return cli_count__by(n, specs, &co, &popts, (unsigned int)o.by);
	}
	if (pred && (o.every_block || o.by == BY_STACK)) {
		cli_err("a predicate (--where, or SPEC if EXPR) goes with plain count and --by comm|pid|tid|value, not %s",
			o.every_block ? "--every-block" : "--by stack");
		return CLI_USAGE;
	}
	if (o.every_block)
		return count_every_block(n, specs, &co, co.output || o.every || (co.given & CLI_OPT_SCOPE));
	return count_plain(n, specs, &co, &popts, pred);
}
