// SPDX-License-Identifier: GPL-2.0
/* kinstr snapshot: save the running kernel's code so analysis can be repeated off-line. */
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/kernel.h>
#include "cli.h"

static const struct cli_opt snapshot_opts[] = {
	{ .common = CLI_OPT_OUTPUT, .help = "the file to write (required)" },
	{ 0 },
};

static const struct cli_usage snapshot_usage = {
	.name = "snapshot", .synopsis = "-o FILE [GLOB]", .verb = "save",
	.intro = "Save the running kernel's functions, their live text, the ranges the kernel reserves and\n"
		 "the control transfers its tables hide (jump labels, exception fixups) to FILE\n"
		 "(gzip-compressed). With GLOB (shell globs, comma-separated), only the functions whose\n"
		 "names match, with their reservations. 'kinstr disasm' and\n"
		 "'kinstr sites' read it back with --snapshot FILE, without the module. A GLOB that\n"
		 "matches no function is an error (exit 1), and FILE is not written.\n\n",
	.opts = snapshot_opts, .min_args = 0, .max_args = 1,
};

int cmd_snapshot(int argc, char **argv)
{
	const char *out = NULL, *glob = NULL;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	struct cli_common co;
	int err;

	cli_common__init(&co);
	err = cli_opts__parse(&snapshot_usage, argc, argv, &co, NULL, NULL);
	if (err != CLI_GO_ON)
		return err;
	out = co.output;
	if (!out) {
		cli_err("snapshot: -o FILE is required");
		return CLI_USAGE;
	}
	if (optind < argc)
		glob = argv[optind];
	k = cli_open_kernel(NULL, &dev);
	if (!k)
		return CLI_FAIL;
	if (glob) {
		size_t i, n = 0;

		for (i = 0; i < kinstr_kernel__func_cnt(k) && !n; i++)
			n += kinstr__glob_match(glob, kinstr_kernel__func(k, i)->name) != 0;
		if (!n) {
			cli_err("no function matches '%s': nothing saved", glob);
			cli_close_kernel(k, dev);
			return CLI_FAIL;
		}
	}
	err = kinstr_kernel__save(k, out, glob);
	if (err)
		cli_err("cannot write %s: %s", out, strerror(-err));
	else
		fprintf(stderr, "kinstr: saved %s%s%s of %s to %s\n", glob ? "functions matching '" : "the whole kernel",
			glob ? glob : "", glob ? "'" : "", kinstr_kernel__release(k), out);
	cli_close_kernel(k, dev);
	return err ? CLI_FAIL : CLI_OK;
}
