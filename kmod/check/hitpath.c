// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr's own hit path: every function that probe context can reach, found at load time from
 * the code itself rather than from a hand-written list (kprobes' NOKPROBE_SYMBOL goes stale as
 * the kernel changes under it).
 *
 * The roots are the functions of kinstr.ko that probe context enters (the slots' stubs, the
 * int3 notifier, the sched_switch probe, the functions called through pointers there: the trace
 * clocks). From each one the live text is decoded with the kernel's own decoder, and every
 * direct call, jmp and jcc that leaves the function adds the function it lands in; a static
 * call's trampoline is followed through its current jmp. What the bytes do not show is followed
 * too: every jump label's target (the jmp its NOP becomes when the key flips) and every static
 * call's trampoline (kinstr_ksyms_hidden_targets()). The closure over direct branches is
 * the set of whole functions a probe must never be placed in: a timer probe on
 * sched_clock_cpu would call itself through its own clock until the stack overflows.
 *
 * What the closure cannot see (an indirect call to a clocksource's read function, for one) is
 * caught at run time by the actions' per-CPU recursion guard (actions/guard.h, around the actions of hit.c), counted as missed.
 *
 * An int3 probe (a trap probe, or a jump probe before its jmp is in) is also reached through the
 * kernel's int3 delivery: do_int3() -> notify_die() -> atomic_notifier_call_chain(), which takes
 * rcu_read_lock() around the die chain before kinstr's notifier runs. An int3 in __rcu_read_lock
 * would take the int3 again from there, forever, with both CPUs spinning and nothing on the
 * console (the sweep's slice of kernel/rcu). So notify_die is a root (patch/protocol.c).
 *
 * Not followed: the preemption point at the end of an action (preempt_schedule*), reached only
 * once the action's state is complete, and into a scheduler that then runs with preemption off,
 * where no action reschedules; and __stack_chk_fail, which never returns. Entered but not
 * followed: rcu_read_unlock_special, which __rcu_read_unlock calls after the die chain, and
 * which returns at once in NMI context, where x86 runs a kernel int3 (irqentry_nmi_enter).
 */
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/bsearch.h>
#include <linux/vmalloc.h>
#include <asm/insn.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "check/check.h"

/* More than this many functions and the closure is refused as a whole (it has 100-200 here). */
#define HITPATH_MAX 4096

static struct kinstr_span *hp_fns;	/* sorted, merged; read-only after init */
static size_t hp_n;
static bool hp_incomplete;		/* the closure could not be computed: refuse everything */

struct hp_build {
	struct kinstr_span *fns;
	size_t n;
	bool overflow;
};

static bool hp_known(const struct hp_build *b, unsigned long start)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->fns[i].start == start)
			return true;
	return false;
}

static const char *const not_followed_names[] = {
	"preempt_schedule", "preempt_schedule_notrace",
	"__SCT__preempt_schedule", "__SCT__preempt_schedule_notrace",
	"preempt_schedule_thunk", "preempt_schedule_notrace_thunk",
	"__stack_chk_fail",
	/*
	 * Run by a tracepoint's probe only once the subsystem's per-context recursion guard let it
	 * through (the ring buffer's reserve, perf's recursion context): a probe in them nests at
	 * most as deep as the guard allows, never forever.
	 */
	"trace_event_buffer_commit", "perf_trace_run_bpf_submit", "perf_tp_event",
	/* a WARN's message: printk counts its own recursion and stores, never recurses, past it */
	"__warn_printk", "_printk",
};
static unsigned long not_followed_addrs[ARRAY_SIZE(not_followed_names)];

static const char *const not_scanned_names[] = {
	"rcu_read_unlock_special",
	/* the ring buffer's recursion guard is in it, before anything it calls (trace_recursive_lock) */
	"ring_buffer_lock_reserve",
};
static unsigned long not_scanned_addrs[ARRAY_SIZE(not_scanned_names)];

static bool addr_in(const unsigned long *addrs, size_t n, unsigned long start)
{
	while (n--)
		if (addrs[n] == start)
			return true;
	return false;
}
#define not_followed(start) addr_in(not_followed_addrs, ARRAY_SIZE(not_followed_addrs), start)
#define not_scanned(start) addr_in(not_scanned_addrs, ARRAY_SIZE(not_scanned_addrs), start)

static bool in_text(unsigned long a)
{
	/* probe context calls no other module: a branch out of both is no function to add */
	return kinstr_span_has(&kinstr_ksyms.text, a, 1) || within_module(a, THIS_MODULE);
}

/* Add the function containing a, once, if it is a function of the core kernel's or our text. */
static void hp_add(struct hp_build *b, unsigned long a)
{
	unsigned long size, off;

	if (!in_text(a) || !kinstr_kcall(kallsyms_lookup_size_offset)(a, &size, &off) || !size)
		return;
	a -= off;
	if (hp_known(b, a) || not_followed(a))
		return;
	if (b->n == HITPATH_MAX) {
		b->overflow = true;
		return;
	}
	b->fns[b->n++] = (struct kinstr_span){ a, a + size };
}

