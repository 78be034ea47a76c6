// SPDX-License-Identifier: GPL-2.0
/*
 * The patching protocol: areas of slots in patch space, the int3 handler, and the worker that
 * completes jumps and frees slots after quiescence (patch.h).
 *
 * Install a batch: write every slot and make the area read-only + executable; publish the
 * probes for the int3 handler; write int3 on every site and sync all cores (from here a CPU
 * hitting a site is sent into its slot); synchronize_rcu_tasks() so that no task is preempted
 * inside a range about to be covered by a jmp; write bytes 1..4 of each jmp, sync; write byte
 * 0, sync. Remove: int3 on byte 0, sync; restore bytes 1..4, sync; restore byte 0, sync;
 * patch_unpublish; synchronize_rcu() (int3 handlers in flight) and synchronize_rcu_tasks() (tasks
 * preempted inside a slot) before freeing. One wait of each kind per batch.
 *
 * The waits are asynchronous, like the kprobe optimizer's: INSTALL returns once the int3s are
 * in (the probes count from then on, through the int3 handler), and a worker completes the
 * jumps after the rcu-tasks wait; REMOVE returns once the text is restored, and the worker
 * frees the slots after both waits. One round of the worker serves every batch queued before
 * it started waiting, so the removal of one batch and the install of the next share a wait.
 */
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/kdebug.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <asm/text-patching.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "check/check.h"
#include "actions/actions.h"
#include "abi.h"
#include "compat.h"
#include "patch/patch.h"
#include "patch/slot.h"
#include "actions/bpf.h"
#include "patch/patch_priv.h"


/*
 * One patcher at a time, across sessions; also guards kinstr_sites, the worker's lists and
 * every area's state. Taken before text_mutex.
 */
DEFINE_MUTEX(kinstr_patch_mutex);
DEFINE_HASHTABLE(kinstr_sites, SITE_HASH_BITS);
LIST_HEAD(kinstr_arm_list);	/* areas whose jumps wait for an rcu-tasks wait */
LIST_HEAD(kinstr_free_list);	/* removed areas whose slots wait for quiescence */
static bool kinstr_worker_holding;	/* the worker took areas off both lists and is not done with them */
LIST_HEAD(kinstr_cached);	/* areas whose code cache is in: their functions' ranges */
static void kinstr_worker_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(kinstr_worker, kinstr_worker_fn);

struct kprobe_k *patch_lookup_site(unsigned long site)
{
	struct kprobe_k *p;

	hash_for_each_possible_rcu_notrace(kinstr_sites, p, hnode, site)
		if (p->site == site)
			return p;
	return NULL;
}

/*
 * int3 at one of our sites: resume in its slot, which does the action, the displaced
 * instructions and the jump back. Runs with RCU watching (notify_die's chain is RCU-protected).
 */
static notrace int kinstr_int3_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	struct pt_regs *regs = args->regs;
	struct kprobe_k *p;

	if (val != DIE_INT3 || !regs || user_mode(regs))
		return NOTIFY_DONE;
	p = patch_lookup_site(regs->ip - 1);
	if (!p || p->kind == KINSTR_PROBE_FTRACE)	/* ftrace's int3s are ftrace's */
		return NOTIFY_DONE;
	regs->ip = (unsigned long)p->slot;
	return NOTIFY_STOP;
}

static struct notifier_block kinstr_die_nb = {
	.notifier_call = kinstr_int3_notify,
	/* ahead of debuggers: our int3s are ours */
	.priority = 0x7fffffff,
};

void patch_poke(unsigned long addr, const void *bytes, size_t len)
{
	kinstr_kcall(text_poke)((void *)addr, bytes, len);
}

static u64 probe_hits(const struct kprobe_k *p)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += per_cpu_ptr(p->hits, cpu)[0];
	return n;
}

/*
 * The order in which to patch probes [0, n): those hit so far first (hot_first) or last, *split
 * where the other kind begins. The patching itself runs some probed functions (text_poke's and
 * the IPIs' helpers) thousands of times, and each hit on a site in its int3 state costs a trap
 * where a jump costs a few instructions: hot probes become jumps first and go back to int3 last.
 * NULL (no memory): in index order.
 */
