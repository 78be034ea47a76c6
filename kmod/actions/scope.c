// SPDX-License-Identifier: GPL-2.0
/*
 * Scope (KINSTR_IOC_SCOPE): which threads a session's probes act for. The decision is made per
 * CPU when a thread is switched in (sched_switch) and when the CPU's thread renames itself
 * (task_rename: exec, prctl), and kept in a per-CPU byte, the gate, which probe context tests:
 * a counting slot with one cmpb (patch/slot.c), the other actions first thing in their hit
 * functions (hit.c). A process that a followed process forks joins the scope in
 * sched_process_fork, before the child can run.
 *
 * The tracepoint probes are registered with the first scope and unregistered (from a work item)
 * once the last scope is freed, so that the kernel's text is as it was once kinstr is done: the
 * tracepoints' static calls and keys switch back. KINSTR_IOC_SYNC waits for that too. They are
 * roots of the hit path (check/hitpath.c) and call nothing out of line, so no probe can be placed
 * in what they run.
 */
#include <linux/cgroup.h>
#include <linux/hash.h>
#include <linux/kref.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "abi.h"
#include "actions/actions.h"

#define PID_BITS	(ilog2(KINSTR_SCOPE_MAX_PIDS) + 1)
#define PID_SLOTS	(1U << PID_BITS)	/* open addressing, at most half full */

struct kinstr_scope_k {
	struct list_head node;		/* in scopes (RCU), walked by the tracepoint probes */
	struct kref ref;		/* the session's, and one per area with a scoped probe */
	struct rcu_head rcu;
	u8 __percpu *gate;		/* 1: the CPU's current thread is in scope */
	u32 flags;			/* KINSTR_SCOPE_F_* */
	bool any_process;		/* no pids[] nor tids[] */
	atomic_t npids;			/* members of pids[]: the given and the followed */
	u32 ntids, nself;
	struct cgroup *cgrp;		/* NULL: any cgroup */
	unsigned long *cpus;		/* NULL: every CPU; else nr_cpu_ids bits */
	char comm[TASK_COMM_LEN];	/* "": any comm */
	u32 tids[KINSTR_SCOPE_MAX_IDS], self[KINSTR_SCOPE_MAX_IDS];
	u32 pids[PID_SLOTS];		/* a set of tgids; 0 is an empty slot */
};

static LIST_HEAD(scopes);
static DEFINE_SPINLOCK(scopes_lock);	/* list writers */
static DEFINE_MUTEX(scope_tp_mutex);	/* registering and unregistering the probes */
static bool scope_tp_on;		/* under scope_tp_mutex */
static atomic_t scope_live;		/* scopes not yet released */
static struct tracepoint *tp_switch, *tp_fork, *tp_rename;

static __always_inline bool pids_has(const struct kinstr_scope_k *s, u32 pid)
{
	u32 h = hash_32(pid, PID_BITS), i, v;

	for (i = 0; i < PID_SLOTS; i++) {
		v = READ_ONCE(s->pids[(h + i) & (PID_SLOTS - 1)]);
		if (v == pid)
			return true;
		if (!v)
			return false;
	}
	return false;
}

/*
 * Add pid (not 0) to the set; false when it is full. Lock-free: a slot goes from 0 to a pid
 * once, by cmpxchg (a full barrier: the pid is in before the caller goes on, e.g. to wake the
 * child it forked, whose first switch-in then finds it).
 */
static __always_inline bool pids_add(struct kinstr_scope_k *s, u32 pid)
{
	u32 h = hash_32(pid, PID_BITS), i;

	if (pids_has(s, pid))
		return true;
	if (atomic_inc_return(&s->npids) > KINSTR_SCOPE_MAX_PIDS) {
		atomic_dec(&s->npids);
		return false;
	}
	for (i = 0; i < PID_SLOTS; i++) {
		u32 *slot = &s->pids[(h + i) & (PID_SLOTS - 1)];
		u32 old = READ_ONCE(*slot);

		if (!old)
			old = cmpxchg(slot, 0, pid);
		if (!old)
			return true;
		if (old == pid)
			break;
	}
	atomic_dec(&s->npids);
	return true;
}

