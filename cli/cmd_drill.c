// SPDX-License-Identifier: GPL-2.0
/* kinstr drill FUNC: the library's call-graph search (kinstr/drill.h) run on a workload, printed as a tree. */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/drill.h>
#include "cli.h"

enum { O_ONCPU = CLI_KEY_OWN };

static const struct cli_opt drill_opts[] = {
	{ .common = CLI_OPT_INTERVAL, .help = "time each level for SEC seconds (default 2)" },
	{ 0, "threshold", 't', "PCT", "descend into callees above PCT% of FUNC's time (more than 0, less than 100; "
				      "default 5)" },
	{ 0, "depth", 'D', "N", "at most N levels below FUNC (1 to 64, default 4)" },
	{ .common = CLI_OPT_COMMAND, .help = "run CMD (again each time it ends) while the search runs" },
	{ 0, "oncpu", O_ONCPU, NULL, "split on-CPU time instead of wall time" },
	{ .common = CLI_OPT_JSON, .help = "print the tree as one JSON object (on stdout alone: -c CMD's own output goes "
					  "to stderr)" },
	{ .common = CLI_OPT_NO_FTRACE, .help = "where only an int3 fits after a function's ftrace NOP, start its timer "
					       "with that int3, not with an ftrace direct call from the NOP (the "
					       "default, as for 'kinstr profile')" },
	CLI_OPTS_SCOPE,
	{ 0 },
};

static const struct cli_usage drill_usage = {
	.name = "drill", .synopsis = "[options] FUNC", .verb = "drill",
	.intro = "Find where FUNC's time goes, on the live kernel: time FUNC (entry to every exit)\n"
		 "and each of its calls (the call instruction to the one after it) for an\n"
		 "interval, descend into the callees whose share of FUNC's time is above the\n"
		 "threshold, and repeat to a depth. Each level's probes are removed before the\n"
		 "next one's go in. Prints the call tree with each node's share of FUNC's time and\n"
		 "the hot path.\n\n"
		 "An indirect call (call *%reg, *mem, or a retpoline thunk) is a node of its own;\n"
		 "above the threshold, the next level counts its targets (a probe at the call reads\n"
		 "the target) and each function called becomes a child with its share of the\n"
		 "site's calls; timed in turn (the site timed again around it), its share becomes\n"
		 "that of the site's time spent in it. A tail call (jmp to another function) is\n"
		 "timed from the jmp to the callee's return, which is the caller's: a child marked\n"
		 "[tail call], its time part of the caller's.\n\n",
	.outro = "Timing is system-wide (every thread and interrupt context).\n",
	.opts = drill_opts, .min_args = 1, .max_args = 1,
};

struct drill_own {
	double threshold;
	long depth;
	bool oncpu;
};

static int drill_opt(void *ctx, int key, const char *arg)
{
	struct drill_own *o = ctx;

	switch (key) {
	case 't':
		if (cli_parse_double("--threshold", arg, 0, 100, &o->threshold))
			return CLI_USAGE;
		break;
	case 'D':
		if (cli_parse_long("--depth", arg, 1, 64, &o->depth))
			return CLI_USAGE;
		break;
	case O_ONCPU: o->oncpu = true; break;
	}
	return 0;
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
		/* 127: the shell's or exec's "cannot run" (said once); started again it would only say so again */
		if (run->status == 127)
			return -ENOEXEC;
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
	if (n->kind == KINSTR_DRILL_TAIL)
		printf("  [tail call at +0x%llx: returns for %s]",
		       (unsigned long long)(n->site - kinstr_drill__node(d, n->parent)->f->addr),
		       node_name(kinstr_drill__node(d, n->parent)));
	else if (n->kind == KINSTR_DRILL_TARGET)
		printf("  [%llu of the site's %llu calls%s]", (unsigned long long)n->site_calls,
		       (unsigned long long)kinstr_drill__node(d, n->parent)->site_calls,
		       n->time_share ? "" : "; share by calls");
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
	static const char *const kinds[] = { "call", "indirect", "target", "tail" };
	const struct kinstr_drill_node *n = kinstr_drill__node(d, id);
	int i, first = 1;

	printf("{\"function\":");
	cli_json_str(node_name(n));
	printf(",\"kind\":\"%s\"", kinds[n->kind]);
	if (n->kind != KINSTR_DRILL_CALL && n->site)
		printf(",\"site\":\"0x%llx\"", (unsigned long long)n->site);
	if (n->kind == KINSTR_DRILL_INDIRECT || n->kind == KINSTR_DRILL_TARGET)
		printf(",\"site_calls\":%llu", (unsigned long long)n->site_calls);
	if (n->kind == KINSTR_DRILL_TARGET)
		printf(",\"share_by\":\"%s\"", n->time_share ? "time" : "calls");
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
	struct drill_own o = { .threshold = 5, .depth = 4 };
	struct kinstr_scope_opts sopts;
	int ret, i, r = 0, path[128], np;
	struct cli_common co;
	struct kinstr_drill *d = NULL;
	struct drill_run dr;
	struct kinstr_why why;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	const struct kinstr_func *root;

	cli_common__init(&co);
	co.interval = 2;
	ret = cli_opts__parse(&drill_usage, argc, argv, &co, drill_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	cli_common__scope_opts(&co, &sopts);
	ret = CLI_FAIL;
	cli_run__init(&dr.run, co.command, 0, false);
	cli_run__json(&dr.run, co.json, NULL);
	dr.interval = co.interval;
	k = cli_open_kernel(NULL, &dev);
	if (!k)
		return CLI_FAIL;
	root = cli_find_func(k, argv[optind], argv[optind]);
	if (!root)
		goto out;
	{
		struct kinstr_drill_opts dopts = { .sz = sizeof(dopts), .threshold = o.threshold / 100, .scope = &sopts,
						   .max_depth = (int)o.depth, .oncpu = o.oncpu, .no_ftrace = co.no_ftrace,
						   .wait = wait_level, .ctx = &dr };

		d = kinstr_drill__new(k, root, &dopts);
	}
	if (!d) {
		cli_err("%s: %s", argv[optind], strerror(errno));
		goto out;
	}
	cli_catch_signals();
	if (co.command && cli_run__spawn(&dr.run))
		goto out;
	while (!cli_stop && (r = kinstr_drill__step(d, &why)) > 0)
		if (!kinstr_drill__node(d, 0)->calls) {
			cli_err("%s was not called in %.1f s: nothing to drill into", root->name, co.interval);
			goto out;
		}
	if (!cli_stop && r < 0) {
		if (r == -ENOEXEC && dr.run.status == 127)
			cli_err("'%s' exited with 127 (it could not be run): no workload to drill under", co.command);
		else
			cli_err("%s", why.msg);
		goto out;
	}
	kinstr_drill__finish(d);
	if (co.json) {
		printf("{\"root\":");
		print_json_node(d, 0);
		printf(",\"metric\":\"%s\",\"threshold\":%.4f,\"interval_s\":%.3f}\n", o.oncpu ? "oncpu" : "wall",
		       o.threshold / 100, co.interval);
	} else {
		printf("%s time of %s, by callee (%% of %s's time, %.1f s per level):\n", o.oncpu ? "on-CPU" : "wall",
		       root->name, root->name, co.interval);
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
