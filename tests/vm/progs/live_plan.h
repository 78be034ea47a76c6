/* SPDX-License-Identifier: GPL-2.0 */
/* For the VM test programs that ask the planner about the live kernel: one view, opened and closed. */
#ifndef KINSTR_TESTS_LIVE_PLAN_H
#define KINSTR_TESTS_LIVE_PLAN_H
#include <stdio.h>

#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>

struct live_plan {
	struct kinstr_dev *dev;
	struct kinstr_kernel *k;
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl;
};

static inline void live_plan_close(struct live_plan *v)
{
	kinstr_plan__free(v->pl);
	kinstr_probeset__free(v->ps);
	kinstr_kernel__close(v->k);
	kinstr_dev__close(v->dev);
}

/* 0, or 1 after perror(who) */
static inline int live_plan_open(struct live_plan *v, const char *who)
{
	v->dev = kinstr_dev__open(NULL);
	v->k = v->dev ? kinstr_kernel__open_live(v->dev) : NULL;
	v->ps = v->k ? kinstr_probeset__new(v->dev, v->k) : NULL;
	v->pl = v->ps ? kinstr_plan__new(v->ps, NULL) : NULL;
	if (v->pl)
		return 0;
	perror(who);
	live_plan_close(v);
	return 1;
}
#endif
