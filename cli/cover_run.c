// SPDX-License-Identifier: GPL-2.0
/*
 * The code cache's run, for kinstr cover and kinstr count --every-block (cli.h, cli_cover__run):
 * the functions named, planned (--dry-run), installed through libkinstr's coverage
 * (include/kinstr/cover.h) and run while -c CMD or for -d seconds, then each block's count (or
 * hit), the lcov tracefile; or the one-shot probes of --once. The subcommands parse; this calls
 * the library, runs, and has out/cover.c print.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cover.h>
#include <kinstr/kinstr.h>
#include <kinstr/lcov.h>
#include <kinstr/lines.h>
#include "cli.h"
#include "cover.h"

/* -k: a function whose copy was refused at install is said (ctx: the command's name) and left out, unless interrupted. */
int cli_cache__left_out(const struct kinstr_func *f, const char *why, void *ctx)
{
	if (cli_stop)
		return 1;
	fprintf(stderr, "kinstr: %s: %s left out: %s\n", (const char *)ctx, f->name, why);
	return 0;
}

static void once_tick(void *ctx, double dt)
{
	(void)dt;
	kinstr_cover_once__tick(ctx);
}

static void run_init(struct cli_run *run, const char *command, double duration, bool json)
{
	cli_run__init(run, command, duration, false);
	cli_run__json(run, json, NULL);
	cli_catch_signals();
}

/* The run itself: CMD started, then until -d, a signal or CMD's end (tick every 0.1 s). -1: CMD did not start. */
static int run_while(struct cli_run *run, void (*tick)(void *ctx, double dt), void *ctx)
{
	cli_run__begin(run);
	if (run->command && cli_run__spawn(run))
		return -1;
	cli_run__wait(run, 0.1, tick, ctx);
	cli_run__stop(run);
	return 0;
}

/*
 * --once: one-shot coverage. A probe at every block's first instruction (the blocks the code
 * cache would count), each taken out as soon as it was hit (batches every 0.1 s): which blocks
 * ran, at almost no cost once the hot ones are gone.
 */
static int run_once(struct kinstr_cover *cv, const char *command, double duration, bool json)
{
	struct kinstr_cover_once *o = kinstr_cover_once__new(cv);
	struct kinstr_cover_once_sum s;
	struct kinstr_why why;
	struct cli_run run;
	int rc = CLI_FAIL, e;

	if (!o) {
		cli_err("cover --once: %s", strerror(errno));
		return CLI_FAIL;
	}
	if (!json)
		cli_cover__once_refused(o);
	run_init(&run, command, duration, json);
	if (kinstr_cover_once__install(o, &why)) {
		cli_err("cover --once: %s", why.msg);
		goto out;
	}
	kinstr_cover_once__sum(o, &s);
	if (!json)
		fprintf(stderr, "kinstr: one-shot coverage of %zu functions: %zu probes%s\n", s.funcs, s.probes,
			command || duration ? "" : "; Ctrl-C to stop");
	if (run_while(&run, once_tick, o))
		goto out;
	e = kinstr_cover_once__read(o);
	if (e) {
		cli_err("cover --once: %s", strerror(-e));
		goto out;
	}
	cli_cover__once_results(o, json, cli_now() - run.t0, run.status);
	rc = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	kinstr_cover_once__free(o);	/* removes what is left */
	return rc;
}

/* The copies installed (-k: each one the module refuses left out), run, read, printed, and --lcov. */
static int run(struct kinstr_cover *cv, const struct kinstr_kernel *k, const struct cli_cover_args *a,
	       struct kinstr_lines *lines)
{
	const struct kinstr_cover_refusal *rf;
	struct kinstr_why why;
	struct cli_run run;
	size_t nrf;
	int rc = CLI_FAIL, e;

