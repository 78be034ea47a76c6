// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr profile --cache: the functions named, each run as its instrumented copy in the code cache
 * with a timer started where its entry point lands and stopped before each of its exits
 * (KINSTR_CACHE_F_TIMER), planned and installed through libkinstr's code-cache set
 * (include/kinstr/cover.h, which names, plans and leaves out as for kinstr cover).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/cover.h>
#include "cli.h"

/* The set's functions into pf[], each at its timer: their count. */
static unsigned int funcs(const struct kinstr_cover *cv, struct cli_pfunc *pf)
{
	const struct kinstr_cacheset *cs = kinstr_cover__set(cv);
	size_t i, j, n = kinstr_cacheset__cnt(cs);

	for (i = 0; i < n; i++) {
		const struct kinstr_cache_fn *c = kinstr_cacheset__fn(cs, i);
		struct cli_pfunc *p = &pf[kinstr_cacheset__timer(cs, i)];

		memset(p, 0, sizeof(*p));
		p->f = kinstr_cacheset__func(cs, i);
		for (j = 0; j < kinstr_cache_fn__insn_cnt(c); j++)
			p->exits += kinstr_cache_fn__insn(c, j)->timer == KINSTR_CACHE_TIMER_STOPS;
	}
	return (unsigned int)n;
}

struct kinstr_cover *cli_profile_cache__plan(struct kinstr_dev *dev, const struct kinstr_kernel *k, char **names,
					     int nnames, bool keep, struct cli_pfunc **pf, unsigned int *n)
{
	struct kinstr_cover_opts o = { .sz = sizeof(o), .cache_flags = KINSTR_CACHE_F_TIMER, .keep = keep,
				       .left_out = cli_cache__left_out, .ctx = (void *)"profile" };
	const struct kinstr_cover_refusal *rf;
	struct kinstr_cover *cv = kinstr_cover__new(dev, k, &o);
	struct kinstr_why why;
	size_t nrf, i;
	int e, bad = 0;

	if (!cv) {
		cli_err("profile --cache: %s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < (size_t)nnames; i++) {
		e = kinstr_cover__add(cv, names[i], &why);
		if (e)
			cli_err("%s", why.msg);
		if (e && (!keep || e == -ENOMEM))
			goto fail;
	}
	e = kinstr_cover__plan(cv, &why);
	rf = kinstr_cover__refused(cv, &nrf);
	for (i = 0; i < nrf; i++, bad++)
		cli_err("%s: cannot be timed through the code cache: %s [%s]", rf[i].f->name, rf[i].r.why,
			kinstr_cache_refusal__id((unsigned int)rf[i].r.code));
	if (e && !nrf)
		cli_err("profile --cache: %s", why.msg);
	if (e || (bad && !keep))
		goto fail;
	*pf = calloc(kinstr_cacheset__cnt(kinstr_cover__set(cv)), sizeof(**pf));
	if (!*pf)
		goto fail;
	*n = funcs(cv, *pf);
	return cv;
fail:
	kinstr_cover__free(cv);
	return NULL;
}

int cli_profile_cache__install(struct kinstr_cover *cv, struct cli_pfunc *pf, unsigned int *n, bool quiet, bool ends)
{
	const struct kinstr_cacheset *cs;
	struct kinstr_why why;
	size_t i, j, jumps = 0, traps = 0;

	if (kinstr_cover__install(cv, KINSTR_INSTALL_F_WAIT, &why)) {
		cli_err("profile --cache: %s", why.msg);
		return -1;
	}
	*n = funcs(cv, pf);	/* a function the module refused (-k) left out: the others' timers again */
	cs = kinstr_cover__set(cv);
	for (i = 0; i < kinstr_cacheset__cnt(cs); i++)
		for (j = 0; j < kinstr_cache_fn__reentry_cnt(kinstr_cacheset__fn(cs, i)); j++) {
			if (kinstr_cache_fn__reentry(kinstr_cacheset__fn(cs, i), j)->jump)
				jumps++;
			else
				traps++;
		}
	if (!quiet)
		fprintf(stderr, "kinstr: timing %u functions through the code cache (%zu entry points: %zu jump, %zu trap)%s\n",
		*n, jumps + traps, jumps, traps, ends ? "" : "; Ctrl-C to stop");
	return 0;
}
