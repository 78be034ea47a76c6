// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr cover FUNC|GLOB...: block coverage through the code cache (lib/cache/build.c, lib/cache/cacheset.c):
 * each function runs as an instrumented copy with a counter per basic block, entered through
 * splices at its entry and its re-entry points; the module proves each copy first. --dry-run
 * prints the plan (blocks, forms, re-entry points, or why a function is refused).
 */
#include <unistd.h>
#include <stdio.h>

#include "cli.h"

enum { O_COUNT = CLI_KEY_OWN, O_HIT, O_ONCE, O_EDGES, O_DEBUGINFO, O_LCOV };

static const struct cli_opt cover_opts[] = {
	{ .common = CLI_OPT_COMMAND, .help = "run CMD, cover while it runs, print, exit with its status" },
	{ .common = CLI_OPT_DURATION },
	{ .common = CLI_OPT_KEEP_GOING, .help = "a FUNC that names nothing is reported and left out, and so is a "
						"function that cannot be installed: kinstr.ko refuses its copy, or the "
						"copy changed since it was planned (with the reason; the rest are "
						"installed again without it); the others are covered (it fails if none "
						"is left). Without -k such a refusal ends the run before anything is "
						"covered. A function whose plan the library refuses is always listed "
						"with its reason and left out (with --once, -k is about names only)" },
	{ 0, "count", O_COUNT, NULL, "every block's count (default)" },
	{ 0, "hit", O_HIT, NULL, "only hit or not hit per block" },
	{ 0, "once", O_ONCE, NULL, "one-shot: a probe at every block's first instruction, taken out after its first "
				   "hit (hit or not only; a block where no probe fits is 'unprobed'): near-zero cost "
				   "once the hot blocks have run" },
	{ 0, "edges", O_EDGES, NULL, "a counter on every edge too (into each block by falling through, out of each "
				     "branch and exit): each block's count beside the sum of the edges into it and "
				     "out of it, and whether in = count = out (flow conservation; a block entered or "
				     "left where no counter sees, such as an exception fixup, is marked and left "
				     "out)" },
	{ 0, "debuginfo", O_DEBUGINFO, "FILE", "source lines from FILE's DWARF: a vmlinux (the core kernel) or a NAME.ko "
					       "(module NAME); repeatable. Without it: the -dbg package's files "
					       "(/usr/lib/debug/boot/vmlinux-REL, /usr/lib/debug/lib/modules/REL/...) "
					       "where installed, else blocks are shown as function+offset (and said "
					       "so)" },
	{ 0, "lcov", O_LCOV, "FILE", "also write an lcov tracefile (genhtml FILE renders it); each function's "
				     "listing, standing for its source, goes next to it (FILE.src/)" },
	{ .common = CLI_OPT_JSON, .help = "one JSON object (on stdout alone: -c CMD's own output goes to stderr)" },
	{ .common = CLI_OPT_DRY_RUN, .help = "show the plan; install nothing" },
	{ .common = CLI_OPT_SNAPSHOT, .help = "(--dry-run) plan from a snapshot ('kinstr snapshot') instead of the running "
					      "kernel (it holds no jump-label keys: such functions are refused)" },
	{ 0 },
};

static const struct cli_usage cover_usage = {
	.name = "cover", .verb = "cover", .done = "covered",
	.synopsis = "[--count|--hit|--once] [--edges] [-k] [-c CMD|-d SEC] [--json] [--lcov FILE] FUNC|GLOB...\n"
		    "       kinstr cover --dry-run [--json] [--snapshot FILE] FUNC|GLOB...",
	.intro = "Block coverage through the code cache: each FUNC runs as an instrumented copy, entered\n"
		 "through splices at its entry and where control comes back to it (after a call, after an\n"
		 "instruction the original runs itself), with a counter at every basic block and no trap\n"
		 "on the way. kinstr.ko checks every byte of each copy against the live function first.\n"
		 "Prints, per function, its blocks covered and each block's count (--count, the default)\n"
		 "or only whether it ran (--hit). A GLOB ('vfs_*', comma-separated lists too) takes every\n"
		 "function it matches; those the cache cannot run are listed with the reason. A block\n"
		 "that starts with instructions the original runs itself (a faulting load, stac) is\n"
		 "counted where control comes back to the copy after them: a fault there, which leaves\n"
		 "to its fixup, is not counted (--json marks such blocks counted_after).\n\n",
	.outro = "Block counts are system-wide, as a copy runs for every thread: cover takes no --pid,\n"
		 "--comm or other scope, and kinstr's own process is counted too.\n",
	.examples = "kinstr cover --lcov /tmp/cov.info -d 5 ksys_read vfs_read\n"
		    "the blocks of two functions run in 5 seconds; 'genhtml -o /tmp/cov /tmp/cov.info' renders them\n",
	.opts = cover_opts, .min_args = 1, .max_args = -1,
};

#define MAX_DEBUGINFO 16

struct cover_own {
	struct cli_cover_args *a;
	const char *dbg[MAX_DEBUGINFO];
};

static int cover_opt(void *ctx, int key, const char *arg)
{
	struct cover_own *o = ctx;
	struct cli_cover_args *a = o->a;

	switch (key) {
	case O_COUNT: a->hit_only = false; break;
	case O_HIT: a->hit_only = true; break;
	case O_ONCE: a->once = true; break;
	case O_EDGES: a->edges = true; break;
	case O_LCOV: a->lcov = arg; break;
	case O_DEBUGINFO:
		if (a->ndebuginfo == MAX_DEBUGINFO) {
			cli_err("cover: at most %d --debuginfo files", MAX_DEBUGINFO);
			return CLI_USAGE;
		}
		o->dbg[a->ndebuginfo++] = arg;
		a->debuginfo = o->dbg;
		break;
	}
	return 0;
}

int cmd_cover(int argc, char **argv)
{
	struct cli_cover_args a = { 0 };
	struct cover_own o = { .a = &a };
	struct cli_common co;
	int ret;

	cli_common__init(&co);
	ret = cli_opts__parse(&cover_usage, argc, argv, &co, cover_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	a.command = co.command, a.duration = co.duration, a.keep = co.keep, a.json = co.json, a.dry = co.dry;
	a.snapshot = co.snapshot;
	a.funcs = argv + optind;
	a.nfuncs = argc - optind;
	return cli_cover__run(&a);
}
