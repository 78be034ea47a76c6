// SPDX-License-Identifier: GPL-2.0
/*
 * Site safety as the module sees it: small named predicates, each one rule of docs/design.md,
 * each asked of the kernel itself. User space classifies sites on its own (it knows instruction
 * boundaries and branch targets); the module re-checks every range before a byte changes, and
 * answers KINSTR_IOC_CHECK so both views can be compared.
 */
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "check/check.h"
#include "abi.h"
#include "rules/entry.h"
#include "rules/symbols.h"

#define R(x) (1U << KINSTR_R_##x)

static bool in_core_text(unsigned long a, unsigned int len)
{
	return kinstr_span_has(&kinstr_ksyms.text, a, len);
}

static bool overlaps(const struct kinstr_span *s, unsigned long a, unsigned int len)
{
	return s->start && a < s->end && a + len > s->start;
}

static bool in_own_module(unsigned long a, unsigned int len)
{
	return within_module(a, THIS_MODULE) || within_module(a + len - 1, THIS_MODULE);
}

/*
 * Are [a, a + len) all in a's symbol? *off: a's offset in it. (Finding a symbol's name walks the
 * names before it in its run of the name table: what its size and offset alone need is cheaper.)
 */
static bool in_one_symbol(unsigned long a, unsigned int len, unsigned long *off)
{
	unsigned long size;

	return kinstr_khas(kallsyms_lookup_size_offset) &&
	       kinstr_kcall(kallsyms_lookup_size_offset)(a, &size, off) && *off < size && len <= size - *off;
}

/* Does byte a hold part of its function's ENDBR (rules/entry.h)? */
static bool in_endbr(unsigned long a)
{
	unsigned long size, off;
	u8 b[KINSTR_ENDBR_LEN];

	if (!kinstr_kcall(kallsyms_lookup_size_offset)(a, &size, &off) || off >= KINSTR_ENDBR_LEN)
		return false;
	return !copy_from_kernel_nofault(b, (void *)(a - off), sizeof(b)) && kinstr_entry_endbr_len(b);
}

/*
 * An indirect call lands on a function's ENDBR: never displaced, never trapped. off: a's offset
 * in the one symbol that holds the whole range (NULL: not so): then both ends are decided by
 * that symbol's start, with no lookup of their own.
 */
static u32 endbr(unsigned long a, unsigned int len, const unsigned long *off)
{
	u8 b[KINSTR_ENDBR_LEN];

	if (!kinstr_khas(kallsyms_lookup_size_offset))
		return R(UNVERIFIABLE);
	if (off)	/* the first byte is the nearer one to the ENDBR */
		return *off < KINSTR_ENDBR_LEN && !copy_from_kernel_nofault(b, (void *)(a - *off), sizeof(b)) &&
		       kinstr_entry_endbr_len(b) ? R(ENDBR) : 0;
	return in_endbr(a) || in_endbr(a + len - 1) ? R(ENDBR) : 0;
}

/* ftrace's own records (an inclusive end, as kprobes passes it). */
static u32 ftrace_site(unsigned long a, unsigned int len)
{
	if (!kinstr_khas(ftrace_text_reserved))
		return R(UNVERIFIABLE);
	return kinstr_kcall(ftrace_text_reserved)((void *)a, (void *)(a + len - 1)) ? R(FTRACE) : 0;
}

/* The *_text_reserved() predicates take an inclusive end, as kprobes passes them. */
static u32 reserved_by_patchers(unsigned long a, unsigned int len, bool core)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	void *s = (void *)a, *e = (void *)(a + len - 1);
	u32 r = 0;

	/* the indexes below are built from the core's tables: without one, nothing is decided */
	if (!k->jump_table.start || !k->static_call_sites.start)
		r |= R(UNVERIFIABLE);
	r |= ftrace_site(a, len);
	/*
	 * jump_label_text_reserved()'s and static_call_text_reserved()'s answers, from sorted
	 * entries (they walk all of them per call, the first decoding each)
	 */
	if (core ? kinstr_ksyms_sites_in(KINSTR_SITES_JUMP_LABEL, a, len) :
	    kinstr_module_sites_in(KINSTR_SITES_JUMP_LABEL, a, len))
		r |= R(JUMP_LABEL);
	if (core ? kinstr_ksyms_sites_in(KINSTR_SITES_STATIC_CALL, a, len) :
	    kinstr_module_sites_in(KINSTR_SITES_STATIC_CALL, a, len))
		r |= R(STATIC_CALL);
	/* alternatives_text_reserved() wants text_mutex, which nests inside the other patchers' locks */
	if (kinstr_khas(alternatives_text_reserved) && k->text_mutex) {
		mutex_lock(k->text_mutex);
		if (kinstr_kcall(alternatives_text_reserved)(s, e))
			r |= R(ALTERNATIVE);
		mutex_unlock(k->text_mutex);
	} else {
		r |= R(UNVERIFIABLE);
	}
	return r;
}

