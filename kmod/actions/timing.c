// SPDX-License-Identifier: GPL-2.0
/*
 * Timers for the profiler: start/stop probes measure intervals per thread (a function from its
 * entry to each of its returns; a call instruction to the instruction after it). The hit path
 * is inline in timing.h (into the timer probes' hit functions, hit.c); here are its slow paths,
 * the clock's choice, the sched_switch probe, and the sets' life and readers.
 */
#include <linux/clocksource.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/kref.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/pid.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/static_call_types.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/cpufeature.h>
#include <asm/local64.h>
#include <asm/msr.h>
#include <asm/tsc.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "limits.h"
#include "actions/actions.h"
#include "abi.h"
#include "actions/timing.h"

#define KT_PATH_PROBES	16	/* linear probing bound in a path table */

struct kt_path {
	u64 key;			/* 0: free; claimed by cmpxchg */
	u32 depth;			/* written last (release): 0 while being filled */
	u32 timers[KINSTR_TIMER_PATH_DEPTH];
	u64 calls, wall, oncpu;		/* kt_clock() units, as struct kt_stats */
};

struct kt_paths {			/* one CPU's */
	u64 dropped, truncated;
	struct kt_path p[KINSTR_TIMER_PATHS_MAX];
};

struct kt_by_row {
	u64 key;			/* 0: free; claimed by cmpxchg */
	u32 ready;			/* written last (release): 0 while being filled */
	u32 timer, id;
	char comm[16];
	u64 calls, wall, oncpu;		/* kt_clock() units */
	u64 wall_min, wall_max;
};

struct kt_by {				/* one CPU's */
	u64 dropped;
	struct kt_by_row r[KINSTR_TIMER_BY_MAX];
};

#define KT_BY_FLAGS (KINSTR_TIMERS_F_BY_COMM | KINSTR_TIMERS_F_BY_PID | KINSTR_TIMERS_F_BY_TID)

static LIST_HEAD(kt_sets);
static DEFINE_MUTEX(kt_sets_mutex);
static struct tracepoint *kt_sched_switch;
static bool kt_registered;

/*
 * The clock. Where the TSC is usable (constant and nonstop, not marked unstable, and the
 * kernel's sched_clock is the TSC: native_sched_clock, marked stable), timers read the raw TSC
 * and convert each interval to ns with the kernel's own scale for it (clocks_calc_mult_shift on
 * tsc_khz, as set_cyc2ns_scale() computes sched_clock's): an interval is then the one
 * sched_clock would give, to a nanosecond, for the price of rdtsc and one multiply. Elsewhere
 * they read local_clock(), as ftrace's function_graph does: NMI-safe, monotonic per CPU.
 * Either way a thread that migrates may see a small step between CPUs, so differences are
 * clamped at zero.
 *
 * The choice is a static key, never a pointer or a load in the hit path. It is made at load and
 * again whenever a set is created while no other exists (so that a TSC the kernel marked
 * unstable since is noticed by the next profile); raw readings (frames, on-CPU clocks) are only
 * ever compared within one set, so the clock never changes under one.
 * kinstr.timer_clock=tsc forces the TSC wherever tsc_khz is known (tests under TCG, whose CPU
 * model has no invariant TSC), =local the fallback.
 */
DEFINE_STATIC_KEY_FALSE(kinstr_timer_tsc);
static u32 kt_mult, kt_shift;
struct kt_log2 kinstr_timer_log2[65] __read_mostly;
static char *timer_clock = "auto";
module_param(timer_clock, charp, 0444);
MODULE_PARM_DESC(timer_clock, "timers' clock: auto (the TSC where usable, else local_clock), tsc, local");

static bool static_key_named(const char *name, bool *on)
{
	struct static_key *k = (struct static_key *)kinstr_kcall(kallsyms_lookup_name)(name);

	if (k)
		*on = static_key_enabled(k);
	return k;
}

