/* SPDX-License-Identifier: GPL-2.0 */
/* Probe context (hit.c): the functions the slots' stubs (entry.S) call. */
#ifndef KINSTR_KMOD_HIT_H
#define KINSTR_KMOD_HIT_H
#include <linux/types.h>
#include <linux/list.h>

#include <uapi/linux/kinstr.h>
#include "kinstr.h"
#include "compat.h"

struct pt_regs;

/* One installed probe, as probe context and the patching protocol (patch.c) see it. */
struct kprobe_k {
	struct hlist_node hnode;	/* in kinstr_sites while published */
	unsigned long site;
	u8 *slot;
	u8 kind, displaced_len;
	bool inline_count;		/* fast path: no call, flags dead at the site */
	struct kinstr_direct direct;	/* KINSTR_PROBE_FTRACE: ftrace's call of the slot */
	u8 orig[KINSTR_MAX_DISPLACED];
	u64 __percpu *hits;		/* [0] hits, [1] actions skipped by the recursion guard */
	struct kinstr_fence fence;	/* kprobes keep off the site's bytes (not on ftrace probes) */
	/* KINSTR_ACTION_TIMER_*: which timer of which set (the area holds a reference) */
	struct kinstr_timers *timers;
	u32 timer;
	bool timer_start;
	struct module *mod;		/* a probe in a module's text pins it until the area is freed */
	/* KINSTR_ACTION_TRACE: what to record, where (the area holds a reference) */
	struct kinstr_chan *chan;
	u32 rec_len;
	struct kinstr_trace_spec spec;
};

/* The slots' stubs (entry.S): each saves the registers and calls one of the two below. */
void kinstr_entry_stub(void);
void kinstr_entry_stub_nf(void);	/* the flags are dead at the site: not saved */
void kinstr_trace_stub(void);

/* Called from every slot's prologue, in any context (task, irq, NMI): touch nothing else. */
void kinstr_probe_hit(struct kprobe_k *p);
/* From a trace probe's slot, through kinstr_trace_stub: regs is the site's full state. */
void kinstr_trace_hit(struct kprobe_k *p, struct pt_regs *regs);
/* The two functions above, as roots of the hit path's closure (hitpath.c). */
size_t kinstr_hit_roots(unsigned long *roots);

#endif
