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

#include <kinstr/btf.h>
#include <kinstr/plan.h>
#include <kinstr/tally.h>
#include <kinstr/trace.h>
#include <kinstr/stacks.h>
#include "cli.h"

#define BY_MAX_EVENTS 4096
#define BY_STACK KINSTR_TALLY_NR_KEYS	/* --by stack: not a trace key, kinstr's BPF program */


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
		   "                      out; the others are counted (it fails if every one is); with\n"
		   "                      --every-block, as 'kinstr cover -k'\n"
		   "  -e, --every         probe each FUNC at every jump site that does not share bytes\n"
		   "                      with the previous one (first to last), not just its entry\n"
		   "      --every-block   count every basic block of each FUNC (or GLOB) through the\n"
		   "                      code cache: an instrumented copy, no trap ('kinstr cover\n"
		   "                      --count', which prints the blocks)\n"
		   "  -i, --interval SEC  refresh the live table every SEC seconds (default 1)\n"
		   "      --json          print the totals as one JSON object (no live table)\n"
		   "                      (on stdout alone: -c CMD's own output goes to stderr)\n"
		   "  -o, --output FILE   write the totals to FILE, not stdout (which -c CMD shares)\n"
		   "      --dry-run       show what would be patched and why; touch nothing\n"
		   CLI_HELP_MAX_PROBES("  ")
		   "      --by KEY        count each probe's hits by KEY: comm, pid, tid, or value (the\n"
		   "                      spec's first VALUE, as kinstr trace takes them: 'vfs_read(count)');\n"
		   "                      a string value is a row per whole string as recorded (string[N]:\n"
		   "                      N - 1 characters; one that filled them is marked [full]), printed\n"
		   "                      last; COMM is the hits' command name, or (several) when\n"
		   "                      more than one command hit that value (JSON: the last hit's\n"
		   "                      comm, and comm_several);\n"
		   "                      the hits go through the trace buffers, so a hit they had no room\n"
		   "                      for is counted as lost, one past the table's 65,536 rows as\n"
		   "                      overflow (both printed)\n"
		   "      --by stack      count each probe's hits by kernel stack, unwound from the\n"
		   "                      site's registers by the kernel's unwinder (a BPF program run\n"
		   "                      at the probes: 16,384 stacks; a hit whose stack found no room\n"
		   "                      is counted as lost)\n"
		   "      --folded        with --by stack: one line per stack, root first, frames joined\n"
		   "                      by ';' and the hits last (flamegraph.pl's input)\n"
		   "      --metrics ADDR:PORT  serve the counters to Prometheus while counting, as\n"
		   "                      'kinstr serve' does (GET /metrics; e.g. 127.0.0.1:9464)\n"
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
			     bool keep, bool other)
{
	struct cli_cover_args a = { .funcs = specs, .nfuncs = n, .command = command, .duration = duration,
				    .json = json, .dry = dry, .keep = keep };
	int i;

	if (other) {
		cli_err("--every-block takes -c, -d, -k, --json and --dry-run only");
		return CLI_USAGE;
	}
	for (i = 0; i < n; i++)
		if (strpbrk(specs[i], "+%")) {
			cli_err("--every-block: '%s': give functions (FUNC or GLOB), not instructions", specs[i]);
			return CLI_USAGE;
		}
	return cli_cover__run(&a);
}

static void by_tick(void *ctx, double dt)
{
	(void)dt;
	kinstr_tally__consume(ctx);	/* an error shows again at the drain */
}

