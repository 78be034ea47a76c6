// SPDX-License-Identifier: GPL-2.0
/* kinstr -l [GLOB]: the functions kinstr count can probe, with how their entry would be probed. */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/plan.h>
#include "cli.h"

static const struct cli_opt list_opts[] = {
	{ .common = CLI_OPT_JSON, .key = 'j', .help = "one JSON array, an object per function" },
	{ 0, "all", 'a', NULL, "list refused functions too, with the rule" },
	{ 0 },
};

static const struct cli_usage list_usage = {
	.name = "-l", .synopsis = "[--json] [--all] [GLOB]", .verb = "list",
	.intro = "List the kernel functions (core and loaded modules) matching GLOB (shell globs,\n"
		 "comma-separated; default: all) whose entry kinstr count can probe, with the class of\n"
		 "the entry probe and how many jump and trap sites the function has. The class is jump\n"
		 "or trap, or ftrace where only an int3 fits after the function's ftrace NOP and count\n"
		 "takes the entry from the NOP through an ftrace direct call instead.\n"
		 "A function whose name others share is listed as NAME@ADDR, the way specs name it\n"
		 "(--json: its \"spec\").\n\n",
	.opts = list_opts, .min_args = 0, .max_args = 1,
};

static int list_opt(void *ctx, int key, const char *arg)
{
	*(bool *)ctx = true;	/* --all */
	return 0;
}

int cmd_list(int argc, char **argv)
{
	const char *glob = "*";
	struct cli_common co;
	bool all = false;
	unsigned long long last = 0;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	size_t i, shown = 0;
	int ret;

	cli_common__init(&co);
	ret = cli_opts__parse(&list_usage, argc, argv, &co, list_opt, &all);
	if (ret != CLI_GO_ON)
		return ret;
	if (optind < argc)
		glob = argv[optind];
	k = cli_open_kernel(NULL, &dev);
	if (!k)
		return CLI_FAIL;
	if (co.json)
		printf("[");
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		const struct kinstr_site *entry;
		size_t n[KINSTR_SITE_NR_CLASSES] = { 0 }, s;
		struct kinstr_fn *fn;
		char why[256] = "";
		const char *cls;
		bool ftrace;

		if (!kinstr__glob_match(glob, f->name) || f->addr == last)
			continue;
		last = f->addr;
		fn = kinstr_fn__analyze(k, f);
		if (!fn)
			continue;
		entry = kinstr_plan__entry_site(fn, f, true, &ftrace);
		cls = ftrace ? "ftrace" : entry ? kinstr_site_class__str(entry->cls) : "";
		for (s = 0; s < kinstr_fn__site_cnt(fn); s++)
			n[kinstr_fn__site(fn, s)->cls]++;
		if (entry && entry->cls == KINSTR_SITE_REFUSED)
			kinstr_site__why(entry, why, sizeof(why));
		if (entry && (all || entry->cls != KINSTR_SITE_REFUSED)) {
			if (co.json) {
				printf("%s{\"function\":", shown ? "," : "");
				cli_json_str(f->name);
				if (!kinstr_kernel__name_unique(k, f))	/* how to name it in a spec */
					printf(",\"spec\":\"%s@0x%llx\"", f->name, (unsigned long long)f->addr);
				if (f->module) {
					printf(",\"module\":");
					cli_json_str(f->module);
				}
				printf(",\"entry\":\"%s\",\"entry_offset\":%llu,\"jump\":%zu,\"trap\":%zu,\"refused\":%zu",
				       cls, ftrace ? (unsigned long long)f->endbr : entry->addr - f->addr, n[0], n[1], n[2]);
				if (*why) {
					printf(",\"why\":");
					cli_json_str(why);
				}
				printf("}");
			} else {
				char shown_name[600];

				/* a module's function carries its module, as /proc/kallsyms writes it */
				char spec[560];

				/* NAME@ADDR where the name is not unique; a module's function carries its
				 * module, as /proc/kallsyms writes it */
				snprintf(shown_name, sizeof(shown_name), f->module ? "%s [%s]" : "%s",
					 cli_func_spec(k, f, spec, sizeof(spec)), f->module);
				printf("%-48s %-7s %6zu jump %5zu trap%s%s\n", shown_name,
				       cls, n[0], n[1], *why ? "  " : "", why);
			}
			shown++;
		}
		kinstr_fn__free(fn);
	}
	if (co.json)
		printf("]\n");
	cli_close_kernel(k, dev);
	if (!shown) {
		cli_err("no %sfunction matches '%s'", all ? "" : "probeable ", glob);
		return CLI_FAIL;
	}
	return CLI_OK;
}
