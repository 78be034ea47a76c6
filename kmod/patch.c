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
 * unpublish; synchronize_rcu() (int3 handlers in flight) and synchronize_rcu_tasks() (tasks
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
#include "kinstr.h"
#include "abi.h"
#include "compat.h"
#include "patch.h"
#include "slot.h"
#include "bpf.h"

#define SITE_HASH_BITS 15	/* sets of up to 65,536 probes: short chains for the int3 handler */

/*
 * One patcher at a time, across sessions; also guards kinstr_sites, the worker's lists and
 * every area's state. Taken before text_mutex.
 */
static DEFINE_MUTEX(kinstr_patch_mutex);
static DEFINE_HASHTABLE(kinstr_sites, SITE_HASH_BITS);
static LIST_HEAD(kinstr_arm_list);	/* areas whose jumps wait for an rcu-tasks wait */
static LIST_HEAD(kinstr_free_list);	/* removed areas whose slots wait for quiescence */
static bool kinstr_worker_holding;	/* the worker took areas off both lists and is not done with them */
static LIST_HEAD(kinstr_cached);	/* areas whose code cache is in: their functions' ranges */
static void kinstr_worker_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(kinstr_worker, kinstr_worker_fn);
/* Let a few batches gather before a round (the kprobe optimizer waits 5 jiffies too). */
#define WORKER_DELAY 5

static struct kprobe_k *lookup_site(unsigned long site)
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
	p = lookup_site(regs->ip - 1);
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

static void unpin_modules(struct kinstr_area *a)
{
	u32 i;

	for (i = 0; i < a->count; i++) {
		module_put(a->probes[i].mod);
		a->probes[i].mod = NULL;
	}
}

/* Each BPF probe's program, referenced from the caller's fd (bpf.c checks what it may do). */
static int get_progs(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_bpf_attach *bpf,
		     struct kinstr_verdict *v, u32 *at)
{
	u32 i, reason;

	for (i = 0; i < a->count; i++) {
		if (req[i].action != KINSTR_ACTION_BPF)
			continue;
		*at = i;
		if (!bpf || bpf[i].flags) {
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = req[i].site };
			return -EINVAL;
		}
		a->probes[i].prog = kinstr_bpf_prog_get(&bpf[i], &reason);
		if (!a->probes[i].prog) {
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BPF_PROG, .addr = req[i].site,
						      .reasons = 1U << reason };
			return reason == KINSTR_BPF_R_BAD_FD ? -EBADF : reason == KINSTR_BPF_R_UNAVAILABLE ? -EOPNOTSUPP :
			       -EINVAL;
		}
		a->probes[i].cookie = bpf[i].cookie;
	}
	return 0;
}

/* The programs' references, once nothing runs them (or before anything could). */
static void put_progs(struct kinstr_area *a)
{
	u32 i;

	for (i = 0; i < a->count; i++) {
		kinstr_bpf_prog_put(a->probes[i].prog);
		a->probes[i].prog = NULL;
	}
}

void kinstr_area_free(struct kinstr_area *a)
{
	u32 i;

	kinstr_mem_add(KINSTR_MEM_AREAS, -1);
	kinstr_mem_add(KINSTR_MEM_PERCPU_BYTES, -(s64)a->percpu_bytes);
	for (i = 0; i < ARRAY_SIZE(a->hits_chunk); i++)
		free_percpu(a->hits_chunk[i]);	/* NULL: nothing */
	for (i = 0; a->chunks && i < a->nchunks; i++)
		free_percpu(a->chunks[i]);
	kvfree(a->chunks);
	kvfree(a->fns);
	kvfree(a->fn_fences);
	kinstr_limit_release(KINSTR_RES_PROBES, a->count);
	if (a->mem) {
		kinstr_text_free(a->mem);	/* resets permissions (VM_FLUSH_RESET_PERMS) */
		kinstr_mem_add(KINSTR_MEM_TEXT_BYTES, -(s64)(a->pages << PAGE_SHIFT));
	}
	kvfree(a->dsort);
	/* after quiescence (or before any patch): nothing runs in the slots or the module's sites */
	unpin_modules(a);
	put_progs(a);
	kinstr_chan_put(a->chan);
	kinstr_timers_put(a->timers);
	kvfree(a);
}

