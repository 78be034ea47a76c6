// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <kinstr/kinstr.h>
#include "cli.h"

static const struct cli_cmd cmds[] = {
	{ "version", cmd_version, "print the CLI's, the module's and the kernel's versions" },
	{ "doctor", cmd_doctor, "check that this machine is ready for kinstr, and say what to do if not" },
	{ "count", cmd_count, "count hits at functions, offsets, returns or globs of the live kernel" },
	{ "disasm", cmd_disasm, "disassemble a live function block by block, with each site's class" },
	{ "sites", cmd_sites, "count jump/trap/refused sites of functions or the whole kernel" },
	{ "cover", cmd_cover, "block coverage through the code cache (--dry-run: the plan, per function)" },
	{ "optimize", cmd_optimize, "re-lay hot functions by measured edge counts (Pettis-Hansen) through the code cache" },
	{ "profile", cmd_profile, "time functions from entry to every return: calls, wall and on-CPU time" },
	{ "attach", cmd_attach, "run a BPF program (an instrument in C) at functions, offsets or returns" },
	{ "serve", cmd_serve, "keep probes in and serve their counts and latencies to Prometheus (/metrics)" },
	{ "span", cmd_span, "the time from a hit at one point to the next at another, per thread or key" },
	{ "drill", cmd_drill, "find where a function's time goes: time its calls, descend into the hot ones" },
	{ "trace", cmd_trace, "record every hit, with values, into a CTF trace (babeltrace2 reads it)" },
	{ "report", cmd_report, "summarise a CTF trace: events per probe and CPU, time span, events lost" },
	{ "snapshot", cmd_snapshot, "save the kernel's code (text, symbols, reservations) to a file" },
	{ "batch", cmd_batch, "run kinstr command lines read from stdin over one view of the kernel (sweeps)" },
};

/* Run one command line (argv[0] the subcommand, or -l): main's dispatch, also for kinstr batch. */
static int dispatch(int argc, char **argv)
{
	size_t i;

	if (!strcmp(argv[0], "-l") || !strcmp(argv[0], "--list"))
		return cmd_list(argc, argv);
	if (!strcmp(argv[0], "help"))
		return cmd_help(argc, argv);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[0], cmds[i].name))
			return cmds[i].run(argc, argv);
	cli_err("unknown command '%s' (see 'kinstr --help')", argv[0]);
	return CLI_USAGE;
}

int main(int argc, char **argv)
{
	cli_help__table(cmds, sizeof(cmds) / sizeof(cmds[0]));
	if (argc < 2) {
		cli_help__main(stderr, false);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_help__main(stdout, false);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("kinstr %s\n", kinstr__version());
		return CLI_OK;
	}
	cli_batch_dispatch = dispatch;
	return dispatch(argc - 1, argv + 1);
}