/* Is sched_clock() the TSC, scaled by the kernel's cyc2ns, and stable across CPUs? */
static bool kt_tsc_usable(void)
{
	unsigned long native = kinstr_kcall(kallsyms_lookup_name)("native_sched_clock");
	struct static_call_key *pv =
		(struct static_call_key *)kinstr_kcall(kallsyms_lookup_name)("__SCK__pv_sched_clock");
	bool use_tsc = false, stable = false;

	if (!boot_cpu_has(X86_FEATURE_TSC) || !boot_cpu_has(X86_FEATURE_CONSTANT_TSC) ||
	    !boot_cpu_has(X86_FEATURE_NONSTOP_TSC) || check_tsc_unstable() || !tsc_khz)
		return false;
	/* native_sched_clock reads the TSC only with __use_tsc on */
	if (!static_key_named("__use_tsc", &use_tsc) || !use_tsc)
		return false;
	/* local_clock() is sched_clock() plus an offset only while __sched_clock_stable is on */
	if (!static_key_named("__sched_clock_stable", &stable) || !stable)
		return false;
	/* a paravirt clock (kvm-clock, Xen, Hyper-V) replaces it through this static call */
	return native && pv && (unsigned long)READ_ONCE(pv->func) == native;
}

/* kt_clock() units to ns, for readers: the TSC's by the kernel's own scale for sched_clock. */
static u64 kt_ns(u64 d)
{
	return static_key_enabled(&kinstr_timer_tsc) ? mul_u64_u32_shr(d, kt_mult, kt_shift) : d;
}

static u32 ns_bucket(u64 ns)
{
	return ns ? min_t(u32, ilog2(ns), KINSTR_TIMER_HIST - 1) : 0;
}

/*
 * kt_bucket()'s table for the TSC: entry j + 1 for cycles in [2^j, 2^(j+1)): the ns bucket b of
 * 2^j cycles and the least cycle count whose bucket is b + 1 (ns(d) is monotonic in d). Since
 * ns(2^(j+1) - 1) < 2 ns(2^j) + 2, the range never reaches bucket b + 2 (checked). Entry 0 is
 * 0 cycles: bucket 0.
 */
static void kt_build_log2(void)
{
	u32 j;

	kinstr_timer_log2[0].b = 0;
	kinstr_timer_log2[0].edge = ~0ULL;
	for (j = 0; j < 64; j++) {
		u64 lo = 1ULL << j, hi = j < 63 ? (lo << 1) - 1 : ~0ULL, a, z;
		u32 b = ns_bucket(mul_u64_u32_shr(lo, kt_mult, kt_shift));

		kinstr_timer_log2[j + 1].b = b;
		kinstr_timer_log2[j + 1].edge = ~0ULL;
		if (b == KINSTR_TIMER_HIST - 1 || ns_bucket(mul_u64_u32_shr(hi, kt_mult, kt_shift)) == b)
			continue;
		for (a = lo, z = hi; a < z;) {	/* the least d in [lo, hi] in bucket b + 1 */
			u64 m = a + (z - a) / 2;

			if (ns_bucket(mul_u64_u32_shr(m, kt_mult, kt_shift)) > b)
				z = m;
			else
				a = m + 1;
		}
		kinstr_timer_log2[j + 1].edge = a;
		WARN_ON_ONCE(ns_bucket(mul_u64_u32_shr(hi, kt_mult, kt_shift)) > b + 1);
	}
}

/* Choose the clock: at load, and under kt_sets_mutex while no set exists. */
static void kt_choose_clock(bool at_load)
{
	bool tsc = false;

	if (!strcmp(timer_clock, "tsc"))
		tsc = tsc_khz;
	else if (strcmp(timer_clock, "local"))
		tsc = kt_tsc_usable();
	if (tsc == static_key_enabled(&kinstr_timer_tsc) && !at_load)
		return;
	if (tsc) {
		/* the kernel's cyc2ns scale for sched_clock (arch/x86/kernel/tsc.c) */
		clocks_calc_mult_shift(&kt_mult, &kt_shift, tsc_khz, NSEC_PER_MSEC, 0);
		kt_build_log2();
		/* static_branch_enable() syncs every CPU's text: they see the table before the key */
		static_branch_enable(&kinstr_timer_tsc);
	} else {
		static_branch_disable(&kinstr_timer_tsc);
	}
	pr_info(KINSTR_PR_PREFIX "timers read %s\n", tsc ? "the TSC" : "local_clock()");
}