	run_init(&run, a->command, a->duration, a->json);
	if (kinstr_cover__install(cv, KINSTR_INSTALL_F_WAIT, &why)) {
		cli_err("cover: %s", why.msg);
		goto out;
	}
	if (!a->json)
		fprintf(stderr, "kinstr: covering %zu functions%s\n", kinstr_cacheset__cnt(kinstr_cover__set(cv)),
			a->command || a->duration ? "" : "; Ctrl-C to stop");
	if (run_while(&run, NULL, NULL))
		goto out;
	e = kinstr_cover__read(cv);
	if (e) {
		cli_err("cover: cannot read the counters: %s", strerror(-e));
		goto out;
	}
	rf = kinstr_cover__refused(cv, &nrf);
	cli_cover__results(kinstr_cover__set(cv), rf, nrf, a->json, a->hit_only, cli_now() - run.t0, run.status, lines);
	if (a->lcov && kinstr_lcov__write(a->lcov, k, kinstr_cover__set(cv), lines, &why))
		cli_err("cover: %s", why.msg);	/* fails the command, whatever CMD's status */
	else
		rc = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	return rc;
}

int cli_cover__run(const struct cli_cover_args *a)
{
	struct kinstr_cover_opts o = { .sz = sizeof(o), .cache_flags = a->edges ? KINSTR_CACHE_F_EDGES : 0,
				       .keep = a->keep, .left_out = cli_cache__left_out, .ctx = (void *)"cover" };
	struct kinstr_cover *cv = NULL;
	struct kinstr_lines *lines = NULL;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	struct kinstr_why why;
	size_t bad = SIZE_MAX;
	int rc = CLI_OK, i, e;

	if (a->snapshot && !a->dry) {
		cli_err("cover: --snapshot plans only (--dry-run): a snapshot is not the running kernel");
		return CLI_USAGE;
	}
	k = cli_open_kernel(a->snapshot, &dev);
	if (!k)
		return CLI_FAIL;
	cv = kinstr_cover__new(dev, k, &o);
	if (!cv) {
		cli_err("cover: %s", strerror(errno));
		rc = CLI_FAIL;
		goto out;
	}
	/* every function the arguments name, each once, in the order named */
	for (i = 0; i < a->nfuncs; i++) {
		e = kinstr_cover__add(cv, a->funcs[i], &why);
		if (e)
			cli_err("%s", why.msg);
		if (e == -ENOMEM)
			goto out_fail;
		if (e)
			rc = CLI_FAIL;
	}
	if (rc && a->keep && kinstr_cover__func_cnt(cv))
		rc = CLI_OK;	/* -k: a name that matched nothing was reported; the others go on */
	if (a->dry) {
		e = cli_cover__dry_run(k, cv, a->json, a->edges);
		rc = rc ? rc : e;
		goto out;
	}
	if (rc)
		goto out;
	if (a->once) {
		if (a->edges) {
			cli_err("cover: --once takes each probe out at its first hit, --edges counts every pass: use one of them");
			rc = CLI_USAGE;
			goto out;
		}
		if (a->lcov) {
			cli_err("cover: --once tells hit or not, --lcov wants counts: use one of them");
			rc = CLI_USAGE;
			goto out;
		}
		rc = run_once(cv, a->command, a->duration, a->json);
		goto out;
	}
	/* written at the end: a place it cannot go is said now, not after the run */
	if (a->lcov && cli_check_writable("--lcov", a->lcov))
		goto out_fail;
	/* before anything goes in: a --debuginfo file that is no good stops here, and reading DWARF takes a while */
	lines = kinstr_cover__lines(cv, a->debuginfo, (size_t)a->ndebuginfo, &bad, &why);
	if (!lines) {
		cli_err("cover: %s%s", bad != SIZE_MAX ? "--debuginfo " : "", why.msg);
		goto out_fail;
	}
	if (!a->json)
		cli_cover__lines_from(k, cv, lines);
	/* the plans: a function the library refuses is listed with its reason and left out */
	if (kinstr_cover__plan(cv, &why)) {
		cli_err("cover: %s", why.msg);
		goto out_fail;
	}
	rc = run(cv, k, a, lines);
	goto out;
out_fail:
	rc = CLI_FAIL;
out:
	kinstr_cover__free(cv);
	kinstr_lines__free(lines);
	cli_close_kernel(k, dev);
	return rc;
}
