/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timers' hit path (timing.c owns the rest): inlined into the timer probes' hit functions
 * (hit.c), with its slow paths out of line in timing.c.
 *
 * Each thread that started a timer owns a context in the set's table (claimed by cmpxchg on its
 * task pointer, in a slow path): a stack of started timers and the thread's on-CPU clock. A
 * per-CPU cache holds the context of the task running there, so that the hit path finds it
 * with one compare; the sched_switch probe keeps the cache, the on-CPU clocks, and gives a
 * context back when its thread leaves the CPU with an empty stack. Only the thread itself (in
 * its probes, preemption disabled) and the sched_switch probe on the CPU that switches it touch
 * its context, so there is no lock. Interrupt contexts (softirq, hardirq, NMI) have a context
 * per CPU, where on-CPU time is wall time. Statistics are per CPU and per timer; readers sum
 * them.
 */
#ifndef KINSTR_KMOD_TIMING_H
#define KINSTR_KMOD_TIMING_H
#include <linux/jump_label.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/types.h>
#include <asm/msr.h>

#include <uapi/linux/kinstr.h>

#define KT_DEPTH	32
#define KT_TASKS	1024		/* threads with a timer running at once */
#define KT_RECURSIVE	1U

struct kt_frame {			/* 32 bytes: never across a cache line */
	u32 timer, flags;
	u64 t0, oncpu0;			/* kt_clock() units */
	u64 __pad;
};

struct kt_ctx {
	struct task_struct *task;	/* owner (a copy of owners[]); NULL: an interrupt context */
	pid_t pid;			/* the owner's: a task_struct reused by a new thread is not it */
	u32 depth;
	/*
	 * On-CPU clock: while the owner runs, its on-CPU time is now - off (off: when it was last
	 * switched in less what it had run before); while it is switched out, acc. An interrupt
	 * context has off = 0: its on-CPU time is wall time.
	 */
	u64 off, acc;
	struct kt_frame f[KT_DEPTH];
} ____cacheline_aligned;

/*
 * One timer's statistics on one CPU (the ABI's struct kinstr_timer_stats, laid out for the hit
 * path): a start writes line 0 only, a stop line 0 and the one histogram line of its bucket.
 * Two lines per timed call is the least that u64 buckets allow; unmatched stops (rare) get the
 * seventh line. Sums, min and max are in kt_clock() units (TSC cycles or ns), converted to ns
 * when read; the histogram's buckets are ns buckets already (kt_bucket()).
 */
struct kt_stats {
	u64 calls, starts, wall, oncpu, wall_min, wall_max, recursive, dropped;
	u64 hist[KINSTR_TIMER_HIST];
	u64 unmatched;
} ____cacheline_aligned;

/*
 * Per CPU and set: the context of the task running on this CPU, and the interrupt contexts.
 * cur_task/cur_ctx are written only on this CPU, by the sched_switch probe (irqs off) and by the
 * task-level hit path (preemption off); interrupt-level hits never touch them. While cur_task
 * is current, cur_ctx is its context in this set, or NULL when it has none: a task gains or
 * loses its context only by its own claim in the hit path (which sets cur_ctx) and at its
 * switch-out (where the sched_switch probe moves the cache to the next task).
 */
struct kt_cpu {
	struct task_struct *cur_task;
	struct kt_ctx *cur_ctx;
	struct kt_stats *stats;		/* this CPU's row of the set's statistics */
	struct kt_ctx lvl[3] ____cacheline_aligned;	/* softirq, hardirq, NMI */
};

struct kt_paths;
struct kt_by;

struct kinstr_timers {
	/* what the hit path reads, in the first cache line */
	struct kt_cpu __percpu *cpu;
	struct kt_paths *paths;		/* [nr_cpu_ids], with KINSTR_TIMERS_F_PATHS */
	struct kt_by *by;		/* [nr_cpu_ids], with KINSTR_TIMERS_F_BY_* */
	u32 by_flag;			/* which KINSTR_TIMERS_F_BY_* */
	bool filter;			/* pgrp or tgid set */
	u32 count, tgid;
	struct pid *pgrp;		/* KINSTR_TIMERS_F_PGRP: held; compared, never dereferenced */
	struct kt_stats *stats;		/* [nr_cpu_ids][count]: each CPU's timers together */
	struct kt_ctx *tasks;		/* [KT_TASKS] */
	/*
	 * [KT_TASKS]: the owner of tasks[i], NULL while free. Apart from the contexts, so that a
	 * lookup's probes read one or two cache lines, not 16 contexts' worth.
	 */
	struct task_struct **owners;
	struct kref ref;
	struct list_head node;		/* in kt_sets, for the sched_switch probe (RCU) */
	struct rcu_head rcu;
};

/* The clock: see kt_choose_clock() in timing.c. A static key, never a pointer or a load. */
DECLARE_STATIC_KEY_FALSE(kinstr_timer_tsc);

/*
 * With the TSC: for an interval of d cycles, k = fls64(d), its ns bucket is b + (d >= edge) of
 * entry k: cycles in [2^(k-1), 2^k) are ns in [2^(k-1), 2^k) times the TSC's period, which
 * spans at most two log2 buckets (timing.c builds the table with the very conversion a reader
 * applies; entry 0 is d = 0).
 */