/* The code cache's counters, in chunks the per-CPU allocator can give (zeroed). */
static int alloc_cache_counters(struct kinstr_area *a, u32 ncounters)
{
	u32 i;

	a->nchunks = DIV_ROUND_UP(ncounters, KINSTR_CACHE_CHUNK);
	if (!a->nchunks)
		return 0;
	a->chunks = kvcalloc(a->nchunks, sizeof(*a->chunks), GFP_KERNEL);
	if (!a->chunks)
		return -ENOMEM;
	for (i = 0; i < a->nchunks; i++) {
		size_t sz = sizeof(u64) * min(ncounters - i * KINSTR_CACHE_CHUNK, KINSTR_CACHE_CHUNK);

		a->chunks[i] = __alloc_percpu(sz, sizeof(u64));
		if (!a->chunks[i])
			return -ENOMEM;
		a->percpu_bytes += sz;
		kinstr_mem_add(KINSTR_MEM_PERCPU_BYTES, sz);
	}
	a->ncounters = ncounters;
	return 0;
}

struct kinstr_area *kinstr_area_alloc(u32 count, u64 cache_size, u32 ncounters)
{
	struct kinstr_area *a = kvzalloc(struct_size(a, probes, count), GFP_KERNEL);
	unsigned long bytes, cache_off;
	u32 i;

	if (!a) {
		kinstr_limit_release(KINSTR_RES_PROBES, count);
		return NULL;
	}
	a->count = count;	/* from here kinstr_area_free() gives the total back */
	a->tgid = current->tgid;
	kinstr_mem_add(KINSTR_MEM_AREAS, 1);
	INIT_LIST_HEAD(&a->arm_node);
	bytes = (unsigned long)count * KINSTR_SLOT_SIZE;
	if (KINSTR_DIRECT_SHARED) {
		bytes += kinstr_dispatch_size(count);
		a->dsort = kvmalloc_array(count, sizeof(*a->dsort), GFP_KERNEL);
		if (!a->dsort) {
			kinstr_area_free(a);
			return NULL;
		}
	}
	INIT_LIST_HEAD(&a->cache_node);
	cache_off = ALIGN(bytes, 64);
	if (cache_size)
		bytes = cache_off + cache_size;
	bytes = PAGE_ALIGN(bytes);
	a->pages = bytes >> PAGE_SHIFT;
	if (alloc_cache_counters(a, ncounters)) {
		kinstr_area_free(a);
		return NULL;
	}
	a->mem = kinstr_text_alloc(bytes);
	if (a->mem)
		kinstr_mem_add(KINSTR_MEM_TEXT_BYTES, bytes);
	if (a->mem && cache_size) {
		a->cache = a->mem + cache_off;
		a->cache_size = cache_size;
	}
	for (i = 0; a->mem && i < a->count; i++) {
		u32 c = i / KINSTR_HITS_CHUNK;

		if (i % KINSTR_HITS_CHUNK == 0) {
			size_t sz = 2 * sizeof(u64) * min(count - i, KINSTR_HITS_CHUNK);

			a->hits_chunk[c] = __alloc_percpu(sz, sizeof(u64));
			if (!a->hits_chunk[c])
				break;
			a->percpu_bytes += sz;
			kinstr_mem_add(KINSTR_MEM_PERCPU_BYTES, sz);
		}
		a->probes[i].hits = a->hits_chunk[c] + 2 * (i % KINSTR_HITS_CHUNK);
	}
	if (!a->mem || i < a->count) {
		kinstr_area_free(a);
		return NULL;
	}
	return a;
}

