// SPDX-License-Identifier: GPL-2.0
/*
 * Probes: areas of slots in patch space, the patching protocol, the int3 handler, and the
 * lifetime rules (everything a file descriptor installed goes away when it closes).
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
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <asm/text-patching.h>

#include <uapi/linux/kinstr.h>
#include "kinstr.h"
#include "abi.h"
#include "hit.h"

#define INT3 0xcc
#define JMP32 0xe9
#define SITE_HASH_BITS 12

enum area_state {
	AREA_NEW,		/* slots reserved, nothing patched */
	AREA_ARMED,		/* int3 on every site; jumps wait for the worker */
	AREA_LIVE,		/* every jump in place */
};

struct kinstr_area {
	struct list_head node;		/* in the session; then in kinstr_free_list */
	struct list_head arm_node;	/* in kinstr_arm_list while AREA_ARMED */
	u32 id, count;
	enum area_state state;		/* under kinstr_patch_mutex */
	u8 *mem;			/* module_alloc'ed slots */
	struct kinstr_chan *chan;	/* held while any probe may trace into it */
	struct kinstr_timers *timers;	/* held while any probe may time into it */
	unsigned long pages;
	struct kprobe_k probes[];
};

struct kinstr_session {
	struct mutex lock;
	struct list_head areas;
	u32 next_id;
	struct kinstr_chan *chan;	/* KINSTR_IOC_TRACE_CREATE */
	struct kinstr_timers *timers;	/* KINSTR_IOC_TIMERS_CREATE */
	u64 probes;			/* slots of its areas, against the limits */
};

/*
 * One patcher at a time, across sessions; also guards kinstr_sites, the worker's lists and
 * every area's state. Taken before text_mutex.
 */
static DEFINE_MUTEX(kinstr_patch_mutex);
static DEFINE_HASHTABLE(kinstr_sites, SITE_HASH_BITS);
static LIST_HEAD(kinstr_arm_list);	/* areas whose jumps wait for an rcu-tasks wait */
static LIST_HEAD(kinstr_free_list);	/* removed areas whose slots wait for quiescence */
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

/* ---- slots ------------------------------------------------------------------------------- */

static void put_rel32(u8 *at, unsigned long insn_end, unsigned long target)
{
	s32 rel = (s32)(target - insn_end);

	memcpy(at, &rel, 4);
}

/*
 * Prologue, fast path, where the flags are provably dead at the site: an inline per-CPU
 * increment that calls nothing and saves one register, written at b.
 *   push %rax; movabs $hits, %rax; incq %gs:(%rax); pop %rax; jmp body
 */
static void write_inline_count(u8 *slot, u8 *b, struct kprobe_k *p)
{
	unsigned long s = (unsigned long)slot, hits = (unsigned long)p->hits;

	*b++ = 0x50;
	*b++ = 0x48;
	*b++ = 0xb8;
	memcpy(b, &hits, 8);
	b += 8;
	memcpy(b, "\x65\x48\xff\x00", 4);	/* the per-CPU counter: %gs-relative, like this_cpu_inc() */
	b += 4;
	*b++ = 0x58;
	*b = JMP32;
	put_rel32(b + 1, (unsigned long)b + 5, s + KINSTR_SLOT_BODY);
}

/*
 * Prologue: the inline counter where the flags are dead, else push the probe pointer kept in
 * the slot, call the stub (which saves the registers, and the flags unless they are dead), drop
 * the pointer, go to the body. An ftrace probe's slot first drops the return address of
 * ftrace's call: from there on the stack is the function's at its entry, as under a jump probe,
 * so the trace stub's pt_regs (its sp above all) and the timers see the same frame either way.
 */
