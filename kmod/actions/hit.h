/* SPDX-License-Identifier: GPL-2.0 */
/* Probe context (hit.c): the functions the slots' stubs (entry.S) call. */
#ifndef KINSTR_KMOD_HIT_H
#define KINSTR_KMOD_HIT_H
#include <linux/types.h>
#include <linux/list.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "check/check.h"
#include "actions/actions.h"
#include "compat.h"

struct pt_regs;
struct bpf_prog;

/* One installed probe, as probe context and the patching protocol (patch/) see it. */
struct kprobe_k {
	struct hlist_node hnode;	/* in kinstr_sites while published */
	unsigned long site;
	u8 *slot;
	u8 kind, displaced_len;
	bool enter;			/* KINSTR_ACTION_ENTER: a code cache's entry point */
	bool gone;			/* disarmed: its text restored, unpublished (the slot stays) */
	bool inline_count;		/* a counting probe: the slot counts, no call */
	bool saves_flags;		/* the prologue saves the flags: live at the site */
	bool flags_dead;		/* verification found the flags dead at the site (kinstr_verdict) */
	struct kinstr_direct direct;	/* KINSTR_PROBE_FTRACE: ftrace's call of the slot */
	u8 __percpu *gate;		/* the session's scope (scope.c): act only while it is 1; NULL: always */
	u8 orig[KINSTR_MAX_DISPLACED];
	u64 __percpu *hits;		/* [0] hits, [1] actions skipped by the recursion guard,
				 * [2] hits a predicate rejected (KINSTR_HITS_PER_PROBE) */
	struct kinstr_fence fence;	/* kprobes keep off the site's bytes (not on ftrace probes) */
	/* KINSTR_ACTION_TIMER_*: which timer of which set (the area holds a reference) */
	struct kinstr_timers *timers;
	u32 timer;
	struct module *mod;		/* a probe in a module's text pins it until the area is freed */
	u32 tgid;			/* the thread group that made it (KINSTR_IOC_HELD) */
	/* KINSTR_ACTION_TRACE: what to record, where (the area holds a reference) */
	struct kinstr_chan *chan;
	u32 rec_len;
	struct kinstr_trace_spec spec;		/* KINSTR_ACTION_TALLY's too: its event and key value */
	struct kinstr_tally_k *tally;		/* KINSTR_ACTION_TALLY (the area holds a reference) */
	struct kinstr_span_k *span;		/* KINSTR_ACTION_SPAN (the area holds a reference) */
	bool span_stop;				/* KINSTR_ACTION_SPAN: a stop (arg 1), not a start */
	const struct kinstr_pred_k *pred;	/* its predicate (the area's; NULL: none) */
	/* KINSTR_ACTION_BPF: the program (referenced until the area is freed) and its cookie */
	struct bpf_prog *prog;
	u64 cookie;
};

/* Is the CPU's current thread out of p's scope? Tested first by every action that calls out. */
static __always_inline bool kinstr_out_of_scope(const struct kprobe_k *p)
{
	return p->gate && !this_cpu_read(*p->gate);
}

/* How probe p's slot runs its action, as KINSTR_IOC_COUNTS reports it: KINSTR_PROBE_F_*. */
static inline u32 kinstr_probe_flags(const struct kprobe_k *p)
{
	return (p->inline_count ? KINSTR_PROBE_F_INLINE : 0) | (p->saves_flags ? KINSTR_PROBE_F_SAVES_FLAGS : 0) |
	       (p->gate ? KINSTR_PROBE_F_SCOPED : 0);
}

/* The trace and BPF actions' stubs (entry.S): save the whole state as a pt_regs, call the C function below. */
void kinstr_trace_stub(void);
void kinstr_bpf_stub(void);
void kinstr_tally_stub(void);
void kinstr_span_stub(void);

/*
 * Called from a timer probe's slot, whose prologue saved the registers (and the flags where
 * they are live), in any context (task, irq, NMI): touch nothing else.
 */
void kinstr_timer_start_hit(struct kprobe_k *p);
void kinstr_timer_stop_hit(struct kprobe_k *p);
/* A code cache's timer sequence calls these (check/cache_timer.c). */
void kinstr_cache_timer_start(struct kinstr_timers *t, u32 timer);
void kinstr_cache_timer_stop(struct kinstr_timers *t, u32 timer);
/* From a trace probe's slot, through kinstr_trace_stub: regs is the site's full state. */
void kinstr_trace_hit(struct kprobe_k *p, struct pt_regs *regs);
/* From a BPF probe's, through kinstr_bpf_stub. */
void kinstr_bpf_hit(struct kprobe_k *p, struct pt_regs *regs);
void kinstr_tally_hit(struct kprobe_k *p, struct pt_regs *regs);
void kinstr_span_hit(struct kprobe_k *p, struct pt_regs *regs);
/* The two functions above, as roots of the hit path's closure (hitpath.c). */
size_t kinstr_hit_roots(unsigned long *roots);

#endif