/* now: the caller's clock reading, the claimed context's switch-in time (it is running: we are in it) */
static notrace struct kt_ctx *task_ctx(struct kinstr_timers *t, struct task_struct *task, bool claim, u64 now)
{
	u32 h = hash_ptr(task, 10), i;

	BUILD_BUG_ON(KT_TASKS != 1 << 10);
	for (i = 0; i < 16; i++) {
		u32 slot = (h + i) & (KT_TASKS - 1);
		struct kt_ctx *c = &t->tasks[slot];
		struct task_struct *owner = READ_ONCE(t->owners[slot]);

		if (owner == task && c->pid == task->pid)
			return c;
		if (owner == task) {
			/*
			 * A thread that died with timers running (it never reached their exits) left
			 * this; its task_struct now belongs to a new thread. Only that thread resets it.
			 */
			if (!claim)
				return NULL;
			goto reset;
		}
		/* claim: the cmpxchg orders the claim before our writes to the context */
		if (claim && !owner && cmpxchg(&t->owners[slot], NULL, task) == NULL) {
reset:
			c->task = task;
			c->pid = task->pid;
			c->depth = 0;
			c->off = now;	/* it runs: we are in it, with no on-CPU time yet */
			c->acc = 0;	/* (what a switch-in reads, if this was in the scheduler past the switch-out) */
			return c;
		}
	}
	return NULL;
}

/*
 * Slow path of kt_cur_ctx(): the cache holds another task (the set is new on this CPU, or a
 * probe runs in the scheduler between the sched_switch tracepoint and the switch), or a start
 * of a task that has no context yet. Look the task up (claim one for a start) and cache it.
 */
noinline notrace struct kt_ctx *kinstr_timer_ctx_slow(struct kinstr_timers *t, struct kt_cpu *pc, bool claim,
						      u64 now)
{
	struct kt_ctx *c = task_ctx(t, current, claim, now);

	pc->cur_task = current;
	pc->cur_ctx = c;
	return c;
}

/* Add a stop to the path of frames [0, i] of c on this CPU. */
noinline notrace void kinstr_timer_path(struct kinstr_timers *t, const struct kt_ctx *c, u32 i, u64 wall,
					u64 oncpu)
{
	struct kt_paths *tab = &t->paths[raw_smp_processor_id()];
	u32 depth = min_t(u32, i + 1, KINSTR_TIMER_PATH_DEPTH), j, h;
	u64 key = 1469598103934665603ULL;

	if (i + 1 > KINSTR_TIMER_PATH_DEPTH)
		tab->truncated++;
	for (j = 0; j < depth; j++)
		key = (key ^ c->f[j].timer) * 1099511628211ULL;
	key |= 1;
	for (h = 0; h < KT_PATH_PROBES; h++) {
		struct kt_path *p = &tab->p[(key + h) & (KINSTR_TIMER_PATHS_MAX - 1)];
		u64 k = READ_ONCE(p->key);

		if (!k) {
			/* claim (an interrupt on this CPU may race for the slot): then fill, then publish */
			k = cmpxchg(&p->key, 0, key);
			if (!k) {
				for (j = 0; j < depth; j++)
					p->timers[j] = c->f[j].timer;
				smp_store_release(&p->depth, depth);
				k = key;
			}
		}
		if (k != key || smp_load_acquire(&p->depth) != depth)
			continue;
		for (j = 0; j < depth && p->timers[j] == c->f[j].timer; j++)
			;
		if (j < depth)
			continue;
		p->calls++;
		p->wall += wall;
		p->oncpu += oncpu;
		return;
	}
	tab->dropped++;
}

static __always_inline void kt_lmin(u64 *p, u64 v)
{
	u64 old = READ_ONCE(*p), seen;

	while (v < old && (seen = cmpxchg_local(p, old, v)) != old)
		old = seen;
}