static void write_slot(u8 *slot, const struct kinstr_probe *req, struct kprobe_k *p)
{
	u8 *b = slot;
	bool flags_dead;

	memset(slot, INT3, KINSTR_SLOT_SIZE);
	if (req->kind == KINSTR_PROBE_FTRACE) {
		/* lea 8(%rsp), %rsp: the flags are the caller's, so leave them alone here too */
		memcpy(b, "\x48\x8d\x64\x24\x08", 5);
		b += 5;
	}
	flags_dead = kinstr_flags_dead_at(req->site) || kinstr_flags_dead_by_abi(req->site);
	p->inline_count = req->action == KINSTR_ACTION_COUNT && flags_dead;
	if (p->inline_count) {
		write_inline_count(slot, b, p);
		goto body;
	}
	/* ff 35 disp32: push qword [rip + disp32] -> the pointer at slot + 56 */
	*b++ = 0xff;
	*b++ = 0x35;
	put_rel32(b, (unsigned long)b + 4, (unsigned long)slot + 56);
	b += 4;
	*b++ = 0xe8;	/* call kinstr_trace_stub or kinstr_entry_stub[_nf] */
	put_rel32(b, (unsigned long)b + 4, (unsigned long)(req->action == KINSTR_ACTION_TRACE ? kinstr_trace_stub :
							    flags_dead ? kinstr_entry_stub_nf : kinstr_entry_stub));
	b += 4;
	/* lea 8(%rsp), %rsp: drop the pointer without touching the flags */
	memcpy(b, "\x48\x8d\x64\x24\x08", 5);
	b += 5;
	*b = JMP32;
	put_rel32(b + 1, (unsigned long)b + 5, (unsigned long)slot + KINSTR_SLOT_BODY);
	BUILD_BUG_ON(5 + 21 > 56);	/* the longest prologue stays below the pointer */
	memcpy(slot + 56, &p, sizeof(p));
body:
	/* an ftrace probe's body is empty: on at site + 5, after the NOP */
	memcpy(slot + KINSTR_SLOT_BODY, req->body, req->body_len);
	b = slot + KINSTR_SLOT_BODY + req->body_len;
	*b = JMP32;
	put_rel32(b + 1, (unsigned long)b + 5, req->site + req->displaced_len);
}

static void unpin_modules(struct kinstr_area *a)
{
	u32 i;

	for (i = 0; i < a->count; i++) {
		module_put(a->probes[i].mod);
		a->probes[i].mod = NULL;
	}
}

static void free_area(struct kinstr_area *a)
{
	u32 i;

	for (i = 0; i < a->count; i++)
		free_percpu(a->probes[i].hits);
	kinstr_limit_release(KINSTR_RES_PROBES, a->count);
	if (a->mem)
		kinstr_ksyms.module_memfree(a->mem);	/* resets permissions (VM_FLUSH_RESET_PERMS) */
	/* after quiescence (or before any patch): nothing runs in the slots or the module's sites */
	unpin_modules(a);
	kinstr_chan_put(a->chan);
	kinstr_timers_put(a->timers);
	kvfree(a);
}

static struct kinstr_area *find_area(struct kinstr_session *s, u32 id)
{
	struct kinstr_area *a;

	list_for_each_entry(a, &s->areas, node)
		if (a->id == id)
			return a;
	return NULL;
}

/* ---- patching ------------------------------------------------------------------------------ */

static void poke(unsigned long addr, const void *bytes, size_t len)
{
	kinstr_ksyms.text_poke((void *)addr, bytes, len);
}

/* Undo the sites of probes [0, n): int3 first, then the tail, then byte 0. text_mutex held. */
static void unpatch_locked(struct kinstr_area *a, u32 n)
{
	const u8 int3 = INT3;
	u32 i;

	for (i = 0; i < n; i++)
		if (a->probes[i].kind == KINSTR_PROBE_JUMP)
			poke(a->probes[i].site, &int3, 1);
	kinstr_ksyms.text_poke_sync();
	for (i = 0; i < n; i++)
		if (a->probes[i].kind == KINSTR_PROBE_JUMP)
			poke(a->probes[i].site + 1, a->probes[i].orig + 1, 4);
	kinstr_ksyms.text_poke_sync();
	for (i = 0; i < n; i++)
		if (a->probes[i].kind != KINSTR_PROBE_FTRACE)
			poke(a->probes[i].site, a->probes[i].orig, 1);
	kinstr_ksyms.text_poke_sync();
}

