// SPDX-License-Identifier: GPL-2.0
/* kinstr profile FUNC...: time functions from their entry to each of their exits, per thread. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kinstr/plan.h>
#include "cli.h"

static void profile_usage(FILE *f)
{
	fprintf(f, "usage: kinstr profile [options] FUNC...\n\n"
		   "Time kernel functions from their entry to each of their exits (every ret,\n"
		   "return-thunk jump and tail call: every exit site is spliced, no return address is\n"
		   "touched). Per function: calls, inclusive wall time, inclusive on-CPU time (the\n"
		   "time its thread was switched out left out), min/mean/max, and a log2 histogram.\n"
		   "A recursive call counts once, its time with the outermost activation's.\n"
		   "FUNC is a function name, NAME@ADDR (one of several of that name), or a glob\n"
		   "('vfs_*').\n\n"
		   "  -d, --duration SEC  profile for SEC seconds (> 0)\n"
		   "  -c, --command CMD   run CMD and profile only it and the processes it starts\n"
		   "                      (its process group) while it runs; exit with its status\n"
		   "  -p, --pid PID       profile only process PID (its threads; it must exist)\n"
		   "  -i, --interval SEC  refresh the live table every SEC seconds (default 1)\n"
		   "  -s, --sort KEY      wall (default), oncpu, calls, mean or max\n"
		   "      --hist          print each function's latency histogram at the end\n"
		   "      --calls         also time each direct call instruction of each function\n"
		   "                      (from the call to the instruction after it): its time\n"
		   "                      splits into its callees' shares and its own\n"
		   "      --json          print the totals as one JSON object (no live table)\n"
		   "      --folded        print folded stacks for flame graphs: each path of timed\n"
		   "                      functions (outermost first, ';'-separated) and its own wall\n"
		   "                      time in microseconds, i.e. less the time of the timed\n"
		   "                      functions it called (flamegraph.pl, speedscope, ...)\n"
		   "  -o, --output FILE   write the totals to FILE, not stdout (which -c CMD shares)\n"
		   "      --no-ftrace     where only an int3 fits after a function's ftrace NOP, start\n"
		   "                      its timer with that int3, not with an ftrace direct call\n"
		   "                      from the NOP (the default; as cheap as a jump)\n"
		   "Without -d or -c, profile until interrupted (Ctrl-C). Interrupt contexts are\n"
		   "timed too unless -p or -c restricts to a process. Interrupted during -c CMD, CMD's\n"
		   "process group gets the signal too and kinstr exits 130 (SIGINT) or 143 (SIGTERM).\n"
		   "The live table needs a terminal (not TERM=dumb).\n");
}

#define MAX_CALLS 256

struct pfunc {
	const struct kinstr_func *f;
	unsigned int exits;
	struct kinstr_callsite *sites;	/* --calls */
	unsigned int nsites;
};

/* one run's options for the printers (batch runs several: set anew by each) */
static bool show_calls;
static const char *sort_key;
static const struct kinstr_timer_stats *sort_stats;

static uint64_t key_of(const struct kinstr_timer_stats *s)
{
	if (!strcmp(sort_key, "oncpu"))
		return s->oncpu_ns;
	if (!strcmp(sort_key, "calls"))
		return s->calls;
	if (!strcmp(sort_key, "mean"))
		return s->calls > s->recursive ? s->wall_ns / (s->calls - s->recursive) : 0;
	if (!strcmp(sort_key, "max"))
		return s->wall_max;
	return s->wall_ns;
}

static int cmp_rows(const void *a, const void *b)
{
	uint64_t ka = key_of(&sort_stats[*(const unsigned int *)a]), kb = key_of(&sort_stats[*(const unsigned int *)b]);

	return ka < kb ? 1 : ka > kb ? -1 : (int)(*(const unsigned int *)a - *(const unsigned int *)b);
}

static double us(uint64_t ns)
{
	return ns / 1000.0;
}

struct callee_row {
	const struct kinstr_func *callee;
	uint64_t calls, wall_ns;
};

static int cmp_callee(const void *a, const void *b)
{
	const struct callee_row *x = a, *y = b;

	return x->wall_ns < y->wall_ns ? 1 : x->wall_ns > y->wall_ns ? -1 : 0;
}