static u32 *patch_order(struct kinstr_area *a, u32 n, bool hot_first, u32 *split)
{
	u32 *o = kvmalloc_array(n, sizeof(*o), GFP_KERNEL);
	u8 *hit = kvmalloc(n, GFP_KERNEL);
	u32 i, h = 0, c;

	if (!o || !hit) {
		kvfree(o);
		kvfree(hit);
		return NULL;
	}
	for (i = 0; i < n; i++) {	/* the counts move meanwhile: one reading of each decides */
		hit[i] = probe_hits(&a->probes[i]) != 0;
		h += hit[i];
	}
	*split = hot_first ? h : n - h;
	c = hot_first ? h : 0;
	h = hot_first ? 0 : n - h;
	for (i = 0; i < n; i++) {
		if (hit[i])
			o[h++] = i;
		else
			o[c++] = i;
	}
	kvfree(hit);
	return o;
}

static u32 nth(const u32 *o, u32 i)
{
	return o ? o[i] : i;
}

/* Undo the sites of probes o[from, to): int3 first, then the tail, then byte 0. text_mutex held. */
static void unpatch_some(struct kinstr_area *a, const u32 *o, u32 from, u32 to)
{
	const u8 int3 = KINSTR_INT3;
	u32 i;

	if (from == to)
		return;
	for (i = from; i < to; i++)
		if (a->probes[nth(o, i)].kind == KINSTR_PROBE_JUMP && !a->probes[nth(o, i)].gone)
			patch_poke(a->probes[nth(o, i)].site, &int3, 1);
	kinstr_kcall(text_poke_sync)();
	for (i = from; i < to; i++)
		if (a->probes[nth(o, i)].kind == KINSTR_PROBE_JUMP && !a->probes[nth(o, i)].gone)
			patch_poke(a->probes[nth(o, i)].site + 1, a->probes[nth(o, i)].orig + 1, 4);
	kinstr_kcall(text_poke_sync)();
	for (i = from; i < to; i++)
		if (a->probes[nth(o, i)].kind != KINSTR_PROBE_FTRACE && !a->probes[nth(o, i)].gone)
			patch_poke(a->probes[nth(o, i)].site, a->probes[nth(o, i)].orig, 1);
	kinstr_kcall(text_poke_sync)();
}

/* Undo the sites of probes [0, n), the probes hit so far last. text_mutex held. */
void patch_unpatch_locked(struct kinstr_area *a, u32 n)
{
	u32 cold = n, *o = patch_order(a, n, false, &cold);

	lockdep_assert_held(kinstr_ksyms.text_mutex);
	unpatch_some(a, o, 0, o ? cold : n);
	unpatch_some(a, o, o ? cold : n, n);
	kvfree(o);
}

/* Take the ftrace direct calls of probes [0, n) out (ftrace patches; not under text_mutex). */
void patch_unregister_direct(struct kinstr_area *a, u32 n)
{
	if (KINSTR_DIRECT_SHARED) {	/* all of them or none: one ops */
		kinstr_direct_del_all(&a->direct, 1, 0);
		return;
	}
	kinstr_direct_del_all(&a->probes[0].direct, n, sizeof(a->probes[0]));
}

static void unpublish_locked(struct kinstr_area *a, u32 n)
{
	u32 i;

	lockdep_assert_held(&kinstr_patch_mutex);
	for (i = 0; i < n; i++)
		if (!a->probes[i].gone)
			hash_del_rcu(&a->probes[i].hnode);
}

void patch_unpublish(struct kinstr_area *a, u32 n)
{
	mutex_lock(&kinstr_patch_mutex);
	unpublish_locked(a, n);
	mutex_unlock(&kinstr_patch_mutex);
}

/*
 * Fence the sites of probes [0, a->count) against kprobes, after checking once more, under
 * kprobe_mutex, that no kprobe came since verification. -EBUSY with *bad the probe it hit.
 */
