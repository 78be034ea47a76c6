/* SPDX-License-Identifier: GPL-2.0 */
/*
 * actions/: trace channels and timers, as the session and the patcher call them; and what each
 * probe action needs of the rest of the module (struct kinstr_action_ops).
 */
#ifndef KINSTR_KMOD_ACTIONS_H
#define KINSTR_KMOD_ACTIONS_H

#include "base.h"

/* trace.c: trace channels (one per session), the trace action, the reader's ioctls. */
struct kinstr_chan;
struct kinstr_trace_spec;
struct pt_regs;
struct vm_area_struct;
struct file;
struct poll_table_struct;
void kinstr_chan_get(struct kinstr_chan *ch);
void kinstr_chan_put(struct kinstr_chan *ch);
long kinstr_trace_create(struct kinstr_chan **chp, void __user *uarg);
long kinstr_trace_subbuf(struct kinstr_chan *ch, unsigned int cmd, void __user *uarg);
long kinstr_trace_flush(struct kinstr_chan *ch, void __user *uarg);
long kinstr_trace_stats(struct kinstr_chan *ch, void __user *uarg);
__poll_t kinstr_trace_poll(struct kinstr_chan *ch, struct file *file, struct poll_table_struct *pt);
int kinstr_trace_mmap(struct kinstr_chan *ch, struct vm_area_struct *vma);
u32 kinstr_trace_spec_len(const struct kinstr_trace_spec *s);
size_t kinstr_trace_hit_roots(unsigned long *roots);
void kinstr_trace_record(struct kinstr_chan *ch, const struct kinstr_trace_spec *spec, u32 len,
			 struct pt_regs *regs);
unsigned long kinstr_trace_reg(const struct pt_regs *regs, u8 reg);

/* The state of an entry of tally.c's and span.c's lockless tables. */
enum { ENT_FREE, ENT_WRITING, ENT_VALID };

/* tally.c: hits counted by key in tables per CPU (KINSTR_IOC_TALLY_*). */
struct kinstr_tally_k;
long kinstr_tally_create(struct kinstr_tally_k **tp, void __user *uarg);
long kinstr_tally_read(struct kinstr_tally_k *t, void __user *uarg);
void kinstr_tally_get(struct kinstr_tally_k *t);
void kinstr_tally_put(struct kinstr_tally_k *t);	/* NULL: nothing */
bool kinstr_tally_takes(const struct kinstr_tally_k *t, const struct kinstr_trace_spec *spec);
void kinstr_tally_add(struct kinstr_tally_k *t, const struct kinstr_trace_spec *spec, struct pt_regs *regs);
size_t kinstr_tally_hit_roots(unsigned long *roots);

/* span.c: the time from a start probe to the next stop probe of a key (KINSTR_IOC_SPAN_*). */
struct kinstr_span_k;
long kinstr_span_create(struct kinstr_span_k **sp, void __user *uarg);
long kinstr_span_read(struct kinstr_span_k *s, void __user *uarg);
void kinstr_span_get(struct kinstr_span_k *s);
void kinstr_span_put(struct kinstr_span_k *s);	/* NULL: nothing */
bool kinstr_span_takes(const struct kinstr_span_k *s, const struct kinstr_trace_spec *spec, u32 arg);
void kinstr_span_hit_one(struct kinstr_span_k *s, const struct kinstr_trace_spec *spec, bool stop,
			 struct pt_regs *regs);
size_t kinstr_span_hit_roots(unsigned long *roots);

/* timing.c: per-thread start/stop timers for the profiler. */
struct kinstr_timers;
void kinstr_timers_get(struct kinstr_timers *t);
void kinstr_timers_put(struct kinstr_timers *t);
u32 kinstr_timers_count(const struct kinstr_timers *t);
long kinstr_timers_create(struct kinstr_timers **tp, void __user *uarg);
long kinstr_timers_read(struct kinstr_timers *t, void __user *uarg);
long kinstr_timer_paths(struct kinstr_timers *t, void __user *uarg);
long kinstr_timer_by_read(struct kinstr_timers *t, void __user *uarg);
size_t kinstr_timing_hit_roots(unsigned long *roots);
int kinstr_timing_init(void);
void kinstr_timing_exit(void);

