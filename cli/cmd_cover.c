// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr cover FUNC|GLOB...: block coverage through the code cache (lib/cache/build.c, lib/cache/cacheset.c):
 * each function runs as an instrumented copy with a counter per basic block, entered through
 * splices at its entry and its re-entry points; the module proves each copy first. --dry-run
 * prints the plan (blocks, forms, re-entry points, or why a function is refused).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static void cover_usage(FILE *f)
{
	fprintf(f, "usage: kinstr cover [--count|--hit|--once] [--edges] [-k] [-c CMD|-d SEC] [--json] [--lcov FILE] FUNC|GLOB...\n"
		   "       kinstr cover --dry-run [--json] [--snapshot FILE] FUNC|GLOB...\n\n"
		   "Block coverage through the code cache: each FUNC runs as an instrumented copy, entered\n"
		   "through splices at its entry and where control comes back to it (after a call, after an\n"
		   "instruction the original runs itself), with a counter at every basic block and no trap\n"
		   "on the way. kinstr.ko checks every byte of each copy against the live function first.\n"
		   "Prints, per function, its blocks covered and each block's count (--count, the default)\n"
		   "or only whether it ran (--hit). A GLOB ('vfs_*', comma-separated lists too) takes every\n"
		   "function it matches; those the cache cannot run are listed with the reason. A block\n"
		   "that starts with instructions the original runs itself (a faulting load, stac) is\n"
		   "counted where control comes back to the copy after them: a fault there, which leaves\n"
		   "to its fixup, is not counted (--json marks such blocks counted_after).\n\n"
		   "  -c, --command CMD  run CMD, cover while it runs, print, exit with its status\n"
		   "  -d, --duration SEC cover for SEC seconds (without -c or -d: until Ctrl-C)\n"
		   "  -k, --keep-going   a FUNC that names nothing is reported and left out, and so is a\n"
		   "                     function that cannot be installed: kinstr.ko refuses its copy, or\n"
		   "                     the copy changed since it was planned (with the reason; the rest\n"
		   "                     are installed again without it); the others are covered (it fails\n"
		   "                     if none is left). Without -k such a refusal ends the run before\n"
		   "                     anything is covered. A function whose plan the library refuses is\n"
		   "                     always listed with its reason and left out (with --once, -k is\n"
		   "                     about names only)\n"
		   "      --count        every block's count (default)\n"
		   "      --hit          only hit or not hit per block\n"
		   "      --once         one-shot: a probe at every block's first instruction, taken out after\n"
		   "                     its first hit (hit or not only; a block where no probe fits is\n"
		   "                     'unprobed'): near-zero cost once the hot blocks have run\n"
		   "      --edges        a counter on every edge too (into each block by falling through, out\n"
		   "                     of each branch and exit): each block's count beside the sum of the\n"
		   "                     edges into it and out of it, and whether in = count = out (flow\n"
		   "                     conservation; a block entered or left where no counter sees, such\n"
		   "                     as an exception fixup, is marked and left out)\n"
		   "      --debuginfo FILE  source lines from FILE's DWARF: a vmlinux (the core kernel) or a\n"
		   "                     NAME.ko (module NAME); repeatable. Without it: the -dbg package's files\n"
		   "                     (/usr/lib/debug/boot/vmlinux-REL, /usr/lib/debug/lib/modules/REL/...)\n"
		   "                     where installed, else blocks are shown as function+offset (and said so)\n"
		   "      --lcov FILE    also write an lcov tracefile (genhtml FILE renders it); each function's\n"
		   "                     listing, standing for its source, goes next to it (FILE.src/)\n"
		   "      --json         one JSON object\n"
		   "                     (on stdout alone: -c CMD's own output goes to stderr)\n"
		   "      --dry-run      show the plan; install nothing\n"
		   "      --snapshot FILE  (--dry-run) plan from a snapshot ('kinstr snapshot') instead of the\n"
		   "                     running kernel (it holds no jump-label keys: such functions are refused)\n");
}

int cmd_cover(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "command", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", no_argument, NULL, 'C' },
		{ "hit", no_argument, NULL, 'H' },
		{ "lcov", required_argument, NULL, 'l' },
		{ "once", no_argument, NULL, 'O' },
		{ "edges", no_argument, NULL, 'E' },
		{ "debuginfo", required_argument, NULL, 'g' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_cover_args a = { 0 };
	const char *dbg[16];
	int c;

	while ((c = getopt_long(argc, argv, "hkc:d:", opts, NULL)) != -1) {
		switch (c) {
		case 'n': a.dry = true; break;
		case 'j': a.json = true; break;
		case 's': a.snapshot = optarg; break;
		case 'c': a.command = optarg; break;
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &a.duration))
				return CLI_USAGE;
			break;
		case 'C': a.hit_only = false; break;
		case 'H': a.hit_only = true; break;
		case 'l': a.lcov = optarg; break;
		case 'O': a.once = true; break;
		case 'E': a.edges = true; break;
		case 'k': a.keep = true; break;
		case 'g':
			if (a.ndebuginfo == (int)(sizeof(dbg) / sizeof(dbg[0]))) {
				cli_err("cover: at most %zu --debuginfo files", sizeof(dbg) / sizeof(dbg[0]));
				return CLI_USAGE;
			}
			dbg[a.ndebuginfo++] = optarg;
			a.debuginfo = dbg;
			break;
		case 'h': cover_usage(stdout); return CLI_OK;
		default: cover_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind == argc) {
		cover_usage(stderr);
		return CLI_USAGE;
	}
	a.funcs = argv + optind;
	a.nfuncs = argc - optind;
	return cli_cover__run(&a);
}