static void by_print(const struct kinstr_tally *ta, const struct kinstr_trace_event *ev, unsigned int key, bool json,
		     double secs, int status)
{
	size_t i, n = kinstr_tally__row_cnt(ta);

	if (json) {
		printf("{\"by\":\"%s\",\"seconds\":%.3f,\"rows\":[", kinstr_tally_key__str(key), secs);
		for (i = 0; i < n; i++) {
			const struct kinstr_tally_row *r = kinstr_tally__row(ta, i);
			bool str = key == KINSTR_TALLY_VALUE && ev[r->event].vals[0].v.kind == KINSTR_VAL_STR;

			printf("%s{\"probe\":", i ? "," : "");
			cli_json_str(ev[r->event].name);
			if (str) {
				printf(",\"value\":");
				cli_json_str(r->str ? r->str : "");
				printf(",\"value_full\":%s,\"comm\":", r->str_full ? "true" : "false");
				cli_json_str(r->comm);
				printf(",\"comm_several\":%s", r->comm_several ? "true" : "false");
			} else if (key != KINSTR_TALLY_COMM) {
				printf(",\"%s\":%llu,\"comm\":", kinstr_tally_key__str(key), (unsigned long long)r->key);
				cli_json_str(r->comm);
				if (key == KINSTR_TALLY_VALUE)
					printf(",\"comm_several\":%s", r->comm_several ? "true" : "false");
			} else {
				printf(",\"comm\":");
				cli_json_str(r->comm);
			}
			printf(",\"hits\":%llu}", (unsigned long long)r->hits);
		}
		printf("],\"lost\":%llu,\"overflow\":%llu,\"status\":%d}\n", (unsigned long long)kinstr_tally__lost(ta),
		       (unsigned long long)kinstr_tally__overflow(ta), status);
		return;
	}
	static const char *const head[KINSTR_TALLY_NR_KEYS] = { "COMM", "PID", "TID", "VALUE" };
	size_t full = 0;

	for (i = 0; i < n; i++)
		if (kinstr_tally__row(ta, i)->str) {
			/* strings last and whole: no column is wide enough for a path */
			printf("%-40s %-16s %12s  %s\n", "PROBE", "COMM", "HITS", "VALUE");
			break;
		}
	if (i == n)
		printf("%-40s %-20s %-16s %12s\n", "PROBE", head[key], key == KINSTR_TALLY_COMM ? "" : "COMM", "HITS");
	for (i = 0; i < n; i++) {
		const struct kinstr_tally_row *r = kinstr_tally__row(ta, i);
		char k[64];

		if (r->str) {
			printf("%-40s %-16s %12llu  %s%s\n", ev[r->event].name, r->comm_several ? "(several)" : r->comm,
			       (unsigned long long)r->hits,
			       r->str, r->str_full ? " [full]" : "");
			full += r->str_full;
			continue;
		}
		if (key == KINSTR_TALLY_COMM)
			snprintf(k, sizeof(k), "%s", r->comm);
		else if (key == KINSTR_TALLY_VALUE)
			snprintf(k, sizeof(k), "%llu (0x%llx)", (unsigned long long)r->key, (unsigned long long)r->key);
		else
			snprintf(k, sizeof(k), "%llu", (unsigned long long)r->key);
		printf("%-40s %-20s %-16s %12llu\n", ev[r->event].name, k, key == KINSTR_TALLY_COMM ? "" :
		       r->comm_several ? "(several)" : r->comm, (unsigned long long)r->hits);
	}
	if (full)
		fprintf(stderr, "kinstr: %zu values [full]: they filled the string's bound (string[N] records N - 1 "
			"characters, at most string[%d]); longer strings are cut there and share a row\n", full,
			KINSTR_TRACE_STR_MAX);
	if (kinstr_tally__lost(ta) || kinstr_tally__overflow(ta))
		fprintf(stderr, "kinstr: %llu hits lost (the trace buffers were full), %llu past the table's rows: the "
			"counts above are short by that many\n", (unsigned long long)kinstr_tally__lost(ta),
			(unsigned long long)kinstr_tally__overflow(ta));
}

/* Once the specs are in: none left (--keep-going: each said why) fails, --dry-run prints the plan and ends. */
#define CLI_GO_ON (-1)
static int planned(const struct kinstr_probeset *ps, const struct kinstr_kernel *k, bool dry)
{
	if (!kinstr_probeset__cnt(ps)) {
		cli_err("no spec left to count");
		return CLI_FAIL;
	}
	if (dry) {
		cli_count__plan(ps, k);
		return CLI_OK;
	}
	return CLI_GO_ON;
}

static void stacks_print(const struct kinstr_probeset *ps, const struct kinstr_kernel *k,
			 const struct kinstr_stack_row *rows, int n, uint64_t lost, bool json, bool folded, double secs,
			 int status)
{
	char sym[192];
	int i;
	uint32_t d;

	if (json)
		printf("{\"by\":\"stack\",\"seconds\":%.3f,\"stacks\":[", secs);
	for (i = 0; i < n; i++) {
		const struct kinstr_stack_row *r = &rows[i];
		const struct kinstr_probe_info *p = kinstr_probeset__info(ps, r->probe);

		if (json) {
			printf("%s{\"probe\":", i ? "," : "");
			cli_json_str(kinstr_stacks__sym(k, p->addr, sym, sizeof(sym)));
			printf(",\"addr\":\"0x%llx\",\"hits\":%llu,\"frames\":[", (unsigned long long)p->addr,
			       (unsigned long long)r->hits);
			for (d = 0; d < r->depth; d++) {
				printf("%s", d ? "," : "");
				cli_json_str(kinstr_stacks__sym(k, r->ips[d], sym, sizeof(sym)));
			}
			printf("]}");
		} else if (folded) {
			for (d = r->depth; d-- > 0;)
				printf("%s%s", kinstr_stacks__sym(k, r->ips[d], sym, sizeof(sym)), d ? ";" : "");
			printf(" %llu\n", (unsigned long long)r->hits);
		} else {
			printf("@[\n");
			for (d = 0; d < r->depth; d++)
				printf("    %s\n", kinstr_stacks__sym(k, r->ips[d], sym, sizeof(sym)));
			printf("]: %llu\n", (unsigned long long)r->hits);
		}
	}
	if (json)
		printf("],\"lost\":%llu,\"status\":%d}\n", (unsigned long long)lost, status);
	if (lost)
		fprintf(stderr, "kinstr: %llu hits lost (no room for their stack): the counts above are short by that many\n",
			(unsigned long long)lost);
}