static __always_inline bool ids_has(const u32 *ids, u32 n, u32 id)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* comm as __set_task_comm() stores it (at most TASK_COMM_LEN - 1 bytes) is exactly want? */
static __always_inline bool comm_is(const char *comm, const char *want)
{
	u32 i;

	for (i = 0; i < TASK_COMM_LEN - 1; i++) {
		if (comm[i] != want[i])
			return false;
		if (!comm[i])
			return true;
	}
	return !want[i];
}

/* Is thread t, named comm, on cpu in scope? Called with preemption off, in an RCU reader. */
static __always_inline bool admits(const struct kinstr_scope_k *s, struct task_struct *t, const char *comm,
				   int cpu)
{
	if (ids_has(s->self, s->nself, t->tgid))
		return false;
	if (s->cpus && !test_bit(cpu, s->cpus))
		return false;
	if (!s->any_process && !pids_has(s, t->tgid) && !ids_has(s->tids, s->ntids, t->pid))
		return false;
	if (s->comm[0] && !comm_is(comm, s->comm))
		return false;
	/* the css_set is RCU-protected, and a sched reader is an RCU reader */
	if (s->cgrp && !cgroup_is_descendant(task_dfl_cgroup(t), s->cgrp))
		return false;
	return true;
}

static notrace void scope_switch(void *data, bool preempt, struct task_struct *prev, struct task_struct *next,
				 unsigned int prev_state)
{
	struct kinstr_scope_k *s;
	int cpu = smp_processor_id();

	rcu_read_lock_sched_notrace();
	list_for_each_entry_rcu(s, &scopes, node)
		this_cpu_write(*s->gate, admits(s, next, next->comm, cpu));
	rcu_read_unlock_sched_notrace();
}

/* Before the new name is stored (comm is it): the CPU's own thread decides again. */
static notrace void scope_rename(void *data, struct task_struct *task, const char *comm)
{
	struct kinstr_scope_k *s;

	if (task != current)
		return;	/* another CPU's thread: decided at its next switch-in */
	rcu_read_lock_sched_notrace();
	list_for_each_entry_rcu(s, &scopes, node)
		this_cpu_write(*s->gate, admits(s, task, comm, smp_processor_id()));
	rcu_read_unlock_sched_notrace();
}

static notrace void scope_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	struct kinstr_scope_k *s;

	if (child->tgid == parent->tgid)
		return;	/* a thread: its process is in or not already */
	rcu_read_lock_sched_notrace();
	list_for_each_entry_rcu(s, &scopes, node)
		if ((s->flags & KINSTR_SCOPE_F_FOLLOW) && pids_has(s, parent->tgid))
			pids_add(s, child->tgid);
	rcu_read_unlock_sched_notrace();
}

size_t kinstr_scope_hit_roots(unsigned long *r)
{
	r[0] = (unsigned long)scope_switch;
	r[1] = (unsigned long)scope_rename;
	r[2] = (unsigned long)scope_fork;
	return 3;
}

static void find_tps(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		tp_switch = tp;
	else if (!strcmp(tp->name, "sched_process_fork"))
		tp_fork = tp;
	else if (!strcmp(tp->name, "task_rename"))
		tp_rename = tp;
}

/* Called with scope_tp_mutex held, the probes on. */
static void scope_tp_unregister_locked(void)
{
	tracepoint_probe_unregister(tp_rename, scope_rename, NULL);
	tracepoint_probe_unregister(tp_fork, scope_fork, NULL);
	tracepoint_probe_unregister(tp_switch, scope_switch, NULL);
	tracepoint_synchronize_unregister();
	scope_tp_on = false;
}