int patch_fence_area(struct kinstr_area *a, u32 *bad)
{
	u32 i;

	kinstr_fence_lock();
	for (i = 0; i < a->count; i++) {
		struct kprobe_k *p = &a->probes[i];

		if (p->kind == KINSTR_PROBE_FTRACE)
			continue;	/* ftrace's text: ftrace arbitrates its users */
		if (kinstr_fence_kprobed(p->site, p->displaced_len)) {
			*bad = i;
			while (i--)
				kinstr_fence_del(&a->probes[i].fence);
			kinstr_fence_unlock();
			return -EBUSY;
		}
		kinstr_fence_add(&p->fence, p->site, p->displaced_len);
	}
	/* a kprobe inside a copied function would never fire: its code runs in the copy */
	for (i = 0; i < a->nfns; i++) {
		if (kinstr_fence_kprobed(a->fns[i].start, a->fns[i].end - a->fns[i].start)) {
			while (i--)
				kinstr_fence_del(&a->fn_fences[i]);
			for (i = 0; i < a->count; i++)
				kinstr_fence_del(&a->probes[i].fence);
			*bad = 0;
			kinstr_fence_unlock();
			return -EBUSY;
		}
		kinstr_fence_add(&a->fn_fences[i], a->fns[i].start, a->fns[i].end - a->fns[i].start);
	}
	kinstr_fence_unlock();
	return 0;
}

/* Unfence, once the text is restored; the entries are freed with the area, after quiescence. */
void patch_unfence_area(struct kinstr_area *a)
{
	u32 i;

	kinstr_fence_lock();
	for (i = 0; i < a->count; i++)
		kinstr_fence_del(&a->probes[i].fence);
	for (i = 0; i < a->nfns; i++)
		kinstr_fence_del(&a->fn_fences[i]);
	kinstr_fence_unlock();
}

/* Both quiescence waits, once for a whole batch. */
void patch_quiesce(void)
{
	synchronize_rcu();		/* int3 handlers that may still see the probes */
	synchronize_rcu_tasks();	/* tasks preempted inside a slot or a displaced range */
}

/* Write the jmps of probes o[from, to) (tail, sync, first byte, sync). */
static void complete_some(struct kinstr_area *a, const u32 *o, u32 from, u32 to)
{
	const u8 jmp = KINSTR_JMP32;
	u32 i;

	if (from == to)
		return;
	for (i = from; i < to; i++) {
		struct kprobe_k *p = &a->probes[nth(o, i)];
		u8 rel[4];

		if (p->kind != KINSTR_PROBE_JUMP || p->gone)
			continue;
		kinstr_put_rel32(rel, p->site + 5, (unsigned long)p->slot);
		patch_poke(p->site + 1, rel, 4);
	}
	kinstr_kcall(text_poke_sync)();
	for (i = from; i < to; i++)
		if (a->probes[nth(o, i)].kind == KINSTR_PROBE_JUMP && !a->probes[nth(o, i)].gone)
			patch_poke(a->probes[nth(o, i)].site, &jmp, 1);
	kinstr_kcall(text_poke_sync)();
}

/*
 * Write the jmp of every jump probe of a; its int3s went in before an rcu-tasks wait. The probes
 * hit since (through their int3s) first, in a round of their own.
 */
static void complete_jumps_locked(struct kinstr_area *a)
{
	u32 hot = a->count, *o = patch_order(a, a->count, true, &hot);

	lockdep_assert_held(kinstr_ksyms.text_mutex);
	lockdep_assert_held(&kinstr_patch_mutex);
	complete_some(a, o, 0, o ? hot : a->count);
	complete_some(a, o, o ? hot : a->count, a->count);
	kvfree(o);
}

/*
 * One round: take every armed and every removed area queued so far, wait once, then complete
 * the armed ones' jumps (unless removed meanwhile) and free the removed ones.
 */
static void kinstr_worker_fn(struct work_struct *work)
{
	struct kinstr_area *a, *tmp;
	LIST_HEAD(arm);
	LIST_HEAD(dead);
	bool more;

	mutex_lock(&kinstr_patch_mutex);
	list_splice_init(&kinstr_arm_list, &arm);
	list_splice_init(&kinstr_free_list, &dead);
	kinstr_worker_holding = !list_empty(&arm) || !list_empty(&dead);
	mutex_unlock(&kinstr_patch_mutex);
	if (list_empty(&arm) && list_empty(&dead))
		return;

	/* removed areas need both waits; armed ones need the rcu-tasks one */
	if (!list_empty(&dead))
		synchronize_rcu();
	synchronize_rcu_tasks();

	mutex_lock(&kinstr_patch_mutex);
	/* an area removed during the wait left this list (area_remove, under the same mutex) */
	if (!list_empty(&arm)) {
		mutex_lock(kinstr_ksyms.text_mutex);
		list_for_each_entry_safe(a, tmp, &arm, arm_node) {
			complete_jumps_locked(a);
			list_del_init(&a->arm_node);
			a->state = AREA_LIVE;
		}
		mutex_unlock(kinstr_ksyms.text_mutex);
	}
	more = !list_empty(&kinstr_arm_list) || !list_empty(&kinstr_free_list);
	mutex_unlock(&kinstr_patch_mutex);

	list_for_each_entry_safe(a, tmp, &dead, node) {
		list_del(&a->node);
		kinstr_area_free(a);
#ifdef KINSTR_PLANT_UAF
		/* A deliberate bug, only in a test build (make ... KINSTR_PLANT=uaf; tests/debug-kernel/
		 * plant-check): the freed area read once more, which the debug kernel's KASAN reports. */
		pr_info("kinstr: planted bug: area of %u probes read after its free\n", READ_ONCE(a->count));
#endif
	}
	mutex_lock(&kinstr_patch_mutex);
	kinstr_worker_holding = false;
	mutex_unlock(&kinstr_patch_mutex);
	if (more)
		mod_delayed_work(system_unbound_wq, &kinstr_worker, 0);
}

