// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The drill: a call-graph search, level by level (include/kinstr/drill.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/drill.h>
#include <kinstr/plan.h>
#include "lib/opts.h"

#define MAX_SITES 512

struct level_fn {
	int node;
	unsigned int timer;
	struct kinstr_callsite sites[MAX_SITES];
	unsigned int nsites;
};

struct kinstr_drill {
	const struct kinstr_kernel *k;
	struct kinstr_drill_opts o;
	int level;
	bool over;
	int n;
	struct kinstr_drill_node nodes[KINSTR_DRILL_MAX_NODES];
};

static int add_node(struct kinstr_drill *d, const struct kinstr_func *f, const char *label, int parent, double share)
{
	struct kinstr_drill_node *n;

	if (d->n == KINSTR_DRILL_MAX_NODES)
		return -1;
	n = &d->nodes[d->n];
	memset(n, 0, sizeof(*n));
	n->f = f;
	n->label = label;
	n->parent = parent;
	n->depth = parent < 0 ? 0 : d->nodes[parent].depth + 1;
	n->share = share;
	n->weight = parent < 0 ? 1.0 : d->nodes[parent].weight * share;
	return d->n++;
}

struct kinstr_drill *kinstr_drill__new(const struct kinstr_kernel *k, const struct kinstr_func *root,
				       const struct kinstr_drill_opts *opts)
{
	struct kinstr_drill *d;

	if (!k || !root || !KINSTR_OPTS_VALID(opts) || !KINSTR_OPTS_GET(opts, wait, NULL)) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->k = k;
	d->o.threshold = KINSTR_OPTS_GET(opts, threshold, 0.0) ?: 0.05;
	d->o.max_depth = KINSTR_OPTS_GET(opts, max_depth, 0) ?: 4;
	d->o.oncpu = KINSTR_OPTS_GET(opts, oncpu, false);
	d->o.no_ftrace = KINSTR_OPTS_GET(opts, no_ftrace, false);
	d->o.wait = opts->wait;
	d->o.ctx = KINSTR_OPTS_GET(opts, ctx, NULL);
	d->o.scope = KINSTR_OPTS_GET(opts, scope, NULL);
	if (d->o.threshold <= 0 || d->o.threshold >= 1 || d->o.max_depth < 1) {
		free(d);
		errno = EINVAL;
		return NULL;
	}
	add_node(d, root, NULL, -1, 1.0);
	return d;
}

void kinstr_drill__free(struct kinstr_drill *d)
{
	free(d);
}

int kinstr_drill__node_cnt(const struct kinstr_drill *d)
{
	return d->n;
}

const struct kinstr_drill_node *kinstr_drill__node(const struct kinstr_drill *d, int i)
{
	return i >= 0 && i < d->n ? &d->nodes[i] : NULL;
}

static uint64_t time_of(const struct kinstr_drill *d, const struct kinstr_timer_stats *s)
{
	return d->o.oncpu ? s->oncpu_ns : s->wall_ns;
}

/* The nodes of this level worth measuring: above the threshold, not recursive. */
static int frontier(struct kinstr_drill *d, int *out)
{
	int i, a, nf = 0;

	for (i = 0; i < d->n; i++) {
		struct kinstr_drill_node *n = &d->nodes[i];

		if (n->depth != d->level || n->measured || n->why[0] || !n->f || n->weight < d->o.threshold)
			continue;
		/* a function already on the path above: recursion, not a new place */
		for (a = n->parent; a >= 0; a = d->nodes[a].parent)
			if (d->nodes[a].f == n->f)
				break;
		if (a >= 0) {
			snprintf(n->why, sizeof(n->why), "recursive: %s is above", n->f->name);
			continue;
		}
		out[nf++] = i;
	}
	return nf;
}

/* One measured function: its time split into one child per callee (indirect calls together). */
static void split(struct kinstr_drill *d, const struct level_fn *lf, const struct kinstr_timer_stats *st)
{
	struct kinstr_drill_node *n = &d->nodes[lf->node];
	const struct kinstr_timer_stats *fs = &st[lf->timer];
	uint64_t total = time_of(d, fs), in_calls = 0;
	unsigned int j, m;
	int c;

	n->measured = true;
	n->calls = fs->calls;
	n->time_ns = total;
	if (!fs->calls || !total) {
		snprintf(n->why, sizeof(n->why), "not called while timed");
		return;
	}
	for (j = 0; j < lf->nsites; j++) {
		const struct kinstr_callsite *sj = &lf->sites[j];
		uint64_t t = 0;
		double share;

		if (!sj->timed)
			continue;
		for (m = 0; m < j; m++)
			if (lf->sites[m].timed && lf->sites[m].callee == sj->callee)
				break;
		if (m < j)
			continue;	/* counted with an earlier site of the same callee */
		for (m = j; m < lf->nsites; m++)
			if (lf->sites[m].timed && lf->sites[m].callee == sj->callee)
				t += time_of(d, &st[lf->sites[m].timer]);
		in_calls += t;
		share = (double)t / (double)total;
		if (share > 1)
			share = 1;
		if (share < 0.005)
			continue;
		c = add_node(d, sj->callee, sj->callee ? NULL : "(indirect calls)", lf->node, share);
		if (c < 0)
			break;
		if (!sj->callee)
			snprintf(d->nodes[c].why, sizeof(d->nodes[c].why), "indirect: the callee is known at run time only");
		else if (sj->switches)
			/* the callee's own time (the switch) is not this share: nothing to descend into */
			snprintf(d->nodes[c].why, sizeof(d->nodes[c].why), "%s",
				 d->o.oncpu ? "switches threads: this thread's time on CPU in the call" :
				 "switched out: the call returns when this thread runs again");
		else if (d->nodes[c].weight < d->o.threshold)
			snprintf(d->nodes[c].why, sizeof(d->nodes[c].why), "below the threshold");
		else if (d->nodes[c].depth > d->o.max_depth)
			snprintf(d->nodes[c].why, sizeof(d->nodes[c].why), "at the depth limit");
	}
	n = &d->nodes[lf->node];
	n->self = in_calls >= total ? 0 : 1.0 - (double)in_calls / (double)total;
}