static __always_inline void kt_lmax(u64 *p, u64 v)
{
	u64 old = READ_ONCE(*p), seen;

	while (v > old && (seen = cmpxchg_local(p, old, v)) != old)
		old = seen;
}

/*
 * Add a stop of timer to its row for the current task's key on this CPU. An interrupt on this
 * CPU may stop a timer of the same key meanwhile: every update is one local64 operation or a
 * local cmpxchg, so none is lost.
 */
noinline notrace void kinstr_timer_by(struct kinstr_timers *t, u32 timer, u64 wall, u64 oncpu)
{
	struct kt_by *tab = &t->by[raw_smp_processor_id()];
	struct task_struct *tsk = current;
	bool by_comm = t->by_flag == KINSTR_TIMERS_F_BY_COMM;
	u32 id = by_comm ? 0 : t->by_flag == KINSTR_TIMERS_F_BY_PID ? tsk->tgid : tsk->pid, h, j;
	u64 key = (1469598103934665603ULL ^ timer) * 1099511628211ULL;
	char comm[16];

	memcpy(comm, tsk->comm, sizeof(comm));
	key = (key ^ id) * 1099511628211ULL;
	for (j = 0; by_comm && j < sizeof(comm) && comm[j]; j++)
		key = (key ^ (u8)comm[j]) * 1099511628211ULL;
	key |= 1;
	for (h = 0; h < KT_PATH_PROBES; h++) {
		struct kt_by_row *r = &tab->r[(key + h) & (KINSTR_TIMER_BY_MAX - 1)];
		u64 k = READ_ONCE(r->key);

		if (!k) {
			/* claim (an interrupt on this CPU may race for the row): then fill, then publish */
			k = cmpxchg_local(&r->key, 0, key);
			if (!k) {
				r->timer = timer;
				r->id = id;
				memcpy(r->comm, comm, sizeof(comm));
				r->wall_min = ~0ULL;
				smp_store_release(&r->ready, 1);
				k = key;
			}
		}
		if (k != key || !smp_load_acquire(&r->ready) || r->timer != timer || r->id != id ||
		    (by_comm && memcmp(r->comm, comm, sizeof(comm))))	/* inline: a constant size */
			continue;
		local64_inc((local64_t *)&r->calls);
		local64_add(wall, (local64_t *)&r->wall);
		local64_add(oncpu, (local64_t *)&r->oncpu);
		kt_lmin(&r->wall_min, wall);
		kt_lmax(&r->wall_max, wall);
		if (!by_comm)
			memcpy(r->comm, comm, sizeof(comm));	/* the process's or thread's latest name */
		return;
	}
	local64_inc((local64_t *)&tab->dropped);
}

/* The process filter (-p, -c): only that process's (or process group's) threads, in task context. */
noinline notrace bool kinstr_timer_filtered(const struct kinstr_timers *t)
{
	if (!in_task())
		return true;
	if (t->pgrp)
		return task_pgrp(current) != t->pgrp;
	return current->tgid != t->tgid;
}

/*
 * sched_switch (irqs off, on the CPU that switches): the on-CPU clocks of the threads that have
 * timers running, the idle contexts given back, the CPU's cache moved to the next task.
 */
static notrace void kt_sched_switch_probe(void *data, bool preempt, struct task_struct *prev,
					  struct task_struct *next, unsigned int prev_state)
{
	struct kinstr_timers *t;
	u64 now = kt_clock();

	rcu_read_lock_sched_notrace();
	list_for_each_entry_rcu(t, &kt_sets, node) {
		struct kt_cpu *pc = this_cpu_ptr(t->cpu);
		struct kt_ctx *c = pc->cur_task == prev ? pc->cur_ctx : task_ctx(t, prev, false, now);

		if (c) {
			c->acc = kt_since(now, c->off);
			/*
			 * An empty stack (or a thread that exits with timers running: they never
			 * stop) gives the context back. The release orders our writes to it before
			 * the owner's slot reads free to the next claimer's cmpxchg.
			 */
			if (!c->depth || prev_state == TASK_DEAD)
				smp_store_release(&t->owners[c - t->tasks], NULL);
		}
		c = task_ctx(t, next, false, now);
		if (c)	/* the on-CPU clock resumes: now - off == acc */
			c->off = now - c->acc;
		pc->cur_task = next;
		pc->cur_ctx = c;
	}
	rcu_read_unlock_sched_notrace();
}

