// SPDX-License-Identifier: GPL-2.0
/*
 * Fences: while kinstr holds a site, the kernel's own kprobes must refuse its bytes. kprobes
 * consult the kprobe blacklist (within_kprobe_blacklist(), from register_kprobe's
 * check_kprobe_address_safe()) before they touch text, and so do perf probe, bpftrace and
 * SystemTap through them: each site kinstr patches gets an entry there, from 4 bytes before the
 * site (a kprobe whose optimized 5-byte jump would reach the site) to the end of its displaced
 * bytes. debugfs kprobes/blacklist lists them while they are in. Entries are added and removed
 * under kprobe_mutex, as the kernel's own module notifier does; kprobes read the list without a
 * lock, so an entry is unlinked with list_del_rcu() and its memory (in the probe's area) is
 * freed only after the areas' quiescence waits.
 *
 * A kprobe registered before is refused by kinstr (policy.c's kprobed(), checked again here
 * under kprobe_mutex, so that none slips in between). One registering concurrently that passed
 * the blacklist check just before the fence went in takes text_mutex after kinstr's int3 is on
 * the site, and kprobes refuse an address whose decoding from the symbol meets a foreign int3.
 */
#include <linux/hashtable.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/rculist.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "check/check.h"

#define FENCE_HASH_BITS 10
#define FENCE_BEFORE 4	/* an optimized kprobe from up to 4 bytes before covers the site */

/* ours, by address of the blacklist entry: kinstr's view of the kernel's list skips them */
static DEFINE_HASHTABLE(fences, FENCE_HASH_BITS);

bool kinstr_fence_available(void)
{
	return kinstr_ksyms.kprobe_blacklist && kinstr_ksyms.kprobe_mutex && kinstr_khas(get_kprobe);
}

void kinstr_fence_lock(void)
{
	mutex_lock(kinstr_ksyms.kprobe_mutex);
}

void kinstr_fence_unlock(void)
{
	mutex_unlock(kinstr_ksyms.kprobe_mutex);
}

/* A kprobe on [a, a + len), or up to KINSTR_MAX_DISPLACED bytes before (its optimized jump). */
bool kinstr_fence_kprobed(unsigned long a, unsigned int len)
{
	unsigned long p;
	bool hit = false;

	rcu_read_lock();
	for (p = a - KINSTR_MAX_DISPLACED; p < a + len && !hit; p++) {
		struct kprobe *kp = kinstr_kcall(get_kprobe)((void *)p);

		/* a kprobe through ftrace patches only the ftrace site, which is reserved anyway */
		hit = kp && !(kp->flags & KPROBE_FLAG_FTRACE);
	}
	rcu_read_unlock();
	return hit;
}

/*
 * Fence [site - 4, site + len) (kprobe_mutex held). The start is never a symbol's start, so that
 * user space reading debugfs kprobes/blacklist tells the kernel's entries (whole symbols) from
 * kinstr's.
 */
void kinstr_fence_add(struct kinstr_fence *f, unsigned long site, unsigned int len)
{
	unsigned long start = site - FENCE_BEFORE, size, off;

	lockdep_assert_held(kinstr_ksyms.kprobe_mutex);
	if (kinstr_kcall(kallsyms_lookup_size_offset)(start, &size, &off) && !off)
		start++;
	f->e.start_addr = start;
	f->e.end_addr = site + len;
	hash_add_rcu(fences, &f->node, (unsigned long)&f->e);
	/* initialized before it is reachable: kprobes walk the list without a lock */
	list_add_tail_rcu(&f->e.list, kinstr_ksyms.kprobe_blacklist);
	f->in = true;
}

/* Unfence (kprobe_mutex held); the memory stays valid until both quiescence waits are over. */
void kinstr_fence_del(struct kinstr_fence *f)
{
	lockdep_assert_held(kinstr_ksyms.kprobe_mutex);
	if (!f->in)
		return;
	list_del_rcu(&f->e.list);
	hash_del_rcu(&f->node);
	f->in = false;
}

static bool ours(const struct kprobe_blacklist_entry *e)
{
	struct kinstr_fence *f;

	hash_for_each_possible_rcu(fences, f, node, (unsigned long)e)
		if (&f->e == e)
			return true;
	return false;
}

/*
 * within_kprobe_blacklist() as it would answer without kinstr's own fences: another kinstr probe
 * nearby is kinstr's business (BUSY), not the blacklist's. Sleeps (kprobe_mutex).
 */
bool kinstr_fence_blacklisted(unsigned long a, const char *sym)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	struct kprobe_blacklist_entry *e;
	bool mine = false, theirs = false;

	/*
	 * In core text the kernel's answer is known without its walk: no boot-time entry holds a,
	 * nor the kprobes text (arch_within_kprobe_blacklist), and a's symbol is no ".part"/".cold"
	 * clone whose parent the kernel would look up. sym: a's symbol name (NULL: unknown).
	 */
	if (kinstr_span_has(&k->text, a, 1) && sym && !strchr(sym, '.') &&
	    !kinstr_span_has(&k->kprobes_text, a, 1) && !kinstr_ksyms_core_blacklist_has(a))
		return false;
	if (!kinstr_kcall(within_kprobe_blacklist)(a))
		return false;
	if (!kinstr_fence_available())
		return true;
	mutex_lock(kinstr_ksyms.kprobe_mutex);
	rcu_read_lock();
	list_for_each_entry(e, kinstr_ksyms.kprobe_blacklist, list) {
		if (a < e->start_addr || a >= e->end_addr)
			continue;
		if (ours(e))
			mine = true;
		else
			theirs = true;
	}
	rcu_read_unlock();
	mutex_unlock(kinstr_ksyms.kprobe_mutex);
	/*
	 * Not in any entry: the kernel's answer came from its arch ranges or from the function a
	 * ".part"/".cold" clone was split from, never from a fence (a fence starts past a symbol).
	 */
	return theirs || !mine;
}