/* Per byte: exception-table fixups and BUG sites are found by exact instruction address. */
static u32 reserved_per_byte(unsigned long a, unsigned int len, bool core)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	unsigned int i;
	u32 r = 0;

	if (!kinstr_khas(search_exception_tables) || !k->ex_table.start || (!kinstr_khas(find_bug) && !k->bug_addrs))
		r |= R(UNVERIFIABLE);
	if (core && kinstr_ksyms_extable_in(a, len))
		r |= R(EXTABLE);
	/* a module's table, through the kernel (the core's is indexed above) */
	for (i = 0; i < len && !core; i++)
		if (kinstr_khas(search_exception_tables) && kinstr_kcall(search_exception_tables)(a + i))
			r |= R(EXTABLE);
	if (kinstr_ksyms_bug_in(a, len))
		r |= R(BUG);
	return r;
}

/*
 * The blacklist holds whole functions (and the kernel extends it to their .part/.cold clones);
 * a range never spans two functions, so its first and last bytes decide. kinstr's own fences
 * (fence.c) are left out: another kinstr probe nearby is refused as BUSY, not as blacklisted.
 */
static u32 blacklisted(unsigned long a, unsigned int len, const char *first, const char *last)
{
	if (!kinstr_khas(within_kprobe_blacklist))
		return R(UNVERIFIABLE);
	if (kinstr_fence_blacklisted(a, first) || kinstr_fence_blacklisted(a + len - 1, last))
		return R(KPROBE_BLACKLIST);
	return 0;
}

/* A kprobe on these bytes, or one up to 16 bytes before whose optimized jump may cover them. */
static u32 kprobed(unsigned long a, unsigned int len)
{
	if (!kinstr_khas(get_kprobe))
		return R(UNVERIFIABLE);
	return kinstr_fence_kprobed(a, len) ? R(KPROBE) : 0;
}

/*
 * A die notifier: notify_die() runs every block of die_chain, in priority order, for every
 * kernel int3 (kinstr's own notifier is one of them, at the same priority as the hardware
 * breakpoints' hw_breakpoint_exceptions_notify, registered at boot and so called before it).
 * An int3 in such a function, even a jump probe's for its int3 phase, recurses on the next int3
 * anywhere: int3 -> notify_die -> int3 -> ..., each level an irqentry_nmi_enter(), until
 * __nmi_enter()'s BUG_ON(in_nmi() == NMI_MASK), whose report calls notify_die(DIE_OOPS) again:
 * "kernel BUG at kernel/entry/common.c:463!" forever. The chain changes at run time (kgdb,
 * modules), so it is walked at each check, and the whole function holding each notifier_call
 * is refused.
 */
/*
 * The core functions holding die notifiers, each looked up once: a core function's place never
 * changes (a module's may, at its next load: looked up each time).
 */
static struct {
	unsigned long fn, start, end;
} die_memo[16];
static unsigned int die_memo_n;
static DEFINE_SPINLOCK(die_memo_lock);

static bool die_fn_range(unsigned long fn, bool core, unsigned long *start, unsigned long *end)
{
	unsigned long size, off;
	unsigned int i;
	bool found = false;

	spin_lock(&die_memo_lock);
	for (i = 0; i < die_memo_n && !found; i++)
		if (die_memo[i].fn == fn) {
			*start = die_memo[i].start;
			*end = die_memo[i].end;
			found = true;
		}
	spin_unlock(&die_memo_lock);
	if (found)
		return true;
	if (!kinstr_kcall(kallsyms_lookup_size_offset)(fn, &size, &off))
		return false;
	*start = fn - off;
	*end = *start + size;
	spin_lock(&die_memo_lock);
	if (core && die_memo_n < ARRAY_SIZE(die_memo))
		die_memo[die_memo_n++] = (typeof(die_memo[0])){ fn, *start, *end };
	spin_unlock(&die_memo_lock);
	return true;
}