/* scope.c: which threads a session's probes act for (KINSTR_IOC_SCOPE). */
struct kinstr_scope_k;
long kinstr_scope_create(struct kinstr_scope_k **sp, void __user *uarg);
void kinstr_scope_get(struct kinstr_scope_k *s);
void kinstr_scope_put(struct kinstr_scope_k *s);	/* NULL: nothing */
/* The per-CPU byte probe context tests: 1 while the CPU's current thread is in scope. */
u8 __percpu *kinstr_scope_gate(const struct kinstr_scope_k *s);
size_t kinstr_scope_hit_roots(unsigned long *roots);
/* Wait until the tracepoints of scopes no longer live are out (KINSTR_IOC_SYNC). */
void kinstr_scope_drain(void);
void kinstr_scope_exit(void);

/*
 * What a probe action (enum kinstr_action) is to the module: one entry per action in one table,
 * indexed by the action (patch/ops.c; kinstr_action_get() looks one up, NULL for none). The slot,
 * the verifier (check/verify.c, handed the entry by install), the install's phases (patch/install.c)
 * and the features the module announces read it instead of testing the action. Probe context never
 * reads it: a slot's prologue, written from it at install, calls its hit function or stub directly.
 */
struct kinstr_area;
struct kinstr_probe;
struct kinstr_verdict;
struct kprobe_k;
struct kinstr_bpf_attach;
struct kinstr_pred_k;

/* What a batch's install was handed beside its requests, as the actions' hooks below read it. */
struct kinstr_install_objs {
	const struct kinstr_trace_spec *specs;	/* per request, for trace probes (may be NULL) */
	struct kinstr_chan *chan;		/* the session's trace channel (may be NULL) */
	struct kinstr_timers *timers;		/* the session's timers (may be NULL) */
	const struct kinstr_bpf_attach *bpf;	/* per request, for BPF probes (may be NULL) */
	struct kinstr_scope_k *scope;		/* the session's scope (NULL: every thread) */
	struct kinstr_tally_k *tally;		/* the session's tally (may be NULL) */
	struct kinstr_span_k *span;		/* the session's spans (may be NULL) */
	struct kinstr_pred_k *const *preds;	/* per request, trace probes' predicates (may be NULL) */
};

/* Which flags a slot's prologue saves (kprobe_k.saves_flags, KINSTR_PROBE_F_SAVES_FLAGS). */
enum kinstr_save_flags {
	KINSTR_SAVE_FLAGS_NONE,	/* it changes none: it saves none */
	KINSTR_SAVE_FLAGS_LIVE,	/* where they are live at the site */
	KINSTR_SAVE_FLAGS_ALWAYS,	/* always: its stub's pt_regs holds them */
};

struct kinstr_action_ops {
	const char *name;		/* NULL: no such action */
	u64 feature;			/* the KINSTR_FEAT_* that announces it (0: there from the start) */
	bool (*available)(void);	/* can this kernel run it (NULL: always) */
	/* the verifier's part */
	u8 kinds;			/* the probe kinds it takes: 1 << KINSTR_PROBE_* */
	bool arg;			/* kinstr_probe.arg means something to it (else it must be 0) */
	bool enters_cache;		/* a code cache's entry point: no slot, no body; the copy runs the
					 * displaced bytes (check/cache.c proves it) */
	/* its slot (patch/slot.c) */
	bool inline_count;		/* the prologue counts in place and calls nothing */
	bool scoped;			/* acts only for the threads in the session's scope (kprobe_k.gate) */
	u8 flags;			/* enum kinstr_save_flags */
	/* the prologue, written at b in slot; returns its end. NULL: none (the slot only splices) */
	u8 *(*prologue)(const struct kinstr_action_ops *ops, u8 *slot, u8 *b, struct kprobe_k *p,
			bool flags_dead);
	const void *call;		/* what the prologue calls: the hit function, or the stub */
	/* the install's phases (patch/install.c); each NULL: nothing to do */
	/* phase 1: take what request i names from the caller (its BPF program); 0 or -errno and *v */
	int (*take)(struct kinstr_area *a, u32 i, const struct kinstr_probe *req,
		    const struct kinstr_install_objs *o, struct kinstr_verdict *v);
	/* phase 2, once verified: is what it runs on there? 0, or -errno for a bad request */
	int (*check)(const struct kinstr_probe *req, u32 i, const struct kinstr_install_objs *o);
	/* phase 4, before its slot is written: probe p of a linked to it, a holding a reference */
	void (*link)(struct kinstr_area *a, struct kprobe_k *p, const struct kinstr_probe *req, u32 i,
		     const struct kinstr_install_objs *o);
};

#endif