/* What probe context enters here, for the hit path's closure (hitpath.c). */
size_t kinstr_timing_hit_roots(unsigned long *r)
{
	r[0] = (unsigned long)kt_sched_switch_probe;
	r[1] = (unsigned long)kinstr_timer_ctx_slow;	/* the rest inline in hit.c */
	r[2] = (unsigned long)kinstr_timer_path;
	r[3] = (unsigned long)kinstr_timer_filtered;
	r[4] = (unsigned long)kinstr_timer_by;
	return 5;
}

static void find_sched_switch(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		kt_sched_switch = tp;
}

static void timers_free_rcu(struct rcu_head *h)
{
	struct kinstr_timers *t = container_of(h, struct kinstr_timers, rcu);

	put_pid(t->pgrp);
	kinstr_limit_release(KINSTR_RES_TIMERS, t->count);
	vfree(t->stats);
	vfree(t->paths);
	vfree(t->by);
	free_percpu(t->cpu);
	vfree(t->tasks);
	vfree(t->owners);
	kfree(t);
}

static void timers_release(struct kref *ref)
{
	struct kinstr_timers *t = container_of(ref, struct kinstr_timers, ref);

	mutex_lock(&kt_sets_mutex);
	list_del_rcu(&t->node);
	mutex_unlock(&kt_sets_mutex);
	/* the sched_switch probe runs under rcu_read_lock_sched */
	call_rcu(&t->rcu, timers_free_rcu);
}

void kinstr_timers_get(struct kinstr_timers *t)
{
	kref_get(&t->ref);
}

void kinstr_timers_put(struct kinstr_timers *t)
{
	if (t)
		kref_put(&t->ref, timers_release);
}

u32 kinstr_timers_count(const struct kinstr_timers *t)
{
	return t ? t->count : 0;
}

long kinstr_timers_create(struct kinstr_timers **tp, void __user *uarg)
{
	struct kinstr_timers_create tc;
	struct kinstr_timers *t;
	u64 fd_used = 0;	/* one set per descriptor */
	int cpu, err;
	u32 i;

	err = kinstr_get_struct(&tc, sizeof(tc), uarg, KINSTR_TIMERS_CREATE_SIZE_VER0);
	if (err)
		return err;
	if (!tc.count || tc.count > KINSTR_TIMERS_MAX ||
	    (tc.flags & ~(KINSTR_TIMERS_F_PATHS | KINSTR_TIMERS_F_PGRP | KT_BY_FLAGS)) ||
	    ((tc.flags & KINSTR_TIMERS_F_PGRP) && !tc.tgid) || hweight32(tc.flags & KT_BY_FLAGS) > 1)
		return -EINVAL;
	if (*tp)
		return -EEXIST;
	if (!kt_registered)
		return -EOPNOTSUPP;
	err = kinstr_limit_charge(KINSTR_RES_TIMERS, &fd_used, tc.count);
	if (err)
		return err;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		kinstr_limit_release(KINSTR_RES_TIMERS, tc.count);
		return -ENOMEM;
	}
	t->count = tc.count;	/* from here timers_free_rcu() gives the total back */
	t->tgid = tc.tgid;
	t->filter = tc.tgid;	/* F_PGRP needs a tgid (the group's id) */
	if (tc.flags & KINSTR_TIMERS_F_PGRP) {
		t->pgrp = find_get_pid(tc.tgid);
		if (!t->pgrp) {
			timers_free_rcu(&t->rcu);
			return -ESRCH;
		}
	}
	t->stats = vzalloc(array3_size(nr_cpu_ids, tc.count, sizeof(*t->stats)));
	t->cpu = alloc_percpu(struct kt_cpu);
	t->tasks = vzalloc(sizeof(*t->tasks) * KT_TASKS);
	t->owners = vzalloc(sizeof(*t->owners) * KT_TASKS);
	if (tc.flags & KINSTR_TIMERS_F_PATHS)
		t->paths = vzalloc(array_size(nr_cpu_ids, sizeof(*t->paths)));
	t->by_flag = tc.flags & KT_BY_FLAGS;
	if (t->by_flag)
		t->by = vzalloc(array_size(nr_cpu_ids, sizeof(*t->by)));
	if (!t->stats || !t->cpu || !t->tasks || !t->owners || ((tc.flags & KINSTR_TIMERS_F_PATHS) && !t->paths) ||
	    (t->by_flag && !t->by)) {
		timers_free_rcu(&t->rcu);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		per_cpu_ptr(t->cpu, cpu)->stats = t->stats + (size_t)cpu * t->count;
		for (i = 0; i < tc.count; i++)
			t->stats[(size_t)cpu * t->count + i].wall_min = ~0ULL;
	}
	kref_init(&t->ref);
	mutex_lock(&kt_sets_mutex);
	if (list_empty(&kt_sets))
		kt_choose_clock(false);
	/*
	 * Long before a probe of this set can fire (its probes go in through text_poke's syncs),
	 * every CPU's sched_switch probe sees it: its per-CPU caches are kept from the start.
	 */
	list_add_rcu(&t->node, &kt_sets);
	mutex_unlock(&kt_sets_mutex);
	*tp = t;
	return 0;
}

