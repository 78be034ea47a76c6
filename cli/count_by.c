// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr count's runs besides plain counting: --by KEY (the hits counted by key in kinstr.ko's
 * tally, read by lib/results/tally.c) and --by stack (kinstr's stack program, lib/results/stacks.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/btf.h>
#include <kinstr/plan.h>
#include <kinstr/tally.h>
#include <kinstr/stacks.h>
#include "cli.h"

#define BY_MAX_EVENTS 4096

/* Once the specs are in: none left (--keep-going: each said why) fails, --dry-run prints the plan and ends. */
int cli_count__planned(const struct kinstr_probeset *ps, const struct kinstr_kernel *k, bool dry)
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

/*
 * --by stack: kinstr's stack program (lib/results/stacks.c) at every probe of the specs, its maps read
 * once the probes are out.
 */
int cli_count__by_stack(int n, char **specs, const struct cli_common *co, const struct kinstr_plan_opts *popts,
			bool folded)
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
	struct kinstr_why why;

	cli_run__init(&run, co->command, co->duration, false);
	cli_run__json(&run, co->json, NULL);
	st = kinstr_stacks__new(&why);
	if (!st) {
		cli_err("--by stack: %s", why.msg);
		return CLI_FAIL;
	}
	so = (struct cli_session_opts){ .popts = popts, .scope = co->dry ? NULL : co, .specs = specs, .nspecs = n,
					.run = &run };
	if ((ret = cli_session__open(&se, &so)) != CLI_OK)
		goto out_st;
	ret = CLI_FAIL;
	k = se.k, dev = se.dev, ps = se.ps, pl = se.pl;
	for (i = 0; i < n; i++)
		if (cli_add_spec(pl, &se.sp[i]) && !co->keep)
			goto out;
	ret = cli_count__planned(ps, k, co->dry);
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
	cli_count__stacks_print(ps, k, rows, nrows, lost, co->json, folded, cli_now() - run.t0, run.status);
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
 * --by KEY: each spec as a tally probe (its event and values planned as for a trace probe), each
 * hit counted under its key in the module's tables per CPU; read once the probes are out.
 */
int cli_count__by(int n, char **specs, const struct cli_common *co, const struct kinstr_plan_opts *popts,
		  unsigned int key)
{
	struct cli_run run;
	struct cli_session_opts so = { .popts = popts, .trace_events = BY_MAX_EVENTS, .scope = co->dry ? NULL : co,
				       .run = &run, .specs = specs, .nspecs = n, .trace_specs = true };
	struct cli_session se = CLI_SESSION_INIT;
	struct kinstr_tally *ta = NULL;
	uint64_t missed, filtered;
	size_t j;
	int i, ret, r;

	for (i = 0; i < n; i++)
		if (key == KINSTR_TALLY_VALUE && !strchr(specs[i], '(')) {
			cli_err("--by value: '%s' names no value: give SPEC(VALUE), e.g. 'vfs_read(count)'", specs[i]);
			return CLI_USAGE;
		}
	cli_run__init(&run, co->command, co->duration, false);
	cli_run__json(&run, co->json, NULL);
	if ((ret = cli_session__open(&se, &so)) != CLI_OK)
		return ret;
	for (i = 0; i < n; i++)
		if (cli_session__add_trace(&se, &se.sp[i]) && !co->keep)
			goto fail;
	ret = cli_count__planned(se.ps, se.k, co->dry);
	if (ret != CLI_GO_ON)
		goto out;
	for (j = 0; j < kinstr_probeset__cnt(se.ps); j++)
		kinstr_probeset__set_tally(se.ps, j);
	ta = kinstr_tally__new_dev(se.dev, se.ev, se.nev, key, 0);
	if (!ta) {
		cli_err("--by: cannot create the tally in kinstr.ko: %s%s", strerror(errno),
			errno == EINVAL || errno == ENOTTY ? " (a kinstr.ko older than ABI 0.18?)" : "");
		goto fail;
	}
	if (cli_run__start(&run, se.ps))
		goto fail;
	cli_run__wait(&run, 0.2, NULL, NULL);
	cli_run__stop(&run);
	missed = kinstr_probeset__missed_total(se.ps);	/* (read while the probes are in) */
	filtered = kinstr_probeset__filtered_total(se.ps);
	cli_session__quiesce(&se);	/* then no probe writes the tables: each hit is in them */
	r = kinstr_tally__drain(ta);
	if (r) {
		cli_err("reading the tally: %s", strerror(-r));
		goto fail;
	}
	kinstr_tally__add_lost(ta, missed);
	cli_count__by_print(ta, se.ev, key, co->json, cli_now() - run.t0, run.status, filtered);
	ret = cli_run__status(&run);
	goto out;
fail:
	ret = CLI_FAIL;
out:
	cli_run__cleanup(&run);
	kinstr_tally__free(ta);
	cli_session__close(&se);
	return ret;
}
