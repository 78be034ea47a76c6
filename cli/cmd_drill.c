// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr drill FUNC: Paradyn's call-graph search on a live kernel. Time FUNC and each of its call
 * sites for a while, descend into the callees that take more than a threshold of FUNC's time,
 * time those the same way, and so on to a depth; print the hot path as a tree. Each level's
 * probes are removed before the next level's go in, so the overhead stays bounded.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kinstr/plan.h>
#include "cli.h"

#define MAX_NODES 4096
#define MAX_SITES 512

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
		   "      --no-ftrace      where only an int3 fits after a function's ftrace NOP, start\n"
		   "                       its timer with that int3, not with an ftrace direct call\n"
		   "                       from the NOP (the default, as for 'kinstr profile')\n"
		   "Timing is system-wide (every thread and interrupt context).\n");
}

struct node {
	const struct kinstr_func *f;	/* NULL: indirect calls, or calls not timed */
	const char *label;		/* for f == NULL */
	int parent, depth;
	double weight;			/* share of the root's time */
	double share;			/* share of the parent's time */
	/* once measured */
	bool measured;
	char why[160];			/* why it was not measured or expanded */
	uint64_t calls, time_ns;
	double self;			/* share of its own time not in timed calls */
};

struct level_fn {
	int node;
	unsigned int timer;
	struct kinstr_callsite sites[MAX_SITES];
	unsigned int nsites;
};

static struct node nodes[MAX_NODES];
static int nnodes;
static bool use_oncpu;

static int add_node(const struct kinstr_func *f, const char *label, int parent, double share)
{
	struct node *n;

	if (nnodes == MAX_NODES)
		return -1;
	n = &nodes[nnodes];
	memset(n, 0, sizeof(*n));
	n->f = f;
	n->label = label;
	n->parent = parent;
	n->depth = parent < 0 ? 0 : nodes[parent].depth + 1;
	n->share = share;
	n->weight = parent < 0 ? 1.0 : nodes[parent].weight * share;
	return nnodes++;
}

static uint64_t time_of(const struct kinstr_timer_stats *s)
{
	return use_oncpu ? s->oncpu_ns : s->wall_ns;
}

/* Measure one level: the nodes of frontier[], each function once. 0, or -errno. */
static int measure_level(const struct kinstr_kernel *k, const struct kinstr_plan_opts *popts, const int *frontier,
			 int nf, double interval, double threshold, int maxdepth, struct cli_run *run)
{
	struct level_fn *lf = calloc(nf, sizeof(*lf));
	struct kinstr_timer_stats *st = NULL;
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_probeset *ps = dev ? kinstr_probeset__new(dev, k) : NULL;
	struct kinstr_plan *pl = ps ? kinstr_plan__new(ps, popts) : NULL;
	unsigned int ntimers = 0, exits;
	int i, nl = 0, ret = -ENOMEM;
	char err[512];

	if (!lf || !pl)
		goto out;
	for (i = 0; i < nf; i++) {
		struct node *n = &nodes[frontier[i]];
		struct kinstr_why why;

		if (!n->f)
			continue;
		if (kinstr_plan__time_func(pl, n->f, ntimers, &exits, &why)) {
			/* the rule, without the function's name the tree already shows */
			const char *r = strstr(why.msg, ": ");

			snprintf(n->why, sizeof(n->why), "not timed: %.148s", r ? r + 2 : why.msg);
			continue;
		}
		lf[nl].node = frontier[i];
		lf[nl].timer = ntimers++;
		lf[nl].nsites = kinstr_plan__time_calls(pl, n->f, &ntimers, lf[nl].sites, MAX_SITES);
		nl++;
	}
	if (!nl) {
		ret = 0;
		goto out;
	}
	ret = kinstr_timers__create(dev, ntimers, 0, 0);
	if (ret) {
		cli_err("cannot create %u timers: %s", ntimers, strerror(-ret));
		goto out;
	}
	ret = kinstr_probeset__install(ps, err, sizeof(err));
	if (ret) {
		cli_err("%s", err);
		goto out;
	}
	fprintf(stderr, "kinstr: level %d: %d functions, %zu probes, %.1f s\n", nodes[frontier[0]].depth, nl,
		kinstr_probeset__cnt(ps), interval);
	/* this level's interval; the workload (-c CMD) started again each time it ends within it */
	run->deadline = cli_now() + interval;
	for (;;) {
		cli_run__wait(run, interval, NULL, NULL);
		if (!run->command || cli_stop || run->status < 0 || cli_now() >= run->deadline)
			break;
		if (cli_run__spawn(run)) {
			ret = -ECHILD;
			goto out;
		}
	}
	kinstr_probeset__remove(ps);
	st = calloc(ntimers, sizeof(*st));
	if (!st || kinstr_timers__read(dev, 0, ntimers, st)) {
		ret = -EIO;
		goto out;
	}
	for (i = 0; i < nl; i++) {
		struct node *n = &nodes[lf[i].node];
		const struct kinstr_timer_stats *fs = &st[lf[i].timer];
		uint64_t total = time_of(fs), in_calls = 0;
		unsigned int j, m;
		int c;

		n->measured = true;
		n->calls = fs->calls;
		n->time_ns = total;
		if (!fs->calls || !total) {
			snprintf(n->why, sizeof(n->why), "not called while timed");
			continue;
		}
		/* one child per callee (all indirect calls together): its call sites' time summed */
		for (j = 0; j < lf[i].nsites; j++) {
			const struct kinstr_callsite *sj = &lf[i].sites[j];
			uint64_t t = 0;
			double share;

			if (!sj->timed)
				continue;
			for (m = 0; m < j; m++)
				if (lf[i].sites[m].timed && lf[i].sites[m].callee == sj->callee)
					break;
			if (m < j)
				continue;	/* counted with an earlier site of the same callee */
			for (m = j; m < lf[i].nsites; m++)
				if (lf[i].sites[m].timed && lf[i].sites[m].callee == sj->callee)
					t += time_of(&st[lf[i].sites[m].timer]);
			in_calls += t;
			share = (double)t / (double)total;
			if (share > 1)
				share = 1;
			if (share < 0.005)
				continue;
			c = add_node(sj->callee, sj->callee ? NULL : "(indirect calls)", lf[i].node, share);
			if (c < 0)
				break;
			if (!sj->callee)
				snprintf(nodes[c].why, sizeof(nodes[c].why), "indirect: the callee is known at run time only");
			else if (nodes[c].weight < threshold)
				snprintf(nodes[c].why, sizeof(nodes[c].why), "below the threshold");
			else if (nodes[c].depth > maxdepth)
				snprintf(nodes[c].why, sizeof(nodes[c].why), "at the depth limit");
		}
		n->self = in_calls >= total ? 0 : 1.0 - (double)in_calls / (double)total;
	}
	ret = 0;
out:
	free(st);
	free(lf);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
	kinstr_dev__close(dev);
	return ret;
}