void patch_kick_worker(unsigned long delay)
{
	mod_delayed_work(system_unbound_wq, &kinstr_worker, delay);
}

void kinstr_patch_drain(void)
{
	bool busy;

	do {
		flush_delayed_work(&kinstr_worker);
		mutex_lock(&kinstr_patch_mutex);
		/*
		 * A run queued after the flush began (the worker requeues itself, other sessions kick it)
		 * may hold areas off both lists: wait for it too.
		 */
		busy = !list_empty(&kinstr_arm_list) || !list_empty(&kinstr_free_list) || kinstr_worker_holding;
		mutex_unlock(&kinstr_patch_mutex);
		if (busy)
			patch_kick_worker(0);
	} while (busy);
}

void kinstr_area_wait_live(struct kinstr_area *a)
{
	for (;;) {
		bool live;

		mutex_lock(&kinstr_patch_mutex);
		live = a->state == AREA_LIVE;
		mutex_unlock(&kinstr_patch_mutex);
		if (live)
			return;
		patch_kick_worker(0);
		flush_delayed_work(&kinstr_worker);
	}
}

/*
 * Disarm probes idx[0, n) of an installed area (one-shot use: those already hit): their text
 * restored as a removal restores it (int3, tail, first byte; a CPU that trapped meanwhile finds
 * the int3 gone and re-runs the instruction, as kprobes handle it), then unpublished and
 * unfenced. Their slots stay until the area goes (a task may still be in one). Not for ftrace
 * probes or a code cache's entry points. *done: how many were armed and are not now.
 */