static void poke(unsigned long addr, const void *bytes, size_t len)
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
			poke(a->probes[nth(o, i)].site, &int3, 1);
	kinstr_kcall(text_poke_sync)();
	for (i = from; i < to; i++)
		if (a->probes[nth(o, i)].kind == KINSTR_PROBE_JUMP && !a->probes[nth(o, i)].gone)
			poke(a->probes[nth(o, i)].site + 1, a->probes[nth(o, i)].orig + 1, 4);
	kinstr_kcall(text_poke_sync)();
	for (i = from; i < to; i++)
		if (a->probes[nth(o, i)].kind != KINSTR_PROBE_FTRACE && !a->probes[nth(o, i)].gone)
			poke(a->probes[nth(o, i)].site, a->probes[nth(o, i)].orig, 1);
	kinstr_kcall(text_poke_sync)();
}

/* Undo the sites of probes [0, n), the probes hit so far last. text_mutex held. */
static void unpatch_locked(struct kinstr_area *a, u32 n)
{
	u32 cold = n, *o = patch_order(a, n, false, &cold);

	lockdep_assert_held(kinstr_ksyms.text_mutex);
	unpatch_some(a, o, 0, o ? cold : n);
	unpatch_some(a, o, o ? cold : n, n);
	kvfree(o);
}

/* Take the ftrace direct calls of probes [0, n) out (ftrace patches; not under text_mutex). */
static void unregister_direct(struct kinstr_area *a, u32 n)
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

static void unpublish(struct kinstr_area *a, u32 n)
{
	mutex_lock(&kinstr_patch_mutex);
	unpublish_locked(a, n);
	mutex_unlock(&kinstr_patch_mutex);
}

/*
 * Fence the sites of probes [0, a->count) against kprobes, after checking once more, under
 * kprobe_mutex, that no kprobe came since verification. -EBUSY with *bad the probe it hit.
 */
static int fence_area(struct kinstr_area *a, u32 *bad)
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
static void unfence_area(struct kinstr_area *a)
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
static void quiesce(void)
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
		poke(p->site + 1, rel, 4);
	}
	kinstr_kcall(text_poke_sync)();
	for (i = from; i < to; i++)
		if (a->probes[nth(o, i)].kind == KINSTR_PROBE_JUMP && !a->probes[nth(o, i)].gone)
			poke(a->probes[nth(o, i)].site, &jmp, 1);
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

static void kick_worker(unsigned long delay)
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
			kick_worker(0);
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
		kick_worker(0);
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
	unpatch_locked(a, a->count);
	mutex_unlock(kinstr_ksyms.text_mutex);
	unregister_direct(a, a->count);
	unpublish_locked(a, a->count);
	list_del_init(&a->cache_node);
	unfence_area(a);	/* after the text: a kprobe accepted now sees the original bytes */
	a->state = AREA_NEW;
	list_add_tail(&a->node, &kinstr_free_list);
	mutex_unlock(&kinstr_patch_mutex);
	kick_worker(0);
}

/*
 * The install, in phases (each a refusal names the probe and the rule). With i the probe a phase
 * stopped at and v the verdict for it.
 */

/* Phase 1: a probe in a module's text holds the module: it cannot go away under the probe. */
static int pin_modules(struct kinstr_area *a, const struct kinstr_probe *req, struct kinstr_verdict *v, u32 *at)
{
	u32 i;

	for (i = 0; i < a->count; i++)
		if (kinstr_module_pin(req[i].site, &a->probes[i].mod)) {
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_RESERVED, .addr = req[i].site,
						      .reasons = 1U << KINSTR_R_MODULE_STATE };
			*at = i;
			return -EPERM;
		}
	return 0;
}

struct site_ref {
	unsigned long site, end;
	u32 i;
};

