// SPDX-License-Identifier: GPL-2.0
/* kinstr drill FUNC: the library's call-graph search (kinstr/drill.h) run on a workload, printed as a tree. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/drill.h>
#include "cli.h"

static void drill_usage(FILE *f)
{
	fprintf(f, "usage: kinstr drill [options] FUNC\n\n"
		   "Find where FUNC's time goes, on the live kernel: time FUNC (entry to every exit)\n"
		   "and each of its direct calls (the call instruction to the one after it) for an\n"
		   "interval, descend into the callees whose share of FUNC's time is above the\n"
		   "threshold, and repeat to a depth. Each level's probes are removed before the\n"
		   "next one's go in. Prints the call tree with each node's share of FUNC's time and\n"
		   "the hot path.\n\n"
		   "  -i, --interval SEC   time each level for SEC seconds (default 2)\n"
		   "  -t, --threshold PCT  descend into callees above PCT%% of FUNC's time (more than 0,\n"
		   "                       less than 100; default 5)\n"
		   "  -D, --depth N        at most N levels below FUNC (1 to 64, default 4)\n"
		   "  -c, --command CMD    run CMD (again each time it ends) while the search runs\n"
		   "      --oncpu          split on-CPU time instead of wall time\n"
		   "      --json           print the tree as one JSON object\n"
		   "                       (on stdout alone: -c CMD's own output goes to stderr)\n"
		   "      --no-ftrace      where only an int3 fits after a function's ftrace NOP, start\n"
		   "                       its timer with that int3, not with an ftrace direct call\n"
		   "                       from the NOP (the default, as for 'kinstr profile')\n"
		   "Timing is system-wide (every thread and interrupt context).\n");
}

struct drill_run {
	struct cli_run run;
	double interval;
};

/* A level's probes are in: time it for the interval, the workload (-c CMD) started again each time it ends. */
static int wait_level(void *ctx, int level, size_t nfuncs, size_t nprobes)
{
	struct drill_run *dr = ctx;
	struct cli_run *run = &dr->run;

	fprintf(stderr, "kinstr: level %d: %zu functions, %zu probes, %.1f s\n", level, nfuncs, nprobes, dr->interval);
	run->deadline = cli_now() + dr->interval;
	for (;;) {
		cli_run__wait(run, dr->interval, NULL, NULL);
		if (!run->command || cli_stop || run->status < 0 || cli_now() >= run->deadline)
			break;
		if (cli_run__spawn(run))
			return -ECHILD;
	}
	return cli_stop ? 1 : 0;
}

static const char *node_name(const struct kinstr_drill_node *n)
{
	return n->f ? n->f->name : n->label;
}

static const struct kinstr_drill *sorting;

static int cmp_weight(const void *a, const void *b)
{
	double wa = kinstr_drill__node(sorting, *(const int *)a)->weight;
	double wb = kinstr_drill__node(sorting, *(const int *)b)->weight;

	return wa < wb ? 1 : wa > wb ? -1 : 0;
}

static void print_tree(const struct kinstr_drill *d, int id, const char *prefix)
{
	int kids[KINSTR_DRILL_MAX_NODES], nk = 0, i;
	const struct kinstr_drill_node *n = kinstr_drill__node(d, id);
	char sub[512];

	for (i = 0; i < kinstr_drill__node_cnt(d); i++)
		if (kinstr_drill__node(d, i)->parent == id)
			kids[nk++] = i;
	sorting = d;
	qsort(kids, nk, sizeof(int), cmp_weight);
	printf("%6.1f%%  %s%s", n->weight * 100, prefix, node_name(n));
	if (n->measured && n->calls)
		printf("  (%llu calls, mean %.1f us)", (unsigned long long)n->calls,
		       n->time_ns / 1000.0 / (double)n->calls);
	if (n->why[0] && !(n->measured && n->calls))
		printf("  [%s]", n->why);
	printf("\n");
	snprintf(sub, sizeof(sub), "%s  ", prefix);
	if (n->measured && n->calls && nk)
		printf("%6.1f%%  %s  [self]\n", n->weight * n->self * 100, prefix);
	for (i = 0; i < nk; i++)
		print_tree(d, kids[i], sub);
}

