// SPDX-License-Identifier: GPL-2.0
/* kinstr count SPEC...: count hits at any instruction of the running kernel. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kinstr/plan.h>
#include "cli.h"


static void count_usage(FILE *f)
{
	fprintf(f, "usage: kinstr count [options] SPEC...\n\n"
		   "Count how often the running kernel executes the given instructions. SPEC is\n"
		   "  FUNC           the function's entry (after its ftrace NOP, before its own code;\n"
		   "                 where only an int3 fits there, from the NOP through an ftrace\n"
		   "                 direct call, as cheap as a jump)\n"
		   "  FUNC+0xOFF     the instruction at that offset (decimal works too)\n"
		   "  FUNC%%return    every return site of FUNC\n"
		   "  GLOB           the entries of every function matching a shell glob ('vfs_*')\n"
		   "FUNC is a name, or NAME@ADDR (hex) for one of several functions of that name\n"
		   "('kinstr -l' lists those so); a name several functions have is refused.\n"
		   "A jump probe (a 5-byte jmp) is used where one fits, else a trap probe (int3).\n\n"
		   "  -d, --duration SEC  count for SEC seconds (> 0), then print the totals\n"
		   "  -c, --command CMD   run CMD, count while it runs, print the totals, exit with its\n"
		   "                      status (plain words are exec'ed directly; anything with shell\n"
		   "                      syntax runs under /bin/sh -c)\n"
		   "  -k, --keep-going    a SPEC that is refused (or names nothing) is reported and left\n"
		   "                      out; the others are counted (it fails if every one is)\n"
		   "  -e, --every         probe each FUNC at every jump site that does not share bytes\n"
		   "                      with the previous one (first to last), not just its entry\n"
		   "      --every-block   count every basic block of each FUNC (or GLOB) through the\n"
		   "                      code cache: an instrumented copy, no trap ('kinstr cover\n"
		   "                      --count', which prints the blocks)\n"
		   "  -i, --interval SEC  refresh the live table every SEC seconds (default 1)\n"
		   "      --json          print the totals as one JSON object (no live table)\n"
		   "  -o, --output FILE   write the totals to FILE, not stdout (which -c CMD shares)\n"
		   "      --dry-run       show what would be patched and why; touch nothing\n"
		   CLI_HELP_MAX_PROBES("  ")
		   "      --no-ftrace     count a FUNC's entry with an int3 where only that fits after\n"
		   "                      the ftrace NOP, not with an ftrace direct call from the NOP\n"
		   "Without -d or -c, count until interrupted (Ctrl-C). Interrupted during -c CMD,\n"
		   "CMD gets the signal too, its status is reported and kinstr exits 130 (SIGINT)\n"
		   "or 143 (SIGTERM). The live table needs a terminal (not TERM=dumb).\n");
}

/*
 * --every-block: the code cache counts every block of each FUNC (kinstr cover --count's run,
 * cli_cover__run), with the same -c/-d/--json/--dry-run.
 */
static int count_every_block(int n, char **specs, const char *command, double duration, bool json, bool dry,
			     bool other)
{
	struct cli_cover_args a = { .funcs = specs, .nfuncs = n, .command = command, .duration = duration,
				    .json = json, .dry = dry };
	int i;

	if (other) {
		cli_err("--every-block takes -c, -d, --json and --dry-run only");
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

int cmd_count(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "command", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "every", no_argument, NULL, 'e' },
		{ "every-block", no_argument, NULL, 'B' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "no-ftrace", no_argument, NULL, 'N' },
		{ "max-probes", required_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double duration = 0, interval = 1;
	const char *command = NULL, *output = NULL;
	bool json = false, dry = false, live, keep = false, every_block = false;
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	uint64_t *hits = NULL, *prev = NULL;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	char err[512];
	int c, i, ret = CLI_FAIL, out_fd = -1;
	struct cli_run run;

	while ((c = getopt_long(argc, argv, "+d:c:i:eko:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &duration))
				return CLI_USAGE;
			break;
		case 'c': command = optarg; break;
		case 'i':
			if (cli_parse_seconds("--interval", optarg, &interval))
				return CLI_USAGE;
			break;
		case 'j': json = true; break;
		case 'n': dry = true; break;
		case 'e': popts.every = true; break;
		case 'B': every_block = true; break;
		case 'k': keep = true; break;
		case 'N': popts.no_ftrace = true; break;
		case 'P':
			if (cli_parse_max_probes(optarg, &popts.max_probes))
				return CLI_USAGE;
			break;
		case 'o': output = optarg; break;
		case 'h': count_usage(stdout); return CLI_OK;
		default: count_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		count_usage(stderr);
		return CLI_USAGE;
	}
	if (every_block)
		return count_every_block(argc - optind, argv + optind, command, duration, json, dry, output || keep || popts.every);
	for (i = optind; i < argc; i++) {	/* the specs' syntax before anything is opened */
		struct kinstr_spec sp;

		if (kinstr_spec__parse(argv[i], &sp, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_USAGE;
		}
	}
	cli_run__init(&run, command, duration, false);
	/* the output first: a file that cannot be written fails before anything is patched */
	if (output && !dry && (out_fd = cli_open_output(output)) < 0)
		return CLI_FAIL;
	k = cli_open_kernel(NULL, &dev);
	if (!k) {
		if (out_fd >= 0)
			close(out_fd);
		return CLI_FAIL;
	}
	ps = kinstr_probeset__new(dev, k);
	pl = ps ? kinstr_plan__new(ps, &popts) : NULL;
	if (!pl)
		goto out;
	for (i = optind; i < argc; i++)
		if (cli_add_spec(pl, argv[i]) && !keep)
			goto out;
	if (!kinstr_probeset__cnt(ps)) {	/* --keep-going: each one said why */
		cli_err("no spec left to count");
		goto out;
	}
	if (dry) {
		cli_count__plan(ps, k);
		ret = CLI_OK;
		goto out;
	}
	hits = calloc(kinstr_probeset__cnt(ps), sizeof(*hits));
	prev = calloc(kinstr_probeset__cnt(ps), sizeof(*prev));
	if (!hits || !prev)
		goto out;
	cli_catch_signals();
	if (kinstr_probeset__install(ps, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	cli_run__begin(&run);
	if (command && cli_run__spawn(&run))
		goto out;
	live = !json && !command && cli_term_ok();
	{
		struct live_ctx lc = { ps, hits, prev };

		cli_run__wait(&run, interval, live ? live_tick : NULL, &lc);
	}
	cli_run__stop(&run);
	if (kinstr_probeset__counts(ps, hits)) {
		cli_err("cannot read the counters: %s", strerror(errno));
		goto out;
	}
	if (cli_output_begin(out_fd, output))
		goto out;
	if (json)
		cli_count__json(ps, hits, cli_now() - run.t0, run.status);
	else
		cli_count__table(ps, hits, prev, 0, false);
	if (cli_output_end(output))
		goto out;
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(hits);
	free(prev);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);	/* removes the probes */
	cli_close_kernel(k, dev);
	if (out_fd >= 0)
		close(out_fd);
	return ret;
}