struct kt_log2 {
	u64 edge;			/* the least d with ns(d) in bucket b + 1; ~0: none */
	u32 b;
};
extern struct kt_log2 kinstr_timer_log2[65];

/* The slow paths (timing.c). */
struct kt_ctx *kinstr_timer_ctx_slow(struct kinstr_timers *t, struct kt_cpu *pc, bool claim, u64 now);
void kinstr_timer_path(struct kinstr_timers *t, const struct kt_ctx *c, u32 i, u64 wall, u64 oncpu);
void kinstr_timer_by(struct kinstr_timers *t, u32 timer, u64 wall, u64 oncpu);
bool kinstr_timer_filtered(const struct kinstr_timers *t);

static __always_inline u64 kt_clock(void)
{
	if (static_branch_likely(&kinstr_timer_tsc))
		return rdtsc();
	return local_clock();
}

static __always_inline u64 kt_since(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

/* The ns log2 bucket of an interval of d kt_clock() units: [2^i, 2^(i+1)) ns, bucket 0 also 0 ns. */
static __always_inline u32 kt_bucket(u64 d)
{
	u32 k = fls64(d);

	if (static_branch_likely(&kinstr_timer_tsc))
		return kinstr_timer_log2[k].b + (d >= kinstr_timer_log2[k].edge);
	return k ? min_t(u32, k - 1, KINSTR_TIMER_HIST - 1) : 0;
}

static __always_inline u64 kt_ctx_oncpu(const struct kt_ctx *c, u64 now)
{
	return now - c->off;
}

static __always_inline struct kt_ctx *kt_cur_ctx(struct kinstr_timers *t, struct kt_cpu *pc, bool claim, u64 now)
{
	struct kt_ctx *c;

	if (unlikely(in_nmi() || in_hardirq() || in_serving_softirq()))
		return &pc->lvl[in_nmi() ? 2 : in_hardirq() ? 1 : 0];
	c = pc->cur_ctx;
	if (likely(pc->cur_task == current && (c || !claim)))
		return c;
	return kinstr_timer_ctx_slow(t, pc, claim, now);
}

static __always_inline void kt_start(struct kt_ctx *c, struct kt_stats *s, u32 timer, u64 now)
{
	struct kt_frame *f;
	u32 i, flags = 0;

	s->starts++;
	if (unlikely(!c || c->depth == KT_DEPTH)) {
		s->dropped++;
		return;
	}
	for (i = 0; i < c->depth; i++)
		if (c->f[i].timer == timer)
			flags = KT_RECURSIVE;
	f = &c->f[c->depth];
	f->timer = timer;
	f->flags = flags;
	f->t0 = now;
	f->oncpu0 = kt_ctx_oncpu(c, now);
	/* an interrupt's probe sees the frame only once it is complete */
	barrier();
	c->depth++;
}

static __always_inline void kt_stop(struct kinstr_timers *t, struct kt_ctx *c, struct kt_stats *s, u32 timer,
				    u64 now)
{
	struct kt_frame *f;
	u64 wall, oncpu;
	int i;

	for (i = c ? (int)c->depth - 1 : -1; i >= 0; i--)
		if (c->f[i].timer == timer)
			break;
	if (unlikely(i < 0)) {
		s->unmatched++;
		return;
	}
	f = &c->f[i];
	s->calls++;
	if (unlikely(f->flags & KT_RECURSIVE)) {
		s->recursive++;
	} else {
		/* in clock units: a reader converts the sums, min and max (no multiply here) */
		wall = kt_since(now, f->t0);
		oncpu = kt_since(kt_ctx_oncpu(c, now), f->oncpu0);
		s->wall += wall;
		s->oncpu += oncpu;
		if (wall < s->wall_min)
			s->wall_min = wall;
		if (wall > s->wall_max)
			s->wall_max = wall;
		s->hist[kt_bucket(wall)]++;
		if (t->paths)
			kinstr_timer_path(t, c, i, wall, oncpu);
		if (t->by)
			kinstr_timer_by(t, timer, wall, oncpu);
	}
	/*
	 * Timers started above it and never stopped go too. The context stays the task's while
	 * its stack is empty: the sched_switch probe gives it back when the task leaves the CPU, so
	 * that a loop of timed calls claims it once, not once a call.
	 */
	c->depth = i;
}

/*
 * A timer probe's action, in any context, inside kinstr_action_enter() (hit.c): preemption is
 * off from before the clock is read to after the last write.
 */
static __always_inline void kinstr_timer_hit(struct kinstr_timers *t, u32 timer, bool start)
{
	struct kt_cpu *pc;
	struct kt_ctx *c;
	u64 now;

	if (unlikely(t->filter) && kinstr_timer_filtered(t))
		return;
	now = kt_clock();
	pc = this_cpu_ptr(t->cpu);
	c = kt_cur_ctx(t, pc, start, now);
	if (start)
		kt_start(c, pc->stats + timer, timer, now);
	else
		kt_stop(t, c, pc->stats + timer, timer, now);
}

#endif
