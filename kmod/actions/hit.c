// SPDX-License-Identifier: GPL-2.0
/*
 * Probe context: what the slots call, in any context (task, irq, NMI): a timer probe's prologue
 * calls one of the timer functions itself, a trace probe's goes through its stub (entry.S); a
 * counting probe's prologue counts and calls nothing. It calls down only: the timers (timing.c)
 * the tracer (trace.c), the tallies (tally.c), the spans (span.c) and BPF programs (bpf.c).
 */
#include <linux/percpu.h>
#include <linux/ptrace.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "actions/guard.h"
#include "actions/actions.h"
#include "actions/hit.h"
#include "actions/timing.h"
#include "actions/bpf.h"
#include "actions/pred.h"

DEFINE_PER_CPU(u8, kinstr_in_action);

/*
 * A timer probe's action, called straight from its slot's prologue (slot.c), which saved the
 * flags where they are live and every register C may clobber. One function per end, chosen when
 * the slot is written, so that neither tests which end it is.
 */
static __always_inline void timer_hit(struct kprobe_k *p, bool start)
{
	u8 bit;

	if (kinstr_out_of_scope(p))
		return;
	this_cpu_inc(p->hits[0]);
	if (!kinstr_action_enter(&bit)) {
		this_cpu_inc(p->hits[1]);
		return;
	}
	kinstr_timer_hit(p->timers, p->timer, start);
	kinstr_action_exit(bit);
}

notrace void kinstr_timer_start_hit(struct kprobe_k *p)
{
	timer_hit(p, true);
}

notrace void kinstr_timer_stop_hit(struct kprobe_k *p)
{
	timer_hit(p, false);
}

/*
 * A code cache's timer (check/cache_timer.c), called straight from the copy's timer sequence,
 * which saved the flags and every register C may clobber. The function's splices belong to the
 * session, as its timers do: no scope gate (the timers' own filter stands for -p and -c).
 */
static __always_inline void cache_timer_hit(struct kinstr_timers *t, u32 timer, bool start)
{
	u8 bit;

	if (!kinstr_action_enter(&bit))
		return;
	kinstr_timer_hit(t, timer, start);
	kinstr_action_exit(bit);
}

notrace void kinstr_cache_timer_start(struct kinstr_timers *t, u32 timer)
{
	cache_timer_hit(t, timer, true);
}

notrace void kinstr_cache_timer_stop(struct kinstr_timers *t, u32 timer)
{
	cache_timer_hit(t, timer, false);
}

/*
 * A stub's hit (trace, tally, span), first: in scope, the site's address in regs, its predicate
 * passed (else counted as filtered), counted, the recursion guard taken (kinstr_action_exit(*bit)
 * after the action). false: nothing to do.
 */
static __always_inline bool stub_hit_enter(struct kprobe_k *p, struct pt_regs *regs, u8 *bit)
{
	if (kinstr_out_of_scope(p))
		return false;
	regs->ip = p->site;
	/* before the hit counts: a rejected hit is filtered, not a hit */
	if (unlikely(p->pred) && !kinstr_pred_pass(p->pred, regs)) {
		this_cpu_inc(p->hits[2]);
		return false;
	}
	this_cpu_inc(p->hits[0]);
	if (!kinstr_action_enter(bit)) {
		this_cpu_inc(p->hits[1]);
		return false;
	}
	return true;
}

/* From a trace probe's slot, through kinstr_trace_stub: regs is the site's full state. */
notrace void kinstr_trace_hit(struct kprobe_k *p, struct pt_regs *regs)
{
	u8 bit;

	if (!stub_hit_enter(p, regs, &bit))
		return;
	kinstr_trace_record(p->chan, &p->spec, p->rec_len, regs);
	kinstr_action_exit(bit);
}

/* From a tally probe's slot, through kinstr_tally_stub: regs for the key's value. */
notrace void kinstr_tally_hit(struct kprobe_k *p, struct pt_regs *regs)
{
	u8 bit;

	if (!stub_hit_enter(p, regs, &bit))
		return;
	kinstr_tally_add(p->tally, &p->spec, regs);
	kinstr_action_exit(bit);
}

/* From a span probe's slot, through kinstr_span_stub: regs for a value key. */
notrace void kinstr_span_hit(struct kprobe_k *p, struct pt_regs *regs)
{
	u8 bit;

	if (!stub_hit_enter(p, regs, &bit))
		return;
	kinstr_span_hit_one(p->span, &p->spec, p->span_stop, regs);
	kinstr_action_exit(bit);
}

/*
 * From a BPF probe's slot, through kinstr_bpf_stub. The kernel's guard of tracing programs
 * (bpf.c) stands in for kinstr's own: the program touches no state of kinstr's actions, and a
 * trace or timer action inside its helpers is guarded as ever. A program the guard kept from
 * running counts as skipped.
 */
notrace void kinstr_bpf_hit(struct kprobe_k *p, struct pt_regs *regs)
{
	if (kinstr_out_of_scope(p))
		return;
	regs->ip = p->site;
	this_cpu_inc(p->hits[0]);
	preempt_disable_notrace();
	if (unlikely(!kinstr_bpf_run(p->prog, p->cookie, regs)))
		this_cpu_inc(p->hits[1]);
	preempt_enable_notrace();
}

/* What probe context enters here, for the hit path's closure (hitpath.c). */
size_t kinstr_hit_roots(unsigned long *r)
{
	size_t n = 0;

	r[n++] = (unsigned long)kinstr_timer_start_hit;
	r[n++] = (unsigned long)kinstr_timer_stop_hit;
	r[n++] = (unsigned long)kinstr_cache_timer_start;
	r[n++] = (unsigned long)kinstr_cache_timer_stop;
	r[n++] = (unsigned long)kinstr_trace_hit;
	r[n++] = (unsigned long)kinstr_bpf_hit;
	r[n++] = (unsigned long)kinstr_tally_hit;
	r[n++] = (unsigned long)kinstr_span_hit;
	return n;
}