static int cmp_site_ref(const void *x, const void *y)
{
	const struct site_ref *a = x, *b = y;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * Two probes of one batch on one byte: sorted by site, some site lies below the furthest end of
 * those before it. *at is the later request of the first such pair.
 */
static int overlap_in_batch(const struct kinstr_probe *req, u32 n, struct kinstr_verdict *v, u32 *at)
{
	struct site_ref *r = kvmalloc_array(n, sizeof(*r), GFP_KERNEL);
	u32 i, far = 0;
	int err = 0;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		r[i] = (struct site_ref){ req[i].site, req[i].site + req[i].displaced_len, i };
	sort(r, n, sizeof(*r), cmp_site_ref, NULL);
	for (i = 1; i < n; i++) {
		if (r[i].site < r[far].end) {
			*at = max(r[i].i, r[far].i);
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BUSY, .addr = req[*at].site };
			err = -EBUSY;
			break;
		}
		if (r[i].end > r[far].end)
			far = i;
	}
	kvfree(r);
	return err;
}

/* Phase 2: every request verified on its own (verify.c), its action's object present, no two on one site. */
static int verify_requests(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_trace_spec *specs,
			   struct kinstr_chan *chan, struct kinstr_timers *timers, struct kinstr_verdict *v, u32 *at)
{
	u32 i;
	int err;

	for (i = 0; i < a->count; i++) {
		unsigned long slot = (unsigned long)a->mem + (unsigned long)i * KINSTR_SLOT_SIZE;

		cond_resched();	/* thousands of probes: let the rcu-tasks wait of a set before this one end */
		*at = i;
		err = kinstr_verify_probe(&req[i], slot + KINSTR_SLOT_BODY, v);
		if (!err && req[i].action == KINSTR_ACTION_TRACE &&
		    (!specs || !chan || !kinstr_trace_spec_len(&specs[i]))) {
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = req[i].site };
			err = !chan ? -ENODEV : -EINVAL;
		}
		if (!err && (req[i].action == KINSTR_ACTION_TIMER_START || req[i].action == KINSTR_ACTION_TIMER_STOP) && req[i].arg >= kinstr_timers_count(timers)) {
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = req[i].site };
			err = !timers ? -ENODEV : -EINVAL;
		}
		if (err)
			return err;
	}
	return overlap_in_batch(req, a->count, v, at);
}

/* Is [lo, hi) inside a function some code cache runs (its own area's included)? */
static bool in_cached_locked(struct kinstr_area *a, unsigned long lo, unsigned long hi)
{
	struct kinstr_area *c;
	u32 i;

	for (i = 0; i < a->nfns; i++)
		if (lo < a->fns[i].end && hi > a->fns[i].start)
			return true;
	list_for_each_entry(c, &kinstr_cached, cache_node)
		for (i = 0; i < c->nfns; i++)
			if (lo < c->fns[i].end && hi > c->fns[i].start)
				return true;
	return false;
}

/*
 * Phase 3: another probe of ours on one of these bytes: never stack two splices. Nor a probe in
 * a function a code cache runs (its original is not run there), nor a cache over a probe.
 */
static int check_stacking_locked(struct kinstr_area *a, const struct kinstr_probe *req, struct kinstr_verdict *v,
				 u32 *at)
{
	u32 i, j;

	lockdep_assert_held(&kinstr_patch_mutex);
	for (i = 0; i < a->count; i++)
		if (req[i].action != KINSTR_ACTION_ENTER &&
		    in_cached_locked(a, req[i].site, req[i].site + req[i].displaced_len)) {
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BUSY, .addr = req[i].site };
			*at = i;
			return -EBUSY;
		}
	for (i = 0; i < a->nfns; i++) {
		unsigned long b;

		for (b = a->fns[i].start - KINSTR_MAX_DISPLACED + 1; b < a->fns[i].end; b++) {
			struct kprobe_k *o = lookup_site(b);

			if (o && b + o->displaced_len > a->fns[i].start && o->kind != KINSTR_PROBE_FTRACE) {
				*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BUSY, .addr = b };
				*at = 0;
				return -EBUSY;
			}
		}
	}
	for (i = 0; i < a->count; i++)
		for (j = 0; j < req[i].displaced_len + KINSTR_MAX_DISPLACED; j++) {
			unsigned long site = req[i].site + req[i].displaced_len - 1 - j;
			struct kprobe_k *o = lookup_site(site);

			if (o && site + o->displaced_len > req[i].site) {
				*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BUSY, .addr = req[i].site };
				*at = i;
				return -EBUSY;
			}
		}
	return 0;
}