long kinstr_timers_read(struct kinstr_timers *t, void __user *uarg)
{
	struct kinstr_timers_read rd;
	struct kinstr_timer_stats sum;
	u32 i, b;
	int cpu, err;

	if (!t)
		return -ENODEV;
	err = kinstr_get_struct(&rd, sizeof(rd), uarg, KINSTR_TIMERS_READ_SIZE_VER0);
	if (err)
		return err;
	if (rd.__reserved || rd.first > t->count || rd.count > t->count - rd.first)
		return -EINVAL;
	for (i = 0; i < rd.count; i++) {
		memset(&sum, 0, sizeof(sum));
		sum.wall_min = ~0ULL;
		for_each_possible_cpu(cpu) {
			const struct kt_stats *s = per_cpu_ptr(t->cpu, cpu)->stats + rd.first + i;

			/* a racy snapshot of counters that only grow: good enough for a live view */
			sum.calls += READ_ONCE(s->calls);
			sum.starts += READ_ONCE(s->starts);
			sum.unmatched += READ_ONCE(s->unmatched);
			sum.recursive += READ_ONCE(s->recursive);
			sum.dropped += READ_ONCE(s->dropped);
			sum.wall_ns += READ_ONCE(s->wall);
			sum.oncpu_ns += READ_ONCE(s->oncpu);
			sum.wall_min = min(sum.wall_min, READ_ONCE(s->wall_min));
			sum.wall_max = max(sum.wall_max, READ_ONCE(s->wall_max));
			for (b = 0; b < KINSTR_TIMER_HIST; b++)
				sum.hist[b] += READ_ONCE(s->hist[b]);
		}
		sum.wall_ns = kt_ns(sum.wall_ns);	/* summed in clock units, converted once */
		sum.oncpu_ns = kt_ns(sum.oncpu_ns);
		if (sum.wall_min != ~0ULL)
			sum.wall_min = kt_ns(sum.wall_min);
		sum.wall_max = kt_ns(sum.wall_max);
		if (copy_to_user((struct kinstr_timer_stats __user *)u64_to_user_ptr(rd.stats) + i, &sum,
				 sizeof(sum)))
			return -EFAULT;
	}
	return 0;
}