/* Take the ftrace direct calls of probes [0, n) out (ftrace patches; not under text_mutex). */
static void unregister_direct(struct kinstr_area *a, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (a->probes[i].kind == KINSTR_PROBE_FTRACE && a->probes[i].direct) {
			unregister_ftrace_direct(a->probes[i].site, (unsigned long)a->probes[i].slot);
			a->probes[i].direct = false;
		}
}

static void unpublish_locked(struct kinstr_area *a, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
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
	kinstr_fence_unlock();
}

/* Both quiescence waits, once for a whole batch. */
static void quiesce(void)
{
	synchronize_rcu();		/* int3 handlers that may still see the probes */
	synchronize_rcu_tasks();	/* tasks preempted inside a slot or a displaced range */
}

/* Write the jmp of every jump probe of a; its int3s went in before an rcu-tasks wait. */
static void complete_jumps_locked(struct kinstr_area *a)
{
	const u8 jmp = JMP32;
	u32 i;

	for (i = 0; i < a->count; i++) {
		struct kprobe_k *p = &a->probes[i];
		u8 rel[4];

		if (p->kind != KINSTR_PROBE_JUMP)
			continue;
		put_rel32(rel, p->site + 5, (unsigned long)p->slot);
		poke(p->site + 1, rel, 4);
	}
	kinstr_ksyms.text_poke_sync();
	for (i = 0; i < a->count; i++)
		if (a->probes[i].kind == KINSTR_PROBE_JUMP)
			poke(a->probes[i].site, &jmp, 1);
	kinstr_ksyms.text_poke_sync();
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
		free_area(a);
	}
	if (more)
		mod_delayed_work(system_unbound_wq, &kinstr_worker, 0);
}

static void kick_worker(unsigned long delay)
{
	mod_delayed_work(system_unbound_wq, &kinstr_worker, delay);
}

/* Until the worker has no work left: every queued jump is in, every removed slot freed. */
static void kinstr_worker_drain(void)
{
	bool busy;

	do {
		flush_delayed_work(&kinstr_worker);
		mutex_lock(&kinstr_patch_mutex);
		busy = !list_empty(&kinstr_arm_list) || !list_empty(&kinstr_free_list);
		mutex_unlock(&kinstr_patch_mutex);
		if (busy)
			kick_worker(0);
	} while (busy);
}

/* Until a's jumps are in (the caller holds the session lock: a cannot go away). */
static void wait_live(struct kinstr_area *a)
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

/* Restore the text now; the slots are freed by the worker after quiescence. */
static int area_remove(struct kinstr_session *s, struct kinstr_area *a)
{
	list_del(&a->node);
	kinstr_limit_release_fd(&s->probes, a->count);
	if (a->state == AREA_NEW) {
		free_area(a);
		return 0;
	}
	mutex_lock(&kinstr_patch_mutex);
	if (a->state == AREA_ARMED)
		list_del_init(&a->arm_node);	/* its jumps will not be written */
	mutex_lock(kinstr_ksyms.text_mutex);
	unpatch_locked(a, a->count);
	mutex_unlock(kinstr_ksyms.text_mutex);
	unregister_direct(a, a->count);
	unpublish_locked(a, a->count);
	unfence_area(a);	/* after the text: a kprobe accepted now sees the original bytes */
	a->state = AREA_NEW;
	list_add_tail(&a->node, &kinstr_free_list);
	mutex_unlock(&kinstr_patch_mutex);
	kick_worker(0);
	return 0;
}

static bool locked_down(void)
{
	return security_locked_down(LOCKDOWN_DBG_WRITE_KERNEL) ||
	       security_locked_down(LOCKDOWN_KPROBES);
}