static int cmp_dispatch(const void *x, const void *y)
{
	const struct kinstr_dispatch_entry *a = x, *b = y;

	return a->ret < b->ret ? -1 : a->ret > b->ret;
}

/* Where KINSTR_DIRECT_SHARED: the dispatcher after the slots, before the area is sealed. */
static void write_dispatch(struct kinstr_area *a)
{
	u32 i;

	a->nftrace = 0;
	for (i = 0; i < a->count; i++)
		if (a->probes[i].kind == KINSTR_PROBE_FTRACE)
			a->dsort[a->nftrace++] = (struct kinstr_dispatch_entry){
				.ret = a->probes[i].site + 5, .slot = a->probes[i].slot };
	if (!a->nftrace)
		return;
	sort(a->dsort, a->nftrace, sizeof(*a->dsort), cmp_dispatch, NULL);
	a->dispatch = a->mem + (unsigned long)a->count * KINSTR_SLOT_SIZE;
	kinstr_dispatch_write(a->dispatch, a->dsort, a->nftrace);
}

/* Phase 4: every slot written, the area read-only and executable, the probes published for the int3 handler. */
static void write_publish_locked(struct kinstr_area *a, const struct kinstr_probe *req,
				 const struct kinstr_trace_spec *specs, struct kinstr_chan *chan,
				 struct kinstr_timers *timers, const struct kinstr_cache_check *cc)
{
	u32 i;

	lockdep_assert_held(&kinstr_patch_mutex);
	if (cc) {
		/* the image as checked: its counters' addresses are this area's */
		memcpy(a->cache, cc->bytes, cc->len);
		list_add_tail(&a->cache_node, &kinstr_cached);
	}
	for (i = 0; i < a->count; i++) {
		struct kprobe_k *p = &a->probes[i];

		p->site = req[i].site;
		p->kind = req[i].kind;
		p->displaced_len = req[i].displaced_len;
		memcpy(p->orig, req[i].expected, KINSTR_MAX_DISPLACED);
		p->slot = a->mem + (unsigned long)i * KINSTR_SLOT_SIZE;
		if (req[i].action == KINSTR_ACTION_ENTER) {
			p->enter = true;
			p->slot = a->cache + req[i].arg;	/* no slot: straight into the copy */
			continue;
		}
		if (req[i].action == KINSTR_ACTION_TRACE) {
			p->spec = specs[i];
			p->rec_len = kinstr_trace_spec_len(&specs[i]);
			p->chan = chan;
			if (!a->chan) {
				a->chan = chan;
				kinstr_chan_get(a->chan);
			}
		}
		if (req[i].action == KINSTR_ACTION_TIMER_START || req[i].action == KINSTR_ACTION_TIMER_STOP) {
			p->timers = timers;
			p->timer = req[i].arg;
			if (!a->timers) {
				a->timers = timers;
				kinstr_timers_get(a->timers);
			}
		}
		kinstr_slot_write(p->slot, &req[i], p);
	}
	if (KINSTR_DIRECT_SHARED)
		write_dispatch(a);
	kinstr_text_seal(a->mem, a->pages);
	for (i = 0; i < a->count; i++) {
		a->probes[i].tgid = a->tgid;
		hash_add_rcu(kinstr_sites, &a->probes[i].hnode, a->probes[i].site);
	}
}

/*
 * Phase 6: an int3 on every site but ftrace's, after a last look under text_mutex that nobody
 * else patched these bytes since verification; then one sync of every core.
 */