/*
 * --by stack: kinstr's stack program (lib/results/stacks.c) at every probe of the specs, its maps read
 * once the probes are out.
 */
static int count_by_stack(int n, char **specs, const struct kinstr_plan_opts *popts, const char *command,
			  double duration, bool json, bool folded, bool keep, bool dry)
{
	struct kinstr_stack_row *rows = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_stacks *st = NULL;
	struct kinstr_plan *pl = NULL;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	int i, nrows, ret = CLI_FAIL;
	uint64_t lost = 0;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct cli_run run;
	char err[512];

	for (i = 0; i < n; i++) {
		struct kinstr_spec sp;

		if (kinstr_spec__parse(specs[i], &sp, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_USAGE;
		}
	}
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, json, NULL);
	st = kinstr_stacks__new(err, sizeof(err));
	if (!st) {
		cli_err("--by stack: %s", err);
		return CLI_FAIL;
	}
	so = (struct cli_session_opts){ .popts = popts };
	if (cli_session__open(&se, &so) != CLI_OK)
		goto out_st;
	k = se.k, dev = se.dev, ps = se.ps, pl = se.pl;
	for (i = 0; i < n; i++)
		if (cli_add_spec(pl, specs[i]) && !keep)
			goto out;
	ret = planned(ps, k, dry);
	if (ret != CLI_GO_ON)
		goto out;
	ret = CLI_FAIL;
	if (kinstr_stacks__attach(st, ps))
		goto out;
	if (cli_run__start(&run, ps))
		goto out;
	cli_run__wait(&run, 0.2, NULL, NULL);
	cli_run__stop(&run);
	kinstr_probeset__remove(ps);	/* then every handler finished: the maps hold every hit */
	kinstr_dev__sync(dev);
	nrows = kinstr_stacks__read(st, &rows, &lost);
	if (nrows < 0) {
		cli_err("--by stack: reading the stacks: %s", strerror(-nrows));
		goto out;
	}
	stacks_print(ps, k, rows, nrows, lost, json, folded, cli_now() - run.t0, run.status);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(rows);
	cli_session__close(&se);
out_st:
	kinstr_stacks__free(st);
	return ret;
}

/*
 * --by KEY: each spec as a trace probe (its hits recorded with pid, tid, comm and its values),
 * the tally reading the buffers while it runs; the probes out, then the rest read and printed.
 */