/* f's call sites summed by callee (indirect ones together); returns rows, fills *untimed. */
static unsigned int callee_rows(const struct pfunc *p, const struct kinstr_timer_stats *st, struct callee_row *rows,
				unsigned int *untimed)
{
	unsigned int i, j, n = 0;

	*untimed = 0;
	for (i = 0; i < p->nsites; i++) {
		const struct kinstr_callsite *s = &p->sites[i];

		if (!s->timed) {
			++*untimed;
			continue;
		}
		for (j = 0; j < n && rows[j].callee != s->callee; j++)
			;
		if (j == n)
			rows[n++] = (struct callee_row){ s->callee, 0, 0 };
		rows[j].calls += st[s->timer].calls;
		rows[j].wall_ns += st[s->timer].wall_ns;
	}
	qsort(rows, n, sizeof(*rows), cmp_callee);
	return n;
}

/* Where f's time goes: its callees' shares (call sites timed), then its own. */
static void print_calls(const struct pfunc *p, const struct kinstr_timer_stats *st, uint64_t total)
{
	struct callee_row rows[MAX_CALLS];
	uint64_t in_calls = 0;
	unsigned int n, i, untimed;

	n = callee_rows(p, st, rows, &untimed);
	for (i = 0; i < n; i++) {
		in_calls += rows[i].wall_ns;
		if (!rows[i].calls)
			continue;
		printf("    %-32s %10llu %12.3f  %5.1f%%\n", rows[i].callee ? rows[i].callee->name : "(indirect calls)",
		       (unsigned long long)rows[i].calls, rows[i].wall_ns / 1e6,
		       total ? 100.0 * rows[i].wall_ns / total : 0.0);
	}
	printf("    %-32s %10s %12.3f  %5.1f%%%s\n", "[self]", "", (total > in_calls ? total - in_calls : 0) / 1e6,
	       total ? 100.0 * (total > in_calls ? total - in_calls : 0) / total : 0.0,
	       untimed ? "  (includes calls that could not be timed)" : "");
}

static void print_table(const struct pfunc *pf, unsigned int n, const struct kinstr_timer_stats *st, bool hist)
{
	unsigned int *order = calloc(n, sizeof(*order)), i, b;

	if (!order)
		return;
	for (i = 0; i < n; i++)
		order[i] = i;
	sort_stats = st;
	qsort(order, n, sizeof(*order), cmp_rows);
	if (show_calls)
		printf("(under each function: its callees' share of its wall time, then its own)\n");
	printf("%-36s %10s %12s %12s %10s %10s %10s\n", "FUNCTION", "CALLS", "WALL ms", "ONCPU ms", "MIN us", "MEAN us",
	       "MAX us");
	for (i = 0; i < n; i++) {
		const struct kinstr_timer_stats *s = &st[order[i]];
		uint64_t timed = s->calls - s->recursive;

		printf("%-36s %10llu %12.3f %12.3f %10.1f %10.1f %10.1f\n", pf[order[i]].f->name,
		       (unsigned long long)s->calls, s->wall_ns / 1e6, s->oncpu_ns / 1e6,
		       timed ? us(s->wall_min) : 0.0, timed ? us(s->wall_ns / timed) : 0.0, us(s->wall_max));
		if (show_calls && timed)
			print_calls(&pf[order[i]], st, s->wall_ns);
		if (!hist || !timed)
			continue;
		for (b = 0; b < KINSTR_TIMER_HIST; b++) {
			uint64_t max = 0;
			unsigned int j, bar;

			if (!s->hist[b])
				continue;
			for (j = 0; j < KINSTR_TIMER_HIST; j++)
				if (s->hist[j] > max)
					max = s->hist[j];
			bar = (unsigned int)(40 * s->hist[b] / max);
			printf("    [%8.1f us, %8.1f us) %10llu %.*s\n", b ? (1ull << b) / 1000.0 : 0.0,
			       (1ull << (b + 1)) / 1000.0, (unsigned long long)s->hist[b], (int)(bar ? bar : 1),
			       "****************************************");
		}
	}
	fflush(stdout);
	free(order);
}