/* The last scope went: the probes out, unless a new scope came meanwhile. */
static void scope_tp_off(struct work_struct *w)
{
	mutex_lock(&scope_tp_mutex);
	if (scope_tp_on && !atomic_read(&scope_live))
		scope_tp_unregister_locked();
	mutex_unlock(&scope_tp_mutex);
}
static DECLARE_WORK(scope_tp_off_work, scope_tp_off);

/* Registered for one more scope (counted in scope_live on success). */
static int scope_tp_register(void)
{
	int err = 0;

	mutex_lock(&scope_tp_mutex);
	atomic_inc(&scope_live);
	if (scope_tp_on)
		goto out;
	for_each_kernel_tracepoint(find_tps, NULL);
	if (!tp_switch || !tp_fork || !tp_rename) {
		err = -EOPNOTSUPP;
		goto out;
	}
	err = tracepoint_probe_register(tp_switch, scope_switch, NULL);
	if (err)
		goto out;
	err = tracepoint_probe_register(tp_fork, scope_fork, NULL);
	if (err)
		goto no_fork;
	err = tracepoint_probe_register(tp_rename, scope_rename, NULL);
	if (err)
		goto no_rename;
	scope_tp_on = true;
	goto out;
no_rename:
	tracepoint_probe_unregister(tp_fork, scope_fork, NULL);
no_fork:
	tracepoint_probe_unregister(tp_switch, scope_switch, NULL);
	tracepoint_synchronize_unregister();
out:
	if (err)
		atomic_dec(&scope_live);
	mutex_unlock(&scope_tp_mutex);
	return err;
}

void kinstr_scope_drain(void)
{
	flush_work(&scope_tp_off_work);
}

void kinstr_scope_exit(void)
{
	flush_work(&scope_tp_off_work);
	mutex_lock(&scope_tp_mutex);
	if (scope_tp_on)
		scope_tp_unregister_locked();
	mutex_unlock(&scope_tp_mutex);
	rcu_barrier();	/* every scope_free_rcu has run */
}

static void scope_free(struct kinstr_scope_k *s)
{
	free_percpu(s->gate);
	if (s->cgrp)
		cgroup_put(s->cgrp);
	bitmap_free(s->cpus);
	kvfree(s);
}

static void scope_free_rcu(struct rcu_head *h)
{
	scope_free(container_of(h, struct kinstr_scope_k, rcu));
}

static void scope_release(struct kref *ref)
{
	struct kinstr_scope_k *s = container_of(ref, struct kinstr_scope_k, ref);

	spin_lock(&scopes_lock);
	list_del_rcu(&s->node);
	spin_unlock(&scopes_lock);
	call_rcu(&s->rcu, scope_free_rcu);	/* after the tracepoint probes that may walk it */
	/* unregistering sleeps and takes text_mutex: not here, where a worker may hold it */
	if (atomic_dec_and_test(&scope_live))
		schedule_work(&scope_tp_off_work);
}

void kinstr_scope_get(struct kinstr_scope_k *s)
{
	kref_get(&s->ref);
}

void kinstr_scope_put(struct kinstr_scope_k *s)
{
	if (s)
		kref_put(&s->ref, scope_release);
}

u8 __percpu *kinstr_scope_gate(const struct kinstr_scope_k *s)
{
	return s->gate;
}

/* Each CPU's current thread, decided once the scope is listed (later switches decide too). */
static void scope_decide_here(void *arg)
{
	struct kinstr_scope_k *s = arg;

	this_cpu_write(*s->gate, admits(s, current, current->comm, smp_processor_id()));
}

static int get_ids(u32 *ids, u64 uptr, u32 n)
{
	u32 i;

	if (n && copy_from_user(ids, u64_to_user_ptr(uptr), (size_t)n * sizeof(*ids)))
		return -EFAULT;
	for (i = 0; i < n; i++)
		if (!ids[i] || ids[i] > PID_MAX_LIMIT)
			return -EINVAL;
	return 0;
}

