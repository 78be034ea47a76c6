// SPDX-License-Identifier: GPL-2.0
/*
 * The functions of the running kernel that jump conditionally into a GCC .cold fragment, and
 * whether the planner times them (kinstr_plan__time_func: a fragment whose every way out comes
 * back into the function is no exit). Prints "cold NAME timed|refused: WHY" per function named on
 * the command line (all of them with -a), then "functions N jump into a .cold fragment, M timed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/cfg.h>
#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>

#include "live_plan.h"

int main(int argc, char **argv)
{
	struct live_plan v;
	struct kinstr_kernel *k;
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl;
	bool all = argc > 1 && !strcmp(argv[1], "-a");
	unsigned long long last = 0;
	size_t i, j, n = 0, timed = 0;

	if (live_plan_open(&v, "cold_parts: open"))
		return 1;
	k = v.k;
	ps = v.ps;
	pl = v.pl;
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		const struct kinstr_fn *fn;
		const struct kinstr_cfg *cfg;
		bool cold = false, named = all;
		struct kinstr_why why;
		unsigned int exits;
		int a;

		for (a = all ? 2 : 1; a < argc; a++)
			named |= !strcmp(argv[a], f->name);
		if (f->module || f->addr == last || strstr(f->name, ".cold") || (!named && argc > 1 && !all))
			continue;
		last = f->addr;
		fn = kinstr_probeset__analysis(ps, f);
		if (!fn)
			continue;
		cfg = kinstr_fn__cfg(fn);
		for (j = 0; j < kinstr_cfg__insn_cnt(cfg) && !cold; j++) {
			const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, j);
			const struct kinstr_func *t;

			if (!(in->flags & KINSTR_CFG_I_TAIL_CALL) || in->x.flow != KINSTR_X86_FLOW_JCC)
				continue;
			t = kinstr_kernel__func_at(k, in->x.target);
			cold = t && strstr(t->name, ".cold");
		}
		if (!cold)
			continue;
		n++;
		memset(&why, 0, sizeof(why));
		a = kinstr_plan__time_func(pl, f, 0, &exits, &why);
		kinstr_probeset__truncate(ps, 0);
		timed += !a;
		if (named)
			printf("cold %s %s%s\n", f->name, a ? "refused: " : "timed", a ? why.msg : "");
	}
	printf("functions %zu jump into a .cold fragment, %zu timed\n", n, timed);
	live_plan_close(&v);
	return 0;
}