static int area_install(struct kinstr_session *s, struct kinstr_area *a, const struct kinstr_probe *req,
			const struct kinstr_trace_spec *specs, struct kinstr_install *in)
{
	struct kinstr_verdict v;
	const u8 int3 = INT3;
	bool jumps = false;
	u32 i, j;
	int err;

	INIT_LIST_HEAD(&a->arm_node);
	/* a probe in a module's text holds the module: it cannot go away under the probe */
	for (i = 0; i < a->count; i++)
		if (kinstr_module_pin(req[i].site, &a->probes[i].mod)) {
			v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_RESERVED, .addr = req[i].site,
						     .reasons = 1U << KINSTR_R_MODULE_STATE };
			err = -EPERM;
			goto refused;
		}
	for (i = 0; i < a->count; i++) {
		unsigned long slot = (unsigned long)a->mem + (unsigned long)i * KINSTR_SLOT_SIZE;

		cond_resched();	/* thousands of probes: let the rcu-tasks wait of a set before this one end */
		err = kinstr_verify_probe(&req[i], slot + KINSTR_SLOT_BODY, &v);
		if (!err && req[i].action == KINSTR_ACTION_TRACE &&
		    (!specs || !s->chan || !kinstr_trace_spec_len(&specs[i]))) {
			v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = req[i].site };
			err = !s->chan ? -ENODEV : -EINVAL;
		}
		if (!err && req[i].action >= KINSTR_ACTION_TIMER_START &&
		    req[i].arg >= kinstr_timers_count(s->timers)) {
			v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = req[i].site };
			err = !s->timers ? -ENODEV : -EINVAL;
		}
		for (j = 0; !err && j < i; j++)	/* two probes of one batch on one site */
			if (req[j].site < req[i].site + req[i].displaced_len &&
			    req[i].site < req[j].site + req[j].displaced_len) {
				v.refusal = KINSTR_REFUSE_BUSY;
				v.addr = req[i].site;
				err = -EBUSY;
			}
		if (err)
			goto refused;
	}

	mutex_lock(&kinstr_patch_mutex);
	for (i = 0; i < a->count; i++) {
		/* another probe on one of these bytes: never stack two splices */
		for (j = 0; j < req[i].displaced_len + KINSTR_MAX_DISPLACED; j++) {
			unsigned long at = req[i].site + req[i].displaced_len - 1 - j;
			struct kprobe_k *o = lookup_site(at);

			if (o && at + o->displaced_len > req[i].site) {
				mutex_unlock(&kinstr_patch_mutex);
				v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BUSY, .addr = req[i].site };
				err = -EBUSY;
				goto refused;
			}
		}
	}
	if (in->flags & KINSTR_INSTALL_F_VERIFY_ONLY) {
		mutex_unlock(&kinstr_patch_mutex);
		unpin_modules(a);
		return 0;
	}
	for (i = 0; i < a->count; i++) {
		struct kprobe_k *p = &a->probes[i];

		p->site = req[i].site;
		p->kind = req[i].kind;
		p->displaced_len = req[i].displaced_len;
		memcpy(p->orig, req[i].expected, KINSTR_MAX_DISPLACED);
		p->slot = a->mem + (unsigned long)i * KINSTR_SLOT_SIZE;
		if (req[i].action == KINSTR_ACTION_TRACE) {
			p->spec = specs[i];
			p->rec_len = kinstr_trace_spec_len(&specs[i]);
			p->chan = s->chan;
			if (!a->chan) {
				a->chan = s->chan;
				kinstr_chan_get(a->chan);
			}
		}
		if (req[i].action >= KINSTR_ACTION_TIMER_START) {
			p->timers = s->timers;
			p->timer = req[i].arg;
			p->timer_start = req[i].action == KINSTR_ACTION_TIMER_START;
			if (!a->timers) {
				a->timers = s->timers;
				kinstr_timers_get(a->timers);
			}
		}
		write_slot(p->slot, &req[i], p);
		jumps |= p->kind == KINSTR_PROBE_JUMP;
	}
	kinstr_ksyms.set_memory_ro((unsigned long)a->mem, a->pages);
	kinstr_ksyms.set_memory_x((unsigned long)a->mem, a->pages);
	for (i = 0; i < a->count; i++)
		hash_add_rcu(kinstr_sites, &a->probes[i].hnode, a->probes[i].site);
	mutex_unlock(&kinstr_patch_mutex);

	/* before the first byte changes: from here kprobes refuse these bytes */
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
	for (i = 0; i < a->count; i++) {
		u8 live[KINSTR_MAX_DISPLACED];

		if (req[i].kind == KINSTR_PROBE_FTRACE)
			continue;	/* ftrace's text: registered below */
		/* last look, under text_mutex: nobody else patched these bytes since verification */
		if (copy_from_kernel_nofault(live, (void *)req[i].site, req[i].displaced_len) ||
		    memcmp(live, req[i].expected, req[i].displaced_len)) {
			unpatch_locked(a, i);
			mutex_unlock(kinstr_ksyms.text_mutex);
			unpublish(a, a->count);
			unfence_area(a);
			quiesce();
			v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BYTES_DIFFER, .addr = req[i].site };
			err = -ESTALE;
			goto refused;
		}
		poke(req[i].site, &int3, 1);
	}
	kinstr_ksyms.text_poke_sync();
	mutex_unlock(kinstr_ksyms.text_mutex);

	for (i = 0; i < a->count; i++) {
		struct kprobe_k *p = &a->probes[i];

		if (p->kind != KINSTR_PROBE_FTRACE)
			continue;
		/* ftrace patches the call in (text_poke_bp) and checks the site is its own */
		err = register_ftrace_direct(p->site, (unsigned long)p->slot);
		if (err) {
			unregister_direct(a, i);
			mutex_lock(kinstr_ksyms.text_mutex);
			unpatch_locked(a, a->count);
			mutex_unlock(kinstr_ksyms.text_mutex);
			unpublish(a, a->count);
			unfence_area(a);
			quiesce();
			v = (struct kinstr_verdict){ .refusal = err == -EBUSY ? KINSTR_REFUSE_BUSY :
						     KINSTR_REFUSE_RESERVED, .addr = p->site,
						     .reasons = err == -EBUSY ? 0 : 1U << KINSTR_R_FTRACE };
			if (err != -EBUSY)
				err = -EPERM;
			goto refused;
		}
		p->direct = true;
	}

	mutex_lock(&kinstr_patch_mutex);
	if (jumps) {
		/* no task may be preempted inside a range the jmp will cover: the worker waits */
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
	in->refused_index = i;
	in->refusal = v.refusal;
	in->refusal_reasons = v.reasons;
	in->refusal_offset = v.offset;
	in->refusal_addr = v.addr;
	return err;
}