int kinstr_area_disarm(struct kinstr_area *a, const u32 *idx, u32 n, u32 *done)
{
	u32 *o, i, m = 0;

	o = kvmalloc_array(max(n, 1U), sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	mutex_lock(&kinstr_patch_mutex);
	if (a->state == AREA_NEW) {
		mutex_unlock(&kinstr_patch_mutex);
		kvfree(o);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		struct kprobe_k *p = idx[i] < a->count ? &a->probes[idx[i]] : NULL;

		if (!p || p->kind == KINSTR_PROBE_FTRACE || p->enter) {
			mutex_unlock(&kinstr_patch_mutex);
			kvfree(o);
			return -EINVAL;
		}
		if (!p->gone) {
			p->gone = true;	/* twice in idx[]: once */
			o[m++] = idx[i];
		}
	}
	for (i = 0; i < m; i++)
		a->probes[o[i]].gone = false;	/* unpatch_some() skips gone ones */
	mutex_lock(kinstr_ksyms.text_mutex);
	unpatch_some(a, o, 0, m);
	mutex_unlock(kinstr_ksyms.text_mutex);
	kinstr_fence_lock();
	for (i = 0; i < m; i++) {
		hash_del_rcu(&a->probes[o[i]].hnode);
		kinstr_fence_del(&a->probes[o[i]].fence);
		a->probes[o[i]].gone = true;
	}
	kinstr_fence_unlock();
	mutex_unlock(&kinstr_patch_mutex);
	kvfree(o);
	*done = m;
	return 0;
}

/* Restore the text now; the slots are freed by the worker after quiescence. */
void kinstr_area_remove(struct kinstr_area *a)
{
	if (a->state == AREA_NEW) {
		kinstr_area_free(a);
		return;
	}
	mutex_lock(&kinstr_patch_mutex);
	if (a->state == AREA_ARMED)
		list_del_init(&a->arm_node);	/* its jumps will not be written */
	mutex_lock(kinstr_ksyms.text_mutex);
	patch_unpatch_locked(a, a->count);
	mutex_unlock(kinstr_ksyms.text_mutex);
	patch_unregister_direct(a, a->count);
	unpublish_locked(a, a->count);
	list_del_init(&a->cache_node);
	patch_unfence_area(a);	/* after the text: a kprobe accepted now sees the original bytes */
	a->state = AREA_NEW;
	list_add_tail(&a->node, &kinstr_free_list);
	mutex_unlock(&kinstr_patch_mutex);
	patch_kick_worker(0);
}

/*
 * The install, in phases (each a refusal names the probe and the rule). With i the probe a phase
 * stopped at and v the verdict for it.
 */

/* What probe context enters here, for the hit path's closure (hitpath.c). */
size_t kinstr_patch_hit_roots(unsigned long *r)
{
	size_t n = 0;

	r[n++] = (unsigned long)kinstr_int3_notify;
	/* the kernel's int3 delivery up to kinstr_int3_notify (see hitpath.c) */
	r[n++] = kinstr_kcall(kallsyms_lookup_name)("notify_die");	/* 0: incomplete */
	return n;
}

int kinstr_patch_init(void)
{
	return register_die_notifier(&kinstr_die_nb);
}

void kinstr_patch_exit(void)
{
	/* no session is left (each held a module reference); finish what they queued */
	kinstr_patch_drain();
	unregister_die_notifier(&kinstr_die_nb);
	/* the notifier chain is RCU: no handler runs past this */
	synchronize_rcu();
}

#define HELD_MAX (1U << 20)

static void held_put(struct kinstr_held_range *buf, u32 room, u32 *n, unsigned long addr, u32 len, u32 pid, u32 kind)
{
	if (*n < room)
		buf[*n] = (struct kinstr_held_range){ .addr = addr, .len = len, .pid = pid, .kind = kind };
	(*n)++;
}

/*
 * Every published probe's patched bytes and every function a code cache runs, with who made
 * them: user space reads the live text with other sessions' patches in it, and says "held"
 * rather than decoding a splice as the kernel's code (or offering a copy the module then refuses).
 */
long kinstr_ioctl_held(void __user *uarg)
{
	struct kinstr_held_range *buf = NULL;
	struct kinstr_held h;
	struct kinstr_area *c;
	struct kprobe_k *p;
	u32 n = 0, room, i, bkt;
	long err;

	err = kinstr_get_struct(&h, sizeof(h), uarg, KINSTR_HELD_SIZE_VER0);
	if (err)
		return err;
	if (h.flags || h.__reserved)
		return -EINVAL;
	mutex_lock(&kinstr_patch_mutex);
	hash_for_each(kinstr_sites, bkt, p, hnode)
		n++;
	list_for_each_entry(c, &kinstr_cached, cache_node)
		n += c->nfns;
	/* room for what there is, not for what was asked (a huge count is no reason to allocate) */
	room = min3(h.count, HELD_MAX, n);
	if (room && !(buf = kvmalloc_array(room, sizeof(*buf), GFP_KERNEL))) {
		mutex_unlock(&kinstr_patch_mutex);
		return -ENOMEM;
	}
	n = 0;
	hash_for_each(kinstr_sites, bkt, p, hnode)
		held_put(buf, room, &n, p->site, p->displaced_len, p->tgid,
			 p->kind == KINSTR_PROBE_FTRACE ? KINSTR_HELD_FTRACE : KINSTR_HELD_PROBE);
	list_for_each_entry(c, &kinstr_cached, cache_node)
		for (i = 0; i < c->nfns; i++)
			held_put(buf, room, &n, c->fns[i].start, (u32)(c->fns[i].end - c->fns[i].start), c->tgid,
				 KINSTR_HELD_CACHE);
	mutex_unlock(&kinstr_patch_mutex);
	if (min(n, room) && copy_to_user(u64_to_user_ptr(h.ranges), buf, min(n, room) * sizeof(*buf)))
		err = -EFAULT;
	kvfree(buf);
	if (err)
		return err;
	h.count = n;
	return kinstr_put_struct(uarg, &h, sizeof(h), KINSTR_HELD_SIZE_VER0);
}
