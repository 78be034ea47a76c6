/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The drill: Paradyn's call-graph search on the live kernel. Level by level, each function of
 * the frontier is timed (entry to every exit) with each of its call sites (the call to the
 * instruction after it); the callees whose share of the root's time is above a threshold form
 * the next frontier, to a depth. Each level's probes go in on a device of their own and are
 * removed before the next level's, so the overhead stays bounded. The tree of nodes is the result.
 *
 * An indirect call site (call *%reg, *mem, or a retpoline thunk) is a node of its own, timed as a
 * call; above the threshold, the next level tallies its targets (a probe at the call reads the
 * target: kinstr_plan__tally_target) and each target becomes a child with its share of the
 * site's calls; a level later it is timed as a function, the site timed again around it, and its
 * share becomes the share of the site's time spent in it. A direct tail call (jmp to another function)
 * is timed from the jmp to the callee's return (kinstr_plan__time_func_tails): a child whose time
 * is part of its caller's.
 */
#ifndef KINSTR_DRILL_H
#define KINSTR_DRILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kinstr/kernel.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KINSTR_DRILL_MAX_NODES 4096

/* What a node is to its parent. */
enum kinstr_drill_kind {
	KINSTR_DRILL_CALL,		/* the root, or a callee of a direct call */
	KINSTR_DRILL_INDIRECT,		/* an indirect call site of the parent (f NULL, site, label) */
	KINSTR_DRILL_TARGET,		/* a function the indirect call site above called (tallied) */
	KINSTR_DRILL_TAIL,		/* a tail call (jmp) of the parent's: its return is the parent's */
};

struct kinstr_drill_node {
	const struct kinstr_func *f;	/* NULL: an indirect call site, or targets outside any function */
	const char *label;		/* for f == NULL */
	int parent, depth;		/* parent -1: the root */
	double weight;			/* share of the root's time */
	double share;			/* share of the parent's time */
	bool measured;
	char why[160];			/* why it was not measured or expanded */
	uint64_t calls, time_ns;
	double self;			/* share of its own time not in timed calls */
	enum kinstr_drill_kind kind;
	uint64_t site;			/* INDIRECT, TAIL: the call or jmp, in the parent */
	/*
	 * INDIRECT: its calls tallied by target (calls, the tally's); TARGET: the site's calls that
	 * went to f (its share of the site's calls is share)
	 */
	uint64_t site_calls;
	/*
	 * TARGET: share is the share of the site's time spent in f (measured when f was timed: the
	 * site timed again around it, their nesting read from the timers' paths); false: of its calls
	 */
	bool time_share;
	char name[96];			/* label's storage */
};

struct kinstr_drill_opts {
	size_t sz;
	double threshold;		/* descend into callees above this share of the root (0, 1); default 0.05 */
	int max_depth;			/* levels below the root; default 4 */
	bool oncpu;			/* split on-CPU time, not wall time */
	bool no_ftrace;			/* as kinstr_plan_opts' */
	/*
	 * Called once a level's probes are in (nfuncs functions, nprobes probes): time the level
	 * (run the workload, wait its interval). Non-zero: stop the search (e.g. interrupted).
	 */
	int (*wait)(void *ctx, int level, size_t nfuncs, size_t nprobes);
	void *ctx;
	/* which threads each level's probes time (kinstr_dev__scope; kept until the drill is freed) */
	const struct kinstr_scope_opts *scope;	/* NULL: every thread */
};

struct kinstr_drill;
/* A search from root over k. NULL with errno (EINVAL: opts or no wait). */
struct kinstr_drill *kinstr_drill__new(const struct kinstr_kernel *k, const struct kinstr_func *root,
				       const struct kinstr_drill_opts *opts);
void kinstr_drill__free(struct kinstr_drill *d);
/*
 * Measure the next level: 1 when one was measured, 0 when the search is over (no frontier, the
 * depth limit, or wait said stop), or -errno and why.
 */
int kinstr_drill__step(struct kinstr_drill *d, struct kinstr_why *why);
/* After the search: the nodes left unmeasured say why (below the threshold, at the depth limit). */
void kinstr_drill__finish(struct kinstr_drill *d);
int kinstr_drill__node_cnt(const struct kinstr_drill *d);
const struct kinstr_drill_node *kinstr_drill__node(const struct kinstr_drill *d, int i);
/*
 * Of timer paths p[n] (kinstr_timers__paths, any CPUs), the time (on-CPU or wall) of those that
 * end in timer right under site: the time timer's activations spent when called from the site.
 */
struct kinstr_timer_path;
uint64_t kinstr_drill__time_under(const struct kinstr_timer_path *p, size_t n, unsigned int site, unsigned int timer,
				  bool oncpu);
/* The hot path from the root: node ids into path[max]; how many. */
int kinstr_drill__hot_path(const struct kinstr_drill *d, int *path, int max);

#ifdef __cplusplus
}
#endif
#endif