static u32 die_notifier(unsigned long a, unsigned int len, bool core)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	struct notifier_block *nb;
	u32 r = 0;

	if (!k->die_chain || !kinstr_khas(kallsyms_lookup_size_offset))
		return R(UNVERIFIABLE);
	rcu_read_lock();
	for (nb = rcu_dereference(k->die_chain->head); nb && !r; nb = rcu_dereference(nb->next)) {
		unsigned long fn = (unsigned long)nb->notifier_call, start, end;

		/*
		 * a function is all core text or none: a notifier on the other side of that line
		 * cannot hold these bytes (and a module's symbols are looked up by a walk of its
		 * whole symbol table, kinstr's own notifier's on every check)
		 */
		if (in_core_text(fn, 1) != core)
			continue;
		if (!die_fn_range(fn, core, &start, &end))
			continue;
		if (a < end && a + len > start)
			r = R(DIE_NOTIFIER);
	}
	rcu_read_unlock();
	return r;
}

/* The functions holding die_chain's notifiers, gathered once for a batch of checks. */
struct die_fns {
	unsigned int n;		/* > ARRAY_SIZE(fn): too many, each range walks the chain */
	struct {
		unsigned long start, end;
	} fn[32];
};

static void die_fns_gather(struct die_fns *d)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	struct notifier_block *nb;

	d->n = 0;
	if (!k->die_chain || !kinstr_khas(kallsyms_lookup_size_offset)) {
		d->n = ARRAY_SIZE(d->fn) + 1;	/* die_notifier() says UNVERIFIABLE */
		return;
	}
	rcu_read_lock();
	for (nb = rcu_dereference(k->die_chain->head); nb; nb = rcu_dereference(nb->next)) {
		unsigned long fn = (unsigned long)nb->notifier_call, size, off;

		if (!kinstr_kcall(kallsyms_lookup_size_offset)(fn, &size, &off))
			continue;
		if (d->n == ARRAY_SIZE(d->fn)) {
			d->n++;
			break;
		}
		d->fn[d->n].start = fn - off;
		d->fn[d->n++].end = fn - off + size;
	}
	rcu_read_unlock();
}

/* die_notifier() against a gathered chain (a notifier added during the batch is the next one's). */
static u32 die_notifier_in(const struct die_fns *d, unsigned long a, unsigned int len, bool core)
{
	unsigned int i;

	if (d->n > ARRAY_SIZE(d->fn))
		return die_notifier(a, len, core);
	for (i = 0; i < d->n; i++)
		if (a < d->fn[i].end && a + len > d->fn[i].start)
			return R(DIE_NOTIFIER);
	return 0;
}

/*
 * Where the range lies: kinstr itself, not text, a module's state, the core's special sections.
 * Decided once per check: *core says the range is all core text; past placement (nothing PLACED)
 * it is otherwise all in one live module's core text, and every rule after this asks *core, not
 * the text again (a module's range is looked up by a walk of the module list).
 */
static u32 placement(unsigned long addr, unsigned int len, bool *core)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	u32 r = 0;

	*core = false;
	if (in_own_module(addr, len))
		return R(OWN_MODULE) | R(NOT_TEXT);
	if (!in_core_text(addr, len))	/* a live module's core text, else not text (or a module coming or going) */
		return kinstr_module_policy(addr, len);
	*core = true;
	if (overlaps(&k->entry_text, addr, len) || overlaps(&k->irqentry_text, addr, len))
		r |= R(ENTRY_TEXT);
	if (overlaps(&k->noinstr_text, addr, len))
		r |= R(NOINSTR_TEXT);
	if (overlaps(&k->kprobes_text, addr, len))
		r |= R(KPROBES_TEXT);
	return r;
}

/* Decided by placement() alone: nothing after it is asked. */
#define PLACED (R(OWN_MODULE) | R(NOT_TEXT) | R(MODULE_STATE))

/* Every reason why [addr, addr + len) may not be patched; 0 when the kernel sees none. */
u32 kinstr_policy_check(unsigned long addr, unsigned int len)
{
	char first[KSYM_SYMBOL_LEN], last[KSYM_SYMBOL_LEN];
	unsigned long off;
	bool core, one;
	u32 r = placement(addr, len, &core);

	if (r & PLACED)
		return r;
	/* the symbols of the first and last bytes, looked up once (one name where both are in one) */
	sprint_symbol_no_offset(first, addr);
	one = in_one_symbol(addr, len, &off);
	if (one)
		strscpy(last, first, sizeof(last));
	else
		sprint_symbol_no_offset(last, addr + len - 1);
	if (kinstr_rule_cfi_symbol(first) || kinstr_rule_cfi_symbol(last))
		r |= R(CFI_SYMBOL);
	if (kinstr_rule_sc_trampoline(first) || kinstr_rule_sc_trampoline(last))
		r |= R(SC_TRAMPOLINE);
	r |= endbr(addr, len, one ? &off : NULL);
	r |= reserved_by_patchers(addr, len, core);
	r |= reserved_per_byte(addr, len, core);
	r |= blacklisted(addr, len, first, last);
	r |= kprobed(addr, len);
	if (kinstr_hitpath_has(addr, len))
		r |= R(HIT_PATH);
	r |= die_notifier(addr, len, core);
	return r;
}