static long rel_target(const struct insn *insn, unsigned long a)
{
	return (long)a + insn->length + insn->immediate.value;
}

static void hp_add_target(void *b, unsigned long t)
{
	hp_add(b, t);
}

/*
 * Every direct branch of [f->start, f->end) that leaves it, and every one its bytes hide now: a
 * jump label's target while it is a NOP, a static call's trampoline (and a tracepoint's
 * iterator) whatever the call site holds now, so that no key flipped or call updated after
 * load opens a way the closure has not seen.
 */
static void hp_scan(struct hp_build *b, struct kinstr_span f)
{
	unsigned long a = f.start;
	struct kinstr_span jl, sc;
	struct insn insn;
	u8 buf[MAX_INSN_SIZE];

	if (kinstr_span_has(&kinstr_ksyms.text, f.start, 1)) {
		kinstr_ksyms_hidden_targets(f.start, f.end, hp_add_target, b);
	} else {
		kinstr_module_own_tables(&jl, &sc);
		kinstr_tables_hidden_targets(&jl, &sc, f.start, f.end, hp_add_target, b);
	}

	while (a < f.end) {
		int len = min_t(unsigned long, sizeof(buf), f.end - a);
		u8 op;

		if (copy_from_kernel_nofault(buf, (void *)a, len) ||
		    kinstr_kcall(insn_decode)(&insn, buf, len, INSN_MODE_64) < 0 || !insn.length)
			return;	/* the function is in the set whole; what follows a bad decode is not seen */
		op = insn.opcode.bytes[0];
		if (op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f) ||
		    (op == 0x0f && insn.opcode.nbytes == 2 && (insn.opcode.bytes[1] & 0xf0) == 0x80)) {
			unsigned long t = rel_target(&insn, a);

			if (t < f.start || t >= f.end)
				hp_add(b, t);
		}
		a += insn.length;
	}
}

static int cmp_fn_span(const void *x, const void *y)
{
	const struct kinstr_span *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

int kinstr_hitpath_init(const unsigned long *roots, size_t nroots)
{
	struct hp_build b = {};
	size_t i, j;

	hp_incomplete = true;
	if (!kinstr_khas(insn_decode) || !kinstr_khas(kallsyms_lookup_size_offset))
		return 0;	/* unverifiable: kinstr_hitpath_has() refuses every range */
	for (i = 0; i < ARRAY_SIZE(not_followed_names); i++)
		not_followed_addrs[i] = kinstr_kcall(kallsyms_lookup_name)(not_followed_names[i]);
	for (i = 0; i < ARRAY_SIZE(not_scanned_names); i++)
		not_scanned_addrs[i] = kinstr_kcall(kallsyms_lookup_name)(not_scanned_names[i]);
	b.fns = vmalloc(HITPATH_MAX * sizeof(*b.fns));
	if (!b.fns)
		return -ENOMEM;
	for (i = 0; i < nroots; i++) {
		if (!roots[i]) {	/* a root not found: what it reaches is unknown */
			pr_warn(KINSTR_PR_PREFIX "hit path root %zu not found: every probe refused\n", i);
			vfree(b.fns);
			return 0;
		}
		hp_add(&b, roots[i]);
	}
	for (i = 0; i < b.n; i++) {	/* b.n grows as callees are found */
		if (!not_scanned(b.fns[i].start))
			hp_scan(&b, b.fns[i]);
		cond_resched();
	}
	if (b.overflow) {
		pr_warn(KINSTR_PR_PREFIX "hit path has more than %d functions: every probe refused\n",
			HITPATH_MAX);
		vfree(b.fns);
		return 0;
	}
	sort(b.fns, b.n, sizeof(*b.fns), cmp_fn_span, NULL);
	for (i = 0, j = 0; i < b.n; i++) {	/* merge overlaps (aliases of one function) */
		if (j && b.fns[i].start < b.fns[j - 1].end)
			b.fns[j - 1].end = max(b.fns[j - 1].end, b.fns[i].end);
		else
			b.fns[j++] = b.fns[i];
	}
	hp_fns = b.fns;
	hp_n = j;
	hp_incomplete = false;
	return 0;
}

void kinstr_hitpath_exit(void)
{
	vfree(hp_fns);
	hp_fns = NULL;
	hp_n = 0;
}

/* Does [a, a + len) touch a function of the hit path? */
bool kinstr_hitpath_has(unsigned long a, unsigned int len)
{
	size_t lo = 0, hi = hp_n;

	if (hp_incomplete)
		return true;
	while (lo < hi) {	/* first span ending after a */
		size_t mid = lo + (hi - lo) / 2;

		if (hp_fns[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < hp_n && hp_fns[lo].start < a + len;
}

/* The spans, for user space (KINSTR_IOC_HIT_PATH); false when the closure is incomplete. */
bool kinstr_hitpath_spans(const struct kinstr_span **spans, size_t *n)
{
	*spans = hp_fns;
	*n = hp_n;
	return !hp_incomplete;
}
