// SPDX-License-Identifier: GPL-2.0
/*
 * Installing a batch (patch.h): pin, verify every request, check stacking against what is in, write
 * and publish the slots, fence, arm the int3s, ftrace direct calls, then queue the jumps for the
 * worker (protocol.c).
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
#include "check/cache_timer.h"

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

/*
 * The action of a request verified (phase 2 refuses one without an entry in the actions' table):
 * what its slot holds, what it takes and links (patch/ops.c).
 */
static const struct kinstr_action_ops *ops_of(const struct kinstr_probe *r)
{
	return kinstr_action_get(r->action);
}

/* Phase 1b: what each request's action takes from the caller (a BPF probe's program). */
static int take_objects(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_install_objs *o,
			struct kinstr_verdict *v, u32 *at)
{
	const struct kinstr_action_ops *ops;
	u32 i;
	int err;

	for (i = 0; i < a->count; i++) {
		ops = ops_of(&req[i]);
		if (!ops || !ops->take)
			continue;	/* no such action: phase 2 refuses it */
		*at = i;
		err = ops->take(a, i, &req[i], o, v);
		if (err)
			return err;
	}
	return 0;
}

/* Phase 2: every request verified on its own (verify.c), its action's object present, no two on one site. */
static int verify_requests(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_install_objs *o,
			   struct kinstr_verdict *v, u32 *at)
{
	const struct kinstr_action_ops *ops;
	u32 i;
	int err;

	for (i = 0; i < a->count; i++) {
		unsigned long slot = (unsigned long)a->mem + (unsigned long)i * KINSTR_SLOT_SIZE;

		cond_resched();	/* thousands of probes: let the rcu-tasks wait of a set before this one end */
		*at = i;
		ops = ops_of(&req[i]);
		err = kinstr_verify_probe(&req[i], ops, slot + KINSTR_SLOT_BODY, v);
		if (!err && ops->check) {
			err = ops->check(&req[i], i, o);
			if (err)
				*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = req[i].site };
		}
		if (err)
			return err;
		a->probes[i].flags_dead = v->flags_dead;
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
		if (!ops_of(&req[i])->enters_cache &&
		    in_cached_locked(a, req[i].site, req[i].site + req[i].displaced_len)) {
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BUSY, .addr = req[i].site };
			*at = i;
			return -EBUSY;
		}
	for (i = 0; i < a->nfns; i++) {
		unsigned long b;

		for (b = a->fns[i].start - KINSTR_MAX_DISPLACED + 1; b < a->fns[i].end; b++) {
			struct kprobe_k *o = patch_lookup_site(b);

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
			struct kprobe_k *o = patch_lookup_site(site);

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
				 const struct kinstr_install_objs *o, const struct kinstr_cache_check *cc)
{
	u32 i;

	lockdep_assert_held(&kinstr_patch_mutex);
	if (cc) {
		/* the image as checked: its counters' addresses are this area's */
		memcpy(a->cache, cc->bytes, cc->len);
		if (kinstr_cache_timed(cc)) {	/* checked against cc->timers: held while the copies run */
			kinstr_cache_timer_link(cc, a->cache, cc->timers);
			if (!a->timers) {
				a->timers = cc->timers;
				kinstr_timers_get(a->timers);
			}
		}
		list_add_tail(&a->cache_node, &kinstr_cached);
	}
	for (i = 0; i < a->count; i++) {
		const struct kinstr_action_ops *ops = ops_of(&req[i]);
		struct kprobe_k *p = &a->probes[i];

		p->site = req[i].site;
		p->kind = req[i].kind;
		p->displaced_len = req[i].displaced_len;
		memcpy(p->orig, req[i].expected, KINSTR_MAX_DISPLACED);
		p->slot = a->mem + (unsigned long)i * KINSTR_SLOT_SIZE;
		if (ops->scoped && o->scope) {
			p->gate = kinstr_scope_gate(o->scope);
			if (!a->scope) {
				a->scope = o->scope;
				kinstr_scope_get(a->scope);
			}
		}
		if (ops->link)
			ops->link(a, p, &req[i], i, o);
		if (!ops->enters_cache)	/* a cache's entry has no slot: straight into the copy */
			kinstr_slot_write(p->slot, &req[i], ops, p);
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
			patch_unpatch_locked(a, i);
			*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BYTES_DIFFER, .addr = req[i].site };
			*at = i;
			return -ESTALE;
		}
		patch_poke(req[i].site, &int3, 1);
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
			patch_unregister_direct(a, i);
			return direct_refused(a, i, err, v, at);
		}
	}
	return 0;
}

/* Undo phases 4 and 5 after a later one failed: unpublished, unfenced, nothing in flight. */
static void unpublish_unfence(struct kinstr_area *a)
{
	patch_unpublish(a, a->count);
	mutex_lock(&kinstr_patch_mutex);
	list_del_init(&a->cache_node);
	mutex_unlock(&kinstr_patch_mutex);
	patch_unfence_area(a);
	patch_quiesce();
}

/* Phase 2b: the code cache, proven against the live text, and the ranges of its functions. */
static int check_cache(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_cache_check *cc,
		       struct kinstr_verdict *v, u32 *at)
{
	unsigned long *entries;
	u32 i, enters = 0;
	int err, n;

	for (i = 0; i < a->count; i++)
		enters += ops_of(&req[i])->enters_cache;
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
	entries = bitmap_zalloc(a->count, GFP_KERNEL);
	if (!entries)
		return -ENOMEM;
	for (i = 0; i < a->count; i++)
		if (ops_of(&req[i])->enters_cache)
			__set_bit(i, entries);
	err = kinstr_cache_check(cc, req, entries, a->count, v, at);
	bitmap_free(entries);
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

int kinstr_area_install(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_install_objs *objs,
			const struct kinstr_cache_check *cc, struct kinstr_install *in)
{
	const struct kinstr_install_objs o = *objs;
	struct kinstr_verdict v = { 0 };
	bool jumps = false;
	u32 i = 0;
	int err;

	err = pin_modules(a, req, &v, &i);
	if (!err)
		err = take_objects(a, req, &o, &v, &i);
	if (!err)
		err = verify_requests(a, req, &o, &v, &i);
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
		patch_unpin_modules(a);
		patch_put_progs(a);
		return 0;
	}
	write_publish_locked(a, req, &o, cc);
	mutex_unlock(&kinstr_patch_mutex);

	/* phase 5, before the first byte changes: from here kprobes refuse these bytes */
	err = patch_fence_area(a, &i);
	if (err) {
		patch_unpublish(a, a->count);
		patch_quiesce();
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
		patch_unpatch_locked(a, a->count);
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
		patch_kick_worker(WORKER_DELAY);
	return 0;

refused:
	patch_unpin_modules(a);
	patch_put_progs(a);
	in->refused_index = i;
	in->refusal = v.refusal;
	in->refusal_reasons = v.reasons;
	in->refusal_offset = v.offset;
	in->refusal_addr = v.addr;
	return err;
}