int kinstr_drill__step(struct kinstr_drill *d, struct kinstr_why *why)
{
	struct kinstr_plan_opts popts = { .sz = sizeof(popts), .no_ftrace = d->o.no_ftrace };
	int front[KINSTR_DRILL_MAX_NODES];
	struct kinstr_timer_stats *st = NULL;
	struct kinstr_dev *dev = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	struct level_fn *lf = NULL;
	unsigned int ntimers = 0, exits;
	int i, nf, nl = 0, ret = -ENOMEM, w;

	if (d->over || d->level > d->o.max_depth)
		return 0;
	nf = frontier(d, front);
	if (!nf)
		return 0;
	lf = calloc(nf, sizeof(*lf));
	dev = kinstr_dev__open(NULL);
	if (dev && d->o.scope && (w = kinstr_dev__scope(dev, d->o.scope))) {
		ret = kinstr_why__fail(why, w, "cannot set the scope of the probes: %s", strerror(-w));
		goto out;
	}
	ps = dev ? kinstr_probeset__new(dev, d->k) : NULL;
	pl = ps ? kinstr_plan__new(ps, &popts) : NULL;
	if (!dev) {
		ret = -errno;
		kinstr_why__fail(why, ret, "cannot open %s: %s", KINSTR_DEVICE, strerror(-ret));
	} else if (!lf || !pl) {
		kinstr_why__fail(why, ret, "%s", strerror(ENOMEM));
	}
	if (!lf || !pl)
		goto out;
	for (i = 0; i < nf; i++) {
		struct kinstr_drill_node *n = &d->nodes[front[i]];
		struct kinstr_why refused;

		if (kinstr_plan__time_func(pl, n->f, ntimers, &exits, &refused)) {
			/* the rule, without the function's name the tree already shows */
			const char *r = strstr(refused.msg, ": ");

			snprintf(n->why, sizeof(n->why), "not timed: %.148s", r ? r + 2 : refused.msg);
			continue;
		}
		lf[nl].node = front[i];
		lf[nl].timer = ntimers++;
		lf[nl].nsites = kinstr_plan__time_calls(pl, n->f, &ntimers, lf[nl].sites, MAX_SITES);
		nl++;
	}
	ret = 1;
	if (!nl)
		goto out;
	ret = kinstr_timers__create(dev, ntimers, 0, 0);
	if (ret) {
		kinstr_why__fail(why, ret, "cannot create %u timers: %s", ntimers, strerror(-ret));
		goto out;
	}
	ret = kinstr_probeset__install(ps, why);
	if (ret)
		goto out;
	w = d->o.wait(d->o.ctx, d->level, (size_t)nl, kinstr_probeset__cnt(ps));
	kinstr_probeset__remove(ps);
	if (w < 0) {
		ret = kinstr_why__fail(why, w, "the level's wait failed: %s", strerror(-w));
		goto out;
	}
	d->over = w > 0;
	st = calloc(ntimers, sizeof(*st));
	if (!st || kinstr_timers__read(dev, 0, ntimers, st)) {
		ret = kinstr_why__fail(why, -EIO, "cannot read the timers: %s", strerror(EIO));
		goto out;
	}
	for (i = 0; i < nl; i++)
		split(d, &lf[i], st);
	ret = 1;
out:
	if (ret == 1)
		d->level++;
	free(st);
	free(lf);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
	kinstr_dev__close(dev);
	return ret;
}

void kinstr_drill__finish(struct kinstr_drill *d)
{
	int i;

	for (i = 0; i < d->n; i++)	/* left at the depth limit */
		if (!d->nodes[i].measured && !d->nodes[i].why[0] && d->nodes[i].f)
			snprintf(d->nodes[i].why, sizeof(d->nodes[i].why), "%s", d->nodes[i].weight < d->o.threshold ?
				 "below the threshold" : "at the depth limit");
}

int kinstr_drill__hot_path(const struct kinstr_drill *d, int *path, int max)
{
	int n = 0, hot, i;

	for (hot = 0; hot >= 0 && n < max;) {
		int best = -1;

		path[n++] = hot;
		for (i = 0; i < d->n; i++)
			if (d->nodes[i].parent == hot && d->nodes[i].f &&
			    (best < 0 || d->nodes[i].weight > d->nodes[best].weight))
				best = i;
		if (best >= 0 && d->nodes[best].weight < d->nodes[hot].weight * d->nodes[hot].self)
			best = -1;	/* its own code is hotter than any callee */
		hot = best;
	}
	return n;
}
