// SPDX-License-Identifier: GPL-2.0
/*
 * Timers for the profiler: start/stop probes measure intervals per thread (a function from its
 * entry to each of its returns; a call instruction to the instruction after it).
 *
 * Each thread that started a timer owns a context in the set's table (claimed by cmpxchg on its
 * task pointer, given back when its stack empties): a stack of started timers and the thread's
 * on-CPU clock. Only the thread itself (in its probes, preemption disabled) and the sched_switch
 * tracepoint on the CPU that switches it touch its context, so there is no lock. Interrupt
 * contexts (softirq, hardirq, NMI) have a context per CPU, where on-CPU time is wall time.
 * Statistics are per CPU and per timer; readers sum them.
 */
#include <linux/hash.h>
#include <linux/kref.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/pid.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <uapi/linux/kinstr.h>
#include "kinstr.h"
#include "abi.h"

#define KT_DEPTH	32
#define KT_TASKS	1024		/* threads with a timer running at once */
#define KT_RECURSIVE	1U

struct kt_frame {
	u32 timer, flags;
	u64 t0, oncpu0;
};

struct kt_ctx {
	struct task_struct *task;	/* owner (a copy of owners[]); NULL: an interrupt context */
	pid_t pid;			/* the owner's: a task_struct reused by a new thread is not it */
	u32 depth;
	u64 acc;			/* on-CPU ns accumulated while switched in before in_ts */
	u64 in_ts;			/* when the owner was last switched in */
	struct kt_frame f[KT_DEPTH];
};

/* interrupt contexts: per CPU, one per level */
struct kt_irq_ctx {
	struct kt_ctx lvl[3];		/* softirq, hardirq, NMI */
};

#define KT_PATH_PROBES	16	/* linear probing bound in a path table */

struct kt_path {
	u64 key;			/* 0: free; claimed by cmpxchg */
	u32 depth;			/* written last (release): 0 while being filled */
	u32 timers[KINSTR_TIMER_PATH_DEPTH];
	u64 calls, wall_ns, oncpu_ns;
};

struct kt_paths {			/* one CPU's */
	u64 dropped, truncated;
	struct kt_path p[KINSTR_TIMER_PATHS_MAX];
};

struct kinstr_timers {
	struct kref ref;
	struct list_head node;		/* in kt_sets, for the sched_switch probe (RCU) */
	u32 count, tgid;
	struct pid *pgrp;		/* KINSTR_TIMERS_F_PGRP: held; compared, never dereferenced */
	struct kinstr_timer_stats *stats;	/* [nr_cpu_ids][count]: each CPU's timers together */
	struct kt_irq_ctx __percpu *irq;
	struct kt_ctx *tasks;		/* [KT_TASKS] */
	/*
	 * [KT_TASKS]: the owner of tasks[i], NULL while free. Apart from the contexts, so that a
	 * lookup's probes (every context switch makes two) read one or two cache lines, not 16
	 * contexts' worth.
	 */
	struct task_struct **owners;
	struct kt_paths *paths;		/* [nr_cpu_ids], with KINSTR_TIMERS_F_PATHS */
	struct rcu_head rcu;
};

static LIST_HEAD(kt_sets);
static DEFINE_MUTEX(kt_sets_mutex);
static struct tracepoint *kt_sched_switch;
static bool kt_registered;

static notrace struct kinstr_timer_stats *cpu_stats(struct kinstr_timers *t, int cpu)
{
	return t->stats + (size_t)cpu * t->count;
}

/*
 * local_clock(), as ftrace's function_graph times functions: NMI-safe and cheap wherever the TSC
 * is usable (ktime_get_mono_fast_ns() reads the clocksource, which an emulator's HPET makes
 * slow). It is monotonic per CPU; a thread that migrates may see a small step between CPUs,
 * so differences are clamped at zero.
 */
static notrace u64 kt_clock(void)
{
	return local_clock();
}

static notrace u64 since(u64 now, u64 then)
{
	return now > then ? now - then : 0;
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
			c->acc = 0;
			c->in_ts = now;
			return c;
		}
	}
	return NULL;
}

static notrace struct kt_ctx *cur_ctx(struct kinstr_timers *t, bool claim, u64 now)
{
	if (in_nmi())
		return &this_cpu_ptr(t->irq)->lvl[2];
	if (in_hardirq())
		return &this_cpu_ptr(t->irq)->lvl[1];
	if (in_serving_softirq())
		return &this_cpu_ptr(t->irq)->lvl[0];
	return task_ctx(t, current, claim, now);
}

static notrace u64 ctx_oncpu(const struct kt_ctx *c, u64 now)
{
	return c->task ? c->acc + since(now, c->in_ts) : now;
}

static notrace void account(struct kinstr_timers *t, u32 timer, const struct kt_frame *f, u64 now,
			    const struct kt_ctx *c)
{
	struct kinstr_timer_stats *s = cpu_stats(t, raw_smp_processor_id()) + timer;
	u64 wall = since(now, f->t0);

	s->calls++;
	if (f->flags & KT_RECURSIVE) {
		s->recursive++;
		return;
	}
	s->wall_ns += wall;
	s->oncpu_ns += since(ctx_oncpu(c, now), f->oncpu0);
	if (wall < s->wall_min)
		s->wall_min = wall;
	if (wall > s->wall_max)
		s->wall_max = wall;
	s->hist[min_t(u32, wall ? ilog2(wall) : 0, KINSTR_TIMER_HIST - 1)]++;
}

/* Add a stop to the path of frames [0, i] of c on this CPU. */
static notrace void account_path(struct kinstr_timers *t, const struct kt_ctx *c, u32 i, u64 wall, u64 oncpu)
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
		p->wall_ns += wall;
		p->oncpu_ns += oncpu;
		return;
	}
	tab->dropped++;
}

