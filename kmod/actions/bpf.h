/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF programs as probe actions (bpf.c): the program a KINSTR_ACTION_BPF request names, checked
 * and referenced at install, run in probe context with the site's pt_regs, put after quiescence.
 * Calls down only: the resolved symbols (ksym.c) and compat.
 */
#ifndef KINSTR_KMOD_BPF_H
#define KINSTR_KMOD_BPF_H
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

#include "base.h"
#include "ksym.h"
#include "actions/actions.h"

struct kinstr_bpf_attach;

/* Is everything found that running a program as the kernel runs a kprobe's needs? */
bool kinstr_bpf_available(void);
/*
 * The program at->prog_fd names, referenced, if it may run at any probe site; else NULL with
 * *reason its enum kinstr_bpf_reason. In the caller's context (its fd table).
 */
struct bpf_prog *kinstr_bpf_prog_get(const struct kinstr_bpf_attach *at, u32 *reason);
void kinstr_bpf_prog_put(struct bpf_prog *prog);
/*
 * Probe context, preemption off: run prog on regs unless another tracing program runs on this
 * CPU (trace_call_bpf()'s rule: the one running wins) or RCU does not watch here. false: it did
 * not run. Inline: it is all of a BPF probe's work but the pt_regs.
 */
static __always_inline bool kinstr_bpf_run(const struct bpf_prog *prog, u64 cookie, struct pt_regs *regs)
{
	struct bpf_trace_run_ctx run_ctx = { .bpf_cookie = cookie };
	int __percpu *active = kinstr_ksyms.bpf_prog_active;
	struct bpf_run_ctx *old;
	bool ran = false;

	if (likely(__this_cpu_inc_return(*active) == 1) && likely(rcu_is_watching())) {
		/*
		 * With preemption off this is an RCU read-side section already (one RCU for
		 * rcu_read_lock() and preempt_disable() since 4.20): only lockdep needs telling, for
		 * the maps' rcu_read_lock_held() checks.
		 */
		if (IS_ENABLED(CONFIG_PROVE_RCU))
			rcu_read_lock();
		old = bpf_set_run_ctx(&run_ctx.run_ctx);
		bpf_prog_run(prog, regs);
		bpf_reset_run_ctx(old);
		if (IS_ENABLED(CONFIG_PROVE_RCU))
			rcu_read_unlock();
		ran = true;
	}
	__this_cpu_dec(*active);
	return ran;
}

#endif
