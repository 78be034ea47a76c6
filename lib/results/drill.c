// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The drill: a call-graph search, level by level (include/kinstr/drill.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/drill.h>
#include <kinstr/plan.h>
#include <kinstr/tally.h>
#include "lib/opts.h"

#define MAX_SITES 512
#define MAX_TAILS 16

struct level_fn {
	int node;
	unsigned int timer;
	struct kinstr_callsite sites[MAX_SITES];
	unsigned int nsites;
	struct kinstr_callsite tails[MAX_TAILS];
	unsigned int ntails;
	/* a target of an indirect call site: that site's timer this level, timed around it */
	unsigned int site_timer;
	bool site_timed;
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

		if (n->depth != d->level || n->measured || n->why[0] || n->weight < d->o.threshold)
			continue;
		if (!n->f) {
			if (n->kind == KINSTR_DRILL_INDIRECT)
				out[nf++] = i;	/* its targets tallied */
			continue;
		}
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

/* Why child c is not descended into (yet), if it is not. */
static void child_why(struct kinstr_drill *d, int c)
{
	struct kinstr_drill_node *k = &d->nodes[c];

	if (k->weight < d->o.threshold)
		snprintf(k->why, sizeof(k->why), "below the threshold");
	else if (k->depth > d->o.max_depth)
		snprintf(k->why, sizeof(k->why), "at the depth limit");
}

/* A child for an indirect call site or tail call of parent: its kind and site, named "(... at F+0xOFF)". */
static int add_site_node(struct kinstr_drill *d, const struct kinstr_callsite *sj, int parent, double share)
{
	const struct kinstr_func *pf = d->nodes[parent].f;
	int c = add_node(d, sj->tail ? sj->callee : NULL, NULL, parent, share);
	struct kinstr_drill_node *k;

	if (c < 0)
		return c;
	k = &d->nodes[c];
	k->kind = sj->tail ? KINSTR_DRILL_TAIL : KINSTR_DRILL_INDIRECT;
	k->site = sj->addr;
	if (!sj->tail) {
		snprintf(k->name, sizeof(k->name), "(indirect call at %.48s+0x%llx)", pf->name,
			 (unsigned long long)(sj->addr - pf->addr));
		k->label = k->name;
		if (!sj->target_ok)
			snprintf(k->why, sizeof(k->why), "indirect: its target's operand has an index register, "
				 "which no probe value reads");
	}
	return c;
}

/*
 * One measured function: its time (its own, with the time of the tail calls it made, which
 * return for it) split into one child per direct callee, per indirect call site, per tail call.
 */
static void split(struct kinstr_drill *d, const struct level_fn *lf, const struct kinstr_timer_stats *st)
{
	struct kinstr_drill_node *n = &d->nodes[lf->node];
	const struct kinstr_timer_stats *fs = &st[lf->timer];
	uint64_t total = time_of(d, fs), in_calls = 0;
	unsigned int j, m;
	int c;

	for (j = 0; j < lf->ntails; j++)
		if (lf->tails[j].timed)
			total += time_of(d, &st[lf->tails[j].timer]);
	n->measured = true;
	n->calls = fs->calls;
	n->time_ns = total;
	if (!fs->calls || !total) {
		snprintf(n->why, sizeof(n->why), "not called while timed");
		return;
	}
	for (j = 0; j < lf->ntails; j++) {
		const struct kinstr_callsite *tj = &lf->tails[j];
		uint64_t t = tj->timed ? time_of(d, &st[tj->timer]) : 0;
		double share = (double)t / (double)total;

		if (tj->timed && share < 0.005)
			continue;
		in_calls += t;
		c = add_site_node(d, tj, lf->node, share > 1 ? 1 : share);
		if (c < 0)
			break;
		if (!tj->timed)
			snprintf(d->nodes[c].why, sizeof(d->nodes[c].why), "tail call: not timed (a probe at the jmp or "
				 "at the callee's exits was refused): its time is missing from the caller's");
		else
			child_why(d, c);
	}
	for (j = 0; j < lf->nsites; j++) {
		const struct kinstr_callsite *sj = &lf->sites[j];
		uint64_t t = 0;
		double share;

		if (!sj->timed)
			continue;
		for (m = 0; m < j && sj->callee; m++)
			if (lf->sites[m].timed && lf->sites[m].callee == sj->callee)
				break;
		if (sj->callee && m < j)
			continue;	/* counted with an earlier site of the same callee */
		for (m = j; m < lf->nsites; m++)
			if (lf->sites[m].timed && lf->sites[m].callee == sj->callee && (sj->callee || m == j))
				t += time_of(d, &st[lf->sites[m].timer]);
		in_calls += t;
		share = (double)t / (double)total;
		if (share > 1)
			share = 1;
		if (share < 0.005)
			continue;
		c = sj->callee ? add_node(d, sj->callee, NULL, lf->node, share) : add_site_node(d, sj, lf->node, share);
		if (c < 0)
			break;
		if (!sj->callee) {
			d->nodes[c].calls = st[sj->timer].calls;
			d->nodes[c].time_ns = t;
			if (!d->nodes[c].why[0])
				child_why(d, c);
		} else if (sj->switches)
			/* the callee's own time (the switch) is not this share: nothing to descend into */
			snprintf(d->nodes[c].why, sizeof(d->nodes[c].why), "%s",
				 d->o.oncpu ? "switches threads: this thread's time on CPU in the call" :
				 "switched out: the call returns when this thread runs again");
		else
			child_why(d, c);
	}
	n = &d->nodes[lf->node];
	n->self = in_calls >= total ? 0 : 1.0 - (double)in_calls / (double)total;
}

/*
 * An indirect call site's tally: its calls by target, one child per function called (by its
 * start address; anything else together), each with its share of the site's calls.
 */
static void split_targets(struct kinstr_drill *d, int node, unsigned int event, const struct kinstr_tally *ta)
{
	struct kinstr_drill_node *n = &d->nodes[node];
	uint64_t total = 0, other = 0, in_kids = 0;
	size_t i;
	int c;

	for (i = 0; i < kinstr_tally__row_cnt(ta); i++)
		if (kinstr_tally__row(ta, i)->event == event)
			total += kinstr_tally__row(ta, i)->hits;
	n->measured = true;
	n->site_calls = total;
	if (!total) {
		snprintf(n->why, sizeof(n->why), "not called while its targets were tallied");
		return;
	}
	for (i = 0; i < kinstr_tally__row_cnt(ta); i++) {
		const struct kinstr_tally_row *r = kinstr_tally__row(ta, i);
		const struct kinstr_func *f = r->event == event ? kinstr_kernel__func_at(d->k, r->key) : NULL;
		double share = (double)r->hits / (double)total;

		if (r->event != event)
			continue;
		if (!f || f->addr != r->key) {
			other += r->hits;
			continue;
		}
		if (share < 0.005)
			continue;
		c = add_node(d, f, NULL, node, share);
		if (c < 0)
			return;
		d->nodes[c].kind = KINSTR_DRILL_TARGET;
		d->nodes[c].site = n->site;
		d->nodes[c].site_calls = r->hits;
		in_kids += r->hits;
		child_why(d, c);
	}
	if ((double)other / (double)total >= 0.005 && (c = add_node(d, NULL, "(targets outside any function)", node,
								      (double)other / (double)total)) >= 0) {
		d->nodes[c].kind = KINSTR_DRILL_TARGET;
		d->nodes[c].site_calls = other;
		in_kids += other;
	}
	n = &d->nodes[node];
	n->self = 1.0 - (double)in_kids / (double)total;	/* targets under 0.5% of its calls */
}

/*
 * The targets of indirect call sites timed at this level: time the site again around them (once a
 * site), so that the timers' paths tell the time spent in each when called from there.
 */
static bool time_target_sites(struct kinstr_drill *d, struct kinstr_plan *pl, struct level_fn *lf, int nl,
			      unsigned int *ntimers)
{
	bool any = false;
	int i, j;

	for (i = 0; i < nl; i++) {
		const struct kinstr_drill_node *n = &d->nodes[lf[i].node], *s;
		struct kinstr_callsite cs;

		if (n->kind != KINSTR_DRILL_TARGET || n->parent < 0)
			continue;
		s = &d->nodes[n->parent];
		for (j = 0; j < i; j++)
			if (lf[j].site_timed && d->nodes[lf[j].node].parent == n->parent)
				break;
		if (j < i) {
			lf[i].site_timer = lf[j].site_timer;
			lf[i].site_timed = true;
		} else if (!kinstr_plan__time_call(pl, d->nodes[s->parent].f, s->site, ntimers, &cs)) {
			lf[i].site_timer = cs.timer;
			lf[i].site_timed = any = true;
		}
	}
	return any;
}

/* Every CPU's timer paths, one after the other in *out (malloc'ed), *n of them. 0 or -errno. */
static int read_paths(struct kinstr_dev *dev, struct kinstr_timer_path **out, size_t *n)
{
	struct kinstr_timer_path *all = NULL, *g;
	uint32_t found;
	uint64_t dropped, truncated;
	unsigned int cpu;
	int ret = 0;

	*n = 0;
	for (cpu = 0; !ret; cpu++) {
		g = realloc(all, (*n + KINSTR_TIMER_PATHS_MAX) * sizeof(*all));
		if (!g) {
			ret = -ENOMEM;
			break;
		}
		all = g;
		ret = kinstr_timers__paths(dev, cpu, all + *n, KINSTR_TIMER_PATHS_MAX, &found, &dropped, &truncated);
		if (!ret)
			*n += found;
	}
	*out = all;
	return ret == -EINVAL ? 0 : ret;	/* -EINVAL: past the last CPU */
}

uint64_t kinstr_drill__time_under(const struct kinstr_timer_path *p, size_t n, unsigned int site, unsigned int timer,
				  bool oncpu)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i].depth >= 2 && p[i].depth <= KINSTR_TIMER_PATH_DEPTH && p[i].timers[p[i].depth - 1] == timer &&
		    p[i].timers[p[i].depth - 2] == site)
			t += oncpu ? p[i].oncpu_ns : p[i].wall_ns;
	return t;
}