static void print_json(const struct pfunc *pf, unsigned int n, const struct kinstr_timer_stats *st, double secs,
		       int status)
{
	unsigned int i, b;

	printf("{\"seconds\":%.3f,", secs);
	if (status >= 0)
		printf("\"command_status\":%d,", status);
	printf("\"functions\":[");
	for (i = 0; i < n; i++) {
		const struct kinstr_timer_stats *s = &st[i];
		uint64_t timed = s->calls - s->recursive;

		printf("%s{\"function\":", i ? "," : "");
		cli_json_str(pf[i].f->name);
		printf(",\"exits\":%u,\"calls\":%llu,\"starts\":%llu,\"unmatched\":%llu,\"recursive\":%llu,"
		       "\"dropped\":%llu,\"wall_ns\":%llu,\"oncpu_ns\":%llu,\"min_ns\":%llu,\"mean_ns\":%llu,"
		       "\"max_ns\":%llu,\"hist_log2_ns\":[", pf[i].exits, (unsigned long long)s->calls,
		       (unsigned long long)s->starts, (unsigned long long)s->unmatched,
		       (unsigned long long)s->recursive, (unsigned long long)s->dropped,
		       (unsigned long long)s->wall_ns, (unsigned long long)s->oncpu_ns,
		       (unsigned long long)(timed ? s->wall_min : 0), (unsigned long long)(timed ? s->wall_ns / timed : 0),
		       (unsigned long long)s->wall_max);
		for (b = 0; b < KINSTR_TIMER_HIST; b++)
			printf("%s%llu", b ? "," : "", (unsigned long long)s->hist[b]);
		printf("]");
		if (show_calls) {
			struct callee_row rows[MAX_CALLS];
			unsigned int nr, r, untimed;
			uint64_t in_calls = 0;

			nr = callee_rows(&pf[i], st, rows, &untimed);
			printf(",\"untimed_call_sites\":%u,\"callees\":[", untimed);
			for (r = 0; r < nr; r++) {
				printf("%s{\"callee\":", r ? "," : "");
				cli_json_str(rows[r].callee ? rows[r].callee->name : "(indirect calls)");
				printf(",\"calls\":%llu,\"wall_ns\":%llu}", (unsigned long long)rows[r].calls,
				       (unsigned long long)rows[r].wall_ns);
				in_calls += rows[r].wall_ns;
			}
			printf("],\"self_ns\":%llu", (unsigned long long)(s->wall_ns > in_calls ? s->wall_ns - in_calls : 0));
		}
		printf("}");
	}
	printf("]}\n");
}

struct fpath {
	struct kinstr_timer_path p;
	uint64_t self;
};

static int cmp_path(const void *a, const void *b)
{
	const struct kinstr_timer_path *x = a, *y = b;
	uint32_t i;

	for (i = 0; i < x->depth && i < y->depth; i++)
		if (x->timers[i] != y->timers[i])
			return x->timers[i] < y->timers[i] ? -1 : 1;
	return (int)x->depth - (int)y->depth;
}

/* Paths of every CPU, merged; each path's own time is its time less its children's. */
static int print_folded(struct kinstr_dev *dev, const struct pfunc *pf, unsigned int n)
{
	uint32_t cap = KINSTR_TIMER_PATHS_MAX, found, i, j, m = 0;
	struct kinstr_timer_path *buf = calloc(cap, sizeof(*buf));
	struct fpath *all = NULL;
	uint64_t dropped_total = 0, trunc_total = 0, dropped, truncated;
	unsigned int cpu;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (cpu = 0;; cpu++) {
		struct fpath *g;

		ret = kinstr_timers__paths(dev, cpu, buf, cap, &found, &dropped, &truncated);
		if (ret == -EINVAL) {
			ret = 0;
			break;
		}
		if (ret) {
			cli_err("cannot read the paths: %s", strerror(-ret));
			goto out;
		}
		dropped_total += dropped;
		trunc_total += truncated;
		g = realloc(all, (m + found + 1) * sizeof(*all));
		if (!g) {
			ret = -ENOMEM;
			goto out;
		}
		all = g;
		for (i = 0; i < found; i++)
			all[m++].p = buf[i];
	}
	if (!m) {
		free(buf);
		free(all);
		return 0;
	}
	qsort(all, m, sizeof(*all), cmp_path);
	/* merge equal paths (other CPUs, or duplicates) */
	for (i = 1, j = 0; i < m; i++) {
		if (!cmp_path(&all[i].p, &all[j].p)) {
			all[j].p.calls += all[i].p.calls;
			all[j].p.wall_ns += all[i].p.wall_ns;
			all[j].p.oncpu_ns += all[i].p.oncpu_ns;
		} else {
			all[++j] = all[i];
		}
	}
	m = j + 1;
	for (i = 0; i < m; i++)
		all[i].self = all[i].p.wall_ns;
	/* a child path is its parent's path and one more timer: in sorted order, after it */
	for (i = 0; i < m; i++)
		for (j = i + 1; j < m && all[j].p.depth > all[i].p.depth &&
		     !memcmp(all[j].p.timers, all[i].p.timers, all[i].p.depth * sizeof(uint32_t)); j++)
			if (all[j].p.depth == all[i].p.depth + 1)
				all[i].self -= all[i].self >= all[j].p.wall_ns ? all[j].p.wall_ns : all[i].self;
	for (i = 0; i < m; i++) {
		if (all[i].self < 1000)
			continue;
		for (j = 0; j < all[i].p.depth; j++)
			printf("%s%s", j ? ";" : "", all[i].p.timers[j] < n ? pf[all[i].p.timers[j]].f->name : "?");
		printf(" %llu\n", (unsigned long long)(all[i].self / 1000));
	}
	if (dropped_total || trunc_total)
		fprintf(stderr, "kinstr: %llu calls not in a path (table full), %llu paths cut at %d functions\n",
			(unsigned long long)dropped_total, (unsigned long long)trunc_total, KINSTR_TIMER_PATH_DEPTH);
out:
	free(buf);
	free(all);
	return ret;
}