/* ---- ioctls -------------------------------------------------------------------------------------- */

static long ioctl_alloc(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_alloc al;
	struct kinstr_area *a;
	unsigned long bytes;
	u32 i;
	int err;

	err = kinstr_get_struct(&al, sizeof(al), uarg, KINSTR_ALLOC_SIZE_VER0);
	if (err)
		return err;
	if (!al.count || al.count > KINSTR_AREA_MAX_PROBES || al.__reserved || al.area || al.addr)
		return -EINVAL;
	if (!kinstr_ksyms_can_patch())
		return -EOPNOTSUPP;
	if (locked_down())
		return -EPERM;
	err = kinstr_limit_charge(KINSTR_RES_PROBES, &s->probes, al.count);
	if (err)
		return err;
	a = kvzalloc(struct_size(a, probes, al.count), GFP_KERNEL);
	if (!a) {
		kinstr_limit_release_fd(&s->probes, al.count);
		kinstr_limit_release(KINSTR_RES_PROBES, al.count);
		return -ENOMEM;
	}
	a->count = al.count;	/* from here free_area() gives the total back */
	bytes = PAGE_ALIGN((unsigned long)al.count * KINSTR_SLOT_SIZE);
	a->pages = bytes >> PAGE_SHIFT;
	a->mem = kinstr_ksyms.module_alloc(bytes);
	for (i = 0; a->mem && i < a->count; i++) {
		a->probes[i].hits = __alloc_percpu(2 * sizeof(u64), sizeof(u64));
		if (!a->probes[i].hits)
			break;
	}
	if (!a->mem || i < a->count) {
		kinstr_limit_release_fd(&s->probes, al.count);
		free_area(a);
		return -ENOMEM;
	}
	a->id = ++s->next_id;
	list_add_tail(&a->node, &s->areas);
	al.area = a->id;
	al.addr = (unsigned long)a->mem;
	err = kinstr_put_struct(uarg, &al, sizeof(al), KINSTR_ALLOC_SIZE_VER0);
	if (err) {
		area_remove(s, a);
		return err;
	}
	return 0;
}