static int scope_fill(struct kinstr_scope_k *s, const struct kinstr_scope *sc)
{
	u32 i, pids[64];
	int err;

	s->flags = sc->flags;
	s->any_process = !sc->npids && !sc->ntids;
	err = get_ids(s->tids, sc->tids, sc->ntids);
	if (!err)
		err = get_ids(s->self, sc->self, sc->nself);
	if (err)
		return err;
	s->ntids = sc->ntids;
	s->nself = sc->nself;
	for (i = 0; i < sc->npids; i += ARRAY_SIZE(pids)) {
		u32 j, n = min_t(u32, sc->npids - i, ARRAY_SIZE(pids));

		err = get_ids(pids, sc->pids + (u64)i * sizeof(u32), n);
		if (err)
			return err;
		for (j = 0; j < n; j++)
			pids_add(s, pids[j]);
	}
	memcpy(s->comm, sc->comm, sizeof(s->comm));
	if (sc->ncpus) {
		/* a CPU this kernel does not have is never in scope */
		s->cpus = bitmap_zalloc(nr_cpu_ids, GFP_KERNEL);
		if (!s->cpus)
			return -ENOMEM;
		for (i = 0; i < sc->ncpus; i += 64) {
			u64 w;
			u32 b;

			if (get_user(w, (u64 __user *)u64_to_user_ptr(sc->cpus) + i / 64))
				return -EFAULT;
			for (b = 0; b < 64 && i + b < sc->ncpus; b++)
				if ((w >> b & 1) && i + b < nr_cpu_ids)
					__set_bit(i + b, s->cpus);
		}
	}
	if (sc->cgroup_fd >= 0) {
		struct cgroup *cg = cgroup_get_from_fd(sc->cgroup_fd);

		if (IS_ERR(cg))
			return PTR_ERR(cg);
		s->cgrp = cg;
	}
	return 0;
}

static int scope_check(const struct kinstr_scope *sc)
{
	if ((sc->flags & ~KINSTR_SCOPE_F_FOLLOW) || sc->__reserved || sc->npids > KINSTR_SCOPE_MAX_PIDS ||
	    sc->ntids > KINSTR_SCOPE_MAX_IDS || sc->nself > KINSTR_SCOPE_MAX_IDS || sc->ncpus > 64 * 1024 ||
	    sc->cgroup_fd < -1 || sc->comm[sizeof(sc->comm) - 1] ||
	    ((sc->flags & KINSTR_SCOPE_F_FOLLOW) && !sc->npids))
		return -EINVAL;
	return 0;
}

long kinstr_scope_create(struct kinstr_scope_k **sp, void __user *uarg)
{
	struct kinstr_scope_k *s;
	struct kinstr_scope sc;
	long err;

	err = kinstr_get_struct(&sc, sizeof(sc), uarg, KINSTR_SCOPE_SIZE_VER0);
	if (err)
		return err;
	err = scope_check(&sc);
	if (err)
		return err;
	if (*sp)
		return -EBUSY;
	err = scope_tp_register();
	if (err)
		return err;
	s = kvzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		if (atomic_dec_and_test(&scope_live))
			schedule_work(&scope_tp_off_work);
		return -ENOMEM;
	}
	kref_init(&s->ref);
	INIT_LIST_HEAD(&s->node);
	s->gate = alloc_percpu(u8);
	err = s->gate ? scope_fill(s, &sc) : -ENOMEM;
	if (err) {
		scope_free(s);
		if (atomic_dec_and_test(&scope_live))
			schedule_work(&scope_tp_off_work);
		return err;
	}
	spin_lock(&scopes_lock);
	list_add_rcu(&s->node, &scopes);
	spin_unlock(&scopes_lock);
	/* listed first: a switch from here on decides as well, so no CPU keeps a stale gate */
	on_each_cpu(scope_decide_here, s, 1);
	*sp = s;
	return 0;
}