struct live_ctx {
	struct kinstr_dev *dev;
	const struct pfunc *pf;
	unsigned int n, ntimers;
	struct kinstr_timer_stats *st;
};

static void live_tick(void *ctx, double dt)
{
	struct live_ctx *lc = ctx;

	if (kinstr_timers__read(lc->dev, 0, lc->ntimers, lc->st) == 0) {
		printf("\033[H\033[2J");
		print_table(lc->pf, lc->n, lc->st, false);
	}
}

int cmd_profile(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "command", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "hist", no_argument, NULL, 'H' },
		{ "calls", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },
		{ "folded", no_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-ftrace", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double duration = 0, interval = 1;
	const char *command = NULL, *output = NULL;
	bool json = false, hist = false, folded = false, live;
	struct kinstr_timer_stats *st = NULL;
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_timed *timed = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	struct pfunc *pf = NULL;
	unsigned int n = 0, cap = 0, ntimers = 0;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	char err[512], *end;
	int c, i, ret = CLI_FAIL, out_fd = -1;
	long pid = 0;
	struct cli_run run;

	show_calls = false;
	sort_key = "wall";
	while ((c = getopt_long(argc, argv, "+d:c:p:i:s:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &duration))
				return CLI_USAGE;
			break;
		case 'c': command = optarg; break;
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || pid <= 0 || pid > INT32_MAX) {
				cli_err("--pid: not a process id: '%s'", optarg);
				return CLI_USAGE;
			}
			if (kill((pid_t)pid, 0) && errno == ESRCH) {
				cli_err("--pid: no process %ld", pid);
				return CLI_FAIL;
			}
			break;
		case 'i':
			if (cli_parse_seconds("--interval", optarg, &interval))
				return CLI_USAGE;
			break;
		case 's': sort_key = optarg; break;
		case 'H': hist = true; break;
		case 'C': show_calls = true; break;
		case 'j': json = true; break;
		case 'F': folded = true; break;
		case 'o': output = optarg; break;
		case 'N': popts.no_ftrace = true; break;
		case 'h': profile_usage(stdout); return CLI_OK;
		default: profile_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind >= argc || (command && pid)) {
		if (command && pid)
			cli_err("-c and -p both name the process to profile: use one");
		profile_usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(sort_key, "wall") && strcmp(sort_key, "oncpu") && strcmp(sort_key, "calls") &&
	    strcmp(sort_key, "mean") && strcmp(sort_key, "max")) {
		cli_err("--sort: wall, oncpu, calls, mean or max, not '%s'", sort_key);
		return CLI_USAGE;
	}
	for (i = optind; i < argc; i++)
		if (strpbrk(argv[i], "+%")) {
			cli_err("%s: profile takes function names or globs (FUNC, 'vfs_*'), not offsets or %%return",
				argv[i]);
			return CLI_USAGE;
		}
	cli_run__init(&run, command, duration, true);
	/* the output first: a file that cannot be written fails before anything is patched */
	if (output) {
		out_fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			cli_err("cannot write %s: %s", output, strerror(errno));
			return CLI_FAIL;
		}
	}
	k = cli_open_kernel(NULL, &dev);
	if (!k) {
		if (out_fd >= 0)
			close(out_fd);
		return CLI_FAIL;
	}
	ps = kinstr_probeset__new(dev, k);
	pl = ps ? kinstr_plan__new(ps, &popts) : NULL;
	timed = calloc(KINSTR_AREA_MAX_PROBES / 2, sizeof(*timed));
	if (!pl || !timed)
		goto out;
	for (i = optind; i < argc; i++) {
		struct kinstr_why why;
		size_t got, skipped, j;

		if (kinstr_plan__time_spec(pl, argv[i], n, timed, KINSTR_AREA_MAX_PROBES / 2, &got, &skipped, &why)) {
			cli_err("%s", why.msg);
			goto out;
		}
		if (n + got > cap) {
			struct pfunc *g = realloc(pf, (cap = n + got + 64) * sizeof(*pf));

			if (!g)
				goto out;
			pf = g;
		}
		for (j = 0; j < got; j++, n++) {
			memset(&pf[n], 0, sizeof(pf[n]));
			pf[n].f = timed[j].f;
			pf[n].exits = timed[j].exits;
		}
		if (skipped)
			fprintf(stderr, "kinstr: %s: %zu functions timed, %zu could not be (every exit must be probeable)\n",
				argv[i], got, skipped);
	}
	ntimers = n;
	for (i = 0; show_calls && i < (int)n; i++) {
		pf[i].sites = calloc(MAX_CALLS, sizeof(*pf[i].sites));
		if (!pf[i].sites)
			goto out;
		pf[i].nsites = kinstr_plan__time_calls(pl, pf[i].f, &ntimers, pf[i].sites, MAX_CALLS);
	}
	st = calloc(ntimers, sizeof(*st));
	if (!st)
		goto out;
	if (command) {	/* gated: the timers follow its process group from its first instruction */
		if (cli_run__spawn(&run))
			goto out;
		pid = run.child;
	}
	c = kinstr_timers__create(dev, ntimers, (uint32_t)pid, (folded ? KINSTR_TIMERS_F_PATHS : 0) |
				  (command ? KINSTR_TIMERS_F_PGRP : 0));
	if (c) {
		cli_err("cannot create %u timers: %s%s", ntimers, strerror(-c),
			c == -EOPNOTSUPP ? " (the module found no sched_switch tracepoint)" : "");
		goto out;
	}
	cli_catch_signals();
	if (kinstr_probeset__install(ps, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	if (!json) {
		size_t np = kinstr_probeset__cnt(ps), kinds[4] = { 0 }, j;

		for (j = 0; j < np; j++)
			kinds[kinstr_probeset__info(ps, j)->kind & 3]++;
		fprintf(stderr, "kinstr: timing %u functions with %zu probes (%zu jump, %zu trap, %zu ftrace)%s\n",
			n, np, kinds[KINSTR_PROBE_JUMP], kinds[KINSTR_PROBE_TRAP], kinds[KINSTR_PROBE_FTRACE],
			command || duration > 0 ? "" : "; Ctrl-C to stop");
	}
	cli_run__go(&run);
	cli_run__begin(&run);
	live = !json && !folded && !command && cli_term_ok();
	{
		struct live_ctx lc = { dev, pf, n, ntimers, st };

		cli_run__wait(&run, interval, live ? live_tick : NULL, &lc);
	}
	cli_run__stop(&run);
	/* probes out first: no call is half-timed in what we read */
	kinstr_probeset__remove(ps);
	if (kinstr_timers__read(dev, 0, ntimers, st)) {
		cli_err("cannot read the timers: %s", strerror(errno));
		goto out;
	}
	fflush(stdout);
	if (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0) {
		cli_err("cannot write %s: %s", output, strerror(errno));
		goto out;
	}
	if (folded) {
		if (print_folded(dev, pf, n))
			goto out;
	} else if (json) {
		print_json(pf, n, st, cli_now() - run.t0, run.status);
	} else {
		print_table(pf, n, st, hist);
	}
	if (fflush(stdout) || ferror(stdout)) {
		cli_err("cannot write %s: %s", output ? output : "the totals", strerror(errno));
		goto out;
	}
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(st);
	for (i = 0; pf && i < (int)n; i++)
		free(pf[i].sites);
	free(pf);
	free(timed);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
	cli_close_kernel(k, dev);
	if (out_fd >= 0)
		close(out_fd);
	return ret;
}