static int arm_sites_locked(struct kinstr_area *a, const struct kinstr_probe *req, struct kinstr_verdict *v, u32 *at)
{
	const u8 int3 = KINSTR_INT3;
	u32 i;

	lockdep_assert_held(kinstr_ksyms.text_mutex);
	for (i = 0; i < a->count; i++) {
		u8 live[KINSTR_MAX_DISPLACED];

		if (req[i].kind == KINSTR_PROBE_FTRACE)
			continue;	/* ftrace's text: registered in phase 7 */
		if (copy_from_kernel_nofault(live, (void *)req[i].site, req[i].displaced_len) ||
		    memcmp(live, req[i].expected, req[i].displaced_len)) {
			unpatch_locked(a, i);
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BYTES_DIFFER, .addr = req[i].site };
			*at = i;
			return -ESTALE;
		}
		poke(req[i].site, &int3, 1);
	}
	kinstr_kcall(text_poke_sync)();
	return 0;
}

/* Refuse an ftrace probe of a as v says for err from ftrace; -errno for the caller. */
static int direct_refused(struct kinstr_area *a, u32 i, int err, struct kinstr_verdict *v, u32 *at)
{
	*v = (struct kinstr_verdict){ .refusal = err == -EBUSY ? KINSTR_REFUSE_BUSY : KINSTR_REFUSE_RESERVED,
				      .addr = a->probes[i].site, .reasons = err == -EBUSY ? 0 : 1U << KINSTR_R_FTRACE };
	*at = i;
	return err == -EBUSY ? err : -EPERM;
}

/* KINSTR_DIRECT_SHARED: every ftrace probe of a in one ftrace_ops, calling the dispatcher. */
static int register_shared(struct kinstr_area *a, struct kinstr_verdict *v, u32 *at)
{
	unsigned long *ips;
	u32 i, n = 0, first = a->count;
	int err;

	if (!a->nftrace)
		return 0;
	ips = kvmalloc_array(a->nftrace, sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	for (i = 0; i < a->count; i++)
		if (a->probes[i].kind == KINSTR_PROBE_FTRACE) {
			if (!kinstr_dispatch_reaches(a->probes[i].site + 5)) {	/* text is in the top 2 GiB */
				kvfree(ips);
				*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = a->probes[i].site };
				*at = i;
				return -EINVAL;
			}
			first = min(first, i);
			ips[n++] = a->probes[i].site;
		}
	err = kinstr_direct_add_ips(&a->direct, ips, n, (unsigned long)a->dispatch);
	kvfree(ips);
	/* ftrace does not say which site it refused: the first stands for all */
	return err ? direct_refused(a, first, err, v, at) : 0;
}

/* Phase 7: ftrace patches each ftrace probe's call in (text_poke_bp) and checks the site is its own. */
static int register_directs(struct kinstr_area *a, struct kinstr_verdict *v, u32 *at)
{
	u32 i;
	int err;

	if (KINSTR_DIRECT_SHARED)
		return register_shared(a, v, at);
	for (i = 0; i < a->count; i++) {
		struct kprobe_k *p = &a->probes[i];

		if (p->kind != KINSTR_PROBE_FTRACE)
			continue;
		err = kinstr_direct_add(&p->direct, p->site, (unsigned long)p->slot);
		if (err) {
			unregister_direct(a, i);
			return direct_refused(a, i, err, v, at);
		}
	}
	return 0;
}

/* Undo phases 4 and 5 after a later one failed: unpublished, unfenced, nothing in flight. */
static void unpublish_unfence(struct kinstr_area *a)
{
	unpublish(a, a->count);
	mutex_lock(&kinstr_patch_mutex);
	list_del_init(&a->cache_node);
	mutex_unlock(&kinstr_patch_mutex);
	unfence_area(a);
	quiesce();
}

/* Phase 2b: the code cache, proven against the live text, and the ranges of its functions. */
static int check_cache(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_cache_check *cc,
		       struct kinstr_verdict *v, u32 *at)
{
	u32 i, enters = 0;
	int err, n;