long kinstr_timer_by_read(struct kinstr_timers *t, void __user *uarg)
{
	struct kinstr_timer_by tb;
	struct kinstr_timer_by_row out;
	const struct kt_by *tab;
	u32 i;
	int err;

	if (!t)
		return -ENODEV;
	if (!t->by)
		return -EOPNOTSUPP;
	err = kinstr_get_struct(&tb, sizeof(tb), uarg, KINSTR_TIMER_BY_SIZE_VER0);
	if (err)
		return err;
	if (tb.cpu >= nr_cpu_ids || tb.found || tb.dropped || (tb.count && !tb.rows))
		return -EINVAL;
	tab = &t->by[tb.cpu];
	for (i = 0; i < KINSTR_TIMER_BY_MAX; i++) {
		const struct kt_by_row *r = &tab->r[i];

		if (!smp_load_acquire(&r->ready))	/* pairs with the fill's release */
			continue;
		if (tb.found++ >= tb.count)
			continue;
		memset(&out, 0, sizeof(out));
		out.timer = r->timer;
		out.id = r->id;
		memcpy(out.comm, r->comm, sizeof(out.comm));
		out.calls = READ_ONCE(r->calls);
		out.wall_ns = kt_ns(READ_ONCE(r->wall));
		out.oncpu_ns = kt_ns(READ_ONCE(r->oncpu));
		out.wall_min = kt_ns(READ_ONCE(r->wall_min));
		out.wall_max = kt_ns(READ_ONCE(r->wall_max));
		if (copy_to_user((struct kinstr_timer_by_row __user *)u64_to_user_ptr(tb.rows) + tb.found - 1, &out,
				 sizeof(out)))
			return -EFAULT;
	}
	tb.dropped = READ_ONCE(tab->dropped);
	return kinstr_put_struct(uarg, &tb, sizeof(tb), KINSTR_TIMER_BY_SIZE_VER0);
}

long kinstr_timer_paths(struct kinstr_timers *t, void __user *uarg)
{
	struct kinstr_timer_paths tp;
	struct kinstr_timer_path out;
	const struct kt_paths *tab;
	u32 i, j;
	int err;

	if (!t)
		return -ENODEV;
	if (!t->paths)
		return -EOPNOTSUPP;
	err = kinstr_get_struct(&tp, sizeof(tp), uarg, KINSTR_TIMER_PATHS_SIZE_VER0);
	if (err)
		return err;
	if (tp.cpu >= nr_cpu_ids || tp.found || tp.dropped || tp.truncated)
		return -EINVAL;
	tab = &t->paths[tp.cpu];
	for (i = 0; i < KINSTR_TIMER_PATHS_MAX; i++) {
		const struct kt_path *p = &tab->p[i];
		u32 depth = smp_load_acquire(&p->depth);	/* pairs with the fill's release */

		if (!depth)
			continue;
		if (tp.found == tp.count)
			return -ENOSPC;
		memset(&out, 0, sizeof(out));
		out.depth = depth;
		for (j = 0; j < depth; j++)
			out.timers[j] = p->timers[j];
		out.calls = READ_ONCE(p->calls);
		out.wall_ns = kt_ns(READ_ONCE(p->wall));
		out.oncpu_ns = kt_ns(READ_ONCE(p->oncpu));
		if (copy_to_user((struct kinstr_timer_path __user *)u64_to_user_ptr(tp.paths) + tp.found, &out,
				 sizeof(out)))
			return -EFAULT;
		tp.found++;
	}
	tp.dropped = READ_ONCE(tab->dropped);
	tp.truncated = READ_ONCE(tab->truncated);
	return kinstr_put_struct(uarg, &tp, sizeof(tp), KINSTR_TIMER_PATHS_SIZE_VER0);
}

int kinstr_timing_init(void)
{
	int err;

	for_each_kernel_tracepoint(find_sched_switch, NULL);
	if (!kt_sched_switch) {
		pr_warn(KINSTR_PR_PREFIX "no sched_switch tracepoint: timers unavailable\n");
		return 0;
	}
	err = tracepoint_probe_register(kt_sched_switch, kt_sched_switch_probe, NULL);
	if (err) {
		pr_warn(KINSTR_PR_PREFIX "sched_switch tracepoint: error %d: timers unavailable\n", err);
		return 0;
	}
	kt_registered = true;
	kt_choose_clock(true);
	return 0;
}

void kinstr_timing_exit(void)
{
	if (kt_registered) {
		tracepoint_probe_unregister(kt_sched_switch, kt_sched_switch_probe, NULL);
		tracepoint_synchronize_unregister();
	}
	rcu_barrier();	/* every timers_free_rcu has run */
}