/* From a timer probe's slot (through the entry stub), any context. */
notrace void kinstr_timer_hit(struct kinstr_timers *t, u32 timer, bool start)
{
	struct kt_ctx *c;
	u64 now;
	int i;

	if (t->pgrp && (!in_task() || task_pgrp(current) != t->pgrp))
		return;
	if (!t->pgrp && t->tgid && (!in_task() || current->tgid != t->tgid))
		return;
	preempt_disable_notrace();
	now = kt_clock();
	c = cur_ctx(t, start, now);
	if (start) {
		struct kinstr_timer_stats *s = cpu_stats(t, raw_smp_processor_id()) + timer;
		struct kt_frame *f;

		s->starts++;
		if (!c || c->depth == KT_DEPTH) {
			s->dropped++;
			goto out;
		}
		f = &c->f[c->depth];
		f->timer = timer;
		f->flags = 0;
		for (i = 0; i < c->depth; i++)
			if (c->f[i].timer == timer)
				f->flags = KT_RECURSIVE;
		f->t0 = now;
		f->oncpu0 = ctx_oncpu(c, now);
		/* an interrupt's probe sees the frame only once it is complete */
		barrier();
		c->depth++;
		goto out;
	}
	for (i = c ? (int)c->depth - 1 : -1; i >= 0; i--)
		if (c->f[i].timer == timer)
			break;
	if (i < 0) {
		cpu_stats(t, raw_smp_processor_id())[timer].unmatched++;
		goto out;
	}
	account(t, timer, &c->f[i], now, c);
	if (t->paths && !(c->f[i].flags & KT_RECURSIVE))
		account_path(t, c, i, since(now, c->f[i].t0), since(ctx_oncpu(c, now), c->f[i].oncpu0));
	c->depth = i;	/* timers started above it and never stopped go too */
	if (!i && c->task)	/* give the context back, after our last write */
		smp_store_release(&t->owners[c - t->tasks], NULL);
out:
	preempt_enable_notrace();
}

/* sched_switch: the on-CPU clocks of the threads that have timers running. */
static notrace void kt_sched_switch_probe(void *data, bool preempt, struct task_struct *prev,
					  struct task_struct *next, unsigned int prev_state)
{
	struct kinstr_timers *t;
	u64 now = kt_clock();

	rcu_read_lock_sched_notrace();
	list_for_each_entry_rcu(t, &kt_sets, node) {
		struct kt_ctx *c = task_ctx(t, prev, false, now);

		if (c)
			c->acc += since(now, c->in_ts);
		c = task_ctx(t, next, false, now);
		if (c)
			c->in_ts = now;
	}
	rcu_read_unlock_sched_notrace();
}

/* What probe context enters here, for the hit path's closure (hitpath.c). */
size_t kinstr_timing_hit_roots(unsigned long *r)
{
	r[0] = (unsigned long)kinstr_timer_hit;
	r[1] = (unsigned long)kt_sched_switch_probe;
	return 2;
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
	free_percpu(t->irq);
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
	    (tc.flags & ~(KINSTR_TIMERS_F_PATHS | KINSTR_TIMERS_F_PGRP)) || ((tc.flags & KINSTR_TIMERS_F_PGRP) && !tc.tgid))
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
	if (tc.flags & KINSTR_TIMERS_F_PGRP) {
		t->pgrp = find_get_pid(tc.tgid);
		if (!t->pgrp) {
			timers_free_rcu(&t->rcu);
			return -ESRCH;
		}
	}
	t->stats = vzalloc(array3_size(nr_cpu_ids, tc.count, sizeof(*t->stats)));
	t->irq = alloc_percpu(struct kt_irq_ctx);
	t->tasks = vzalloc(sizeof(*t->tasks) * KT_TASKS);
	t->owners = vzalloc(sizeof(*t->owners) * KT_TASKS);
	if (tc.flags & KINSTR_TIMERS_F_PATHS)
		t->paths = vzalloc(array_size(nr_cpu_ids, sizeof(*t->paths)));
	if (!t->stats || !t->irq || !t->tasks || !t->owners || ((tc.flags & KINSTR_TIMERS_F_PATHS) && !t->paths)) {
		timers_free_rcu(&t->rcu);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu)
		for (i = 0; i < tc.count; i++)
			cpu_stats(t, cpu)[i].wall_min = ~0ULL;
	kref_init(&t->ref);
	mutex_lock(&kt_sets_mutex);
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
			const struct kinstr_timer_stats *s = cpu_stats(t, cpu) + rd.first + i;

			/* a racy snapshot of counters that only grow: good enough for a live view */
			sum.calls += READ_ONCE(s->calls);
			sum.starts += READ_ONCE(s->starts);
			sum.unmatched += READ_ONCE(s->unmatched);
			sum.recursive += READ_ONCE(s->recursive);
			sum.dropped += READ_ONCE(s->dropped);
			sum.wall_ns += READ_ONCE(s->wall_ns);
			sum.oncpu_ns += READ_ONCE(s->oncpu_ns);
			sum.wall_min = min(sum.wall_min, READ_ONCE(s->wall_min));
			sum.wall_max = max(sum.wall_max, READ_ONCE(s->wall_max));
			for (b = 0; b < KINSTR_TIMER_HIST; b++)
				sum.hist[b] += READ_ONCE(s->hist[b]);
		}
		if (copy_to_user((struct kinstr_timer_stats __user *)u64_to_user_ptr(rd.stats) + i, &sum,
				 sizeof(sum)))
			return -EFAULT;
	}
	return 0;
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
		out.wall_ns = READ_ONCE(p->wall_ns);
		out.oncpu_ns = READ_ONCE(p->oncpu_ns);
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