/*
 * A target's share of its site, from calls to time: the time in it (its own timer and its tail
 * calls', each right under the site's) over the site's, this level.
 */
static void target_time_share(struct kinstr_drill *d, const struct level_fn *lf, const struct kinstr_timer_stats *st,
			      const struct kinstr_timer_path *p, size_t np)
{
	struct kinstr_drill_node *n = &d->nodes[lf->node];
	uint64_t site = time_of(d, &st[lf->site_timer]);
	uint64_t in = kinstr_drill__time_under(p, np, lf->site_timer, lf->timer, d->o.oncpu);
	unsigned int j;

	for (j = 0; j < lf->ntails; j++)
		if (lf->tails[j].timed)
			in += kinstr_drill__time_under(p, np, lf->site_timer, lf->tails[j].timer, d->o.oncpu);
	if (!site)
		return;
	n->share = in >= site ? 1.0 : (double)in / (double)site;
	n->weight = d->nodes[n->parent].weight * n->share;
	n->time_share = true;
}

/* An indirect site's own share after its targets' changed: what they leave (at least 0). */
static void site_self(struct kinstr_drill *d, int site)
{
	double sum = 0;
	int i;

	for (i = 0; i < d->n; i++)
		if (d->nodes[i].parent == site)
			sum += d->nodes[i].share;
	d->nodes[site].self = sum >= 1 ? 0 : 1 - sum;
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
	struct kinstr_trace_event *ev = NULL;
	struct kinstr_tally *ta = NULL;
	int *ind = NULL;		/* the indirect nodes tallied, by event */
	unsigned int ntimers = 0, exits, nev = 0;
	struct kinstr_timer_path *fold = NULL;
	size_t nfold = 0;
	bool paths = false;
	int i, nf, nl = 0, ret = -ENOMEM, w;

	if (d->over || d->level > d->o.max_depth)
		return 0;
	nf = frontier(d, front);
	if (!nf)
		return 0;
	lf = calloc(nf, sizeof(*lf));
	ev = calloc(nf, sizeof(*ev));
	ind = calloc(nf, sizeof(*ind));
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
	} else if (!lf || !pl || !ev || !ind) {
		kinstr_why__fail(why, ret, "%s", strerror(ENOMEM));
	}
	if (!lf || !pl || !ev || !ind)
		goto out;
	for (i = 0; i < nf; i++) {
		struct kinstr_drill_node *n = &d->nodes[front[i]];
		struct kinstr_why refused;

		if (!n->f) {
			/* an indirect call site: a probe at the call tallies its targets */
			const struct kinstr_func *in = d->nodes[n->parent].f;

			if (kinstr_plan__tally_target(pl, in, n->site, (uint16_t)nev, &ev[nev], &refused)) {
				const char *r = strstr(refused.msg, ": ");

				snprintf(n->why, sizeof(n->why), "targets not tallied: %.135s", r ? r + 2 : refused.msg);
				continue;
			}
			ind[nev++] = front[i];
			continue;
		}
		lf[nl].timer = ntimers++;	/* the function's own; its tail calls' come next */
		if (kinstr_plan__time_func_tails(pl, n->f, lf[nl].timer, &exits, &ntimers, lf[nl].tails, MAX_TAILS,
						 &lf[nl].ntails, &refused)) {
			/* the rule, without the function's name the tree already shows */
			const char *r = strstr(refused.msg, ": ");

			ntimers--;
			snprintf(n->why, sizeof(n->why), "not timed: %.148s", r ? r + 2 : refused.msg);
			continue;
		}
		lf[nl].node = front[i];
		lf[nl].nsites = kinstr_plan__time_calls(pl, n->f, &ntimers, lf[nl].sites, MAX_SITES);
		nl++;
	}
	ret = 1;
	if (!nl && !nev)
		goto out;
	paths = time_target_sites(d, pl, lf, nl, &ntimers);
	ret = ntimers ? kinstr_timers__create(dev, ntimers, 0, paths ? KINSTR_TIMERS_F_PATHS : 0) : 0;
	if (ret) {
		kinstr_why__fail(why, ret, "cannot create %u timers: %s", ntimers, strerror(-ret));
		goto out;
	}
	/* a site's targets are few: 4096 rows keep the module's tables small */
	if (nev && !(ta = kinstr_tally__new_dev(dev, ev, nev, KINSTR_TALLY_VALUE, 4096))) {
		ret = kinstr_why__fail(why, -errno, "cannot create the tally of indirect calls' targets in kinstr.ko: %s",
				       strerror(errno));
		goto out;
	}
	ret = kinstr_probeset__install(ps, why);
	if (ret)
		goto out;
	w = d->o.wait(d->o.ctx, d->level, (size_t)(nl + (int)nev), kinstr_probeset__cnt(ps));
	kinstr_probeset__remove(ps);
	if (w < 0) {
		ret = kinstr_why__fail(why, w, "the level's wait failed: %s", strerror(-w));
		goto out;
	}
	d->over = w > 0;
	st = calloc(ntimers ? ntimers : 1, sizeof(*st));
	if (!st || (ntimers && kinstr_timers__read(dev, 0, ntimers, st))) {
		ret = kinstr_why__fail(why, -EIO, "cannot read the timers: %s", strerror(EIO));
		goto out;
	}
	if (ta && (w = kinstr_tally__drain(ta))) {
		ret = kinstr_why__fail(why, w, "cannot read the tally of indirect calls' targets: %s", strerror(-w));
		goto out;
	}
	if (paths && read_paths(dev, &fold, &nfold))
		paths = false;	/* the targets keep their shares of the site's calls */
	for (i = 0; i < nl; i++) {
		if (paths && lf[i].site_timed) {
			target_time_share(d, &lf[i], st, fold, nfold);
			site_self(d, d->nodes[lf[i].node].parent);
		}
		split(d, &lf[i], st);
	}
	for (i = 0; i < (int)nev; i++)
		split_targets(d, ind[i], (unsigned int)i, ta);
	ret = 1;
out:
	if (ret == 1)
		d->level++;
	kinstr_tally__free(ta);
	free(fold);
	free(ev);
	free(ind);
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
		if (!d->nodes[i].measured && !d->nodes[i].why[0] &&
		    (d->nodes[i].f || d->nodes[i].kind == KINSTR_DRILL_INDIRECT))
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
			if (d->nodes[i].parent == hot && (d->nodes[i].f || d->nodes[i].kind == KINSTR_DRILL_INDIRECT) &&
			    (best < 0 || d->nodes[i].weight > d->nodes[best].weight))
				best = i;
		if (best >= 0 && d->nodes[best].weight < d->nodes[hot].weight * d->nodes[hot].self)
			best = -1;	/* its own code is hotter than any callee */
		hot = best;
	}
	return n;
}
