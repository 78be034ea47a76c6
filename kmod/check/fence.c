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
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/sort.h>

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
 * The names of every symbol the kernel's blacklist holds (its entries, never kinstr's fences, and
 * the arch ranges: the kprobes and entry text), as sorted 64-bit hashes. within_kprobe_blacklist()
 * answers for a ".part"/".isra"/".cold" clone by its parent's name: kallsyms_lookup_name() (on 6.1 a
 * walk of every core name, on any kernel a walk of every module's symbols when the core has none),
 * then that address against the list. If no symbol the list holds has that name, whichever
 * symbol of the name the kernel finds is outside the list: not blacklisted. If one has, the clone
 * is refused (where a name repeats, possibly where the kernel would not). Built on first use,
 * again after a module came or went (modules bring entries and take them away); not used while
 * one is coming (kprobes adds its entries in that state).
 */
static struct {
	struct mutex lock;
	u64 *hash;
	size_t n;
	long built;	/* the generation it was built at; -1: never */
} bl_names = { .lock = __MUTEX_INITIALIZER(bl_names.lock), .built = -1 };
static atomic_long_t module_gen;
static atomic_t modules_coming;

static int module_event(struct notifier_block *nb, unsigned long state, void *data)
{
	if (state == MODULE_STATE_COMING)
		atomic_inc(&modules_coming);
	else if (state == MODULE_STATE_LIVE || state == MODULE_STATE_GOING)
		atomic_dec_if_positive(&modules_coming);
	atomic_long_inc(&module_gen);
	return NOTIFY_DONE;
}

static struct notifier_block module_nb = { .notifier_call = module_event };

static u64 name_hash(const char *s, size_t len)
{
	u64 h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (len--) {
		h ^= (u8)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Every symbol's name in [start, end), into *h (grown as needed); -ENOMEM. */
static int names_in(unsigned long start, unsigned long end, u64 **h, size_t *n, size_t *cap)
{
	char name[KSYM_SYMBOL_LEN];
	unsigned long a = start;

	while (a < end) {
		unsigned long size, off;
		char *sp;

		if (!kinstr_kcall(kallsyms_lookup_size_offset)(a, &size, &off) || !size) {
			a++;
			continue;
		}
		sprint_symbol_no_offset(name, a - off);
		sp = strchr(name, ' ');	/* a module's: "NAME [MODULE]" */
		if (sp)
			*sp = '\0';
		if (*n == *cap) {
			u64 *g = krealloc_array(*h, *cap ? *cap * 2 : 1024, sizeof(**h), GFP_KERNEL);

			if (!g)
				return -ENOMEM;
			*h = g;
			*cap = *cap ? *cap * 2 : 1024;
		}
		(*h)[(*n)++] = name_hash(name, strlen(name));
		a = a - off + size;
		if (!(*n & 255))
			cond_resched();
	}
	return 0;
}

static int bl_names_build(long gen)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	struct kprobe_blacklist_entry *e;
	struct { unsigned long start, end; } *r = NULL;
	size_t nr = 0, i, n = 0, cap = 0;
	u64 *h = NULL;
	int err = 0;

	/* the entries' ranges, copied under kprobe_mutex; their names looked up after */
	mutex_lock(k->kprobe_mutex);
	list_for_each_entry(e, k->kprobe_blacklist, list)
		nr += !ours(e);
	r = kvmalloc_array(nr + 2, sizeof(*r), GFP_KERNEL);
	if (r) {
		nr = 0;
		list_for_each_entry(e, k->kprobe_blacklist, list)
			if (!ours(e)) {
				r[nr].start = e->start_addr;
				r[nr++].end = e->end_addr;
			}
	}
	mutex_unlock(k->kprobe_mutex);
	if (!r)
		return -ENOMEM;
	r[nr].start = k->kprobes_text.start;	/* arch_within_kprobe_blacklist() */
	r[nr++].end = k->kprobes_text.end;
	r[nr].start = k->entry_text.start;
	r[nr++].end = k->entry_text.end;
	for (i = 0; i < nr && !err; i++)
		err = names_in(r[i].start, r[i].end, &h, &n, &cap);
	kvfree(r);
	if (err) {
		kfree(h);
		return err;
	}
	sort(h, n, sizeof(*h), cmp_u64, NULL);
	kfree(bl_names.hash);
	bl_names.hash = h;
	bl_names.n = n;
	bl_names.built = gen;
	return 0;
}

/*
 * Is the parent of clone sym ("NAME.part.0": NAME) blacklisted by name? 1 yes, 0 no, -1 cannot
 * tell here (the kernel's walk decides).
 */
static int clone_parent_blacklisted(const char *sym)
{
	const char *dot = strchr(sym, '.');
	long gen = atomic_long_read(&module_gen);
	size_t lo = 0, hi;
	u64 want;
	int ret = -1;

	if (!dot || dot == sym || atomic_read(&modules_coming) || !kinstr_khas(kallsyms_lookup_size_offset))
		return -1;
	want = name_hash(sym, dot - sym);
	mutex_lock(&bl_names.lock);
	if (bl_names.built == gen || !bl_names_build(gen)) {
		hi = bl_names.n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (bl_names.hash[mid] < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		ret = lo < bl_names.n && bl_names.hash[lo] == want;
	}
	mutex_unlock(&bl_names.lock);
	return ret;
}

int kinstr_fence_init(void)
{
	return register_module_notifier(&module_nb);
}

void kinstr_fence_exit(void)
{
	unregister_module_notifier(&module_nb);
	kfree(bl_names.hash);
	bl_names.hash = NULL;
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
	if (kinstr_span_has(&k->text, a, 1) && sym && !kinstr_span_has(&k->kprobes_text, a, 1) &&
	    !kinstr_ksyms_core_blacklist_has(a)) {
		int parent;

		if (!strchr(sym, '.'))
			return false;
		/* a clone: its parent's name decides, from the names the list holds */
		parent = kinstr_fence_available() ? clone_parent_blacklisted(sym) : -1;
		if (parent >= 0)
			return parent;
	}
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