	for (i = 0; i < a->count; i++)
		enters += req[i].action == KINSTR_ACTION_ENTER;
	kvfree(a->fns);		/* from a refused or verify-only install before */
	kvfree(a->fn_fences);
	a->fns = NULL;
	a->fn_fences = NULL;
	a->nfns = 0;
	if (!cc && !enters)
		return 0;
	if (!cc || !a->cache || cc->len > a->cache_size || !enters) {
		*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = 0 };
		*at = 0;
		return -EINVAL;
	}
	err = kinstr_cache_check(cc, req, a->count, v, at);
	if (err)
		return err;
	n = kinstr_cache_functions(cc, NULL);
	a->fns = kvcalloc(n, sizeof(*a->fns), GFP_KERNEL);
	a->fn_fences = kvcalloc(n, sizeof(*a->fn_fences), GFP_KERNEL);
	if (!a->fns || !a->fn_fences)
		return -ENOMEM;
	a->nfns = kinstr_cache_functions(cc, a->fns);
	return 0;
}

void kinstr_area_cache_counts(struct kinstr_area *a, u32 first, u32 n, u64 *out)
{
	u32 i;
	int cpu;

	for (i = 0; i < n; i++) {
		u32 c = first + i;
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(a->chunks[c / KINSTR_CACHE_CHUNK], cpu)[c % KINSTR_CACHE_CHUNK];
		out[i] = sum;
	}
}

int kinstr_area_install(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_trace_spec *specs,
			struct kinstr_chan *chan, struct kinstr_timers *timers, const struct kinstr_cache_check *cc,
			const struct kinstr_bpf_attach *bpf, struct kinstr_install *in)
{
	struct kinstr_verdict v = { 0 };
	bool jumps = false;
	u32 i = 0;
	int err;

	err = pin_modules(a, req, &v, &i);
	if (!err)
		err = get_progs(a, req, bpf, &v, &i);
	if (!err)
		err = verify_requests(a, req, specs, chan, timers, &v, &i);
	if (!err)
		err = check_cache(a, req, cc, &v, &i);
	if (err)
		goto refused;
	mutex_lock(&kinstr_patch_mutex);
	err = check_stacking_locked(a, req, &v, &i);
	if (err || (in->flags & KINSTR_INSTALL_F_VERIFY_ONLY)) {
		mutex_unlock(&kinstr_patch_mutex);
		if (err)
			goto refused;
		unpin_modules(a);
		put_progs(a);
		return 0;
	}
	write_publish_locked(a, req, specs, chan, timers, cc);
	mutex_unlock(&kinstr_patch_mutex);

	/* phase 5, before the first byte changes: from here kprobes refuse these bytes */
	err = fence_area(a, &i);
	if (err) {
		unpublish(a, a->count);
		quiesce();
		v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_RESERVED, .addr = req[i].site,
					     .reasons = 1U << KINSTR_R_KPROBE };
		err = -EPERM;
		goto refused;
	}
	mutex_lock(kinstr_ksyms.text_mutex);
	err = arm_sites_locked(a, req, &v, &i);
	mutex_unlock(kinstr_ksyms.text_mutex);
	if (err) {
		unpublish_unfence(a);
		goto refused;
	}
	err = register_directs(a, &v, &i);
	if (err) {
		mutex_lock(kinstr_ksyms.text_mutex);
		unpatch_locked(a, a->count);
		mutex_unlock(kinstr_ksyms.text_mutex);
		unpublish_unfence(a);
		goto refused;
	}

	/* phase 8: no task may be preempted inside a range a jmp will cover, so the worker waits first */
	for (i = 0; i < a->count; i++)
		jumps |= a->probes[i].kind == KINSTR_PROBE_JUMP;
	mutex_lock(&kinstr_patch_mutex);
	if (jumps) {
		a->state = AREA_ARMED;
		list_add_tail(&a->arm_node, &kinstr_arm_list);
	} else {
		a->state = AREA_LIVE;
	}
	mutex_unlock(&kinstr_patch_mutex);
	if (jumps)
		kick_worker(WORKER_DELAY);
	return 0;

refused:
	unpin_modules(a);
	put_progs(a);
	in->refused_index = i;
	in->refusal = v.refusal;
	in->refusal_reasons = v.reasons;
	in->refusal_offset = v.offset;
	in->refusal_addr = v.addr;
	return err;
}

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