static long ioctl_install(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_install in;
	struct kinstr_trace_spec *specs = NULL;
	struct kinstr_probe *req;
	struct kinstr_area *a;
	long err;

	err = kinstr_get_struct(&in, sizeof(in), uarg, KINSTR_INSTALL_SIZE_VER0);
	if (err)
		return err;
	if ((in.flags & ~(KINSTR_INSTALL_F_WAIT | KINSTR_INSTALL_F_VERIFY_ONLY)) || in.refused_index || in.refusal || in.refusal_reasons || in.refusal_offset ||
	    in.refusal_addr)
		return -EINVAL;
	a = find_area(s, in.area);
	if (!a)
		return -ENOENT;
	if (a->state != AREA_NEW)
		return -EALREADY;
	if (in.count != a->count)
		return -EINVAL;
	if (locked_down()) {
		in.refusal = KINSTR_REFUSE_LOCKDOWN;
		err = -EPERM;
		goto out;
	}
	req = kvmalloc_array(in.count, sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	if (in.specs) {
		specs = kvmalloc_array(in.count, sizeof(*specs), GFP_KERNEL);
		if (!specs) {
			kvfree(req);
			return -ENOMEM;
		}
	}
	if (copy_from_user(req, u64_to_user_ptr(in.probes), (size_t)in.count * sizeof(*req)) ||
	    (specs && copy_from_user(specs, u64_to_user_ptr(in.specs), (size_t)in.count * sizeof(*specs))))
		err = -EFAULT;
	else
		err = area_install(s, a, req, specs, &in);
	kvfree(specs);
	kvfree(req);
	if (!err && (in.flags & KINSTR_INSTALL_F_WAIT) && !(in.flags & KINSTR_INSTALL_F_VERIFY_ONLY))
		wait_live(a);
out:
	if (err && in.refusal) {
		long perr = kinstr_put_struct(uarg, &in, sizeof(in), KINSTR_INSTALL_SIZE_VER0);

		if (perr)
			return perr;
	}
	return err;
}

static long ioctl_remove(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_remove rm;
	struct kinstr_area *a;
	int err;

	err = kinstr_get_struct(&rm, sizeof(rm), uarg, KINSTR_REMOVE_SIZE_VER0);
	if (err)
		return err;
	a = find_area(s, rm.area);
	if (!a)
		return -ENOENT;
	return area_remove(s, a);
}

static long ioctl_counts(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_counts c;
	struct kinstr_area *a;
	u32 i;
	int cpu, err;

	err = kinstr_get_struct(&c, sizeof(c), uarg, KINSTR_COUNTS_SIZE_VER0);
	if (err)
		return err;
	a = find_area(s, c.area);
	if (!a)
		return -ENOENT;
	if (c.count > a->count || c.__reserved)
		return -EINVAL;
	for (i = 0; i < c.count; i++) {
		u64 sum = 0, missed = 0;

		for_each_possible_cpu(cpu) {
			sum += per_cpu_ptr(a->probes[i].hits, cpu)[0];
			missed += per_cpu_ptr(a->probes[i].hits, cpu)[1];
		}
		if (put_user(sum, (u64 __user *)u64_to_user_ptr(c.counts) + i))
			return -EFAULT;
		if (c.missed && put_user(missed, (u64 __user *)u64_to_user_ptr(c.missed) + i))
			return -EFAULT;
		if (c.flags && put_user(a->probes[i].inline_count ? KINSTR_PROBE_F_INLINE : 0,
					(u32 __user *)u64_to_user_ptr(c.flags) + i))
			return -EFAULT;
	}
	return 0;
}

static long ioctl_sync(void __user *uarg)
{
	struct kinstr_sync sy;
	int err;

	err = kinstr_get_struct(&sy, sizeof(sy), uarg, KINSTR_SYNC_SIZE_VER0);
	if (err)
		return err;
	if (sy.flags)
		return -EINVAL;
	kinstr_worker_drain();
	return 0;
}

long kinstr_session_ioctl(struct kinstr_session *s, unsigned int cmd, void __user *uarg)
{
	long err;

	mutex_lock(&s->lock);
	switch (cmd) {
	case KINSTR_IOC_ALLOC:
		err = ioctl_alloc(s, uarg);
		break;
	case KINSTR_IOC_INSTALL:
		err = ioctl_install(s, uarg);
		break;
	case KINSTR_IOC_REMOVE:
		err = ioctl_remove(s, uarg);
		break;
	case KINSTR_IOC_COUNTS:
		err = ioctl_counts(s, uarg);
		break;
	case KINSTR_IOC_SYNC:
		err = ioctl_sync(uarg);
		break;
	case KINSTR_IOC_TRACE_CREATE:
		err = kinstr_trace_create(&s->chan, uarg);
		break;
	case KINSTR_IOC_TRACE_GET:
	case KINSTR_IOC_TRACE_PUT:
		err = kinstr_trace_subbuf(s->chan, cmd, uarg);
		break;
	case KINSTR_IOC_TRACE_FLUSH:
		err = kinstr_trace_flush(s->chan, uarg);
		break;
	case KINSTR_IOC_TRACE_STATS:
		err = kinstr_trace_stats(s->chan, uarg);
		break;
	case KINSTR_IOC_TIMERS_CREATE:
		err = kinstr_timers_create(&s->timers, uarg);
		break;
	case KINSTR_IOC_TIMERS_READ:
		err = kinstr_timers_read(s->timers, uarg);
		break;
	case KINSTR_IOC_TIMER_PATHS:
		err = kinstr_timer_paths(s->timers, uarg);
		break;
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&s->lock);
	return err;
}

struct kinstr_session *kinstr_session_new(void)
{
	struct kinstr_session *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	mutex_init(&s->lock);
	INIT_LIST_HEAD(&s->areas);
	return s;
}

/* The file is closing (exit, kill -9, close): every probe it made goes. */
void kinstr_session_free(struct kinstr_session *s)
{
	struct kinstr_area *a, *tmp;

	mutex_lock(&s->lock);
	list_for_each_entry_safe(a, tmp, &s->areas, node)
		area_remove(s, a);
	mutex_unlock(&s->lock);
	/* the areas' references keep the buffers until the worker frees them after quiescence */
	kinstr_chan_put(s->chan);
	kinstr_timers_put(s->timers);
	kfree(s);
}

int kinstr_session_mmap(struct kinstr_session *s, struct vm_area_struct *vma)
{
	int err;

	mutex_lock(&s->lock);
	err = kinstr_trace_mmap(s->chan, vma);
	mutex_unlock(&s->lock);
	return err;
}

__poll_t kinstr_session_poll(struct kinstr_session *s, struct file *file, struct poll_table_struct *pt)
{
	/* poll does not take the session lock: pairs with the release in kinstr_trace_create */
	return kinstr_trace_poll(smp_load_acquire(&s->chan), file, pt);
}

/* What probe context enters here, for the hit path's closure (hitpath.c). */
size_t kinstr_probes_hit_roots(unsigned long *r)
{
	size_t n = 0;

	r[n++] = (unsigned long)kinstr_entry_stub;
	r[n++] = (unsigned long)kinstr_entry_stub_nf;
	r[n++] = (unsigned long)kinstr_trace_stub;
	n += kinstr_hit_roots(r + n);
	r[n++] = (unsigned long)kinstr_int3_notify;
	/* the kernel's int3 delivery up to kinstr_int3_notify (see hitpath.c) */
	r[n++] = kinstr_ksyms.kallsyms_lookup_name("notify_die");	/* 0: incomplete */
	return n;
}

int kinstr_probes_init(void)
{
	return register_die_notifier(&kinstr_die_nb);
}

void kinstr_probes_exit(void)
{
	/* no session is left (each held a module reference); finish what they queued */
	kinstr_worker_drain();
	unregister_die_notifier(&kinstr_die_nb);
	/* the notifier chain is RCU: no handler runs past this */
	synchronize_rcu();
}