/* The reasons the module decides from its indexes of the kernel's tables (ksym.c, modtext.c). */
#define INDEXED (R(JUMP_LABEL) | R(STATIC_CALL) | R(EXTABLE) | R(KPROBE_BLACKLIST))

/*
 * kinstr_policy_check() with the indexed reasons asked of the kernel's own predicates instead
 * (KINSTR_CHECK_F_KERNEL): the reference tests compare the indexes with.
 */
static u32 policy_check_by_kernel(unsigned long addr, unsigned int len)
{
	void *s = (void *)addr, *e = (void *)(addr + len - 1);
	u32 r = kinstr_policy_check(addr, len);
	unsigned int i;

	if (r & PLACED)
		return r;	/* decided before any table */
	r &= ~INDEXED;
	if (!kinstr_khas(jump_label_text_reserved) || !kinstr_khas(static_call_text_reserved) ||
	    !kinstr_khas(search_exception_tables) || !kinstr_khas(within_kprobe_blacklist))
		return r | R(UNVERIFIABLE);
	if (kinstr_kcall(jump_label_text_reserved)(s, e))
		r |= R(JUMP_LABEL);
	if (kinstr_kcall(static_call_text_reserved)(s, e))
		r |= R(STATIC_CALL);
	for (i = 0; i < len; i++)
		if (kinstr_kcall(search_exception_tables)(addr + i))
			r |= R(EXTABLE);
	/* no symbol name: the kernel's own walk decides */
	if (kinstr_fence_blacklisted(addr, NULL) || kinstr_fence_blacklisted(addr + len - 1, NULL))
		r |= R(KPROBE_BLACKLIST);
	return r;
}

/* What placement() and these predicates decide is answered without the rest of the check. */
#define OWN_PREDICATE (PLACED | R(ENTRY_TEXT) | R(NOINSTR_TEXT) | R(KPROBES_TEXT) | R(FTRACE) | R(DIE_NOTIFIER))

/* kinstr_policy_check(addr, len) & only, plus UNVERIFIABLE where it could not decide. */
static u32 policy_check_only(unsigned long addr, unsigned int len, u32 only, const struct die_fns *die)
{
	bool core;
	u32 r;

	if (only & ~OWN_PREDICATE)
		return kinstr_policy_check(addr, len) & (only | R(UNVERIFIABLE));
	r = placement(addr, len, &core);
	if (r & PLACED)
		return r & only;
	if (only & R(FTRACE))
		r |= ftrace_site(addr, len);
	if (only & R(DIE_NOTIFIER))
		r |= die_notifier_in(die, addr, len, core);
	return r & (only | R(UNVERIFIABLE));
}

#define CHECK_CHUNK 256

long kinstr_ioctl_check(void __user *uarg)
{
	struct kinstr_check_range *buf;
	struct die_fns die;
	struct kinstr_check c;
	u32 i, n, done = 0;
	long err = 0;

	err = kinstr_get_struct(&c, sizeof(c), uarg, KINSTR_CHECK_SIZE_VER0);
	if (err)
		return err;
	if ((c.flags & ~KINSTR_CHECK_F_KERNEL) || (c.only >> KINSTR_R_NR) || (c.only && c.flags))
		return -EINVAL;
	if (c.count > KINSTR_CHECK_MAX)
		return -E2BIG;
	buf = kmalloc_array(CHECK_CHUNK, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (c.only & R(DIE_NOTIFIER))
		die_fns_gather(&die);
	while (done < c.count) {
		void __user *up = u64_to_user_ptr(c.ranges) + (u64)done * sizeof(*buf);

		n = min_t(u32, c.count - done, CHECK_CHUNK);
		if (copy_from_user(buf, up, n * sizeof(*buf))) {
			err = -EFAULT;
			break;
		}
		for (i = 0; i < n; i++) {
			if (buf[i].len < 1 || buf[i].len > 16) {
				err = -EINVAL;
				break;
			}
			if (c.flags & KINSTR_CHECK_F_KERNEL)
				buf[i].reasons = policy_check_by_kernel(buf[i].addr, buf[i].len);
			else if (c.only)
				buf[i].reasons = policy_check_only(buf[i].addr, buf[i].len, c.only, &die);
			else
				buf[i].reasons = kinstr_policy_check(buf[i].addr, buf[i].len);
		}
		if (err)
			break;
		if (copy_to_user(up, buf, n * sizeof(*buf))) {
			err = -EFAULT;
			break;
		}
		done += n;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
	}
	kfree(buf);
	return err;
}