static void print_json_node(const struct kinstr_drill *d, int id)
{
	const struct kinstr_drill_node *n = kinstr_drill__node(d, id);
	int i, first = 1;

	printf("{\"function\":");
	cli_json_str(node_name(n));
	printf(",\"share_of_root\":%.6f,\"share_of_parent\":%.6f,\"measured\":%s", n->weight, n->share,
	       n->measured ? "true" : "false");
	if (n->measured)
		printf(",\"calls\":%llu,\"time_ns\":%llu,\"self\":%.6f", (unsigned long long)n->calls,
		       (unsigned long long)n->time_ns, n->self);
	if (n->why[0]) {
		printf(",\"note\":");
		cli_json_str(n->why);
	}
	printf(",\"callees\":[");
	for (i = 0; i < kinstr_drill__node_cnt(d); i++)
		if (kinstr_drill__node(d, i)->parent == id) {
			printf("%s", first ? "" : ",");
			first = 0;
			print_json_node(d, i);
		}
	printf("]}");
}

int cmd_drill(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "threshold", required_argument, NULL, 't' },
		{ "depth", required_argument, NULL, 'D' },
		{ "command", required_argument, NULL, 'c' },
		{ "oncpu", no_argument, NULL, 'O' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-ftrace", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double interval = 2, threshold = 5;
	int maxdepth = 4, c, ret = CLI_FAIL, i, r = 0, path[128], np;
	long depth;
	const char *command = NULL;
	bool json = false, use_oncpu = false, no_ftrace = false;
	struct kinstr_drill *d = NULL;
	struct drill_run dr;
	char err[512];
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	const struct kinstr_func *root;

	while ((c = getopt_long(argc, argv, "i:t:D:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (cli_parse_seconds("--interval", optarg, &interval))
				return CLI_USAGE;
			break;
		case 't':
			if (cli_parse_double("--threshold", optarg, 0, 100, &threshold))
				return CLI_USAGE;
			break;
		case 'D':
			if (cli_parse_long("--depth", optarg, 1, 64, &depth))
				return CLI_USAGE;
			maxdepth = (int)depth;
			break;
		case 'c': command = optarg; break;
		case 'O': use_oncpu = true; break;
		case 'j': json = true; break;
		case 'N': no_ftrace = true; break;
		case 'h': drill_usage(stdout); return CLI_OK;
		default: drill_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind != argc - 1 || interval <= 0 || threshold <= 0 || threshold >= 100 || maxdepth < 1) {
		drill_usage(stderr);
		return CLI_USAGE;
	}
	cli_run__init(&dr.run, command, 0, false);
	cli_run__json(&dr.run, json, NULL);
	dr.interval = interval;
	k = cli_open_kernel(NULL, &dev);
	if (!k)
		return CLI_FAIL;
	root = cli_find_func(k, argv[optind], argv[optind]);
	if (!root)
		goto out;
	{
		struct kinstr_drill_opts o = { .sz = sizeof(o), .threshold = threshold / 100, .max_depth = maxdepth,
					       .oncpu = use_oncpu, .no_ftrace = no_ftrace, .wait = wait_level,
					       .ctx = &dr };

		d = kinstr_drill__new(k, root, &o);
	}
	if (!d) {
		cli_err("%s: %s", argv[optind], strerror(errno));
		goto out;
	}
	cli_catch_signals();
	if (command && cli_run__spawn(&dr.run))
		goto out;
	while (!cli_stop && (r = kinstr_drill__step(d, err, sizeof(err))) > 0)
		if (!kinstr_drill__node(d, 0)->calls) {
			cli_err("%s was not called in %.1f s: nothing to drill into", root->name, interval);
			goto out;
		}
	if (!cli_stop && r < 0) {
		cli_err("%s", err);
		goto out;
	}
	kinstr_drill__finish(d);
	if (json) {
		printf("{\"root\":");
		print_json_node(d, 0);
		printf(",\"metric\":\"%s\",\"threshold\":%.4f,\"interval_s\":%.3f}\n", use_oncpu ? "oncpu" : "wall",
		       threshold / 100, interval);
	} else {
		printf("%s time of %s, by callee (%% of %s's time, %.1f s per level):\n", use_oncpu ? "on-CPU" : "wall",
		       root->name, root->name, interval);
		print_tree(d, 0, "");
		printf("hot path:");
		np = kinstr_drill__hot_path(d, path, 128);
		for (i = 0; i < np; i++)
			printf(" %s%s", i ? "> " : "", node_name(kinstr_drill__node(d, path[i])));
		printf("\n");
	}
	ret = CLI_OK;
out:
	cli_run__cleanup(&dr.run);
	kinstr_drill__free(d);
	cli_close_kernel(k, dev);
	return ret;
}