static int count_by(int n, char **specs, unsigned int key, const struct kinstr_plan_opts *popts, const char *command,
		    double duration, bool json, bool keep, bool dry)
{
	struct kinstr_trace_opts topts = { .sz = sizeof(topts) };
	struct kinstr_trace_event *ev = calloc(BY_MAX_EVENTS, sizeof(*ev));
	struct kinstr_probeset *ps = NULL;
	struct kinstr_tally *ta = NULL;
	struct kinstr_trace *t = NULL;
	struct kinstr_plan *pl = NULL;
	struct kinstr_btf *btf = NULL;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	unsigned int nev = 0, i;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct cli_run run;
	char err[512];
	int ret = CLI_FAIL, r;

	if (!ev)
		return CLI_FAIL;
	for (i = 0; i < (unsigned int)n; i++) {	/* the specs' syntax before anything is opened */
		struct kinstr_spec sp;

		if (kinstr_spec__parse_trace(specs[i], &sp, err, sizeof(err))) {
			cli_err("%s", err);
			free(ev);
			return CLI_USAGE;
		}
		if (key == KINSTR_TALLY_VALUE && !strchr(specs[i], '(')) {
			cli_err("--by value: '%s' names no value: give SPEC(VALUE), e.g. 'vfs_read(count)'", specs[i]);
			free(ev);
			return CLI_USAGE;
		}
	}
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, json, NULL);
	so = (struct cli_session_opts){ .popts = popts };
	if (cli_session__open(&se, &so) != CLI_OK) {
		free(ev);
		return CLI_FAIL;
	}
	k = se.k, dev = se.dev, ps = se.ps, pl = se.pl;
	btf = kinstr_btf__open(NULL);	/* NULL: registers only */
	for (i = 0; i < (unsigned int)n; i++)
		if (cli_add_trace(pl, specs[i], btf, ev, &nev, BY_MAX_EVENTS) && !keep)
			goto out;
	ret = planned(ps, k, dry);
	if (ret != CLI_GO_ON)
		goto out;
	ret = CLI_FAIL;
	t = kinstr_trace__create(dev, &topts);
	ta = t ? kinstr_tally__new(t, ev, nev, key, 0) : NULL;
	if (!ta) {
		cli_err("cannot create the trace buffers for --by: %s", strerror(errno));
		goto out;
	}
	if (cli_run__start(&run, ps))
		goto out;
	cli_run__wait(&run, 0.05, by_tick, ta);
	cli_run__stop(&run);
	/* probes out, every handler finished (quiescence), then what the buffers hold */
	kinstr_probeset__remove(ps);
	kinstr_dev__sync(dev);
	r = kinstr_tally__drain(ta);
	if (r) {
		cli_err("reading the trace buffers: %s", strerror(-r));
		goto out;
	}
	by_print(ta, ev, key, json, cli_now() - run.t0, run.status);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	kinstr_tally__free(ta);
	cli_session__unplan(&se);	/* removes the probes */
	kinstr_trace__free(t);
	kinstr_btf__close(btf);
	cli_session__close(&se);
	free(ev);
	return ret;
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
		{ "by", required_argument, NULL, 'b' },
		{ "folded", no_argument, NULL, 'F' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	double duration = 0, interval = 1;
	const char *command = NULL, *output = NULL;
	bool json = false, dry = false, live, keep = false, every_block = false, folded = false;
	const char *metrics_at = NULL;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct cli_metrics_src src = { 0 };
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	uint64_t *hits = NULL, *prev = NULL;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	char err[512];
	int c, i, ret = CLI_FAIL, by = -1;
	struct cli_run run;

	while ((c = getopt_long(argc, argv, "d:c:i:eko:h", opts, NULL)) != -1) {
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
		case 'b':
			by = !strcmp(optarg, "stack") ? BY_STACK : kinstr_tally_key__parse(optarg);
			if (by < 0) {
				cli_err("--by: comm, pid, tid, value or stack, not '%s'", optarg);
				return CLI_USAGE;
			}
			break;
		case 'F': folded = true; break;
		case 'm': metrics_at = optarg; break;
		case 'h': count_usage(stdout); return CLI_OK;
		default: count_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		count_usage(stderr);
		return CLI_USAGE;
	}
	if (metrics_at && (by >= 0 || every_block || dry)) {
		cli_err("--metrics goes with plain counting, not --by, --every-block or --dry-run");
		return CLI_USAGE;
	}
	if (folded && by != BY_STACK) {
		cli_err("--folded goes with --by stack");
		return CLI_USAGE;
	}
	if (by >= 0) {
		if (every_block || output) {
			cli_err("--by takes -c, -d, -e, -k, --json, --dry-run and --max-probes, not %s",
				every_block ? "--every-block" : "--output");
			return CLI_USAGE;
		}
		if (by == BY_STACK)
			return count_by_stack(argc - optind, argv + optind, &popts, command, duration, json, folded, keep,
					      dry);
		return count_by(argc - optind, argv + optind, (unsigned int)by, &popts, command, duration, json, keep, dry);
	}
	if (every_block)
		return count_every_block(argc - optind, argv + optind, command, duration, json, dry, keep,
					 output || popts.every);
	for (i = optind; i < argc; i++) {	/* the specs' syntax before anything is opened */
		struct kinstr_spec sp;

		if (kinstr_spec__parse(argv[i], &sp, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_USAGE;
		}
	}
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, json, output);
	so = (struct cli_session_opts){ .output = dry ? NULL : output, .metrics_at = metrics_at,
					.metrics_write = cli_metrics__probes, .metrics_ctx = &src, .popts = &popts };
	if ((ret = cli_session__open(&se, &so)) != CLI_OK)
		return ret;
	ret = CLI_FAIL;
	k = se.k, dev = se.dev, ps = se.ps, pl = se.pl;
	for (i = optind; i < argc; i++)
		if (cli_add_spec(pl, argv[i]) && !keep)
			goto out;
	ret = planned(ps, k, dry);
	if (ret != CLI_GO_ON)
		goto out;
	ret = CLI_FAIL;
	hits = calloc(kinstr_probeset__cnt(ps), sizeof(*hits));
	prev = calloc(kinstr_probeset__cnt(ps), sizeof(*prev));
	if (!hits || !prev)
		goto out;
	if (cli_run__start(&run, ps))
		goto out;
	if (metrics_at) {	/* the same counters, scraped while the run goes on */
		src = (struct cli_metrics_src){ .dev = dev, .ps = ps, .ncount = kinstr_probeset__cnt(ps),
						.scrapes = &se.m.scrapes };
		cli_run__watch(&run, se.m.fd, cli_metrics__ready, &se.m);
	}
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
	if (cli_output_begin(se.out_fd, output))
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
	cli_session__close(&se);	/* removes the probes */
	return ret;
}