static const char *node_name(const struct node *n)
{
	return n->f ? n->f->name : n->label;
}

static int cmp_weight(const void *a, const void *b)
{
	double wa = nodes[*(const int *)a].weight, wb = nodes[*(const int *)b].weight;

	return wa < wb ? 1 : wa > wb ? -1 : 0;
}

static void print_tree(int id, const char *prefix)
{
	int kids[MAX_NODES], nk = 0, i;
	struct node *n = &nodes[id];
	char sub[512];

	for (i = 0; i < nnodes; i++)
		if (nodes[i].parent == id)
			kids[nk++] = i;
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
		print_tree(kids[i], sub);
}

static void print_json_node(int id)
{
	struct node *n = &nodes[id];
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
	for (i = 0; i < nnodes; i++)
		if (nodes[i].parent == id) {
			printf("%s", first ? "" : ",");
			first = 0;
			print_json_node(i);
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
	int maxdepth = 4, c, ret = CLI_FAIL, level, i, hot;
	long depth;
	const char *command = NULL;
	bool json = false;
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	const struct kinstr_func *root;
	struct cli_run run;

	use_oncpu = false;
	while ((c = getopt_long(argc, argv, "+i:t:D:c:h", opts, NULL)) != -1) {
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
		case 'N': popts.no_ftrace = true; break;
		case 'h': drill_usage(stdout); return CLI_OK;
		default: drill_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind != argc - 1 || interval <= 0 || threshold <= 0 || threshold >= 100 || maxdepth < 1) {
		drill_usage(stderr);
		return CLI_USAGE;
	}
	cli_run__init(&run, command, 0, false);
	k = cli_open_kernel(NULL, &dev);
	if (!k)
		return CLI_FAIL;
	root = cli_find_func(k, argv[optind], argv[optind]);
	if (!root)
		goto out;
	nnodes = 0;
	add_node(root, NULL, -1, 1.0);
	cli_catch_signals();
	if (command && cli_run__spawn(&run))
		goto out;
	for (level = 0; level <= maxdepth && !cli_stop; level++) {
		int frontier[MAX_NODES], nf = 0;

		for (i = 0; i < nnodes; i++) {
			struct node *n = &nodes[i];
			int a;

			if (n->depth != level || n->measured || n->why[0] || !n->f || n->weight < threshold / 100)
				continue;
			/* a function already on the path above: recursion, not a new place */
			for (a = n->parent; a >= 0; a = nodes[a].parent)
				if (nodes[a].f == n->f)
					break;
			if (a >= 0) {
				snprintf(n->why, sizeof(n->why), "recursive: %s is above", n->f->name);
				continue;
			}
			frontier[nf++] = i;
		}
		if (!nf)
			break;
		if (measure_level(k, &popts, frontier, nf, interval, threshold / 100, maxdepth, &run))
			goto out;
		if (level == 0 && !nodes[0].calls) {
			cli_err("%s was not called in %.1f s: nothing to drill into", root->name, interval);
			goto out;
		}
	}
	for (i = 0; i < nnodes; i++)	/* left at the depth limit */
		if (!nodes[i].measured && !nodes[i].why[0] && nodes[i].f)
			snprintf(nodes[i].why, sizeof(nodes[i].why), "%s", nodes[i].weight < threshold / 100 ?
				 "below the threshold" : "at the depth limit");
	if (json) {
		printf("{\"root\":");
		print_json_node(0);
		printf(",\"metric\":\"%s\",\"threshold\":%.4f,\"interval_s\":%.3f}\n", use_oncpu ? "oncpu" : "wall",
		       threshold / 100, interval);
	} else {
		printf("%s time of %s, by callee (%% of %s's time, %.1f s per level):\n", use_oncpu ? "on-CPU" : "wall",
		       root->name, root->name, interval);
		print_tree(0, "");
		printf("hot path:");
		for (hot = 0; hot >= 0;) {
			int best = -1;

			printf(" %s%s", hot ? "> " : "", node_name(&nodes[hot]));
			for (i = 0; i < nnodes; i++)
				if (nodes[i].parent == hot && nodes[i].f && (best < 0 || nodes[i].weight > nodes[best].weight))
					best = i;
			if (best >= 0 && nodes[best].weight < nodes[hot].weight * nodes[hot].self)
				best = -1;	/* its own code is hotter than any callee */
			hot = best;
		}
		printf("\n");
	}
	ret = CLI_OK;
out:
	cli_run__cleanup(&run);
	cli_close_kernel(k, dev);
	return ret;
}
